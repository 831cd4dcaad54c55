"""The check every built table passes before it is stored: each reachable entry is at least the pattern's
Manhattan distance and exceeds it by an even amount (every move changes the Manhattan distance by one).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from ..._native.intrinsics import trailing_zeros
from ..ranking import unrank_digits

UNSEEN = 255


@njit(parallel=True, cache=True)
def excess_violations(table, n, k, md_rows, block, inverses):
    """Count reachable entries with h < Manhattan or (h - Manhattan) odd, and unreachable entries.

    Ranks come in runs of n - k + 1 that share the cells of the first k - 1 tiles, the last tile taking
    the free cells in ascending order: one unrank per run.
    """
    entries = table.shape[0]
    run = n - k + 1
    runs = entries // run
    runs_per_block = max(1, block // run)
    nblocks = (runs + runs_per_block - 1) // runs_per_block
    full = (numba.uint64(1) << numba.uint64(n)) - numba.uint64(1)
    bad = np.zeros(nblocks, dtype=np.int64)
    unreached = np.zeros(nblocks, dtype=np.int64)
    for b in prange(nblocks):
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
                    unreached[b] += 1
                    continue
                m = m0 + md_rows[k - 1, c]
                if h < m or (h - m) & 1:
                    bad[b] += 1
    return bad.sum(), unreached.sum()
