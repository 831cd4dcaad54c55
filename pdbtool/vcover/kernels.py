"""The Numba kernels of the vertex cover search: the branch and bound itself, its lower bounds, and the
greedy cover that gives the first upper bound.

State of a node (arrays that the search changes in place and undoes from a trail):

* ``status[v]``: FREE (undecided), IN (in the cover) or OUT (left out: every neighbour is IN).
* ``deg[v]`` of a FREE vertex: its FREE neighbours, i.e. its uncovered edges.  An edge is uncovered when
  both ends are FREE; an OUT vertex never has a FREE neighbour.
* ``sc``: the scalars (cover size g, uncovered edges, trail length, depth, best size, nodes, phase).

The free graph is the FREE vertices of degree at least one and the uncovered edges.  Every bound below is a
lower bound on a minimum cover of the free graph (the tests check each against brute force):

* matching: a maximal matching (greedy), each edge needing one of its ends;
* static packing: vertex-disjoint cliques chosen at the root; a clique with f FREE vertices needs f - 1
  of them (its IN vertices are already counted in g; if one is OUT the rest are IN and f = 0);
* dynamic packing: at every node, a maximal set of vertex-disjoint cliques of FREE vertices (from the
  clique table, larger cliques first), each of k vertices needing k - 1;
* clique cover: the FREE vertices partitioned greedily into cliques (a colouring of the complement); a
  partition into c cliques of F vertices needs F - c.
* LP: half the size of a maximum matching of the free graph's bipartite double cover, rounded up (the
  half-integral LP relaxation's optimum).

Degree-0 vertices are left out and degree-1 vertices settled (their neighbour in) without branching;
otherwise the search branches on a FREE vertex of largest degree: in the cover, or out (its neighbours in).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._native.intrinsics import popcount, trailing_zeros

FREE, IN, OUT = 0, 1, 2

# flags of the bound and the search
F_MATCH = 1
F_STATIC = 2
F_DYNAMIC = 4
F_CLIQUES = 8
F_LP = 16
F_OUT_FIRST = 32

# indices of the scalar state sc
S_G, S_MFREE, S_TRAIL, S_DEPTH, S_BEST, S_NODES, S_PHASE, S_STAMP = range(8)
N_SCALARS = 8
PHASE_NODE, PHASE_BACK, PHASE_DONE = 0, 1, 2
# an empty queue: an int64, not a literal 0, so that the helpers taking a queue length are compiled once (a
# literal argument, or a counter started at a literal, gives a callee a specialization of its own)
EMPTY = np.int64(0)


@njit(cache=True)
def _take(v, status, deg, indptr, indices, trail, sc, queue, qlen):
    """Put FREE vertex v in the cover; its FREE neighbours lose an edge (queued when down to one)."""
    status[v] = IN
    trail[sc[S_TRAIL]] = v
    sc[S_TRAIL] += 1
    sc[S_G] += 1
    sc[S_MFREE] -= deg[v]
    for k in range(indptr[v], indptr[v + 1]):
        u = indices[k]
        if status[u] == FREE:
            deg[u] -= 1
            if deg[u] <= 1:
                queue[qlen] = u
                qlen += 1
    return qlen


@njit(cache=True)
def _drop(v, status, trail, sc):
    status[v] = OUT
    trail[sc[S_TRAIL]] = v
    sc[S_TRAIL] += 1


@njit(cache=True)
def _leave(v, status, deg, indptr, indices, trail, sc, queue, qlen):
    """Leave FREE vertex v out of the cover: every FREE neighbour goes in."""
    _drop(v, status, trail, sc)
    for k in range(indptr[v], indptr[v + 1]):
        u = indices[k]
        if status[u] == FREE:
            qlen = _take(u, status, deg, indptr, indices, trail, sc, queue, qlen)
    return qlen


@njit(cache=True)
def _settle(status, deg, indptr, indices, trail, sc, queue, qlen):
    """The degree-0 and degree-1 rules, until no queued vertex has degree below two."""
    while qlen > 0:
        qlen -= 1
        u = queue[qlen]
        if status[u] != FREE:
            continue
        if deg[u] == 1:
            for k in range(indptr[u], indptr[u + 1]):
                w = indices[k]
                if status[w] == FREE:
                    qlen = _take(w, status, deg, indptr, indices, trail, sc, queue, qlen)
                    break
        if deg[u] == 0:
            _drop(u, status, trail, sc)


@njit(cache=True)
def _undo_to(mark, status, deg, indptr, indices, trail, sc):
    while sc[S_TRAIL] > mark:
        sc[S_TRAIL] -= 1
        v = trail[sc[S_TRAIL]]
        if status[v] == IN:
            status[v] = FREE
            sc[S_G] -= 1
            for k in range(indptr[v], indptr[v + 1]):
                u = indices[k]
                if status[u] == FREE:
                    deg[u] += 1
            sc[S_MFREE] += deg[v]
        else:
            status[v] = FREE


# --- bounds -----------------------------------------------------------------------------------------------

@njit(cache=True)
def matching_bound(status, deg, indptr, indices, mark, stamp):
    """A maximal matching of the free graph, greedy in vertex order (``mark``: scratch, ``stamp`` unused in it)."""
    h = 0
    for v in range(status.shape[0]):
        if status[v] != FREE or deg[v] == 0 or mark[v] == stamp:
            continue
        for k in range(indptr[v], indptr[v + 1]):
            u = indices[k]
            if status[u] == FREE and mark[u] != stamp:
                mark[u] = stamp
                mark[v] = stamp
                h += 1
                break
    return h


@njit(cache=True)
def packing_bound(status, cl, clsize, rows, mark, stamp):
    """Greedy maximal packing of the cliques ``cl[:rows]`` (larger first) whose vertices are all FREE."""
    h = 0
    for r in range(rows):
        s = clsize[r]
        ok = True
        for j in range(s):
            v = cl[r, j]
            if status[v] != FREE or mark[v] == stamp:
                ok = False
                break
        if ok:
            for j in range(s):
                mark[cl[r, j]] = stamp
            h += s - 1
    return h


@njit(cache=True)
def static_bound(status, packed, packsize):
    """The root's vertex-disjoint cliques: each needs its FREE vertices but one."""
    h = 0
    for r in range(packed.shape[0]):
        f = 0
        for j in range(packsize[r]):
            if status[packed[r, j]] == FREE:
                f += 1
        if f > 1:
            h += f - 1
    return h


