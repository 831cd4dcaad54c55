"""Compact encodings of a byte distance table, their parallel encoders and the lookups the search calls.

All but ``byte`` store the *excess* ``e = (h - m) / 2`` of a placement over the Manhattan distance ``m`` of
the pattern's tiles (every table value has ``h >= m`` and ``h - m`` even), or a residue of ``h``:

=============  ===============================================  ==========================================
encoding       payload (uint8, rank r)                          value
=============  ===============================================  ==========================================
byte           ``h`` in byte r (255: unreachable)               ``h``
nibble         ``min(e, 15)`` in nibble r (low nibble first)    ``m + 2 e``; a saturated entry gives
                                                                ``m + 30 <= h``: still admissible
mod3           ``h mod 3``, five residues a byte                from the parent's exact value (CHILD-H),
               (byte = sum of residue_i * 3^i, i = r mod 5)     or by a descent to the goal (EXACT)
parity         bit 1 of ``h`` (``(h >> 1) & 1``), 8 a byte      as mod3
min-nibble C   ``min(e, 15)`` least over the group of C          ``m + 2 e_group <= h``: lossy, admissible
               consecutive ranks (group ``r >> log2 C``)
sparse         uint64 words: preamble, a bit per rank           ``m + 2 e`` (``e = 0`` where the bit is 0)
               (``e != 0``), a rank directory, the nonzero
               excesses (saturated at 15) as nibbles in rank
               order
=============  ===============================================  ==========================================

mod3 and parity need a *consistent* table: one whose value changes by exactly one whenever one pattern tile
moves into an adjacent cell free of pattern tiles (an "abstract neighbour": any such cell, whatever the blank
region).  Then a child's value is the parent's plus or minus one, and the stored residue tells which:

* mod3: ``h' = h + 1`` if ``h' mod 3 == (h + 1) mod 3``, else ``h - 1`` (a blank move keeps the residue: ``h``).
* parity: ``h + 1`` and ``h - 1`` differ by two, so their bit 1 differs: ``h' = h + 1`` iff bit 1 of
  ``h + 1`` equals the stored bit.  Without a parent, ``h mod 4 = 2 * bit + (m mod 2)`` (as ``h = m`` mod 2).

EXACT walks from a placement to the goal placement through abstract neighbours whose value is one less
(residue one less for mod3, ``h mod 4`` one less for parity), counting steps: each step lowers the value by
exactly one, and a neighbour one less always exists (the first move of a shortest abstract path).

Blank-*ignored* tables are consistent: they are breadth-first distances in the graph of abstract neighbours.
Blank-*minimized* tables are not: the least distance over blank regions jumps by 3, 5 or more when a tile
opens or closes the region the blank needs (how often: ``bench/bench_encodings.py``), and the largest consistent
table below a minimized table is exactly the blank-ignored one; so mod3 and parity refuse minimized tables.

Decoding kernels (``*_at``) take the payload's address (an int64, as the IDA* kernel keeps its tables) and
are ``forceinline`` (inlined by LLVM into the kernel that calls them); ``value_of`` / ``exact_of`` take the
arrays, for tests and Python callers.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np
from numba import njit, prange

from .._native.arrays import read_only
from .._native.intrinsics import (atomic_or_u64 as _atomic_or, load_u8, load_u64, popcount, select_bit,
                          trailing_zeros)
from .. import registry
from ..errors import PdbtoolError
from .ranking import TilePattern, cells_mask, rank_cells, unrank_cells

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
SPARSE_PREAMBLE = 4          # words: entries, directory offset, values offset, nonzero count
SPARSE_BLOCK_WORDS = 8       # one directory entry per 8 bitmap words (512 ranks)

_MOD3_DIGITS = np.array([[(b // 3 ** i) % 3 for i in range(5)] for b in range(256)], dtype=np.int64)
_MOD3_OF = np.array([v % 3 for v in range(256)], dtype=np.int64)
# _MOD3_STEP[parent residue, child residue]: the child's value minus the parent's (0 for a blank move)
_MOD3_STEP = np.array([[0, 1, -1], [-1, 0, 1], [1, -1, 0]], dtype=np.int64)
_MOD3_CHILD = np.array([_MOD3_STEP[pr, (b // 3 ** i) % 3] for b in range(256) for i in range(5) for pr in range(3)],
                       dtype=np.int64)


class EncodingError(PdbtoolError, ValueError):
    """An encoding that cannot be used for a table; the message is one line meant for the user."""


# --- decoding kernels (callable from other @njit kernels) ------------------------------------------------

@njit(cache=True, forceinline=True)
def byte_at(addr, rank):
    return load_u8(addr + rank)


@njit(cache=True, forceinline=True)
def nibble_excess_at(addr, index):
    """The ``index``-th nibble (low nibble first)."""
    return (load_u8(addr + (index >> 1)) >> ((index & 1) << 2)) & 15


@njit(cache=True, forceinline=True)
def nibble_at(addr, rank, manhattan):
    return manhattan + 2 * nibble_excess_at(addr, rank)


@njit(cache=True, forceinline=True)
def min_nibble_at(addr, rank, manhattan, shift):
    """Value of ``rank`` from a min-nibble payload of groups of ``1 << shift`` ranks."""
    return manhattan + 2 * nibble_excess_at(addr, rank >> shift)


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


@njit(cache=True, forceinline=True)
def mod3_residue_at(addr, rank):
    q = np.int64(numba.uint64(rank) // numba.uint64(5))    # unsigned: a multiply and a shift
    return _MOD3_DIGITS[load_u8(addr + q), rank - 5 * q]


@njit(cache=True, forceinline=True)
def mod3_child_at(addr, rank, parent):
    """CHILD-H: exact value of a child from the parent's exact value (they differ by at most one)."""
    q = np.int64(numba.uint64(rank) // numba.uint64(5))
    # one small-table load: the step for (stored byte, position in it, parent's residue)
    return parent + _MOD3_CHILD[(load_u8(addr + q) * 5 + rank - 5 * q) * 3 + _MOD3_OF[parent]]


@njit(cache=True, forceinline=True)
def parity_bit_at(addr, rank):
    return (load_u8(addr + (rank >> 3)) >> (rank & 7)) & 1


@njit(cache=True, forceinline=True)
def parity_child_at(addr, rank, manhattan, parent):
    """CHILD-H: exact value of a child (``manhattan`` its pattern's Manhattan distance) from its parent's.

    A blank move keeps the placement (same parity of h and m as the parent: value unchanged); a tile move
    changes the value by one, and bit 1 of ``parent + 1`` and ``parent - 1`` differ."""
    if ((manhattan ^ parent) & 1) == 0:
        return parent
    up = parent + 1
    if ((up >> 1) & 1) == parity_bit_at(addr, rank):
        return up
    return parent - 1


@njit(cache=True, forceinline=True)
def value_at(code, addr, rank, manhattan, parent, shift):
    """The value of ``rank`` in a payload of encoding ``code`` (one of the module's codes).

    ``manhattan`` is the Manhattan distance of the pattern's tiles in the placement (used by nibble,
    min-nibble, sparse and parity); ``parent`` the exact value of the parent node in the same table (mod3,
    parity: CHILD-H); ``shift`` = log2 of the min-nibble group."""
    if code == BYTE:
        return byte_at(addr, rank)
    if code == NIBBLE:
        return nibble_at(addr, rank, manhattan)
    if code == MOD3:
        return mod3_child_at(addr, rank, parent)
    if code == PARITY:
        return parity_child_at(addr, rank, manhattan, parent)
    if code == MIN_NIBBLE:
        return min_nibble_at(addr, rank, manhattan, shift)
    return sparse_at(addr, rank, manhattan)


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


@njit(cache=True)
def exact_at(code, addr, cells, n, k, nb, md_rows, goal_rank):
    """EXACT for mod3 (code MOD3) and parity (code PARITY): the value of the placement ``cells``.

    Walks to the goal placement through abstract neighbours (a pattern tile into an adjacent cell free of
    pattern tiles, whatever the blank region) whose value is one less, recognised by the residue (mod3) or
    by ``h mod 4 = 2 * bit + m mod 2`` (parity); returns -1 when no such neighbour exists (a damaged or
    inconsistent table)."""
    cells = cells.copy()
    occ = numba.uint64(0)
    m = 0
    for i in range(k):
        occ |= numba.uint64(1) << numba.uint64(cells[i])
        m += md_rows[i, cells[i]]
    r = rank_cells(cells, n)
    steps = 0
    while r != goal_rank:
        if code == MOD3:
            want = (mod3_residue_at(addr, r) + 2) % 3
        else:
            want = (2 * parity_bit_at(addr, r) + (m & 1) + 3) & 3
        moved = False
        for i in range(k):
            for mv in range(4):
                q = free_neighbour(nb, cells[i], mv, occ)
                if q >= 0:
                    r2 = rank_moved(cells, i, q, n)
                    m2 = m + md_rows[i, q] - md_rows[i, cells[i]]
                    if code == MOD3:
                        got = mod3_residue_at(addr, r2)
                    else:
                        got = (2 * parity_bit_at(addr, r2) + (m2 & 1)) & 3
                    if got == want:
                        occ ^= (numba.uint64(1) << numba.uint64(cells[i])) | (numba.uint64(1) << numba.uint64(q))
                        cells[i] = q
                        r = r2
                        m = m2
                        moved = True
                        break
            if moved:
                break
        if not moved or steps >= UNREACHABLE:
            return -1
        steps += 1
    return steps


# --- array wrappers (tests, Python callers) ---------------------------------------------------------------

@njit(cache=True)
def value_of(code, payload, rank, manhattan, parent, shift):
    return value_at(code, payload.ctypes.data, rank, manhattan, parent, shift)


@njit(cache=True)
def exact_of(code, payload, cells, n, k, nb, md_rows, goal_rank):
    return exact_at(code, payload.ctypes.data, cells, n, k, nb, md_rows, goal_rank)


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


# --- encoders: byte table -> payload (parallel over chunks of ranks) --------------------------------------

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


def encode_mod3(table, out):
    """Pack ``h mod 3`` five a byte; return the number of unreachable entries (which mod3 cannot hold)."""
    return _pack_digits(table, out, 5, 3, 0)


def encode_parity(table, out):
    """Pack bit 1 of h eight a byte; return the number of unreachable entries."""
    return _pack_digits(table, out, 8, 2, 1)


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


# --- whole-table decoders (statistics, tests) -----------------------------------------------------------

@njit(parallel=True, cache=True)
def decode_excess_table(code, payload, n, k, md_rows, shift, entries, out):
    """Values of every rank of a nibble / min-nibble / sparse payload."""
    addr = payload.ctypes.data
    nchunks = (entries + CHUNK - 1) // CHUNK
    for ch in prange(nchunks):
        r0, cnt, ms = _chunk(ch, entries, n, k, md_rows)
        for j in range(cnt):
            out[r0 + j] = value_at(code, addr, r0 + j, ms[j], 0, shift)


@njit(parallel=True, cache=True)
def decode_layer(code, payload, out, depth, n, k, nb, md_rows, block):
    """Decode the placements one beyond ``depth`` of a mod3/parity payload (CHILD-H from each decoded one).

    Every undecoded abstract neighbour of a placement at ``depth`` must be at ``depth + 1`` in a consistent
    table; its stored residue is checked against that.  Returns (decoded, mismatching residues)."""
    addr = payload.ctypes.data
    entries = out.shape[0]
    nblocks = (entries + block - 1) // block
    found = np.zeros(nblocks, dtype=np.int64)
    bad = np.zeros(nblocks, dtype=np.int64)
    words = out[: entries - entries % 8].view(np.uint64)
    ones = numba.uint64(0x0101010101010101)
    pattern = numba.uint64(depth) * ones
    for b in prange(nblocks):
        found[b], bad[b] = _decode_block(code, addr, out, words, depth, n, k, nb, md_rows, b * block,
                                         min(entries, (b + 1) * block), ones, pattern)
    return found.sum(), bad.sum()


@njit(cache=True, error_model="numpy")  # a prange body's error model (no division checks)
def _decode_block(code, addr, out, words, depth, n, k, nb, md_rows, r0, r1, ones, pattern):
    """:func:`decode_layer` over the ranks ``r0..r1-1``: (decoded, mismatching residues).  A function of
    its own, not the ``prange`` body, so that Numba's parallel passes see a one-line loop."""
    found = 0
    bad = 0
    cells = np.empty(k, dtype=np.int64)
    r = r0
    while r < r1:
        # skip eight entries at a time when none is at this depth (the has-zero-byte test)
        if r % 8 == 0 and r + 8 <= r1 and r + 8 <= words.shape[0] * 8:
            x = words[r >> 3] ^ pattern
            if ((x - ones) & ~x & numba.uint64(0x8080808080808080)) == 0:
                r += 8
                continue
        if out[r] != depth:
            r += 1
            continue
        occ = unrank_cells(r, n, k, cells)
        m = 0
        for i in range(k):
            m += md_rows[i, cells[i]]
        for i in range(k):
            c = cells[i]
            for mv in range(4):
                q = free_neighbour(nb, c, mv, occ)
                if q >= 0:
                    r2 = rank_moved(cells, i, q, n)
                    if out[r2] != UNREACHABLE:
                        continue
                    v = value_at(code, addr, r2, m + md_rows[i, q] - md_rows[i, c], depth, 0)
                    if v == depth + 1:
                        out[r2] = depth + 1      # benign race: every writer writes depth + 1
                        found += 1
                    else:
                        bad += 1
        r += 1
    return found, bad


@njit(parallel=True, cache=True)
def tile_move_deltas(table, n, k, nb, block):
    """Histogram of ``|h(child) - h(parent)|`` (0..7, 7 = 7 or more) over every abstract move of a byte table.

    A consistent table has every move at 1; unreachable entries are skipped."""
    entries = table.shape[0]
    nblocks = (entries + block - 1) // block
    hist = np.zeros((nblocks, 8), dtype=np.int64)
    for b in prange(nblocks):
        _move_deltas_block(table, n, k, nb, b * block, min(entries, (b + 1) * block), hist[b])
    out = np.zeros(8, dtype=np.int64)
    for b in range(nblocks):
        for j in range(8):
            out[j] += hist[b, j]
    return out


@njit(cache=True, error_model="numpy")  # a prange body's error model (no division checks)
def _move_deltas_block(table, n, k, nb, r0, r1, hist):
    """:func:`tile_move_deltas` over the ranks ``r0..r1-1``, counted into ``hist``.  A kernel of its own,
    not the ``prange`` body, so that Numba's parallel passes see a one-line loop."""
    cells = np.empty(k, dtype=np.int64)
    for r in range(r0, r1):
        h = np.int64(table[r])
        if h == UNREACHABLE:
            continue
        occ = unrank_cells(r, n, k, cells)
        for i in range(k):
            c = cells[i]
            for mv in range(4):
                q = free_neighbour(nb, c, mv, occ)
                if q >= 0:
                    h2 = np.int64(table[rank_moved(cells, i, q, n)])
                    if h2 != UNREACHABLE:
                        hist[min(7, abs(h2 - h))] += 1


# --- Python API ------------------------------------------------------------------------------------------

@dataclass
class Encoded:
    """A payload and what its conversion found (saturated entries, loss, timing)."""

    payload: np.ndarray
    params: dict[str, Any]
    info: dict[str, Any] = field(default_factory=dict)


def normalize_params(encoding: str, params: dict[str, Any] | None = None,
                     group: int | None = None) -> dict[str, Any]:
    """Check an encoding name and its parameters; return the parameters that name the table."""
    if encoding not in ENCODINGS:
        raise EncodingError(f"encoding {encoding!r}: choose one of {', '.join(ENCODINGS)}")
    params = dict(params or {})
    if group is not None:
        params["group"] = group
    if encoding != "min-nibble":
        if params:
            raise EncodingError(f"encoding {encoding} takes no parameters (--group is for min-nibble)")
        return {}
    if set(params) - {"group"}:
        raise EncodingError(f"min-nibble takes only a group size, not {', '.join(sorted(set(params) - {'group'}))}")
    c = params.get("group")
    if c is None:
        raise EncodingError("min-nibble needs a group size: --group C (a power of two, e.g. 2 or 4)")
    try:
        c = int(c)
    except (TypeError, ValueError):
        raise EncodingError(f"--group {c!r}: expected a power of two") from None
    if c < 1 or c & (c - 1) or c > MAX_GROUP:
        raise EncodingError(f"--group {c}: the group size must be a power of two from 1 to {MAX_GROUP}")
    return {"group": c}


def check_blank(encoding: str, blank: str) -> None:
    """Refuse mod3/parity for blank-minimized tables, whose values are not consistent (see the module doc),
    and any compact encoding of a zero-aware table (the zero-aware sums read bytes by region)."""
    if blank == "zero-aware" and encoding != "byte":
        raise EncodingError(f"zero-aware tables are byte tables only (the zero-aware sums do not read {encoding} "
                            f"tables by region): for a compact table, use --blank minimized")
    if encoding in NEEDS_CONSISTENT and blank != "ignored":
        raise EncodingError(
            f"{encoding} needs a table that changes by exactly one per tile move, and blank-{blank} tables "
            f"do not (a tile that opens or closes the blank's best region changes them by 3 or more): "
            f"build with --blank ignored, or use nibble, sparse or min-nibble")


def payload_bytes(encoding: str, entries: int, params: dict[str, Any] | None = None, nonzero: int = 0) -> int:
    """Size of a payload (for sparse, given its number of nonzero excesses)."""
    if encoding == "byte":
        return entries
    if encoding == "nibble":
        return (entries + 1) // 2
    if encoding == "mod3":
        return (entries + 4) // 5
    if encoding == "parity":
        return (entries + 7) // 8
    if encoding == "min-nibble":
        groups = -(-entries // int((params or {})["group"]))
        return (groups + 1) // 2
    nwords = (entries + 63) // 64
    ndir = (nwords + SPARSE_BLOCK_WORDS - 1) // SPARSE_BLOCK_WORDS + 1
    return 8 * (SPARSE_PREAMBLE + nwords + ndir + (nonzero + 15) // 16)


class _Threads:
    """Run Numba's parallel loops on ``threads`` threads, restoring the previous count afterwards."""

    def __init__(self, threads: int | None):
        self.threads = max(1, min(threads or os.cpu_count() or 1, numba.config.NUMBA_NUM_THREADS))

    def __enter__(self):
        self.previous = numba.get_num_threads()
        numba.set_num_threads(self.threads)

    def __exit__(self, *exc):
        numba.set_num_threads(self.previous)


def encode(values: np.ndarray, pattern: TilePattern, blank: str, encoding: str,
           params: dict[str, Any] | None = None, threads: int | None = None) -> Encoded:
    """Encode a byte table (``values[rank]``, 255 = unreachable) of ``pattern`` under ``blank``."""
    params = normalize_params(encoding, params)
    values = np.ascontiguousarray(values, dtype=np.uint8)
    entries = pattern.entries
    if values.shape != (entries,):
        raise EncodingError(f"the byte table holds {values.shape[0]} entries, the pattern has {entries}")
    check_blank(encoding, blank)
    n, k = pattern.n, pattern.k
    md = pattern.md_rows()
    info: dict[str, Any] = {}
    start = time.perf_counter()
    with _Threads(threads):
        if encoding == "byte":
            payload = values.copy()
        elif encoding == "nibble":
            payload = np.empty(payload_bytes(encoding, entries), dtype=np.uint8)
            sat, unr = encode_nibble(values, n, k, md, payload)
            info.update(saturated=int(sat), unreachable=int(unr))
        elif encoding == "min-nibble":
            c = params["group"]
            payload = np.empty(payload_bytes(encoding, entries, params), dtype=np.uint8)
            sat, loss = encode_min_nibble(values, n, k, md, c.bit_length() - 1, payload)
            reached = entries - int(np.count_nonzero(values == UNREACHABLE))
            info.update(saturated=int(sat), mean_loss=round(2 * int(loss) / max(1, reached), 6))
        elif encoding in ("mod3", "parity"):
            payload = np.empty(payload_bytes(encoding, entries), dtype=np.uint8)
            unr = (encode_mod3 if encoding == "mod3" else encode_parity)(values, payload)
            if unr:
                raise EncodingError(f"{encoding} cannot hold the {unr} unreachable entries of this table: "
                                    f"use byte, nibble or sparse")
        else:
            nwords = (entries + 63) // 64
            ndir = (nwords + SPARSE_BLOCK_WORDS - 1) // SPARSE_BLOCK_WORDS + 1
            # pass 1 needs the bitmap before the value count is known: size the words for the worst case
            # only as far as the bitmap and directory, then grow once the count is known
            head = np.zeros(SPARSE_PREAMBLE + nwords + ndir, dtype=np.uint64)
            counts = _sparse_bitmap(values, n, k, md, head)
            nonzero = int(counts.sum())
            words = np.zeros(payload_bytes(encoding, entries, nonzero=nonzero) // 8, dtype=np.uint64)
            words[: head.shape[0]] = head
            del head
            dir_off = SPARSE_PREAMBLE + nwords
            val_off = dir_off + ndir
            words[0], words[1], words[2], words[3] = entries, dir_off, val_off, nonzero
            chunk_start = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
            sat = _sparse_fill(values, n, k, md, words, chunk_start, nwords, dir_off, val_off)
            words[dir_off + ndir - 1] = nonzero
            payload = words.view(np.uint8)
            info.update(saturated=int(sat), nonzero=nonzero)
    info["encode_seconds"] = round(time.perf_counter() - start, 3)
    info["bits_per_entry"] = round(8 * payload.nbytes / entries, 4)
    return Encoded(payload, params, info)


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


def check_payload(payload: np.ndarray, entries: int, encoding: str, params: dict[str, Any] | None) -> None:
    """Refuse a payload whose size or internal structure does not fit the encoding and entries.

    For sparse, every offset a look-up follows is checked: the preamble (entries, directory and values
    offsets, nonzero count), the directory against the bitmap's popcounts and the count against
    ``nonzero``, so that no look-up can read outside the payload."""
    params = normalize_params(encoding, params)
    payload = np.asarray(payload).reshape(-1).view(np.uint8)
    nonzero = 0
    if encoding == "sparse":
        if payload.nbytes < 8 * SPARSE_PREAMBLE:
            raise EncodingError(f"sparse payload of {payload.nbytes} bytes is too short")
        pre = payload[: 8 * SPARSE_PREAMBLE].view(np.uint64)
        nwords = (entries + 63) // 64
        ndir = (nwords + SPARSE_BLOCK_WORDS - 1) // SPARSE_BLOCK_WORDS + 1
        if int(pre[0]) != entries or int(pre[1]) != SPARSE_PREAMBLE + nwords or \
                int(pre[2]) != SPARSE_PREAMBLE + nwords + ndir or int(pre[3]) > entries:
            raise EncodingError("sparse payload preamble does not match the table")
        nonzero = int(pre[3])
    want = payload_bytes(encoding, entries, params, nonzero)
    if payload.nbytes != want:
        raise EncodingError(f"{encoding} payload of {payload.nbytes} bytes, expected {want} for {entries} entries")
    if encoding == "sparse":
        code, count = _sparse_directory_errors(payload.view(np.uint64), entries, nwords,
                                               SPARSE_PREAMBLE + nwords, ndir)
        if code < 0:
            raise EncodingError("sparse bitmap has bits set past the last entry")
        if code > 0:
            raise EncodingError(f"sparse directory entry {code - 1} does not match the bitmap's popcount")
        if count != nonzero:
            raise EncodingError(f"sparse bitmap holds {count} nonzero entries, the preamble says {nonzero}")


def decode(payload: np.ndarray, pattern: TilePattern, encoding: str, params: dict[str, Any] | None = None,
           threads: int | None = None) -> np.ndarray:
    """The values of every rank as a uint8 array (saturated nibbles decode to m + 30)."""
    params = normalize_params(encoding, params)
    payload = np.ascontiguousarray(payload).reshape(-1).view(np.uint8)
    entries = pattern.entries
    check_payload(payload, entries, encoding, params)
    if encoding == "byte":
        return payload.copy()
    n, k = pattern.n, pattern.k
    md = pattern.md_rows()
    out = np.full(entries, UNREACHABLE, dtype=np.uint8)
    with _Threads(threads):
        if encoding in ("nibble", "min-nibble", "sparse"):
            shift = params.get("group", 1).bit_length() - 1
            decode_excess_table(CODES[encoding], payload, n, k, md, shift, entries, out)
            return out
        # mod3 / parity: layer by layer from the goal, CHILD-H from each decoded placement
        nb = pattern.board.neighbours()
        goal = pattern.goal_rank()
        residue = _MOD3_DIGITS[payload[goal // 5], goal % 5] if encoding == "mod3" else \
            (payload[goal >> 3] >> (goal & 7)) & 1
        if residue:
            raise EncodingError(f"{encoding} payload is inconsistent (the goal placement's residue is not that of 0)")
        out[goal] = 0
        block = 4096
        depth = 0
        while True:
            found, bad = decode_layer(CODES[encoding], read_only(payload), out, depth, n, k, nb, md, block)
            if bad:
                raise EncodingError(f"{encoding} payload is inconsistent ({bad} residues contradict their "
                                    f"neighbours at depth {depth + 1}): a damaged or misencoded table")
            if found == 0:
                break
            depth += 1
            if depth >= UNREACHABLE - 1:
                raise EncodingError(f"{encoding} payload decodes to values beyond 253")
        left = int(np.count_nonzero(out == UNREACHABLE))
        if left:   # mod3 and parity hold only tables in which every placement is reached
            raise EncodingError(f"{encoding} payload is inconsistent ({left} placements are never reached "
                                f"from the goal): a damaged or misencoded table")
    return out


def exact_value(payload: np.ndarray, pattern: TilePattern, encoding: str, cells) -> int:
    """EXACT for mod3/parity: the value of one placement from the payload alone."""
    if encoding not in NEEDS_CONSISTENT:
        raise EncodingError(f"EXACT is for mod3 and parity, not {encoding}")
    cells = np.asarray(cells, dtype=np.int64)
    return int(exact_of(CODES[encoding], np.ascontiguousarray(payload).view(np.uint8), cells, pattern.n,
                        pattern.k, pattern.board.neighbours(), pattern.md_rows(), pattern.goal_rank()))


__all__ = ["ENCODINGS", "CODES", "BYTE", "NIBBLE", "MOD3", "PARITY", "MIN_NIBBLE", "SPARSE", "EncodingError",
           "Encoded", "encode", "decode", "check_blank", "check_payload", "exact_value", "normalize_params",
           "payload_bytes", "value_at",
           "exact_at", "value_of", "exact_of", "load_u8", "load_u64", "sparse_rank1", "sparse_select1",
           "tile_move_deltas", "manhattan_run"]
