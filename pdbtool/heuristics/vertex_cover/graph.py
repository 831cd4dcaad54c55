"""The conflict graph of a state, set up from scratch, and :class:`ConflictGraph`, which allocates its
arrays."""

from __future__ import annotations

from math import comb

import numpy as np
from numba import njit

from .components import _component, _cover_of, _set_component, new_memo
from .layout import G_HCOUNT, G_PENDING, GS, HMASK, HW, POS, U_ROW, graph_work, work_views
from .lookups import (ROW_CELL_SHIFT, ROW_MASK_SHIFT, ROW_UNITS_SHIFT, _record_units, _state_key_record, is_wide,
                      pack_all)


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
            rec = _state_key_record(near, records, word, cu, n)
            w = _record_units(rec, records, rows, blank)
            if w:
                hl[HMASK, hcount] = (np.int64(1) << t) | (np.int64(1) << u)
                hl[HW, hcount] = w
                hcount += 1
            # a triple is stored under each of its tiles; take it once, under its smallest (then u < v)
            first = rec & 0xFFFFFFFF
            for j in range(first, first + ((rec >> 32) & 0xFFFF)):
                r = np.int64(rows[j])
                v = r & 63
                if v and g[POS, v] == (r >> ROW_CELL_SHIFT) & 63 and (records[r >> ROW_MASK_SHIFT] >> blank) & 1:
                    hl[HMASK, hcount] = (np.int64(1) << t) | (np.int64(1) << u) | (np.int64(1) << v)
                    hl[HW, hcount] = (r >> ROW_UNITS_SHIFT) & 63
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


class ConflictGraph:
    """The arrays of one state's conflict graph and the work space of its updates: ``work`` and its views
    ``g``, ``hl`` and ``cons`` (:mod:`.layout`), ``memo`` (covers of components seen before, :mod:`.components`);
    ``lookups`` (``near``, ``records``, ``rows``) and ``move_lookups`` (one array) are those of
    :class:`pdbtool.tables.pairs_triples.DynamicTables`, packed (:mod:`.lookups`)."""

    def __init__(self, tables, memo: np.ndarray | None = None, packed=None):
        """``memo``: a memo to use instead of a new one (its entries are exact whatever state they came from, so
        searches may share one, but never two threads at once); ``packed``: :func:`pack_all` of ``tables``,
        if it was made before (the graphs only read it)."""
        n = tables.board.n
        self.n = n
        self.wide = is_wide(n)  # the layout of the move look-ups: try_move_wide reads them
        lookups, move_lookups = pack_all(tables) if packed is None else packed
        self.lookups: tuple[np.ndarray, ...] = lookups
        self.move_lookups: np.ndarray = move_lookups
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

    def reset(self, tiles: np.ndarray) -> int:
        """Set the graph to the state ``tiles`` (tile in each cell); return its least cover."""
        self.g[POS, np.asarray(tiles)] = np.arange(self.n)
        return int(graph_from_scratch(self.n, *self.lookups, *self.arrays))

    def undo_rows(self, capacity: int) -> np.ndarray:
        """The ``undo`` array of a search of ``capacity`` levels (:func:`.moves.commit_saving`)."""
        return np.zeros((capacity, U_ROW + 2 * self.n + 2 * self.tmax), dtype=np.int64)
