"""Manhattan distance plus linear conflicts (Hansson, Mayer & Yung 1992).

Per row and column, twice the least number of its tiles to remove so that the rest stand in goal order
(counting the tiles that belong to the line and stand in it): :func:`line_conflicts`.  In the search a
vertical move can change the conflicts of two rows, a horizontal move those of two columns; the entry of
the tile's own column (row) changes too, but not its conflicts, since within its own line only the tile's
position moves, which keeps the order.

Two search states give the same function.  On boards whose lines have at most 7 cells a line's tiles are
summarized by a code (one digit per cell: 0, or 1 + the goal position in the line of the tile there) and
its conflicts read from a table indexed by the code (:class:`LinearConflict`).  Longer lines have too many
codes for a table: each line keeps its entries and its conflicts, and a move recomputes those of the one
line they can change (:class:`LineScanConflict`).  The driver's hooks at the end serve both states.
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


@njit(cache=True, forceinline=True)
def line_conflicts(lines, a, pos, value, tails):
    """Conflicts of line ``a`` (``lines[a, i]``: the goal position of its i-th tile, -1 for a tile of another
    line or the blank) with entry ``pos`` read as ``value`` (pos -1: none): 2 x (its tiles - the longest
    increasing run of their goal positions), the run found by patience sorting (``tails``: scratch of at
    least the line's length)."""
    count = 0
    run = 0
    for i in range(lines.shape[1]):
        v = value if i == pos else lines[a, i]
        if v < 0:
            continue
        count += 1
        j = 0
        while j < run and tails[j] < v:
            j += 1
        tails[j] = v
        if j == run:
            run += 1
    return 2 * (count - run)


@njit(cache=True)
def _line_conflict_table(length):
    """``table[code]``: the conflicts (:func:`line_conflicts`) of the line that ``code`` describes.

    A code has one base-(length+1) digit per cell of the line (digit j for position j): 0 when the cell
    holds no tile whose goal is in this line, else 1 + the goal position of that tile in the line.
    """
    base = length + 1
    size = base ** length
    table = np.zeros(size, dtype=np.int64)
    line = np.empty((1, length), dtype=np.int64)
    tails = np.empty(length, dtype=np.int64)
    for code in range(size):
        x = code
        for i in range(length):
            line[0, i] = x % base - 1
            x //= base
        table[code] = line_conflicts(line, 0, -1, 0, tails)
    return table


def lines_fit_tables(board: Board) -> bool:
    """Whether the conflicts of every line of the board come from a table of codes (lines of at most 7
    cells); longer lines (8x8, 4x16, 2x32) are scanned instead (:class:`LineScanConflict`)."""
    w, h = board.width, board.height
    return (w + 1) ** w <= MAX_LINE_TABLE and (h + 1) ** h <= MAX_LINE_TABLE


# hlev[d]: h at level d; row_code[r]/col_code[c]: the codes of the current node's lines;
# row_contrib[t, c]: what tile t in cell c adds to its row's code; row_lc[code]: the row's conflicts
LinearConflictState = namedtuple("LinearConflictState", ["hlev", "md", "row_of", "col_of", "row_code", "col_code",
                                                         "row_contrib", "col_contrib", "row_lc", "col_lc"])


class LinearConflict(Manhattan):
    """Manhattan distance plus two moves for each tile that must leave its goal line to let others pass.

    On a board with a line longer than 7 cells, ``LinearConflict(board)`` is a :class:`LineScanConflict`:
    the same function, with each changed line's conflicts computed from its tiles."""

    name = "linear-conflict"

    def __new__(cls, board: Board):
        if cls is LinearConflict and not lines_fit_tables(board):
            cls = LineScanConflict
        return super().__new__(cls)

    def __init__(self, board: Board):
        super().__init__(board)
        if not lines_fit_tables(board):
            raise HeuristicError(f"line code tables cover lines of at most 7 cells, not a {board.dims} board")
        self._goal_lines()
        w, h = board.width, board.height
        # digit (goal position + 1) at the cell's position in its line; 0 for a tile of another line
        self.row_contrib = np.where(self.row_val >= 0, (self.row_val + 1) * (w + 1) ** self.col_of, 0)
        self.col_contrib = np.where(self.col_val >= 0, (self.col_val + 1) * (h + 1) ** self.row_of, 0)
        self.row_lc = _line_conflict_table(w)
        self.col_lc = self.row_lc if h == w else _line_conflict_table(h)

    def _goal_lines(self) -> None:
        """``row_of[c]``/``col_of[c]``: the row and column of cell c; ``row_val[t, c]``/``col_val[t, c]``: the
        goal position of tile t within the row (column) of cell c when its goal is in that line, else -1."""
        b = self.board
        n = b.n
        self.row_of = np.arange(n, dtype=np.int64) // b.width
        self.col_of = np.arange(n, dtype=np.int64) % b.width
        goal = np.asarray(b.goal, dtype=np.int64)
        goal_row, goal_col = (goal // b.width)[:, None], (goal % b.width)[:, None]
        self.row_val = np.where(goal_row == self.row_of, goal_col, -1)
        self.col_val = np.where(goal_col == self.col_of, goal_row, -1)
        self.row_val[0] = self.col_val[0] = -1  # the blank is in no line's order

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
        h0, hlev = self.levels(tiles, capacity)
        row_code, col_code = self.codes(tiles)
        return h0, LinearConflictState(hlev, self.md, self.row_of, self.col_of, row_code, col_code,
                                       self.row_contrib, self.col_contrib, self.row_lc, self.col_lc)


@njit(cache=True, forceinline=True)
def _move_codes(hs, t, to_cell, from_cell):
    """Tile t leaves ``from_cell`` for ``to_cell``: the codes of the lines it leaves and enters change."""
    hs.row_code[hs.row_of[from_cell]] -= hs.row_contrib[t, from_cell]
    hs.row_code[hs.row_of[to_cell]] += hs.row_contrib[t, to_cell]
    hs.col_code[hs.col_of[from_cell]] -= hs.col_contrib[t, from_cell]
    hs.col_code[hs.col_of[to_cell]] += hs.col_contrib[t, to_cell]


@njit(cache=True, forceinline=True)
def _conflicts_moved(code, line_of, contrib, lc, t, to_cell, from_cell):
    """The change of the conflicts of the lines of ``from_cell`` and ``to_cell`` when tile t moves across."""
    a_old = code[line_of[from_cell]]
    b_old = code[line_of[to_cell]]
    return lc[a_old - contrib[t, from_cell]] + lc[b_old + contrib[t, to_cell]] - lc[a_old] - lc[b_old]


def _codes_child_h(hs, d, m, t, to_cell, from_cell, bound, next_bound):
    """:func:`hooks.child_h` of the code tables (compiled inline into the driver)."""
    h = hs.hlev[d] + hs.md[t, to_cell] - hs.md[t, from_cell]
    if m == 0 or m == 3:  # a vertical move: the rows of both cells
        return h + _conflicts_moved(hs.row_code, hs.row_of, hs.row_contrib, hs.row_lc, t, to_cell, from_cell)
    return h + _conflicts_moved(hs.col_code, hs.col_of, hs.col_contrib, hs.col_lc, t, to_cell, from_cell)


# --- lines longer than the code tables: the conflicts of a line from its tiles ------------------------------

# hlev[d]: h at level d; row_line[r, i] / col_line[x, j]: the goal position within the line of the tile at
# position i of row r (column x) when the tile belongs to that line, else -1; row_conf / col_conf: the
# lines' conflicts; row_val[t, c] / col_val[t, c]: what tile t in cell c puts in its row's (column's) entry;
# row_pos[c] / col_pos[c]: the position of cell c in its row (column); tails: scratch of the longest run
LineScanState = namedtuple("LineScanState", ["hlev", "md", "row_of", "col_of", "row_pos", "col_pos", "row_val",
                                             "col_val", "row_line", "col_line", "row_conf", "col_conf", "tails"])


@njit(cache=True, forceinline=True)
def _line_change(lines, conf, a, b, pos_a, pos_b, val_from, val_to, tails):
    """The change of the conflicts of lines a and b (a != b) when a tile leaves entry ``pos_a`` of line a
    (where it had ``val_from``) for entry ``pos_b`` of line b (where it gets ``val_to``): only the line the
    tile belongs to can change."""
    if val_from >= 0:
        return line_conflicts(lines, a, pos_a, -1, tails) - conf[a]
    if val_to >= 0:
        return line_conflicts(lines, b, pos_b, val_to, tails) - conf[b]
    return 0


def _scan_child_h(hs, d, m, t, to_cell, from_cell, bound, next_bound):
    """:func:`hooks.child_h` of the scanned lines (compiled inline into the driver)."""
    h = hs.hlev[d] + hs.md[t, to_cell] - hs.md[t, from_cell]
    if m == 0 or m == 3:  # a vertical move: the rows of both cells
        return h + _line_change(hs.row_line, hs.row_conf, hs.row_of[from_cell], hs.row_of[to_cell],
                                hs.row_pos[from_cell], hs.row_pos[to_cell], hs.row_val[t, from_cell],
                                hs.row_val[t, to_cell], hs.tails)
    return h + _line_change(hs.col_line, hs.col_conf, hs.col_of[from_cell], hs.col_of[to_cell],
                            hs.col_pos[from_cell], hs.col_pos[to_cell], hs.col_val[t, from_cell],
                            hs.col_val[t, to_cell], hs.tails)


@njit(cache=True, forceinline=True)
def _scan_lines_move(lines, conf, of, pos, val, tails, t, to_cell, from_cell):
    """Tile t leaves ``from_cell`` for ``to_cell``: its entries in one direction's lines, and the conflicts
    of the line it leaves or enters across."""
    a = of[from_cell]
    b = of[to_cell]
    lines[a, pos[from_cell]] = -1
    lines[b, pos[to_cell]] = val[t, to_cell]
    if a != b:
        if val[t, from_cell] >= 0:
            conf[a] = line_conflicts(lines, a, -1, 0, tails)
        if val[t, to_cell] >= 0:
            conf[b] = line_conflicts(lines, b, -1, 0, tails)


@njit(cache=True, forceinline=True)
def _scan_move(hs, t, to_cell, from_cell):
    _scan_lines_move(hs.row_line, hs.row_conf, hs.row_of, hs.row_pos, hs.row_val, hs.tails, t, to_cell, from_cell)
    _scan_lines_move(hs.col_line, hs.col_conf, hs.col_of, hs.col_pos, hs.col_val, hs.tails, t, to_cell, from_cell)


class LineScanConflict(LinearConflict):
    """Linear conflicts on boards with lines too long for code tables: a move changes the conflicts of at
    most the one line that its tile belongs to among the two it leaves and enters, recomputed from the
    line's entries."""

    def __init__(self, board: Board):
        Manhattan.__init__(self, board)
        self._goal_lines()
        self.row_pos, self.col_pos = self.col_of, self.row_of
        self.tails = np.zeros(max(board.width, board.height), dtype=np.int64)

    def lines(self, tiles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The entries of every row and column of the state (see :data:`LineScanState`)."""
        b = self.board
        cells = np.arange(b.n)
        rows = self.row_val[tiles, cells].reshape(b.height, b.width)
        cols = np.ascontiguousarray(self.col_val[tiles, cells].reshape(b.height, b.width).T)
        return np.ascontiguousarray(rows), cols

    def line_conflicts(self, tiles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rows, cols = self.lines(tiles)
        tails = np.zeros_like(self.tails)
        return (np.array([line_conflicts(rows, a, -1, 0, tails) for a in range(rows.shape[0])], dtype=np.int64),
                np.array([line_conflicts(cols, a, -1, 0, tails) for a in range(cols.shape[0])], dtype=np.int64))

    def conflicts(self, state) -> int:
        row_conf, col_conf = self.line_conflicts(as_tiles(state))
        return int(row_conf.sum() + col_conf.sum())

    def setup(self, tiles: np.ndarray, capacity: int):
        h0, hlev = self.levels(tiles, capacity)
        rows, cols = self.lines(tiles)
        row_conf, col_conf = self.line_conflicts(tiles)
        return h0, LineScanState(hlev, self.md, self.row_of, self.col_of, self.row_pos, self.col_pos,
                                 self.row_val, self.col_val, rows, cols, row_conf, col_conf,
                                 np.zeros_like(self.tails))


# --- the driver's hooks, for both states ------------------------------------------------------------------

# per state class: its child_h, and what a tile's move does to its lines
_LINE_STATES = {LinearConflictState: (_codes_child_h, _move_codes), LineScanState: (_scan_child_h, _scan_move)}

hooks.evaluated_alone(False, *_LINE_STATES)


def _line_state(hs):
    """(child_h, move) of the state whose Numba type is ``hs``, or None for another state."""
    for cls, fns in _LINE_STATES.items():
        if is_state(hs, cls):
            return fns
    return None


@overload(hooks.child_h, jit_options={"forceinline": True})
def _child_h(hs, d, m, t, to_cell, from_cell, bound, next_bound):
    fns = _line_state(hs)
    return None if fns is None else fns[0]


@overload(hooks.enter, jit_options={"forceinline": True})
def _enter(hs, d, m, t, to_cell, from_cell, h):
    fns = _line_state(hs)
    if fns is not None:
        move = fns[1]

        def impl(hs, d, m, t, to_cell, from_cell, h):
            move(hs, t, to_cell, from_cell)
            hs.hlev[d + 1] = h
        return impl


@overload(hooks.leave, jit_options={"forceinline": True})
def _leave(hs, d, t, to_cell, from_cell):
    fns = _line_state(hs)
    if fns is not None:
        move = fns[1]
        return lambda hs, d, t, to_cell, from_cell: move(hs, t, to_cell, from_cell)


__all__ = ["LinearConflict", "LinearConflictState", "LineScanConflict", "LineScanState", "MAX_LINE_TABLE",
           "line_conflicts", "lines_fit_tables"]
