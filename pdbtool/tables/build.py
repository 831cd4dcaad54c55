"""The two table builders: layered backward breadth-first search from the goal placement.

* blank **ignored**: the state is the placement; a pattern tile moves into any adjacent cell free of
  pattern tiles at cost 1.  The byte table itself is the open list (255 = unseen); threads that reach the
  same child write the same value, so their race is benign.
* blank **minimized**: the state is (placement, blank region): blank moves through cells free of pattern
  tiles cost 0, so all blank cells of one region are one state, whose two bits every cell of the region
  carries (a child is then looked up by the cell its tile left; only a new child's region is flooded).
  Two bits per (rank, index of the blank among the n-k free cells), as in Korf's two-bit BFS: 00
  unseen, 11 old, and 01 / 10 for "current" and "next", whose roles swap at every layer, so no
  conversion pass between layers is needed.  Children are marked "next" from 00 only, with an atomic OR
  on the 64-bit word; once a word's frontier states are expanded, its owner turns them to 11 with an
  atomic XOR.  Threads updating states that share a word therefore never lose an update.  Each rank
  block is scanned by one thread, which alone writes the byte-table entries of its ranks (the first
  depth at which one of its regions is expanded: the least distance over blank cells).

Both builders run in parallel over blocks of ranks (``prange``, dynamically scheduled chunks).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

import numba
import numpy as np
from numba import njit, prange

from .._native.intrinsics import (atomic_or_u64, atomic_xor_u64, deposit_bits, extract_bits, popcount, prefetch,
                          select_bit, trailing_zeros)
from .ranking import (TilePattern, child_rank, column_masks, flood_region, radix_inverses, rank_weights,
                      unrank_digits)

UNSEEN = 255
BLANK_RULES = ("minimized", "ignored")

_LOW_BITS = np.uint64(0x5555555555555555)


@njit(cache=True, inline="always")
def _bytes_equal_mask(word, byte_value):
    """Nonzero iff some byte of ``word`` equals ``byte_value`` (the classic has-zero-byte test)."""
    x = word ^ (numba.uint64(byte_value) * numba.uint64(0x0101010101010101))
    return (x - numba.uint64(0x0101010101010101)) & ~x & numba.uint64(0x8080808080808080)


@njit(parallel=True, cache=True)
def ignored_layer(table, depth, n, k, nbmask, block, weights, inverses):
    """Expand every placement at ``depth`` (blank ignored); return how many there were."""
    entries = table.shape[0]
    nblocks = (entries + block - 1) // block
    counts = np.zeros(nblocks, dtype=np.int64)
    words = table[: entries - entries % 8].view(np.uint64)
    for b in prange(nblocks):
        cells = np.empty(k, dtype=np.int64)
        digits = np.empty(k, dtype=np.int64)
        prefix = np.empty(k, dtype=np.uint64)
        children = np.empty(4 * k, dtype=np.int64)
        r0 = b * block
        r1 = min(entries, r0 + block)
        found = 0
        r = r0
        while r < r1:
            # skip eight entries at a time when none of them is at this depth
            if r % 8 == 0 and r + 8 <= r1 and r + 8 <= words.shape[0] * 8:
                if _bytes_equal_mask(words[r // 8], depth) == 0:
                    r += 8
                    continue
            if table[r] != depth:
                r += 1
                continue
            found += 1
            occupied = unrank_digits(r, n, k, inverses, cells, digits, prefix)
            # children first, each prefetched, then the look-ups: their cache misses overlap
            nchildren = 0
            for i in range(k):
                c = cells[i]
                targets = nbmask[c] & ~occupied
                while targets:
                    q = trailing_zeros(targets)
                    targets &= targets - numba.uint64(1)
                    child = child_rank(r, i, c, q, cells, prefix, weights, k)
                    prefetch(table, child)
                    children[nchildren] = child
                    nchildren += 1
            for j in range(nchildren):
                if table[children[j]] == UNSEEN:
                    table[children[j]] = depth + 1  # benign race: every writer writes depth + 1
            r += 1
        counts[b] = found
    return counts.sum()


@njit(cache=True, inline="always")
def _rank_states(bits, first, nf):
    """The two-bit states of one rank (``nf`` of them from state index ``first``) as one word."""
    pos = first * 2
    w = pos >> 6
    sh = numba.uint64(pos & 63)
    x = bits[w] >> sh
    if sh and (pos & 63) + 2 * nf > 64:
        x |= bits[w + 1] << (numba.uint64(64) - sh)
    return x & ((numba.uint64(1) << numba.uint64(2 * nf)) - numba.uint64(1))


@njit(cache=True, inline="always")
def _or_rank_states(bits, first, nf, value):
    """Atomically OR a word of two-bit states into the ``nf`` states of one rank."""
    pos = first * 2
    w = pos >> 6
    sh = pos & 63
    atomic_or_u64(bits, w, value << numba.uint64(sh))
    if sh and sh + 2 * nf > 64:
        atomic_or_u64(bits, w + 1, value >> numba.uint64(64 - sh))


@njit(cache=True, inline="always")
def _xor_rank_states(bits, first, nf, value):
    pos = first * 2
    w = pos >> 6
    sh = pos & 63
    atomic_xor_u64(bits, w, value << numba.uint64(sh))
    if sh and sh + 2 * nf > 64:
        atomic_xor_u64(bits, w + 1, value >> numba.uint64(64 - sh))


@njit(parallel=True, cache=True)
def minimized_layer(bits, table, depth, n, k, nbmask, block, not_first_col, not_last_col, width, weights, inverses):
    """Expand every (placement, blank region) state at ``depth`` (blank minimized); return the count.

    ``bits`` holds two bits per (rank, blank index); every cell of a reached region carries the region's
    state, so a child is looked up by the cell its tile left, and only a new child needs its region
    flooded.  ``table`` receives, for each rank, the first depth at which one of its regions is expanded.
    """
    entries = table.shape[0]
    nf = n - k
    full = (numba.uint64(1) << numba.uint64(n)) - numba.uint64(1)
    cur = numba.uint64(1 + (depth & 1))
    nxt = numba.uint64(2 - (depth & 1))
    cur_pattern = cur * _LOW_BITS
    nblocks = (entries + block - 1) // block
    counts = np.zeros(nblocks, dtype=np.int64)
    for b in prange(nblocks):
        cells = np.empty(k, dtype=np.int64)
        digits = np.empty(k, dtype=np.int64)
        prefix = np.empty(k, dtype=np.uint64)
        child_state = np.empty(4 * k, dtype=np.int64)
        child_cell = np.empty(4 * k, dtype=np.int64)
        child_occ = np.empty(4 * k, dtype=np.uint64)
        r0 = b * block
        r1 = min(entries, r0 + block)
        s1 = r1 * nf
        s = r0 * nf
        found = 0
        while s < s1:
            w = s >> 5
            y = bits[w] ^ cur_pattern
            match = ~(y | (y >> numba.uint64(1))) & _LOW_BITS
            match &= ~numba.uint64(0) << numba.uint64(2 * (s & 31))
            if s1 < (w + 1) * 32:
                match &= (numba.uint64(1) << numba.uint64(2 * (s1 - w * 32))) - numba.uint64(1)
            if match == 0:
                s = (w + 1) * 32
                continue
            r = (w * 32 + (trailing_zeros(match) >> 1)) // nf
            first = r * nf
            y = _rank_states(bits, first, nf) ^ cur_pattern
            frontier = extract_bits(~(y | (y >> numba.uint64(1))), _LOW_BITS)
            frontier &= (numba.uint64(1) << numba.uint64(nf)) - numba.uint64(1)
            retire = deposit_bits(frontier, _LOW_BITS) * (numba.uint64(3) - cur)
            occupied = unrank_digits(r, n, k, inverses, cells, digits, prefix)
            if table[r] == UNSEEN:
                table[r] = depth
            free = full & ~occupied
            while frontier:
                found += 1
                blank = select_bit(trailing_zeros(frontier), free)
                region = flood_region(blank, free, not_first_col, not_last_col, width)
                frontier &= ~extract_bits(region, free)
                # first compute every child's state index and prefetch its word, then look them up:
                # the random accesses of one region's children overlap instead of queueing
                nchildren = 0
                for i in range(k):
                    c = cells[i]
                    cbit = numba.uint64(1) << numba.uint64(c)
                    targets = nbmask[c] & region
                    while targets:
                        q = trailing_zeros(targets)
                        qbit = targets & (~targets + numba.uint64(1))
                        targets ^= qbit
                        # tile i slides from c into q; the blank is left in c
                        child = child_rank(r, i, c, q, cells, prefix, weights, k)
                        child_occupied = occupied ^ cbit ^ qbit
                        cs = child * nf + c - popcount(child_occupied & (cbit - numba.uint64(1)))
                        prefetch(bits, cs >> 5)
                        child_state[nchildren] = cs
                        child_cell[nchildren] = c
                        child_occ[nchildren] = child_occupied
                        nchildren += 1
                for j in range(nchildren):
                    cs = child_state[j]
                    if (bits[cs >> 5] >> numba.uint64(2 * (cs & 31))) & numba.uint64(3):
                        continue
                    child_occupied = child_occ[j]
                    child_free = full & ~child_occupied
                    cbit = numba.uint64(1) << numba.uint64(child_cell[j])
                    child_region = flood_region(cbit, child_free, not_first_col, not_last_col, width)
                    marks = deposit_bits(extract_bits(child_region, child_free), _LOW_BITS) * nxt
                    child = cs // nf
                    _or_rank_states(bits, child * nf, nf, marks)
            _xor_rank_states(bits, first, nf, retire)
            s = first + nf
        counts[b] = found
    return counts.sum()


@njit(parallel=True, cache=True)
def excess_violations(table, n, k, md_rows, block, inverses):
    """Count reachable entries with h < Manhattan or (h - Manhattan) odd, and unreachable entries."""
    entries = table.shape[0]
    nblocks = (entries + block - 1) // block
    bad = np.zeros(nblocks, dtype=np.int64)
    unreached = np.zeros(nblocks, dtype=np.int64)
    for b in prange(nblocks):
        cells = np.empty(k, dtype=np.int64)
        digits = np.empty(k, dtype=np.int64)
        prefix = np.empty(k, dtype=np.uint64)
        for r in range(b * block, min(entries, (b + 1) * block)):
            h = table[r]
            if h == UNSEEN:
                unreached[b] += 1
                continue
            unrank_digits(r, n, k, inverses, cells, digits, prefix)
            m = 0
            for i in range(k):
                m += md_rows[i, cells[i]]
            if h < m or (h - m) & 1:
                bad[b] += 1
    return bad.sum(), unreached.sum()


# --- driver ---------------------------------------------------------------------------------------------

@dataclass
class BuildResult:
    table: np.ndarray           # uint8 distance per rank (255: unreachable)
    layers: list[int]           # states (placements or placement/region pairs) per depth
    seconds: float
    unreachable: int


def _block_size(entries: int, threads: int) -> int:
    # many more blocks than threads: neighbouring rank blocks have very different work, and the
    # chunks are handed out dynamically; a multiple of 32 keeps blocks on whole two-bit words often
    return max(256, min(1 << 16, (entries // (threads * 256)) // 32 * 32 or 256))


def bits_bytes(pattern: TilePattern) -> int:
    """Bytes of the two-bit state array of a blank-minimized build."""
    states = pattern.entries * pattern.free_cells
    return ((states + 31) // 32) * 8


def estimate_peak_bytes(pattern: TilePattern, blank: str) -> int:
    """Peak memory of a build: the byte table, the two-bit states (minimized) and a small margin."""
    peak = pattern.entries
    if blank == "minimized":
        peak += bits_bytes(pattern)
    return peak + (64 << 20)


def build_table(pattern: TilePattern, blank: str = "minimized", threads: int | None = None,
                progress: Callable[[int, int], None] | None = None) -> BuildResult:
    """Build the distance table of ``pattern`` under a blank rule; ``progress(depth, states)`` per layer."""
    import time

    if blank not in BLANK_RULES:
        raise ValueError(f"blank rule {blank!r}: choose one of {', '.join(BLANK_RULES)}")
    threads = threads or os.cpu_count() or 1
    threads = max(1, min(threads, numba.config.NUMBA_NUM_THREADS))
    board = pattern.board
    n, k = pattern.n, pattern.k
    nb = board.neighbours()
    nbmask = np.array([sum(1 << int(q) for q in row if q >= 0) for row in nb], dtype=np.uint64)
    entries = pattern.entries
    block = _block_size(entries, threads)
    goal_rank = pattern.goal_rank()
    weights, inverses = rank_weights(n, k), radix_inverses(n, k)
    start = time.perf_counter()
    previous_threads = numba.get_num_threads()
    numba.set_num_threads(threads)
    layers: list[int] = []
    try:
        table = np.full(entries, UNSEEN, dtype=np.uint8)
        with numba.parallel_chunksize(1):
            if blank == "ignored":
                table[goal_rank] = 0
                depth = 0
                while True:
                    count = int(ignored_layer(table, depth, n, k, nbmask, block, weights, inverses))
                    if count == 0:
                        break
                    layers.append(count)
                    if progress:
                        progress(depth, count)
                    depth += 1
                    if depth >= UNSEEN - 1:
                        raise OverflowError("distances exceed 253: the table would not fit a byte")
            else:
                nf, nl = column_masks(board)
                nfree = pattern.free_cells
                bits = np.zeros(bits_bytes(pattern) // 8, dtype=np.uint64)
                goal_cells = pattern.goal_cells()
                occupied = 0
                for c in goal_cells:
                    occupied |= 1 << int(c)
                # depth 0 (value 01) in every cell of the goal's blank region
                for cell in pattern.blank_region(goal_cells, board.goal[0]):
                    s = goal_rank * nfree + cell - bin(occupied & ((1 << cell) - 1)).count("1")
                    bits[s >> 5] |= np.uint64(1) << np.uint64(2 * (s & 31))
                depth = 0
                while True:
                    count = int(minimized_layer(bits, table, depth, n, k, nbmask, block, np.uint64(nf),
                                                np.uint64(nl), board.width, weights, inverses))
                    if count == 0:
                        break
                    layers.append(count)
                    if progress:
                        progress(depth, count)
                    depth += 1
                    if depth >= UNSEEN - 1:
                        raise OverflowError("distances exceed 253: the table would not fit a byte")
                del bits
        bad, unreachable = excess_violations(table, n, k, pattern.md_rows(), block, inverses)
    finally:
        numba.set_num_threads(previous_threads)
    if bad:
        raise AssertionError(f"{bad} entries violate h >= Manhattan with an even excess: a builder bug")
    return BuildResult(table, layers, time.perf_counter() - start, int(unreachable))
