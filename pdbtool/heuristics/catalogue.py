"""Catalogues of additive partitions, and zero-aware tables: the max over several pattern sums, each with
its reflection, read from byte tables of any blank rule.

A catalogue (:class:`pdbtool.tables.partitions.Catalogue`) is the max over partitions j of the sum of j's
pattern tables, and, with the reflection, of the same sums on the state reflected about the main
diagonal.  Each tile lies in at most one pattern of each partition, so a move changes one table value per
partition and side: the search keeps per level the value of every table row (``hv``) and the sum of
every partition and side (``hsum``), and a child costs one lookup per partition and side.

Lookups are made only where they can matter: the partitions' direct sums in turn, then their reflected
ones, each over all the children at once (independent loads that overlap), and a child stops receiving
sums as soon as it is pruned by a margin that cannot lower the next bound (f above the bound and at least
the next bound found so far).  The order of partitions is the catalogue's: put the strongest first.

The lazy rule.  A zero-aware table is consistent: a move of one of its pattern's tiles changes its value
by at most one, a move of another tile keeps the blank in the same region and the value unchanged.  So
each partition-side keeps per level an upper bound of its sum (``ub``: the last exact sum plus the moves of
its tiles since) and the rows whose value is stale (``dirty``).  A side whose bound cannot raise a child's
f above the bound (nor above the child's f so far) gets no lookup for that child; otherwise its stale rows
are looked up on the parent (once, for all the children) and the moved row in the child, as before.  A
child is therefore pruned exactly when the plain evaluation prunes it, and a pruned child's f is exact
whenever it is below the next bound: node counts are those of the plain evaluation.  A child within the
bound gets the max of the sums looked up, a lower bound of its h that is 0 at the goal (all sums are).
A minimized table's value can jump by more than one, so its rows are looked up whenever their tile moves.

A zero-aware table (:mod:`pdbtool.tables.zero_aware`) is looked up with the blank's cell: in the child of
a move, the cell the tile left.  A map with one region (the layout's ``base`` of the next map is k! on)
needs no region lookup.  A move of a tile outside a pattern keeps the blank in the same region of
that pattern's free cells, so only the moved tile's pattern changes value, as with the other rules.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence

import numpy as np
from numba import njit
from numba.extending import overload

from .._native.intrinsics import load_u8
from ..tables.ranking import TilePattern, check_disjoint, rank_cells
from ..tables.zero_aware import colex_chunks, indexed, joined_layouts
from . import hooks
from .hooks import HeuristicError, as_tiles, byte_table, is_state

# rows 0..R-1: the tables of the catalogue's patterns on the state, R..2R-1: on the reflected state.
# hsum[d, j] / hsum[d, P + j]: partition j's direct / reflected sum at level d; child_v[d, m, j or P + j]:
# the moved row's value in the child by move m.  prow[j, t] / pslot[j, t]: the row of tile t in partition j
# (-1: none) and its slot in that row's table; rprow / rpslot the same for the reflected twin R(t).
# ub[d, y] / dirty[d, y]: an upper bound of partition-side y's sum at level d, and the bits (pbit / rpbit of
# a tile; xrows[y, bit]: the row) of its rows whose hv is stale there; hv of the other rows, and hsum (the
# sum of hv, stale rows included), are exact.  step[row]: how much one move of the row's tile may raise its
# value (1: a consistent zero-aware table; a huge number: a minimized one, or without the lazy rule).
# zk[row]: whether the row's table is zero-aware; zb_off / zr_off: where its layout starts in zbase /
# zregion (the layouts of every k used, concatenated); colex: colex_chunks up to the largest k.
CatalogueState = namedtuple("CatalogueState", [
    "hv", "hsum", "ub", "dirty", "child_h", "child_v", "npart", "nrow", "reflect", "mapped", "prow", "pslot",
    "rprow", "rpslot", "pbit", "rpbit", "xrows", "step", "cellmap", "kk", "cells", "addrs", "zk", "zbase",
    "zregion", "zb_off", "zr_off", "colex", "kfact"])


_NO_BOUND = 1 << 40  # step of a row whose value a move may change by any amount


class CatalogueSum:
    """The max over partitions of their pattern sums (and, with ``reflect``, of the reflected sums).

    ``partitions[j]`` is a sequence of disjoint ``TilePattern``; ``tables[j][i]`` the uint8 table pattern i of
    partition j is read in (the table of ``shared[j][i].source`` when that is given, through its
    symmetry), ``zero_aware[j][i]`` whether that table is zero-aware.  Tables may repeat: one array serves
    every row that reads it."""

    name = "catalogue"

    def __init__(self, partitions: Sequence[Sequence[TilePattern]], tables, zero_aware, reflect: bool = True,
                 shared=None, lazy: bool = True):
        if not partitions or not all(partitions):
            raise HeuristicError("a catalogue needs at least one partition of at least one pattern")
        board = partitions[0][0].board
        rows, self.row_tables, self.row_shared, self.row_za = [], [], [], []  # type: ignore[var-annotated]
        self.part_rows = []
        for j, pats in enumerate(partitions):
            if any(p.board != board for p in pats):
                raise HeuristicError("the partitions of a catalogue must be for one board")
            check_disjoint(list(pats))
            if len(tables[j]) != len(pats) or len(zero_aware[j]) != len(pats):
                raise HeuristicError(f"partition {j}: {len(pats)} patterns but {len(tables[j])} tables")
            ids = []
            for i, p in enumerate(pats):
                via = shared[j][i] if shared is not None else None
                if via is not None and (via.pattern != p or via.source.k != p.k):
                    raise HeuristicError(f"pattern {p}: sharing entry for another pattern ({via.pattern})")
                ids.append(len(rows))
                rows.append(p)
                self.row_shared.append(via)
                self.row_za.append(bool(zero_aware[j][i]))
                self.row_tables.append(self._checked_table(via.source if via is not None else p, tables[j][i],
                                                           bool(zero_aware[j][i])))
            self.part_rows.append(ids)
        if reflect and not board.reflection_valid():
            raise HeuristicError(f"the diagonal reflection needs a square board with the blank's goal on the "
                                 f"main diagonal, not {board.dims} goal {board.goal_name}")
        self.board, self.rows, self.reflect = board, rows, bool(reflect)
        n = board.n
        P, R = len(partitions), len(rows)
        self.npart, self.nrow = P, R
        self.prow = np.full((P, n), -1, dtype=np.int64)
        self.pslot = np.full((P, n), -1, dtype=np.int64)
        self.cellmap = np.tile(np.arange(n, dtype=np.int64), (2 * R, 1))
        for j, ids in enumerate(self.part_rows):
            for row in ids:
                p, via = rows[row], self.row_shared[row]
                slots = via.slots() if via is not None else {t: s for s, t in enumerate(p.tiles)}
                for t in p.tiles:
                    self.prow[j, t] = row
                    self.pslot[j, t] = slots[t]
                if via is not None:
                    self.cellmap[row] = via.cell_map()
        if self.reflect:
            self.tcell, self.rtile = board.reflect_cell(), board.reflect_tile()
        else:
            self.tcell = self.rtile = np.arange(n, dtype=np.int64)
        self.rprow = self.prow[:, self.rtile].copy()
        self.rpslot = self.pslot[:, self.rtile].copy()
        # slot_tile[x, s]: the tile of the state whose cell slot s of row-side x takes (the twin R(t) of the
        # slot's tile t on the reflected side); slot_used zeroes the slots past a row's k (and, without the
        # reflection, the reflected rows)
        self.slot_tile = np.zeros((2 * R, max(p.k for p in rows)), dtype=np.int64)
        self.slot_used = np.zeros(self.slot_tile.shape, dtype=np.int64)
        for j in range(P):
            for t in map(int, np.flatnonzero(self.prow[j] >= 0)):
                row, slot = int(self.prow[j, t]), int(self.pslot[j, t])
                self.slot_tile[row, slot], self.slot_tile[R + row, slot] = t, self.rtile[t]
                self.slot_used[row, slot], self.slot_used[R + row, slot] = 1, int(self.reflect)
        for row in range(R):
            self.cellmap[R + row] = self.cellmap[row][self.tcell]
        self.mapped = bool((self.cellmap[:R] != np.arange(n)).any())
        self.pbit = np.zeros((P, n), dtype=np.int64)
        self.xrows = np.zeros((2 * P, max(len(ids) for ids in self.part_rows)), dtype=np.int64)
        for j, ids in enumerate(self.part_rows):
            for i, row in enumerate(ids):
                self.pbit[j, list(rows[row].tiles)] = 1 << i
                self.xrows[j, i] = row
                self.xrows[P + j, i] = R + row
        self.rpbit = self.pbit[:, self.rtile].copy()
        self.step = np.zeros(R, dtype=np.int64)
        self.lazy = lazy
        self.kk = np.array([p.k for p in rows], dtype=np.int64)
        self.kmax = int(self.kk.max())
        self.addrs = np.array([t.ctypes.data for t in self.row_tables], dtype=np.int64)
        self._layouts()

    @property
    def lazy(self) -> bool:
        """Whether a partition-side is looked up only when its upper bound says that it may prune a child
        (else every side is looked up for every child, as a plain evaluation does: the same decisions)."""
        return self._lazy

    @lazy.setter
    def lazy(self, value: bool) -> None:
        self._lazy = bool(value)
        # a move changes a zero-aware table's value by at most one (it is consistent); a minimized one's
        # can jump, so its rows are looked up whenever their tile moves
        self.step[:] = [1 if za and self._lazy else _NO_BOUND for za in self.row_za]

    def copy_tables(self) -> int:
        """Read the tables from private copies from now on (searches set up after the call), each distinct
        table copied once; returns the bytes copied.

        A lookup is a random read in tables far larger than the CPU's TLB reaches with 4 KiB pages, so
        most lookups also walk the page table.  A memory-mapped table file sits in the page cache in such
        pages; numpy's allocator asks the kernel for 2 MiB pages for a large array, so a copy is mostly
        backed by them and its lookups need no walk.  The copy is private memory of the tables' size,
        per process (threads share it), and costs a pass over the tables."""
        copies: dict[int, np.ndarray] = {}
        copied = 0
        for i, table in enumerate(self.row_tables):
            key = table.ctypes.data
            if key not in copies:
                copies[key] = np.array(table, dtype=np.uint8, order="C", copy=True)
                copies[key].setflags(write=False)
                copied += table.nbytes
            self.row_tables[i] = copies[key]
        self.addrs = np.array([t.ctypes.data for t in self.row_tables], dtype=np.int64)
        return copied

    def _checked_table(self, pattern: TilePattern, table, za: bool) -> np.ndarray:
        from ..tables.table import table_entries

        return byte_table(pattern, table, table_entries(pattern, "zero-aware" if za else "minimized"))

    def _layouts(self) -> None:
        self.zk = np.array(self.row_za, dtype=np.bool_)
        self.zbase, self.zregion, self.zb_off, self.zr_off, self.kfact = joined_layouts(
            self.board.width, self.board.height, [p.k if za else None for p, za in zip(self.rows, self.row_za)])
        self.colex = colex_chunks(self.board.n, self.kmax)

    # --- whole-state evaluation ------------------------------------------------------------------------
    def _row_values(self, tiles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(cells, values): each row's placement in its table's cells, and its table value (the reflected
        rows too, with the reflection)."""
        n, R = self.board.n, self.nrow
        where = np.empty(n, dtype=np.int64)
        where[tiles] = np.arange(n)
        cells = np.take_along_axis(self.cellmap, where[self.slot_tile], axis=1) * self.slot_used
        values = np.zeros(2 * R, dtype=np.int64)
        lookup = RowLookup(cells, self.kk, self.cellmap, self.addrs, self.zk, self.zbase, self.zregion, self.zb_off,
                           self.zr_off, self.colex, self.kfact)
        _whole_values(lookup, 2 * R if self.reflect else R, int(where[0]), values)
        return cells, values

    def sums(self, state) -> np.ndarray:
        """Row 0: each partition's sum on the state; row 1: on the reflected state (zeros without it)."""
        _, values = self._row_values(as_tiles(state))
        out = np.zeros((2, self.npart), dtype=np.int64)
        for j, ids in enumerate(self.part_rows):
            out[0, j] = values[ids].sum()
            if self.reflect:
                out[1, j] = values[[self.nrow + r for r in ids]].sum()
        return out

    def value(self, state) -> int:
        return int(self.sums(state).max())

    def setup(self, tiles: np.ndarray, capacity: int):
        cells, values = self._row_values(tiles)
        P, R = self.npart, self.nrow
        hv = np.zeros((capacity, 2 * R), dtype=np.int64)
        hsum = np.zeros((capacity, 2 * P), dtype=np.int64)
        hv[0] = values
        for j, ids in enumerate(self.part_rows):
            hsum[0, j] = values[ids].sum()
            hsum[0, P + j] = values[[R + r for r in ids]].sum() if self.reflect else 0
        h0 = int(hsum[0].max())
        ub = np.zeros((capacity, 2 * P), dtype=np.int64)
        ub[0] = hsum[0]
        dirty = np.zeros((capacity, 2 * P), dtype=np.int64)
        child_h = np.zeros((capacity, 4), dtype=np.int64)
        return h0, CatalogueState(hv, hsum, ub, dirty, child_h, np.zeros((capacity, 4, 2 * P), dtype=np.int64),
                                  P, R, self.reflect, self.mapped, self.prow, self.pslot, self.rprow, self.rpslot,
                                  self.pbit, self.rpbit, self.xrows, self.step, self.cellmap, self.kk, cells,
                                  self.addrs, self.zk, self.zbase, self.zregion, self.zb_off, self.zr_off,
                                  self.colex, self.kfact)


