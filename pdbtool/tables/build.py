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
  on each 64-bit word that receives bits; once every rank with frontier states in a word has been read,
  the scanning thread turns them to 11 with one atomic XOR.  Threads updating states that share a word
  therefore never lose an update.  Each rank
  block is scanned by one thread, which alone writes the byte-table entries of its ranks (the first
  depth at which one of its regions is expanded: the least distance over blank cells).

The byte table is filled with 255 by all threads before the search (``fill_parallel``): the page faults
of a large fresh array are otherwise a serial phase.  Both builders run in parallel over blocks of
ranks, one layer a step: a ``prange`` over one worker per thread, each taking the next block from a
shared counter (an atomic fetch-and-add, ``_next_block``) until none is left, so that a thread never
waits while blocks remain (neighbouring blocks have very different amounts of work, and Numba's own
``prange`` schedule is static under its omp and workqueue threading layers).  A step goes in one of two
directions (Beamer, Asanović & Patterson's direction-optimizing BFS):

* **top-down** (the default): each frontier rank is unranked incrementally from the last one scanned
  (``_unrank_next``), its moves are generated (a move's child rank is the parent's plus a step computed
  from the cells it crosses, see ``_moves_into``; blank minimized: each child's state index, blank cell
  and free cells in the same pass, ``_minimized_children_into``), prefetched, and looked up a batch
  later so that their cache misses overlap (blank minimized: the unseen children of a batch are listed
  without a branch per child, then flooded and marked).  A flag per chunk of ``CHUNK`` ranks says whether
  the chunk holds states of the layer to expand; a step scans only the flagged chunks, so that the many
  small first and last layers cost about their states, not a pass over the whole table;
* **bottom-up** (``direction="bottom-up"``): each unseen state looks for a neighbour in the frontier,
  the near ones first, and stops at the first; each thread writes only its own blocks, without atomics.
  It scans the whole table every step.  The sliding-tile searches are deep (30 and more layers, none
  above about an eighth of the states); measured layer by layer on one thread (4x4 with 7 tiles under
  both blank rules, 5x5 with 6 tiles blank minimized), a bottom-up step cost about as much as a
  top-down one (within 5 %) or more at every layer of the tail, and 10 to over 100 times as much in the
  last few, so the builders go top-down unless told.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

import numba
import numpy as np
from numba import njit, prange

from .._native.intrinsics import (atomic_add_u64, atomic_or_u64, atomic_xor_u64, deposit_bits, extract_bits,
                                  popcount, prefetch, select_bit, trailing_zeros)
from .ranking import (TilePattern, column_masks, radix_inverses, rank_weights,
                      unrank_digits)

UNSEEN = 255
BLANK_RULES = ("minimized", "ignored")
DIRECTIONS = ("top-down", "bottom-up")

_LOW_BITS = np.uint64(0x5555555555555555)
_BATCH = 256  # children computed and prefetched before they are looked up
_NEAR = 4096  # ranks: a neighbour this close is looked up first by a bottom-up step
# ranks per chunk of the "holds the layer to expand" flags: a top-down step scans only flagged chunks
_CHUNK_SHIFT = 8
CHUNK = 1 << _CHUNK_SHIFT


@njit(cache=True, inline="always")
def _block_dispenser():
    """The counter from which the workers of a parallel step (a ``prange`` over one per thread, their
    number passed in: ``numba.get_num_threads()`` in a kernel stops Numba from caching it) take the
    indices of the blocks of ranks to scan (``_next_block``)."""
    return np.zeros(1, dtype=np.uint64)


@njit(cache=True, inline="always")
def _next_block(dispenser):
    """The next block to scan, by an atomic fetch-and-add on the dispenser's counter: a worker done with
    its block takes the next one, so the schedule is dynamic under every threading layer (Numba's
    ``prange`` splits its iterations statically under the omp and workqueue layers)."""
    return np.int64(atomic_add_u64(dispenser, 0, numba.uint64(1)))


@njit(cache=True, inline="always")
def _bytes_equal_mask(word, byte_value):
    """Nonzero iff some byte of ``word`` equals ``byte_value`` (the classic has-zero-byte test)."""
    x = word ^ (numba.uint64(byte_value) * numba.uint64(0x0101010101010101))
    return (x - numba.uint64(0x0101010101010101)) & ~x & numba.uint64(0x8080808080808080)


# --- blank ignored: the byte table is the open list ------------------------------------------------------

@njit(cache=True, inline="always")
def _vertical_step(cellw, lo, hi, wi):
    """Rank change of a vertical move, as ``(width - earlier) * wi + later``: ``earlier`` counts the tiles
    ranked before the mover (weight above ``wi``) in the cells strictly between ``lo`` and ``hi``, whose
    digit the mover's digit skips, and ``later`` sums the weights of the tiles ranked after it there,
    whose digits change by one."""
    earlier = 0
    later = 0
    for x in range(lo + 1, hi):
        v = cellw[x]
        earlier += v > wi
        later += v if v < wi else 0
    return (hi - lo - earlier) * wi + later


@njit(cache=True, inline="always")
def _moves_into(region, r, occupied, cellw, width, not_first_col, not_last_col, out_child, out_from, out_to,
                count):
    """Append every move of a pattern tile into a cell of ``region`` (the child's rank, the cell the tile
    leaves, the cell it enters) from ``count`` on; return the new count.

    ``cellw[c]`` is the rank weight of the tile in cell c (0 if free).  The movers of each direction are
    one mask, and a child's rank is the parent's plus a step computed from the cells between: no
    unrank, no branch per tile.
    """
    one = numba.uint64(1)
    m = occupied & (region >> one) & not_last_col
    while m:
        c = trailing_zeros(m)
        m &= m - one
        out_child[count] = r + cellw[c]
        out_from[count] = c
        out_to[count] = c + 1
        count += 1
    m = occupied & (region << one) & not_first_col
    while m:
        c = trailing_zeros(m)
        m &= m - one
        out_child[count] = r - cellw[c]
        out_from[count] = c
        out_to[count] = c - 1
        count += 1
    m = occupied & (region >> numba.uint64(width))
    while m:
        c = trailing_zeros(m)
        m &= m - one
        out_child[count] = r + _vertical_step(cellw, c, c + width, cellw[c])
        out_from[count] = c
        out_to[count] = c + width
        count += 1
    m = occupied & (region << numba.uint64(width))
    while m:
        c = trailing_zeros(m)
        m &= m - one
        out_child[count] = r - _vertical_step(cellw, c - width, c, cellw[c])
        out_from[count] = c
        out_to[count] = c - width
        count += 1
    return count


@njit(cache=True, inline="always")
def _vertical_step_over(cellw, between, width, wi):
    """``_vertical_step`` from the mask of the occupied cells between (most vertical moves cross none or one)."""
    earlier = 0
    later = 0
    while between:
        x = trailing_zeros(between)
        between &= between - numba.uint64(1)
        v = cellw[x]
        earlier += v > wi
        later += v if v < wi else 0
    return (width - earlier) * wi + later


@njit(cache=True, inline="always")
def _minimized_children_into(region, r, occupied, free, cellw, width, nf, not_first_col, not_last_col, bits,
                             child_rank, child_state, child_cell, child_free, count):
    """Append every child of the blank-minimized states of placement ``r`` whose blank cells include
    ``region``, from ``count`` on, and prefetch its two bits; return the new count.

    A pattern tile slides from cell c into a cell q of ``region``; the child's blank is in c.  Per child:
    its rank (the parent's plus the step of ``_moves_into``), its state index (rank * nf + the index of c
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
        child = r + _vertical_step_over(cellw, occupied & (span << numba.uint64(c + 1)), width, cellw[c])
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
        child = r - _vertical_step_over(cellw, occupied & (span << numba.uint64(c - width + 1)), width, cellw[c])
        state = child * nf + c - popcount(occupied & (cbit - one)) - 1
        child_rank[count] = child
        child_state[count] = state
        child_cell[count] = c
        child_free[count] = free ^ cbit ^ (cbit >> numba.uint64(width))
        prefetch(bits, state >> 5)
        count += 1
    return count


@njit(cache=True, inline="always")
def _unrank_with_weights(r, n, k, inverses, weights, cells, digits, prefix, cellw):
    """``unrank_digits`` that also moves the tiles' weights in ``cellw`` from the last placement to this one."""
    for i in range(k):
        cellw[cells[i]] = 0
    occupied = unrank_digits(r, n, k, inverses, cells, digits, prefix)
    for i in range(k):
        cellw[cells[i]] = weights[i]
    return occupied


@njit(cache=True, inline="always")
def _grow(region, free, not_first_col, not_last_col, width):
    return (region | ((region << numba.uint64(1)) & not_first_col) | ((region >> numba.uint64(1)) & not_last_col)
            | (region << numba.uint64(width)) | (region >> numba.uint64(width))) & free


@njit(cache=True, inline="always")
def _flood(seed, free, not_first_col, not_last_col, width):
    """:func:`~.ranking.flood_region` two steps a round: half the rounds, half the hard-to-predict loop exits."""
    region = seed & free
    while True:
        grown = _grow(_grow(region, free, not_first_col, not_last_col, width), free, not_first_col,
                      not_last_col, width)
        if grown == region:
            return region
        region = grown


@njit(cache=True, inline="always")
def _divide(x, d, inverse):
    """``x // d`` for 0 <= x < 2**52 through a multiplication by ``inverse`` = 1 / d, corrected once."""
    q = np.int64(x * inverse)
    rest = x - q * d
    if rest < 0:
        q -= 1
    elif rest >= d:
        q += 1
    return q


@njit(cache=True, inline="always")
def _unrank_next(r, run_start, n, k, inverses, weights, cells, digits, prefix, cellw, full):
    """Unrank ``r`` after ``run_start``'s run: ranks come in runs of n - k + 1 that differ only in the
    last tile's cell, and runs in groups of n - k + 2 that differ only in the last two tiles' cells.  Inside
    the run of the last call only the last tile moves; inside its group, only the last two (scanned
    frontiers are dense enough that most ranks fall there).  Returns the occupied mask and the start of
    ``r``'s run."""
    run = n - k + 1
    d = r - run_start
    if 0 <= d < run:
        cellw[cells[k - 1]] = 0
        bit = select_bit(d, full & ~prefix[k - 1])
        cells[k - 1] = trailing_zeros(bit)
        digits[k - 1] = d
        cellw[cells[k - 1]] = weights[k - 1]
        return prefix[k - 1] | bit, run_start
    if k >= 2:
        e = d + digits[k - 2] * run  # r less the start of the last call's group
        if 0 <= e < run * (run + 1):
            high = e // run
            low = e - high * run
            cellw[cells[k - 2]] = 0
            cellw[cells[k - 1]] = 0
            bit = select_bit(high, full & ~prefix[k - 2])
            cells[k - 2] = trailing_zeros(bit)
            digits[k - 2] = high
            prefix[k - 1] = prefix[k - 2] | bit
            bit = select_bit(low, full & ~prefix[k - 1])
            cells[k - 1] = trailing_zeros(bit)
            digits[k - 1] = low
            cellw[cells[k - 2]] = weights[k - 2]
            cellw[cells[k - 1]] = weights[k - 1]
            return prefix[k - 1] | bit, r - low
    occupied = _unrank_with_weights(r, n, k, inverses, weights, cells, digits, prefix, cellw)
    return occupied, r - digits[k - 1]


@njit(cache=True, inline="always")
def _block_scratch(n, k, size):
    """A worker's arrays, kept from block to block: the cells, digits and prefix masks of the placement in
    hand (cells and digits start valid for ``_unrank_next``), three move buffers of ``size`` entries, and
    the cell weights."""
    return (np.zeros(k, dtype=np.int64), np.zeros(k, dtype=np.int64), np.empty(k, dtype=np.uint64),
            np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64),
            np.zeros(n, dtype=np.int64))


