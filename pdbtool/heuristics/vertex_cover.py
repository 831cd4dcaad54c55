"""The conflict hypergraph of a state and its exact minimum weighted vertex cover, updated move by move.

Vertices are tiles.  A pair of tiles whose table adds 2w moves over their Manhattan distances is an edge of
weight w (w = 1 almost always); a triple that adds 2w moves, more than its three pairs force, is a
hyperedge of weight w.  A *cover* gives every tile a whole number y_t >= 0 of extra move pairs such that
every (hyper)edge e is covered: the sum of y_t over its tiles is at least w_e.  The heuristic is Manhattan
plus twice the least total cover (the README says why it is admissible).  With a ``-region`` set a group's
weight also depends on the blank's region among the group's tiles (the blank's cell is ``g[POS, 0]``); only a
move of one of the group's tiles changes that region, so a move still changes the moved tile's edges only.

The least cover is NP-hard in general, but conflict graphs are small and sparse: it is the sum over the
connected components, each solved exactly.  Rules that keep the least cover exact (:func:`_reduce`: a tile
in one constraint only leaves it; a constraint left with one tile fixes that tile's value) solve a forest
of constraints outright and leave a core in which every tile is in two constraints or more; the core is
solved by a branch and bound on the value of its busiest tile, each child reduced again, pruned with a
packing bound (the residual weights of vertex-disjoint constraints, the hypergraph analogue of a matching).

Incremental update: a move changes one tile t, so only t's edges change.  Every vertex keeps the mask and
the cover of its component.  With A the component of t before the move and B after it, A | B is a union of
whole components in both graphs (A and the old components of t's new neighbours), so h changes by (covers
of the new components inside A | B) - (covers of the old ones); A | B's constraints are listed once and
split into the new components there.  When t has no edge before or after, nothing is computed at all.
Working that out changes nothing in the graph (:func:`try_move`): t's new edges wait, and only a move that
the search enters puts them in, saving what they replace (t's old edges, the old components' masks and
covers) in a row per depth, which backtracking puts back (:func:`commit_saving`, :func:`restore_move`).

Loops that keep some of a list's items (the packing bound, the reductions' compaction, the branch and
bound's children, the listing and splitting of constraints) are branch-free: every item is written and the
index advances by the test's outcome (each output row is at least as long as the list it is drawn from,
so a write past the last kept item stays inside it), and a choice is a mask of all ones or zeros.  Which items are kept
depends on the data, so a branch on it is hard to predict; together these cost 5 % less CPU per node on
24-puzzle #1 with ``-region`` than the branching loops did.

The look-ups of a move index ``look`` with unsigned integers (``np.uint64``).  Numba wraps a negative index
around, so for a signed index that LLVM cannot prove non-negative it adds a test and an add on the address
(two instructions on a chain of dependent loads, and the array's length held in a register); in the
vectorized filter pass it made every element a scalar load with its own wraparound.  Unsigned indices
have none: 4.3 % less CPU per node on 24-puzzle #1 with ``-region`` (docs/design.md).  Elsewhere the same
casts gained nothing or lost a little, so they are kept to the look-ups.

The graph keeps its pair edges and hyperedges in one list of constraints (``hl[HMASK/HW]``: a mask of two or
three tiles and a weight), so that listing the constraints of A | B is one branch-free pass over it, and a
move saves and restores t's pairs and triples alike.

Masks of tiles are int64 bit sets (at most 32 cells).  All functions are Numba kernels over plain arrays;
:class:`ConflictGraph` only allocates them.  The arrays are packed into a few 2-D arrays with named rows
(``g``: per-tile rows and scalars; ``hl``: the lists of constraints; ``cons``: the constraints of one
component), and the search passes all three as one array (``work``, whose views they are) with a
move's look-ups as one more: a Numba call passes each array as seven to nine words, so fewer arrays make
the calls of every generated child cheaper.
"""

from __future__ import annotations

from itertools import product
from math import comb
from typing import Sequence

import numpy as np
from numba import njit

from .._native.intrinsics import popcount, prefetch, trailing_zeros
from ..errors import PdbtoolError
from ..tables.pairs_triples import PAIR_BY_REGION

# The functions of the search are compiled without Numba's reference counting (``_nrt=False``): they
# allocate nothing, and the atomic increments and decrements of their array arguments (and of row views) at
# every call took about a fifth of the CPU of a 24-puzzle ddb search (perf).  Only the two functions that
# allocate (min_cover_kernel, covers_of_states) keep it.

# rows of g (width 2n + 2 or more): per-tile arrays, the branch and bound's work space, scalars
POS, CMASK, CCOVER, NROW, NCM, NCV, ORDER, DEG, BEST, GS = range(10)
G_ROWS = 10
# columns of g[GS]; G_PENDING: try_move left t's new edges (pair neighbours G_NADJ with weights in g[NROW],
# G_NH hyperedges in hl[NHM/NHW], G_NEWCOMP components in g[NCM/NCV]) for commit_saving to put in
G_HCOUNT, G_PENDING, G_NEWCOMP, G_NH, G_NADJ = range(5)
# rows of hl (width hmax): the graph's constraints (pair edges and hyperedges), the moving tile's new
# hyperedges
HMASK, HW, NHM, NHW = range(4)
HL_ROWS = 4
# rows of cons (width cmax, 2n + 5 rows): the constraints of one component, masks and weights (the first
# level of the branch and bound, whose levels follow in pairs of rows), then those of A | B in a move
# (masks, weights: rows -3 and -2; see try_move), and the memo key in the last row
CM, CW = 0, 1
# columns of a row of ``undo`` (one row per search depth, what the move into that depth changed): whether
# it changed edges, how many of the moved tile's constraints and of the old components were saved, then its
# old constraints (masks, weights) and the old components in A | B (masks, covers)
U_APPLIED, U_OH, U_NOLD, U_ROW = range(4)


# --- the exact cover of one set of constraints -------------------------------------------------------------
# The branch and bound works on levels: level L's constraints are cons[2L] (masks) and cons[2L + 1]
# (residual weights), level 0 being the component's own (CM, CW); a level fixes one more vertex than the
# one above it.  g[BEST, L]: the cover fixed down to level L; g[DEG, L]: its count of constraints;
# g[ORDER, L]: the vertex it branches on; g[BEST, n + 1 + L]: the value that vertex has in the child.