# --- the kernel's lookups ----------------------------------------------------------------------------------

@njit(cache=True, forceinline=True)
def _row_index(hs, x, row, k, n, blank):
    """The index of row ``x``'s placement in its table (row ``row`` of the catalogue's patterns)."""
    cells = hs.cells[x]
    if hs.zk[row]:
        return indexed(cells, k, n, hs.colex, hs.zbase, hs.zb_off[row], hs.zregion, hs.zr_off[row], hs.kfact[row],
                       blank)
    return rank_cells(cells[:k], n)


# what _row_index and _whole_values read, for a whole state outside the search (the fields as in CatalogueState)
RowLookup = namedtuple("RowLookup", ["cells", "kk", "cellmap", "addrs", "zk", "zbase", "zregion", "zb_off",
                                     "zr_off", "colex", "kfact"])


@njit(cache=True)
def _whole_values(lk, rows, blank, values):
    """``values[x]``: the table value of row-side x < ``rows`` of the state whose placements are ``lk.cells``
    (its blank in cell ``blank``), read as the search's kernel reads it."""
    R = lk.kk.shape[0]
    n = lk.cellmap.shape[1]
    for x in range(rows):
        row = x - R if x >= R else x
        idx = _row_index(lk, x, row, lk.kk[row], n, lk.cellmap[x, blank])
        values[x] = np.int64(load_u8(lk.addrs[row] + idx))