@njit(cache=True, inline="always")
def _any_active(active, r0, r1):
    """Whether a chunk of ranks ``r0..r1-1`` is flagged in ``active``."""
    for chunk in range(r0 >> _CHUNK_SHIFT, ((r1 - 1) >> _CHUNK_SHIFT) + 1):
        if active[chunk]:
            return True
    return False


@njit(cache=True, inline="always")
def _next_active_block(dispenser, nblocks, block, entries, active):
    """The next block (``_next_block``) with a chunk flagged in ``active``, as (block, first rank, end
    rank), or block -1 when none is left."""
    while True:
        b = _next_block(dispenser)
        if b >= nblocks:
            return -1, 0, 0
        r0 = b * block
        r1 = min(entries, r0 + block)
        if _any_active(active, r0, r1):
            return b, r0, r1


@njit(cache=True, inline="always")
def _ignored_step_arrays(table, n, block):
    """What both blank-ignored steps start from: the entries, the mask of the board's cells, the number of
    rank blocks, a row of counts per block, and the table as 64-bit words (for skipping eight at a time)."""
    entries = table.shape[0]
    full = (numba.uint64(1) << numba.uint64(n)) - numba.uint64(1)
    nblocks = (entries + block - 1) // block
    counts = np.zeros((nblocks, 3), dtype=np.int64)
    words = table[: entries - entries % 8].view(np.uint64)
    return entries, full, nblocks, counts, words