@njit(cache=True, _nrt=False, inline="always")
def _reduce(cons, lv, k):
    """Simplify the k constraints of level ``lv`` in place by rules that keep the least cover exact; return
    (the cover they fix, the count of constraints left, each with at least two vertices, none in one only).

    * A vertex in one constraint only (a leaf) leaves it: any value it would add could go to another vertex
      of that constraint instead, which covers at least as much.
    * A constraint left with one vertex fixes that vertex's value: its residual is added to the cover and
      taken off every constraint of that vertex (those left with nothing to cover are dropped); one left
      with no vertex (all of them leaves) is added to the cover as it is.
    Repeated until no constraint goes, so a forest of constraints is solved outright."""
    mrow = 2 * lv
    rrow = mrow + 1
    cost = np.int64(0)
    while True:
        once = np.int64(0)
        twice = np.int64(0)
        for e in range(k):
            m = cons[mrow, e]
            twice |= once & m
            once |= m
        leaves = once & ~twice
        fixed = False
        for e in range(k):
            r = cons[rrow, e]
            if r <= 0:
                continue
            m = cons[mrow, e] & ~leaves
            if m & (m - 1) == 0:
                cost += r
                fixed = True
                if m:
                    for f in range(k):
                        if cons[mrow, f] & m:
                            cons[rrow, f] -= r
                cons[rrow, e] = 0
            cons[mrow, e] = m
        j = 0
        for e in range(k):
            r = cons[rrow, e]
            cons[mrow, j] = cons[mrow, e]
            cons[rrow, j] = r
            j += r > 0
        k = j
        if not fixed:
            return cost, k


@njit(cache=True, _nrt=False, inline="always")
def _disjoint_weights(cons, mrow, k):
    """The weights of vertex-disjoint constraints among the k of ``cons[mrow]`` (weights in the next row),
    taken greedily, those of weight 2 or more first: each needs its own units, so this bounds their least
    cover below (the hypergraph analogue of a matching)."""
    # take: all ones for a constraint taken, else 0 (branch-free, see the module's docstring)
    used = np.int64(0)
    lb = np.int64(0)
    for e in range(k):
        m = cons[mrow, e]
        w = cons[mrow + 1, e]
        take = -np.int64((w > 1) & (m & used == 0))
        lb += w & take
        used |= m & take
    for e in range(k):
        m = cons[mrow, e]
        take = -np.int64((cons[mrow + 1, e] == 1) & (m & used == 0))
        lb -= take
        used |= m & take
    return lb


@njit(cache=True, _nrt=False, inline="always")
def _busiest_vertex(cons, lv, k):
    """A vertex in the most constraints of level ``lv`` (bit-sliced counters, saturating above 4)."""
    b0 = np.int64(0)
    b1 = np.int64(0)
    b2 = np.int64(0)
    for e in range(k):
        m = cons[2 * lv, e]
        c0 = b0 & m
        b0 ^= m
        c1 = b1 & c0
        b1 ^= c0
        b2 |= c1
    s = b2
    if s == 0:
        s = b1
    elif s & b1:
        s &= b1
    if s == 0:
        s = b0
    elif s & b0:
        s &= b0
    return trailing_zeros(s)


@njit(cache=True, _nrt=False)
def _branch_and_bound(cons, k, g):
    """Least cover of the k constraints of level 0, already reduced (:func:`_reduce`): depth first over
    the value of the vertex in the most constraints, largest first, each child reduced again, pruned by
    the packing bound."""
    off = g.shape[1] // 2  # g[BEST, off + L]: the value of level L's vertex in its child
    best = np.int64(0)
    for e in range(k):
        best += cons[1, e]  # each constraint covered on its own: a cover
    root_lb = _disjoint_weights(cons, 0, k)
    if root_lb >= best:
        return best
    g[BEST, 0] = 0
    g[DEG, 0] = k
    lv = 0
    enter = True
    while True:
        cost = g[BEST, lv]
        k = g[DEG, lv]
        mrow = 2 * lv
        if enter:
            if k == 0:
                if cost < best:
                    best = cost
                    if best <= root_lb:
                        return best
                val = -1
            elif cost + _disjoint_weights(cons, mrow, k) >= best:
                val = -1
            else:
                v = _busiest_vertex(cons, lv, k)
                bv = np.int64(1) << v
                val = np.int64(0)
                for e in range(k):
                    if cons[mrow, e] & bv and cons[mrow + 1, e] > val:
                        val = cons[mrow + 1, e]
                g[ORDER, lv] = v
        else:
            val = g[BEST, off + lv] - 1
        if val < 0:
            lv -= 1
            if lv < 0:
                return best
            enter = False
            continue
        # the child: level lv's vertex takes the value val and leaves every constraint
        g[BEST, off + lv] = val
        bv = np.int64(1) << g[ORDER, lv]
        j = 0
        for e in range(k):
            m = cons[mrow, e]
            on = -np.int64(m & bv != 0)
            cons[mrow + 2, j] = m & ~bv
            r = cons[mrow + 1, e] - (val & on)
            cons[mrow + 3, j] = r
            j += r > 0
        fixed, j = _reduce(cons, lv + 1, j)
        g[BEST, lv + 1] = cost + val + fixed
        g[DEG, lv + 1] = j
        lv += 1
        enter = True


@njit(cache=True, _nrt=False)
def solve_cover(cons, nc, g):
    """Least sum of y with sum_{v in cons[CM, e]} y_v >= cons[CW, e] for e < nc (overwrites them)."""
    fixed, k = _reduce(cons, 0, nc)
    if k == 0:
        return fixed
    return fixed + _branch_and_bound(cons, k, g)


@njit(cache=True)
def min_cover_kernel(masks, weights, cons, g):
    """The least cover of arbitrary constraints, component by component (for tests)."""
    nc = masks.shape[0]
    vm = 0
    for e in range(nc):
        vm |= masks[e]
    total = 0
    done = np.zeros(nc, dtype=np.bool_)
    while vm:
        comp = vm & -vm
        while True:
            grown = comp
            for e in range(nc):
                if masks[e] & grown:
                    grown |= masks[e]
            if grown == comp:
                break
            comp = grown
        k = 0
        for e in range(nc):
            if not done[e] and masks[e] & comp:
                done[e] = True
                cons[CM, k] = masks[e]
                cons[CW, k] = weights[e]
                k += 1
        total += solve_cover(cons, k, g)
        vm &= ~comp
    return total


