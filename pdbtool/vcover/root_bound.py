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
    cliques = 0
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
def iterated_clique_cover(indptr, indices, status, deg, rounds, seed):
    """F - c for the best partition of the free graph's F vertices (FREE, degree at least one) into c
    cliques that first fit by decreasing degree and ``rounds`` of iterated greedy find."""
    n = status.shape[0]
    np.random.seed(seed)
    count = 0
    for v in range(n):
        if status[v] == FREE and deg[v] > 0:
            count += 1
    if count == 0:
        return 0
    order = np.empty(count, dtype=np.int64)
    keys = np.empty(count, dtype=np.int64)
    at = 0
    for v in range(n):
        if status[v] == FREE and deg[v] > 0:
            order[at] = v
            keys[at] = -deg[v] * (n + 1) + v            # decreasing degree, then increasing number
            at += 1
    order = order[np.argsort(keys)]
    clique = -np.ones(n, dtype=np.int64)
    size = np.zeros(count + 1, dtype=np.int64)
    seen = np.zeros(count + 1, dtype=np.int64)
    best = _first_fit(order, count, indptr, indices, status, deg, clique, size, seen)
    cliques = best
    rank = np.empty(count + 1, dtype=np.int64)
    for _ in range(rounds):
        pick = np.random.random()
        perm = np.arange(cliques)
        if pick < 0.4:       # the largest cliques first
            perm = np.argsort(-size[:cliques], kind="mergesort")
        elif pick < 0.7:     # the last first
            perm = perm[::-1].copy()
        else:
            np.random.shuffle(perm)
        for i in range(cliques):
            rank[perm[i]] = i
        keys = np.empty(count, dtype=np.int64)
        for i in range(count):
            keys[i] = rank[clique[order[i]]] * (n + 1) + order[i]
        order = order[np.argsort(keys)]
        for i in range(count):
            clique[order[i]] = -1
        cliques = _first_fit(order, count, indptr, indices, status, deg, clique, size, seen)
        if cliques < best:
            best = cliques
    return count - best
