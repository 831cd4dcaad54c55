"""IDA* with the dynamically partitioned pattern databases: ``ddb`` and ``max``.

* ``ddb``: Manhattan distance plus twice the least weighted vertex cover of the state's conflict graph
  (pairs, or pairs and triples; :mod:`pdbtool.heuristics.vertex_cover`).
* ``max``: the maximum of that and the static partition's sum (with its diagonal reflection), which is
  admissible because both are, and at least as strong as either.

The kernel follows every convention of :mod:`pdbtool.heuristics.kernels` (moves up, left, right, down, never undoing the
previous move; generated and expanded counted the same way; the same registers, statuses and budgeted,
resumable calls, the subtree registers ``R_ROOT_PREV``/``R_ONE_ITERATION``; the GIL released), so
:class:`pdbtool.search.solver.Solver` and :mod:`pdbtool.search.parallel` run it like the static kernels.  The conflict graph
is updated incrementally: a generated child puts the moved tile's new edges into the graph and computes the
change of the cover; a child that is entered keeps them (saving, per depth, what they replaced), a pruned
one takes them back, and backtracking restores what was saved instead of recomputing it.  With ``max``,
the static sum is looked at first, and a child it prunes costs no cover computation (unless its f could
lower the next bound, where the exact f is needed); as in the static kernel, the reflected sum is skipped
when the direct sum prunes and cannot lower the next bound.
"""

from __future__ import annotations

import threading
from typing import Sequence

import numpy as np
from numba import njit

from ..puzzle.board import Board
from ..errors import PdbtoolError
from .kernels import (EXHAUSTED, FOUND, GROW, INF, ITERATION_DONE, R_BLANK, R_BOUND, R_DEPTH, R_EXP, R_GEN, R_ITER,
                  R_NEXT, R_ONE_ITERATION, R_ROOT_PREV, RUNNING)
from .kernels import _any_mapped, _is_goal, _mapped, _value_moved
from .vertex_cover import CMASK, ConflictGraph, commit_saving, new_memo, restore_move, revert_move, try_move

DYNAMIC_HEURISTICS = ("ddb", "max")


