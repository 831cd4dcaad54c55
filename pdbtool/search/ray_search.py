"""An executor of IDA* units of work on a Ray cluster, for the one parallel search.

:func:`pdbtool.search.parallel.parallel_search` runs the iterations of one instance: an iteration after
one of fewer than ``SERIAL_BELOW`` nodes as one unit, a larger one cut by
:func:`pdbtool.search.units.split_iteration` into units (``frontier_per_thread`` per worker), the top above
the cut searched by the driver.  Its executor of the units is threads by default; :class:`RayUnits` is
the other one: each unit becomes a Ray task, which a worker searches with
:func:`pdbtool.search.units.search_unit`, and a single unit from the root is searched here.  An iteration
that begins while the cluster is not yet up (a local instance starting, its tables being checked) runs on
threads here instead, with the same units, so it counts the same.

The tail of an iteration.  The tasks run in the order submitted, so the last units of an iteration are
what the workers have left when they fall idle.  Those last units (``TAIL_UNITS_PER_WORKER`` per
worker) are therefore cut once more before anything runs (:func:`split_unit`, the cut of
``split_iteration`` with the unit's root as the start, never undoing the move into it; into about
``TAIL_SUBUNITS`` each): the top above the cut is searched here and the sub-units are submitted in the
unit's place, so that the iteration ends with small tasks.  And once fewer tasks are running than there
are workers, the unit that has run longest (if it has run ``RESPLIT_AFTER`` seconds and longer than
``RESPLIT_MEAN_FACTOR`` times the mean unit, both timed from the estimated start of its task: a task
starts when one submitted before it ends, ``_Iteration._note_starts``) is cut again in the same way and
its sub-units are submitted while its own task goes on.  Whichever finishes first gives the unit's
result: the unit's task, or its top and all its sub-units (whose counts add up to the unit's exactly);
the other is stopped (:class:`StopFlags`) and its result, if any, ignored.  A unit's counts reach the
iteration's tally once, when it is resolved.

Stopping a unit (:class:`StopBoard`): each task has a slot, one byte of a file on the driver's node
(in ``/dev/shm`` where there is one) that the driver sets when it no longer wants the unit.  A worker on
the driver's node maps the file and reads its byte between chunks of nodes, as a thread reads the
threads' stop flag; a worker on another node, which cannot see the file, asks a :class:`StopFlags` actor
once every ``POLL_SECONDS`` instead (:func:`poll_stop`).  A local instance started for the run has the
driver's node only, and no actor.

So the counts of every finished iteration are exactly those of the serial iteration, whatever the tasks
did, and the length found equals the serial search's (every goal found under bound B has length B).
When the goal is found (or a limit reached), the tasks still running are stopped and, for up to
``FINISH_SECONDS``, their partial counts collected (:meth:`_Iteration.finish`): the last iteration counts
the units that finished plus what the stopped ones had searched, as the threads count every node they
generate; work done twice (a unit cut again and its sub-units) counts once, the unit's own task.  So the
last iteration may count more or fewer nodes than the serial search's, as with threads.

A task whose worker dies is run again by Ray (``max_retries``); units are pure functions of their
arguments, so the retry gives the same result.  The task itself is given by the caller
(:mod:`pdbtool.search.ray_backend`), which binds the heuristic's options and the instance to it.
"""

from __future__ import annotations

import mmap
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..errors import PdbtoolError
from .driver import CUT, FOUND, INF, ITERATION_DONE, Search, Tally
from .parallel import _search_units as search_units_on_threads
from .units import UnitResult, WorkUnit, apply_path, search_unit

UNITS_PER_WORKER = 32      # units an iteration is cut into, per worker of the cluster, at least
UNIT_NODES = 1 << 24       # ... and more in an iteration estimated large: units of about this many nodes
RESPLIT_AFTER = 2.0        # seconds a unit must have run before it is cut again at the tail of an iteration
RESPLIT_MEAN_FACTOR = 2.0  # ... and longer than this many times the mean finished unit
RESPLIT_UNITS = 8          # sub-units per idle worker when a unit is cut again
TAIL_UNITS_PER_WORKER = 2  # the last units of an iteration cut again before they run, per worker
TAIL_SUBUNITS = 8          # ... into about this many sub-units each
WAIT_SECONDS = 0.5         # longest wait for results between looks at signals, limits and progress
POLL_SECONDS = 1.0         # how often a task on another node asks whether its unit is still wanted (poll_stop)
FINISH_SECONDS = 2.5       # longest wait for the partial counts of the tasks stopped at an iteration's end
STOP_SLOTS = 1 << 20       # units one solve can stop through the file (bytes of a sparse file; then the actor)


