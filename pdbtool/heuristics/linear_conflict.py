"""Manhattan distance plus linear conflicts (Hansson, Mayer & Yung 1992).

Per row and column, twice the least number of its tiles to remove so that the rest stand in goal order
(counting the tiles that belong to the line and stand in it).  A line's tiles are summarized by a code
(one digit per cell: 0, or 1 + the goal position in the line of the tile there) and its conflicts read
from a table indexed by the code.  In the search a vertical move can change the conflicts of two rows, a
horizontal move those of two columns; the code of the tile's own column (row) changes too, but not its
conflicts, since within its own line only the digit's position moves, which keeps the order.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence

import numpy as np
from numba import njit
from numba.extending import overload

from .._native import numba_cache  # noqa: F401  (the package-wide cache stamp)
from ..puzzle.board import Board
from . import hooks
from .hooks import HeuristicError, as_tiles, is_state
from .manhattan import Manhattan

MAX_LINE_TABLE = 1 << 21

# hlev[d]: h at level d; row_code[r]/col_code[c]: the codes of the current node's lines;
# row_contrib[t, c]: what tile t in cell c adds to its row's code; row_lc[code]: the row's conflicts
LinearConflictState = namedtuple("LinearConflictState", ["hlev", "md", "row_of", "col_of", "row_code", "col_code",
                                                         "row_contrib", "col_contrib", "row_lc", "col_lc"])


@njit(cache=True)
def _line_conflict_table(length):
    """``table[code]`` = 2 x (tiles of the line that belong to it - longest increasing run of goal slots).

    A code has one base-(length+1) digit per cell of the line (digit j for position j): 0 when the cell
    holds no tile whose goal is in this line, else 1 + the goal position of that tile in the line.
    """
    base = length + 1
    size = base ** length
    table = np.zeros(size, dtype=np.int64)
    goals = np.empty(length, dtype=np.int64)
    best = np.empty(length, dtype=np.int64)
    for code in range(size):
        x = code
        count = 0
        for _ in range(length):
            digit = x % base
            x //= base
            if digit:
                goals[count] = digit - 1
                count += 1
        lis = 0
        for i in range(count):
            b = 1
            for j in range(i):
                if goals[j] < goals[i] and best[j] + 1 > b:
                    b = best[j] + 1
            best[i] = b
            if b > lis:
                lis = b
        table[code] = 2 * (count - lis)
    return table


class LinearConflict(Manhattan):
    """Manhattan distance plus two moves for each tile that must leave its goal line to let others pass."""

    name = "linear-conflict"

    def __init__(self, board: Board):
        super().__init__(board)
        w, h = board.width, board.height
        if (w + 1) ** w > MAX_LINE_TABLE or (h + 1) ** h > MAX_LINE_TABLE:
            raise HeuristicError(f"linear-conflict supports lines of at most 7 cells, not a {board.dims} board")
        n = board.n
        self.row_of = np.array([c // w for c in range(n)], dtype=np.int64)
        self.col_of = np.array([c % w for c in range(n)], dtype=np.int64)
        self.row_contrib = np.zeros((n, n), dtype=np.int64)
        self.col_contrib = np.zeros((n, n), dtype=np.int64)
        for t in range(1, n):
            gr, gc = divmod(board.goal[t], w)
            for c in range(n):
                r, col = divmod(c, w)
                if r == gr:
                    self.row_contrib[t, c] = (gc + 1) * (w + 1) ** col
                if col == gc:
                    self.col_contrib[t, c] = (gr + 1) * (h + 1) ** r
        self.row_lc = _line_conflict_table(w)
        self.col_lc = self.row_lc if h == w else _line_conflict_table(h)

    def codes(self, tiles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = self.board.n
        row_code = np.zeros(self.board.height, dtype=np.int64)
        col_code = np.zeros(self.board.width, dtype=np.int64)
        for c in range(n):
            row_code[self.row_of[c]] += self.row_contrib[tiles[c], c]
            col_code[self.col_of[c]] += self.col_contrib[tiles[c], c]
        return row_code, col_code

    def conflicts(self, state: Sequence[int] | np.ndarray) -> int:
        row_code, col_code = self.codes(as_tiles(state))
        return int(self.row_lc[row_code].sum() + self.col_lc[col_code].sum())

    def value(self, state: Sequence[int] | np.ndarray) -> int:
        return super().value(state) + self.conflicts(state)

    def setup(self, tiles: np.ndarray, capacity: int):
        h0 = self.value(tiles)
        hlev = np.zeros(capacity, dtype=np.int64)
        hlev[0] = h0
        row_code, col_code = self.codes(tiles)
        return h0, LinearConflictState(hlev, self.md, self.row_of, self.col_of, row_code, col_code,
                                       self.row_contrib, self.col_contrib, self.row_lc, self.col_lc)


@njit(cache=True, inline="always")
def _move_codes(hs, t, to_cell, from_cell):
    """Tile t leaves ``from_cell`` for ``to_cell``: the codes of the lines it leaves and enters change."""
    hs.row_code[hs.row_of[from_cell]] -= hs.row_contrib[t, from_cell]
    hs.row_code[hs.row_of[to_cell]] += hs.row_contrib[t, to_cell]
    hs.col_code[hs.col_of[from_cell]] -= hs.col_contrib[t, from_cell]
    hs.col_code[hs.col_of[to_cell]] += hs.col_contrib[t, to_cell]


hooks.evaluated_alone(False, LinearConflictState)


@njit(cache=True, inline="always")
def _conflicts_moved(code, line_of, contrib, lc, t, to_cell, from_cell):
    """The change of the conflicts of the lines of ``from_cell`` and ``to_cell`` when tile t moves across."""
    a_old = code[line_of[from_cell]]
    b_old = code[line_of[to_cell]]
    return lc[a_old - contrib[t, from_cell]] + lc[b_old + contrib[t, to_cell]] - lc[a_old] - lc[b_old]


@overload(hooks.child_h, inline="always")
def _child_h(hs, d, m, t, to_cell, from_cell, bound, next_bound):
    if is_state(hs, LinearConflictState):
        def impl(hs, d, m, t, to_cell, from_cell, bound, next_bound):
            h = hs.hlev[d] + hs.md[t, to_cell] - hs.md[t, from_cell]
            if m == 0 or m == 3:  # a vertical move: the rows of both cells
                return h + _conflicts_moved(hs.row_code, hs.row_of, hs.row_contrib, hs.row_lc, t, to_cell, from_cell)
            return h + _conflicts_moved(hs.col_code, hs.col_of, hs.col_contrib, hs.col_lc, t, to_cell, from_cell)
        return impl


@overload(hooks.enter, inline="always")
def _enter(hs, d, m, t, to_cell, from_cell, h):
    if is_state(hs, LinearConflictState):
        def impl(hs, d, m, t, to_cell, from_cell, h):
            _move_codes(hs, t, to_cell, from_cell)
            hs.hlev[d + 1] = h
        return impl


@overload(hooks.leave, inline="always")
def _leave(hs, d, t, to_cell, from_cell):
    if is_state(hs, LinearConflictState):
        def impl(hs, d, t, to_cell, from_cell):
            _move_codes(hs, t, to_cell, from_cell)
        return impl


__all__ = ["LinearConflict", "LinearConflictState", "MAX_LINE_TABLE"]
