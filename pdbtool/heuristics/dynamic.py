"""The dynamically partitioned pattern databases: ``ddb`` and ``max``.

* ``ddb``: Manhattan distance plus twice the least weighted vertex cover of the state's conflict graph
  (pairs, or pairs and triples; :mod:`pdbtool.heuristics.vertex_cover`).
* ``max``: the maximum of that and the static partition's sum (with its diagonal reflection), which is
  admissible because both are, and at least as strong as either.  The static part is a pattern sum of byte
  tables (:mod:`pdbtool.heuristics.pattern_sum`) or, for a catalogue or zero-aware tables, the catalogue
  kernel (:mod:`pdbtool.heuristics.catalogue`).

In the search (:mod:`pdbtool.search.driver`) the conflict graph is updated incrementally: a generated child
works out the moved tile's new edges and the change of the cover without changing the graph; a child that
is entered puts them in (saving, per depth, what they replaced), a pruned one leaves nothing behind, and
leaving a node restores what was saved instead of recomputing it.  Children are evaluated one at a time,
since the work rows hold one child's pending edges at once.  With ``max``, the static sum is looked at
first, and a child it prunes costs no cover computation (unless its f could lower the next bound, where
the exact f is needed); as in :mod:`pdbtool.heuristics.pattern_sum`, the reflected sum is skipped when the
direct sum prunes and cannot lower the next bound.  A catalogue evaluates its sums for all the children of
a node when it is expanded (its ``children`` hook, with its lazy rule), and each child then gets the cover
as it is reached.  The catalogue's h of a child within the bound may be a lower bound of its sums' max
(the lazy rule), so a child that only the cover prunes may get an f below the exact max's; such an f is
never above the exact one, so the search stays optimal, and it changes the next bound only when no child
of the iteration has the least f a pruned child can have (the bound plus two).
"""

from __future__ import annotations

import threading
from collections import namedtuple
from collections.abc import Sequence

import numpy as np
from numba.extending import overload

from ..errors import PdbtoolError
from ..puzzle.board import Board
from ..registry import DEFAULT_DYNAMIC_SET
from . import hooks
from .hooks import is_state
from .catalogue import CatalogueState
from .pattern_sum import SUM_STATES, PatternSumState, enter_sums, leave_sums, moved_value
from .vertex_cover import CMASK, ConflictGraph, keep_move, new_memo, pack_all, try_move, try_move_wide, undo_move

# hd[d]: Manhattan + 2 x cover at level d; md[t, c]: Manhattan of tile t in cell c; use_static: ``max``;
# sums: the static part's state (a pattern sum's, a placeholder PatternSumState with ``ddb``, or a CatalogueState);
# moved[0/1]: the direct and reflected values of the pattern sum's child last evaluated; the graph
# (vertex_cover.graph.ConflictGraph): a move's look-ups, its work array (g's rows first), its memo and its undo
# rows per level
DynamicState = namedtuple("DynamicState", ["hd", "md", "use_static", "sums", "moved", "look", "work", "memo",
                                           "undo"])


# the state of a board of more than 32 cells: the same fields, with the wide move look-ups
# (:mod:`pdbtool.heuristics.vertex_cover.lookups`); a class of its own, so that the driver compiles one layout per
# state class and the narrow boards' search reads only the narrow one
WideDynamicState = namedtuple("WideDynamicState", ["hd", "md", "use_static", "sums", "moved", "look", "work",
                                                   "memo", "undo"])


hooks.at_once(False, (DynamicState, WideDynamicState))


# --- the static part: a pattern sum evaluates each child as it is reached, a catalogue all at once ----------
def _static_children(sums, d, blank, prev_move, tiles, nb, bound, next_bound):
    raise NotImplementedError("runs only inside the compiled driver")


def _static_h(hs, sums, d, m, t, to_cell, from_cell, bound, next_bound):
    """The static part's h of the child by move ``m`` (a pattern sum's: the direct sum alone when it prunes
    the child and cannot lower the next bound; its moved values kept in ``hs.moved`` for :func:`_static_enter`)."""
    raise NotImplementedError("runs only inside the compiled driver")


def _static_enter(hs, sums, d, m, t, to_cell, from_cell):
    raise NotImplementedError("runs only inside the compiled driver")