@njit(cache=True)
def clique_cover_bits(status, deg, adjbits, pbits, qbits, order_v, order_k):
    """Greedy clique cover of the free graph with bitsets: F free vertices in c cliques need F - c.  Returns
    (F, c); when ``order_v`` is not empty, each free vertex and its clique's number (1, 2, ...) are recorded
    in ``order_v`` and ``order_k`` in creation order (the clique-branching search reads them)."""
    n = status.shape[0]
    words = pbits.shape[0]
    record = order_v.shape[0] > 0
    for w in range(words):
        pbits[w] = 0
    free = 0
    for v in range(n):
        if status[v] == FREE and deg[v] > 0:
            pbits[v >> 6] |= np.uint64(1) << np.uint64(v & 63)
            free += 1
    cliques = 0
    at = 0
    for w in range(words):
        while pbits[w] != 0:
            v = w * 64 + trailing_zeros(pbits[w])
            pbits[w] &= pbits[w] - np.uint64(1)
            cliques += 1
            if record:
                order_v[at] = v
                order_k[at] = cliques
                at += 1
            any_left = False
            for x in range(w, words):
                qbits[x] = pbits[x] & adjbits[v, x]
                if qbits[x] != 0:
                    any_left = True
            x = w
            while any_left:
                while x < words and qbits[x] == 0:
                    x += 1
                if x == words:
                    break
                u = x * 64 + trailing_zeros(qbits[x])
                bit = np.uint64(1) << np.uint64(u & 63)
                pbits[x] &= ~bit
                for y in range(x, words):
                    qbits[y] &= adjbits[u, y]
                qbits[x] &= ~bit
                if record:
                    order_v[at] = u
                    order_k[at] = cliques
                    at += 1
    return free, cliques


