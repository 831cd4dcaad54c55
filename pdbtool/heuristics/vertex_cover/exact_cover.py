"""The exact least weighted cover of one set of constraints: reductions that keep it exact, then a branch
and bound on the busiest vertex, pruned by a packing bound.

The branch and bound works on levels: level L's constraints are cons[2L] (masks) and cons[2L + 1]
(residual weights), level 0 being the component's own (CM, CW); a level fixes one more vertex than the
one above it.  g[BEST, L]: the cover fixed down to level L; g[DEG, L]: its count of constraints;
g[ORDER, L]: the vertex it branches on; g[BEST, n + 1 + L]: the value that vertex has in the child.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from ..._native.intrinsics import trailing_zeros
from .layout import BEST, CM, CW, DEG, G_ROWS, ORDER, _work_rows


@njit(cache=True, _nrt=False, forceinline=True)
def _reduce(cons, lv, k):
    """Simplify the k constraints of level ``lv`` in place by rules that keep the least cover exact; return
    (the cover they fix, the count of constraints left, each with at least two vertices, none in one only).

    * A vertex in one constraint only (a leaf) leaves it: any value it would add could go to another vertex
      of that constraint instead, which covers at least as much.
    * A constraint left with one vertex fixes that vertex's value: its residual is added to the cover and
      taken off every constraint of that vertex (those left with nothing to cover are dropped); one left
      with no vertex (all of them leaves) is added to the cover as it is.
    Repeated until no constraint goes, so a forest of constraints is solved outright."""
    mrow = 2 * lv
    rrow = mrow + 1
    cost = np.int64(0)
    while True:
        once = np.int64(0)
        twice = np.int64(0)
        for e in range(k):
            m = cons[mrow, e]
            twice |= once & m
            once |= m
        leaves = once & ~twice
        fixed = False
        for e in range(k):
            r = cons[rrow, e]
            if r <= 0:
                continue
            m = cons[mrow, e] & ~leaves
            if m & (m - 1) == 0:
                cost += r
                fixed = True
                if m:
                    for f in range(k):
                        if cons[mrow, f] & m:
                            cons[rrow, f] -= r
                cons[rrow, e] = 0
            cons[mrow, e] = m
        j = 0
        for e in range(k):
            r = cons[rrow, e]
            cons[mrow, j] = cons[mrow, e]
            cons[rrow, j] = r
            j += r > 0
        k = j
        if not fixed:
            return cost, k


@njit(cache=True, _nrt=False, forceinline=True)
def _disjoint_weights(cons, mrow, k):
    """The weights of vertex-disjoint constraints among the k of ``cons[mrow]`` (weights in the next row),
    taken greedily, those of weight 2 or more first: each needs its own units, so this bounds their least
    cover below (the hypergraph analogue of a matching)."""
    # take: all ones for a constraint taken, else 0 (branch-free, see the module's docstring)
    used = np.int64(0)
    lb = np.int64(0)
    for e in range(k):
        m = cons[mrow, e]
        w = cons[mrow + 1, e]
        take = -np.int64((w > 1) & (m & used == 0))
        lb += w & take
        used |= m & take
    for e in range(k):
        m = cons[mrow, e]
        take = -np.int64((cons[mrow + 1, e] == 1) & (m & used == 0))
        lb -= take
        used |= m & take
    return lb


@njit(cache=True, _nrt=False, forceinline=True)
def _busiest_vertex(cons, lv, k):
    """A vertex in the most constraints of level ``lv`` (bit-sliced counters, saturating above 4)."""
    b0 = np.int64(0)
    b1 = np.int64(0)
    b2 = np.int64(0)
    for e in range(k):
        m = cons[2 * lv, e]
        c0 = b0 & m
        b0 ^= m
        c1 = b1 & c0
        b1 ^= c0
        b2 |= c1
    s = b2
    if s == 0:
        s = b1
    elif s & b1:
        s &= b1
    if s == 0:
        s = b0
    elif s & b0:
        s &= b0
    return trailing_zeros(s)


@njit(cache=True, _nrt=False)
def _branch_and_bound(cons, k, g):
    """Least cover of the k constraints of level 0, already reduced (:func:`_reduce`): depth first over
    the value of the vertex in the most constraints, largest first, each child reduced again, pruned by
    the packing bound."""
    off = g.shape[1] // 2  # g[BEST, off + L]: the value of level L's vertex in its child
    best = np.int64(0)
    for e in range(k):
        best += cons[1, e]  # each constraint covered on its own: a cover
    root_lb = _disjoint_weights(cons, 0, k)
    if root_lb >= best:
        return best
    g[BEST, 0] = 0
    g[DEG, 0] = k
    lv = 0
    enter = True
    while True:
        cost = g[BEST, lv]
        k = g[DEG, lv]
        mrow = 2 * lv
        if enter:
            if k == 0:
                if cost < best:
                    best = cost
                    if best <= root_lb:
                        return best
                val = -1
            elif cost + _disjoint_weights(cons, mrow, k) >= best:
                val = -1
            else:
                v = _busiest_vertex(cons, lv, k)
                bv = np.int64(1) << v
                val = np.int64(0)
                for e in range(k):
                    if cons[mrow, e] & bv and cons[mrow + 1, e] > val:
                        val = cons[mrow + 1, e]
                g[ORDER, lv] = v
        else:
            val = g[BEST, off + lv] - 1
        if val < 0:
            lv -= 1
            if lv < 0:
                return best
            enter = False
            continue
        # the child: level lv's vertex takes the value val and leaves every constraint
        g[BEST, off + lv] = val
        bv = np.int64(1) << g[ORDER, lv]
        j = 0
        for e in range(k):
            m = cons[mrow, e]
            on = -np.int64(m & bv != 0)
            cons[mrow + 2, j] = m & ~bv
            r = cons[mrow + 1, e] - (val & on)
            cons[mrow + 3, j] = r
            j += r > 0
        fixed, j = _reduce(cons, lv + 1, j)
        g[BEST, lv + 1] = cost + val + fixed
        g[DEG, lv + 1] = j
        lv += 1
        enter = True


@njit(cache=True, _nrt=False)
def solve_cover(cons, nc, g):
    """Least sum of y with sum_{v in cons[CM, e]} y_v >= cons[CW, e] for e < nc (overwrites them)."""
    fixed, k = _reduce(cons, 0, nc)
    if k == 0:
        return fixed
    return fixed + _branch_and_bound(cons, k, g)


@njit(cache=True)
def min_cover_kernel(masks, weights, cons, g):
    """The least cover of arbitrary constraints, component by component (for tests)."""
    nc = masks.shape[0]
    vm = 0
    for e in range(nc):
        vm |= masks[e]
    total = 0
    done = np.zeros(nc, dtype=np.bool_)
    while vm:
        comp = vm & -vm
        while True:
            grown = comp
            for e in range(nc):
                if masks[e] & grown:
                    grown |= masks[e]
            if grown == comp:
                break
            comp = grown
        k = 0
        for e in range(nc):
            if not done[e] and masks[e] & comp:
                done[e] = True
                cons[CM, k] = masks[e]
                cons[CW, k] = weights[e]
                k += 1
        total += solve_cover(cons, k, g)
        vm &= ~comp
    return total


def cover_work(n: int, constraints: int) -> tuple[np.ndarray, np.ndarray]:
    """``(cons, g)``: the work space of covers of up to ``constraints`` constraints over tiles 0..n-1."""
    c0, end = _work_rows(n)
    return (np.zeros((end - c0, max(1, constraints)), dtype=np.int64),
            np.zeros((G_ROWS, 2 * n + 2), dtype=np.int64))


def min_cover(edges: Sequence[tuple[Sequence[int], int]], n: int) -> int:
    """Least weighted cover of hyperedges given as (vertices, weight) over vertices 0..n-1."""
    masks = np.array([sum(1 << v for v in vs) for vs, _ in edges], dtype=np.uint64).view(np.int64)  # bit 63: the sign
    weights = np.array([w for _, w in edges], dtype=np.int64)
    return int(min_cover_kernel(masks, weights, *cover_work(n, len(edges))))