def _static_leave(sums, d, t, to_cell, from_cell):
    raise NotImplementedError("runs only inside the compiled driver")


@overload(_static_children, jit_options={"forceinline": True})
def _static_children_for(sums, d, blank, prev_move, tiles, nb, bound, next_bound):
    if is_state(sums, CatalogueState):
        def impl(sums, d, blank, prev_move, tiles, nb, bound, next_bound):
            hooks.children(sums, d, blank, prev_move, tiles, nb, bound, next_bound)
        return impl
    if is_state(sums, *SUM_STATES):
        return lambda sums, d, blank, prev_move, tiles, nb, bound, next_bound: None


@overload(_static_h, jit_options={"forceinline": True})
def _static_h_for(hs, sums, d, m, t, to_cell, from_cell, bound, next_bound):
    if is_state(sums, CatalogueState):
        return lambda hs, sums, d, m, t, to_cell, from_cell, bound, next_bound: sums.child_h[d, m]
    if is_state(sums, *SUM_STATES):
        def impl(hs, sums, d, m, t, to_cell, from_cell, bound, next_bound):
            d1 = d + 1
            v0, h = moved_value(sums, d, m, 0, t, to_cell, from_cell)
            if d1 + h > bound and d1 + h >= next_bound:
                return h  # pruned by the direct sum alone, and no larger h can lower the next bound
            v1 = 0
            if sums.reflect:
                v1, sr = moved_value(sums, d, m, 1, t, to_cell, from_cell)
                if sr > h:
                    h = sr
            hs.moved[0] = v0
            hs.moved[1] = v1
            return h
        return impl


@overload(_static_enter, jit_options={"forceinline": True})
def _static_enter_for(hs, sums, d, m, t, to_cell, from_cell):
    if is_state(sums, CatalogueState):
        def impl(hs, sums, d, m, t, to_cell, from_cell):
            hooks.enter(sums, d, m, t, to_cell, from_cell, 0)
        return impl
    if is_state(sums, *SUM_STATES):
        def impl(hs, sums, d, m, t, to_cell, from_cell):
            enter_sums(sums, d, m, t, to_cell, hs.moved[0], hs.moved[1])
        return impl


@overload(_static_leave, jit_options={"forceinline": True})
def _static_leave_for(sums, d, t, to_cell, from_cell):
    if is_state(sums, CatalogueState):
        def impl(sums, d, t, to_cell, from_cell):
            hooks.leave(sums, d, t, to_cell, from_cell)
        return impl
    if is_state(sums, *SUM_STATES):
        def impl(sums, d, t, to_cell, from_cell):
            leave_sums(sums, t, to_cell)
        return impl


@overload(hooks.children, jit_options={"forceinline": True})
def _children(hs, d, blank, prev_move, tiles, nb, bound, next_bound):
    if is_state(hs, DynamicState, WideDynamicState):
        def impl(hs, d, blank, prev_move, tiles, nb, bound, next_bound):
            if hs.use_static:
                _static_children(hs.sums, d, blank, prev_move, tiles, nb, bound, next_bound)
        return impl


