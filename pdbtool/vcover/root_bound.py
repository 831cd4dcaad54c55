"""A tighter clique-cover bound for a component's root: first-fit clique partitions improved by iterated
greedy (Culberson's, on the complement's colourings).

The search's clique cover (:func:`.kernels.clique_cover_bits`) builds one clique at a time in the vertex
order the branching needs; on large sparse kernels it leaves many more cliques than a partition needs, and
a root bound short of the first cover means a search even where the first cover is optimal.  Here each
vertex, in order, joins the first clique all of whose members are its neighbours (found from its adjacency
list: a clique's count of the vertex's neighbours equals its size); the cliques are then put in another
order (largest first, reversed, or shuffled by a seeded generator) and the partition made again in that
order, which never makes more cliques (each clique's vertices can always rejoin it or an earlier one).  A
partition of F free vertices into c cliques needs F - c of them in any cover.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._native import numba_cache  # noqa: F401  (the package-wide cache stamp)
from .kernels import FREE

@njit(cache=True)
def _first_fit(order, count, indptr, indices, status, deg, clique, size, seen):
    """Partition the vertices of ``order`` into cliques, each joining the first clique that it is adjacent
    to entirely; ``clique[v]`` is its clique, ``size[c]`` each clique's size; returns the cliques."""
    cliques = np.int64(0)  # not a literal: one compiled specialization of its callers' calls
    for i in range(count):
        v = order[i]
        best = cliques
        for k in range(indptr[v], indptr[v + 1]):       # count v's neighbours in each clique so far
            u = indices[k]
            if status[u] == FREE and deg[u] > 0 and clique[u] >= 0:
                seen[clique[u]] += 1
        for k in range(indptr[v], indptr[v + 1]):
            u = indices[k]
            if status[u] == FREE and deg[u] > 0 and clique[u] >= 0:
                c = clique[u]
                if seen[c] == size[c] and c < best:
                    best = c
        for k in range(indptr[v], indptr[v + 1]):
            u = indices[k]
            if status[u] == FREE and deg[u] > 0 and clique[u] >= 0:
                seen[clique[u]] = 0
        clique[v] = best
        if best == cliques:
            size[cliques] = 0
            cliques += 1
        size[best] += 1
    return cliques


@njit(cache=True)
def _stable_order(key, span, slot, out):
    """Counting sort: the indices ``i`` with ``key[i] >= 0`` into ``out``, by increasing key (below ``span``),
    ties in increasing ``i``; ``slot`` has room for ``span + 1`` counts.  Returns how many."""
    for s in range(span + 1):
        slot[s] = 0
    for i in range(key.shape[0]):
        if key[i] >= 0:
            slot[key[i] + 1] += 1
    for s in range(1, span + 1):
        slot[s] += slot[s - 1]
    for i in range(key.shape[0]):
        if key[i] >= 0:
            out[slot[key[i]]] = i
            slot[key[i]] += 1
    return slot[span]


@njit(cache=True)
def iterated_clique_cover(indptr, indices, status, deg, rounds, seed):
    """F - c for the best partition of the free graph's F vertices (FREE, degree at least one) into c
    cliques that first fit by decreasing degree and ``rounds`` of iterated greedy find.  The orders are
    made by counting sorts (by degree, by a clique's size, by a clique's rank; ties to the lower number):
    no general sort is compiled."""
    n = status.shape[0]
    np.random.seed(seed)
    count = np.int64(0)
    top = np.int64(0)
    for v in range(n):
        if status[v] == FREE and deg[v] > 0:
            count += 1
            top = max(top, deg[v])
    if count == 0:
        return count
    # decreasing degree, then increasing number
    slot = np.zeros(max(top, count) + 2, dtype=np.int64)
    key = -np.ones(n, dtype=np.int64)
    for v in range(n):
        if status[v] == FREE and deg[v] > 0:
            key[v] = top - deg[v]
    order = np.empty(count, dtype=np.int64)
    _stable_order(key, top + 1, slot, order)
    clique = -np.ones(n, dtype=np.int64)
    size = np.zeros(count + 1, dtype=np.int64)
    seen = np.zeros(count + 1, dtype=np.int64)
    best = _first_fit(order, count, indptr, indices, status, deg, clique, size, seen)
    cliques = best
    rank = np.empty(count + 1, dtype=np.int64)
    perm = np.empty(count + 1, dtype=np.int64)
    for _ in range(rounds):
        pick = np.random.random()
        if pick < 0.4:       # the largest cliques first (ties: the earlier clique first)
            _stable_order(count - size[:cliques], count + 1, slot, perm)
        elif pick < 0.7:     # the last first
            for i in range(cliques):
                perm[i] = cliques - 1 - i
        else:                # shuffled (the Fisher-Yates draws of np.random.shuffle)
            for i in range(cliques):
                perm[i] = i
            i = cliques - 1
            while i > 0:
                j = np.random.randint(0, i + 1)
                perm[i], perm[j] = perm[j], perm[i]
                i -= 1
        for i in range(cliques):
            rank[perm[i]] = i
        # the vertices by their clique's rank, then by number
        for v in range(n):
            key[v] = rank[clique[v]] if clique[v] >= 0 else -1
            clique[v] = -1
        _stable_order(key, cliques, slot, order)
        cliques = _first_fit(order, count, indptr, indices, status, deg, clique, size, seen)
        if cliques < best:
            best = cliques
    return count - best
