"""The branch and bound that branches on a clique cover, as maximum clique solvers do (Tomita's MCS on the
complement graph): at each node the free vertices are covered greedily by cliques; the vertices of the
first cliques, which the bound already pays for, are not branched on (Re-NUMBER moves vertices into them,
and the MaxSAT-style test of :mod:`.maxsat` takes more off the branching list), and the rest are branched
on from the last down.  The node state and its helpers are those of :mod:`.kernels`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._native.intrinsics import popcount, trailing_zeros
from .kernels import (EMPTY, F_CLIQUES, F_OUT_FIRST, FREE, PHASE_BACK, PHASE_DONE, PHASE_NODE, S_BEST, S_DEPTH, S_G,
                      S_NODES, S_PHASE, S_TRAIL, _leave, _settle, _take, _undo_to, clique_cover_bits,
                      lower_bound, node_closed, record_if_covered)
from .maxsat import tighten



@njit(cache=True)
def renumber(adjbits, order_v, order_k, free, c, kmin, cbits, csize):
    """Tomita's Re-NUMBER on the clique cover: a vertex of a clique above ``kmin`` moves into clique k1 <=
    kmin when it is adjacent to all of k1 but one vertex w, which itself moves to a clique k2 (k1 < k2 <=
    kmin) adjacent to all of it.  Moved vertices get number -1 in ``order_k``; returns the cliques left
    non-empty."""
    words = adjbits.shape[1]
    for k in range(c):
        csize[k] = 0
        for x in range(words):
            cbits[k, x] = 0
    for i in range(free):
        v = order_v[i]
        k = order_k[i] - 1
        cbits[k, v >> 6] |= np.uint64(1) << np.uint64(v & 63)
        csize[k] += 1
    for i in range(free - 1, -1, -1):
        k = order_k[i]
        if k <= kmin:
            break
        v = order_v[i]
        for k1 in range(kmin):
            cnt = 0
            w = -1
            for x in range(words):
                m = cbits[k1, x] & ~adjbits[v, x]
                if m != 0:
                    cnt += popcount(m)
                    if cnt > 1:
                        break
                    w = x * 64 + trailing_zeros(m)
            if cnt > 1:
                continue
            if cnt == 1:
                k2 = k1 + 1
                while k2 < kmin:
                    ok = True
                    for x in range(words):
                        if cbits[k2, x] & ~adjbits[w, x] != 0:
                            ok = False
                            break
                    if ok:
                        break
                    k2 += 1
                if k2 == kmin:
                    continue
                wb = np.uint64(1) << np.uint64(w & 63)
                cbits[k1, w >> 6] &= ~wb
                cbits[k2, w >> 6] |= wb
                csize[k2] += 1
                csize[k1] -= 1
            vb = np.uint64(1) << np.uint64(v & 63)
            cbits[k - 1, v >> 6] &= ~vb
            csize[k - 1] -= 1
            cbits[k1, v >> 6] |= vb
            csize[k1] += 1
            order_k[i] = -1
            break
    left = 0
    for k in range(c):
        if csize[k] > 0:
            left += 1
    return left


@njit(cache=True)
def branch_buffer_short(n, fr_start, fr_len, sc, length):
    """Whether the next node's branching list might not fit in a buffer of ``length``."""
    d = sc[S_DEPTH]
    return sc[S_PHASE] == PHASE_NODE and (0 if d == 0 else fr_start[d - 1] + fr_len[d - 1] + 1) + n + 1 > length


@njit(cache=True)
def _active(status, deg):
    c = 0
    for v in range(status.shape[0]):
        if status[v] == FREE and deg[v] > 0:
            c += 1
    return c