@overload(hooks.child_h, jit_options={"forceinline": True})
def _child_h(hs, d, m, t, to_cell, from_cell, bound, next_bound):
    if is_state(hs, DynamicState, WideDynamicState):
        move = try_move_wide if is_state(hs, WideDynamicState) else try_move

        def impl(hs, d, m, t, to_cell, from_cell, bound, next_bound):
            n = hs.md.shape[0]
            d1 = d + 1
            # the child's f with the cover as it is now
            base = d1 + hs.hd[d] + hs.md[t, to_cell] - hs.md[t, from_cell]
            hs_static = 0
            f_static = 0  # the child's f by the static sum (max only)
            if hs.use_static:
                hs_static = _static_h(hs, hs.sums, d, m, t, to_cell, from_cell, bound, next_bound)
                f_static = d1 + hs_static
                if f_static > bound and f_static >= next_bound:
                    # pruned by the static sum, and its exact f cannot lower the next bound
                    return hs_static
            if f_static > bound:
                # pruned by the static sum; the cover matters only as it may lower the next bound
                target = next_bound
            else:
                if hs.work[CMASK, t] == (np.int64(1) << t):
                    # t has no conflict now, so the cover cannot drop: Manhattan alone bounds the child's h below
                    if base > bound and base >= next_bound:
                        return base - d1
                # a cover grown by ``need`` would prune the child for good: try_move may stop at a lower bound
                target = bound + 1 if bound + 1 > next_bound else next_bound
            # one call site, so that try_move is compiled into the driver once
            delta = move(t, to_cell, m, (target - base + 1) // 2, n, hs.look, hs.work, hs.memo)
            hdc = base - d1 + 2 * delta
            h = hdc if hdc > hs_static else hs_static
            if d1 + h <= bound:
                hs.hd[d1] = hdc  # the driver enters this child next (a pruned one leaves nothing to undo)
            return h
        return impl


@overload(hooks.enter, jit_options={"forceinline": True})
def _enter(hs, d, m, t, to_cell, from_cell, h):
    if is_state(hs, DynamicState, WideDynamicState):
        def impl(hs, d, m, t, to_cell, from_cell, h):
            keep_move(t, to_cell, hs.md.shape[0], hs.work, hs.undo, d + 1)
            if hs.use_static:
                _static_enter(hs, hs.sums, d, m, t, to_cell, from_cell)
        return impl


@overload(hooks.leave, jit_options={"forceinline": True})
def _leave(hs, d, t, to_cell, from_cell):
    if is_state(hs, DynamicState, WideDynamicState):
        def impl(hs, d, t, to_cell, from_cell):
            if hs.use_static:
                _static_leave(hs.sums, d, t, to_cell, from_cell)
            undo_move(t, to_cell, hs.md.shape[0], hs.work, hs.undo, d)
        return impl


class DynamicHeuristicError(PdbtoolError):
    pass


class DynamicHeuristic:
    """Manhattan + 2 x least weighted vertex cover of the conflict graph (``ddb``), or its max with a
    static :class:`pdbtool.heuristics.pattern_sum.PatternSum` (byte or zero-aware tables) or
    :class:`pdbtool.heuristics.catalogue.CatalogueSum` (``max``).  Same interface as the other heuristics:
    ``value(state)`` and ``setup(tiles, capacity)``."""

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
        self._pack_lock = threading.Lock()
        self._packed_lookups = None

    # --- whole-state evaluation ------------------------------------------------------------------------------
    def cover(self, state: Sequence[int] | np.ndarray) -> int:
        """The least weighted vertex cover of the state's conflict graph (in units of two moves)."""
        # one graph per thread, reused: allocating one costs far more than resetting it
        graph = getattr(self._scratch, "graph", None)
        if graph is None:
            graph = self._scratch.graph = ConflictGraph(self.tables, self._memo(), self._packed())
        return graph.reset(np.asarray(state, dtype=np.int64))

    def _memo(self) -> np.ndarray:
        """The calling thread's memo of component covers: exact entries, so the searches of one thread share
        it (a threaded search's subtrees start warm), while two threads never write one at once."""
        memo = getattr(self._scratch, "memo", None)
        if memo is None:
            memo = self._scratch.memo = new_memo()
        return memo

    def _packed(self):
        """The tables' packed look-ups (:func:`pdbtool.heuristics.vertex_cover.lookups.pack_all`), made once: every
        search's graph reads them (a threaded search sets up one per unit of work)."""
        with self._pack_lock:
            if self._packed_lookups is None:
                self._packed_lookups = pack_all(self.tables)
        return self._packed_lookups

    def packed_bytes(self) -> int:
        """Bytes of the packed look-ups a search and the sampler read (a state's and a move's), the
        heuristic's memory beside the tables' files."""
        lookups, move_lookups = self._packed()
        return int(sum(a.nbytes for a in lookups) + move_lookups.nbytes)

    def thread_graphs(self, threads: int) -> tuple[tuple[np.ndarray, ...], np.ndarray, np.ndarray]:
        """``(lookups, works, memos)`` for evaluating states from scratch in ``threads`` threads at once (the
        compiled sampler): the packed state look-ups, and a graph's work array and a memo per thread."""
        graph = ConflictGraph(self.tables, self._memo(), self._packed())
        works = np.zeros((threads,) + graph.work.shape, dtype=np.int64)
        memos = np.zeros((threads,) + graph.memo.shape, dtype=np.int64)
        return graph.lookups, works, memos

    def ddb_value(self, state: Sequence[int] | np.ndarray) -> int:
        tiles = np.asarray(state, dtype=np.int64)
        return int(self.md[tiles, np.arange(self.board.n)].sum()) + 2 * self.cover(tiles)

    def value(self, state: Sequence[int] | np.ndarray) -> int:
        h = self.ddb_value(state)
        if self.static is not None:
            h = max(h, self.static.value(state))
        return h

    # --- the search -------------------------------------------------------------------------------------------
    def setup(self, tiles: np.ndarray, capacity: int):
        """(h0, search state) of a search from ``tiles``.  Each call has a graph of its own, held by the
        state, so that threads can search subtrees at once (:mod:`pdbtool.search.units`)."""
        n = self.board.n
        graph = ConflictGraph(self.tables, self._memo(), self._packed())
        hd = np.zeros(capacity, dtype=np.int64)
        hd[0] = int(self.md[tiles, np.arange(n)].sum()) + 2 * graph.reset(tiles)
        h0 = int(hd[0])
        if self.static is not None:  # a PatternSum or a CatalogueSum: its own search state
            hs0, sums = self.static.setup(tiles, capacity)
            h0 = max(h0, hs0)
        else:
            sums = _no_sums(n)
        state_class = WideDynamicState if graph.wide else DynamicState
        state = state_class(hd, self.md, self.static is not None, sums, np.zeros(2, dtype=np.int64),
                             graph.move_lookups, graph.work, graph.memo, graph.undo_rows(capacity))
        return h0, state


def _no_sums(n: int) -> PatternSumState:
    """A pattern-sum state of no patterns, of the types of a real one (``ddb`` has no static sum)."""
    none = np.full(n, -1, dtype=np.int64)
    one = np.zeros(1, dtype=np.int64)
    return PatternSumState(np.zeros((1, 1), dtype=np.int64), np.zeros((1, 2), dtype=np.int64),
                           np.zeros((1, 4), dtype=np.int64), np.zeros((1, 4, 2), dtype=np.int64), 0, False, False,
                           none, none, none, none, np.zeros((1, n), dtype=np.int64), one,
                           np.zeros((1, 1), dtype=np.int64), one)


def ddb_heuristic(board: Board, dynamic: str | None = None, cache=None, cache_dir=None, threads: int | None = None,
                  notify=None) -> DynamicHeuristic:
    """``ddb``: the dynamic set ``dynamic`` (default: :data:`pdbtool.registry.DEFAULT_DYNAMIC_SET`)."""
    return DynamicHeuristic(_lookups(board, dynamic, cache, cache_dir, threads, notify))


def max_heuristic(board: Board, patterns=None, tables=None, reflect: bool = True, shared=None,
                  dynamic: str | None = None, cache=None, cache_dir=None, threads: int | None = None,
                  notify=None, partition=None, plan=None, blank: str = "minimized") -> DynamicHeuristic:
    """``max``: ``ddb`` and the static partition's heuristic as ``pdb`` makes it
    (:func:`pdbtool.heuristics.pattern_sum_heuristic`: the pattern sum of ``patterns`` over ``tables``, byte
    or zero-aware, ``shared`` as in :class:`pdbtool.heuristics.pattern_sum.PatternSum`; a catalogue
    ``partition`` over the tables of ``plan`` takes the catalogue kernel)."""
    from . import pattern_sum_heuristic

    if patterns is None or tables is None:
        raise DynamicHeuristicError("the max heuristic needs a static partition and its tables")
    static = pattern_sum_heuristic(board, patterns, tables, reflect, shared, partition=partition, plan=plan,
                                   blank=blank)
    lookups = _lookups(board, dynamic, cache, cache_dir, threads, notify)
    return DynamicHeuristic(lookups, static)


def _lookups(board, dynamic, cache, cache_dir, threads, notify):
    from ..tables.pairs_triples import load_dynamic

    return load_dynamic(board, dynamic or DEFAULT_DYNAMIC_SET, cache=cache, cache_dir=cache_dir, jobs=threads,
                        notify=notify)