def cover_work(n: int, constraints: int) -> tuple[np.ndarray, np.ndarray]:
    """``(cons, g)``: the work space of covers of up to ``constraints`` constraints over tiles 0..n-1."""
    c0, end = _work_rows(n)
    return (np.zeros((end - c0, max(1, constraints)), dtype=np.int64),
            np.zeros((G_ROWS, 2 * n + 2), dtype=np.int64))


def min_cover(edges: Sequence[tuple[Sequence[int], int]], n: int) -> int:
    """Least weighted cover of hyperedges given as (vertices, weight) over vertices 0..n-1."""
    masks = np.array([sum(1 << v for v in vs) for vs, _ in edges], dtype=np.int64)
    weights = np.array([w for _, w in edges], dtype=np.int64)
    return int(min_cover_kernel(masks, weights, *cover_work(n, len(edges))))


def brute_force_cover(edges: Sequence[tuple[Sequence[int], int]], n: int) -> int:
    """The same by trying every assignment (tiny graphs only)."""
    top = max((w for _, w in edges), default=0)
    best = None
    for y in product(range(top + 1), repeat=n):
        if all(sum(y[v] for v in vs) >= w for vs, w in edges):
            s = sum(y)
            best = s if best is None or s < best else best
    return best or 0


# --- the key look-ups ---------------------------------------------------------------------------------------
# A key is (t, c, u, cu): tile t in cell c and tile u in cell cu.  ConflictGraph packs the look-ups of
# :class:`pdbtool.tables.pairs_triples.DynamicTables` so that a key costs one or two cache lines:
# * ``near[(t*n + c)*n + u]``: bit cu (low 32 bits) is set when the key has a pair value or rows; the high
#   32 bits are the index in ``records`` of the word's first such key (keys in increasing order);
# * ``records``: first the distinct blank masks of the rows (cells of the blank where a row holds), then for
#   the i-th key with something (at ``records[masks + i]``): its first row (bits 0-31), its number of rows
#   (32-47), its pair units (48-55; PAIR_BY_REGION: in its rows);
# * ``rows[j]`` (int32, so that the rows take half the cache): v (bits 0-4; 0 for a pair's value by
#   region), cell of v (5-9), units (10-15), the index of its blank mask in ``records`` (16-30).  The sets
#   have few distinct masks (one without regions, 145 with them on the 24-puzzle), so the masks stay in the
#   L1 cache and are read only for a row whose v stands in its cell.
# A state is set up from scratch with these.  A move has look-ups of its own (:func:`pack_move_lookups`), keyed
# by (t, c, m, u, cu): t moves into c from c's neighbour m, where the blank will then be, so each key keeps
# only what holds with the blank there: its pair units are final (no rows for a pair's value by region),
# and its triples need no blank test.  Triples a blank in m's cell cannot reach, and keys left with
# nothing, are gone.  A key's triples are grouped into entries, one per (v, units) with the cells of v
# where they hold as a mask, so that one test per entry finds whether v stands in one of them.  A triple
# placement needs to be under one key only, that of u or that of v, and each is put where it shares its
# entry with more placements (:func:`_orient_triples`): on the 24-puzzle with -region, 0.31 M entries and
# 88 k keys for 0.72 M placements (0.38 M and 114 k under the smaller tile, as the tables keep them), and
# on the first 10 M nodes of #1 a move finds 2.6 keys and 10.3 entries instead of 3.5 and 14.2.

@njit(cache=True, _nrt=False, inline="always")
def _key_record(near, records, word, cu):
    """The record of the key (word, cu); its bit in ``near[word]`` must be set."""
    w = near[np.uint64(word)]
    return records[np.uint64((w >> 32) + popcount(w & ((np.int64(1) << cu) - 1)))]


@njit(cache=True, _nrt=False, inline="always")
def _record_units(rec, records, rows, blank):
    """The pair units of a key's record with the blank in cell ``blank``."""
    w = (rec >> 48) & 255
    if w != PAIR_BY_REGION:
        return w
    first = rec & 0xFFFFFFFF
    for j in range(first, first + ((rec >> 32) & 0xFFFF)):
        r = np.int64(rows[j])
        if r & 31 == 0 and (records[r >> 16] >> blank) & 1:
            return (r >> 10) & 63
    return np.int64(0)


# --- the conflict graph of a state -----------------------------------------------------------------------------

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


@njit(cache=True, _nrt=False, inline="always")
def _compact(m, core):
    """The bits of ``m`` (a subset of ``core``) packed to the low end as ``core``'s are (BMI2 ``pext``), one
    popcount per bit: a constraint has two or three, and ``pext`` is microcoded on AMD's Zen 2 and older
    (tens to hundreds of cycles; this one costs 1.5 % more CPU per node on 24-puzzle #1)."""
    out = np.int64(0)
    while m:
        low = m & -m
        out |= np.int64(1) << popcount(core & (low - 1))
        m ^= low
    return out


# 2^16 slots (16 MB): with 2^13 slots, or with no memo at all, 24-puzzle #1 with pairs+triples-region costs
# about 3 % more CPU per node
MEMO_SLOTS = 1 << 16
MEMO_KEYS = 28  # components with more constraints are solved without the memo


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


@njit(cache=True, _nrt=False, inline="always")
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


@njit(cache=True, _nrt=False, inline="always")
def _set_component(comp, cov, g):
    """Every vertex of ``comp`` records it as its component, with the component's cover."""
    rem = comp
    while rem:
        v = trailing_zeros(rem)
        rem &= rem - 1
        g[CMASK, v] = comp
        g[CCOVER, v] = cov


