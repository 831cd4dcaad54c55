"""``sparse``: a bit a rank (excess != 0), a rank directory and the nonzero excesses as nibbles, in uint64
words after a preamble (entries, directory offset, values offset, nonzero count)."""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from ..._native.intrinsics import atomic_or_u64 as _atomic_or, load_u64, popcount, select_bit, trailing_zeros
from .common import CHUNK, _chunk, _excess, _saturates

SPARSE_PREAMBLE = 4          # words: entries, directory offset, values offset, nonzero count
SPARSE_BLOCK_WORDS = 8       # one directory entry per 8 bitmap words (512 ranks)


@njit(cache=True, forceinline=True)
def sparse_count_before(addr, rank):
    """Nonzero entries among ranks ``0 .. rank - 1`` (rank1 through the directory)."""
    w = rank >> 6
    dir_off = np.int64(load_u64(addr + 8))
    block = w >> 3
    count = np.int64(load_u64(addr + 8 * (dir_off + block)))
    for x in range(block << 3, w):
        count += popcount(load_u64(addr + 8 * (SPARSE_PREAMBLE + x)))
    word = load_u64(addr + 8 * (SPARSE_PREAMBLE + w))
    below = (numba.uint64(1) << numba.uint64(rank & 63)) - numba.uint64(1)
    return count + popcount(word & below)


@njit(cache=True, forceinline=True)
def sparse_excess_at(addr, rank):
    word = load_u64(addr + 8 * (SPARSE_PREAMBLE + (rank >> 6)))
    if (word >> numba.uint64(rank & 63)) & numba.uint64(1) == 0:
        return 0
    idx = sparse_count_before(addr, rank)
    val_off = np.int64(load_u64(addr + 16))
    v = load_u64(addr + 8 * (val_off + (idx >> 4)))
    return np.int64((v >> numba.uint64((idx & 15) << 2)) & numba.uint64(15))


@njit(cache=True, forceinline=True)
def sparse_at(addr, rank, manhattan):
    return manhattan + 2 * sparse_excess_at(addr, rank)


@njit(cache=True)
def sparse_rank1(payload, rank):
    return sparse_count_before(payload.ctypes.data, rank)


@njit(cache=True)
def sparse_select1(payload, j):
    """The rank of the ``j``-th (0-based) nonzero entry: binary search of the directory, then the words."""
    words = payload.view(np.uint64)
    nwords = (np.int64(words[0]) + 63) >> 6
    dir_off = np.int64(words[1])
    nblocks = (nwords + SPARSE_BLOCK_WORDS - 1) // SPARSE_BLOCK_WORDS
    lo, hi = 0, nblocks - 1            # the last block whose count-before is <= j
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        if np.int64(words[dir_off + mid]) <= j:
            lo = mid
        else:
            hi = mid - 1
    left = j - np.int64(words[dir_off + lo])
    for w in range(lo * SPARSE_BLOCK_WORDS, min(nwords, (lo + 1) * SPARSE_BLOCK_WORDS)):
        word = words[SPARSE_PREAMBLE + w]
        c = popcount(word)
        if left < c:
            return w * 64 + trailing_zeros(select_bit(left, word))
        left -= c
    return -1


@njit(parallel=True, cache=True)
def _sparse_bitmap(table, n, k, md_rows, words):
    """Pass 1: the nonzero bitmap (at word SPARSE_PREAMBLE); returns the nonzero count of each chunk."""
    entries = table.shape[0]
    nchunks = (entries + CHUNK - 1) // CHUNK
    counts = np.zeros(nchunks, dtype=np.int64)
    for ch in prange(nchunks):
        r0, cnt, ms = _chunk(ch, entries, n, k, md_rows)
        for j0 in range(0, cnt, 64):
            word = numba.uint64(0)
            for t in range(min(64, cnt - j0)):
                if _excess(np.int64(table[r0 + j0 + t]), ms[j0 + t]) != 0:
                    word |= numba.uint64(1) << numba.uint64(t)
            words[SPARSE_PREAMBLE + ((r0 + j0) >> 6)] = word
            counts[ch] += popcount(word)
    return counts


@njit(parallel=True, cache=True)
def _sparse_fill(table, n, k, md_rows, words, chunk_start, nwords, dir_off, val_off):
    """Pass 2: the directory and the nonzero excesses; returns the number of saturated entries."""
    entries = table.shape[0]
    nchunks = chunk_start.shape[0]
    sat = np.zeros(nchunks, dtype=np.int64)
    for ch in prange(nchunks):
        r0, cnt, ms = _chunk(ch, entries, n, k, md_rows)
        # directory: nonzero entries before each block of SPARSE_BLOCK_WORDS words
        running = chunk_start[ch]
        w0 = r0 >> 6
        for w in range(w0, min(nwords, w0 + CHUNK // 64)):
            if w % SPARSE_BLOCK_WORDS == 0:
                words[dir_off + w // SPARSE_BLOCK_WORDS] = running
            running += popcount(words[SPARSE_PREAMBLE + w])
        idx = chunk_start[ch]
        acc = numba.uint64(0)
        acc_word = idx >> 4
        for j in range(cnt):
            h = np.int64(table[r0 + j])
            e = _excess(h, ms[j])
            if e == 0:
                continue
            if _saturates(h, ms[j]):
                sat[ch] += 1
            if idx >> 4 != acc_word:
                _atomic_or(words, val_off + acc_word, acc)   # a boundary word may be shared with a neighbour
                acc = numba.uint64(0)
                acc_word = idx >> 4
            acc |= numba.uint64(e) << numba.uint64((idx & 15) << 2)
            idx += 1
        if acc:
            _atomic_or(words, val_off + acc_word, acc)
    return sat.sum()


@njit(cache=True)
def _sparse_directory_errors(words, entries, nwords, dir_off, ndir):
    """0 when the directory holds the running popcount of the bitmap (one entry per 8 words, the total
    last) and no bit is set past the last rank; else 1 + the first bad directory entry, or -1 for a bit
    past the end.  Returns (code, total popcount)."""
    count = np.int64(0)
    for b in range(ndir - 1):
        if np.int64(words[dir_off + b]) != count:
            return b + 1, count
        for w in range(b * SPARSE_BLOCK_WORDS, min(nwords, (b + 1) * SPARSE_BLOCK_WORDS)):
            count += popcount(words[SPARSE_PREAMBLE + w])
    if np.int64(words[dir_off + ndir - 1]) != count:
        return ndir, count
    tail = entries & 63
    if tail and nwords and (words[SPARSE_PREAMBLE + nwords - 1] >> numba.uint64(tail)) != numba.uint64(0):
        return -1, count
    return 0, count