@njit(cache=True)
def clique_cover_lists(status, deg, indptr, indices, mark, count, members):
    """The same greedy clique cover with adjacency lists (graphs too large for an adjacency bit matrix):
    ``count[u]`` counts the clique's members adjacent to u, so u may join when it equals the clique's size."""
    n = status.shape[0]
    for v in range(n):
        mark[v] = 0
    free = 0
    cliques = 0
    for v in range(n):
        if status[v] != FREE or deg[v] == 0:
            continue
        free += 1
        if mark[v]:
            continue
        mark[v] = 1
        cliques += 1
        size = 1
        members[0] = v
        for k in range(indptr[v], indptr[v + 1]):
            count[indices[k]] += 1
        for k in range(indptr[v], indptr[v + 1]):
            u = indices[k]
            if status[u] == FREE and mark[u] == 0 and count[u] == size:
                mark[u] = 1
                members[size] = u
                size += 1
                for j in range(indptr[u], indptr[u + 1]):
                    count[indices[j]] += 1
        for i in range(size):
            m = members[i]
            for j in range(indptr[m], indptr[m + 1]):
                count[indices[j]] = 0
    return free - cliques


@njit(cache=True)
def lp_bound(status, deg, indptr, indices, match_l, match_r, seen, stack_v, stack_k, stamp):
    """ceil(M / 2) for a maximum matching M of the free graph's bipartite double cover (the half-integral
    LP's optimum is M / 2), by augmenting paths from each left copy."""
    n = status.shape[0]
    for v in range(n):
        match_l[v] = -1
        match_r[v] = -1
    size = 0
    # greedy start
    for v in range(n):
        if status[v] != FREE or deg[v] == 0:
            continue
        for k in range(indptr[v], indptr[v + 1]):
            u = indices[k]
            if status[u] == FREE and match_r[u] == -1:
                match_l[v] = u
                match_r[u] = v
                size += 1
                break
    for root in range(n):
        if status[root] != FREE or deg[root] == 0 or match_l[root] != -1:
            continue
        stamp += 1
        top = 0
        stack_v[0] = root
        stack_k[0] = indptr[root]
        found = False
        while top >= 0 and not found:
            v = stack_v[top]
            advanced = False
            while stack_k[top] < indptr[v + 1]:
                u = indices[stack_k[top]]
                stack_k[top] += 1
                if status[u] != FREE or seen[u] == stamp:
                    continue
                seen[u] = stamp
                w = match_r[u]
                if w == -1:
                    # augment along the stack
                    for t in range(top, -1, -1):
                        a = stack_v[t]
                        nxt = match_l[a]
                        match_l[a] = u
                        match_r[u] = a
                        u = nxt
                    size += 1
                    found = True
                    break
                top += 1
                stack_v[top] = w
                stack_k[top] = indptr[w]
                advanced = True
                break
            if not advanced and not found:
                top -= 1
    return (size + 1) // 2, stamp


# --- the search ---------------------------------------------------------------------------------------------

@njit(cache=True)
def init_state(status, deg, indptr, indices, trail, sc, queue):
    """The root: every vertex FREE, degrees from the lists, the degree-0/1 rules applied."""
    n = status.shape[0]
    qlen = EMPTY
    m2 = 0
    for v in range(n):
        status[v] = FREE
        deg[v] = indptr[v + 1] - indptr[v]
        m2 += deg[v]
        if deg[v] <= 1:
            queue[qlen] = v
            qlen += 1
    sc[S_G] = 0
    sc[S_MFREE] = m2 // 2
    sc[S_TRAIL] = 0
    sc[S_DEPTH] = 0
    sc[S_NODES] = 0
    sc[S_PHASE] = PHASE_NODE
    _settle(status, deg, indptr, indices, trail, sc, queue, qlen)