@njit(cache=True, _nrt=False)
def graph_from_scratch(n, near, records, rows, g, hl, cons, memo):
    """Fill the graph of the state whose tile t stands in ``g[POS, t]``; return the least cover."""
    hcount = 0
    blank = g[POS, 0]
    for t in range(1, n):
        ct = g[POS, t]
        for u in range(t + 1, n):
            word = (t * n + ct) * n + u
            cu = g[POS, u]
            if not (near[word] >> cu) & 1:
                continue
            rec = _key_record(near, records, word, cu)
            w = _record_units(rec, records, rows, blank)
            if w:
                hl[HMASK, hcount] = (np.int64(1) << t) | (np.int64(1) << u)
                hl[HW, hcount] = w
                hcount += 1
            # a triple is stored under each of its tiles; take it once, under its smallest (then u < v)
            first = rec & 0xFFFFFFFF
            for j in range(first, first + ((rec >> 32) & 0xFFFF)):
                r = np.int64(rows[j])
                v = r & 31
                if v and g[POS, v] == (r >> 5) & 31 and (records[r >> 16] >> blank) & 1:
                    hl[HMASK, hcount] = (np.int64(1) << t) | (np.int64(1) << u) | (np.int64(1) << v)
                    hl[HW, hcount] = (r >> 10) & 63
                    hcount += 1
    g[GS, G_HCOUNT] = hcount
    g[GS, G_PENDING] = 0
    total = 0
    seen = 0
    for t in range(n):
        if seen & (np.int64(1) << t):
            continue
        comp = _component(t, g, hl)
        cov = 0
        if comp != (np.int64(1) << t):
            cov = _cover_of(comp, g, hl, cons, memo)
        _set_component(comp, cov, g)
        seen |= comp
        total += cov
    return total


@njit(cache=True, _nrt=False)
def _same_edges(t, new_adj, nh, g, hl):
    """Whether t's new edges (pair neighbours ``new_adj`` with weights in ``g[NROW]``, hyperedges
    ``hl[NHM/NHW, :nh]``) are exactly its present ones: then the graph, and so the cover, does not change
    (common: a conflict often survives a move)."""
    bt = np.int64(1) << t
    old = 0
    pairs = 0
    for j in range(g[GS, G_HCOUNT]):
        hm = hl[HMASK, j]
        if not hm & bt:
            continue
        o = hm & ~bt
        if o & (o - 1) == 0:
            # a pair: its other tile must be a new neighbour, of the same weight
            u = trailing_zeros(o)
            if not (new_adj >> u) & 1 or g[NROW, u] != hl[HW, j]:
                return False
            pairs += 1
            continue
        old += 1
        found = False
        for i in range(nh):
            if hl[NHM, i] == hm and hl[NHW, i] == hl[HW, j]:
                found = True
                break
        if not found:
            return False
    return old == nh and pairs == popcount(new_adj)


@njit(cache=True, _nrt=False, inline="always")
def _append_new_constraints(t, g, hl, out, row, k):
    """Write t's new constraints, as :func:`try_move` left them (pair neighbours ``g[GS, G_NADJ]`` with
    weights in ``g[NROW]``, then hyperedges ``hl[NHM/NHW, :g[GS, G_NH]]``), into ``out[row]`` (masks) and
    ``out[row + 1]`` (weights) from index k on; return the index after them."""
    bt = np.int64(1) << t
    rem = g[GS, G_NADJ]
    while rem:
        u = trailing_zeros(rem)
        rem &= rem - 1
        out[row, k] = bt | (np.int64(1) << u)
        out[row + 1, k] = g[NROW, u]
        k += 1
    for j in range(g[GS, G_NH]):
        out[row, k] = hl[NHM, j]
        out[row + 1, k] = hl[NHW, j]
        k += 1
    return k


# try_move reads a key's entries in blocks of this many, each block branch-free (every entry written, the
# count advanced by its test and by whether it is still the key's), so that a key of one or two entries costs
# no branch on its length; pack_move_lookups pads the entries so that the last block stays inside ``look``
ENTRY_BLOCK = 2

# ``need`` of a try_move whose exact change of the cover is wanted
EXACT = np.int64(1) << 40


@njit(cache=True, _nrt=False, inline="always")
def _work_rows(n):
    """``(c0, end)``: the first row of cons in ``work``, and its count of rows: g's rows first, then hl's,
    then the 2 (n + 1) + 3 of cons (the branch and bound's levels, A | B, the memo key).  Also called from
    Python (:func:`graph_work`, :func:`work_views`, :func:`cover_work`)."""
    c0 = G_ROWS + HL_ROWS
    return c0, c0 + 2 * (n + 1) + 3


@njit(cache=True, _nrt=False, inline="always")
def _views(work, n):
    """``(g, hl, cons)``: the graph's arrays, views of the rows of ``work`` (:func:`graph_work`)."""
    c0, end = _work_rows(n)
    return work[:G_ROWS], work[G_ROWS:c0], work[c0:end]


