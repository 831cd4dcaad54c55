"""A local search for a small vertex cover, the first upper bound of the branch and bound: NuMVC (Cai, Su,
Luo & Sattar, JAIR 2013), started from the greedy cover.

While the cover C covers every edge, it is recorded and its vertex of highest dscore is dropped; otherwise
one step exchanges two vertices: the vertex of C whose removal costs least goes out, then an end of a random
uncovered edge comes in (one whose configuration changed since it last left, the one of higher dscore).
Every edge has a weight, raised by one each step it stays uncovered and scaled down by ``rho`` once the mean
weight reaches ``gamma``; ``dscore(v)`` is the change in the total weight of the uncovered edges that moving
``v`` in or out of C makes, negated.  Ties go to the vertex that moved least recently.  The search runs a
fixed number of steps from a fixed seed, so that the cover it returns, and the nodes of the search after it,
do not depend on the machine's speed.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._native import numba_cache  # noqa: F401  (the package-wide cache stamp)

GAMMA_PER_VERTEX = 0.5
RHO = 0.3


@njit(cache=True)
def _edge_ids(indptr, indices):
    """``eid[i]``: the number of the edge of adjacency entry ``i`` (edges numbered in the order of their
    lower end's entries), and the ends of each edge.  Adjacency lists are sorted (as ``graph.csr_of`` makes
    them), so the upper entries of a row meet their mirrors in order."""
    n = indptr.shape[0] - 1
    eid = np.empty(indices.shape[0], dtype=np.int64)
    cursor = np.empty(n, dtype=np.int64)
    m = 0
    for v in range(n):
        cursor[v] = indptr[v + 1]
        for i in range(indptr[v], indptr[v + 1]):
            if v < indices[i]:
                if cursor[v] == indptr[v + 1]:
                    cursor[v] = i
                m += 1
    eu = np.empty(m, dtype=np.int64)
    ev = np.empty(m, dtype=np.int64)
    e = 0
    for v in range(n):
        for i in range(indptr[v], indptr[v + 1]):
            if v < indices[i]:
                eu[e] = v
                ev[e] = indices[i]
                eid[i] = e
                e += 1
    for v in range(n):
        for i in range(indptr[v], indptr[v + 1]):
            u = indices[i]
            if u < v:
                eid[i] = eid[cursor[u]]
                cursor[u] += 1
    return eid, eu, ev


@njit(cache=True)
def _scores(incover, weight, eu, ev, dscore):
    dscore[:] = 0
    for e in range(eu.shape[0]):
        a, b = eu[e], ev[e]
        if incover[a] and not incover[b]:
            dscore[a] -= weight[e]
        elif incover[b] and not incover[a]:
            dscore[b] -= weight[e]
        elif not incover[a] and not incover[b]:
            dscore[a] += weight[e]
            dscore[b] += weight[e]


@njit(cache=True)
def _highest(incover, dscore, moved):
    """The vertex of the cover of highest dscore (whose removal costs least), the oldest among ties."""
    u = -1
    for v in range(incover.shape[0]):
        if incover[v] and (u == -1 or dscore[v] > dscore[u] or (dscore[v] == dscore[u] and moved[v] < moved[u])):
            u = v
    return u


@njit(cache=True)
def _move(v, into, step, indptr, indices, eid, weight, incover, dscore, conf, moved, uncovered, upos, ulen):
    """Put ``v`` into the cover (``into`` 1) or take it out (0); returns the new number of uncovered edges."""
    sign = 1 if into else -1
    incover[v] = into
    dscore[v] = -dscore[v]
    if not into:
        conf[v] = 0
    moved[v] = step
    for i in range(indptr[v], indptr[v + 1]):
        z = indices[i]
        e = eid[i]
        conf[z] = 1
        if incover[z]:
            dscore[z] += sign * weight[e]
            continue
        dscore[z] -= sign * weight[e]
        if into:
            p = upos[e]
            last = uncovered[ulen - 1]
            uncovered[p] = last
            upos[last] = p
            upos[e] = -1
            ulen -= 1
        else:
            uncovered[ulen] = e
            upos[e] = ulen
            ulen += 1
    return ulen


@njit(cache=True)
def numvc(indptr, indices, cover, steps, seed):
    """Improve the vertex cover ``cover`` (1 for a vertex in it) of the graph for ``steps`` steps; ``cover``
    is left holding the smallest cover found, whose size is returned."""
    n = indptr.shape[0] - 1
    np.random.seed(seed)
    eid, eu, ev = _edge_ids(indptr, indices)
    m = eu.shape[0]
    incover = np.zeros(n, dtype=np.int8)
    size = 0
    for v in range(n):
        if cover[v]:
            incover[v] = 1
            size += 1
    if m == 0:
        return size
    weight = np.ones(m, dtype=np.int64)
    dscore = np.zeros(n, dtype=np.int64)
    conf = np.ones(n, dtype=np.int8)
    moved = np.zeros(n, dtype=np.int64)
    uncovered = np.empty(m, dtype=np.int64)
    upos = -np.ones(m, dtype=np.int64)
    ulen = 0
    for e in range(m):
        if not incover[eu[e]] and not incover[ev[e]]:
            uncovered[ulen] = e
            upos[e] = ulen
            ulen += 1
    _scores(incover, weight, eu, ev, dscore)
    best = size if ulen == 0 else n + 1
    total = m
    limit = max(2, int(GAMMA_PER_VERTEX * n)) * m
    for step in range(1, steps + 1):
        if ulen == 0:  # a cover: recorded, then its vertex of highest dscore dropped
            if size < best:
                best = size
                for v in range(n):
                    cover[v] = incover[v]
            if best <= 1:  # an edge needs one vertex: optimal
                break
            ulen = _move(_highest(incover, dscore, moved), 0, step, indptr, indices, eid, weight, incover, dscore,
                         conf, moved, uncovered, upos, ulen)
            size -= 1
            continue
        if size > 0:
            ulen = _move(_highest(incover, dscore, moved), 0, step, indptr, indices, eid, weight, incover, dscore,
                         conf, moved, uncovered, upos, ulen)
            size -= 1
        e = uncovered[np.random.randint(0, ulen)]
        a, b = eu[e], ev[e]
        if conf[a] == 0:
            v = b
        elif conf[b] == 0:
            v = a
        elif dscore[a] > dscore[b] or (dscore[a] == dscore[b] and moved[a] < moved[b]):
            v = a
        else:
            v = b
        ulen = _move(v, 1, step, indptr, indices, eid, weight, incover, dscore, conf, moved, uncovered, upos, ulen)
        size += 1
        for j in range(ulen):
            e = uncovered[j]
            weight[e] += 1
            dscore[eu[e]] += 1
            dscore[ev[e]] += 1
        total += ulen
        if total >= limit:
            total = 0
            for e in range(m):
                weight[e] = max(1, int(RHO * weight[e]))
                total += weight[e]
            _scores(incover, weight, eu, ev, dscore)
    if ulen == 0 and size < best:
        best = size
        for v in range(n):
            cover[v] = incover[v]
    return best
