"""The IDA* driver: one explicit-stack kernel that searches with any heuristic, resumable in chunks.

:func:`ida` owns the stack, move generation and undo, the goal test, the bound and next-bound bookkeeping
and the node counts; a heuristic plugs in through the hooks of :mod:`pdbtool.heuristics.hooks`, implemented
for the class of its search state (``heuristic.setup(tiles, capacity) -> (h0, state)``).  The driver is
compiled once per state class and cached on disk.

Conventions
-----------
* Moves of the blank in the order up, left, right, down (``m`` = 0..3); the inverse of ``m`` is ``3 - m``,
  and the move that undoes the previous one is never generated.
* A node is *generated* when it is created as the child of a node being expanded (the start node is not
  counted); a node is *expanded* when its children are generated (the start node counts once per
  iteration).  A child whose f = g + h exceeds the bound is generated but not expanded.  The search stops
  at the first generated child that is the goal within the bound (its later siblings are not generated).
  Korf's 1985 counts, which include the start node, equal ``generated + 1`` under these rules.
* ``reg`` holds the registers (``R_*``): depth (-1 = start a new iteration), bound, next bound, generated,
  expanded, blank cell, iterations, the move into the root (-1 for the start state; the last move of the
  path to a subtree's root, which is then never undone), one-iteration mode, and the cut depth.  Level
  ``d`` of the stack is the node at depth d on the current path; ``next_move[d]`` is where its walk over
  its children stands, ``prev_move[d]`` the move that led to it.
* Two walks, declared per state class with ``hooks.at_once``: all children generated when their
  parent is expanded, then only those within the bound visited (``walk[d, :nwalk[d]]``; the pattern sums,
  whose table loads then overlap, and Manhattan), or each child generated as the walk reaches it (linear
  conflict, measured faster so; ddb/max, whose conflict graph holds one child's edges at a time).  The
  counts are the same.  The loop is compiled per state class with its walk as a constant, so Numba drops
  the other walk before it types the hooks of the one kept (the ddb hooks are large, so this shortens
  the first compile of their driver).
* Statuses: ``RUNNING`` (budget used up; call again), ``FOUND`` (the path is on the stack, depth =
  ``reg[R_DEPTH]``), ``EXHAUSTED`` (nothing left under any bound), ``GROW`` (the next bound needs a deeper
  stack: reallocate and call again; the driver is between iterations), ``ITERATION_DONE`` (only with
  ``reg[R_ONE_ITERATION]``: the iteration of bound ``reg[R_BOUND]`` is over, its next bound in
  ``reg[R_NEXT]``), ``CUT`` (only with ``reg[R_CUT]`` > 0: a node within the bound at the cut depth was
  generated; it is on the stack and is not expanded, and the next call goes on past it), ``STACK_FULL`` and
  ``NEGATIVE_H`` (defence in depth: a child's h was below zero, in ``reg[R_FAULT]``, or the path would go
  past the stack; only a damaged heuristic does either, and :meth:`Search.step` raises :class:`SearchFault`).
* Move pruning: with a move-pruning automaton (``fsm``, :mod:`pdbtool.search.move_automaton`) a move it
  rejects at a node is not generated at all, like the move that undoes the last one; its state per level is
  ``fsm_state[d]``.  Without one (``fsm`` empty) only the parent rule prunes.
* The driver releases the GIL, so threads can search subtrees of one iteration at once
  (:mod:`pdbtool.search.units`).

:class:`Search` holds one search's arrays and steps the driver; :func:`run_chunks` is the one loop that
runs a search in chunks of nodes between limit checks, for :class:`pdbtool.search.solver.Solver` and for a
unit of work.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np
from numba import njit
from numba.extending import overload

from .._native import numba_cache  # noqa: F401  (the package-wide cache stamp)
from .._native.intrinsics import prefetch
from ..errors import PdbtoolError
from ..heuristics import hooks

hooks.load_implementations()  # every hook's type fixed before the driver is typed

R_DEPTH, R_BOUND, R_NEXT, R_GEN, R_EXP, R_BLANK, R_ITER, R_ROOT_PREV, R_ONE_ITERATION, R_CUT, R_FAULT = range(11)
N_REGS = 11

RUNNING, FOUND, EXHAUSTED, GROW, ITERATION_DONE, CUT, STACK_FULL, NEGATIVE_H = range(8)
STOPPED = -1  # run_chunks only: a limit or the stop flag ended the run

INF = 1 << 40
DEFAULT_CAPACITY = 256
NO_AUTOMATON = np.zeros(0, dtype=np.int32)


class SearchFault(PdbtoolError):
    """The heuristic broke what the search relies on (h below zero, a path past the stack): its table is
    damaged or crafted.  The message says what was seen; the solver names the tables."""


@njit(cache=True, forceinline=True)
def _is_goal(tiles, goal_tiles):
    for c in range(tiles.shape[0]):
        if tiles[c] != goal_tiles[c]:
            return False
    return True


@njit(cache=True, forceinline=True)
def _pruned(fsm, fsm_state, d, m):
    """Whether the move-pruning automaton rejects move ``m`` from level ``d`` (never without one)."""
    return fsm.shape[0] > 0 and fsm[4 * fsm_state[d] + m] < 0


@njit(cache=True, forceinline=True)
def _later_siblings(nb, prev_move, depth, blank, fsm, fsm_state):
    """The children generated after each node on the path to level ``depth`` (whose blank is ``blank``)."""
    later = 0
    b = blank
    for a in range(depth - 1, -1, -1):
        m_in = prev_move[a + 1]
        b = nb[b, 3 - m_in]  # the blank at level a
        for m in range(m_in + 1, 4):
            if nb[b, m] >= 0 and m + prev_move[a] != 3 and not _pruned(fsm, fsm_state, a, m):
                later += 1
    return later


@njit(cache=True, forceinline=True)
def _children(hs, d, blank, prev_move, tiles, nbm, bound, next_bound, fsm, fsm_state, nb):
    """``hooks.children`` with the moves that the automaton prunes shown to the heuristic as off the board
    (in ``nbm``, the search's copy of ``nb``, restored after the call), so that it evaluates only the
    children that are generated.  Without an automaton ``nbm`` is ``nb`` and is not written."""
    masked = fsm.shape[0] > 0
    if masked:
        s = fsm_state[d]
        for m in range(4):
            if fsm[4 * s + m] < 0:
                nbm[blank, m] = -1
    hooks.children(hs, d, blank, prev_move, tiles, nbm, bound, next_bound)
    if masked:
        for m in range(4):
            nbm[blank, m] = nb[blank, m]


@njit(cache=True, forceinline=True)
def _generate(hs, d, blank, prev_move, tiles, nb, bound, next_bound, walk, nwalk, fsm, fsm_state, nbm):
    """Generate the children of the node at level ``d`` at once: their h, the moves of those within the
    bound (``walk[d, :nwalk[d]]``, in move order).  Returns the new next bound and the number generated."""
    _children(hs, d, blank, prev_move, tiles, nbm, bound, next_bound, fsm, fsm_state, nb)
    count = 0
    kept = 0
    for m in range(4):
        q = nb[blank, m]
        if q < 0 or m + prev_move == 3 or _pruned(fsm, fsm_state, d, m):
            continue
        count += 1
        f = d + 1 + hooks.child_h(hs, d, m, tiles[q], blank, q, bound, next_bound)
        if f > bound:
            if f < next_bound:
                next_bound = f
        else:
            walk[d, kept] = m
            kept += 1
            if fsm.shape[0] > 0:  # the child's row of the automaton, read when it is entered
                prefetch(fsm, 4 * fsm[4 * fsm_state[d] + m])
    nwalk[d] = kept
    return next_bound, count


def _search_loop(hs, tiles, nb, goal_tiles, reg, budget, next_move, prev_move, walk, nwalk, fsm, fsm_state, nbm):
    """The loop of :func:`ida`, compiled for each state class with its walk (:func:`_search_loop_for`)."""
    raise NotImplementedError("runs only inside the compiled driver")


# no reference counting: the hooks are inlined and allocate nothing (the vertex cover's kernels need it so)
@overload(_search_loop, jit_options={"_nrt": False, "nogil": True})
def _search_loop_for(hs, tiles, nb, goal_tiles, reg, budget, next_move, prev_move, walk, nwalk, fsm, fsm_state, nbm):
    # a constant of the closure: Numba's dead-branch pruning drops the other walk before typing, so the hooks
    # of that walk are never compiled for this state class
    at_once = hooks.walks_at_once(hs)

    def impl(hs, tiles, nb, goal_tiles, reg, budget, next_move, prev_move, walk, nwalk, fsm, fsm_state, nbm):
        depth = reg[R_DEPTH]
        bound = reg[R_BOUND]
        next_bound = reg[R_NEXT]
        generated = reg[R_GEN]
        expanded = reg[R_EXP]
        blank = reg[R_BLANK]
        cut = reg[R_CUT]
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
                if at_once:
                    next_bound, count = _generate(hs, 0, blank, prev_move[0], tiles, nb, bound, next_bound, walk, nwalk,
                                                  fsm, fsm_state, nbm)
                    generated += count
                else:
                    _children(hs, 0, blank, prev_move[0], tiles, nbm, bound, next_bound, fsm, fsm_state, nb)
                continue
            i = next_move[depth]
            if i == (nwalk[depth] if at_once else 4):
                if depth == 0:
                    depth = -1
                    if reg[R_ONE_ITERATION]:
                        status = ITERATION_DONE
                        break
                    continue
                # undo the move that led here: the tile that moved sits in the parent's blank cell
                pb = nb[blank, 3 - prev_move[depth]]
                t = tiles[pb]
                hooks.leave(hs, depth, t, blank, pb)
                tiles[blank] = t
                tiles[pb] = 0
                blank = pb
                depth -= 1
                continue
            next_move[depth] = i + 1
            if at_once:
                m = walk[depth, i]
                q = nb[blank, m]
                t = tiles[q]  # tile t slides from q into the blank's cell
                h = hooks.child_h(hs, depth, m, t, blank, q, bound, next_bound)
            else:
                m = i
                q = nb[blank, m]
                if q < 0 or m + prev_move[depth] == 3 or _pruned(fsm, fsm_state, depth, m):
                    continue
                generated += 1
                t = tiles[q]
                h = hooks.child_h(hs, depth, m, t, blank, q, bound, next_bound)
                f = depth + 1 + h
                if f > bound:
                    if f < next_bound:
                        next_bound = f
                    continue
            # defence in depth: a damaged table must not drive the stack past its end
            if h < 0:
                status = NEGATIVE_H
                reg[R_FAULT] = h
                break
            if depth + 2 > capacity:
                status = STACK_FULL
                break
            hooks.enter(hs, depth, m, t, blank, q, h)
            tiles[blank] = t
            tiles[q] = 0
            blank = q
            depth += 1
            next_move[depth] = 0
            prev_move[depth] = m
            if fsm.shape[0] > 0:
                fsm_state[depth] = fsm[4 * fsm_state[depth - 1] + m]
            if h == 0 and _is_goal(tiles, goal_tiles):
                status = FOUND
                if at_once:
                    generated -= _later_siblings(nb, prev_move, depth, blank, fsm, fsm_state)
                break
            if depth == cut:
                # a leaf here: the next call leaves it
                if at_once:
                    nwalk[depth] = 0
                    next_move[depth] = 0
                else:
                    next_move[depth] = 4
                status = CUT
                break
            expanded += 1
            if at_once:
                next_bound, count = _generate(hs, depth, blank, m, tiles, nb, bound, next_bound, walk, nwalk,
                                              fsm, fsm_state, nbm)
                generated += count
            else:
                _children(hs, depth, blank, m, tiles, nbm, bound, next_bound, fsm, fsm_state, nb)
            if generated >= stop:
                break
        reg[R_DEPTH] = depth
        reg[R_BOUND] = bound
        reg[R_NEXT] = next_bound
        reg[R_GEN] = generated
        reg[R_EXP] = expanded
        reg[R_BLANK] = blank
        return status

    return impl


@njit(cache=True, nogil=True, _nrt=False)
def ida(hs, tiles, nb, goal_tiles, reg, budget, next_move, prev_move, walk, nwalk, fsm, fsm_state, nbm):
    """Search from ``tiles`` with the heuristic whose state is ``hs`` for about ``budget`` generated nodes;
    returns a status (see the module docstring).  All progress is kept in the arguments.

    When the heuristic evaluates children at once (``hooks.at_once``), a node's children are all generated
    (and counted) when it is expanded and the walk visits only those within the bound (``next_move[d]``
    indexes ``walk[d]``); when the goal is found, the later siblings of each node on the path, which a
    one-at-a-time generation would not have reached, are taken off the count.  Otherwise the children are
    generated one at a time as the walk reaches them (``next_move[d]`` is the next move).

    ``fsm``: the move-pruning automaton's table (:mod:`pdbtool.search.move_automaton`), flat (the state
    after move m from state s at ``4 * s + m``; empty: none), whose state at level d is ``fsm_state[d]``
    (level 0's set by the caller); a move it prunes is not generated.
    ``nbm``: with an automaton, a copy of ``nb`` the driver may write (see ``_children``); else ``nb``."""
    return _search_loop(hs, tiles, nb, goal_tiles, reg, budget, next_move, prev_move, walk, nwalk, fsm, fsm_state,
                        nbm)


def new_registers(first_bound: int, blank: int, root_prev: int = -1, one_iteration: bool = False,
                  cut: int = 0) -> np.ndarray:
    """Registers for a fresh search whose first bound is ``first_bound``."""
    reg = np.zeros(N_REGS, dtype=np.int64)
    reg[R_DEPTH] = -1
    reg[R_NEXT] = first_bound
    reg[R_BLANK] = blank
    reg[R_ROOT_PREV] = root_prev
    reg[R_ONE_ITERATION] = int(one_iteration)
    reg[R_CUT] = cut
    return reg


class Search:
    """One IDA* search from ``tiles`` with ``heuristic``: its state, the registers and the stack.

    ``bound``: the first bound (default h of the start); ``root_prev``: the move into the start (never
    undone); ``one_iteration`` and ``cut`` as the registers of the same names; ``capacity``: the first
    stack depth (default ``DEFAULT_CAPACITY``).  :meth:`step` runs the driver.

    A heuristic that carries a move-pruning automaton (``heuristic.automaton``, see
    :func:`pdbtool.search.automata.with_pruning`) has its moves pruned by it.  ``path``: the blank's
    moves from the instance's start to ``tiles`` (a unit of work's root): the automaton's state at the root
    is that at the end of the path, and the move into the root is its last (``root_prev`` is then ignored),
    so a unit prunes as the serial search does below the same node."""

    def __init__(self, heuristic, tiles, bound: int | None = None, root_prev: int = -1,
                 one_iteration: bool = False, cut: int = 0, capacity: int | None = None,
                 path: tuple[int, ...] | None = None):
        board = heuristic.board
        self.heuristic = heuristic
        self.nb = board.neighbours()
        self.goal_tiles = np.array(board.goal_tiles, dtype=np.int64)
        self.tiles = np.array(tiles, dtype=np.int64)
        blank = int(np.flatnonzero(self.tiles == 0)[0])
        automaton = getattr(heuristic, "automaton", None)
        self.fsm = NO_AUTOMATON if automaton is None else automaton.table.ravel()
        self.nbm = self.nb if automaton is None else self.nb.copy()
        self.fsm_root = 0
        if path is not None:
            root_prev = int(path[-1]) if path else -1
        if automaton is not None:
            start = blank
            for m in reversed(path or ()):
                start = int(self.nb[start, 3 - int(m)])
            self.fsm_root = automaton.run(start, path or ())
        self._allocate(DEFAULT_CAPACITY if capacity is None else capacity)
        self.reg = new_registers(self.h0 if bound is None else bound, blank, root_prev, one_iteration, cut)

    def _allocate(self, capacity: int) -> None:
        # between iterations the tiles are those of the start, so the state is set up afresh
        self.h0, self.state = self.heuristic.setup(self.tiles, capacity)
        self.h0 = int(self.h0)
        if self.h0 < 0:
            raise SearchFault(f"h = {self.h0} at the start of a search (below zero)")
        self.next_move = np.zeros(capacity, dtype=np.int64)
        self.prev_move = np.zeros(capacity, dtype=np.int64)
        self.walk = np.zeros((capacity, 4), dtype=np.int64)
        self.nwalk = np.zeros(capacity, dtype=np.int64)
        self.fsm_state = np.zeros(capacity, dtype=np.int64)
        self.fsm_state[0] = self.fsm_root

    def step(self, budget: int) -> int:
        """Run the driver for about ``budget`` generated nodes; a deeper stack is allocated as needed.
        SearchFault when the heuristic gave a child an h below zero or drove the path past the stack."""
        while True:
            status = ida(self.state, self.tiles, self.nb, self.goal_tiles, self.reg, budget, self.next_move,
                         self.prev_move, self.walk, self.nwalk, self.fsm, self.fsm_state, self.nbm)
            if status == NEGATIVE_H:
                raise SearchFault(f"h = {int(self.reg[R_FAULT])} for a node at depth {int(self.reg[R_DEPTH]) + 1} "
                                  f"(below zero)")
            if status == STACK_FULL:
                raise SearchFault(f"the path reached depth {int(self.reg[R_DEPTH]) + 1} under bound "
                                  f"{int(self.reg[R_BOUND])}, past the stack of {self.next_move.shape[0]} levels")
            if status != GROW:
                return status
            self._allocate(2 * self.next_move.shape[0])

    @property
    def generated(self) -> int:
        return int(self.reg[R_GEN])

    @property
    def expanded(self) -> int:
        return int(self.reg[R_EXP])

    @property
    def iterations(self) -> int:
        return int(self.reg[R_ITER])

    @property
    def bound(self) -> int:
        """The bound being searched (between iterations: the next one)."""
        return int(self.reg[R_NEXT] if self.reg[R_DEPTH] < 0 else self.reg[R_BOUND])

    @property
    def next_bound(self) -> int:
        return int(self.reg[R_NEXT])

    def moves(self) -> list[int]:
        """The blank's moves from the start to the node on top of the stack."""
        return [int(m) for m in self.prev_move[1:int(self.reg[R_DEPTH]) + 1]]


