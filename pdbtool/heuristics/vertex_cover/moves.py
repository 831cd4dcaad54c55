"""The incremental update of the conflict graph, move by move: :func:`try_move` works out a move's change of
the least cover without changing the graph; :func:`keep_move` puts it in when the search enters the child,
saving what it replaces, and :func:`undo_move` puts that back when the search leaves it."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..._native.intrinsics import popcount, prefetch, trailing_zeros
from .components import _least_cover, _list_constraints, _set_component
from .exact_cover import _disjoint_weights
from .layout import (
    CCOVER,
    CM,
    CMASK,
    CW,
    G_HCOUNT,
    G_NADJ,
    G_NEWCOMP,
    G_NH,
    G_PENDING,
    GS,
    HMASK,
    HW,
    NCM,
    NCV,
    NHM,
    NHW,
    NROW,
    POS,
    U_APPLIED,
    U_NOLD,
    U_OH,
    U_ROW,
    _views,
)
from .lookups import ENTRY_BLOCK, _key_record, _wide_key_record

# ``need`` of a try_move whose exact change of the cover is wanted
EXACT = np.int64(1) << 40



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


@njit(cache=True, _nrt=False, forceinline=True)
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


@njit(cache=True, _nrt=False, forceinline=True)
def _move_hits(t, base, n, look, g):
    """The tiles u whose key (t's move, u in its cell) has a pair value or entries: one branch-free pass
    over the filter words ``look[base + u]`` (it vectorizes).  The look-ups' indices are unsigned (see the
    package's docstring): with a signed one, each of the pass's loads was a scalar load with its own
    wraparound."""
    hits = np.int64(0)
    for u in range(1, n):
        hits |= ((look[np.uint64(base + u)] >> g[POS, u]) & 1) << u
    return hits & ~(np.int64(1) << t)


@njit(cache=True, _nrt=False, forceinline=True)
def _new_edges(t, c, m, n, look, g, hl, wide):
    """t's new edges when it moves into c from m: ``(new_adj, nh)``, the pair neighbours (their weights in
    ``g[NROW]``) and the count of hyperedges in ``hl[NHM/NHW]``.  ``wide``: the layout of the move look-ups
    (:mod:`.lookups`), a constant of each caller, so that each compiles the reads of its layout alone."""
    bt = np.int64(1) << t
    nh = 0
    base = ((t * n + c) * 4 + m) * n  # t into c from m: its row of the key filter
    # an entry: the cells of v where the triple (t, u, v) adds its units, then v and the units: in the
    # entry's high half (narrow), or in the next word (wide)
    stride = 2 if wide else 1
    info_shift = 0 if wide else 32
    hits = _move_hits(t, base, n, look, g)
    # the hits' records first, held in g[NROW], in a loop of independent loads whose cache misses overlap
    rem = hits
    while rem:
        u = trailing_zeros(rem)
        rem &= rem - 1
        if wide:
            rec = _wide_key_record(look, look, base + u, g[POS, u], 4 * n * n * n)
        else:
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
        # in blocks (see ENTRY_BLOCK): the loop over a key's entries ended on a mispredicted branch at most keys
        j = rec & 0xFFFFFFFF
        end = j + stride * ((rec >> 32) & 0xFFFF)
        while j < end:
            for q in range(ENTRY_BLOCK):
                at = j + stride * q
                e = look[np.uint64(at)]
                info = look[np.uint64(at + stride - 1)] >> info_shift
                v = info & 63
                hl[NHM, np.uint64(nh)] = bt | (np.int64(1) << u) | (np.int64(1) << v)
                hl[NHW, np.uint64(nh)] = info >> 6
                nh += ((e >> g[POS, v]) & 1) & (at < end)
            j += stride * ENTRY_BLOCK
    return new_adj, nh


# inline: the driver has one call site (the ddb hooks' child_h), and the call's 26 argument words cost more
# than the extra compile
@njit(cache=True, _nrt=False, forceinline=True)
def try_move(t, c, m, need, n, look, work, memo):
    """The change of the least cover when tile t moves into cell ``c`` from c's neighbour ``m`` (up, left,
    right, down), where the blank will be.  ``look``: the narrow move look-ups (:func:`pack_move_lookups`;
    :func:`try_move_wide` reads the wide ones); ``work``: the graph (:func:`graph_work`).

    The graph is left as it was: t's new edges and the new components wait in the work rows, and
    ``g[GS, G_PENDING]`` says whether there are any (0 when t has no edge before or after, or the same ones).
    :func:`commit_saving` puts them in if the search enters the child; a pruned child costs nothing more,
    and the next try_move overwrites them.

    A caller that only needs to know whether the change reaches ``need`` (a child it would prune then; pass
    :data:`EXACT` otherwise) may get a lower bound of at least ``need`` instead, with nothing pending:

    * when t has no constraint now, a new one whose other tiles have none either forms a component of its
      own, so the cover grows by at least its weight (before A | B is looked at);
    * vertex-disjoint constraints of A | B after the move need their own units each, so the new covers
      there are at least the sum of their weights (before any cover is solved)."""
    g, hl, cons = _views(work, n)
    new_adj, nh = _new_edges(t, c, m, n, look, g, hl, False)
    return _cover_change(t, need, new_adj, nh, g, hl, cons, memo)


@njit(cache=True, _nrt=False, forceinline=True)
def try_move_wide(t, c, m, need, n, look, work, memo):
    """:func:`try_move` with the wide move look-ups of a board of more than 32 cells."""
    g, hl, cons = _views(work, n)
    new_adj, nh = _new_edges(t, c, m, n, look, g, hl, True)
    return _cover_change(t, need, new_adj, nh, g, hl, cons, memo)


@njit(cache=True, _nrt=False, forceinline=True)
def _cover_change(t, need, new_adj, nh, g, hl, cons, memo):
    """The rest of :func:`try_move`, given t's new edges: the change of the least cover, or a lower bound
    of at least ``need``."""
    bt = np.int64(1) << t
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
    # when that settles a pruned child (most pruned children whose edges change), no cover is solved
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


@njit(cache=True, _nrt=False, forceinline=True)
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
        # Branch-free (see the package's docstring): every constraint is written to both places, so undo's
        # rows have one slot more (tmax) than t can have constraints
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


# The search calls these: a move that changed no edge (a common case) costs no call
@njit(cache=True, _nrt=False, forceinline=True)
def keep_move(t, c, n, work, undo, d):
    """:func:`commit_saving`, inline when the move changed no edge."""
    if work[GS, G_PENDING]:
        commit_saving(t, c, n, work, undo, d)
    else:
        undo[d, U_APPLIED] = 0
        work[POS, 0] = work[POS, t]
        work[POS, t] = c


@njit(cache=True, _nrt=False, forceinline=True)
def undo_move(t, c, n, work, undo, d):
    """:func:`restore_move`, inline when the move had changed no edge."""
    if undo[d, U_APPLIED]:
        restore_move(t, c, n, work, undo, d)
    else:
        work[POS, 0] = work[POS, t]
        work[POS, t] = c