@njit(cache=True)
def search_cover(indptr, indices, adjbits, cl, clsize, dyn_rows, packed, packsize, flags, status, deg, trail, queue,
                 fr_start, fr_len, fr_pos, fr_mark, fr_bound, buf_v, buf_k, sc, best_cover, mark, work, cbits,
                 max_nodes):
    """The branch and bound of :func:`search`, branching as maximum clique solvers do (Tomita's MCS, on the
    complement): at a node, the free vertices are partitioned greedily into cliques 1..c; a vertex of clique
    k is left out (its neighbours in) in one child and put in the cover for its later siblings, from the
    last clique down; once every remaining vertex lies in cliques 1..k, a node with g + F - k >= best (F free
    vertices) is done, so the vertices of the first cliques are never branched on."""
    n = status.shape[0]
    words = adjbits.shape[1]
    pbits = work[7 * n:7 * n + words].view(np.uint64)
    qbits = work[7 * n + words:7 * n + 2 * words].view(np.uint64)
    order_v = work[3 * n:4 * n]
    order_k = work[4 * n:5 * n]
    base = 7 * n + 2 * words + 8  # the MaxSAT tightening's scratch, when work is long enough
    budget = sc[S_NODES] + max_nodes
    others = flags & ~(F_CLIQUES | F_OUT_FIRST)
    while sc[S_NODES] < budget:
        if sc[S_PHASE] == PHASE_NODE:
            d = sc[S_DEPTH]
            if (0 if d == 0 else fr_start[d - 1] + fr_len[d - 1] + 1) + n + 1 > buf_v.shape[0]:
                break  # the caller grows buf_v and buf_k (branch_buffer_short) and calls again
            if node_closed(status, sc, best_cover):
                sc[S_PHASE] = PHASE_BACK
                continue
            free, c = clique_cover_bits(status, deg, adjbits, pbits, qbits, order_v, order_k)
            h = free - c
            if others != 0 and sc[S_G] + h < sc[S_BEST]:
                h = max(h, lower_bound(status, deg, indptr, indices, adjbits, cl, clsize, dyn_rows, packed, packsize,
                                       others, sc, mark, work))
            if sc[S_G] + max(h, 1) >= sc[S_BEST]:
                sc[S_PHASE] = PHASE_BACK
                continue
            kmin = sc[S_G] + free - sc[S_BEST]
            if kmin > 0 and cbits.shape[0] >= n:
                c = renumber(adjbits, order_v, order_k, free, c, kmin, cbits, work[5 * n:6 * n])
                if sc[S_G] + free - c >= sc[S_BEST]:
                    sc[S_PHASE] = PHASE_BACK
                    continue
                if cbits.shape[0] == 3 * n and work.shape[0] >= base + 4 * n:
                    tighten(adjbits, order_v, order_k, free, kmin, cbits, cbits[n:2 * n], cbits[2 * n:],
                            work[base:base + n],
                            work[base + n:base + 2 * n], work[base + 2 * n:base + 3 * n],
                            work[base + 3 * n:base + 4 * n])
            d = sc[S_DEPTH]
            start = 0 if d == 0 else fr_start[d - 1] + fr_len[d - 1] + 1
            length = 0
            for i in range(free - 1, -1, -1):
                if order_k[i] == -1:
                    continue
                if order_k[i] <= kmin:
                    break
                buf_v[start + length] = order_v[i]
                buf_k[start + length] = order_k[i]
                length += 1
            buf_k[start + length] = kmin  # after the list: the cliques never branched on
            fr_start[d] = start
            fr_len[d] = length
            fr_pos[d] = 0
            fr_mark[d] = sc[S_TRAIL]
            fr_bound[d] = sc[S_G] + h
            sc[S_DEPTH] = d + 1
            sc[S_PHASE] = PHASE_BACK
        elif sc[S_PHASE] == PHASE_BACK:
            if sc[S_DEPTH] == 0:
                sc[S_PHASE] = PHASE_DONE
                break
            d = sc[S_DEPTH] - 1
            _undo_to(fr_mark[d], status, deg, indptr, indices, trail, sc)
            pos = fr_pos[d]
            start = fr_start[d]
            length = fr_len[d]
            if pos > length:  # the node left once every listed vertex was in: explored
                sc[S_DEPTH] = d
                continue
            if pos > 0:
                u = buf_v[start + pos - 1]
                if status[u] == FREE and deg[u] > 0:
                    qlen = _take(u, status, deg, indptr, indices, trail, sc, queue, EMPTY)
                    _settle(status, deg, indptr, indices, trail, sc, queue, qlen)
                fr_mark[d] = sc[S_TRAIL]
            if record_if_covered(status, sc, best_cover):
                sc[S_DEPTH] = d
                continue
            if pos == length:
                # every listed vertex is in; the rest lie in the first kmin cliques, but vertices left out
                # by the degree rule since may have made g + F - kmin fall below best: then search on
                fr_pos[d] = length + 1
                if sc[S_G] + _active(status, deg) - buf_k[start + length] >= sc[S_BEST]:
                    sc[S_DEPTH] = d
                else:
                    sc[S_PHASE] = PHASE_NODE
                continue
            v = buf_v[start + pos]
            k = buf_k[start + pos]
            fr_pos[d] = pos + 1
            if sc[S_G] + _active(status, deg) - k >= sc[S_BEST]:
                sc[S_DEPTH] = d
                continue
            if status[v] != FREE or deg[v] == 0 or sc[S_G] + deg[v] >= sc[S_BEST]:
                continue
            qlen = _leave(v, status, deg, indptr, indices, trail, sc, queue, EMPTY)
            _settle(status, deg, indptr, indices, trail, sc, queue, qlen)
            sc[S_PHASE] = PHASE_NODE
        else:
            break
