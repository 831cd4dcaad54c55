"""Board symmetries that let two patterns of a partition share one table.

A symmetry g of the board is a permutation of the cells that keeps adjacency: on a W x H board the
identity, the two mirrors and the 180-degree rotation, and on a square board also the two diagonal
reflections and the two quarter turns.  Rename each tile t by the tile whose goal cell is g(goal[t]).
Pattern A's table can then serve pattern B when

* g maps A's goal cells onto B's goal cells (so the renaming sends A's tiles to B's, and A's goal
  placement to B's), and
* for a blank-minimized table, g maps the region of A's goal placement that holds the goal blank onto the
  region of B's goal placement that holds the goal blank.  (g need not fix the blank's goal cell: a
  blank-minimized table depends on the blank only through the region the search starts from.  For a
  blank-ignored table the blank does not matter.)

Because g keeps adjacency, it maps every move of A's abstract puzzle to a move of B's and the start state
of one search to the start state of the other, so the distance of a placement p of A equals the distance
of g(p) in B's table: ``table_A[rank(p)] == table_B[rank(g(p))]``, where g(p) puts tile ``rename(t)`` in
cell ``g(cell of t)``.  The heuristic is therefore exactly as strong; only one of the two tables is built,
stored and kept in memory.  The search does the lookup through a per-pattern cell map and tile order, as
it already does for the diagonal reflection (:mod:`pdbtool.heuristics.pattern_sum`).

On the 24-puzzle, 6-6-6-6 patterns {10,11,15,16,20,21} and {17,18,19,22,23,24} are images of
{3,4,8,9,13,14} under the 180-degree rotation and the anticlockwise quarter turn (which move the goal blank
away from cell 0, but the goal's free cells form one region in each), so ``build --partition 24-6-6-6-6``
builds two tables.

:func:`plan_tables` is the one place that applies this rule to a partition: the solver and every command
follow its plan, whatever the encoding.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Sequence

import numpy as np
from numba import njit, prange

from .._native import numba_cache  # noqa: F401  (the package-wide cache stamp)
from ..puzzle.board import Board
from .ranking import TilePattern, rank_cells, unrank_cells


@dataclass(frozen=True)
class Symmetry:
    """A board symmetry: ``cell[c]`` is the image of cell c."""

    name: str
    cell: tuple[int, ...]

    def array(self) -> np.ndarray:
        return np.array(self.cell, dtype=np.int64)

    def rename(self, board: Board) -> tuple[int, ...]:
        """``rename[t]`` = the tile whose goal cell is the image of t's goal cell."""
        at = board.goal_tiles
        return tuple(at[self.cell[board.goal[t]]] for t in range(board.n))


def board_symmetries(board: Board) -> list[Symmetry]:
    """The symmetries of the board's grid (4 on a rectangle, 8 on a square), the identity first."""
    w, h = board.width, board.height
    moves = [("identity", lambda r, c: (r, c)),
             ("left-right mirror", lambda r, c: (r, w - 1 - c)),
             ("top-bottom mirror", lambda r, c: (h - 1 - r, c)),
             ("180-degree rotation", lambda r, c: (h - 1 - r, w - 1 - c))]
    if w == h:
        moves += [("main-diagonal reflection", lambda r, c: (c, r)),
                  ("anti-diagonal reflection", lambda r, c: (w - 1 - c, h - 1 - r)),
                  ("quarter turn clockwise", lambda r, c: (c, w - 1 - r)),
                  ("quarter turn anticlockwise", lambda r, c: (h - 1 - c, r))]
    out = []
    for name, f in moves:
        cells = []
        for x in range(board.n):
            r, c = f(*divmod(x, w))
            cells.append(r * w + c)
        out.append(Symmetry(name, tuple(cells)))
    return out


def _goal_region(pattern: TilePattern) -> frozenset[int]:
    return frozenset(pattern.blank_region(tuple(int(c) for c in pattern.goal_cells()), pattern.board.goal[0]))


def maps_onto(g: Symmetry, a: TilePattern, b: TilePattern, blank: str) -> bool:
    """Whether g turns pattern a's table into pattern b's (see the module docstring)."""
    if a.board != b.board or a.k != b.k:
        return False
    image = {g.cell[int(c)] for c in a.goal_cells()}
    if image != {int(c) for c in b.goal_cells()}:
        return False
    if blank == "ignored":
        return True
    return frozenset(g.cell[c] for c in _goal_region(a)) == _goal_region(b)


