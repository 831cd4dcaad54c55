"""The check every built table passes before it is stored: each reachable entry is at least the pattern's
Manhattan distance and exceeds it by an even amount (every move changes the Manhattan distance by one);
a zero-aware table's least value over each placement's regions is the blank-minimized value.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from ..._native.intrinsics import trailing_zeros
from ..ranking import cells_mask, unrank_cells, unrank_digits
from ..zero_aware import map_and_order

UNSEEN = 255


def excess_blocks(entries: int, n: int, k: int, block: int) -> int:
    """The blocks of :func:`excess_violations` over a table of ``entries``."""
    run = n - k + 1
    runs_per_block = max(1, block // run)
    return (entries // run + runs_per_block - 1) // runs_per_block


@njit(parallel=True, cache=True)
def excess_violations(table, n, k, md_rows, block, inverses, first_block, end_block):
    """Count reachable entries with h < Manhattan or (h - Manhattan) odd, and unreachable entries, in
    blocks ``first_block..end_block-1`` (of :func:`excess_blocks`: a table is checked a slice per call).

    Ranks come in runs of n - k + 1 that share the cells of the first k - 1 tiles, the last tile taking
    the free cells in ascending order: one unrank per run.
    """
    entries = table.shape[0]
    run = n - k + 1
    runs = entries // run
    runs_per_block = max(1, block // run)
    full = cells_mask(n)
    bad = np.zeros(end_block - first_block, dtype=np.int64)
    unreached = np.zeros(end_block - first_block, dtype=np.int64)
    for q in prange(end_block - first_block):
        b = first_block + q
        cells = np.empty(k, dtype=np.int64)
        digits = np.empty(k, dtype=np.int64)
        prefix = np.empty(k, dtype=np.uint64)
        for g in range(b * runs_per_block, min(runs, (b + 1) * runs_per_block)):
            r = g * run
            unrank_digits(r, n, k, inverses, cells, digits, prefix)
            m0 = 0
            for i in range(k - 1):
                m0 += md_rows[i, cells[i]]
            free = full & ~prefix[k - 1]
            for j in range(run):
                c = trailing_zeros(free)
                free &= free - numba.uint64(1)
                h = table[r + j]
                if h == UNSEEN:
                    unreached[q] += 1
                    continue
                m = m0 + md_rows[k - 1, c]
                if h < m or (h - m) & 1:
                    bad[q] += 1
    return bad.sum(), unreached.sum()


@njit(parallel=True, cache=True)
def zero_aware_violations(za, table, n, k, md_rows, block, base, region, binom, kfact, first_block, end_block):
    """Count the placements whose zero-aware entries break a rule: each reached region's value is at least
    the Manhattan distance and exceeds it by an even amount, and the least over the placement's regions is
    its blank-minimized value ``table[r]`` (255 where no region is reached); in the blocks of ``block``
    ranks ``first_block..end_block-1``."""
    entries = table.shape[0]
    bad = np.zeros(end_block - first_block, dtype=np.int64)
    for q in prange(end_block - first_block):
        b = first_block + q
        cells = np.empty(k, dtype=np.int64)
        for r in range(b * block, min(entries, (b + 1) * block)):
            unrank_cells(r, n, k, cells)
            mr, order, _ = map_and_order(cells, k, binom)
            m = 0
            for i in range(k):
                m += md_rows[i, cells[i]]
            least = UNSEEN
            for j in range((base[mr + 1] - base[mr]) // kfact):
                v = za[base[mr] + j * kfact + order]
                if v == UNSEEN:
                    continue
                if v < m or (v - m) & 1:
                    bad[q] += 1
                least = min(least, v)
            if least != table[r]:
                bad[q] += 1
    return bad.sum()