def split_unit(heuristic, state: Sequence[int], unit: WorkUnit, target: int) -> tuple[list[WorkUnit], UnitResult]:
    """Cut ``unit`` into sub-units: the nodes within its bound at the first depth below its root that has at
    least ``target`` of them.  Returns them (paths from the start) and the result of the top between the
    unit's root and them, which counts the root as expanded, as :func:`search_unit` does; the top's result
    plus all sub-units' results are the unit's.  When the top reaches the goal or the subtree ends above
    such a depth, there are no sub-units and the top's result is the unit's."""
    depth = len(unit.path)
    tiles = apply_path(heuristic.board.neighbours(), state, unit.path)
    root_prev = unit.path[-1] if unit.path else -1
    cut = 1
    while True:
        search = Search(heuristic, tiles, bound=unit.bound - depth, root_prev=root_prev, one_iteration=True,
                        cut=cut, path=unit.path)
        paths = []
        while (status := search.step(INF)) == CUT:
            paths.append(unit.path + tuple(search.moves()))
        if status not in (FOUND, ITERATION_DONE):
            raise RuntimeError(f"the top of a unit returned status {status} (a bug)")
        solution = unit.path + tuple(search.moves()) if status == FOUND else None
        if solution is not None or not paths or len(paths) >= target:
            top = UnitResult(search.generated, search.expanded, min(INF, search.next_bound + depth), solution)
            return ([] if solution is not None else [WorkUnit(p, unit.bound) for p in paths]), top
        cut += 1


class ClusterError(PdbtoolError):
    """Ray missing, a cluster that cannot be reached, or work the cluster lost for good."""


@dataclass
class _Item:
    """A unit of the iteration: its task, and when cut again, the top and the sub-units below it."""

    unit: WorkUnit
    parent: int | None
    slot: int = -1       # its byte of the StopBoard
    ref: object = None
    submitted: float = 0.0
    started: float | None = None  # when its task is estimated to have started (_Iteration._note_starts)
    own_task: bool = True         # False for a unit cut before it ran: its sub-units are its tasks
    partial: UnitResult | None = None  # what its task had searched when stopped (counts only)
    top: UnitResult | None = None
    children: list[int] = field(default_factory=list)
    result: UnitResult | None = None


