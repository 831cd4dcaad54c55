"""One instance's IDA* on several threads: each iteration cut into units of work, searched at once.

Every iteration (bound B) is cut into subtrees by :func:`pdbtool.search.units.split_iteration` (the nodes
within the bound at the first depth that has ``frontier_per_thread`` per thread).  Threads take the units
one at a time, in order, and search each with :func:`pdbtool.search.units.search_unit`, that is with the
same driver as the serial search (it releases the GIL).  The next bound is the least f over the pruned nodes
of the top and of all units.  When a thread finds the goal, the others stop at the end of their current
chunk of nodes and no new unit starts.  Small iterations (those after an iteration of fewer than
``SERIAL_BELOW`` nodes) run as one unit from the root, on one thread, since cutting them would cost more
than they do.

Every goal found in the iteration of bound B has length B, which is optimal: the same argument as for
serial IDA* (no solution is shorter than B, or an earlier iteration would have found it).  So the length
equals the serial search's.  The node counts of every iteration but the last equal the serial counts
exactly (the same nodes are generated, only in another order); in the last iteration the serial search
stops at the first goal in depth-first order, while here the threads have searched other units, partly or
wholly, by the time one of them reaches a goal, which may lie in a later unit: the last iteration's counts
can be larger or smaller than the serial ones.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable

from .driver import INF, Tally
from .units import UNIT_CHUNK_NODES, UnitResult, WorkUnit, search_unit, split_iteration

FRONTIER_PER_THREAD = 256
SERIAL_BELOW = 1 << 22  # an iteration after a smaller one runs on one thread
MAX_UNITS = 1 << 13     # the most units units_wanted asks for an iteration


@dataclass
class ParallelOutcome:
    moves: list[int] | None = None   # the blank's moves of the solution, None if none was found
    generated: int = 0
    expanded: int = 0
    iterations: int = 0
    timed_out: bool = False
    bound: int = 0
    subtrees: list[int] = field(default_factory=list)  # units per iteration
    # (bound, generated, expanded) after each iteration that ran to its end, counts cumulative
    finished: list[tuple[int, int, int]] = field(default_factory=list)


def _search_units(heuristic, state, units: list[WorkUnit], threads: int, tally: Tally, chunk: int,
                  progress: Callable[[], None] | None, report_every: float,
                  stop_taking: threading.Event | None = None,
                  on_result: Callable[[int, UnitResult], None] | None = None) -> list[tuple[int, UnitResult]]:
    """Search ``units`` on up to ``threads`` threads, in order; the (index, result) of each finished unit.
    Once ``stop_taking`` is set, no thread takes another unit (those not taken have no result).
    ``on_result(index, result)`` is called as each unit ends (from the thread that searched it)."""
    lock = threading.Lock()
    results: list[tuple[int, UnitResult]] = []
    next_index = [0]
    errors: list[BaseException] = []

    def work():
        try:
            while not tally.expired():
                with lock:
                    i = next_index[0]
                    if i >= len(units) or (stop_taking is not None and stop_taking.is_set()):
                        return
                    next_index[0] += 1
                result = search_unit(heuristic, state, units[i], chunk, tally)
                if result is None:
                    return
                with lock:
                    results.append((i, result))
                if on_result is not None:
                    on_result(i, result)
                if result.solution is not None:
                    tally.stop.set()
                    return
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
            tally.stop.set()

    if len(units) == 1:  # on this thread, reporting between chunks
        result = search_unit(heuristic, state, units[0], chunk, tally, progress)
        if result is not None and on_result is not None:
            on_result(0, result)
        return [] if result is None else [(0, result)]
    workers = [threading.Thread(target=work, daemon=True) for _ in range(min(threads, len(units)))]
    for w in workers:
        w.start()
    try:
        for w in workers:
            while w.is_alive():
                w.join(report_every)
                if progress is not None and w.is_alive():
                    progress()
    except BaseException:  # a signal (Ctrl-C) or the progress callback: the threads stop at their next chunk
        tally.stop.set()
        for w in workers:
            w.join()
        raise
    if errors:
        raise errors[0]
    return results


def units_wanted(threads: int, frontier_per_thread: int, unit_nodes: int | None, last: int, before: int) -> int:
    """The number of units to cut the next iteration into: ``frontier_per_thread`` per thread, or more with
    ``unit_nodes``, enough that the units average about ``unit_nodes`` nodes by an estimate of the
    iteration (the last one's nodes times its growth over the one ``before``; at most ``MAX_UNITS``)."""
    target = frontier_per_thread * threads
    if unit_nodes and before > 0 and last > 0:
        estimate = last * (last / before)
        target = max(target, min(MAX_UNITS, int(estimate // unit_nodes)))
    return target


def parallel_search(heuristic, state, h0: int, threads: int, deadline: float | None = None,
                    node_limit: int | None = None, progress: Callable[[int, int, int], None] | None = None,
                    chunk: int = UNIT_CHUNK_NODES, frontier_per_thread: int = FRONTIER_PER_THREAD,
                    serial_below: int = SERIAL_BELOW, report_every: float = 0.5,
                    search_units: Callable | None = None, unit_nodes: int | None = None) -> ParallelOutcome:
    """IDA* from ``state`` (not the goal) with ``threads`` threads; see the module docstring.

    An iteration after one that generated fewer than ``serial_below`` nodes runs as one unit (its counts are
    the serial ones, whether or not it is the last).  ``search_units`` is the executor of an iteration's
    units, called as ``_search_units`` is (default: it, on threads here; another: Ray tasks,
    :class:`pdbtool.search.ray_search.RayUnits`).  ``unit_nodes``: cut an iteration finer when it is
    estimated large (:func:`units_wanted`), so that the units in flight when the goal is found, in the
    last iteration, are small; for an executor whose units cost something each (a task), where
    ``frontier_per_thread`` is kept low."""
    search_units = search_units or _search_units
    state = tuple(int(t) for t in state)
    chunk = max(1, min(chunk, UNIT_CHUNK_NODES))
    out = ParallelOutcome()
    bound = int(h0)
    last_iteration = before_last = 0
    while True:
        tally = Tally(None if node_limit is None else node_limit - out.generated, deadline)
        if tally.expired():
            out.timed_out = True
            return out
        out.iterations += 1
        out.bound = bound
        if last_iteration < serial_below:
            units, top = [WorkUnit((), bound)], UnitResult(0, 0, INF, None)
        else:
            target = units_wanted(threads, frontier_per_thread, unit_nodes, last_iteration, before_last)
            units, top = split_iteration(heuristic, state, bound, target)
            tally.add(top.generated, top.expanded)
            if top.solution is not None:
                out.generated += top.generated
                out.expanded += top.expanded
                out.moves = list(top.solution)
                return out
        out.subtrees.append(len(units))
        report = None
        if progress is not None:
            def report():
                progress(bound, out.generated + tally.generated, out.expanded + tally.expanded)
        results = search_units(heuristic, state, units, threads, tally, chunk, report, report_every) \
            if units else []
        out.generated += tally.generated
        out.expanded += tally.expanded
        last_iteration, before_last = tally.generated, last_iteration
        found = sorted((i, r.solution) for i, r in results if r.solution is not None)
        if found:
            out.moves = list(found[0][1])
            return out
        if len(results) < len(units):
            out.timed_out = True
            return out
        next_bound = min([top.next_bound] + [r.next_bound for _, r in results])
        if next_bound >= INF:
            raise RuntimeError("the search space was exhausted without reaching the goal (a bug)")
        out.finished.append((bound, out.generated, out.expanded))
        bound = next_bound
        if progress is not None:
            progress(bound, out.generated, out.expanded)


__all__ = ["parallel_search", "units_wanted", "ParallelOutcome", "FRONTIER_PER_THREAD", "SERIAL_BELOW"]