@dataclass(frozen=True)
class SharedTable:
    """``pattern`` is looked up in ``source``'s table through ``symmetry`` (which maps pattern onto source)."""

    pattern: TilePattern
    source: TilePattern
    symmetry: Symmetry

    def cell_map(self) -> np.ndarray:
        return self.symmetry.array()

    def slots(self) -> dict[int, int]:
        """Tile of ``pattern`` -> the index of its renamed tile in ``source``."""
        rename = self.symmetry.rename(self.pattern.board)
        return {t: self.source.tiles.index(rename[t]) for t in self.pattern.tiles}

    def describe(self) -> str:
        return f"{{{self.pattern}}} is looked up in {{{self.source}}}'s table through the {self.symmetry.name}"


@njit(parallel=True, cache=True)
def _materialize(source_table, n, k, cell_map, slot_of):
    """``out[r]`` = the source table's value at the image of pattern placement r."""
    entries = source_table.shape[0]
    out = np.empty(entries, dtype=np.uint8)
    block = 1 << 14
    for b in prange((entries + block - 1) // block):
        cells = np.empty(k, dtype=np.int64)
        image = np.empty(k, dtype=np.int64)
        for r in range(b * block, min(entries, (b + 1) * block)):
            unrank_cells(r, n, k, cells)
            for i in range(k):
                image[slot_of[i]] = cell_map[cells[i]]
            out[r] = source_table[rank_cells(image, n)]
    return out


def materialize(shared: SharedTable, source_table: np.ndarray) -> np.ndarray:
    """The whole table of ``shared.pattern`` read through the symmetry from its source's table (for checks:
    the search looks entries up one at a time and never builds this)."""
    slots = shared.slots()
    slot_of = np.array([slots[t] for t in shared.pattern.tiles], dtype=np.int64)
    return _materialize(np.ascontiguousarray(source_table), shared.pattern.n, shared.pattern.k,
                        shared.cell_map(), slot_of)


def find_symmetry(a: TilePattern, b: TilePattern, blank: str) -> Symmetry | None:
    """A symmetry other than the identity that maps pattern a's table onto b's, or None."""
    for g in board_symmetries(a.board)[1:]:
        if maps_onto(g, a, b, blank):
            return g
    return None


@dataclass(frozen=True)
class TablePlan:
    """Which stored table each pattern of a partition is looked up in (made by :func:`plan_tables`).

    ``shared[i]`` is None when pattern i has a table of its own, else how it is read from an earlier
    pattern's table through a board symmetry.  The solver and every command (build, convert, inspect,
    verify) follow the same plan for every encoding, so a command never asks for a table that ``build``
    does not make."""

    blank: str
    patterns: tuple[TilePattern, ...]
    shared: tuple[SharedTable | None, ...]

    def __iter__(self):
        return iter(zip(self.patterns, self.shared))

    @property
    def stored(self) -> list[TilePattern]:
        """The patterns that have a table of their own, in partition order."""
        return [p for p, via in self if via is None]

    def source(self, pattern: TilePattern) -> TilePattern:
        """The pattern whose table ``pattern`` is looked up in (itself when not shared)."""
        via = self.shared[self.patterns.index(pattern)]
        return pattern if via is None else via.source


def plan_tables(patterns: Sequence[TilePattern], blank: str) -> TablePlan:
    """The one decision of which patterns of a partition share a table (see the module docstring)."""
    return TablePlan(blank, tuple(patterns), tuple(share_tables(patterns, blank)))


def share_tables(patterns: Sequence[TilePattern], blank: str) -> list[SharedTable | None]:
    """Per pattern: None if its table is to be built, else how it is looked up in an earlier pattern's
    table (one that is itself built)."""
    plan: list[SharedTable | None] = []
    for i, a in enumerate(patterns):
        shared = None
        for j in range(i):
            if plan[j] is None:
                g = find_symmetry(a, patterns[j], blank)
                if g is not None:
                    shared = SharedTable(a, patterns[j], g)
                    break
        plan.append(shared)
    return plan


__all__ = ["Symmetry", "SharedTable", "TablePlan", "board_symmetries", "maps_onto", "find_symmetry", "share_tables",
           "plan_tables", "materialize"]