# inline: the driver has one call site (the ddb hooks' child_h), and the call's 26 argument words cost more
# than the extra compile (docs/design.md)
@njit(cache=True, _nrt=False, inline="always")
def try_move(t, c, m, need, n, look, work, memo):
    """The change of the least cover when tile t moves into cell ``c`` from c's neighbour ``m`` (up, left,
    right, down), where the blank will be.  ``look``: the move look-ups (:func:`pack_move_lookups`);
    ``work``: the graph (:func:`graph_work`).

    The graph is left as it was: t's new edges and the new components wait in the work rows, and
    ``g[GS, G_PENDING]`` says whether there are any (0 when t has no edge before or after, or the same ones).
    :func:`commit_saving` puts them in if the search enters the child; a pruned child costs nothing more,
    and the next try_move overwrites them.

    A caller that only needs to know whether the change reaches ``need`` (a child it would prune then; pass
    :data:`EXACT` otherwise) may get a lower bound of at least ``need`` instead, with nothing pending:

    * when t has no constraint now, a new one whose other tiles have none either forms a component of its
      own, so the cover grows by at least its weight (before A | B is looked at);
    * vertex-disjoint constraints of A | B after the move need their own units each, so the new covers
      there are at least the sum of their weights (before any cover is solved).

    On the first 10 M nodes of 24-puzzle #1 with ``-region`` the first settles 1.41 M of the 3.83 M children
    that are pruned after their look-ups, the second 1.71 M of the 2.22 M pruned children whose edges
    change."""
    g, hl, cons = _views(work, n)
    bt = np.int64(1) << t
    nh = 0
    base = ((t * n + c) * 4 + m) * n  # t into c from m: its row of the key filter
    # the tiles whose key with t in c has a pair value or entries: one branch-free pass over the filter (it
    # vectorizes), then look-ups for those few only.  The look-ups' indices are unsigned (see the module's
    # docstring): with a signed one, each of the pass's loads was a scalar load with its own wraparound
    hits = np.int64(0)
    for u in range(1, n):
        hits |= ((look[np.uint64(base + u)] >> g[POS, u]) & 1) << u
    hits &= ~bt
    # the hits' records first, held in g[NROW], in a loop of independent loads whose cache misses overlap
    rem = hits
    while rem:
        u = trailing_zeros(rem)
        rem &= rem - 1
        rec = _key_record(look, look, base + u, g[POS, u])
        g[NROW, u] = rec
        prefetch(look, rec & 0xFFFFFFFF)
    new_adj = np.int64(0)
    while hits:
        u = trailing_zeros(hits)
        hits &= hits - 1
        rec = g[NROW, u]
        w = (rec >> 48) & 255
        g[NROW, u] = w
        if w:
            new_adj |= np.int64(1) << u
        # an entry: the cells of v (low 32 bits) where the triple (t, u, v) adds its units.  In blocks (see
        # ENTRY_BLOCK): the loop over a key's entries ended on a mispredicted branch at most keys
        j = rec & 0xFFFFFFFF
        end = j + ((rec >> 32) & 0xFFFF)
        while j < end:
            for q in range(ENTRY_BLOCK):
                e = look[np.uint64(j + q)]
                v = (e >> 32) & 31
                hl[NHM, np.uint64(nh)] = bt | (np.int64(1) << u) | (np.int64(1) << v)
                hl[NHW, np.uint64(nh)] = e >> 37
                nh += ((e >> g[POS, v]) & 1) & (j + q < end)
            j += ENTRY_BLOCK
    g[GS, G_NH] = nh
    old_comp = g[CMASK, t]
    if old_comp == bt:
        fresh = np.int64(0)  # the heaviest new constraint among tiles with none now
        rem = new_adj
        while rem:
            u = trailing_zeros(rem)
            rem &= rem - 1
            if g[CMASK, u] == np.int64(1) << u and g[NROW, u] > fresh:
                fresh = g[NROW, u]
        for j in range(nh):
            if hl[NHW, j] > fresh:
                o = hl[NHM, j] & ~bt
                u = trailing_zeros(o)
                v = trailing_zeros(o & (o - 1))
                if g[CMASK, u] == np.int64(1) << u and g[CMASK, v] == np.int64(1) << v:
                    fresh = hl[NHW, j]
        if fresh >= need or (new_adj == 0 and nh == 0):
            g[GS, G_PENDING] = 0
            return fresh
    elif _same_edges(t, new_adj, nh, g, hl):
        g[GS, G_PENDING] = 0
        return 0
    g[GS, G_NADJ] = new_adj
    g[GS, G_PENDING] = 1
    # A | B: t's old component and the old components of its new neighbours, a union of whole components
    # in both graphs; its constraints after the move, once, in rows -3 and -2 of cons (t's new edges in
    # place of its old ones), then split into the new components.  When t had no edge, t's new edges join
    # all of A | B into one component: its constraints go straight to the cover's rows.
    alone = old_comp == bt
    union = old_comp
    rem = new_adj
    for j in range(nh):
        rem |= hl[NHM, j]
    rem &= ~bt
    while rem:
        u = trailing_zeros(rem)
        union |= g[CMASK, u]
        rem &= ~g[CMASK, u]
    um = CM if alone else cons.shape[0] - 3
    uw = um + 1
    nu = _append_new_constraints(t, g, hl, cons, um, _list_constraints(union, bt, g, hl, cons, um))
    old_total = 0
    rem = union
    while rem:
        v = trailing_zeros(rem)
        old_total += g[CCOVER, v]
        rem &= ~g[CMASK, v]
    # vertex-disjoint constraints each need their own units, so their weights bound the new covers below:
    # when that settles a pruned child, no cover is solved (on the first 10 M nodes of 24-puzzle #1 with
    # -region, 1.71 M of the 2.22 M pruned children whose edges change)
    lb = _disjoint_weights(cons, um, nu) - old_total
    if lb >= need:
        g[GS, G_PENDING] = 0
        return lb
    if alone:
        new_total = _least_cover(nu, g, cons, memo)
        g[NCM, 0] = union
        g[NCV, 0] = new_total
        g[GS, G_NEWCOMP] = 1
        return new_total - old_total
    new_total = 0
    ncomp = 0
    rem = union
    while rem:
        comp = rem & -rem
        while True:
            grown = comp
            for e in range(nu):
                if cons[um, e] & grown:
                    grown |= cons[um, e]
            if grown == comp:
                break
            comp = grown
        cov = 0
        if comp & (comp - 1):
            k = 0
            for e in range(nu):
                cm = cons[um, e]
                cons[CM, k] = cm
                cons[CW, k] = cons[uw, e]
                k += cm & comp != 0
            cov = _least_cover(k, g, cons, memo)
        g[NCM, ncomp] = comp
        g[NCV, ncomp] = cov
        ncomp += 1
        new_total += cov
        rem &= ~comp
    g[GS, G_NEWCOMP] = ncomp
    return new_total - old_total


@njit(cache=True, _nrt=False, inline="always")
def _edges_back(t, g, hl, hmask, hw, oh):
    """Give tile t back its old constraints ``hmask/hw[:oh]`` in place of its present ones."""
    bt = np.int64(1) << t
    k = 0
    for j in range(g[GS, G_HCOUNT]):
        hm = hl[HMASK, j]
        hl[HMASK, k] = hm
        hl[HW, k] = hl[HW, j]
        k += hm & bt == 0
    for j in range(oh):
        hl[HMASK, k] = hmask[j]
        hl[HW, k] = hw[j]
        k += 1
    g[GS, G_HCOUNT] = k


