"""Defence in depth: a solution is checked against the heuristic before it is reported as optimal.

A table that passed its checksum can still be wrong (crafted, or damaged before it was checksummed).  The
driver refuses what would corrupt memory (an h below zero, a path past its stack:
:class:`pdbtool.search.driver.SearchFault`); what is left is a wrong answer that looks right.  So before a
solution of length L is reported, the heuristic is evaluated along it: h(goal) must be 0, h of the start at
most L, and, since the path is optimal, h of the i-th state at most L - i (any admissible heuristic), with h
never dropping by more than one per move for a consistent one (:func:`is_consistent`: Manhattan distance,
linear conflicts, and pattern tables that ignore the blank and keep their values whole; a table that
minimizes over the blank's cells, a lossy encoding's, or the dynamic sets' vertex cover can drop by more in
one move and still be admissible).
A violation raises :class:`SolutionCheckError` naming the tables (:func:`guarded`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from ..errors import PdbtoolError
from ..registry import LOSSY_ENCODINGS


class SolutionCheckError(PdbtoolError):
    pass


def is_consistent(solver) -> bool:
    """Whether the solver's heuristic is consistent by construction (h drops by at most one per move)."""
    if solver.heuristic_name in ("manhattan", "linear-conflict"):
        return True
    return solver.heuristic_name == "pdb" and solver.blank == "ignored" and solver.encoding not in LOSSY_ENCODINGS


def check_goal(heuristic, source: str) -> None:
    """h of the board's goal must be 0, or the search could never stop at it."""
    h = int(heuristic.value(heuristic.board.goal_tiles))
    if h != 0:
        raise SolutionCheckError(f"{source}: h(goal) = {h}, not 0: the table is damaged or not this board's")


def check_solution(heuristic, state: Sequence[int], solution: Sequence[int], source: str,
                   consistent: bool = False) -> None:
    """Check ``solution`` (the tiles moved, in order) of ``state`` against ``heuristic`` (module docstring);
    the drop of h per move too when the heuristic is ``consistent``."""
    board = heuristic.board
    nb = board.neighbours()
    tiles = [int(t) for t in state]
    blank = tiles.index(0)
    length = len(solution)
    previous = None
    for i in range(length + 1):
        h = int(heuristic.value(tiles))
        if h < 0:
            raise SolutionCheckError(f"{source}: h = {h} below zero after {i} moves of the solution")
        if h > length - i:
            what = "h0" if i == 0 else f"h after {i} moves"
            raise SolutionCheckError(f"{source}: {what} = {h} exceeds the {length - i} moves left on a solution "
                                     f"of {length}: the heuristic overestimates, so the length is not known optimal")
        if consistent and previous is not None and h < previous - 1:
            raise SolutionCheckError(f"{source}: h drops from {previous} to {h} in one move (after {i} moves "
                                     f"of the solution): the table is inconsistent, so damaged")
        previous = h
        if i < length:
            t = int(solution[i])
            q = tiles.index(t) if 0 < t < board.n else -1
            if q < 0 or q not in nb[blank]:
                raise SolutionCheckError(f"{source}: tile {t}, move {i + 1} of the solution, is not next to the blank")
            tiles[blank], tiles[q] = tiles[q], 0
            blank = q
    if tuple(tiles) != tuple(board.goal_tiles):
        raise SolutionCheckError(f"{source}: the solution does not end at the goal")


def table_names(solver) -> str:
    """What a solver searches with, for an error message: its label and its table files."""
    files = [str(t.path) for t in getattr(solver, "_keep", None) or () if getattr(t, "path", None) is not None]
    return solver.label + (f" (tables {', '.join(files)})" if files else "")


@contextlib.contextmanager
def guarded(solver):
    """Around a solve: check h(goal) once per solver, and turn the driver's :class:`SearchFault` and a
    :class:`SolutionCheckError` that names the tables."""
    from .driver import SearchFault

    try:
        if not getattr(solver, "_goal_checked", False):
            check_goal(solver.heuristic, solver.label)
            solver._goal_checked = True
        yield
    except SolutionCheckError as exc:
        raise SolutionCheckError(f"{table_names(solver)}: {str(exc).removeprefix(solver.label + ': ')}") from None
    except SearchFault as exc:
        raise SolutionCheckError(f"{table_names(solver)}: {exc}: the table is damaged or crafted") from None


__all__ = ["SolutionCheckError", "check_goal", "check_solution", "is_consistent", "guarded", "table_names"]