class _Iteration:
    """The units of one iteration on the cluster and what has come back."""

    def __init__(self, ray, submit: Callable, units: list[WorkUnit], tally: Tally, board: "StopBoard",
                 resplit_after: float = RESPLIT_AFTER, workers: int = 1, heuristic=None, state=None):
        self.ray = ray
        self.board = board
        self.resplit_after = resplit_after
        self.submit = submit
        self.tally = tally
        self.workers = max(1, workers)
        self.items: list[_Item] = []
        self.running: dict = {}  # task reference -> item index, in the order submitted
        self.found: tuple[int, ...] | None = None
        self.stopped = False
        self.finished_seconds: list[float] = []  # how long each finished task ran, from its estimated start
        self.resplits = 0
        self.tail_splits = 0
        tail = len(units) - TAIL_UNITS_PER_WORKER * self.workers if heuristic is not None else len(units)
        self.roots = []
        for n, unit in enumerate(units):
            if n < tail:
                self.roots.append(self._add(unit, None))
            else:
                self.roots.append(self._add_cut(heuristic, state, unit, TAIL_SUBUNITS))
        self._note_starts(time.perf_counter())

    def _add(self, unit: WorkUnit, parent: int | None) -> int:
        item = _Item(unit, parent, slot=self.board.new_slot(), submitted=time.perf_counter())
        self.items.append(item)
        i = len(self.items) - 1
        item.ref = self.submit(unit, self.board.signal(item.slot))
        self.running[item.ref] = i
        return i

    def _add_cut(self, heuristic, state, unit: WorkUnit, target: int) -> int:
        """A unit of the iteration cut before it runs: its top searched here, its sub-units submitted in its
        place (no task of its own)."""
        self.items.append(_Item(unit, None, submitted=time.perf_counter(), own_task=False))
        i = len(self.items) - 1
        self.tail_splits += self._cut(i, heuristic, state, target)
        return i

    def _cut(self, i: int, heuristic, state, target: int) -> bool:
        """Cut item ``i``'s unit below its root (:func:`split_unit`): its top searched here, its sub-units
        submitted as its children; when the top reaches the goal or leaves no sub-unit, the top resolves the
        unit.  Whether sub-units were submitted."""
        item = self.items[i]
        units, item.top = split_unit(heuristic, state, item.unit, target)
        if item.top.solution is not None or not units:
            self._resolve(i, item.top)
            return False
        item.children = [self._add(u, i) for u in units]
        return True

    def _note_starts(self, now: float) -> None:
        """Mark started, at ``now``, the tasks that are among the first ``workers`` still running in the
        order submitted (a worker takes the next task when its own ends)."""
        for n, i in enumerate(self.running.values()):
            if n >= self.workers:
                break
            if self.items[i].started is None:
                self.items[i].started = now

    def _cancel(self, i: int) -> None:
        """Stop the task of item ``i`` and of every item below it (their results will be ignored)."""
        slots = []

        def collect(j):
            item = self.items[j]
            if item.ref is not None and self.running.pop(item.ref, None) is not None:
                slots.append(item.slot)
            for c in item.children:
                collect(c)

        collect(i)
        self.board.cancel(slots)

    def done(self) -> bool:
        return self.found is not None or self.stopped or all(self.items[i].result is not None for i in self.roots)

    def receive(self, ref, result: UnitResult | None) -> None:
        i = self.running.pop(ref, None)
        if i is None:  # cancelled meanwhile
            return
        now = time.perf_counter()
        item = self.items[i]
        item.ref = None
        self.finished_seconds.append(now - (item.submitted if item.started is None else item.started))
        self._note_starts(now)
        if result.stopped:  # by its time or node limit
            item.partial = result
            self.stopped = True
            return
        self._resolve(i, result)

    def _resolve(self, i: int, result: UnitResult) -> None:
        item = self.items[i]
        if item.result is not None:
            return
        item.result = result
        self._cancel(i)
        p = item.parent
        if p is None:  # a unit of the iteration: its nodes count now, once
            self.tally.add(result.generated, result.expanded)
            if result.solution is not None and self.found is None:
                self.found = result.solution
        elif result.solution is not None:  # a goal below a unit resolves the unit (the last iteration)
            self._resolve(p, result)
        else:
            parent = self.items[p]
            if all(self.items[c].result is not None for c in parent.children):
                parts = [parent.top] + [self.items[c].result for c in parent.children]
                self._resolve(p, UnitResult(sum(r.generated for r in parts), sum(r.expanded for r in parts),
                                            min(r.next_bound for r in parts), None))

    def results(self) -> list[tuple[int, UnitResult]]:
        """(index, result) of the units resolved, in order."""
        return [(n, self.items[i].result) for n, i in enumerate(self.roots) if self.items[i].result is not None]

    def resplit(self, heuristic, state, workers: int) -> None:
        """Cut the longest-running unit again when workers are idle at the tail of the iteration."""
        idle = workers - len(self.running)
        if idle <= 0 or not self.running:
            return
        now = time.perf_counter()
        mean = sum(self.finished_seconds) / len(self.finished_seconds) if self.finished_seconds else 0.0
        whole = [j for j in self.running.values()
                 if not self.items[j].children and self.items[j].started is not None]
        if not whole:
            return
        i = min(whole, key=lambda j: self.items[j].started)
        item = self.items[i]
        if now - item.started < max(self.resplit_after, RESPLIT_MEAN_FACTOR * mean):
            return
        if self._cut(i, heuristic, state, RESPLIT_UNITS * idle):
            self._note_starts(now)
            self.resplits += 1

    def _unfinished(self, i: int, out: dict) -> None:
        """Into ``out`` (reference -> item): the started tasks whose partial counts item ``i``, unresolved,
        counts (:meth:`_partial_counts`)."""
        item = self.items[i]
        if item.result is not None:
            return
        if item.own_task:  # a task still waiting for a worker has searched nothing
            if item.ref is not None and item.ref in self.running and item.started is not None:
                out[item.ref] = i
            return
        for c in item.children:
            self._unfinished(c, out)

    def _partial_counts(self, i: int) -> tuple[int, int]:
        """What item ``i`` searched: its result's counts when resolved; else its own task's partial counts
        (not its sub-units', which repeat its work); for a unit cut before it ran, its top and its sub-units'."""
        item = self.items[i]
        if item.result is not None:
            return item.result.generated, item.result.expanded
        if item.own_task:
            return (item.partial.generated, item.partial.expanded) if item.partial is not None else (0, 0)
        generated, expanded = item.top.generated, item.top.expanded
        for c in item.children:
            g, e = self._partial_counts(c)
            generated += g
            expanded += e
        return generated, expanded

    def finish(self, seconds: float = FINISH_SECONDS) -> None:
        """Stop every task still running, wait up to ``seconds`` for the partial counts of those that count
        (a stopped task returns at its next chunk of nodes, or poll of the actor), and add what the
        unresolved units searched to the tally."""
        from ray.exceptions import RayError

        wanted: dict = {}
        for i in self.roots:
            self._unfinished(i, wanted)
        self.cancel_all()
        pending = list(wanted)
        deadline = time.perf_counter() + seconds
        while pending and time.perf_counter() < deadline:
            ready, pending = self.ray.wait(pending, num_returns=len(pending),
                                           timeout=min(WAIT_SECONDS, max(0.0, deadline - time.perf_counter())))
            for ref in ready:
                try:  # a stopped result, or the whole one of a unit that ended before it saw its stop
                    self.items[wanted[ref]].partial = self.ray.get(ref)
                except RayError:  # lost meanwhile: its nodes are not known
                    continue
        for i in self.roots:
            if self.items[i].result is None:
                self.tally.add(*self._partial_counts(i))

    def cancel_all(self) -> None:
        self.board.cancel([self.items[i].slot for i in self.running.values()])
        self.running.clear()