@njit(parallel=True, cache=True)
def ignored_top_down(table, depth, n, k, block, not_first_col, not_last_col, width, weights, inverses,
                     active, active_next, workers):
    """Expand every placement at ``depth`` (blank ignored); return ``[expanded, discovered, moves]``.

    Only the chunks of ``CHUNK`` ranks flagged in ``active`` hold placements at ``depth``, and only they
    are scanned; a chunk that receives a child is flagged in ``active_next`` (every writer writes 1: a
    benign race).  ``discovered`` may count a child twice when two threads reach it at once (both write
    depth + 1, a benign race); the driver takes each layer's size from ``expanded``.
    The ``workers`` (one per thread) take the blocks of ``block`` ranks one at a time (``_next_block``).
    """
    entries, full, nblocks, counts, words = _ignored_step_arrays(table, n, block)
    dispenser = _block_dispenser()
    for _ in prange(workers):
        cells, digits, prefix, children, move_from, move_to, cellw = _block_scratch(n, k, _BATCH + 4 * k)
        while True:
            b, r0, r1 = _next_active_block(dispenser, nblocks, block, entries, active)
            if b < 0:
                break
            run_start = -entries
            found = 0
            new = 0
            moves = 0
            pending = 0
            for chunk in range(r0 >> _CHUNK_SHIFT, ((r1 - 1) >> _CHUNK_SHIFT) + 1):
                if not active[chunk]:
                    continue
                r = max(r0, chunk << _CHUNK_SHIFT)
                r_end = min(r1, (chunk + 1) << _CHUNK_SHIFT)
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
                    occupied, run_start = _unrank_next(r, run_start, n, k, inverses, weights, cells, digits,
                                                       prefix, cellw, full)
                    # children are prefetched as they are made and looked up a batch later: the cache
                    # misses of many placements overlap
                    start = pending
                    pending = _moves_into(full & ~occupied, r, occupied, cellw, width, not_first_col,
                                          not_last_col, children, move_from, move_to, pending)
                    moves += pending - start
                    for j in range(start, pending):
                        prefetch(table, children[j])
                    if pending >= _BATCH:
                        new += _mark_ignored_children(table, children, pending, depth, active_next)
                        pending = 0
                    r += 1
            new += _mark_ignored_children(table, children, pending, depth, active_next)
            counts[b, 0] = found
            counts[b, 1] = new
            counts[b, 2] = moves
    return counts.sum(axis=0)