@njit(cache=True)
def greedy_cover(indptr, indices, cover):
    """A cover by the greedy rule (a vertex of largest degree in, degree-0/1 rules between): its size, and
    ``cover[v]`` set to 1 for its vertices."""
    n = indptr.shape[0] - 1
    status = np.zeros(n, dtype=np.int8)
    deg = np.zeros(n, dtype=np.int64)
    trail = np.zeros(n + 1, dtype=np.int64)
    queue = np.zeros(3 * n + 8, dtype=np.int64)
    sc = np.zeros(N_SCALARS, dtype=np.int64)
    init_state(status, deg, indptr, indices, trail, sc, queue)
    # buckets by degree, lazily: a vertex is re-filed when its degree drops
    maxd = 0
    for v in range(n):
        if deg[v] > maxd:
            maxd = deg[v]
    head = -np.ones(maxd + 1, dtype=np.int64)
    nxt = -np.ones(n, dtype=np.int64)
    filed = np.zeros(n, dtype=np.int64)
    for v in range(n):
        if status[v] == FREE:
            nxt[v] = head[deg[v]]
            head[deg[v]] = v
            filed[v] = deg[v]
    d = maxd
    while sc[S_MFREE] > 0 and d >= 2:
        v = head[d]
        if v == -1:
            d -= 1
            continue
        head[d] = nxt[v]
        if status[v] != FREE or deg[v] < 2:
            continue
        if deg[v] != d:  # stale: re-file at its degree now
            nxt[v] = head[deg[v]]
            head[deg[v]] = v
            continue
        qlen = _take(v, status, deg, indptr, indices, trail, sc, queue, EMPTY)
        _settle(status, deg, indptr, indices, trail, sc, queue, qlen)
    for v in range(n):
        cover[v] = 1 if status[v] == IN else 0
    return sc[S_G]


@njit(cache=True)
def lower_bound(status, deg, indptr, indices, adjbits, cl, clsize, dyn_rows, packed, packsize, flags, sc,
                mark, work):
    """The max of the bounds that ``flags`` selects, at the current node.  ``work``: int64 scratch of
    7 n + 2 words, zero at the start; ``mark``: scratch compared with stamps, which only grow."""
    n = status.shape[0]
    h = 0
    if flags & F_MATCH:
        sc[S_STAMP] += 1
        b = matching_bound(status, deg, indptr, indices, mark, sc[S_STAMP])
        h = max(h, b)
    if flags & F_STATIC:
        h = max(h, static_bound(status, packed, packsize))
    if flags & F_DYNAMIC:
        sc[S_STAMP] += 1
        h = max(h, packing_bound(status, cl, clsize, dyn_rows, mark, sc[S_STAMP]))
    if flags & F_CLIQUES:
        if adjbits.shape[0] == n:
            words = adjbits.shape[1]
            pbits = work[7 * n:7 * n + words].view(np.uint64)
            qbits = work[7 * n + words:7 * n + 2 * words].view(np.uint64)
            free, cliques = clique_cover_bits(status, deg, adjbits, pbits, qbits, work[:0], work[:0])
            h = max(h, free - cliques)
        else:
            h = max(h, clique_cover_lists(status, deg, indptr, indices, work[2 * n:3 * n], work[:n],
                                          work[n:2 * n]))
    if flags & F_LP:
        b, stamp = lp_bound(status, deg, indptr, indices, work[3 * n:4 * n], work[4 * n:5 * n], mark,
                            work[5 * n:6 * n], work[6 * n:7 * n], sc[S_STAMP])
        sc[S_STAMP] = stamp + 1
        h = max(h, b)
    return h


@njit(cache=True)
def record_if_covered(status, sc, best_cover):
    """At a node with every edge covered: its cover is kept when smaller than the best.  Returns whether
    every edge is covered."""
    if sc[S_MFREE] != 0:
        return False
    if sc[S_G] < sc[S_BEST]:
        sc[S_BEST] = sc[S_G]
        for v in range(status.shape[0]):
            best_cover[v] = 1 if status[v] == IN else 0
    return True


@njit(cache=True)
def node_closed(status, sc, best_cover):
    """Count a node opened; whether it is done before its bound: every edge covered (its cover kept when
    smaller), or one more vertex would not beat the best."""
    sc[S_NODES] += 1
    return record_if_covered(status, sc, best_cover) or sc[S_G] + 1 >= sc[S_BEST]


