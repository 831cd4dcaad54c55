"""One instance's IDA* on a Ray cluster: each iteration's units of work run as Ray tasks.

The iteration loop is that of the threaded search (:mod:`pdbtool.search.parallel`) with another executor.
An iteration after one of fewer than ``SERIAL_BELOW`` nodes runs on the driver as one unit.  A larger one
is cut by :func:`pdbtool.search.units.split_iteration` into at least ``UNITS_PER_WORKER`` units per
worker (the cluster's CPUs, read again every iteration, so more workers cut deeper); the driver searches
the top above the cut, and each unit becomes a task, which a worker searches with
:func:`pdbtool.search.units.search_unit`.

The tail of an iteration: once fewer tasks are running than there are workers, the unit that has run
longest (if it has run ``RESPLIT_AFTER`` seconds and longer than twice the mean finished unit) is cut
again below its root (:func:`split_unit`, the same cut as ``split_iteration`` with the unit's root as the
start, never undoing the move into it) and its sub-units are submitted while its own task goes on.
Whichever finishes first gives the unit's result: the unit's task, or its top and all its sub-units
(whose counts add up to the unit's exactly); the other is cancelled and its result, if any, ignored.

So the counts of every finished iteration are exactly those of the serial iteration, whatever the tasks
did, and the length found equals the serial search's (every goal found under bound B has length B).  In
the last iteration the counts are those of the units that finished (a cancelled unit's partial count is
not reported), which may be more or fewer than the serial search's.

A task whose worker dies is run again by Ray (``max_retries``); units are pure functions of their
arguments, so the retry gives the same result.  The task function is given by the caller
(:mod:`pdbtool.search.ray_backend`), which binds the heuristic's options and the instance to it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from .driver import CUT, FOUND, INF, ITERATION_DONE, Search, Tally
from .parallel import SERIAL_BELOW, ParallelOutcome
from .units import UnitResult, WorkUnit, apply_path, search_unit, split_iteration

UNITS_PER_WORKER = 32   # units an iteration is cut into, per worker of the cluster
RESPLIT_AFTER = 2.0     # seconds a unit must have run before it is cut again at the tail of an iteration
RESPLIT_UNITS = 8       # sub-units per idle worker when a unit is cut again
RESPLIT_MEAN_FACTOR = 2.0  # ... and longer than this many times the mean finished unit


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
                        cut=cut)
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


@dataclass
class RayOutcome(ParallelOutcome):
    resplits: int = 0   # units cut again at the tails of iterations
    workers: int = 0    # the cluster's CPUs at the last iteration cut into units


@dataclass
class _Item:
    """A unit of the iteration: its task, and when cut again, the top and the sub-units below it."""

    unit: WorkUnit
    parent: int | None
    ref: object = None
    submitted: float = 0.0
    top: UnitResult | None = None
    children: list[int] = field(default_factory=list)
    result: UnitResult | None = None


class _Iteration:
    """The units of one iteration on the cluster and what has come back."""

    def __init__(self, ray, submit: Callable, units: list[WorkUnit], top: UnitResult,
                 resplit_after: float = RESPLIT_AFTER):
        self.ray = ray
        self.resplit_after = resplit_after
        self.submit = submit
        self.top = top
        self.items: list[_Item] = []
        self.running: dict = {}  # task reference -> item index
        self.found: tuple[int, ...] | None = None
        self.stopped = False
        self.finished_seconds: list[float] = []
        self.resplits = 0
        self.roots = [self._add(u, None) for u in units]

    def _add(self, unit: WorkUnit, parent: int | None) -> int:
        self.items.append(_Item(unit, parent, submitted=time.perf_counter()))
        i = len(self.items) - 1
        self.items[i].ref = self.submit(unit)
        self.running[self.items[i].ref] = i
        return i

    def _cancel(self, i: int) -> None:
        """Cancel the task of item ``i`` and of every item below it (their results will be ignored)."""
        item = self.items[i]
        if item.ref is not None and self.running.pop(item.ref, None) is not None:
            self.ray.cancel(item.ref)
        for c in item.children:
            self._cancel(c)

    def done(self) -> bool:
        return self.found is not None or self.stopped or all(self.items[i].result is not None for i in self.roots)

    def receive(self, ref, result: UnitResult | None) -> None:
        i = self.running.pop(ref, None)
        if i is None:  # cancelled meanwhile
            return
        self.items[i].ref = None
        self.finished_seconds.append(time.perf_counter() - self.items[i].submitted)
        if result is None:  # stopped by its time or node limit
            self.stopped = True
            return
        self._resolve(i, result)

    def _resolve(self, i: int, result: UnitResult) -> None:
        item = self.items[i]
        if item.result is not None:
            return
        item.result = result
        self._cancel(i)
        if result.solution is not None:
            if self.found is None:
                self.found = result.solution
            return
        p = item.parent
        if p is not None:
            parent = self.items[p]
            if all(self.items[c].result is not None for c in parent.children):
                parts = [parent.top] + [self.items[c].result for c in parent.children]
                self._resolve(p, UnitResult(sum(r.generated for r in parts), sum(r.expanded for r in parts),
                                            min(r.next_bound for r in parts), None))

    def counts(self) -> tuple[int, int]:
        """(generated, expanded) of the top and of the units finished, whole or through their sub-units."""
        def count(i):
            item = self.items[i]
            if item.result is not None:
                return item.result.generated, item.result.expanded
            if item.top is None:
                return 0, 0
            parts = [count(c) for c in item.children]
            return item.top.generated + sum(g for g, _ in parts), item.top.expanded + sum(e for _, e in parts)

        parts = [count(i) for i in self.roots]
        return self.top.generated + sum(g for g, _ in parts), self.top.expanded + sum(e for _, e in parts)

    def next_bound(self) -> int:
        return min([self.top.next_bound] + [self.items[i].result.next_bound for i in self.roots])

    def resplit(self, heuristic, state, workers: int) -> None:
        """Cut the longest-running unit again when workers are idle at the tail of the iteration."""
        idle = workers - len(self.running)
        if idle <= 0 or not self.running:
            return
        now = time.perf_counter()
        mean = sum(self.finished_seconds) / len(self.finished_seconds) if self.finished_seconds else 0.0
        whole = [j for j in self.running.values() if not self.items[j].children]
        if not whole:
            return
        i = min(whole, key=lambda j: self.items[j].submitted)
        item = self.items[i]
        if now - item.submitted < max(self.resplit_after, RESPLIT_MEAN_FACTOR * mean):
            return
        units, top = split_unit(heuristic, state, item.unit, RESPLIT_UNITS * idle)
        item.top = top
        if top.solution is not None or not units:
            self._resolve(i, top)
            return
        item.children = [self._add(u, i) for u in units]
        self.resplits += 1

    def cancel_all(self) -> None:
        for ref in list(self.running):
            self.ray.cancel(ref)
        self.running.clear()


def ray_search(ray, heuristic, state: Sequence[int], h0: int, submit: Callable, workers: Callable[[], int],
               wait: Callable, deadline: float | None = None, node_limit: int | None = None,
               progress: Callable[[int, int, int], None] | None = None,
               units_per_worker: int = UNITS_PER_WORKER, serial_below: int = SERIAL_BELOW,
               resplit_after: float = RESPLIT_AFTER) -> RayOutcome:
    """IDA* from ``state`` (not the goal), each large iteration's units searched as Ray tasks.

    ``submit(unit, seconds_left, nodes_left)`` starts a task searching ``unit`` and returns its reference;
    ``workers()`` is the number of CPUs of the cluster; ``wait(ray, refs)`` is ``ray.wait`` for a short
    while.  ``progress(bound, generated, expanded)`` is called while an iteration runs and after it."""
    from ray.exceptions import RayError

    state = tuple(int(t) for t in state)
    out = RayOutcome()
    bound = int(h0)
    last_iteration = 0
    while True:
        if deadline is not None and time.perf_counter() >= deadline:
            out.timed_out = True
            return out
        out.iterations += 1
        out.bound = bound
        nodes_left = None if node_limit is None else node_limit - out.generated
        if last_iteration < serial_below:  # small: one unit, here
            tally = Tally(nodes_left, deadline)
            report = None
            if progress is not None:
                def report():
                    progress(bound, out.generated + tally.generated, out.expanded + tally.expanded)
            result = search_unit(heuristic, state, WorkUnit((), bound), tally=tally, progress=report)
            out.subtrees.append(1)
            out.generated += tally.generated
            out.expanded += tally.expanded
            last_iteration = tally.generated
            if result is None:
                out.timed_out = True
                return out
            if result.solution is not None:
                out.moves = list(result.solution)
                return out
            next_bound = result.next_bound
        else:
            n_workers = out.workers = max(1, workers())
            units, top = split_iteration(heuristic, state, bound, units_per_worker * n_workers)
            out.subtrees.append(len(units))
            if top.solution is not None or not units:
                out.generated += top.generated
                out.expanded += top.expanded
                if top.solution is not None:
                    out.moves = list(top.solution)
                    return out
                next_bound = top.next_bound
                last_iteration = top.generated
            else:
                def start(unit, nodes_left=nodes_left):
                    seconds = None if deadline is None else max(0.0, deadline - time.perf_counter())
                    return submit(unit, seconds, nodes_left)

                it = _Iteration(ray, start, units, top, resplit_after)
                try:
                    while not it.done():
                        ready, _ = wait(ray, list(it.running))
                        for ref in ready:
                            if ref not in it.running:  # cancelled while this batch was handled
                                continue
                            try:
                                result = ray.get(ref)
                            except RayError as exc:  # failed on every retry
                                raise RuntimeError(f"a unit of work failed on the cluster: "
                                                   f"{str(exc).strip().splitlines()[0]}") from None
                            it.receive(ref, result)
                        generated, expanded = it.counts()
                        if (deadline is not None and time.perf_counter() >= deadline) or \
                                (node_limit is not None and out.generated + generated >= node_limit):
                            it.stopped = True
                        if not it.done():
                            it.resplit(heuristic, state, n_workers)
                        if progress is not None:
                            progress(bound, out.generated + generated, out.expanded + expanded)
                finally:
                    it.cancel_all()
                generated, expanded = it.counts()
                out.resplits += it.resplits
                out.generated += generated
                out.expanded += expanded
                last_iteration = generated
                if it.found is not None:
                    out.moves = list(it.found)
                    return out
                if it.stopped:
                    out.timed_out = True
                    return out
                next_bound = it.next_bound()
        if next_bound >= INF:
            raise RuntimeError("the search space was exhausted without reaching the goal (a bug)")
        out.finished.append((bound, out.generated, out.expanded))
        bound = next_bound
        if progress is not None:
            progress(bound, out.generated, out.expanded)


__all__ = ["ray_search", "split_unit", "RayOutcome", "UNITS_PER_WORKER", "RESPLIT_AFTER"]