class Tally:
    """The nodes of the searches that share a node limit, a deadline and a stop flag (thread-safe)."""

    def __init__(self, node_limit: int | None = None, deadline: float | None = None):
        self.node_limit = node_limit
        self.deadline = deadline
        self.generated = 0
        self.expanded = 0
        self.stop = threading.Event()
        self._lock = threading.Lock()

    def add(self, generated: int, expanded: int) -> None:
        with self._lock:
            self.generated += generated
            self.expanded += expanded

    def budget(self, chunk: int) -> int:
        """Nodes the next chunk may generate (at most ``chunk``; 0 once the node limit is reached)."""
        if self.node_limit is None:
            return chunk
        return max(0, min(chunk, self.node_limit - self.generated))

    def expired(self) -> bool:
        """Whether the stop flag is set or the deadline has passed."""
        return self.stop.is_set() or (self.deadline is not None and time.perf_counter() >= self.deadline)


def run_chunks(search: Search, chunk: int, tally: Tally, progress: Callable[[], None] | None = None) -> int:
    """Step ``search`` a chunk of nodes at a time until it returns a status other than RUNNING, or until
    ``tally`` says to stop (node limit reached, deadline passed, stop flag set): then STOPPED, and the stop
    flag is set.  The nodes go into ``tally`` chunk by chunk; ``progress()`` is called between chunks."""
    while True:
        budget = tally.budget(chunk)
        if budget <= 0:
            tally.stop.set()
            return STOPPED
        generated, expanded = search.generated, search.expanded
        status = search.step(budget)
        tally.add(search.generated - generated, search.expanded - expanded)
        if status != RUNNING:
            return status
        if progress is not None:
            progress()
        if tally.expired():
            tally.stop.set()
            return STOPPED


__all__ = ["ida", "Search", "SearchFault", "Tally", "run_chunks", "new_registers", "RUNNING", "FOUND", "EXHAUSTED",
           "GROW", "ITERATION_DONE", "CUT", "STACK_FULL", "NEGATIVE_H", "STOPPED", "INF", "NO_AUTOMATON"]