@njit(cache=True, nogil=True, _nrt=False)  # no reference counting, as in pdbtool.heuristics.vertex_cover
def ida_dynamic(tiles, nb, goal_tiles, reg, budget, next_move, prev_move, hd, hv, hsum, undo,
                md, use_static, npat, reflect, pat, slot, rpat, rslot, cellmap, kk, cells, addrs,
                pair_units, tri_start, tri_ent, pw, g, hl, cons, memo):
    """IDA* with h = Manhattan + 2 x least cover (``hd[d]`` at level d), maxed with the static sum when
    ``use_static`` (``hv``/``hsum``/``cellmap``/``cells`` as in :func:`pdbtool.heuristics.kernels.ida_pdb`, so a table
    shared through a board symmetry serves here too).  The graph arrays must describe the start state
    before the first call (:meth:`DynamicHeuristic.setup`)."""
    n = tiles.shape[0]
    mapped = _any_mapped(cellmap, npat, n)
    depth = reg[R_DEPTH]
    bound = reg[R_BOUND]
    next_bound = reg[R_NEXT]
    generated = reg[R_GEN]
    expanded = reg[R_EXP]
    blank = reg[R_BLANK]
    stop = generated + budget
    capacity = next_move.shape[0]
    status = RUNNING
    while True:
        if depth < 0:
            if next_bound >= INF:
                status = EXHAUSTED
                break
            if next_bound + 2 > capacity:
                status = GROW
                break
            bound = next_bound
            next_bound = INF
            reg[R_ITER] += 1
            depth = 0
            next_move[0] = 0
            prev_move[0] = reg[R_ROOT_PREV]
            expanded += 1
            continue
        m = next_move[depth]
        if m == 4:
            if depth == 0:
                depth = -1
                if reg[R_ONE_ITERATION]:
                    status = ITERATION_DONE
                    break
                continue
            # undo: the tile that moved sits in the parent's blank cell pb and goes back to ``blank``
            pb = nb[blank, 3 - prev_move[depth]]
            t = tiles[pb]
            if use_static:
                p = pat[t]
                if p >= 0:
                    cells[p, slot[t]] = _mapped(cellmap, p, blank, mapped)
                if reflect:
                    p = rpat[t]
                    if p >= 0:
                        cells[npat + p, rslot[t]] = cellmap[npat + p, blank]
            restore_move(t, blank, n, pw, g, hl, undo, depth)
            tiles[blank] = t
            tiles[pb] = 0
            blank = pb
            depth -= 1
            continue
        next_move[depth] = m + 1
        q = nb[blank, m]
        if q < 0 or m + prev_move[depth] == 3:
            continue
        generated += 1
        t = tiles[q]  # tile t slides from q into the blank's cell
        d1 = depth + 1
        hs = 0
        v0 = 0
        v1 = 0
        if use_static:
            sn = hsum[depth, 0]
            p = pat[t]
            if p >= 0:
                v0 = _value_moved(cells, p, slot[t], kk[p], _mapped(cellmap, p, blank, mapped),
                                  _mapped(cellmap, p, q, mapped), addrs[p], n)
                sn += v0 - hv[depth, p]
            hs = sn
            if d1 + sn > bound and d1 + sn >= next_bound:
                # pruned by the direct sum alone, and no larger h can lower the next bound
                continue
            if reflect:
                sr = hsum[depth, 1]
                p = rpat[t]
                if p >= 0:
                    row = npat + p
                    v1 = _value_moved(cells, row, rslot[t], kk[p], cellmap[row, blank], cellmap[row, q], addrs[p], n)
                    sr += v1 - hv[depth, row]
                if sr > hs:
                    hs = sr
            f = d1 + hs
            if f > bound:
                # pruned by the static sum; its exact f matters only if it may lower the next bound
                if f < next_bound:
                    delta = try_move(t, blank, n, pair_units, tri_start, tri_ent, pw, g, hl, cons, memo)
                    revert_move(t, n, pw, g, hl)
                    fd = d1 + hd[depth] + md[t, blank] - md[t, q] + 2 * delta
                    if fd > f:
                        f = fd
                    if f < next_bound:
                        next_bound = f
                continue
        if g[CMASK, t] == (np.int64(1) << t):
            # t has no conflict now, so the cover cannot drop: Manhattan alone bounds the child's h below
            flb = d1 + hd[depth] + md[t, blank] - md[t, q]
            if flb > bound and flb >= next_bound:
                continue
        delta = try_move(t, blank, n, pair_units, tri_start, tri_ent, pw, g, hl, cons, memo)
        hdc = hd[depth] + md[t, blank] - md[t, q] + 2 * delta
        h = hdc if hdc > hs else hs
        f = d1 + h
        if f > bound:
            revert_move(t, n, pw, g, hl)
            if f < next_bound:
                next_bound = f
            continue
        commit_saving(t, blank, n, g, hl, undo, d1)
        hd[d1] = hdc
        if use_static:
            width = 2 * npat if reflect else npat
            for j in range(width):
                hv[d1, j] = hv[depth, j]
            hsum[d1, 0] = hsum[depth, 0]
            hsum[d1, 1] = hsum[depth, 1]
            p = pat[t]
            if p >= 0:
                cells[p, slot[t]] = _mapped(cellmap, p, blank, mapped)
                hsum[d1, 0] += v0 - hv[depth, p]
                hv[d1, p] = v0
            if reflect:
                p = rpat[t]
                if p >= 0:
                    row = npat + p
                    cells[row, rslot[t]] = cellmap[row, blank]
                    hsum[d1, 1] += v1 - hv[depth, row]
                    hv[d1, row] = v1
        tiles[blank] = t
        tiles[q] = 0
        blank = q
        depth = d1
        next_move[depth] = 0
        prev_move[depth] = m
        if hdc == 0 and _is_goal(tiles, goal_tiles):
            status = FOUND
            break
        expanded += 1
        if generated >= stop:
            break
    reg[R_DEPTH] = depth
    reg[R_BOUND] = bound
    reg[R_NEXT] = next_bound
    reg[R_GEN] = generated
    reg[R_EXP] = expanded
    reg[R_BLANK] = blank
    return status


class DynamicHeuristicError(PdbtoolError):
    pass