@njit(cache=True, forceinline=True)
def _moved(hs, d, j, side, t, to_cell, from_cell):
    """(value, sum) of partition j's side (0 direct, 1 reflected) in the child of level ``d`` in which tile t
    moved from ``from_cell`` to ``to_cell`` (the child's blank); the side's sum at level d must be exact."""
    P = hs.npart
    if side == 0:
        row = hs.prow[j, t]
        s = hs.pslot[j, t]
    else:
        row = hs.rprow[j, t]
        s = hs.rpslot[j, t]
    if row < 0:
        return 0, hs.hsum[d, side * P + j]
    x = side * hs.nrow + row
    if side == 0 and not hs.mapped:
        to_c = to_cell
        from_c = from_cell
    else:
        to_c = hs.cellmap[x, to_cell]
        from_c = hs.cellmap[x, from_cell]
    n = hs.cellmap.shape[1]
    hs.cells[x, s] = to_c
    idx = _row_index(hs, x, row, hs.kk[row], n, from_c)
    hs.cells[x, s] = from_c
    v = np.int64(load_u8(hs.addrs[row] + idx))
    return v, hs.hsum[d, side * P + j] + v - hs.hv[d, x]


@njit(cache=True, forceinline=True)
def _refresh(hs, d, y, blank):
    """Look up the stale rows of partition-side ``y`` on the node at level ``d`` (its blank in ``blank``), so
    that the side's sum there is exact again."""
    R = hs.nrow
    n = hs.cellmap.shape[1]
    stale = hs.dirty[d, y]
    i = 0
    while stale:
        if stale & 1:
            x = hs.xrows[y, i]
            row = x - R if x >= R else x
            idx = _row_index(hs, x, row, hs.kk[row], n, hs.cellmap[x, blank])
            v = np.int64(load_u8(hs.addrs[row] + idx))
            hs.hsum[d, y] += v - hs.hv[d, x]
            hs.hv[d, x] = v
        stale >>= 1
        i += 1
    hs.dirty[d, y] = 0
    hs.ub[d, y] = hs.hsum[d, y]


