"""Additive pattern databases: the sum of the tables of disjoint patterns, optionally maxed with the same sum
on the state reflected about the main diagonal, and with tables shared through board symmetries.

In the search (:mod:`pdbtool.search.driver`) a move changes one tile, so the sum changes in the one pattern
that holds the tile (and, with the reflection, the one that holds its reflected twin): one table lookup at
the moved placement, ranked from the parent's placement with the tile's slot changed.  The children of a
node are evaluated together (:func:`pdbtool.heuristics.hooks.children`): first the direct lookups of all of
them, so that their loads overlap, then the reflected ones only where they can matter.

The lookup helpers here (``moved_value``, ``enter_sums``, ``leave_sums``) serve every state that carries
the pattern fields of :data:`PatternSumState`: the byte tables here, the encoded tables of
:mod:`pdbtool.heuristics.encoded` (which gives :func:`serve_state` its own ``table_value``, ``copy_level``
and ``carry_moved``) and the static half of ``max`` in :mod:`pdbtool.heuristics.dynamic`.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence

import numba
import numpy as np
from numba import njit
from numba.extending import overload

from .._native.intrinsics import load_u8, popcount
from ..tables.ranking import TilePattern, check_disjoint, rank_cells
from . import hooks
from .hooks import HeuristicError, as_tiles, byte_table, is_state

# hv[d, j]: the table values of row j at level d (row p: pattern p on the state, npat + p: on the reflected
# state), hsum[d, 0/1] their two sums; child_h[d, m], child_v[d, m, 0/1]: h and the moved pattern's direct
# and reflected values of the child of level d by move m.  The other fields: see PatternSum.
PatternSumState = namedtuple("PatternSumState", ["hv", "hsum", "child_h", "child_v", "npat", "reflect", "mapped",
                                                 "pat", "slot", "rpat", "rslot", "cellmap", "kk", "cells",
                                                 "addrs"])


class PatternSum:
    """The sum of the tables of disjoint patterns; with ``reflect``, the max of that sum and the same sum on
    the state reflected about the main diagonal (tile t in cell q -> tile R(t) in cell T(q)).

    ``tables[i]`` is the uint8 distance array of ``patterns[i]``, indexed by the rank of its placement
    (a memory-mapped array is used in place, not copied).  With ``shared[i]`` (a
    :class:`pdbtool.tables.sharing.SharedTable`), ``tables[i]`` is instead the table of ``shared[i].source``,
    looked up through the board symmetry that maps pattern i onto it: the same values, one table fewer.

    For the search: ``pat[t]``/``slot[t]``: the pattern of tile t (-1: none) and the index at which its table
    ranks t; ``rpat[t]``/``rslot[t]`` the same for the reflected twin R(t).  ``cellmap[p, c]`` is the cell at
    which pattern p's table sees a tile of p standing in cell c (the identity for a table built for p, a
    board symmetry for a shared one); row ``npat + p`` is the same for the reflected state (composed with
    the transpose).  ``addrs[p]``: the address of pattern p's table.
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
        # only when some table is shared are the direct lookups mapped
        self.mapped = bool((self.cellmap[:npat] != np.arange(n)).any())
        self.kk = np.array([p.k for p in self.patterns], dtype=np.int64)
        self.kmax = int(self.kk.max())
        # addresses of the tables for the kernel's raw loads; self.tables keeps them alive
        self.addrs = np.array([t.ctypes.data for t in self.tables], dtype=np.int64)
        self.npat = npat

    def _table_entries(self, pattern: TilePattern) -> int:
        """Entries of a byte table of ``pattern`` (subclasses with another layout override this)."""
        return pattern.entries

    def _checked_table(self, pattern: TilePattern, table) -> np.ndarray:
        """The table as the kernel reads it (subclasses with other table encodings override this)."""
        return byte_table(pattern, table, self._table_entries(pattern))

    # --- whole-state evaluation ------------------------------------------------------------------------
    def reflected(self, state: Sequence[int]) -> np.ndarray:
        """The state reflected about the main diagonal: tile R(t) in cell T(q) for tile t in cell q."""
        tiles = as_tiles(state)
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

    def parts(self, state: Sequence[int] | np.ndarray) -> tuple[list[int], list[int]]:
        """Table values of each pattern on the state and (when reflecting) on the reflected state."""
        tiles = as_tiles(state)
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

    # --- the search --------------------------------------------------------------------------------------
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

    def sum_state(self, tiles: np.ndarray, capacity: int):
        """(h0, :data:`PatternSumState`) of a search from ``tiles``."""
        h0, hv, hsum = self.sum_levels(tiles, capacity)
        child_h = np.zeros((capacity, 4), dtype=np.int64)
        child_v = np.zeros((capacity, 4, 2), dtype=np.int64)
        return h0, PatternSumState(hv, hsum, child_h, child_v, self.npat, self.reflect, self.mapped, self.pat,
                                   self.slot, self.rpat, self.rslot, self.cellmap, self.kk, self._cells(tiles),
                                   self.addrs)

    def setup(self, tiles: np.ndarray, capacity: int):
        """(h0, search state) of a search from ``tiles`` with a stack of ``capacity`` levels."""
        return self.sum_state(tiles, capacity)


