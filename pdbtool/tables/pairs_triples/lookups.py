"""The compact look-ups of the search, keyed by ``(t, cell of t, u, cell of u)``: the pairs' units, the
rows of the kept triples and of the pairs whose value follows the blank's region (see the package's
docstring)."""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
from numba import njit

from ..._native.arrays import read_only
from ..._native.intrinsics import trailing_zeros
from ...puzzle.board import Board
from ..ranking import cells_mask, column_masks, flood_region, unrank_cells
from .sets import PAIR_BY_REGION, DynamicError, SetDefinition, groups_of, parse_set


@njit(cache=True)
def _pair_units(excess, groups, n):
    """``units[((t*n + c)*n + u)*n + cu]`` = excess / 2 of tiles t, u in cells c, cu (both orders)."""
    units = np.zeros(n * n * n * n, dtype=np.uint8)
    cells = np.empty(2, dtype=np.int64)
    for g in range(groups.shape[0]):
        a, b = groups[g, 0], groups[g, 1]
        for r in range(excess.shape[1]):
            e = excess[g, r]
            if e == 0:
                continue
            unrank_cells(r, n, 2, cells)
            ca, cb = cells[0], cells[1]
            units[((a * n + ca) * n + b) * n + cb] = e // 2
            units[((b * n + cb) * n + a) * n + ca] = e // 2
    return units


@njit(cache=True)
def _pair_region_rows(rows, groups, n, units, out):
    """Mark the pairs whose value follows the blank's region (unit byte :data:`PAIR_BY_REGION`) and write
    their rows ``(key, 0, -1, units, region mask)`` under both keys; return the count."""
    cells = np.empty(2, dtype=np.int64)
    m = 0
    for i in range(rows.shape[0]):
        g = rows[i, 0]
        a, b = groups[g, 0], groups[g, 1]
        unrank_cells(rows[i, 1], n, 2, cells)
        for key in (((a * n + cells[0]) * n + b) * n + cells[1], ((b * n + cells[1]) * n + a) * n + cells[0]):
            units[key] = PAIR_BY_REGION
            out[m, 0] = key
            out[m, 1] = 0
            out[m, 2] = -1
            out[m, 3] = rows[i, 3] // 2
            out[m, 4] = rows[i, 2]
            m += 1
    return m


@njit(cache=True, _nrt=False, forceinline=True)
def pair_units_at(units, start, ent, key, blank):
    """Units of the pair placement ``key`` with the blank in cell ``blank`` (rows as in :class:`DynamicTables`)."""
    w = np.int64(units[key])
    if w != PAIR_BY_REGION:
        return w
    for j in range(start[key], start[key + 1]):
        if ent[j, 0] == 0 and ent[j, 3] >> blank & 1:
            return ent[j, 2]
    return np.int64(0)


@njit(cache=True)
def pair_bound(p, q, r):
    """Least y_a + y_b + y_c over non-negative integers with y_a+y_b >= p, y_a+y_c >= q, y_b+y_c >= r."""
    best = 1 << 30
    top = max(p, max(q, r))
    for ya in range(top + 1):
        for yb in range(top + 1):
            yc = max(0, max(q - ya, r - yb))
            if ya + yb >= p and ya + yb + yc < best:
                best = ya + yb + yc
    return best


@njit(cache=True)
def _triple_rows(excess, groups, n, units, pstart, pent, regions, sum_rule, by_region, not_first, not_last, width,
                 out, fill):
    """Count (``fill`` False) or write the rows ``(key, v, cell of v, units, blank mask)`` of the kept triples.

    A triple (a, b, c) in cells (ca, cb, cc) worth w units while the blank is in a mask is kept if w exceeds
    what its pairs give with the blank there: their least cover (the triangle's), or with ``sum_rule`` their
    sum.  It is stored under each of its tiles t as key ``(t, cell of t, u, cell of u)`` with u the smaller of
    the other two.  With ``by_region``, ``regions`` (rows group, rank, mask, excess, by group and rank) give
    the placements whose value depends on the blank's region, and a triple whose pairs' values do is split
    into its regions too; otherwise every row's mask is the whole board."""
    cells = np.empty(3, dtype=np.int64)
    tiles = np.empty(3, dtype=np.int64)
    masks = np.empty(n, dtype=np.int64)
    worth = np.empty(n, dtype=np.int64)
    full = cells_mask(n)
    m = 0
    p = 0
    for g in range(groups.shape[0]):
        for i in range(3):
            tiles[i] = groups[g, i]
        a, b, c = tiles[0], tiles[1], tiles[2]
        for r in range(excess.shape[1]):
            nreg = 0
            if by_region:
                while p < regions.shape[0] and (regions[p, 0] < g or (regions[p, 0] == g and regions[p, 1] < r)):
                    p += 1
                while p < regions.shape[0] and regions[p, 0] == g and regions[p, 1] == r:
                    masks[nreg] = regions[p, 2]
                    worth[nreg] = regions[p, 3] // 2
                    nreg += 1
                    p += 1
            e = excess[g, r]
            if nreg == 0 and e == 0:
                continue
            used = unrank_cells(r, n, 3, cells)
            ca, cb, cc = cells[0], cells[1], cells[2]
            kab = ((a * n + ca) * n + b) * n + cb
            kac = ((a * n + ca) * n + c) * n + cc
            kbc = ((b * n + cb) * n + c) * n + cc
            if nreg == 0:
                split_pairs = by_region and (units[kab] == PAIR_BY_REGION or units[kac] == PAIR_BY_REGION
                                             or units[kbc] == PAIR_BY_REGION)
                if split_pairs:  # the triple is worth the same everywhere, its pairs are not
                    free = full & ~used
                    rem = free
                    while rem:
                        region = flood_region(rem & (~rem + numba.uint64(1)), free, not_first, not_last, width)
                        masks[nreg] = np.int64(region)
                        worth[nreg] = e // 2
                        nreg += 1
                        rem &= ~region
                else:
                    masks[0] = np.int64(full)
                    worth[0] = e // 2
                    nreg = 1
            for i in range(nreg):
                w = worth[i]
                if w == 0:
                    continue
                blank = trailing_zeros(masks[i])
                pab = pair_units_at(units, pstart, pent, kab, blank)
                pac = pair_units_at(units, pstart, pent, kac, blank)
                pbc = pair_units_at(units, pstart, pent, kbc, blank)
                bound = pab + pac + pbc if sum_rule else pair_bound(pab, pac, pbc)
                if w <= bound:
                    continue
                for s in range(3):
                    # the other two, in ascending tile order (groups are ascending)
                    j0 = 1 if s == 0 else 0
                    j1 = 1 if s == 2 else 2
                    if fill:
                        out[m, 0] = ((tiles[s] * n + cells[s]) * n + tiles[j0]) * n + cells[j0]
                        out[m, 1] = tiles[j1]
                        out[m, 2] = cells[j1]
                        out[m, 3] = w
                        out[m, 4] = masks[i]
                    m += 1
    return m


