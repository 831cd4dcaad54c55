"""The search kernels: A* with duplicate detection over the lattice of prefix lengths, and its
partial-expansion variant (PEA*), resumable in chunks so that the driver can check time and memory.

State lives in plain arrays that the driver owns and grows:

* the node pool (append-only): ``key`` (the packed coordinates), ``g``, ``parent`` (a node id), ``qf``
  (the f of the node's live open-list entry, -1 once closed), ``fexp`` (PEA*: the f up to which its
  children have been offered);
* the index: an open-addressing hash table of node ids (-1 empty), linear probing, power-of-two size;
* the open list: a binary heap of (priority, node id), priority ``f << 30 | (2**30 - 1 - g)`` (the smallest
  f first, then the deepest), with stale entries skipped on pop.

``st`` holds the counters: see the ``S_*`` indices.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._native import numba_cache  # noqa: F401  (the package-wide cache stamp)

from .dp import INF

S_HEAP, S_NODES, S_EXPANDED, S_GENERATED, S_GOAL, S_STATUS, S_LAST_F, S_PRUNED, S_STORED_MAX = range(9)
ST_SIZE = 9
RUNNING, FOUND, EXHAUSTED, NEEDS_ROOM = 0, 1, 2, 3
G_BITS = 30
G_MASK = (1 << G_BITS) - 1


@njit(cache=True, inline="always")
def _hash(key, mask):
    h = np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)
    return np.int64(h >> np.uint64(20)) & mask


@njit(cache=True)
def index_find(index, keys, key):
    mask = index.shape[0] - 1
    pos = _hash(key, mask)
    while True:
        nid = index[pos]
        if nid < 0:
            return -1 - pos
        if keys[nid] == key:
            return nid
        pos = (pos + 1) & mask


@njit(cache=True)
def index_insert(index, keys, first, end):
    """Enter the nodes ``first`` to ``end`` - 1 into the index (a grown one is rebuilt in slices, so that a stop
    request is seen between them)."""
    mask = index.shape[0] - 1
    for nid in range(first, end):
        pos = _hash(keys[nid], mask)
        while index[pos] >= 0:
            pos = (pos + 1) & mask
        index[pos] = nid


@njit(cache=True, inline="always")
def _push(hprio, hnode, size, prio, nid):
    i = size
    while i > 0:
        parent = (i - 1) >> 1
        if hprio[parent] <= prio:
            break
        hprio[i] = hprio[parent]
        hnode[i] = hnode[parent]
        i = parent
    hprio[i] = prio
    hnode[i] = nid
    return size + 1


@njit(cache=True, inline="always")
def _pop(hprio, hnode, size):
    """Remove the top of a heap of ``size`` entries (the caller read it); returns the new size."""
    size -= 1
    prio, nid = hprio[size], hnode[size]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and hprio[child + 1] < hprio[child]:
            child += 1
        if hprio[child] >= prio:
            break
        hprio[i] = hprio[child]
        hnode[i] = hnode[child]
        i = child
    hprio[i] = prio
    hnode[i] = nid
    return size


@njit(cache=True, inline="always")
def priority(f, g):
    return (np.int64(f) << G_BITS) | (G_MASK - g)


@njit(cache=True, inline="always")
def pair_value(p, x, ptab, poff, pi, pj, pw, ptab2, gg, rest):
    cell = poff[p] + x[pi[p]] * pw[p] + x[pj[p]]
    v = ptab[cell]
    if gg > 0:
        w = ptab2[cell] + gg * rest
        if w > v:
            v = w
    return v


@njit(cache=True, inline="always")
def pair_index(i, j, k):
    """The index of the pair (i, j), i < j, in the order of itertools.combinations."""
    return i * k - i * (i + 1) // 2 + (j - i - 1)


@njit(cache=True)
def heuristic_at(x, k, ptab, poff, pi, pj, pw, trows, trow, tcells, tplain, ta, tb, tc, tw,
                 part_pairs, pp_off, part_tris, pt_off, ptab2, gg, lens, share, pv, tv):
    """The max over the partitions of the sum of their pairwise and three-way table values at ``x``;
    ``INF`` when a three-way table has no cell there (no alignment within the upper bound passes).

    With ``gg`` > 0 (two gaps cost ``gg``), a pair's value is the larger of its table and ``ptab2`` (the
    same dynamic program with every column ``gg`` cheaper) plus ``gg`` times the columns left at least
    (the longest remaining suffix); a triangle's table (its columns ``3 gg`` cheaper) adds ``3 gg`` times the
    same, takes at least its unshifted table ``tplain`` (the same region) and the sum of its three pairs.
    ``pv`` and ``tv`` (one entry a pair, one a triangle, at least one) are scratch space, passed in so that a
    search allocates them once rather than at every node."""
    rest = 0
    if gg > 0:
        for i in range(k):
            if lens[i] - x[i] > rest:
                rest = lens[i] - x[i]
    # Each pair's and each triangle's value once, then every partition's sum from them: the max over many
    # partitions (every packing of triangles, the per-node choice) costs little more than one.
    for p in range(pi.shape[0]):
        pv[p] = pair_value(p, x, ptab, poff, pi, pj, pw, ptab2, gg, rest)
    nt = ta.shape[0]
    for t in range(nt):
        r = 2 * (trows[t] + x[ta[t]] * tw[t] + x[tb[t]])
        span = trow[r + 1]
        xc = x[tc[t]]
        if xc < (span & 0xFFFFFFFF) or xc >= (span >> 32):
            return INF
        cell = trow[r] + xc
        v = tcells[cell]
        if v >= INF:
            return INF
        a, b, c = ta[t], tb[t], tc[t]
        w = pv[pair_index(a, b, k)] + pv[pair_index(a, c, k)] + pv[pair_index(b, c, k)]
        if gg > 0:
            v += 3 * gg * rest
            u = tplain[cell]
            if u > v:
                v = u
        # at least its three pairs' sum (with gg, their two-gap bound may be the larger)
        tv[t] = v if v > w else w
    best = 0
    if share > 0:
        # Every triangle held, each pair in ``share`` of them: an alignment's cost is the sum over all
        # triangles of their pairs' costs divided by ``share``, so the same average of the triangles' values
        # is a bound too (a fractional packing; its floor stays consistent, the costs being integers).
        total = 0
        for t in range(nt):
            total += tv[t]
        best = total // share
    for q in range(pp_off.shape[0] - 1):
        total = 0
        for e in range(pp_off[q], pp_off[q + 1]):
            total += pv[part_pairs[e]]
        for e in range(pt_off[q], pt_off[q + 1]):
            total += tv[part_tris[e]]
        if total > best:
            best = total
    return best


@njit(cache=True, nogil=True)
def search(codes, seq_off, lens, strides, sub, gap, gap_gap, bound,
           ptab, poff, pi, pj, pw, trows, trow, tcells, tplain, ta, tb, tc, tw,
           part_pairs, pp_off, part_tris, pt_off, ptab2, gg, lens2, share,
           keys, g_of, parent, qf, fexp, index, hprio, hnode, st, partial, chunk):
    """Run A* (``partial`` < 0) or PEA* (``partial`` >= 0: offer only the children with f at most the node's f
    plus ``partial``, and put the node back at its least f above that) for at most ``chunk`` expansions.

    Returns with ``st[S_STATUS]`` FOUND (``st[S_GOAL]`` the goal's node), EXHAUSTED (no alignment within
    ``bound``), NEEDS_ROOM (the pool, index or heap must grow first) or RUNNING (the chunk is done).  Nodes
    with f above ``bound`` are not stored."""
    k = lens.shape[0]
    nmoves = (1 << k) - 1
    goal_key = np.int64(0)
    for i in range(k):
        goal_key += np.int64(lens[i]) * strides[i]
    x = np.empty(k, dtype=np.int64)
    y = np.empty(k, dtype=np.int64)
    pc = np.empty(k * k, dtype=np.int64)   # the pair costs of a column of both residues at x
    ch = np.empty(k, dtype=np.int64)
    pv = np.empty(pi.shape[0], dtype=np.int64)
    tv = np.empty(max(ta.shape[0], 1), dtype=np.int64)
    max_nodes = keys.shape[0]
    max_index_load = index.shape[0] // 2
    hcap = hprio.shape[0]
    done = 0
    st[S_STATUS] = RUNNING
    while done < chunk:
        size = st[S_HEAP]
        if size == 0:
            st[S_STATUS] = EXHAUSTED
            return
        if st[S_NODES] + nmoves > max_nodes or st[S_NODES] + nmoves > max_index_load or size + nmoves + 1 > hcap:
            st[S_STATUS] = NEEDS_ROOM
            return
        prio = hprio[0]
        nid = hnode[0]
        st[S_HEAP] = _pop(hprio, hnode, size)
        f = prio >> G_BITS
        g = G_MASK - (prio & G_MASK)
        if qf[nid] != f or g_of[nid] != g:
            continue    # stale: the node was closed, or reached again more cheaply
        key = keys[nid]
        if f > st[S_LAST_F]:
            st[S_LAST_F] = f
        if key == goal_key:
            st[S_STATUS] = FOUND
            st[S_GOAL] = nid
            return
        done += 1
        st[S_EXPANDED] += 1
        for i in range(k):
            x[i] = (key // strides[i]) % (lens[i] + 1)
        for i in range(k):
            for j in range(i + 1, k):
                if x[i] < lens[i] and x[j] < lens[j]:
                    pc[i * k + j] = sub[codes[seq_off[i] + x[i]], codes[seq_off[j] + x[j]]]
        threshold = f + partial if partial >= 0 else np.int64(1) << 40
        above = np.int64(1) << 40
        lowest = fexp[nid]
        for mv in range(1, nmoves + 1):
            ok = True
            ckey = key
            for i in range(k):
                b = (mv >> i) & 1
                ch[i] = b
                if b:
                    if x[i] >= lens[i]:
                        ok = False
                        break
                    ckey += strides[i]
                y[i] = x[i] + b
            if not ok:
                continue
            cost = 0
            for i in range(k):
                for j in range(i + 1, k):
                    if ch[i] and ch[j]:
                        cost += pc[i * k + j]
                    elif ch[i] or ch[j]:
                        cost += gap
                    else:
                        cost += gap_gap
            gc = g + cost
            # A child already stored is looked up before its heuristic: closed, or open with a g no worse,
            # it is passed over as it would be after the heuristic; open and reached more cheaply under A*,
            # its heuristic is the one its open entry holds (f - g).  Only new children, and those of PEA*,
            # whose open entries hold other f values, have their heuristic computed.
            found = index_find(index, keys, ckey)
            if found >= 0 and (qf[found] < 0 or g_of[found] <= gc):
                continue
            if found >= 0 and partial < 0:
                h = np.int64(qf[found] - g_of[found])
            else:
                h = heuristic_at(y, k, ptab, poff, pi, pj, pw, trows, trow, tcells, tplain, ta, tb,
                                 tc, tw, part_pairs, pp_off, part_tris, pt_off, ptab2, gg, lens2, share, pv, tv)
                st[S_GENERATED] += 1
            if h >= INF:
                st[S_PRUNED] += 1
                continue
            fc = gc + h
            if fc > bound:
                st[S_PRUNED] += 1
                continue
            if fc > threshold:
                if fc < above:
                    above = fc
                continue
            if fc <= lowest:
                continue    # offered at an earlier partial expansion of this node
            if found >= 0:
                # open and reached more cheaply (a consistent heuristic closes a node with its least g)
                g_of[found] = gc
                parent[found] = nid
                qf[found] = fc
                st[S_HEAP] = _push(hprio, hnode, st[S_HEAP], priority(fc, gc), found)
            else:
                new = st[S_NODES]
                st[S_NODES] = new + 1
                keys[new] = ckey
                g_of[new] = gc
                parent[new] = nid
                qf[new] = fc
                fexp[new] = -1
                index[-1 - found] = new
                st[S_HEAP] = _push(hprio, hnode, st[S_HEAP], priority(fc, gc), new)
        if partial >= 0 and above < (np.int64(1) << 40):
            fexp[nid] = threshold
            qf[nid] = above
            st[S_HEAP] = _push(hprio, hnode, st[S_HEAP], priority(above, g), nid)
        else:
            qf[nid] = -1
    st[S_STATUS] = RUNNING


@njit(cache=True)
def path_keys(keys, parent, goal):
    """The keys of the path from the start to the node ``goal`` (start first)."""
    n = 0
    nid = goal
    while nid >= 0:
        n += 1
        nid = parent[nid]
    out = np.empty(n, dtype=np.int64)
    nid = goal
    for i in range(n - 1, -1, -1):
        out[i] = keys[nid]
        nid = parent[nid]
    return out


@njit(cache=True)
def node_heuristics(k, lens, strides, ptab, poff, pi, pj, pw, trows, trow, tcells, tplain, ta, tb, tc, tw,
                    part_pairs, pp_off, part_tris, pt_off, ptab2, gg, lens2, share):
    """The heuristic at every lattice node, indexed by the packed key (the tests run it on small instances;
    with every length 0, it is the start's alone)."""
    total = np.int64(1)
    for i in range(k):
        total *= lens[i] + 1
    out = np.empty(total, dtype=np.int64)
    x = np.empty(k, dtype=np.int64)
    pv = np.empty(pi.shape[0], dtype=np.int64)
    tv = np.empty(max(ta.shape[0], 1), dtype=np.int64)
    for key in range(total):
        for i in range(k):
            x[i] = (key // strides[i]) % (lens[i] + 1)
        out[key] = heuristic_at(x, k, ptab, poff, pi, pj, pw, trows, trow, tcells, tplain, ta, tb, tc,
                                tw, part_pairs, pp_off, part_tris, pt_off, ptab2, gg, lens2, share, pv, tv)
    return out
