"""The one look-up the search calls, over every encoding (``value_at``, by the family's code), EXACT for
mod3 and parity (a descent to the goal), their array wrappers, and the whole-table passes built on them:
the decoders and the histogram of a byte table's steps between abstract neighbours."""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from ..ranking import rank_cells, unrank_cells
from .byte import byte_at
from .common import (BYTE, CHUNK, MIN_NIBBLE, MOD3, NIBBLE, PARITY, UNREACHABLE, _chunk, free_neighbour,
                     rank_moved)
from .min_nibble import min_nibble_at
from .mod3 import mod3_child_at, mod3_residue_at
from .nibble import nibble_at
from .parity import parity_bit_at, parity_child_at
from .sparse import sparse_at


@njit(cache=True, forceinline=True)
def value_at(code, addr, rank, manhattan, parent, shift):
    """The value of ``rank`` in a payload of encoding ``code`` (one of the codes in :mod:`.common`).

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