# not inline: inlined into the driver through keep_move, Numba's inliner gets it wrong (the driver's h then
# drifts from the from-scratch value; the 8-puzzle reference test in tests/test_dynamic.py fails)
@njit(cache=True, _nrt=False)
def commit_saving(t, c, n, work, undo, d):
    """Tile t moves into cell c (the blank into its old cell), with what :func:`try_move` left pending:
    t's new edges go into the graph and the new components replace the old ones in A | B.  What they
    replace is saved in ``undo[d]``, so that :func:`restore_move` can take it back without recomputing t's
    edges and covers."""
    g, hl, cons = _views(work, n)
    pending = g[GS, G_PENDING]
    undo[d, U_APPLIED] = pending
    if pending:
        tmax = (undo.shape[1] - U_ROW - 2 * n) // 2
        bt = np.int64(1) << t
        # t's constraints: the old ones (pairs and triples) saved and taken out, the new ones appended.
        # Branch-free, as the module's docstring says (1 to 2 % less CPU per node on 24-puzzle #1 with
        # -region): every constraint is written to both places, so undo's rows have one slot more (tmax) than
        # t can have constraints
        base = U_ROW
        k = 0
        oh = 0
        for j in range(g[GS, G_HCOUNT]):
            hm = hl[HMASK, j]
            hw = hl[HW, j]
            mine = (hm & bt) != 0
            undo[d, base + oh] = hm
            undo[d, base + tmax + oh] = hw
            hl[HMASK, k] = hm
            hl[HW, k] = hw
            oh += mine
            k += not mine
        g[GS, G_HCOUNT] = _append_new_constraints(t, g, hl, hl, HMASK, k)
        undo[d, U_OH] = oh
        # the old components that the new ones replace: those within A | B
        base = U_ROW + 2 * tmax
        union = 0
        for i in range(g[GS, G_NEWCOMP]):
            union |= g[NCM, i]
        k = 0
        while union:
            v = trailing_zeros(union)
            comp = g[CMASK, v]
            undo[d, base + k] = comp
            undo[d, base + n + k] = g[CCOVER, v]
            k += 1
            union &= ~comp
        undo[d, U_NOLD] = k
        for i in range(g[GS, G_NEWCOMP]):
            _set_component(g[NCM, i], g[NCV, i], g)
        g[GS, G_PENDING] = 0
    g[POS, 0] = g[POS, t]
    g[POS, t] = c


@njit(cache=True, _nrt=False)
def restore_move(t, c, n, work, undo, d):
    """Tile t goes back to cell c, undoing the move saved in ``undo[d]`` by :func:`commit_saving`: its old
    edges and the old components' masks and covers come back as they were."""
    g, hl, cons = _views(work, n)
    g[POS, 0] = g[POS, t]
    g[POS, t] = c
    if not undo[d, U_APPLIED]:
        return
    tmax = (undo.shape[1] - U_ROW - 2 * n) // 2
    base = U_ROW
    _edges_back(t, g, hl, undo[d, base:base + tmax], undo[d, base + tmax:], undo[d, U_OH])
    base = U_ROW + 2 * tmax
    for i in range(undo[d, U_NOLD]):
        _set_component(undo[d, base + i], undo[d, base + n + i], g)


# The search calls these: a move that changed no edge (about half of the children entered on 24-puzzle #1)
# costs no call
@njit(cache=True, _nrt=False, inline="always")
def keep_move(t, c, n, work, undo, d):
    """:func:`commit_saving`, inline when the move changed no edge."""
    if work[GS, G_PENDING]:
        commit_saving(t, c, n, work, undo, d)
    else:
        undo[d, U_APPLIED] = 0
        work[POS, 0] = work[POS, t]
        work[POS, t] = c


@njit(cache=True, _nrt=False, inline="always")
def undo_move(t, c, n, work, undo, d):
    """:func:`restore_move`, inline when the move had changed no edge."""
    if undo[d, U_APPLIED]:
        restore_move(t, c, n, work, undo, d)
    else:
        work[POS, 0] = work[POS, t]
        work[POS, t] = c


@njit(cache=True)
def covers_of_states(states, n, near, records, rows, g, hl, cons, memo):
    """The least cover of each state (row: the tile in each cell), each from scratch."""
    out = np.empty(states.shape[0], dtype=np.int64)
    for i in range(states.shape[0]):
        for c in range(n):
            g[POS, states[i, c]] = c
        out[i] = graph_from_scratch(n, near, records, rows, g, hl, cons, memo)
    return out


def new_memo() -> np.ndarray:
    """An empty memo of component covers (:func:`_cover_of`)."""
    return np.zeros((MEMO_SLOTS, MEMO_KEYS + 3), dtype=np.int64)


