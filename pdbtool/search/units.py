"""Units of work of one IDA* iteration: a subtree, named by the path to its root and the bound.

An iteration of bound B is cut at a depth D (:func:`split_iteration`): the driver searches the top of the
tree in one-iteration mode with the cut register set to D, so the nodes within the bound at depth D are
returned one by one instead of expanded, with exactly the pruning, counting and goal test of every other
search.  Each becomes a :class:`WorkUnit`; :func:`search_unit` searches one with the same driver (for one
iteration of bound B - D from the unit's root, never undoing the move into it, with the move-pruning
automaton, if any, in its state at the end of the unit's path) and returns a
:class:`UnitResult`.  Both records are plain values (tuples of ints), so a unit can be searched by a thread
(:mod:`pdbtool.search.parallel`) or by another process or machine holding the same heuristic.

Counting: the top's result counts the nodes expanded above depth D and the children they generate (the
units' roots among them); a unit's result counts its root as expanded and everything below it.  So the
top's counts plus all units' counts are exactly those of the serial iteration, and the iteration's next
bound is the least of theirs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .driver import CUT, FOUND, INF, ITERATION_DONE, STOPPED, Search, Tally, run_chunks

UNIT_CHUNK_NODES = 1 << 20  # nodes per driver call in a unit of work: how soon it notices a stop or a limit


@dataclass(frozen=True)
class WorkUnit:
    """The subtree reached by the blank's moves ``path`` from the start (the move into the subtree's root is
    ``path[-1]``, or none for the root itself), searched under ``bound`` (the iteration's, from the start)."""

    path: tuple[int, ...]
    bound: int


@dataclass(frozen=True)
class UnitResult:
    """What a search of a unit (or of an iteration's top) found: nodes generated and expanded, the least f
    above the bound (``INF`` if none; from the start), and the blank's moves from the start to the goal
    when one was found within the bound (the search then stopped there).  ``stopped``: the search was
    stopped before the unit's end (a limit, or the unit no longer wanted); the counts are then the nodes
    it generated and expanded until it stopped, and the bound and solution mean nothing."""

    generated: int
    expanded: int
    next_bound: int
    solution: tuple[int, ...] | None
    stopped: bool = False


def apply_path(nb: np.ndarray, state: Sequence[int], path: Sequence[int]) -> np.ndarray:
    """The tiles after the blank's moves ``path`` from ``state``."""
    tiles = np.array(state, dtype=np.int64)
    blank = int(np.flatnonzero(tiles == 0)[0])
    for m in path:
        q = int(nb[blank, m])
        tiles[blank], tiles[q] = tiles[q], 0
        blank = q
    return tiles


def split_iteration(heuristic, state: Sequence[int], bound: int, target: int) -> tuple[list[WorkUnit], UnitResult]:
    """Cut the iteration of ``bound`` from ``state`` into units: the nodes within the bound at the first depth
    that has at least ``target`` of them, in depth-first order.  Returns the units and the result of the top
    above them; when the top reaches the goal, or the tree ends above such a depth, there are no units and
    the top's result is the whole iteration's."""
    if target <= 1:
        return [WorkUnit((), bound)], UnitResult(0, 0, INF, None)
    depth = 1
    while True:
        search = Search(heuristic, state, bound=bound, one_iteration=True, cut=depth)
        paths = []
        while True:
            status = search.step(INF)
            if status != CUT:
                break
            paths.append(tuple(search.moves()))
        solution = tuple(search.moves()) if status == FOUND else None
        if status not in (FOUND, ITERATION_DONE):
            raise RuntimeError(f"the top of an iteration returned status {status} (a bug)")
        if solution is not None or not paths or len(paths) >= target:
            top = UnitResult(search.generated, search.expanded, search.next_bound, solution)
            return ([] if solution is not None else [WorkUnit(p, bound) for p in paths]), top
        depth += 1


def search_unit(heuristic, state: Sequence[int], unit: WorkUnit, chunk: int = UNIT_CHUNK_NODES,
                tally: Tally | None = None, progress: Callable[[], None] | None = None) -> UnitResult | None:
    """Search ``unit`` of the iteration from ``state`` to its end or to the first goal within the bound.

    ``tally`` (shared by the searches of an iteration) receives the nodes chunk by chunk and may stop the
    search (node limit, deadline, stop flag): then the result is None.  ``progress()`` is called between
    chunks."""
    depth = len(unit.path)
    search = Search(heuristic, apply_path(heuristic.board.neighbours(), state, unit.path),
                    bound=unit.bound - depth, path=unit.path, one_iteration=True)
    status = run_chunks(search, chunk, Tally() if tally is None else tally, progress)
    if status == STOPPED:
        return None
    if status == FOUND:
        return UnitResult(search.generated, search.expanded, min(INF, search.next_bound + depth),
                          unit.path + tuple(search.moves()))
    if status != ITERATION_DONE:
        raise RuntimeError(f"a unit's search returned status {status} (a bug)")
    return UnitResult(search.generated, search.expanded, min(INF, search.next_bound + depth), None)


__all__ = ["WorkUnit", "UnitResult", "split_iteration", "search_unit", "apply_path", "UNIT_CHUNK_NODES"]
