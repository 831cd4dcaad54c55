"""The placements a BFS step works on: incremental unranking along increasing ranks, the moves of the
pattern tiles into a set of cells (a child's rank is the parent's plus a step, no unrank per child), and
the flood fill of a blank region.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit

from ..._native.intrinsics import select_bit, trailing_zeros
from ..ranking import grown_region, unrank_digits


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
def moves_into(region, r, occupied, cellw, width, not_first_col, not_last_col, out_child, out_from, out_to,
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
def vertical_step_over(cellw, between, width, wi):
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
def _unrank_with_weights(r, n, k, inverses, weights, cells, digits, prefix, cellw):
    """``unrank_digits`` that also moves the tiles' weights in ``cellw`` from the last placement to this one."""
    for i in range(k):
        cellw[cells[i]] = 0
    occupied = unrank_digits(r, n, k, inverses, cells, digits, prefix)
    for i in range(k):
        cellw[cells[i]] = weights[i]
    return occupied


@njit(cache=True, inline="always")
def flood(seed, free, not_first_col, not_last_col, width):
    """:func:`~.ranking.flood_region` two steps a round: half the rounds, half the hard-to-predict loop exits."""
    region = seed & free
    while True:
        grown = grown_region(grown_region(region, free, not_first_col, not_last_col, width), free, not_first_col,
                             not_last_col, width)
        if grown == region:
            return region
        region = grown


@njit(cache=True, inline="always")
def divide(x, d, inverse):
    """``x // d`` for 0 <= x < 2**52 through a multiplication by ``inverse`` = 1 / d, corrected once."""
    q = np.int64(x * inverse)
    rest = x - q * d
    if rest < 0:
        q -= 1
    elif rest >= d:
        q += 1
    return q


@njit(cache=True, inline="always")
def unrank_next(r, run_start, n, k, inverses, weights, cells, digits, prefix, cellw, full):
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
