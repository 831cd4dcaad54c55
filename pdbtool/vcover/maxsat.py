"""The MaxSAT-style tightening of the clique-cover bound (Li & Quan 2010, on the complement graph).

At a node of the clique-branching search the free vertices are partitioned into cliques 1..c, and only the
vertices of cliques above ``kmin`` are branched on: an independent set inside cliques 1..kmin has at most
kmin vertices, one per clique, which cannot beat the best cover.  A listed vertex v may join those unbranched
cliques when every independent set of v and the cliques has at most kmin vertices too.  Unit propagation
shows it: with v in the set, a clique none of whose vertices but u is outside v's neighbourhood forces u,
which excludes u's neighbours from the other cliques; a clique left without a candidate is a conflict.  Then
v and the cliques that the propagation touched hold at most one vertex fewer than their number in any
independent set, so v is not branched on; those cliques are consumed (the next test uses only the others),
which keeps the sets disjoint and the bound kmin valid for everything left unbranched.
"""

from __future__ import annotations

from numba import njit

from .._native.intrinsics import popcount, trailing_zeros


@njit(cache=True)
def _inconsistent(v, adjbits, cbits, rbits, kmin, consumed, count, queue, touched):
    """Propagate ``v`` over the cliques 0..kmin-1 not consumed (``cbits`` rows); on a conflict, mark the
    cliques it touched consumed and return True.  ``rbits`` rows, ``count``, ``queue``, ``touched``:
    scratch."""
    words = adjbits.shape[1]
    qlen = 0
    for k in range(kmin):
        count[k] = -1
        if consumed[k]:
            continue
        c = 0
        for x in range(words):
            rbits[k, x] = cbits[k, x] & ~adjbits[v, x]
            c += popcount(rbits[k, x])
        count[k] = c
        if c == 0:
            consumed[k] = 1
            return True
        if c == 1:
            queue[qlen] = k
            qlen += 1
    tlen = 0
    head = 0
    while head < qlen:
        k = queue[head]
        head += 1
        if count[k] == 0:  # emptied after it was queued
            touched[tlen] = k
            tlen += 1
            for i in range(tlen):
                consumed[touched[i]] = 1
            return True
        u = -1
        for x in range(words):
            if rbits[k, x] != 0:
                u = x * 64 + trailing_zeros(rbits[k, x])
                break
        touched[tlen] = k
        tlen += 1
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
            if c == 0:
                touched[tlen] = k2
                tlen += 1
                for i in range(tlen):
                    consumed[touched[i]] = 1
                return True
            if c == 1:
                queue[qlen] = k2
                qlen += 1
    return False


@njit(cache=True)
def tighten(adjbits, order_v, order_k, free, kmin, cbits, rbits, consumed, count, queue, touched):
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
        if _inconsistent(order_v[i], adjbits, cbits, rbits, kmin, consumed, count, queue, touched):
            order_k[i] = -1
            moved += 1
    return moved
