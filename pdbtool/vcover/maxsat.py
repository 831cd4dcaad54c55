"""The MaxSAT-style tightening of the clique-cover bound (Li & Quan 2010, on the complement graph).

At a node of the clique-branching search the free vertices are partitioned into cliques 1..c, and only the
vertices of cliques above ``kmin`` are branched on: an independent set inside cliques 1..kmin has at most
kmin vertices, one per clique, which cannot beat the best cover.  A listed vertex v may join those unbranched
cliques when every independent set of v and the cliques has at most kmin vertices too.  Unit propagation
shows it: with v in the set, a clique none of whose vertices but u is outside v's neighbourhood forces u,
which excludes u's neighbours from the other cliques; a clique left without a candidate is a conflict.  Then
v and the cliques that the conflict rests on (the empty one, the forced ones that emptied it, theirs in
turn) hold at most one vertex fewer than their number in any independent set, so v is not branched on; those
cliques are consumed (the next test uses only the others), which keeps the sets disjoint and the bound kmin
valid for everything left unbranched.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._native.intrinsics import popcount, trailing_zeros


@njit(cache=True)
def _consume(e, reason, touched, tlen, consumed):
    """Consume the empty clique ``e`` and the forced cliques its emptying depends on: the units named in its
    reason, their reasons in turn (a unit's reason names earlier units only, so one backward pass)."""
    consumed[e] = 1
    for t in range(tlen - 1, -1, -1):
        if reason[e, t >> 6] & (np.uint64(1) << np.uint64(t & 63)) != 0:
            k = touched[t]
            consumed[k] = 1
            for x in range(reason.shape[1]):
                reason[e, x] |= reason[k, x]


@njit(cache=True)
def _inconsistent(v, adjbits, cbits, rbits, reason, kmin, consumed, count, queue, touched):
    """Propagate ``v`` over the cliques 0..kmin-1 not consumed (``cbits`` rows); on a conflict, mark
    consumed the cliques it rests on and return True.  ``reason[k]``: the units (by their place in
    ``touched``) that removed candidates of clique k.  ``rbits``, ``reason``, ``count``, ``queue``,
    ``touched``: scratch."""
    words = adjbits.shape[1]
    qlen = 0
    for k in range(kmin):
        count[k] = -1
        if consumed[k]:
            continue
        c = 0
        for x in range(words):
            rbits[k, x] = cbits[k, x] & ~adjbits[v, x]
            reason[k, x] = 0
            c += popcount(rbits[k, x])
        count[k] = c
        if c == 0:
            consumed[k] = 1
            return True
        if c == 1:
            queue[qlen] = k
            qlen += 1
    tlen = np.int64(0)  # not a literal: one specialization of _consume
    head = 0
    while head < qlen:
        k = queue[head]
        head += 1
        u = -1
        for x in range(words):
            if rbits[k, x] != 0:
                u = x * 64 + trailing_zeros(rbits[k, x])
                break
        t = tlen
        touched[t] = k
        tlen += 1
        tbit = np.uint64(1) << np.uint64(t & 63)
        count[k] = -2  # satisfied by u
        for k2 in range(kmin):
            if count[k2] <= 0:
                continue
            c = 0
            for x in range(words):
                rbits[k2, x] &= ~adjbits[u, x]
                c += popcount(rbits[k2, x])
            if c == count[k2]:
                continue
            count[k2] = c
            reason[k2, t >> 6] |= tbit
            if c == 0:
                _consume(k2, reason, touched, tlen, consumed)
                return True
            if c == 1:
                queue[qlen] = k2
                qlen += 1
    return False


@njit(cache=True)
def tighten(adjbits, order_v, order_k, free, kmin, cbits, rbits, reason, consumed, count, queue, touched):
    """Take out of the branching list (``order_k`` set to -1) the listed vertices, from the last clique
    down, that :func:`_inconsistent` shows cannot extend an independent set of the first ``kmin`` cliques
    beyond kmin vertices; returns how many."""
    for k in range(kmin):
        consumed[k] = 0
    moved = 0
    for i in range(free - 1, -1, -1):
        k = order_k[i]
        if k == -1:
            continue
        if k <= kmin:
            break
        if _inconsistent(order_v[i], adjbits, cbits, rbits, reason, kmin, consumed, count, queue, touched):
            order_k[i] = -1
            moved += 1
    return moved