@njit(cache=True, forceinline=True)
def _may_prune(hs, d, y, j, side, t, slack, h):
    """Whether partition-side ``y``'s sum in the child by tile t's move may exceed both ``slack`` (the most h
    a child within the bound has) and ``h`` (the child's h so far): its upper bound says so."""
    row = hs.prow[j, t] if side == 0 else hs.rprow[j, t]
    step = 0 if row < 0 else hs.step[row]
    return hs.ub[d, y] + step > (slack if slack > h else h)


hooks.at_once(True, [CatalogueState])


@overload(hooks.children, jit_options={"forceinline": True})
def _children(hs, d, blank, prev_move, tiles, nb, bound, next_bound):
    if is_state(hs, CatalogueState):
        def impl(hs, d, blank, prev_move, tiles, nb, bound, next_bound):
            P = hs.npart
            slack = bound - d - 1
            # one partition-side at a time over all the children, so that their lookups are independent
            # loads that overlap; a side whose upper bound cannot prune a child gets no lookup for it, and
            # a child pruned by a margin that cannot lower the next bound needs no more sides
            live = 0
            for m in range(4):
                q = nb[blank, m]
                if q >= 0 and m + prev_move != 3:
                    live |= 1 << m
                    hs.child_h[d, m] = 0
            for y in range(2 * P if hs.reflect else P):
                side = 1 if y >= P else 0
                j = y - side * P
                need = 0
                for m in range(4):
                    if (live >> m) & 1:
                        hs.child_v[d, m, y] = -1
                        if _may_prune(hs, d, y, j, side, tiles[nb[blank, m]], slack, hs.child_h[d, m]):
                            need |= 1 << m
                if need == 0:
                    continue
                if hs.dirty[d, y]:
                    _refresh(hs, d, y, blank)
                for m in range(4):
                    if not (need >> m) & 1:
                        continue
                    q = nb[blank, m]
                    t = tiles[q]
                    if not _may_prune(hs, d, y, j, side, t, slack, hs.child_h[d, m]):
                        continue  # the refreshed bound rules it out after all
                    v, s = _moved(hs, d, j, side, t, blank, q)
                    hs.child_v[d, m, y] = v
                    if s > hs.child_h[d, m]:
                        hs.child_h[d, m] = s
                    f = d + 1 + hs.child_h[d, m]
                    if f > bound and f >= next_bound:
                        live &= ~(1 << m)
                if live == 0:
                    break
        return impl