# --- lookups of a moved placement ---------------------------------------------------------------------------

@njit(cache=True, forceinline=True)
def _rank_row(cells, p, k, n):
    """Rank of the placement in row ``p`` of ``cells`` (first ``k`` entries), as ``ranking.rank_cells``."""
    used = numba.uint64(0)
    r = 0
    for i in range(k):
        c = cells[p, i]
        below = (numba.uint64(1) << numba.uint64(c)) - numba.uint64(1)
        r = r * (n - i) + (c - popcount(used & below))
        used |= numba.uint64(1) << numba.uint64(c)
    return r


@njit(cache=True, forceinline=True)
def rank_moved(cells, row, s, k, to_cell, from_cell, n):
    """The rank of row ``row``'s placement with slot s in ``to_cell`` instead of ``from_cell`` (cells as
    the table sees them); the row is left as it was."""
    cells[row, s] = to_cell
    r = _rank_row(cells, row, k, n)
    cells[row, s] = from_cell
    return r


@njit(cache=True, forceinline=True)
def _mapped(cellmap, row, c, mapped):
    """The cell at which table row ``row`` sees cell c (c itself when no table is shared)."""
    return cellmap[row, c] if mapped else c


def table_value(hs, d, m, side, row, p, s, to_cell, from_cell):
    """The value of table row ``row`` (pattern ``p``, ``side`` 0 direct / 1 reflected) at the parent's
    placement with slot ``s`` moved from ``from_cell`` to ``to_cell``, for the child of level ``d`` by move
    ``m``; per state class (:func:`serve_state`)."""
    raise NotImplementedError("compiled only")


def copy_level(hs, d, width):
    """Copy the per-row values of level ``d`` to level ``d + 1`` (``width`` rows); per state class."""
    raise NotImplementedError("compiled only")


def carry_moved(hs, d, m, side, row):
    """What else level ``d + 1`` keeps of the entered child's moved row (encoded: its Manhattan)."""
    raise NotImplementedError("compiled only")


SUM_STATES: list = []  # the state classes that the hooks of this module serve, in the order served
_LOOKUPS: dict = {}  # state class -> the implementations of (table_value, copy_level, carry_moved)


def serve_state(cls, table_value_impl, copy_level_impl, carry_moved_impl) -> None:
    """Let the pattern-sum hooks serve the search state class ``cls`` (a namedtuple with the fields of
    :data:`PatternSumState`), its table lookups given as the plain functions that implement
    :func:`table_value`, :func:`copy_level` and :func:`carry_moved` for it (with their signatures); they are
    compiled inline into the driver for that class alone."""
    SUM_STATES.append(cls)
    _LOOKUPS[cls] = (table_value_impl, copy_level_impl, carry_moved_impl)


def _lookup(hs, which: int):
    """The implementation number ``which`` for the state whose Numba type is ``hs`` (None: another state)."""
    for cls, impls in _LOOKUPS.items():
        if is_state(hs, cls):
            return impls[which]
    return None


@overload(table_value, jit_options={"forceinline": True})
def _table_value(hs, d, m, side, row, p, s, to_cell, from_cell):
    return _lookup(hs, 0)


@overload(copy_level, jit_options={"forceinline": True})
def _copy_level(hs, d, width):
    return _lookup(hs, 1)


@overload(carry_moved, jit_options={"forceinline": True})
def _carry_moved(hs, d, m, side, row):
    return _lookup(hs, 2)


def _byte_value(hs, d, m, side, row, p, s, to_cell, from_cell):
    r = rank_moved(hs.cells, row, s, hs.kk[p], to_cell, from_cell, hs.cellmap.shape[1])
    return load_u8(hs.addrs[p] + r)


def copy_values(hs, d, width):
    """:func:`copy_level` of a state that keeps only the rows' values (``hv``)."""
    for j in range(width):
        hs.hv[d + 1, j] = hs.hv[d, j]


def carry_nothing(hs, d, m, side, row):
    """:func:`carry_moved` of a state that keeps nothing else of a moved row."""
    return None


serve_state(PatternSumState, _byte_value, copy_values, carry_nothing)


