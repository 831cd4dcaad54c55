"""``min-nibble``: the least excess of each group of ``1 << shift`` consecutive ranks, as nibbles (lossy,
admissible)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .common import CHUNK, NIBBLE_CAP, UNREACHABLE, _chunk, _excess, _saturates
from .nibble import nibble_excess_at


@njit(cache=True, forceinline=True)
def min_nibble_at(addr, rank, manhattan, shift):
    """Value of ``rank`` from a min-nibble payload of groups of ``1 << shift`` ranks."""
    return manhattan + 2 * nibble_excess_at(addr, rank >> shift)


@njit(parallel=True, cache=True)
def encode_min_nibble(table, n, k, md_rows, shift, out):
    """Pack the least excess of each group of ``1 << shift`` ranks, two groups a byte.

    Returns (entries whose own excess saturates, total loss in excess units over reachable entries)."""
    entries = table.shape[0]
    group = 1 << shift
    nchunks = (entries + CHUNK - 1) // CHUNK
    sat = np.zeros(nchunks, dtype=np.int64)
    loss = np.zeros(nchunks, dtype=np.int64)
    for ch in prange(nchunks):
        r0, cnt, ms = _chunk(ch, entries, n, k, md_rows)
        es = np.empty(CHUNK, dtype=np.int64)
        for j in range(cnt):
            h = np.int64(table[r0 + j])
            es[j] = _excess(h, ms[j])
            if _saturates(h, ms[j]):
                sat[ch] += 1
        g0 = r0 >> shift
        ngroups = (cnt + group - 1) >> shift
        for g in range(0, ngroups, 2):
            pair = 0
            for t in range(2):
                if g + t < ngroups:
                    a = (g + t) << shift
                    b = min(cnt, a + group)
                    low = NIBBLE_CAP
                    for j in range(a, b):
                        if es[j] < low:
                            low = es[j]
                    for j in range(a, b):
                        if table[r0 + j] != UNREACHABLE:
                            loss[ch] += es[j] - low
                    pair |= low << (4 * t)
            out[(g0 + g) >> 1] = pair
    return sat.sum(), loss.sum()