def pack_lookups(tables) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(near, records, rows)`` of ``tables`` (see "the key look-ups" above).  Most keys have nothing, so
    the filter and the records of the keys that have something fit a cache where the tables do not."""
    n = tables.board.n
    start = tables.tri_start.astype(np.int64)
    count = np.diff(start)
    keys = np.flatnonzero((tables.pair_units != 0) | (count > 0))
    ent = tables.tri_ent.astype(np.int64)
    masks, mask_index = np.unique(ent[:, 3] & 0xFFFFFFFF, return_inverse=True)
    words = keys // n
    near = np.zeros(n ** 3, dtype=np.int64)
    np.bitwise_or.at(near, words, np.int64(1) << (keys % n))
    first_key = len(masks) + np.searchsorted(words, np.arange(n ** 3))
    near |= np.where(near != 0, first_key, 0).astype(np.int64) << 32
    units = tables.pair_units.astype(np.int64)[keys]
    if len(keys) >= 1 << 31 or count.max(initial=0) >= 1 << 16 or len(ent) >= 1 << 31 or len(masks) >= 1 << 15:
        raise PdbtoolError("the dynamic tables are too large to pack for the search")
    if len(ent) and ent[:, 2].max() >= 64:
        raise PdbtoolError("a dynamic table row's units exceed 63")
    records = np.concatenate([masks, start[keys] | count[keys] << 32 | units << 48])
    rows = (ent[:, 0] | (ent[:, 1] & 31) << 5 | ent[:, 2] << 10 | mask_index.reshape(-1).astype(np.int64) << 16)
    return near, np.ascontiguousarray(records), np.ascontiguousarray(rows.astype(np.int32))


def _entry_codes(key, other, units):
    """The code of a move entry (key, other tile, units): :func:`pack_move_lookups` groups rows by it."""
    return (key * 32 + other) * 64 + units


def _group_sizes(codes, distinct, count):
    """For each of ``codes``, its count in ``distinct``/``count`` (``np.unique(..., return_counts=True)``)."""
    if len(distinct) == 0:
        return np.zeros(len(codes), dtype=np.int64)
    at = np.minimum(np.searchsorted(distinct, codes), len(distinct) - 1)
    return np.where(distinct[at] == codes, count[at], 0)


def _orient_triples(rows, n, passes=3):
    """The move rows ``(key, v, cell of v, units)``, each placed under the key of one of the triple's two
    other tiles.  A placement (t moved into c from m, u in cu, v in cv) is found exactly once whether it is
    kept under the key of u in cu as an entry of v, or under the key of v in cv as an entry of u.  The
    tables keep it under the smaller tile; the side whose entry (key, other tile, units) more placements
    share makes fewer entries and fewer keys, so each row takes that side, in a few greedy passes (on the
    24-puzzle with -region: 0.31 M entries instead of 0.38 M, and 88 k keys instead of 114 k)."""
    key, v, cv, units = rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3]
    u, cu = (key // n) % n, key % n
    flipped = key - u * n - cu + v * n + cv
    own = _entry_codes(key, v, units)
    other = _entry_codes(flipped, u, units)
    distinct, count = np.unique(own, return_counts=True)
    s_own = _group_sizes(own, distinct, count)
    s_other = _group_sizes(other, *np.unique(other, return_counts=True))
    best, best_count = np.ones(len(rows), dtype=bool), len(distinct)
    for _ in range(passes):
        keep = s_own >= s_other
        distinct, count = np.unique(np.where(keep, own, other), return_counts=True)
        if len(distinct) < best_count:
            best, best_count = keep, len(distinct)
        # the size of each side's group with this row counted in it
        s_own = _group_sizes(own, distinct, count) + ~keep
        s_other = _group_sizes(other, distinct, count) + keep
    return np.stack([np.where(best, key, flipped), np.where(best, v, u), np.where(best, cv, cu), units], axis=1)


def pack_move_lookups(tables) -> np.ndarray:
    """The look-ups of the keys ``(t, c, m, u, cu)`` of moves (see "the key look-ups" above), in one int64
    array, indices absolute:

    * the filter: word ``((t*n + c)*4 + m)*n + u`` has bit cu set when the key has a pair value or entries,
      and in its high 32 bits the index of its first key's record (keys in increasing order of cu);
    * each key's record: its first entry (bits 0-31), its number of entries (32-47), its pair units
      (48-55), with the blank in ``nb[c, m]``;
    * the entries: the cells of v where the triple (t, u, v) holds with that blank (bits 0-31, as a mask),
      v (32-36) and the triple's units (37-42), one entry per (key, v, units); then ENTRY_BLOCK - 1 words of
      0, which never match, so that a block read from the last key's entries stays inside the array."""
    n = tables.board.n
    nb = tables.board.neighbours()
    nk = n ** 4
    start = tables.tri_start.astype(np.int64)
    ent = tables.tri_ent.astype(np.int64)
    row_key = np.repeat(np.arange(nk), np.diff(start))
    key = np.arange(nk)
    t_c = key // (n * n)  # t * n + c
    u_cu = key % (n * n)  # u * n + cu
    cell = t_c % n
    units = tables.pair_units.astype(np.int64)
    region_pair = ent[:, 0] == 0
    triple = ~region_pair
    mkeys, munits, mrows = [], [], []
    for m in range(4):
        blank = nb[cell, m]
        valid = (blank >= 0) & (blank != u_cu % n)  # t comes from the blank's cell, so u cannot be there
        blank = np.where(valid, blank, 0)
        move_key = (t_c * 4 + m) * (n * n) + u_cu
        pair = np.where(valid & (units != PAIR_BY_REGION), units, 0)
        k = row_key[region_pair]
        holds = valid[k] & ((ent[region_pair, 3] >> blank[k]) & 1).astype(bool)
        pair[k[holds]] = ent[region_pair, 2][holds]  # one region of a pair holds for one blank cell
        keep = np.flatnonzero(pair)
        mkeys.append(move_key[keep])
        munits.append(pair[keep])
        k = row_key[triple]
        holds = valid[k] & ((ent[triple, 3] >> blank[k]) & 1).astype(bool) & (ent[triple, 1] != blank[k])
        sel = np.flatnonzero(triple)[holds]
        mrows.append(np.stack([move_key[row_key[sel]], ent[sel, 0], ent[sel, 1], ent[sel, 2]], axis=1))
    nmk = 4 * nk
    pair_units = np.zeros(nmk, dtype=np.int64)
    pair_units[np.concatenate(mkeys)] = np.concatenate(munits)
    rows = np.concatenate(mrows)  # key, v, cell of v, units
    if len(rows) and rows[:, 3].max() >= 64:
        raise PdbtoolError("a dynamic table row's units exceed 63")
    rows = _orient_triples(rows, n)
    # one entry per (key, v, units), in increasing order: the mask of the cells of v
    group, where = np.unique(_entry_codes(rows[:, 0], rows[:, 1], rows[:, 3]), return_inverse=True)
    cells = np.zeros(len(group), dtype=np.int64)
    np.bitwise_or.at(cells, where.reshape(-1), np.int64(1) << rows[:, 2])
    entry_key = group // (32 * 64)
    entries = cells | ((group // 64) % 32) << 32 | (group % 64) << 37
    count = np.bincount(entry_key, minlength=nmk)
    keys = np.flatnonzero((pair_units != 0) | (count > 0))
    words = keys // n
    n_filter = nmk // n
    entries_at = n_filter + len(keys)
    if entries_at + len(entries) >= 1 << 32 or count.max(initial=0) >= 1 << 16:
        raise PdbtoolError("the dynamic tables are too large to pack for the search")
    near = np.zeros(n_filter, dtype=np.int64)
    np.bitwise_or.at(near, words, np.int64(1) << (keys % n))
    first_key = n_filter + np.searchsorted(words, np.arange(n_filter))
    near |= np.where(near != 0, first_key, 0).astype(np.int64) << 32
    first = entries_at + np.concatenate([[0], np.cumsum(count)[:-1]])
    records = first[keys] | count[keys] << 32 | pair_units[keys] << 48
    padding = np.zeros(ENTRY_BLOCK - 1, dtype=np.int64)
    return np.ascontiguousarray(np.concatenate([near, records, entries, padding]))


def move_key_lookup(look: np.ndarray, n: int, t: int, c: int, m: int, u: int, cu: int):
    """What :func:`pack_move_lookups` holds for the key (t, c, m, u, cu): ``None`` when the key has nothing,
    else ``(pair units, sorted [(v, cell of v, units)] of its triples)`` (for tests and inspection)."""
    word = int(look[((t * n + c) * 4 + m) * n + u])
    if not word >> cu & 1:
        return None
    rec = int(look[(word >> 32) + bin(word & ((1 << cu) - 1)).count("1")])
    first, count = rec & 0xFFFFFFFF, (rec >> 32) & 0xFFFF
    triples = sorted((int(e) >> 32 & 31, cell, int(e) >> 37) for e in look[first:first + count]
                     for cell in range(32) if int(e) >> cell & 1)
    return (rec >> 48) & 255, triples


def graph_work(n: int, triples: bool) -> np.ndarray:
    """The ``work`` array of one conflict graph over tiles 0..n-1: the rows of g, hl and cons, one after
    another (:func:`_views`), as wide as the widest."""
    hmax = (max(16, comb(n - 1, 3)) if triples else 16) + comb(n, 2)
    return np.zeros((_work_rows(n)[1], max(n * n + hmax, 2 * n + 2)), dtype=np.int64)


def work_views(work: np.ndarray, n: int) -> tuple[np.ndarray, ...]:
    """:func:`_views` in Python (a compiled function would box each view as the whole array)."""
    c0, end = _work_rows(n)
    return work[:G_ROWS], work[G_ROWS:c0], work[c0:end]


def pack_all(tables) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """Both packed look-ups of ``tables``: a state's (:func:`pack_lookups`) and a move's
    (:func:`pack_move_lookups`), to build once and share between the graphs of one heuristic."""
    return pack_lookups(tables), pack_move_lookups(tables)


class ConflictGraph:
    """The arrays of one state's conflict graph and the work space of its updates: ``work`` and its views
    ``g``, ``hl`` and ``cons`` (see the rows above), ``memo`` (covers of
    components seen before); ``lookups`` (``near``, ``records``, ``rows``) and ``move_lookups`` (one array)
    are those of :class:`pdbtool.tables.pairs_triples.DynamicTables`, packed (see "the key look-ups"
    above)."""

    def __init__(self, tables, memo: np.ndarray | None = None, packed=None):
        """``memo``: a memo to use instead of a new one (its entries are exact whatever state they came from, so
        searches may share one, but never two threads at once); ``packed``: :func:`pack_all` of ``tables``,
        if it was made before (the graphs only read it)."""
        n = tables.board.n
        self.n = n
        self.lookups, self.move_lookups = pack_all(tables) if packed is None else packed
        self.nb = tables.board.neighbours()
        triples = tables.triples_stored > 0
        # t's constraints: at most one hyperedge with each pair of other tiles (one row of a triple's placement
        # matches the blank's region) and one pair edge with each other tile, n - 2 in all; one slot more,
        # for commit_saving's branch-free writes
        self.tmax = (comb(n - 2, 2) if triples else 0) + n - 1
        self.work = graph_work(n, triples)
        self.g, self.hl, self.cons = work_views(self.work, n)
        self.memo = new_memo() if memo is None else memo
        self.arrays = (self.g, self.hl, self.cons, self.memo)
        self._undo = self.undo_rows(1)  # what commit() replaces, never restored

    @property
    def pos(self) -> np.ndarray:
        return self.g[POS, :self.n]

    def reset(self, tiles: np.ndarray) -> int:
        """Set the graph to the state ``tiles`` (tile in each cell); return its least cover."""
        self.g[POS, np.asarray(tiles)] = np.arange(self.n)
        return int(graph_from_scratch(self.n, *self.lookups, *self.arrays))

    def covers(self, states: np.ndarray) -> np.ndarray:
        """The least cover of each row of ``states`` (from scratch; leaves the graph at the last one)."""
        states = np.ascontiguousarray(np.asarray(states, dtype=np.int64).reshape(-1, self.n))
        return covers_of_states(states, self.n, *self.lookups, *self.arrays)

    def try_move(self, t: int, c: int, need: int = EXACT) -> int:
        """:func:`try_move` of tile t into the blank's cell ``c``, which must be t's neighbour."""
        m = int(np.flatnonzero(self.nb[c] == self.g[POS, t])[0])
        return int(try_move(t, c, m, need, self.n, self.move_lookups, self.work, self.memo))

    @property
    def pending(self) -> bool:
        """Whether the last :meth:`try_move` left new edges for a commit (else the move changes no edge)."""
        return bool(self.g[GS, G_PENDING])

    def commit(self, t: int, c: int) -> None:
        """Make the move of the last :meth:`try_move` (tile t into cell c), with nothing saved."""
        commit_saving(t, c, self.n, self.work, self._undo, 0)

    def revert(self, t: int) -> None:
        """Drop what the last :meth:`try_move` left pending (the graph itself never changed)."""
        self.g[GS, G_PENDING] = 0

    def undo_rows(self, capacity: int) -> np.ndarray:
        """The ``undo`` array of a search of ``capacity`` levels (:func:`commit_saving`)."""
        return np.zeros((capacity, U_ROW + 2 * self.n + 2 * self.tmax), dtype=np.int64)

    def commit_saving(self, t: int, c: int, undo: np.ndarray, d: int) -> None:
        commit_saving(t, c, self.n, self.work, undo, d)

    def restore(self, t: int, c: int, undo: np.ndarray, d: int) -> None:
        restore_move(t, c, self.n, self.work, undo, d)

    def edges(self) -> list[tuple[tuple[int, ...], int]]:
        """The current (hyper)edges as (tiles, weight), for inspection and tests."""
        g, hl = self.g, self.hl
        out = []
        for j in range(int(g[GS, G_HCOUNT])):
            out.append((tuple(v for v in range(self.n) if int(hl[HMASK, j]) >> v & 1), int(hl[HW, j])))
        return out
