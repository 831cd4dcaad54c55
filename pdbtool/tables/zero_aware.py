"""The layout of zero-aware tables: one distance per (placement of the pattern tiles, blank region).

A blank-minimized table keeps, per placement, the least distance over the regions of free cells the blank
can be in; a zero-aware table keeps the distance of each region (Clausecker & Reinefeld, SoCS 2019).  The
regions of a placement depend only on the *set* of cells its tiles hold (its map), not on which tile is
where, so the table is indexed by map first, as their program does::

    index = base[map] + region[map, blank cell] * k! + order

* ``map``: the colexicographic rank of the occupied cells among the C(n, k) subsets of the board
  (``sum_j C(c_j, j + 1)`` over the occupied cells ``c_0 < c_1 < ...``);
* ``order``: the rank of the tiles' order within the map, a permutation of k (tile i's digit is the
  number of occupied cells below its cell, ranked like a placement of k tiles on k cells);
* ``region[map, c]``: the region of free cell c, regions numbered by their lowest cell;
* ``base[map]``: k! times the regions of all maps before.

A map with one region (most of them) costs k! entries, as in a blank-minimized table; the table grows
only by the extra regions of the maps that cut the free cells apart.  ``region`` (C(n, k) x n bytes) and
``base`` are computed from the board's shape and k when a table is built or searched, never stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import comb, factorial

import numba
import numpy as np
from numba import njit

from .._native.intrinsics import popcount, trailing_zeros
from ..processes import run_in_slices
from .ranking import cells_mask, column_masks, grown_region, unrank_cells

NO_REGION = 255


@njit(cache=True)
def _layout_arrays(n, k, maps, not_first_col, not_last_col, width):
    """(region of each free cell per map, base index per map and the total) over the maps in colex order
    (Gosper's next-subset step lists k-subsets as increasing masks, which is colex order)."""
    region = np.full(maps * n, NO_REGION, dtype=np.uint8)
    base = np.empty(maps + 1, dtype=np.int64)
    kfact = 1
    for i in range(2, k + 1):
        kfact *= i
    full = cells_mask(n)
    one = numba.uint64(1)
    mask = (one << numba.uint64(k)) - one
    total = 0
    for m in range(maps):
        base[m] = total
        free = full & ~mask
        left = free
        rid = 0
        while left:
            seed = left & (numba.uint64(0) - left)
            part = seed
            while True:
                grown = grown_region(part, free, not_first_col, not_last_col, width)
                if grown == part:
                    break
                part = grown
            left &= ~part
            cells = part
            while cells:
                c = trailing_zeros(cells)
                cells &= cells - one
                region[m * n + c] = rid
            rid += 1
        total += rid * kfact
        if m + 1 < maps:  # Gosper: the next larger mask with k bits
            low = mask & (numba.uint64(0) - mask)
            ripple = mask + low
            mask = (((ripple ^ mask) >> numba.uint64(2)) // low) | ripple
    base[maps] = total
    return region, base


@dataclass(frozen=True)
class ZeroAwareLayout:
    """The index arrays of the zero-aware tables of k tiles on a W x H board."""

    width: int
    height: int
    k: int
    region: np.ndarray   # uint8 [maps * n]: region of free cell c of map m at m * n + c (255: occupied)
    base: np.ndarray     # int64 [maps + 1]: first index of each map's entries; base[maps] = entries
    binom: np.ndarray    # int64 [n + 1, k + 1]: C(c, j)

    @property
    def n(self) -> int:
        return self.width * self.height

    @property
    def maps(self) -> int:
        return comb(self.n, self.k)

    @property
    def kfact(self) -> int:
        return factorial(self.k)

    @property
    def entries(self) -> int:
        return int(self.base[-1])

    def index(self, cells, blank: int) -> int:
        """The index of a placement (``cells[i]``: the cell of the pattern's i-th tile) with the blank in
        ``blank`` (a free cell)."""
        cells = np.asarray(cells, dtype=np.int64)
        return int(zero_aware_index(cells, cells.shape[0], self.n, self.binom, self.base, self.region, int(blank),
                                    self.kfact))


def layout_bytes(n: int, k: int) -> int:
    """Bytes of the layout arrays of k tiles on n cells (``region`` and ``base``), known before they are
    made."""
    maps = comb(n, k)
    return maps * n + 8 * (maps + 1)


@lru_cache(maxsize=16)
def layout(width: int, height: int, k: int) -> ZeroAwareLayout:
    """The (cached) layout of k tiles on a W x H board; refused in one line when its arrays would not fit
    in the memory this process may use (C(n, k) x n bytes: the kernel's int64 sizes overflow long before
    C(64, 40) x 64)."""
    from ..errors import PdbtoolError
    from ..puzzle.board import Board
    from .resources import gib, require_memory

    n = width * height
    need, what = layout_bytes(n, k), f"the zero-aware layout of {k} tiles on {width}x{height}"
    require_memory(need, what)
    if need >= 1 << 62:  # beyond any machine, when the memory available cannot be read
        raise PdbtoolError(f"{what} needs about {gib(need)}")
    nfc, nlc = column_masks(Board(width, height))
    region, base = _layout_arrays(n, k, comb(n, k), np.uint64(nfc), np.uint64(nlc), width)
    binom = np.array([[comb(c, j) for j in range(k + 1)] for c in range(n + 1)], dtype=np.int64)
    for a in (region, base, binom):
        a.setflags(write=False)
    return ZeroAwareLayout(width, height, k, region, base, binom)


def layout_of(pattern) -> ZeroAwareLayout:
    return layout(pattern.board.width, pattern.board.height, pattern.k)


def zero_aware_entries(pattern) -> int:
    """Entries of the zero-aware table of a pattern."""
    return layout_of(pattern).entries


@njit(cache=True, inline="always")
def occupied_mask(cells, k):
    """The mask of the cells the k tiles hold."""
    occupied = numba.uint64(0)
    for i in range(k):
        occupied |= numba.uint64(1) << numba.uint64(cells[i])
    return occupied


@njit(cache=True, inline="always")
def order_rank(cells, k, occupied):
    """The rank of the tiles' order within their map: tile i's digit is the number of occupied cells below
    its cell, ranked like a placement of k tiles on k cells."""
    one = numba.uint64(1)
    used = numba.uint64(0)
    order = 0
    for i in range(k):
        a = popcount(occupied & ((one << numba.uint64(cells[i])) - one))
        order = order * (k - i) + a - popcount(used & ((one << numba.uint64(a)) - one))
        used |= one << numba.uint64(a)
    return order


@njit(cache=True, inline="always")
def map_and_order(cells, k, binom):
    """(colex rank of the occupied cells, rank of the tiles' order among them, occupied mask)."""
    one = numba.uint64(1)
    occupied = occupied_mask(cells, k)
    m = occupied
    mr = 0
    j = 1
    while m:
        c = trailing_zeros(m)
        m &= m - one
        mr += binom[c, j]
        j += 1
    return mr, order_rank(cells, k, occupied), occupied


def colex_chunks(n: int, kmax: int) -> np.ndarray:
    """``chunks[pos, byte, below]``: the part of the colexicographic rank of a set of cells (``sum_j
    C(c_j, j + 1)``) that the set's cells in byte ``pos`` of its mask contribute, when ``below`` of its
    cells lie in the bytes before.  Exact for every ``below`` up to ``kmax``; a mask of up to 64 cells
    is ranked with one load per non-empty byte (:func:`occupied_rank`)."""
    chunks = np.zeros(((n + 7) // 8, 256, kmax + 1), dtype=np.int64)
    for pos in range(chunks.shape[0]):
        for byte in range(1, 256):
            bits = [b for b in range(8) if byte >> b & 1]
            for below in range(kmax + 1):
                chunks[pos, byte, below] = sum(comb(8 * pos + b, below + i + 1) for i, b in enumerate(bits))
    return chunks


@njit(cache=True, inline="always")
def occupied_rank(occupied, chunks):
    """The colexicographic rank of the set of cells ``occupied`` (a mask), a byte at a time through
    :func:`colex_chunks`."""
    r = 0
    below = 0
    pos = 0
    while occupied:
        byte = occupied & numba.uint64(255)
        r += chunks[pos, byte, below]
        below += popcount(byte)
        occupied >>= numba.uint64(8)
        pos += 1
    return r


@njit(cache=True, inline="always")
def indexed(cells, k, n, colex, base, b_off, region, r_off, kfact, blank):
    """The index of a placement with the blank in cell ``blank``, as the search computes it: the map's rank
    through :func:`colex_chunks` (``colex``), and a map with one region (the next map's ``base`` is k! on)
    needs no region lookup.  The layout's ``base`` and ``region`` start at ``b_off`` and ``r_off`` in the
    arrays given (:func:`joined_layouts`)."""
    occupied = occupied_mask(cells, k)
    mr = occupied_rank(occupied, colex)
    order = order_rank(cells, k, occupied)
    first = base[b_off + mr]
    if base[b_off + mr + 1] - first == kfact:
        return first + order
    return first + np.int64(region[r_off + mr * n + blank]) * kfact + order


def joined_layouts(width: int, height: int, sizes):
    """The layouts that rows of pattern sizes ``sizes`` (None: a row that is not zero-aware) are looked up
    in, as :func:`indexed` reads them: (base, region, the offset of each row's layout in both, each row's
    k!), a layout used by several rows stored once."""
    rows = len(sizes)
    b_off = np.zeros(rows, dtype=np.int64)
    r_off = np.zeros(rows, dtype=np.int64)
    kfact = np.ones(rows, dtype=np.int64)
    bases, regions, where, nb, nr = [], [], {}, 0, 0
    for row, k in enumerate(sizes):
        if k is None:
            continue
        if k not in where:
            lay = layout(width, height, k)
            where[k] = (nb, nr, lay)
            bases.append(lay.base)
            regions.append(lay.region)
            nb += lay.base.shape[0]
            nr += lay.region.shape[0]
        b_off[row], r_off[row], lay = where[k]
        kfact[row] = lay.kfact
    base = np.concatenate(bases) if bases else np.zeros(1, dtype=np.int64)
    region = np.concatenate(regions) if regions else np.zeros(1, dtype=np.uint8)
    return base, region, b_off, r_off, kfact


@njit(cache=True, inline="always")
def zero_aware_index(cells, k, n, binom, base, region, blank, kfact):
    """The index of a placement with the blank in cell ``blank`` (see the module docstring)."""
    mr, order, _ = map_and_order(cells, k, binom)
    return base[mr] + region[mr * n + blank] * kfact + order


__all__ = ["ZeroAwareLayout", "layout", "layout_bytes", "layout_of", "zero_aware_entries", "map_and_order",
           "zero_aware_index",
           "occupied_mask", "order_rank", "colex_chunks", "occupied_rank", "indexed", "joined_layouts",
           "NO_REGION"]


@njit(cache=True)
def _scan_states(values, ranks, count, n, k, nb, md_rows, binom, base, region, kfact, goal_index, start, stop):
    """Check the (placement, region) states of ``count`` placements (``ranks``, or all when empty): a reached
    value is at least the Manhattan distance, with an even excess, and differs by at most one from every
    neighbour state (a pattern tile moved into the region; the blank then stands where the tile was);
    every value but the goal's has a neighbour one below, and only the goal is 0.  Together these make the
    values the exact distances.  Items ``start..stop-1`` of them (a slice per call: a signal is seen between
    two).  Returns (states failing, the first's index or -1)."""
    cells = np.empty(k, dtype=np.int64)
    child = np.empty(k, dtype=np.int64)
    one = numba.uint64(1)
    bad = 0
    first = -1
    for x in range(start, min(stop, count)):
        r = ranks[x] if ranks.shape[0] else x
        unrank_cells(r, n, k, cells)
        mr, order, occupied = map_and_order(cells, k, binom)
        m = 0
        for i in range(k):
            m += md_rows[i, cells[i]]
        for j in range((base[mr + 1] - base[mr]) // kfact):
            idx = base[mr] + j * kfact + order
            v = values[idx]
            if v == NO_REGION:
                continue
            fail = v < m or (v - m) & 1 or (v == 0) != (idx == goal_index)
            below = False
            for i in range(k):
                for dirn in range(4):
                    qc = nb[cells[i], dirn]
                    if qc < 0 or (occupied >> numba.uint64(qc)) & one or region[mr * n + qc] != j:
                        continue
                    for t in range(k):
                        child[t] = cells[t]
                    child[i] = qc
                    w = values[zero_aware_index(child, k, n, binom, base, region, cells[i], kfact)]
                    if w == NO_REGION or abs(np.int64(w) - np.int64(v)) > 1:
                        fail = True
                    elif w + 1 == v:
                        below = True
            if v > 0 and not below:
                fail = True
            if fail:
                bad += 1
                if first < 0:
                    first = idx
    return bad, first


def check_values(pattern, values: np.ndarray, samples: int, full: bool, seed: int | None,
                 threads: int | None = None) -> tuple[bool, str]:
    """(passed, what was checked or the first failure) for the values of a zero-aware table: see
    :func:`_scan_states`.  ``full`` checks every placement's regions, else the goal's and ``samples``
    random placements'."""
    lay = layout_of(pattern)
    if values.shape[0] != lay.entries:
        return False, f"{values.shape[0]:,} entries, the layout has {lay.entries:,}"
    ranks, count, what = pattern.sample_ranks(samples, full, seed)
    what = "the regions of " + what
    goal_index = lay.index(pattern.goal_cells(), pattern.board.goal[0])
    found = [0, -1]
    args = (np.asarray(values), ranks, count, pattern.n, pattern.k, pattern.board.neighbours(), pattern.md_rows(),
            lay.binom, lay.base, lay.region, lay.kfact, goal_index)

    def scan(a: int, b: int) -> None:
        bad, first = _scan_states(*args, a, b)
        found[0] += int(bad)
        if found[1] < 0:
            found[1] = int(first)

    run_in_slices(count, scan, 0, None, [1 << 12])
    bad, first = found
    if bad == 0:
        return True, what + ": exact distances (Manhattan parity, neighbours within one, a descent from each)"
    return False, (f"{bad:,} states of {what} fail the distance rules (Manhattan parity, neighbours within "
                   f"one, a descent from each); the first at entry {first:,}")
