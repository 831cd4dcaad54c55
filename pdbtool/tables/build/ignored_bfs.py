"""The blank-ignored BFS step: the state is the placement, a pattern tile moves into any adjacent cell free
of pattern tiles at cost 1, and the byte table itself is the open list (255 = unseen); threads that reach
the same child write the same value, so their race is benign.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from ..._native.intrinsics import prefetch
from ..ranking import cells_mask
from .moves import moves_into, unrank_next
from .scheduling import BATCH, CHUNK_SHIFT, block_dispenser, block_scratch, next_active_block

UNSEEN = 255


@njit(cache=True, inline="always")
def _bytes_equal_mask(word, byte_value):
    """Nonzero iff some byte of ``word`` equals ``byte_value`` (the classic has-zero-byte test)."""
    x = word ^ (numba.uint64(byte_value) * numba.uint64(0x0101010101010101))
    return (x - numba.uint64(0x0101010101010101)) & ~x & numba.uint64(0x8080808080808080)


@njit(cache=True, inline="always")
def _ignored_step_arrays(table, n, first_block, end_block):
    """What the blank-ignored step starts from: the entries, the mask of the board's cells, a row of counts
    per block of the slice, and the table as 64-bit words (for skipping eight at a time)."""
    entries = table.shape[0]
    full = cells_mask(n)
    counts = np.zeros((max(0, end_block - first_block), 3), dtype=np.int64)
    words = table[: entries - entries % 8].view(np.uint64)
    return entries, full, counts, words


@njit(parallel=True, cache=True)
def ignored_top_down(table, depth, n, k, block, not_first_col, not_last_col, width, weights, inverses,
                     active, active_next, workers, first_block, end_block):
    """Expand every placement at ``depth`` (blank ignored); return ``[expanded, discovered, moves]``.

    Only the chunks of ``CHUNK`` ranks flagged in ``active`` hold placements at ``depth``, and only they
    are scanned; a chunk that receives a child is flagged in ``active_next`` (every writer writes 1: a
    benign race).  ``discovered`` may count a child twice when two threads reach it at once (both write
    depth + 1, a benign race); the driver takes each layer's size from ``expanded``.
    The ``workers`` (one per thread) take the blocks of ``block`` ranks one at a time (``next_block``),
    those from ``first_block`` to ``end_block - 1``: a layer may be expanded a slice of blocks per call,
    with the same result, since a block's placements at ``depth`` are not changed by the others' children.
    """
    entries, full, counts, words = _ignored_step_arrays(table, n, first_block, end_block)
    dispenser = block_dispenser(first_block)
    for _ in prange(workers):
        cells, digits, prefix, children, move_from, move_to, cellw = block_scratch(n, k, BATCH + 4 * k)
        while True:
            b, r0, r1 = next_active_block(dispenser, end_block, block, entries, active)
            if b < 0:
                break
            run_start = -entries
            found = 0
            new = 0
            moves = 0
            pending = 0
            for chunk in range(r0 >> CHUNK_SHIFT, ((r1 - 1) >> CHUNK_SHIFT) + 1):
                if not active[chunk]:
                    continue
                r = max(r0, chunk << CHUNK_SHIFT)
                r_end = min(r1, (chunk + 1) << CHUNK_SHIFT)
                while r < r_end:
                    # skip eight entries at a time when none of them is at this depth
                    if r % 8 == 0 and r + 8 <= r_end and r + 8 <= words.shape[0] * 8:
                        if _bytes_equal_mask(words[r // 8], depth) == 0:
                            r += 8
                            continue
                    if table[r] != depth:
                        r += 1
                        continue
                    found += 1
                    occupied, run_start = unrank_next(r, run_start, n, k, inverses, weights, cells, digits,
                                                       prefix, cellw, full)
                    # children are prefetched as they are made and looked up a batch later: the cache
                    # misses of many placements overlap
                    start = pending
                    pending = moves_into(full & ~occupied, r, occupied, cellw, width, not_first_col,
                                          not_last_col, children, move_from, move_to, pending)
                    moves += pending - start
                    for j in range(start, pending):
                        prefetch(table, children[j])
                    if pending >= BATCH:
                        new += _mark_ignored_children(table, children, pending, depth, active_next)
                        pending = 0
                    r += 1
            new += _mark_ignored_children(table, children, pending, depth, active_next)
            counts[b - first_block, 0] = found
            counts[b - first_block, 1] = new
            counts[b - first_block, 2] = moves
    return counts.sum(axis=0)


@njit(cache=True, inline="always")
def _mark_ignored_children(table, children, count, depth, active_next):
    new = 0
    for j in range(count):
        if table[children[j]] == UNSEEN:
            table[children[j]] = depth + 1  # benign race: every writer writes depth + 1
            active_next[children[j] >> CHUNK_SHIFT] = 1
            new += 1
    return new