class RayUnits:
    """The executor of an iteration's units as Ray tasks (``search_units`` of ``parallel_search``).

    ``connect()`` returns ``(ray, submit)`` once the cluster is up and None while it is still starting;
    an iteration that begins before it is up runs on threads here (the threads' executor,
    ``local_iterations`` counts them) until it is up, and the units no thread has taken by then run on the
    cluster: a local instance's start-up overlaps the first iterations.
    ``submit(unit, stop, seconds_left, nodes_left)`` starts a task searching ``unit`` and returns its
    reference; the task stops when the driver sets its :class:`StopSignal` ``stop`` (:func:`stop_check`).
    Units no longer wanted are stopped that way rather than with ``ray.cancel``, which in Ray 2.60 can
    crash the driver when it meets a task's completion (ray-project/ray#54846).  ``other_nodes``: whether
    workers may run on nodes other than the driver's (they need the :class:`StopFlags` actor; a local
    instance started for the run has none).  ``resplits`` counts the units cut again at the tails of
    iterations while they ran, ``tail_splits`` those cut before they ran (the last of each iteration).
    :meth:`close` removes the stop file."""

    def __init__(self, connect: Callable[[], tuple | None], resplit_after: float = RESPLIT_AFTER,
                 other_nodes: bool = True):
        self.connect, self.resplit_after, self.other_nodes = connect, resplit_after, other_nodes
        self.ray = self.submit = self.board = None
        self.resplits = 0
        self.tail_splits = 0
        self.iterations = 0
        self.local_iterations = 0

    def _up(self) -> bool:
        """Whether the cluster is up (connected on the first look that finds it so)."""
        if self.ray is None:
            connected = self.connect()
            if connected is None:
                return False
            ray, self.submit = connected
            actor = ray.remote(num_cpus=0)(StopFlags).remote() if self.other_nodes else None
            self.board = StopBoard(ray.get_runtime_context().get_node_id(), actor)
            self.ray = ray
        return True

    def close(self) -> None:
        if self.board is not None:
            self.board.close()

    def __call__(self, heuristic, state, units: list[WorkUnit], workers: int, tally: Tally, chunk: int,
                 progress: Callable[[], None] | None, report_every: float) -> list[tuple[int, UnitResult]]:
        """Search ``units`` on the cluster; the (index, result) of each unit finished, as
        :func:`pdbtool.search.parallel.parallel_search` expects of an executor."""
        if len(units) == 1 and not units[0].path:  # a small iteration, from the root: here
            result = search_unit(heuristic, state, units[0], chunk, tally, progress)
            return [] if result is None else [(0, result)]
        if self._up():
            return self._on_cluster(heuristic, state, units, workers, tally, progress)
        # the cluster is still starting: the units on threads here, until it is up; those no thread took
        # by then run on the cluster
        self.local_iterations += 1
        up = threading.Event()

        def look():
            if progress is not None:
                progress()
            if not up.is_set() and self._up():
                up.set()

        done = search_units_on_threads(heuristic, state, units, workers, tally, chunk, look, report_every,
                                       stop_taking=up)
        finished = {i for i, _ in done}
        rest = [i for i in range(len(units)) if i not in finished]
        if not rest or not up.is_set() or tally.stop.is_set() or tally.expired():
            return done
        on_cluster = self._on_cluster(heuristic, state, [units[i] for i in rest], workers, tally, progress)
        return done + [(rest[j], result) for j, result in on_cluster]

    def _on_cluster(self, heuristic, state, units: list[WorkUnit], workers: int, tally: Tally,
                    progress: Callable[[], None] | None) -> list[tuple[int, UnitResult]]:
        from ray.exceptions import RayError

        def start(unit, stop):
            seconds = None if tally.deadline is None else max(0.0, tally.deadline - time.perf_counter())
            nodes = None if tally.node_limit is None else max(0, tally.node_limit - tally.generated)
            return self.submit(unit, stop, seconds, nodes)

        self.iterations += 1
        it = _Iteration(self.ray, start, units, tally, self.board, self.resplit_after, workers, heuristic, state)
        try:
            while not it.done():
                ready, _ = wait(self.ray, list(it.running))
                for ref in ready:
                    if ref not in it.running:  # cancelled while this batch was handled
                        continue
                    try:
                        result = self.ray.get(ref)
                    except RayError as exc:  # failed on every retry
                        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                        raise ClusterError(f"a unit of work was lost on the cluster: {reason}") from None
                    it.receive(ref, result)
                if tally.expired() or tally.budget(1) <= 0:
                    tally.stop.set()
                    it.stopped = True
                if not it.done():
                    it.resplit(heuristic, state, workers)
                if progress is not None:
                    progress()
            it.finish()
        finally:
            it.cancel_all()
            self.resplits += it.resplits
            self.tail_splits += it.tail_splits
        return it.results()


