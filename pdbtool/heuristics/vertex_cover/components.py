"""Connected components of the conflict graph and their least covers, with the memo of the covers of their
reduced cores."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..._native.intrinsics import popcount, trailing_zeros
from .exact_cover import _branch_and_bound, _reduce
from .layout import CCOVER, CM, CMASK, CW, G_HCOUNT, GS, HMASK, HW

# 2^16 slots of 31 words per memo (one per thread): a smaller memo, or none, costs more CPU per node
MEMO_SLOTS = 1 << 16

MEMO_KEYS = 28  # components with more constraints are solved without the memo



@njit(cache=True, _nrt=False)
def _component(t, g, hl):
    """The mask of t's connected component (its constraints in ``hl[HMASK]``), grown a layer at a time
    (one pass over the constraints per layer)."""
    hcount = g[GS, G_HCOUNT]
    comp = np.int64(1) << t
    frontier = comp
    while frontier:
        nbrs = np.int64(0)
        for j in range(hcount):
            if hl[HMASK, j] & frontier:
                nbrs |= hl[HMASK, j]
        frontier = nbrs & ~comp
        comp |= frontier
    return comp


@njit(cache=True, _nrt=False, forceinline=True)
def _compact(m, core):
    """The bits of ``m`` (a subset of ``core``) packed to the low end as ``core``'s are (BMI2 ``pext``), one
    popcount per bit: a constraint has two or three, and ``pext`` is microcoded (tens to hundreds of cycles) on
    older AMD CPUs."""
    out = np.int64(0)
    while m:
        low = m & -m
        out |= np.int64(1) << popcount(core & (low - 1))
        m ^= low
    return out


@njit(cache=True, _nrt=False)
def _cover_of(comp, g, hl, cons, memo):
    """Least cover of the constraints of the component ``comp``.

    The component is reduced first (:func:`_reduce`); what the reductions leave, its core, comes back
    again and again (IDA* revisits states across iterations and through transpositions, and the same
    shapes recur among other tiles), so the covers of cores are memoized in ``memo``: a direct-mapped table
    keyed by the sorted list of the core's constraints (mask x 16 + residual weight, with the core's tiles
    renumbered 0, 1, ... in increasing order: the cover does not depend on which tiles they are), compared
    in full, so a hit is always exact."""
    return _least_cover(_list_constraints(comp, 0, g, hl, cons, CM), g, cons, memo)


@njit(cache=True, _nrt=False, forceinline=True)
def _list_constraints(tiles, skip, g, hl, cons, row):
    """Write the constraints of the whole components ``tiles`` into ``cons[row]`` (masks) and
    ``cons[row + 1]`` (weights), leaving out those of the tiles ``skip``; return their count."""
    nc = 0
    for j in range(g[GS, G_HCOUNT]):
        hm = hl[HMASK, j]
        cons[row, nc] = hm
        cons[row + 1, nc] = hl[HW, j]
        nc += (hm & tiles != 0) & (hm & skip == 0)
    return nc


@njit(cache=True, _nrt=False)
def _least_cover(nc, g, cons, memo):
    """Least cover of the ``nc`` constraints of one component in ``cons[CM/CW]`` (overwritten): the shortcuts,
    the reductions, the memo of cores and the branch and bound of :func:`_cover_of`."""
    if nc <= 1:
        return cons[CW, 0] if nc == 1 else 0
    common = cons[CM, 0]
    top = 0
    for e in range(nc):
        common &= cons[CM, e]
        if cons[CW, e] > top:
            top = cons[CW, e]
    if common:
        return top
    fixed, k = _reduce(cons, 0, nc)
    if k == 0:
        return fixed
    if k > MEMO_KEYS or top >= 16:
        return fixed + _branch_and_bound(cons, k, g)
    # the key: the sorted codes of what is left, its core, in the last row of cons
    key = cons.shape[0] - 1
    core = np.int64(0)
    for e in range(k):
        core |= cons[CM, e]
    for e in range(k):
        code = _compact(cons[CM, e], core) * 16 + cons[CW, e]
        j = e
        while j > 0 and cons[key, j - 1] > code:
            cons[key, j] = cons[key, j - 1]
            j -= 1
        cons[key, j] = code
    h = np.int64(k)
    for e in range(k):
        h = (h ^ cons[key, e]) * np.int64(-7046029254386353131)
    slot = (h >> 17) & (memo.shape[0] - 1)
    if memo[slot, 0] == k and memo[slot, 2] == h:
        hit = True
        for e in range(k):
            if memo[slot, 3 + e] != cons[key, e]:
                hit = False
                break
        if hit:
            return fixed + memo[slot, 1]
    memo[slot, 0] = 0
    for e in range(k):
        memo[slot, 3 + e] = cons[key, e]
    value = _branch_and_bound(cons, k, g)
    memo[slot, 1] = value
    memo[slot, 2] = h
    memo[slot, 0] = k
    return fixed + value


@njit(cache=True, _nrt=False, forceinline=True)
def _set_component(comp, cov, g):
    """Every vertex of ``comp`` records it as its component, with the component's cover."""
    rem = comp
    while rem:
        v = trailing_zeros(rem)
        rem &= rem - 1
        g[CMASK, v] = comp
        g[CCOVER, v] = cov


def new_memo() -> np.ndarray:
    """An empty memo of component covers (:func:`_cover_of`)."""
    return np.zeros((MEMO_SLOTS, MEMO_KEYS + 3), dtype=np.int64)

