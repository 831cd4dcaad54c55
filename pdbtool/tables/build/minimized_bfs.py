"""The blank-minimized BFS step: the state is (placement, blank region).  Blank moves through cells free of
pattern tiles cost 0, so all blank cells of one region are one state, whose two bits
(:mod:`.two_bit_states`) every cell of the region carries; a child is looked up by the cell its tile
left, and only a new child's region is flooded.

Children are marked "next" from 00 only, with an atomic OR on each 64-bit word that receives bits; once
every rank with frontier states in a word has been read, the scanning thread turns them to 11 with one
atomic XOR.  Threads updating states that share a word therefore never lose an update.  Each rank block
is scanned by one thread, which alone writes the byte-table entries of its ranks (the first depth at
which one of its regions is expanded: the least distance over blank cells).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from ..._native.intrinsics import (atomic_xor_u64, deposit_bits, extract_bits, popcount, prefetch,
                                   trailing_zeros)
from ..ranking import cells_mask
from ..zero_aware import map_and_order
from .moves import divide, flood, unrank_next, vertical_step_over
from .scheduling import BATCH, CHUNK_SHIFT, block_dispenser, block_scratch, next_active_block
from .two_bit_states import in_window, or_region_states, rank_free_equal, slots_equal, state_of, window_from

UNSEEN = 255


@njit(cache=True, inline="always")
def _minimized_children_into(region, r, occupied, free, cellw, width, nf, not_first_col, not_last_col, bits,
                             child_rank, child_state, child_cell, child_free, count):
    """Append every child of the blank-minimized states of placement ``r`` whose blank cells include
    ``region``, from ``count`` on, and prefetch its two bits; return the new count.

    A pattern tile slides from cell c into a cell q of ``region``; the child's blank is in c.  Per child:
    its rank (the parent's plus the step of ``moves_into``), its state index (rank * nf + the index of c
    among the child's free cells: c less the occupied cells below it, less one when q is below c), c,
    and the child's free cells.  One pass per direction, in which q - c is a constant.
    """
    one = numba.uint64(1)
    span = (one << numba.uint64(width - 1)) - one
    m = occupied & (region >> one) & not_last_col  # c -> c + 1
    while m:
        c = trailing_zeros(m)
        m &= m - one
        cbit = one << numba.uint64(c)
        child = r + cellw[c]
        state = child * nf + c - popcount(occupied & (cbit - one))
        child_rank[count] = child
        child_state[count] = state
        child_cell[count] = c
        child_free[count] = free ^ cbit ^ (cbit << one)
        prefetch(bits, state >> 5)
        count += 1
    m = occupied & (region << one) & not_first_col  # c -> c - 1
    while m:
        c = trailing_zeros(m)
        m &= m - one
        cbit = one << numba.uint64(c)
        child = r - cellw[c]
        state = child * nf + c - popcount(occupied & (cbit - one)) - 1
        child_rank[count] = child
        child_state[count] = state
        child_cell[count] = c
        child_free[count] = free ^ cbit ^ (cbit >> one)
        prefetch(bits, state >> 5)
        count += 1
    m = occupied & (region >> numba.uint64(width))  # c -> c + width
    while m:
        c = trailing_zeros(m)
        m &= m - one
        cbit = one << numba.uint64(c)
        child = r + vertical_step_over(cellw, occupied & (span << numba.uint64(c + 1)), width, cellw[c])
        state = child * nf + c - popcount(occupied & (cbit - one))
        child_rank[count] = child
        child_state[count] = state
        child_cell[count] = c
        child_free[count] = free ^ cbit ^ (cbit << numba.uint64(width))
        prefetch(bits, state >> 5)
        count += 1
    m = occupied & (region << numba.uint64(width))  # c -> c - width
    while m:
        c = trailing_zeros(m)
        m &= m - one
        cbit = one << numba.uint64(c)
        child = r - vertical_step_over(cellw, occupied & (span << numba.uint64(c - width + 1)), width, cellw[c])
        state = child * nf + c - popcount(occupied & (cbit - one)) - 1
        child_rank[count] = child
        child_state[count] = state
        child_cell[count] = c
        child_free[count] = free ^ cbit ^ (cbit >> numba.uint64(width))
        prefetch(bits, state >> 5)
        count += 1
    return count


@njit(cache=True, forceinline=True)
def _mark_minimized_children(bits, count, child_rank, child_state, child_cell, child_free, unseen, nf, nxt,
                             not_first_col, not_last_col, width, active_next):
    """Mark "next" every looked-up child still unseen and flag its chunk in ``active_next``; return
    (states it made new, their cells).

    The unseen children are listed first, without a branch per child (most are seen in the dense
    layers, and which is hard to predict); each is checked again before its flood, since two parents
    of one batch may share it."""
    kept = 0
    for j in range(count):
        unseen[kept] = j
        kept += numba.int64(state_of(bits, child_state[j]) == 0)
    new = 0
    new_cells = 0
    for i in range(kept):
        j = unseen[i]
        if state_of(bits, child_state[j]):
            continue
        free = child_free[j]
        region = flood(numba.uint64(1) << numba.uint64(child_cell[j]), free, not_first_col, not_last_col, width)
        # the region's lowest state decides which of several racing writers made the state new
        if or_region_states(bits, child_rank[j] * nf, nf, extract_bits(region, free), nxt) == 0:
            active_next[child_rank[j] >> CHUNK_SHIFT] = 1
            new += 1
            new_cells += popcount(region)
    return new, new_cells


@njit(cache=True, forceinline=True)
def _record_regions(za, za_base, za_region, binom, kfact, cells, k, n, free, union, depth, not_first_col,
                    not_last_col, width):
    """Write ``depth`` into the zero-aware entry of each region of the frontier cells ``union`` of the
    placement in ``cells``."""
    mr, order, _ = map_and_order(cells, k, binom)
    first = za_base[mr] + order
    while union:
        c = trailing_zeros(union)
        part = flood(numba.uint64(1) << numba.uint64(c), free, not_first_col, not_last_col, width)
        za[first + za_region[mr * n + c] * kfact] = depth
        union &= ~part


@njit(parallel=True, cache=True)
def minimized_top_down(bits, table, depth, n, k, block, not_first_col, not_last_col, width,
                       weights, inverses, active, active_next, workers, za, za_base, za_region, binom, kfact,
                       first_block, end_block):
    """Expand every (placement, blank region) state at ``depth``; return ``[cells expanded, discovered,
    cells discovered]``.

    The frontier ("current") states are found by scanning the two-bit words of the chunks of ``CHUNK``
    ranks flagged in ``active`` (the others hold none); a chunk that receives a new child is flagged in
    ``active_next`` (every writer writes 1: a benign race).  A rank's frontier cells are the union of its
    frontier regions, so the moves into them are the children of all of them (no flood); the children
    (``_minimized_children_into``) are prefetched and looked up a batch of about ``BATCH`` children
    later, so that the cache misses of many states overlap.  A new child is flooded and marked "next" in
    every cell of its region with an atomic OR; a word's frontier states turn to 11 with one atomic XOR
    when the scan moves past the word (every rank with states in it has then been read).  ``table`` receives, for each rank, the first depth at which one of
    its regions is expanded.  ``discovered`` counts each new state once (see ``or_region_states``).
    With a non-empty ``za`` (a zero-aware build, :mod:`pdbtool.tables.zero_aware`: ``za_base``,
    ``za_region``, ``binom`` and ``kfact`` its layout), every expanded region also gets its depth in ``za``
    (:func:`_record_regions`); the thread that owns a rank alone writes its regions' entries.
    The ``workers`` (one per thread) take the blocks of ``block`` ranks one at a time (``next_block``),
    those from ``first_block`` to ``end_block - 1``: a layer may be expanded a slice of blocks per call,
    with the same result, since children are marked from 00 only and a block's frontier states turn to 11
    within its own scan, so no block's frontier changes with the others'.
    """
    entries = table.shape[0]
    nf = n - k
    full = cells_mask(n)
    cur = numba.uint64(1 + (depth & 1))
    nxt = numba.uint64(2 - (depth & 1))
    inverse_nf = 1.0 / nf
    counts = np.zeros((max(0, end_block - first_block), 4), dtype=np.int64)
    dispenser = block_dispenser(first_block)
    for _ in prange(workers):
        size = BATCH + 4 * k
        cells, digits, prefix, child_rank, child_state, child_cell, cellw = block_scratch(n, k, size)
        child_free = np.empty(size, dtype=np.uint64)
        unseen = np.empty(size, dtype=np.int64)
        while True:
            b, r0, r1 = next_active_block(dispenser, end_block, block, entries, active)
            if b < 0:
                break
            run_start = -entries
            expanded_cells = 0
            new = 0
            new_cells = 0
            moves = 0
            pending = 0
            for chunk in range(r0 >> CHUNK_SHIFT, ((r1 - 1) >> CHUNK_SHIFT) + 1):
                if not active[chunk]:
                    continue
                s0 = max(r0, chunk << CHUNK_SHIFT) * nf
                s1 = min(r1, (chunk + 1) << CHUNK_SHIFT) * nf
                s = s0
                # the frontier states of a word turn to 11 together, once every rank with states in the
                # word has been read (when the scan moves past the word): one atomic XOR per word
                retire_word = -1
                retire = numba.uint64(0)
                while s < s1:
                    w = s >> 5
                    current = slots_equal(bits[w], cur)
                    if w != retire_word:
                        if retire:
                            atomic_xor_u64(bits, retire_word, retire)
                        # a rank of more than 32 states may hold whole words, which the scan jumps over
                        while 0 <= retire_word < w - 1:
                            retire_word += 1
                            retire = window_from(slots_equal(bits[retire_word], cur), retire_word, s0, s1) * (
                                numba.uint64(3) - cur)
                            if retire:
                                atomic_xor_u64(bits, retire_word, retire)
                        retire_word = w
                        retire = window_from(current, w, s0, s1) * (numba.uint64(3) - cur)
                    match = in_window(current, w, s, s1)
                    if match == 0:
                        s = (w + 1) * 32
                        continue
                    r = divide(w * 32 + (trailing_zeros(match) >> 1), nf, inverse_nf)
                    first = r * nf
                    frontier = rank_free_equal(bits, first, nf, cur)
                    occupied, run_start = unrank_next(r, run_start, n, k, inverses, weights, cells, digits, prefix,
                                                       cellw, full)
                    if table[r] == UNSEEN:
                        table[r] = depth
                    # every cell of a frontier region carries its state: the union of the frontier regions is
                    # the frontier cells, and the moves into it are the children of all of them
                    free = full & ~occupied
                    union = deposit_bits(frontier, free)
                    expanded_cells += popcount(union)
                    if za.shape[0]:
                        _record_regions(za, za_base, za_region, binom, kfact, cells, k, n, free, union, depth,
                                        not_first_col, not_last_col, width)
                    start = pending
                    pending = _minimized_children_into(union, r, occupied, free, cellw, width, nf, not_first_col,
                                                       not_last_col, bits, child_rank, child_state, child_cell,
                                                       child_free, pending)
                    moves += pending - start
                    if pending >= BATCH:
                        a, c2 = _mark_minimized_children(bits, pending, child_rank, child_state, child_cell,
                                                         child_free, unseen, nf, nxt, not_first_col, not_last_col,
                                                         width, active_next)
                        new += a
                        new_cells += c2
                        pending = 0
                    s = first + nf
                # the last rank read may end in a word the scan did not enter
                while retire_word < (s1 - 1) >> 5:
                    if retire:
                        atomic_xor_u64(bits, retire_word, retire)
                    retire_word += 1
                    retire = window_from(slots_equal(bits[retire_word], cur), retire_word, s0, s1) * (
                        numba.uint64(3) - cur)
                if retire:
                    atomic_xor_u64(bits, retire_word, retire)
            a, c2 = _mark_minimized_children(bits, pending, child_rank, child_state, child_cell, child_free,
                                             unseen, nf, nxt, not_first_col, not_last_col, width, active_next)
            counts[b - first_block, 0] = expanded_cells
            counts[b - first_block, 1] = new + a
            counts[b - first_block, 2] = new_cells + c2
            counts[b - first_block, 3] = moves
    return counts.sum(axis=0)