class DynamicHeuristic:
    """Manhattan + 2 x least weighted vertex cover of the conflict graph (``ddb``), or its max with a
    static :class:`pdbtool.heuristics.static.PatternSum` (``max``).  Same interface as the heuristics of
    :mod:`pdbtool.heuristics.static`: ``value(state)``, ``kernel`` and ``setup(tiles, capacity)``."""

    def __init__(self, tables, static=None):
        self.tables = tables
        self.board: Board = tables.board
        self.static = static
        if static is not None and static.board != self.board:
            raise DynamicHeuristicError(f"the static partition is for {static.board.dims} goal "
                                        f"{static.board.goal_name}, the dynamic tables for {self.board.dims}")
        self.name = "max" if static is not None else "ddb"
        self.md = self.board.manhattan_table()
        self._scratch = threading.local()

    # --- whole-state evaluation ------------------------------------------------------------------------------
    def cover(self, state: Sequence[int]) -> int:
        """The least weighted vertex cover of the state's conflict graph (in units of two moves)."""
        # one graph per thread, reused: allocating one (its memo is 4 MB) costs some 40 times its reset, and
        # the frontier of a threaded search (pdbtool.search.parallel) evaluates every node it enumerates here
        graph = getattr(self._scratch, "graph", None)
        if graph is None:
            graph = self._scratch.graph = ConflictGraph(self.tables, self._memo())
        return graph.reset(np.asarray(state, dtype=np.int64))

    def _memo(self) -> np.ndarray:
        """The calling thread's memo of component covers: exact entries, so the searches of one thread share
        it (a threaded search's subtrees start warm), while two threads never write one at once."""
        memo = getattr(self._scratch, "memo", None)
        if memo is None:
            memo = self._scratch.memo = new_memo()
        return memo

    def ddb_value(self, state: Sequence[int]) -> int:
        tiles = np.asarray(state, dtype=np.int64)
        return int(self.md[tiles, np.arange(self.board.n)].sum()) + 2 * self.cover(tiles)

    def value(self, state: Sequence[int]) -> int:
        h = self.ddb_value(state)
        if self.static is not None:
            h = max(h, self.static.value(state))
        return h

    # --- the kernel ------------------------------------------------------------------------------------------
    @property
    def kernel(self):
        return ida_dynamic

    def setup(self, tiles: np.ndarray, capacity: int):
        """(h0, stack-level arrays, parameters) of a search from ``tiles``.  Each call has a graph of its own,
        held by the parameters, so that threads can search subtrees at once (:mod:`pdbtool.search.parallel`)."""
        n = self.board.n
        graph = ConflictGraph(self.tables, self._memo())
        hd = np.zeros(capacity, dtype=np.int64)
        hd[0] = int(self.md[tiles, np.arange(n)].sum()) + 2 * graph.reset(tiles)
        h0 = int(hd[0])
        st = self.static
        if st is not None:
            hs0, hv, hsum = st.sum_levels(tiles, capacity)
            h0 = max(h0, hs0)
            static = (True, *st.kernel_params(tiles))
        else:
            hv = np.zeros((capacity, 1), dtype=np.int64)
            hsum = np.zeros((capacity, 2), dtype=np.int64)
            none = np.full(n, -1, dtype=np.int64)
            static = (False, 0, False, none, none, none, none, np.zeros((1, n), dtype=np.int64),
                      np.zeros(1, dtype=np.int64), np.zeros((1, 1), dtype=np.int64), np.zeros(1, dtype=np.int64))
        params = (self.md, *static, *graph.lookups, *graph.arrays)
        return h0, (hd, hv, hsum, graph.undo_rows(capacity)), params


def make_dynamic_heuristic(name: str, board: Board, dynamic: str | None = None, patterns=None, tables=None,
                           reflect: bool = True, cache=None, cache_dir=None, threads: int | None = None,
                           notify=None, shared=None) -> DynamicHeuristic:
    """``ddb`` (the dynamic set ``dynamic``, default pairs+triples) or ``max`` (also needs the static
    partition's patterns and tables; ``shared`` as in :class:`pdbtool.heuristics.static.PatternSum`)."""
    from ..tables.pairs_triples import load_dynamic

    if name not in DYNAMIC_HEURISTICS:
        raise DynamicHeuristicError(f"unknown dynamic heuristic {name!r}: choose one of "
                                    f"{', '.join(DYNAMIC_HEURISTICS)}")
    lookups = load_dynamic(board, dynamic or "pairs+triples", cache=cache, cache_dir=cache_dir, jobs=threads,
                           notify=notify)
    static = None
    if name == "max":
        from .static import PatternSum

        if patterns is None or tables is None:
            raise DynamicHeuristicError("the max heuristic needs a static partition and its tables")
        static = PatternSum(patterns, tables, reflect, shared)
    return DynamicHeuristic(lookups, static)