@overload(hooks.child_h, jit_options={"forceinline": True})
def _child_h(hs, d, m, t, to_cell, from_cell, bound, next_bound):
    if is_state(hs, CatalogueState):
        return lambda hs, d, m, t, to_cell, from_cell, bound, next_bound: hs.child_h[d, m]


@njit(cache=True, forceinline=True)
def _enter_side(hs, d, d1, m, y, x, t, bit, slot, to_cell):
    """Level d1's row x (the moved tile's row in partition-side y) and side y after the move of tile t."""
    hs.cells[x, slot] = hs.cellmap[x, to_cell]
    v = hs.child_v[d, m, y]
    if v >= 0:
        hs.hsum[d1, y] += v - hs.hv[d, x]
        hs.hv[d1, x] = v
        hs.ub[d1, y] = hs.hsum[d1, y]
    else:  # not looked up: the row is stale, and the side's sum at most one more (consistency)
        hs.ub[d1, y] += 1
        hs.dirty[d1, y] |= bit


@overload(hooks.enter, jit_options={"forceinline": True})
def _enter(hs, d, m, t, to_cell, from_cell, h):
    if is_state(hs, CatalogueState):
        def impl(hs, d, m, t, to_cell, from_cell, h):
            P = hs.npart
            R = hs.nrow
            d1 = d + 1
            for x in range(2 * R if hs.reflect else R):
                hs.hv[d1, x] = hs.hv[d, x]
            for y in range(2 * P):
                hs.hsum[d1, y] = hs.hsum[d, y]
                hs.ub[d1, y] = hs.ub[d, y]
                hs.dirty[d1, y] = hs.dirty[d, y]
            for j in range(P):
                row = hs.prow[j, t]
                if row >= 0:
                    _enter_side(hs, d, d1, m, j, row, t, hs.pbit[j, t], hs.pslot[j, t], to_cell)
                if hs.reflect:
                    row = hs.rprow[j, t]
                    if row >= 0:
                        _enter_side(hs, d, d1, m, P + j, R + row, t, hs.rpbit[j, t], hs.rpslot[j, t], to_cell)
        return impl


