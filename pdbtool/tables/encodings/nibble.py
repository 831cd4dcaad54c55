"""``nibble``: the excess over Manhattan, saturated at 15, two a byte (low nibble first)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..._native.intrinsics import load_u8
from .common import CHUNK, NIBBLE_CAP, UNREACHABLE, _chunk, _excess


@njit(cache=True, forceinline=True)
def nibble_excess_at(addr, index):
    """The ``index``-th nibble (low nibble first)."""
    return (load_u8(addr + (index >> 1)) >> ((index & 1) << 2)) & 15


@njit(cache=True, forceinline=True)
def nibble_at(addr, rank, manhattan):
    return manhattan + 2 * nibble_excess_at(addr, rank)


@njit(parallel=True, cache=True)
def encode_nibble(table, n, k, md_rows, out):
    """Pack excesses two a byte; return (saturated entries, unreachable entries)."""
    entries = table.shape[0]
    nchunks = (entries + CHUNK - 1) // CHUNK
    sat = np.zeros(nchunks, dtype=np.int64)
    unr = np.zeros(nchunks, dtype=np.int64)
    for ch in prange(nchunks):
        r0, cnt, ms = _chunk(ch, entries, n, k, md_rows)
        for j in range(0, cnt, 2):
            pair = 0
            for t in range(2):
                if j + t < cnt:
                    h = np.int64(table[r0 + j + t])
                    if h == UNREACHABLE:
                        unr[ch] += 1
                    elif (h - ms[j + t]) >> 1 > NIBBLE_CAP:
                        sat[ch] += 1
                    pair |= _excess(h, ms[j + t]) << (4 * t)
            out[(r0 + j) >> 1] = pair
    return sat.sum(), unr.sum()