@njit(cache=True, inline="always")
def _mark_ignored_children(table, children, count, depth, active_next):
    new = 0
    for j in range(count):
        if table[children[j]] == UNSEEN:
            table[children[j]] = depth + 1  # benign race: every writer writes depth + 1
            active_next[children[j] >> _CHUNK_SHIFT] = 1
            new += 1
    return new


@njit(cache=True, inline="always")
def _first_at(table, neighbours, count, r, depth):
    """Whether a neighbour is at ``depth``: the near ones (often in cache) first; the first hit ends it."""
    for j in range(count):
        if abs(neighbours[j] - r) < _NEAR and table[neighbours[j]] == depth:
            return True
    for j in range(count):
        if abs(neighbours[j] - r) >= _NEAR and table[neighbours[j]] == depth:
            return True
    return False


@njit(parallel=True, cache=True)
def ignored_bottom_up(table, depth, n, k, block, not_first_col, not_last_col, width, weights, inverses,
                      active, active_next, workers):
    """Give depth + 1 to every unseen placement with a neighbour at ``depth``; return ``[at depth, discovered,
    moves]``.

    Every block is scanned (``active`` is not read); a chunk that gains a placement is flagged in
    ``active_next`` (a chunk may straddle two blocks: both writers write 1, a benign race).  Each thread
    writes only the entries of its own blocks, and reads look for ``depth`` only, which no write of this
    step produces: no race.
    The ``workers`` (one per thread) take the blocks of ``block`` ranks one at a time (``_next_block``).
    """
    entries, full, nblocks, counts, words = _ignored_step_arrays(table, n, block)
    dispenser = _block_dispenser()
    for _ in prange(workers):
        cells, digits, prefix, neighbours, move_from, move_to, cellw = _block_scratch(n, k, 4 * k)
        while True:
            b = _next_block(dispenser)
            if b >= nblocks:
                break
            run_start = -entries
            r0 = b * block
            r1 = min(entries, r0 + block)
            found = 0
            new = 0
            moves = 0
            r = r0
            while r < r1:
                if r % 8 == 0 and r + 8 <= r1 and r + 8 <= words.shape[0] * 8:
                    word = words[r // 8]
                    if _bytes_equal_mask(word, UNSEEN) == 0 and _bytes_equal_mask(word, depth) == 0:
                        r += 8
                        continue
                if table[r] != UNSEEN:
                    if table[r] == depth:
                        found += 1
                    r += 1
                    continue
                occupied, run_start = _unrank_next(r, run_start, n, k, inverses, weights, cells, digits, prefix,
                                                   cellw, full)
                count = _moves_into(full & ~occupied, r, occupied, cellw, width, not_first_col, not_last_col,
                                    neighbours, move_from, move_to, 0)
                moves += count
                for j in range(count):
                    prefetch(table, neighbours[j])
                if _first_at(table, neighbours, count, r, depth):
                    table[r] = depth + 1
                    active_next[r >> _CHUNK_SHIFT] = 1
                    new += 1
                r += 1
            counts[b, 0] = found
            counts[b, 1] = new
            counts[b, 2] = moves
    return counts.sum(axis=0)


# --- blank minimized: two bits per (placement, blank cell) ----------------------------------------------

@njit(cache=True, inline="always")
def _slots_equal(word, value):
    """The low bit of every two-bit slot of ``word`` that holds ``value`` (0..3)."""
    y = word ^ (numba.uint64(value) * _LOW_BITS)
    return ~(y | (y >> numba.uint64(1))) & _LOW_BITS


@njit(cache=True, inline="always")
def _in_window(match, w, s, s1):
    """``match`` (the low bits of some two-bit slots of word ``w``) less the slots of states before ``s``
    or from ``s1`` on."""
    match &= ~numba.uint64(0) << numba.uint64(2 * (s & 31))
    if s1 < (w + 1) * 32:
        match &= (numba.uint64(1) << numba.uint64(2 * (s1 - w * 32))) - numba.uint64(1)
    return match


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
def _or_rank_states(bits, first, nf, value, probe):
    """Atomically OR a word of two-bit states into the ``nf`` states of one rank (only the words that
    receive bits); return the old two bits of state index ``probe`` (the lowest state set in ``value``),
    so that exactly one of several racing writers sees 0."""
    pos = first * 2
    w = pos >> 6
    sh = pos & 63
    probe_shift = numba.uint64(2 * (probe & 31))
    seen = numba.uint64(0)
    low = value << numba.uint64(sh)
    if low:
        old = atomic_or_u64(bits, w, low)
        seen = (old >> probe_shift) & numba.uint64(3)
    if sh and sh + 2 * nf > 64:
        high = value >> numba.uint64(64 - sh)
        if high:
            old = atomic_or_u64(bits, w + 1, high)
            if low == 0:  # the probe is in the second word
                seen = (old >> probe_shift) & numba.uint64(3)
    return seen


@njit(cache=True, inline="always")
def _state_of(bits, s):
    return (bits[s >> 5] >> numba.uint64(2 * (s & 31))) & numba.uint64(3)


@njit(cache=True, inline="always")
def _retire_stale(bits, w0, w1, stale):
    """Turn every state of value ``stale`` in words ``w0..w1-1`` to 11 (old); no other thread may write
    these words meanwhile."""
    flip = numba.uint64(stale ^ 3)
    for w in range(w0, w1):
        m = _slots_equal(bits[w], stale)
        if m:
            bits[w] ^= m * flip


@njit(cache=True, inline="always")
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
        kept += numba.int64(_state_of(bits, child_state[j]) == 0)
    new = 0
    new_cells = 0
    for i in range(kept):
        j = unseen[i]
        if _state_of(bits, child_state[j]):
            continue
        free = child_free[j]
        region = _flood(numba.uint64(1) << numba.uint64(child_cell[j]), free, not_first_col, not_last_col, width)
        slots = deposit_bits(extract_bits(region, free), _LOW_BITS)
        first = child_rank[j] * nf
        # the region's lowest slot decides which of several racing writers made the state new
        probe = first + (trailing_zeros(slots) >> 1)
        if _or_rank_states(bits, first, nf, slots * nxt, probe) == 0:
            active_next[child_rank[j] >> _CHUNK_SHIFT] = 1
            new += 1
            new_cells += popcount(region)
    return new, new_cells


@njit(cache=True, inline="always")
def _window_from(match, w, s0, s1):
    """``_in_window`` for a window that may start before word ``w``."""
    return _in_window(match, w, max(s0, w * 32), s1)


@njit(parallel=True, cache=True)
def minimized_top_down(bits, table, depth, n, k, block, not_first_col, not_last_col, width,
                       weights, inverses, active, active_next, workers):
    """Expand every (placement, blank region) state at ``depth``; return ``[cells expanded, discovered,
    cells discovered]``.

    The frontier ("current") states are found by scanning the two-bit words of the chunks of ``CHUNK``
    ranks flagged in ``active`` (the others hold none); a chunk that receives a new child is flagged in
    ``active_next`` (every writer writes 1: a benign race).  A rank's frontier cells are the union of its
    frontier regions, so the moves into them are the children of all of them (no flood); the children
    (``_minimized_children_into``) are prefetched and looked up a batch of about ``_BATCH`` children
    later, so that the cache misses of many states overlap.  A new child is flooded and marked "next" in
    every cell of its region with an atomic OR; a word's frontier states turn to 11 with one atomic XOR
    when the scan moves past the word (every rank with states in it has then been read).  ``table`` receives, for each rank, the first depth at which one of
    its regions is expanded.  ``discovered`` counts each new state once (see ``_or_rank_states``).
    The ``workers`` (one per thread) take the blocks of ``block`` ranks one at a time (``_next_block``).
    """
    entries = table.shape[0]
    nf = n - k
    full = (numba.uint64(1) << numba.uint64(n)) - numba.uint64(1)
    cur = numba.uint64(1 + (depth & 1))
    nxt = numba.uint64(2 - (depth & 1))
    rank_slots = deposit_bits((numba.uint64(1) << numba.uint64(nf)) - numba.uint64(1), _LOW_BITS)
    inverse_nf = 1.0 / nf
    nblocks = (entries + block - 1) // block
    counts = np.zeros((nblocks, 4), dtype=np.int64)
    dispenser = _block_dispenser()
    for _ in prange(workers):
        size = _BATCH + 4 * k
        cells, digits, prefix, child_rank, child_state, child_cell, cellw = _block_scratch(n, k, size)
        child_free = np.empty(size, dtype=np.uint64)
        unseen = np.empty(size, dtype=np.int64)
        while True:
            b, r0, r1 = _next_active_block(dispenser, nblocks, block, entries, active)
            if b < 0:
                break
            run_start = -entries
            expanded_cells = 0
            new = 0
            new_cells = 0
            moves = 0
            pending = 0
            for chunk in range(r0 >> _CHUNK_SHIFT, ((r1 - 1) >> _CHUNK_SHIFT) + 1):
                if not active[chunk]:
                    continue
                s0 = max(r0, chunk << _CHUNK_SHIFT) * nf
                s1 = min(r1, (chunk + 1) << _CHUNK_SHIFT) * nf
                s = s0
                # the frontier states of a word turn to 11 together, once every rank with states in the
                # word has been read (when the scan moves past the word): one atomic XOR per word
                retire_word = -1
                retire = numba.uint64(0)
                while s < s1:
                    w = s >> 5
                    current = _slots_equal(bits[w], cur)
                    if w != retire_word:
                        if retire:
                            atomic_xor_u64(bits, retire_word, retire)
                        retire_word = w
                        retire = _window_from(current, w, s0, s1) * (numba.uint64(3) - cur)
                    match = _in_window(current, w, s, s1)
                    if match == 0:
                        s = (w + 1) * 32
                        continue
                    r = _divide(w * 32 + (trailing_zeros(match) >> 1), nf, inverse_nf)
                    first = r * nf
                    frontier = _slots_equal(_rank_states(bits, first, nf), cur) & rank_slots
                    occupied, run_start = _unrank_next(r, run_start, n, k, inverses, weights, cells, digits, prefix,
                                                       cellw, full)
                    if table[r] == UNSEEN:
                        table[r] = depth
                    # every cell of a frontier region carries its state: the union of the frontier regions is
                    # the frontier cells, and the moves into it are the children of all of them
                    free = full & ~occupied
                    union = deposit_bits(extract_bits(frontier, _LOW_BITS), free)
                    expanded_cells += popcount(union)
                    start = pending
                    pending = _minimized_children_into(union, r, occupied, free, cellw, width, nf, not_first_col,
                                                       not_last_col, bits, child_rank, child_state, child_cell,
                                                       child_free, pending)
                    moves += pending - start
                    if pending >= _BATCH:
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
                    retire = _window_from(_slots_equal(bits[retire_word], cur), retire_word, s0, s1) * (
                        numba.uint64(3) - cur)
                if retire:
                    atomic_xor_u64(bits, retire_word, retire)
            a, c2 = _mark_minimized_children(bits, pending, child_rank, child_state, child_cell, child_free,
                                             unseen, nf, nxt, not_first_col, not_last_col, width, active_next)
            counts[b, 0] = expanded_cells
            counts[b, 1] = new + a
            counts[b, 2] = new_cells + c2
            counts[b, 3] = moves
    return counts.sum(axis=0)


@njit(cache=True, inline="always")
def _first_current(bits, neighbours, slots, count, r, nf, cur):
    """Whether a neighbour state (rank, slot) is current: the near ones (often in cache) first."""
    for j in range(count):
        if abs(neighbours[j] - r) < _NEAR and _state_of(bits, neighbours[j] * nf + slots[j]) == cur:
            return True
    for j in range(count):
        if abs(neighbours[j] - r) >= _NEAR and _state_of(bits, neighbours[j] * nf + slots[j]) == cur:
            return True
    return False


@njit(parallel=True, cache=True)
def minimized_bottom_up(bits, table, depth, stale, n, k, block, not_first_col, not_last_col, width,
                        weights, inverses, active, active_next, workers):
    """Mark "next" every unseen state with a neighbour at ``depth``; return ``[0, discovered, cells]``.

    Each unseen (placement, blank region) looks for a neighbour in the current layer (the moves of the
    last tiles first: their neighbours lie close by) and stops at the first.  Each thread writes only
    the words of its own blocks (plain stores) and reads look only for the "current" value, which no
    write of this step makes or removes: no atomics are needed.  Every block is scanned (``active`` is
    not read); a chunk that gains a state is flagged in ``active_next`` (a chunk may straddle two blocks:
    both writers write 1, a benign race).  The current layer stays "current" until the next step retires
    it (``stale`` there); ``stale`` here does the same for the layer before.
    The ``workers`` (one per thread) take the blocks of ``block`` ranks one at a time (``_next_block``).
    """
    entries = table.shape[0]
    nf = n - k
    full = (numba.uint64(1) << numba.uint64(n)) - numba.uint64(1)
    cur = numba.uint64(1 + (depth & 1))
    nxt = numba.uint64(2 - (depth & 1))
    inverse_nf = 1.0 / nf
    nblocks = (entries + block - 1) // block
    counts = np.zeros((nblocks, 4), dtype=np.int64)
    dispenser = _block_dispenser()
    for _ in prange(workers):
        cells, digits, prefix, neighbours, move_from, move_to, cellw = _block_scratch(n, k, 4 * k)
        rank_slots = deposit_bits((numba.uint64(1) << numba.uint64(nf)) - numba.uint64(1), _LOW_BITS)
        while True:
            b = _next_block(dispenser)
            if b >= nblocks:
                break
            run_start = -entries
            r0 = b * block
            r1 = min(entries, r0 + block)
            s1 = r1 * nf
            s = r0 * nf
            if stale:
                _retire_stale(bits, s >> 5, (s1 + 31) >> 5, stale)
            new = 0
            new_cells = 0
            moves = 0
            while s < s1:
                w = s >> 5
                y = bits[w]
                match = _in_window(_slots_equal(y, 0) | _slots_equal(y, cur), w, s, s1)
                if match == 0:
                    s = (w + 1) * 32
                    continue
                r = _divide(w * 32 + (trailing_zeros(match) >> 1), nf, inverse_nf)
                first = r * nf
                states = _rank_states(bits, first, nf)
                # a rank of the current layer gets its depth here when a top-down step marked it
                if table[r] == UNSEEN and _slots_equal(states, cur) & rank_slots:
                    table[r] = depth
                unseen = extract_bits(_slots_equal(states, 0) & rank_slots, _LOW_BITS)
                if unseen == 0:
                    s = first + nf
                    continue
                occupied, run_start = _unrank_next(r, run_start, n, k, inverses, weights, cells, digits, prefix,
                                                   cellw, full)
                free = full & ~occupied
                marks = numba.uint64(0)
                while unseen:
                    blank = select_bit(trailing_zeros(unseen), free)
                    region = _flood(blank, free, not_first_col, not_last_col, width)
                    region_slots = extract_bits(region, free)
                    unseen &= ~region_slots
                    count = _moves_into(region, r, occupied, cellw, width, not_first_col, not_last_col,
                                        neighbours, move_from, move_to, 0)
                    moves += count
                    for j in range(count):
                        c = move_from[j]
                        cbit = numba.uint64(1) << numba.uint64(c)
                        slot = c - popcount(occupied & (cbit - numba.uint64(1))) - (move_to[j] < c)
                        prefetch(bits, (neighbours[j] * nf + slot) >> 5)
                        move_to[j] = slot
                    if _first_current(bits, neighbours, move_to, count, r, nf, cur):
                        marks |= deposit_bits(region_slots, _LOW_BITS) * nxt
                        new += 1
                        new_cells += popcount(region)
                if marks:
                    _or_own_rank_states(bits, first, nf, marks)
                    active_next[r >> _CHUNK_SHIFT] = 1
                    if table[r] == UNSEEN:
                        table[r] = depth + 1
                s = first + nf
            counts[b, 1] = new
            counts[b, 2] = new_cells
            counts[b, 3] = moves
    return counts.sum(axis=0)


@njit(cache=True, inline="always")
def _or_own_rank_states(bits, first, nf, value):
    """OR a word of two-bit states into the states of one rank of a block this thread alone writes."""
    pos = first * 2
    w = pos >> 6
    sh = pos & 63
    bits[w] |= value << numba.uint64(sh)
    if sh and sh + 2 * nf > 64:
        bits[w + 1] |= value >> numba.uint64(64 - sh)


@njit(parallel=True, cache=True)
def retire_stale(bits, stale, block_words):
    """Turn every state of value ``stale`` to 11 (old): the frontier a bottom-up step left "current",
    before a top-down step (whose marks could otherwise not be told from it)."""
    nblocks = (bits.shape[0] + block_words - 1) // block_words
    for b in prange(nblocks):
        _retire_stale(bits, b * block_words, min(bits.shape[0], (b + 1) * block_words), stale)


@njit(parallel=True, cache=True)
def excess_violations(table, n, k, md_rows, block, inverses):
    """Count reachable entries with h < Manhattan or (h - Manhattan) odd, and unreachable entries.

    Ranks come in runs of n - k + 1 that share the cells of the first k - 1 tiles, the last tile taking
    the free cells in ascending order: one unrank per run.
    """
    entries = table.shape[0]
    run = n - k + 1
    runs = entries // run
    runs_per_block = max(1, block // run)
    nblocks = (runs + runs_per_block - 1) // runs_per_block
    full = (numba.uint64(1) << numba.uint64(n)) - numba.uint64(1)
    bad = np.zeros(nblocks, dtype=np.int64)
    unreached = np.zeros(nblocks, dtype=np.int64)
    for b in prange(nblocks):
        cells = np.empty(k, dtype=np.int64)
        digits = np.empty(k, dtype=np.int64)
        prefix = np.empty(k, dtype=np.uint64)
        for g in range(b * runs_per_block, min(runs, (b + 1) * runs_per_block)):
            r = g * run
            unrank_digits(r, n, k, inverses, cells, digits, prefix)
            m0 = 0
            for i in range(k - 1):
                m0 += md_rows[i, cells[i]]
            free = full & ~prefix[k - 1]
            for j in range(run):
                c = trailing_zeros(free)
                free &= free - numba.uint64(1)
                h = table[r + j]
                if h == UNSEEN:
                    unreached[b] += 1
                    continue
                m = m0 + md_rows[k - 1, c]
                if h < m or (h - m) & 1:
                    bad[b] += 1
    return bad.sum(), unreached.sum()


@njit(parallel=True, cache=True)
def fill_parallel(array, value):
    """``array[:] = value`` by all threads, 2 MiB a task: the first touch of a large fresh array (its page
    faults) is a serial phase otherwise."""
    step = 1 << 21
    for b in prange((array.shape[0] + step - 1) // step):
        array[b * step: min(array.shape[0], (b + 1) * step)] = value


# --- driver ---------------------------------------------------------------------------------------------

@dataclass
class BuildResult:
    table: np.ndarray           # uint8 distance per rank (255: unreachable)
    layers: list[int]           # states (placements or placement/region pairs) per depth
    seconds: float
    unreachable: int
    moves: int = 0              # moves generated (top-down: children looked up; bottom-up: candidates)


def _block_size(entries: int, threads: int) -> int:
    # many more blocks than threads: neighbouring rank blocks have very different work, and a thread
    # done with its block takes the next (_next_block); a multiple of 32 keeps blocks on whole two-bit
    # words often
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


def _bottom_up_now(direction: str, depth: int) -> bool:
    """Whether the step that expands layer ``depth`` goes bottom-up (the one place the driver chooses; a
    test replaces it to mix the directions)."""
    return direction == "bottom-up"


def build_table(pattern: TilePattern, blank: str = "minimized", threads: int | None = None,
                progress: Callable[[int, int, float], None] | None = None, direction: str = "top-down") -> BuildResult:
    """Build the distance table of ``pattern`` under a blank rule.

    ``progress(depth, states, done)`` is called once per layer with the layer's size and the fraction of
    the state space reached so far (placements, or (placement, blank cell) pairs for the blank minimized).

    ``direction`` chooses the steps, ``"top-down"`` or ``"bottom-up"``: the same table (see the module's
    docstring for why top-down is the default).
    """
    import time

    if blank not in BLANK_RULES:
        raise ValueError(f"blank rule {blank!r}: choose one of {', '.join(BLANK_RULES)}")
    if direction not in DIRECTIONS:
        raise ValueError(f"direction {direction!r}: choose one of {', '.join(DIRECTIONS)}")
    threads = threads or os.cpu_count() or 1
    threads = max(1, min(threads, numba.config.NUMBA_NUM_THREADS))
    board = pattern.board
    n, k = pattern.n, pattern.k
    entries = pattern.entries
    block = _block_size(entries, threads)
    goal_rank = pattern.goal_rank()
    weights, inverses = rank_weights(n, k), radix_inverses(n, k)
    start = time.perf_counter()
    previous_threads = numba.get_num_threads()
    numba.set_num_threads(threads)
    layers: list[int] = []
    moves = 0
    try:
        table = np.empty(entries, dtype=np.uint8)
        fill_parallel(table, UNSEEN)
        nfc, nlc = column_masks(board)
        masks = (np.uint64(nfc), np.uint64(nlc), board.width)
        # the chunks of ranks that hold the layer to expand, and those that receive the next: a top-down
        # step scans only the former, so that the small first and last layers cost no pass over the table
        active = np.zeros((entries + CHUNK - 1) // CHUNK, dtype=np.uint8)
        active_next = np.zeros_like(active)
        active[goal_rank // CHUNK] = 1
        if blank == "ignored":
            table[goal_rank] = 0
            depth, seen = 0, 1
            while True:
                if _bottom_up_now(direction, depth):
                    step = ignored_bottom_up
                else:
                    step = ignored_top_down
                expanded, discovered, looked_up = (int(x) for x in step(
                    table, depth, n, k, block, *masks, weights, inverses, active, active_next, threads))
                active, active_next = active_next, active
                active_next[:] = 0
                moves += looked_up
                layers.append(expanded)
                if progress:
                    progress(depth, expanded, min(1.0, (seen + discovered) / entries))
                if discovered == 0:
                    break
                seen += discovered  # may count a child twice after a top-down step: progress only
                depth += 1
                if depth >= UNSEEN - 1:
                    raise OverflowError("distances exceed 253: the table would not fit a byte")
        else:
            nfree = pattern.free_cells
            bits = np.zeros(bits_bytes(pattern) // 8, dtype=np.uint64)
            goal_cells = pattern.goal_cells()
            occupied = 0
            for c in goal_cells:
                occupied |= 1 << int(c)
            # depth 0 (value 01) in every cell of the goal's blank region
            goal_region = pattern.blank_region(goal_cells, board.goal[0])
            for cell in goal_region:
                s = goal_rank * nfree + cell - bin(occupied & ((1 << cell) - 1)).count("1")
                bits[s >> 5] |= np.uint64(1) << np.uint64(2 * (s & 31))
            cells_total = entries * nfree
            depth, frontier, frontier_cells, seen_cells = 0, 1, len(goal_region), len(goal_region)
            stale = 0  # the value a bottom-up step left on its frontier, still to be retired
            while True:
                layers.append(frontier)
                if progress:
                    progress(depth, frontier, seen_cells / cells_total)
                if _bottom_up_now(direction, depth):
                    expanded, discovered, new_cells, looked_up = (int(x) for x in minimized_bottom_up(
                        bits, table, depth, stale, n, k, block, *masks, weights, inverses, active, active_next,
                        threads))
                    stale = 1 + (depth & 1)
                else:
                    if stale:
                        retire_stale(bits, np.uint64(stale), max(1, block * nfree // 32))
                        stale = 0
                    expanded, discovered, new_cells, looked_up = (int(x) for x in minimized_top_down(
                        bits, table, depth, n, k, block, *masks, weights, inverses, active, active_next,
                        threads))
                    if expanded != frontier_cells:
                        raise AssertionError(f"depth {depth}: {expanded} cells expanded, {frontier_cells} "
                                             "marked: a builder bug")
                active, active_next = active_next, active
                active_next[:] = 0
                moves += looked_up
                if discovered == 0:
                    break
                frontier, frontier_cells = discovered, new_cells
                seen_cells += new_cells
                depth += 1
                if depth >= UNSEEN - 1:
                    raise OverflowError("distances exceed 253: the table would not fit a byte")
            del bits
        bad, unreachable = excess_violations(table, n, k, pattern.md_rows(), block, inverses)
    finally:
        numba.set_num_threads(previous_threads)
    if bad:
        raise AssertionError(f"{bad} entries violate h >= Manhattan with an even excess: a builder bug")
    return BuildResult(table, layers, time.perf_counter() - start, int(unreachable), moves)
