"""Units of work on a Ray cluster: the executor of :func:`pdbtool.search.parallel.parallel_search` whose
units run as Ray tasks, and the deadlines of the driver's waits.

:class:`RayUnits` takes the place of the threads of :mod:`pdbtool.search.parallel`: an iteration's units
(:mod:`pdbtool.search.units`) are submitted in order, at most ``IN_FLIGHT_PER_WORKER`` per worker of the
cluster at a time (a worker that ends a unit finds the next one queued; few are queued when the goal is
found), and a task searches its unit with :func:`pdbtool.search.units.search_unit`, as a thread does.
An iteration of one unit from the root (a small one) runs here, on the driver's thread.  So the counts
of every finished iteration are those of the serial search; the last iteration also counts what the
units stopped at the goal had searched, as the threads' does.

The driver and the tasks of a solve share a :class:`UnitBoard` actor on the driver's node.  The driver
marks there the units it no longer wants (the goal found, a limit reached); a task asks about its unit
when it starts and then every ``POLL_SECONDS`` between chunks of nodes, never waiting for the answer
(:func:`board_poll`), and stops at the chunk after a "no".  A thread of each task tells the board once a
second that its unit is taken, for as long as the task runs, loading tables and compiling included
(:func:`heartbeat`); a :class:`Watch` asks the board how long it has been since any task was heard from,
and when neither a
task nor a result has been heard of for ``stall_seconds`` (no worker takes a unit: the nodes are gone,
or their CPUs are taken by other work, or a task can never be scheduled), the solve stops with a
one-line :class:`ClusterError`.  Every ``ray.get`` of the driver has a timeout.

A task whose worker or node dies is run again by Ray (``TASK_RETRIES``): a unit is a pure function of
its arguments, so the retry gives the same result.  A task that fails on every run is a one-line error.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from collections.abc import Callable, Iterator
from typing import Any

from ..errors import PdbtoolError
from .driver import Tally
from .parallel import _search_units
from .units import UnitResult, WorkUnit

TASK_RETRIES = 3          # runs of a task after the first when its worker or node dies
IN_FLIGHT_PER_WORKER = 2  # units submitted ahead, per worker of the cluster
UNITS_PER_WORKER = 32     # units an iteration is cut into, per worker, at least
UNIT_NODES = 1 << 24      # ... and more in an iteration estimated large: units of about this many nodes
WAIT_SECONDS = 0.5        # longest wait for results between looks at signals, limits and progress
POLL_SECONDS = 1.0        # how often a task asks whether its unit is still wanted
STALL_SECONDS = 300.0     # no task heard from and no result for this long: the cluster runs nothing of ours
ASK_SECONDS = 10.0        # longest wait for an answer of the board, or for a result that is ready
FINISH_SECONDS = 2.5      # longest wait for the counts of the units stopped at the end of an iteration


class ClusterError(PdbtoolError):
    """Ray missing, a cluster that cannot be reached, work that the cluster lost or never started."""


def one_line(exc: BaseException) -> str:
    """The first line of an exception's message (Ray's run over many lines)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class UnitBoard:
    """A Ray actor, one per solve: the units the driver no longer wants, and when a task last asked."""

    def __init__(self):
        self.cancelled: set[int] = set()
        self.heard = time.monotonic()

    def cancel(self, slots: list[int]) -> None:
        self.cancelled.update(slots)

    def wanted(self, slot: int) -> bool:
        self.heard = time.monotonic()
        return slot not in self.cancelled

    def quiet(self) -> float:
        """Seconds since a task last asked."""
        return time.monotonic() - self.heard


def board_poll(board, slot: int, tally: Tally, every: float = POLL_SECONDS) -> Callable[[], None]:
    """A ``progress`` callback for the search of unit ``slot`` in a task: it asks ``board`` whether the unit
    is still wanted (at its first call, then at most every ``every`` seconds) and sets ``tally``'s stop flag
    when not, or when the board is gone (its driver has ended).

    It never waits for the answer: the question's future is read at a later call.  A task blocked in
    ``ray.get`` hands its CPU back to the raylet, which may start another task beside it."""
    last = [float("-inf")]
    asked = [None]

    def poll():
        answer = asked[0]
        if answer is not None:
            if not answer.done():
                return
            asked[0] = None
            try:
                wanted = answer.result()
            except Exception:  # the board's actor is gone, and with it the driver that wanted the unit
                wanted = False
            if not wanted:
                tally.stop.set()
                return
        now = time.monotonic()
        if now - last[0] >= every:
            last[0] = now
            asked[0] = board.wanted.remote(slot).future()

    return poll


