"""What every encoding family shares: the names and codes, the error, the chunks of ranks the parallel
encoders work on with the Manhattan distances of their placements, a placement's abstract neighbours, and
the thread count of a conversion."""

from __future__ import annotations

import os

import numba
import numpy as np
from numba import njit, prange

from ..._native.intrinsics import select_bit, trailing_zeros
from ... import registry
from ...errors import PdbtoolError
from ..ranking import cells_mask, rank_cells, unrank_cells

ENCODINGS = tuple(registry.ENCODINGS)  # the names in pdbtool/registry.py, in the order of their codes
BYTE, NIBBLE, MOD3, PARITY, MIN_NIBBLE, SPARSE = range(6)
CODES = {name: code for code, name in enumerate(ENCODINGS)}
NEEDS_CONSISTENT = ("mod3", "parity")
UNREACHABLE = 255
NIBBLE_CAP = 15
MAX_GROUP = 1 << 15
# Ranks per unit of parallel work: a multiple of 2, 5 and 8 (nibbles, residues, bits a byte), of 512 (a
# sparse directory block) and of 2 C for every group size C <= MAX_GROUP, so no two units share a byte.
CHUNK = 5 << 16


class EncodingError(PdbtoolError, ValueError):
    """An encoding that cannot be used for a table; the message is one line meant for the user."""


# --- a placement's abstract neighbours (mod3 and parity walk them) ----------------------------------------

@njit(cache=True, forceinline=True)
def free_neighbour(nb, c, mv, occ):
    """The cell next to ``c`` in direction ``mv`` if it is on the board and free of pattern tiles (``occ``:
    the occupied cells), else -1: where a pattern tile on ``c`` can move in the abstract space."""
    q = nb[c, mv]
    if q < 0 or (occ >> numba.uint64(q)) & numba.uint64(1):
        return -1
    return q


@njit(cache=True, forceinline=True)
def rank_moved(cells, i, q, n):
    """The rank of the placement ``cells`` with tile ``i`` moved to cell ``q`` (``cells`` is left as it was)."""
    c = cells[i]
    cells[i] = q
    r = rank_cells(cells, n)
    cells[i] = c
    return r


# --- Manhattan distances of consecutive ranks -------------------------------------------------------------

@njit(cache=True, forceinline=True)
def manhattan_run(r0, count, n, k, md_rows, cells, out):
    """``out[j]`` = Manhattan distance of placement ``r0 + j`` for j < count.

    Consecutive ranks differ only in the last tile's cell, which runs through the cells left free by the
    others in ascending order: one unrank per n - k + 1 ranks."""
    radix = n - k + 1
    full = cells_mask(n)
    j = 0
    while j < count:
        r = r0 + j
        occ = unrank_cells(r, n, k, cells)
        base = 0
        for i in range(k - 1):
            base += md_rows[i, cells[i]]
        free = full & ~(occ ^ (numba.uint64(1) << numba.uint64(cells[k - 1])))
        d = r % radix
        rest = free & ~(select_bit(d, free) - numba.uint64(1))
        while rest and j < count:
            c = trailing_zeros(rest)
            rest &= rest - numba.uint64(1)
            out[j] = base + md_rows[k - 1, c]
            j += 1


@njit(cache=True, forceinline=True)
def _excess(h, m):
    """Excess of a byte value over Manhattan, saturated at 15 (unreachable: 15)."""
    if h == UNREACHABLE:
        return NIBBLE_CAP
    e = (h - m) >> 1
    return NIBBLE_CAP if e > NIBBLE_CAP else e


@njit(cache=True, forceinline=True)
def _saturates(h, m):
    """A reachable entry whose excess over Manhattan does not fit a nibble."""
    return h != UNREACHABLE and (h - m) >> 1 > NIBBLE_CAP


@njit(cache=True, forceinline=True)
def _chunk(ch, entries, n, k, md_rows):
    """Chunk ``ch`` of the ranks: its first rank ``r0``, its size and ``ms[j]``, the Manhattan distance of
    placement ``r0 + j``."""
    r0 = ch * CHUNK
    cnt = min(CHUNK, entries - r0)
    ms = np.empty(CHUNK, dtype=np.int64)
    manhattan_run(r0, cnt, n, k, md_rows, np.empty(k, dtype=np.int64), ms)
    return r0, cnt, ms


# --- packing a digit of each value (mod3, parity) ----------------------------------------------------------

@njit(parallel=True, cache=True)
def _pack_digits(table, out, per_byte, base, shift):
    """Pack the digit ``(h >> shift) % base`` of each entry, ``per_byte`` a byte (digit t of a byte weighs
    ``base**t``); return the number of unreachable entries (which no digit can hold)."""
    entries = table.shape[0]
    nchunks = (entries + CHUNK - 1) // CHUNK
    unr = np.zeros(nchunks, dtype=np.int64)
    for ch in prange(nchunks):
        r0 = ch * CHUNK  # CHUNK is a multiple of 5 and of 8, so chunks start on byte boundaries
        cnt = min(CHUNK, entries - r0)
        for j in range(0, cnt, per_byte):
            b = 0
            w = 1
            for t in range(min(per_byte, cnt - j)):
                h = np.int64(table[r0 + j + t])
                if h == UNREACHABLE:
                    unr[ch] += 1
                b += ((h >> shift) % base) * w
                w *= base
            out[(r0 + j) // per_byte] = b
    return unr.sum()


class _Threads:
    """Run Numba's parallel loops on ``threads`` threads, restoring the previous count afterwards."""

    def __init__(self, threads: int | None):
        self.threads = max(1, min(threads or os.cpu_count() or 1, numba.config.NUMBA_NUM_THREADS))

    def __enter__(self):
        self.previous = numba.get_num_threads()
        numba.set_num_threads(self.threads)

    def __exit__(self, *exc):
        numba.set_num_threads(self.previous)


