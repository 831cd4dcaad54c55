"""Heuristics for the IDA* kernels: Manhattan distance, linear conflicts, additive pattern databases.

Each heuristic evaluates a whole state in Python (``value``, used for h(start) and in tests) and prepares
the arrays its kernel in :mod:`pdbtool.heuristics.kernels` works on (``setup``), so that the search itself updates h
incrementally: a move changes one tile, so Manhattan changes by a table difference, linear conflicts change
in the two lines the tile leaves and enters, and a pattern sum changes in the one pattern that holds the tile
(and, with the reflection, the one that holds its reflected twin).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from numba import njit

from ..puzzle.board import Board
from ..errors import PdbtoolError
from ..tables.ranking import TilePattern, check_disjoint, rank_cells

HEURISTICS = ("pdb", "manhattan", "linear-conflict")


class HeuristicError(PdbtoolError):
    pass


def _as_tiles(state: Sequence[int]) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(state, dtype=np.int64))


# --- Manhattan ------------------------------------------------------------------------------------------

class Manhattan:
    """Sum over the tiles of the row and column distances to their goal cells."""

    name = "manhattan"

    def __init__(self, board: Board):
        self.board = board
        self.md = board.manhattan_table()

    def value(self, state: Sequence[int]) -> int:
        tiles = _as_tiles(state)
        return int(self.md[tiles, np.arange(self.board.n)].sum())

    @property
    def kernel(self):
        from .kernels import ida_manhattan

        return ida_manhattan

    def setup(self, tiles: np.ndarray, capacity: int):
        """(h0, stack-level arrays, parameters) of a search from ``tiles``."""
        h0 = self.value(tiles)
        hlev = np.zeros(capacity, dtype=np.int64)
        hlev[0] = h0
        return h0, (hlev,), (self.md,)


# --- linear conflicts ------------------------------------------------------------------------------------

MAX_LINE_TABLE = 1 << 21


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
        for j in range(length):
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
    """Manhattan distance plus two moves for each tile that must leave its goal line to let others pass
    (Hansson, Mayer & Yung 1992): per row and column, twice the least number of its tiles to remove so that
    the rest stand in goal order (tiles that belong to the line and stand in it)."""

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

    def conflicts(self, state: Sequence[int]) -> int:
        row_code, col_code = self.codes(_as_tiles(state))
        return int(self.row_lc[row_code].sum() + self.col_lc[col_code].sum())

    def value(self, state: Sequence[int]) -> int:
        return super().value(state) + self.conflicts(state)

    @property
    def kernel(self):
        from .kernels import ida_linear_conflict

        return ida_linear_conflict

    def setup(self, tiles: np.ndarray, capacity: int):
        h0 = self.value(tiles)
        hlev = np.zeros(capacity, dtype=np.int64)
        hlev[0] = h0
        row_code, col_code = self.codes(tiles)
        return h0, (hlev,), (self.md, self.row_of, self.col_of, row_code, col_code, self.row_contrib,
                             self.col_contrib, self.row_lc, self.col_lc)


# --- additive pattern databases ------------------------------------------------------------------------------

class PatternSum:
    """The sum of the tables of disjoint patterns; with ``reflect``, the max of that sum and the same sum on
    the state reflected about the main diagonal (tile t in cell q -> tile R(t) in cell T(q)).

    ``tables[i]`` is the uint8 distance array of ``patterns[i]``, indexed by the rank of its placement
    (a memory-mapped array is used in place, not copied).  With ``shared[i]`` (a
    :class:`pdbtool.tables.sharing.SharedTable`), ``tables[i]`` is instead the table of ``shared[i].source``,
    looked up through the board symmetry that maps pattern i onto it: the same values, one table fewer.
    """

    name = "pdb"

    def __init__(self, patterns: Sequence[TilePattern], tables: Sequence[np.ndarray], reflect: bool = True,
                 shared=None):
        if not patterns:
            raise HeuristicError("a pattern-database heuristic needs at least one pattern")
        if len(tables) != len(patterns):
            raise HeuristicError(f"{len(patterns)} patterns but {len(tables)} tables")
        board = patterns[0].board
        check_disjoint(list(patterns))
        if reflect and not board.reflection_valid():
            raise HeuristicError(f"the diagonal reflection needs a square board with the blank's goal on the "
                                 f"main diagonal, not {board.dims} goal {board.goal_name}")
        self.board = board
        self.patterns = list(patterns)
        self.tables = [self._checked_table(p, t) for p, t in zip(patterns, tables)]
        self.reflect = bool(reflect)
        n = board.n
        npat = len(self.patterns)
        self.shared = list(shared) if shared is not None else [None] * npat
        if len(self.shared) != npat:
            raise HeuristicError(f"{npat} patterns but {len(self.shared)} sharing entries")
        self.pat = np.full(n, -1, dtype=np.int64)
        self.slot = np.full(n, -1, dtype=np.int64)
        # the cell at which each pattern's table sees a cell of the state (row npat + i: of the reflected state)
        self.cellmap = np.tile(np.arange(n, dtype=np.int64), (2 * npat, 1))
        for i, p in enumerate(self.patterns):
            via = self.shared[i]
            if via is not None and (via.pattern != p or via.source.k != p.k):
                raise HeuristicError(f"pattern {p}: sharing entry for another pattern ({via.pattern})")
            slots = via.slots() if via is not None else {t: s for s, t in enumerate(p.tiles)}
            for t in p.tiles:
                self.pat[t] = i
                self.slot[t] = slots[t]
            if via is not None:
                self.cellmap[i] = via.cell_map()
        if self.reflect:
            self.tcell = board.reflect_cell()
            self.rtile = board.reflect_tile()
        else:
            self.tcell = np.arange(n, dtype=np.int64)
            self.rtile = np.arange(n, dtype=np.int64)
        self.rpat = self.pat[self.rtile].copy()
        self.rslot = self.slot[self.rtile].copy()
        for i in range(npat):
            self.cellmap[npat + i] = self.cellmap[i][self.tcell]
        self.kk = np.array([p.k for p in self.patterns], dtype=np.int64)
        self.kmax = int(self.kk.max())
        # addresses of the tables for the kernel's raw loads; self.tables keeps them alive
        self.addrs = np.array([t.ctypes.data for t in self.tables], dtype=np.int64)
        self.npat = npat

    def _checked_table(self, pattern: TilePattern, table) -> np.ndarray:
        """The table as the kernel reads it (subclasses with other table layouts override this)."""
        arr = np.asarray(table)
        if arr.dtype != np.uint8 or arr.ndim != 1 or arr.shape[0] != pattern.entries or not arr.flags.c_contiguous:
            raise HeuristicError(f"table of pattern {pattern} is not a contiguous uint8 array of "
                                 f"{pattern.entries} entries")
        return arr

    # --- whole-state evaluation ------------------------------------------------------------------------
    def reflected(self, state: Sequence[int]) -> np.ndarray:
        """The state reflected about the main diagonal: tile R(t) in cell T(q) for tile t in cell q."""
        tiles = _as_tiles(state)
        out = np.empty_like(tiles)
        out[self.tcell] = self.rtile[tiles]
        return out

    def _cells(self, tiles: np.ndarray) -> np.ndarray:
        """Row i: pattern i's placement in the state; row npat + i: in the reflected state."""
        n = self.board.n
        where = np.empty(n, dtype=np.int64)
        where[tiles] = np.arange(n)
        cells = np.zeros((2 * self.npat, self.kmax), dtype=np.int64)
        for i, p in enumerate(self.patterns):
            for t in p.tiles:
                s = self.slot[t]
                cells[i, s] = self.cellmap[i, where[t]]
                # reflected state: tile t stands where R(t) stands in the state, transposed
                cells[self.npat + i, s] = self.cellmap[self.npat + i, where[self.rtile[t]]]
        return cells

    def parts(self, state: Sequence[int]) -> tuple[list[int], list[int]]:
        """Table values of each pattern on the state and (when reflecting) on the reflected state."""
        tiles = _as_tiles(state)
        cells = self._cells(tiles)
        n = self.board.n
        direct = [int(self.tables[i][rank_cells(cells[i, :p.k], n)]) for i, p in enumerate(self.patterns)]
        mirrored = []
        if self.reflect:
            mirrored = [int(self.tables[i][rank_cells(cells[self.npat + i, :p.k], n)])
                        for i, p in enumerate(self.patterns)]
        return direct, mirrored

    def value(self, state: Sequence[int]) -> int:
        direct, mirrored = self.parts(state)
        return max(sum(direct), sum(mirrored)) if mirrored else sum(direct)

    # --- the kernel ----------------------------------------------------------------------------------------------
    @property
    def kernel(self):
        from .kernels import ida_pdb

        return ida_pdb

    def sum_levels(self, tiles: np.ndarray, capacity: int):
        """(h0, hv, hsum): the table values and their sums per stack level, level 0 set to ``tiles``."""
        direct, mirrored = self.parts(tiles)
        hv = np.zeros((capacity, 2 * self.npat), dtype=np.int64)
        hsum = np.zeros((capacity, 2), dtype=np.int64)
        hv[0, :self.npat] = direct
        hsum[0, 0] = sum(direct)
        if self.reflect:
            hv[0, self.npat:] = mirrored
            hsum[0, 1] = sum(mirrored)
        h0 = max(hsum[0, 0], hsum[0, 1]) if self.reflect else hsum[0, 0]
        return int(h0), hv, hsum

    def kernel_params(self, tiles: np.ndarray) -> tuple:
        """The pattern arguments of the kernels (``ida_pdb``, ``ida_dynamic``), cells set to ``tiles``."""
        return (self.npat, self.reflect, self.pat, self.slot, self.rpat, self.rslot, self.cellmap, self.kk,
                self._cells(tiles), self.addrs)

    def setup(self, tiles: np.ndarray, capacity: int):
        h0, hv, hsum = self.sum_levels(tiles, capacity)
        child_h = np.zeros((capacity, 4), dtype=np.int64)
        child_v = np.zeros((capacity, 4, 2), dtype=np.int64)
        surv = np.zeros((capacity, 4), dtype=np.int64)
        nsurv = np.zeros(capacity, dtype=np.int64)
        vmask = np.zeros(capacity, dtype=np.int64)
        return h0, (hv, hsum, child_h, child_v, surv, nsurv, vmask), self.kernel_params(tiles)


def make_heuristic(name: str, board: Board, patterns: Sequence[TilePattern] | None = None,
                   tables: Sequence[np.ndarray] | None = None, reflect: bool = True, shared=None):
    """A heuristic object by name (``pdb`` needs the patterns and their tables)."""
    if name == "manhattan":
        return Manhattan(board)
    if name == "linear-conflict":
        return LinearConflict(board)
    if name == "pdb":
        if patterns is None or tables is None:
            raise HeuristicError("the pdb heuristic needs a partition and its tables")
        return PatternSum(patterns, tables, reflect, shared)
    raise HeuristicError(f"unknown heuristic {name!r}: choose one of {', '.join(HEURISTICS)}")