@njit(cache=True)
def search(indptr, indices, adjbits, cl, clsize, dyn_rows, packed, packsize, flags, status, deg, trail, queue,
           fr_v, fr_child, fr_mark, fr_bound, sc, best_cover, mark, work, max_nodes):
    """Run the depth-first branch and bound from its saved state for at most ``max_nodes`` nodes.

    ``sc[S_PHASE]`` is PHASE_DONE once the tree is exhausted (then ``sc[S_BEST]`` is optimal and
    ``best_cover`` holds a minimum cover); otherwise call again to go on."""
    n = status.shape[0]
    budget = sc[S_NODES] + max_nodes
    out_first = (flags & F_OUT_FIRST) != 0
    while sc[S_NODES] < budget:
        if sc[S_PHASE] == PHASE_NODE:
            if node_closed(status, sc, best_cover):
                sc[S_PHASE] = PHASE_BACK
                continue
            h = lower_bound(status, deg, indptr, indices, adjbits, cl, clsize, dyn_rows, packed, packsize, flags,
                            sc, mark, work)
            if sc[S_G] + max(h, 1) >= sc[S_BEST]:
                sc[S_PHASE] = PHASE_BACK
                continue
            best_v = np.int64(-1)
            best_d = -1
            for v in range(n):
                if status[v] == FREE and deg[v] > best_d:
                    best_d = deg[v]
                    best_v = v
            d = sc[S_DEPTH]
            fr_v[d] = best_v
            fr_child[d] = 0
            fr_mark[d] = sc[S_TRAIL]
            fr_bound[d] = sc[S_G] + h
            sc[S_DEPTH] = d + 1
            if out_first:
                qlen = _leave(best_v, status, deg, indptr, indices, trail, sc, queue, EMPTY)
            else:
                qlen = _take(best_v, status, deg, indptr, indices, trail, sc, queue, EMPTY)
            _settle(status, deg, indptr, indices, trail, sc, queue, qlen)
        elif sc[S_PHASE] == PHASE_BACK:
            if sc[S_DEPTH] == 0:
                sc[S_PHASE] = PHASE_DONE
                break
            d = sc[S_DEPTH] - 1
            _undo_to(fr_mark[d], status, deg, indptr, indices, trail, sc)
            if fr_child[d] == 1:
                sc[S_DEPTH] = d
                continue
            fr_child[d] = 1
            v = fr_v[d]
            if out_first:
                if sc[S_G] + 1 >= sc[S_BEST]:
                    continue
                qlen = _take(v, status, deg, indptr, indices, trail, sc, queue, EMPTY)
            else:
                if sc[S_G] + deg[v] >= sc[S_BEST]:
                    continue
                qlen = _leave(v, status, deg, indptr, indices, trail, sc, queue, EMPTY)
            _settle(status, deg, indptr, indices, trail, sc, queue, qlen)
            sc[S_PHASE] = PHASE_NODE
        else:
            break


@njit(cache=True)
def open_bound(fr_bound, sc, root_bound):
    """A proven lower bound while the search is stopped: no open subtree is below its frame's g + h (before
    the first branch, the root's)."""
    low = sc[S_BEST]
    if sc[S_PHASE] == PHASE_DONE:
        return low
    if sc[S_DEPTH] == 0:
        return min(low, root_bound)
    for d in range(sc[S_DEPTH]):
        if fr_bound[d] < low:
            low = fr_bound[d]
    return low


@njit(cache=True)
def adjacency_bits(indptr, indices, words):
    n = indptr.shape[0] - 1
    bits = np.zeros((n, words), dtype=np.uint64)
    for v in range(n):
        for k in range(indptr[v], indptr[v + 1]):
            u = indices[k]
            bits[v, u >> 6] |= np.uint64(1) << np.uint64(u & 63)
    return bits


@njit(cache=True)
def count_bits(bits):
    c = 0
    for w in range(bits.shape[0]):
        c += popcount(bits[w])
    return c