@njit(cache=True, forceinline=True)
def moved_value(hs, d, m, side, t, to_cell, from_cell):
    """(value, sum) of side 0 (direct) or 1 (reflected) for the child of level ``d`` in which tile t moved
    from ``from_cell`` to ``to_cell``: the table value of the pattern holding t (or R(t)), 0 if none, and
    the side's sum with it."""
    if side == 0:
        p = hs.pat[t]
    else:
        p = hs.rpat[t]
    if p < 0:
        return 0, hs.hsum[d, side]
    if side == 0:
        row = p
        s = hs.slot[t]
        to_c = _mapped(hs.cellmap, p, to_cell, hs.mapped)
        from_c = _mapped(hs.cellmap, p, from_cell, hs.mapped)
    else:
        row = hs.npat + p
        s = hs.rslot[t]
        to_c = hs.cellmap[row, to_cell]
        from_c = hs.cellmap[row, from_cell]
    v = table_value(hs, d, m, side, row, p, s, to_c, from_c)
    return v, hs.hsum[d, side] + v - hs.hv[d, row]


@njit(cache=True, forceinline=True)
def enter_sums(hs, d, m, t, to_cell, v_direct, v_reflected):
    """Level ``d + 1`` := the child in which tile t moved to ``to_cell``, its moved values given."""
    d1 = d + 1
    copy_level(hs, d, 2 * hs.npat if hs.reflect else hs.npat)
    hs.hsum[d1, 0] = hs.hsum[d, 0]
    hs.hsum[d1, 1] = hs.hsum[d, 1]
    p = hs.pat[t]
    if p >= 0:
        hs.cells[p, hs.slot[t]] = _mapped(hs.cellmap, p, to_cell, hs.mapped)
        hs.hsum[d1, 0] += v_direct - hs.hv[d, p]
        hs.hv[d1, p] = v_direct
        carry_moved(hs, d, m, 0, p)
    if hs.reflect:
        p = hs.rpat[t]
        if p >= 0:
            row = hs.npat + p
            hs.cells[row, hs.rslot[t]] = hs.cellmap[row, to_cell]
            hs.hsum[d1, 1] += v_reflected - hs.hv[d, row]
            hs.hv[d1, row] = v_reflected
            carry_moved(hs, d, m, 1, row)


@njit(cache=True, forceinline=True)
def leave_sums(hs, t, to_cell):
    """Tile t goes back to ``to_cell``: its placements in the rows that hold it."""
    p = hs.pat[t]
    if p >= 0:
        hs.cells[p, hs.slot[t]] = _mapped(hs.cellmap, p, to_cell, hs.mapped)
    if hs.reflect:
        p = hs.rpat[t]
        if p >= 0:
            row = hs.npat + p
            hs.cells[row, hs.rslot[t]] = hs.cellmap[row, to_cell]


# --- the driver's hooks, for byte tables and (through the helpers above) encoded ones ---------------------

hooks.at_once(True, SUM_STATES)  # read when the driver compiles: states served later count


@overload(hooks.children, jit_options={"forceinline": True})
def _children(hs, d, blank, prev_move, tiles, nb, bound, next_bound):
    if is_state(hs, *SUM_STATES):
        def impl(hs, d, blank, prev_move, tiles, nb, bound, next_bound):
            mask = 0
            for m in range(4):
                q = nb[blank, m]
                if q < 0 or m + prev_move == 3:
                    continue
                mask |= 1 << m
                v, sn = moved_value(hs, d, m, 0, tiles[q], blank, q)
                hs.child_v[d, m, 0] = v
                hs.child_h[d, m] = sn
            if hs.reflect:
                # the reflected sum only where it can matter: for a child that the direct sum does not
                # prune, or whose f by the direct sum would lower the next bound
                for m in range(4):
                    if not (mask >> m) & 1:
                        continue
                    h = hs.child_h[d, m]
                    f = d + 1 + h
                    if f > bound and f >= next_bound:
                        continue
                    q = nb[blank, m]
                    v, sr = moved_value(hs, d, m, 1, tiles[q], blank, q)
                    hs.child_v[d, m, 1] = v
                    if sr > h:
                        hs.child_h[d, m] = sr
        return impl


@overload(hooks.child_h, jit_options={"forceinline": True})
def _child_h(hs, d, m, t, to_cell, from_cell, bound, next_bound):
    if is_state(hs, *SUM_STATES):
        return lambda hs, d, m, t, to_cell, from_cell, bound, next_bound: hs.child_h[d, m]


@overload(hooks.enter, jit_options={"forceinline": True})
def _enter(hs, d, m, t, to_cell, from_cell, h):
    if is_state(hs, *SUM_STATES):
        def impl(hs, d, m, t, to_cell, from_cell, h):
            enter_sums(hs, d, m, t, to_cell, hs.child_v[d, m, 0], hs.child_v[d, m, 1])
        return impl


@overload(hooks.leave, jit_options={"forceinline": True})
def _leave(hs, d, t, to_cell, from_cell):
    if is_state(hs, *SUM_STATES):
        return lambda hs, d, t, to_cell, from_cell: leave_sums(hs, t, to_cell)


__all__ = ["PatternSum", "PatternSumState", "SUM_STATES", "serve_state", "moved_value", "enter_sums", "leave_sums",
           "rank_moved", "table_value", "copy_level", "carry_moved", "copy_values", "carry_nothing"]