@contextmanager
def heartbeat(board, slot: int, every: float = POLL_SECONDS) -> Iterator[None]:
    """For the block (a task's whole run): tell ``board`` every ``every`` seconds that unit ``slot`` is
    taken, from a thread of its own, so that a task loading its tables or compiling its kernels (no chunk
    of nodes, so no question of :func:`board_poll`, for a while) is not taken for a stall.  A batch's
    task, whose instance is not stopped through the board, has this sign of life only."""
    stop = threading.Event()

    def beat():
        while True:
            try:
                board.wanted.remote(slot)  # the answer is not read: the call itself is the sign of life
            except Exception:  # the board is gone: the search's own poll stops the unit
                return
            if stop.wait(every):
                return

    thread = threading.Thread(target=beat, name="heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()


def new_board(ray):
    """A :class:`UnitBoard` actor on the driver's node (where it lives as long as the driver)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = ray.get_runtime_context().get_node_id()
    return ray.remote(num_cpus=0)(UnitBoard).options(
        scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)).remote()


class Watch:
    """The driver's deadline on the cluster's signs of life: a result (:meth:`heard`) or a task's question
    to ``board``; :meth:`check` raises a one-line ClusterError after ``stall_seconds`` without either."""

    def __init__(self, ray, board, stall_seconds: float = STALL_SECONDS):
        self.ray, self.board, self.stall_seconds = ray, board, stall_seconds
        self.news = time.monotonic()
        self.asked: tuple[Any, float] | None = None  # (reference of the board's answer, when asked)

    def heard(self) -> None:
        self.news = time.monotonic()

    def check(self) -> None:
        now = time.monotonic()
        if self.asked is not None:
            ref, when = self.asked
            ready, _ = wait(self.ray, [ref], 0.0)
            if ready:
                self.asked = None
                try:
                    self.news = max(self.news, when - self.ray.get(ref, timeout=ASK_SECONDS))
                except Exception:  # no answer this time: the deadline runs on
                    pass
            elif now - when > ASK_SECONDS:
                self.asked = None
        if self.asked is None and now - self.news >= min(self.stall_seconds / 4, 30.0):
            self.asked = (self.board.quiet.remote(), now)
        if now - self.news > self.stall_seconds:
            try:
                cpus = f"{int(self.ray.cluster_resources().get('CPU', 0))} CPUs in the cluster"
            except Exception:
                cpus = "the cluster does not answer"
            raise ClusterError(f"no worker has taken a unit for {now - self.news:.0f} s ({cpus}): are the nodes "
                               f"up, with CPUs free for this work?")


def wait(ray, pending: list, seconds: float = WAIT_SECONDS, num_returns: int = 1) -> tuple[list, list]:
    """``ray.wait`` for ``num_returns`` results, at most ``seconds``: short, so that a signal (Ctrl-C) is
    seen in Python soon.

    Ray reports an exception raised by a signal handler during the wait as a ``SystemError`` caused by
    it; the handler's own exception is raised instead."""
    try:
        return ray.wait(pending, num_returns=min(num_returns, len(pending)), timeout=seconds)
    except SystemError as exc:
        if exc.__cause__ is not None:
            raise exc.__cause__ from None
        raise


def get(ray, ref, what: str):
    """``ray.get`` of a result that ``ray.wait`` found ready; a failure as a one-line ClusterError."""
    from ray.exceptions import RayError

    try:
        return ray.get(ref, timeout=ASK_SECONDS)
    except RayError as exc:
        raise ClusterError(f"{what} was lost on the cluster: {one_line(exc)}") from None


class RayUnits:
    """The executor of an iteration's units as Ray tasks (``search_units`` of ``parallel_search``).

    ``submit(unit, board, slot, seconds_left, nodes_left)`` starts a task that searches ``unit`` (asking
    ``board`` about ``slot``, :func:`board_poll`) and returns its reference.  ``iterations`` counts the
    iterations whose units ran on the cluster.  :meth:`close` ends the board."""

    def __init__(self, ray, submit: Callable, stall_seconds: float = STALL_SECONDS):
        self.ray, self.submit, self.stall_seconds = ray, submit, stall_seconds
        self.board = new_board(ray)
        self.slots = 0
        self.iterations = 0

    def close(self) -> None:
        try:
            self.ray.kill(self.board)
        except Exception:  # already gone with its node
            pass

    def _start(self, unit: WorkUnit, tally: Tally) -> tuple:
        slot, self.slots = self.slots, self.slots + 1
        seconds = None if tally.deadline is None else max(0.0, tally.deadline - time.perf_counter())
        nodes = None if tally.node_limit is None else max(0, tally.node_limit - tally.generated)
        return self.submit(unit, self.board, slot, seconds, nodes), slot

    def __call__(self, heuristic, state, units: list[WorkUnit], workers: int, tally: Tally, chunk: int,
                 progress: Callable[[], None] | None, report_every: float,
                 on_result: Callable[[int, UnitResult], None] | None = None) -> list[tuple[int, UnitResult]]:
        """Search ``units``; the (index, result) of each unit finished, as ``parallel_search`` expects of
        an executor; ``on_result(index, result)`` as each one ends."""
        if len(units) == 1 and not units[0].path:  # a small iteration, from the root: here
            return _search_units(heuristic, state, units, 1, tally, chunk, progress, report_every,
                                 on_result=on_result)
        self.iterations += 1
        watch = Watch(self.ray, self.board, self.stall_seconds)
        todo = list(enumerate(units))[::-1]
        running: dict = {}  # reference -> (index, slot)
        results: list[tuple[int, UnitResult]] = []
        over = False
        try:
            while not over and (todo or running):
                while todo and len(running) < IN_FLIGHT_PER_WORKER * max(1, workers):
                    i, unit = todo.pop()
                    ref, slot = self._start(unit, tally)
                    running[ref] = (i, slot)
                ready, _ = wait(self.ray, list(running))
                for ref in ready:
                    i, _ = running.pop(ref)
                    result = get(self.ray, ref, "a unit of work")
                    watch.heard()
                    tally.add(result.generated, result.expanded)
                    if result.stopped:  # by its time or node limit: the iteration ends unfinished
                        over = True
                        continue
                    results.append((i, result))
                    if on_result is not None:
                        on_result(i, result)
                    if result.solution is not None:
                        over = True
                if tally.expired() or tally.budget(1) <= 0:
                    over = True
                if not ready:
                    watch.check()
                if progress is not None:
                    progress()
        except BaseException:
            self._stop(running, None)
            raise
        self._stop(running, tally)
        return results

    def _stop(self, running: dict, tally: Tally | None) -> None:
        """Stop the units of ``running`` and, with ``tally``, add what they searched (waiting for it up to
        ``FINISH_SECONDS``)."""
        if not running:
            return
        from ray.exceptions import RayError

        self.board.cancel.remote([slot for _, slot in running.values()])
        pending = list(running)
        end = time.monotonic() + FINISH_SECONDS
        while tally is not None and pending and time.monotonic() < end:
            ready, pending = wait(self.ray, pending, max(0.0, min(WAIT_SECONDS, end - time.monotonic())),
                                  num_returns=len(pending))
            for ref in ready:
                try:
                    result = self.ray.get(ref, timeout=ASK_SECONDS)
                except RayError:  # lost meanwhile: what it searched is not known
                    continue
                tally.add(result.generated, result.expanded)


__all__ = ["ClusterError", "RayUnits", "UnitBoard", "Watch", "board_poll", "heartbeat", "new_board", "wait", "get",
           "one_line", "TASK_RETRIES", "UNITS_PER_WORKER", "UNIT_NODES", "STALL_SECONDS", "WAIT_SECONDS"]