@overload(hooks.leave, jit_options={"forceinline": True})
def _leave(hs, d, t, to_cell, from_cell):
    if is_state(hs, CatalogueState):
        def impl(hs, d, t, to_cell, from_cell):
            R = hs.nrow
            for j in range(hs.npart):
                row = hs.prow[j, t]
                if row >= 0:
                    hs.cells[row, hs.pslot[j, t]] = hs.cellmap[row, to_cell] if hs.mapped else to_cell
                if hs.reflect:
                    row = hs.rprow[j, t]
                    if row >= 0:
                        hs.cells[R + row, hs.rpslot[j, t]] = hs.cellmap[R + row, to_cell]
        return impl


__all__ = ["CatalogueSum", "CatalogueState"]


def catalogue_heuristic(part, plan, tables, blank: str, reflect: bool = True) -> CatalogueSum:
    """The catalogue (or the one partition) ``part`` over the tables of ``plan``
    (:func:`pdbtool.tables.sharing.plan_tables` of its distinct patterns; ``tables[i]``: the table plan
    pattern i is read in) of blank rule ``blank``."""
    if plan is None:
        raise HeuristicError("a catalogue needs its table plan")
    by_tiles = {p.tiles: (tables[i], plan.shared[i]) for i, p in enumerate(plan.patterns)}
    partitions = getattr(part, "partitions", (part,))
    pats = [list(pp.patterns) for pp in partitions]
    za = blank == "zero-aware"
    return CatalogueSum(pats, [[by_tiles[p.tiles][0] for p in ps] for ps in pats], [[za] * len(ps) for ps in pats],
                        reflect, [[by_tiles[p.tiles][1] for p in ps] for ps in pats])


__all__ += ["catalogue_heuristic"]
