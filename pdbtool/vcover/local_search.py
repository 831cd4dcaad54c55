"""A local search for a small vertex cover, the first upper bound of the branch and bound: NuMVC (Cai, Su,
Luo & Sattar, JAIR 2013), started from the greedy cover.

While the cover C covers every edge, it is recorded and its vertex of highest dscore is dropped; otherwise
one step exchanges two vertices: the vertex of C whose removal costs least goes out, then an end of a random
uncovered edge comes in (one whose configuration changed since it last left, the one of higher dscore).
Every edge has a weight, raised by one each step it stays uncovered and scaled down by ``rho`` once the mean
weight reaches ``gamma``; ``dscore(v)`` is the change in the total weight of the uncovered edges that moving
``v`` in or out of C makes, negated. Ties go to the vertex that moved least recently. The cover's vertices
are kept in a binary heap on that order, so that a step costs the degrees of the vertices it moves (times
the heap's depth) and the uncovered edges, not a scan of the cover; the weights' scaling rebuilds it. The
search runs a fixed number of steps from a fixed seed (or until its cover meets a lower bound), so that the
cover it returns, and the nodes of the search after it, do not depend on the machine's speed.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._native import numba_cache  # noqa: F401  (the package-wide cache stamp)

GAMMA_PER_VERTEX = 0.5
RHO = 0.3
OUT, INTO = np.int64(0), np.int64(1)  # _move's direction, not literals: one compiled _move


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
    """The vertex of the cover taken out first, by a scan of the cover."""
    u = -1
    for v in range(incover.shape[0]):
        if incover[v] and (u == -1 or dscore[v] > dscore[u] or (dscore[v] == dscore[u] and moved[v] < moved[u])):
            u = v
    return u


@njit(cache=True)
def _before(a, b, dscore, moved):
    """Whether cover vertex ``a`` is taken out before ``b``: higher dscore, then the older move, then the
    lower number."""
    if dscore[a] != dscore[b]:
        return dscore[a] > dscore[b]
    if moved[a] != moved[b]:
        return moved[a] < moved[b]
    return a < b


@njit(cache=True)
def _sift_up(p, heap, hpos, dscore, moved):
    v = heap[p]
    while p > 0:
        q = (p - 1) >> 1
        u = heap[q]
        if not _before(v, u, dscore, moved):
            break
        heap[p] = u
        hpos[u] = p
        p = q
    heap[p] = v
    hpos[v] = p


@njit(cache=True)
def _sift_down(p, hlen, heap, hpos, dscore, moved):
    v = heap[p]
    while True:
        c = 2 * p + 1
        if c >= hlen:
            break
        if c + 1 < hlen and _before(heap[c + 1], heap[c], dscore, moved):
            c += 1
        u = heap[c]
        if not _before(u, v, dscore, moved):
            break
        heap[p] = u
        hpos[u] = p
        p = c
    heap[p] = v
    hpos[v] = p


@njit(cache=True)
def _heap_fix(v, hlen, heap, hpos, dscore, moved):
    """Restore the heap after ``dscore[v]`` or ``moved[v]`` changed."""
    p = hpos[v]
    if p > 0 and _before(v, heap[(p - 1) >> 1], dscore, moved):
        _sift_up(p, heap, hpos, dscore, moved)
    else:
        _sift_down(p, hlen, heap, hpos, dscore, moved)


@njit(cache=True)
def _heap_remove(v, hlen, heap, hpos, dscore, moved):
    """Take ``v`` out of the heap; returns its new length."""
    p = hpos[v]
    hpos[v] = -1
    hlen -= 1
    if p < hlen:
        heap[p] = heap[hlen]
        hpos[heap[p]] = p
        _heap_fix(heap[p], hlen, heap, hpos, dscore, moved)
    return hlen


@njit(cache=True)
def _heap_build(incover, heap, hpos, dscore, moved):
    """The heap of the cover's vertices, the one taken out first at its top; returns its length."""
    hlen = np.int64(0)  # not a literal: one specialization of the helpers it is passed to
    for v in range(incover.shape[0]):
        hpos[v] = -1
        if incover[v]:
            heap[hlen] = v
            hpos[v] = hlen
            hlen += 1
    for p in range(hlen // 2 - 1, -1, -1):
        _sift_down(p, hlen, heap, hpos, dscore, moved)
    return hlen


@njit(cache=True)
def _move(v, into, step, indptr, indices, eid, weight, incover, dscore, conf, moved, uncovered, upos, ulen, heap,
          hpos, hlen, indexed):
    """Put ``v`` into the cover (``into`` 1) or take it out (0), keeping the heap of the cover's vertices
    when ``indexed``; returns the new numbers of uncovered edges and of the cover's vertices."""
    sign = 1 if into else -1
    if not indexed:
        hlen += 1 if into else -1
    elif not into:
        hlen = _heap_remove(v, hlen, heap, hpos, dscore, moved)
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
            if indexed:
                _heap_fix(z, hlen, heap, hpos, dscore, moved)
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
    if into and indexed:
        heap[hlen] = v
        hpos[v] = hlen
        hlen += 1
        _sift_up(hlen - 1, heap, hpos, dscore, moved)
    return ulen, hlen


@njit(cache=True)
def numvc(indptr, indices, cover, steps, seed, floor, indexed):
    """Improve the vertex cover ``cover`` (1 for a vertex in it) of the graph for ``steps`` steps, or until
    a cover of ``floor`` vertices (a lower bound; 0 if none) is found; ``cover`` is left holding the smallest cover
    found, whose size is returned.  ``indexed``: the cover's vertex to take out from the heap (else by a
    scan of the cover, cheaper where the degrees times the heap's depth exceed the vertex count)."""
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
    heap = np.empty(n, dtype=np.int64)
    hpos = -np.ones(n, dtype=np.int64)
    ulen = np.int64(0)
    for e in range(m):
        if not incover[eu[e]] and not incover[ev[e]]:
            uncovered[ulen] = e
            upos[e] = ulen
            ulen += 1
    _scores(incover, weight, eu, ev, dscore)
    hlen = _heap_build(incover, heap, hpos, dscore, moved)
    best = size if ulen == 0 else n + 1
    floor = max(floor, 1)  # an edge needs one vertex
    total = m
    limit = max(2, int(GAMMA_PER_VERTEX * n)) * m
    for step in range(1, steps + 1):
        if ulen == 0:  # a cover: recorded, then its vertex of highest dscore dropped
            if size < best:
                best = size
                for v in range(n):
                    cover[v] = incover[v]
            if best <= floor:
                break
            u = heap[0] if indexed else _highest(incover, dscore, moved)
            ulen, hlen = _move(u, OUT, step, indptr, indices, eid, weight, incover, dscore, conf, moved,
                               uncovered, upos, ulen, heap, hpos, hlen, indexed)
            size -= 1
            continue
        if size > 0:
            u = heap[0] if indexed else _highest(incover, dscore, moved)
            ulen, hlen = _move(u, OUT, step, indptr, indices, eid, weight, incover, dscore, conf, moved,
                               uncovered, upos, ulen, heap, hpos, hlen, indexed)
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
        ulen, hlen = _move(v, INTO, step, indptr, indices, eid, weight, incover, dscore, conf, moved, uncovered, upos,
                           ulen, heap, hpos, hlen, indexed)
        size += 1
        for j in range(ulen):  # the ends of an uncovered edge are outside the cover: the heap keeps
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
            if indexed:
                _heap_build(incover, heap, hpos, dscore, moved)
    if ulen == 0 and size < best:
        best = size
        for v in range(n):
            cover[v] = incover[v]
    return best