def _csr(rows: np.ndarray, keys: int) -> tuple[np.ndarray, np.ndarray]:
    """(starts, entries) of rows ``(key, ...)`` grouped by key, in their order within a key."""
    start = np.zeros(keys + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[:, 0], minlength=keys), out=start[1:])
    order = np.argsort(rows[:, 0], kind="stable")
    return start, np.ascontiguousarray(rows[order, 1:])


@dataclass
class DynamicTables:
    """The search-time look-ups of one board's dynamic set (see the module docstring).

    ``pair_units``: uint8 over ``n**4`` keys (:data:`PAIR_BY_REGION`: see the rows).  CSR ``tri_start``
    (``n**4 + 1``) into the rows ``(v, cell of v, units, blank mask)`` of ``tri_ent``: triples (v > 0), valid
    while the blank is in the mask, and the region values of pairs (v = 0, cell -1)."""

    board: Board
    name: str
    pair_units: np.ndarray
    tri_start: np.ndarray
    tri_ent: np.ndarray

    @property
    def n(self) -> int:
        return self.board.n

    @property
    def triples_stored(self) -> int:
        return int(np.count_nonzero(self.tri_ent[:, 0])) // 3

    def stats(self) -> dict:
        triple = self.tri_ent[:, 0] > 0
        return {"set": self.name,
                "pair_placements_with_excess": int(np.count_nonzero(self.pair_units)) // 2,
                "pair_placements_by_region": int(np.count_nonzero(self.pair_units == PAIR_BY_REGION)) // 2,
                "max_pair_units": int(self.pair_units[self.pair_units != PAIR_BY_REGION].max(initial=0)),
                "triple_placements_stored": self.triples_stored,
                "max_triple_units": int(self.tri_ent[triple, 2].max(initial=0)),
                "lookup_bytes": int(self.pair_units.nbytes + self.tri_start.nbytes + self.tri_ent.nbytes)}


def make_lookups(board: Board, name: str, pairs: np.ndarray, triples: np.ndarray | None,
                 pair_regions: np.ndarray | None = None, triple_regions: np.ndarray | None = None,
                 definition: SetDefinition | None = None) -> DynamicTables:
    """The look-ups of the set ``name`` from the excess arrays (and, for a ``-region`` set, the region rows).

    ``definition`` replaces the one the name stands for (a variant; ``name`` is then only its label).  Empty
    region rows of one size give that size its blank-minimized values in a ``-region`` definition."""
    if definition is None:
        definition = parse_set(name)
    if definition.regions and (pair_regions is None or (3 in definition.sizes and triple_regions is None)):
        raise DynamicError(f"the dynamic set {name} needs the region rows of its tables")
    n = board.n
    keys = n ** 4
    pgroups = np.array(groups_of(board, 2), dtype=np.int64).reshape(-1, 2)
    units = _pair_units(np.ascontiguousarray(pairs), pgroups, n)
    # the pair units a triple is kept against: with "minimized", a copy taken before region pairs are marked
    keep_units = units.copy() if definition.keep_against == "minimized" else units
    rows = np.zeros((0, 5), dtype=np.int64)
    if definition.regions and pair_regions is not None and len(pair_regions):
        rows = np.empty((2 * len(pair_regions), 5), dtype=np.int64)
        _pair_region_rows(np.ascontiguousarray(pair_regions, dtype=np.int64), pgroups, n, units, rows)
    if triples is not None and 3 in definition.sizes:
        pstart, pent = _csr(rows, keys)
        tgroups = np.array(groups_of(board, 3), dtype=np.int64).reshape(-1, 3)
        regions = (np.ascontiguousarray(triple_regions, dtype=np.int64) if definition.regions
                   else np.zeros((0, 4), dtype=np.int64))
        not_first, not_last = column_masks(board)
        if definition.keep_against == "minimized":
            # then no pair reads its rows, and a triple kept holds wherever the blank is
            pstart, pent = _csr(np.zeros((0, 5), dtype=np.int64), keys)
        args = (read_only(np.ascontiguousarray(triples)), tgroups, n, keep_units, pstart, pent, regions,
                definition.triple_rule == "sum", definition.regions, np.uint64(not_first), np.uint64(not_last),
                board.width)
        count = _triple_rows(*args, np.zeros((0, 5), dtype=np.int64), False)
        trows = np.empty((count, 5), dtype=np.int64)
        _triple_rows(*args, trows, True)
        rows = np.concatenate([rows, trows])
    start, ent = _csr(rows, keys)
    return DynamicTables(board, name, units, start, ent)
