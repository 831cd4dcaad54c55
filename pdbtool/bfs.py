"""The two table builders: layered backward breadth-first search from the goal placement.

* blank **ignored**: the state is the placement; a pattern tile moves into any adjacent cell free of
  pattern tiles at cost 1.  The byte table itself is the open list (255 = unseen); threads that reach the
  same child write the same value, so their race is benign.
* blank **minimized**: the state is (placement, blank region): blank moves through cells free of pattern
  tiles cost 0, so all blank cells of one region are one state, stored at the region's least cell.
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

from ._intrinsics import atomic_or_u64, atomic_xor_u64, popcount, select_bit, trailing_zeros
from .pattern import TilePattern, column_masks, flood_region, rank_cells, unrank_cells

UNSEEN = 255
BLANK_RULES = ("minimized", "ignored")

_LOW_BITS = np.uint64(0x5555555555555555)


@njit(cache=True, inline="always")
def _bytes_equal_mask(word, byte_value):
    """Nonzero iff some byte of ``word`` equals ``byte_value`` (the classic has-zero-byte test)."""
    x = word ^ (numba.uint64(byte_value) * numba.uint64(0x0101010101010101))
    return (x - numba.uint64(0x0101010101010101)) & ~x & numba.uint64(0x8080808080808080)


@njit(parallel=True, cache=True)
def ignored_layer(table, depth, n, k, nb, block):
    """Expand every placement at ``depth`` (blank ignored); return how many there were."""
    entries = table.shape[0]
    nblocks = (entries + block - 1) // block
    counts = np.zeros(nblocks, dtype=np.int64)
    words = table[: entries - entries % 8].view(np.uint64)
    for b in prange(nblocks):
        cells = np.empty(k, dtype=np.int64)
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
            occupied = unrank_cells(r, n, k, cells)
            for i in range(k):
                c = cells[i]
                for m in range(4):
                    q = nb[c, m]
                    if q < 0 or (occupied >> numba.uint64(q)) & numba.uint64(1):
                        continue
                    cells[i] = q
                    child = rank_cells(cells, n)
                    cells[i] = c
                    if table[child] == UNSEEN:
                        table[child] = depth + 1  # benign race: every writer writes depth + 1
            r += 1
        counts[b] = found
    return counts.sum()


@njit(parallel=True, cache=True)
def minimized_layer(bits, table, depth, n, k, nb, block, not_first_col, not_last_col, width):
    """Expand every (placement, blank region) state at ``depth`` (blank minimized); return the count.

    ``bits`` holds two bits per (rank, blank index); ``table`` receives, for each rank, the first depth at
    which any of its regions is expanded (the least over blank cells, since depths only grow).
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
        r0 = b * block
        r1 = min(entries, r0 + block)
        s0 = r0 * nf
        s1 = r1 * nf
        found = 0
        last_rank = -1
        occupied = numba.uint64(0)
        for w in range(s0 >> 5, ((s1 - 1) >> 5) + 1):
            y = bits[w] ^ cur_pattern
            match = ~(y | (y >> numba.uint64(1))) & _LOW_BITS
            if w == (s0 >> 5) and (s0 & 31):
                match &= ~numba.uint64(0) << numba.uint64(2 * (s0 & 31))
            if w == ((s1 - 1) >> 5) and (s1 & 31):
                match &= (numba.uint64(1) << numba.uint64(2 * (s1 & 31))) - numba.uint64(1)
            if match == 0:
                continue
            # after expansion these states become old (11): flip the bit that cur lacks
            to_old = (match << numba.uint64(1)) if cur == 1 else match
            while match:
                bit = trailing_zeros(match)
                match &= match - numba.uint64(1)
                s = w * 32 + (bit >> 1)
                r = s // nf
                idx = s - r * nf
                found += 1
                if r != last_rank:
                    occupied = unrank_cells(r, n, k, cells)
                    last_rank = r
                    if table[r] == UNSEEN:
                        table[r] = depth
                free = full & ~occupied
                blank = select_bit(idx, free)
                region = flood_region(blank, free, not_first_col, not_last_col, width)
                for i in range(k):
                    c = cells[i]
                    cbit = numba.uint64(1) << numba.uint64(c)
                    for m in range(4):
                        q = nb[c, m]
                        if q < 0:
                            continue
                        qbit = numba.uint64(1) << numba.uint64(q)
                        if not (region & qbit):
                            continue
                        # tile i slides from c into q; the blank is left in c
                        cells[i] = q
                        child = rank_cells(cells, n)
                        cells[i] = c
                        child_occupied = occupied ^ cbit ^ qbit
                        child_region = flood_region(cbit, full & ~child_occupied, not_first_col, not_last_col,
                                                    width)
                        least = trailing_zeros(child_region)
                        below = (numba.uint64(1) << numba.uint64(least)) - numba.uint64(1)
                        child_idx = least - popcount(child_occupied & below)
                        cs = child * nf + child_idx
                        cw = cs >> 5
                        shift = numba.uint64(2 * (cs & 31))
                        if (bits[cw] >> shift) & numba.uint64(3) == 0:
                            atomic_or_u64(bits, cw, nxt << shift)
            atomic_xor_u64(bits, w, to_old)
        counts[b] = found
    return counts.sum()


@njit(parallel=True, cache=True)
def excess_violations(table, n, k, md_rows, block):
    """Count reachable entries with h < Manhattan or (h - Manhattan) odd, and unreachable entries."""
    entries = table.shape[0]
    nblocks = (entries + block - 1) // block
    bad = np.zeros(nblocks, dtype=np.int64)
    unreached = np.zeros(nblocks, dtype=np.int64)
    for b in prange(nblocks):
        cells = np.empty(k, dtype=np.int64)
        for r in range(b * block, min(entries, (b + 1) * block)):
            h = table[r]
            if h == UNSEEN:
                unreached[b] += 1
                continue
            unrank_cells(r, n, k, cells)
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
    entries = pattern.entries
    block = _block_size(entries, threads)
    goal_rank = pattern.goal_rank()
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
                    count = int(ignored_layer(table, depth, n, k, nb, block))
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
                blank_cell = board.goal[0]
                region = pattern.blank_region(goal_cells, blank_cell)
                least = region[0]
                idx = least - bin(occupied & ((1 << least) - 1)).count("1")
                s = goal_rank * nfree + idx
                bits[s >> 5] |= np.uint64(1) << np.uint64(2 * (s & 31))   # depth 0 -> value 1
                depth = 0
                while True:
                    count = int(minimized_layer(bits, table, depth, n, k, nb, block, np.uint64(nf),
                                                np.uint64(nl), board.width))
                    if count == 0:
                        break
                    layers.append(count)
                    if progress:
                        progress(depth, count)
                    depth += 1
                    if depth >= UNSEEN - 1:
                        raise OverflowError("distances exceed 253: the table would not fit a byte")
                del bits
        bad, unreachable = excess_violations(table, n, k, pattern.md_rows(), block)
    finally:
        numba.set_num_threads(previous_threads)
    if bad:
        raise AssertionError(f"{bad} entries violate h >= Manhattan with an even excess: a builder bug")
    return BuildResult(table, layers, time.perf_counter() - start, int(unreachable))