@dataclass(frozen=True)
class StopSignal:
    """How a task learns that its unit is no longer wanted: byte ``slot`` of the file ``path`` on the node
    ``node_id`` (None: no byte), or else the :class:`StopFlags` actor ``flags`` (None: none), asked for the
    same slot."""

    node_id: str
    path: str | None
    slot: int
    flags: object = None


def _stop_dir() -> str | None:
    """Where the stop file goes: shared memory when the system has it, else the temporary directory."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


class StopBoard:
    """The driver's side of stopping units: a byte per unit in a sparse file of ``capacity`` bytes that the
    workers on the driver's node (``node_id``) map, and the same slots in the :class:`StopFlags` actor
    ``flags`` for workers elsewhere (None: no worker is elsewhere).  A slot past the file's capacity is
    reached through the actor only."""

    def __init__(self, node_id: str, flags=None, capacity: int = STOP_SLOTS, directory: str | None = None):
        self.node_id, self.flags, self.capacity = node_id, flags, capacity
        fd, self.path = tempfile.mkstemp(prefix="pdbtool-stop-", dir=directory or _stop_dir())
        try:
            os.ftruncate(fd, capacity)
            self.mapped = mmap.mmap(fd, capacity)
        finally:
            os.close(fd)
        self.slots = 0

    def new_slot(self) -> int:
        self.slots += 1
        return self.slots - 1

    def signal(self, slot: int) -> StopSignal:
        return StopSignal(self.node_id, self.path if slot < self.capacity else None, slot, self.flags)

    def cancel(self, slots: list[int]) -> None:
        """Stop the units of ``slots``."""
        if not slots:
            return
        for slot in slots:
            if slot < self.capacity:
                self.mapped[slot] = 1
        if self.flags is not None:
            self.flags.cancel.remote(slots)

    def close(self) -> None:
        """Unmap and remove the file (workers that mapped it keep their map; their units are over)."""
        if not self.mapped.closed:
            self.mapped.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


class StopFlags:
    """The slots of the units whose search is no longer wanted (a Ray actor, one per solve), for workers
    on nodes other than the driver's."""

    def __init__(self):
        self.slots: set[int] = set()

    def cancel(self, slots: list[int]) -> None:
        self.slots.update(slots)

    def cancelled(self, slot: int) -> bool:
        return slot in self.slots


_STOP_MAP: list = [None, None]  # this worker process's map of the driver's stop file: [path, mmap]


def _map_stop_file(path: str):
    """A read-only map of the stop file ``path`` (kept for the next task of the same solve), or None."""
    if _STOP_MAP[0] != path:
        try:
            with open(path, "rb") as f:
                mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return None
        if _STOP_MAP[1] is not None:
            _STOP_MAP[1].close()
        _STOP_MAP[:] = [path, mapped]
    return _STOP_MAP[1]


def stop_check(stop: StopSignal, tally: Tally, node_id: str) -> Callable[[], None] | None:
    """A ``progress`` callback for :func:`search_unit` in a task on the node ``node_id``: it stops the
    search (``tally``) once the driver no longer wants the unit.  On the driver's node it reads the unit's
    byte of the stop file, at every call (between chunks of nodes); elsewhere, or where the file cannot be
    opened, it polls the actor (:func:`poll_stop`); with neither, None (the unit runs to its end)."""
    mapped = _map_stop_file(stop.path) if stop.path is not None and node_id == stop.node_id else None
    if mapped is not None and stop.slot < len(mapped):
        slot = stop.slot

        def check():
            if mapped[slot]:
                tally.stop.set()

        return check
    if stop.flags is not None:
        return poll_stop(stop.flags, stop.slot, tally)
    return None


def poll_stop(flags, slot: int, tally: Tally, every: float = POLL_SECONDS) -> Callable[[], None]:
    """A ``progress`` callback for :func:`search_unit` in a task: at most every ``every`` seconds it asks
    ``flags`` whether the unit of ``slot`` is still wanted, and stops the search (``tally``) when not.

    It never waits for the answer: the question's reference is turned into a future
    (``ObjectRef.future``), read at a later call once it is done, and only then is the next question sent.
    A task blocked in ``ray.get`` or ``ray.wait`` hands its CPU back to the raylet, which starts another
    task beside it, often in a new worker process: more searches than CPUs, and each new worker loads the
    kernels and maps the tables again."""
    last = [time.perf_counter()]
    asked = [None]  # the future of the question in flight

    def poll():
        now = time.perf_counter()
        if now - last[0] < every:
            return
        last[0] = now
        answer = asked[0]
        if answer is not None:
            if not answer.done():
                return
            try:
                wanted = not answer.result()
            except Exception:  # the flags actor is gone: only the driver stops units, so search on
                wanted = True
            if not wanted:
                tally.stop.set()
                return
        asked[0] = flags.cancelled.remote(slot).future()

    return poll


def wait(ray, pending: list, num_returns: int = 1) -> tuple[list, list]:
    """``ray.wait`` for at most ``WAIT_SECONDS``, so that a signal (Ctrl-C) is seen in Python soon.

    Ray reports an exception raised by a signal handler during the wait as a ``SystemError`` caused by
    it; the handler's own exception is raised instead."""
    try:
        return ray.wait(pending, num_returns=min(num_returns, len(pending)), timeout=WAIT_SECONDS)
    except SystemError as exc:
        if exc.__cause__ is not None:
            raise exc.__cause__ from None
        raise


__all__ = ["ClusterError", "RayUnits", "StopBoard", "StopFlags", "StopSignal", "stop_check", "poll_stop",
           "split_unit", "wait", "UNITS_PER_WORKER", "UNIT_NODES", "RESPLIT_AFTER"]
