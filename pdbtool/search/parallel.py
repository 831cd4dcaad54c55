"""One instance's IDA* on several threads: each iteration's subtrees below a shallow depth, shared out.

Every iteration (bound B) first expands the tree breadth-first in Python, level by level and in move
order, with the same pruning as the kernels (f = g + h > B is generated but not expanded), until a level
holds enough nodes (``FRONTIER_PER_THREAD`` per thread) or the tree runs out.  The nodes of that level, all
at depth D, are the subtrees.  Threads take them one at a time, in order, and search each with the
heuristic's own kernel (:mod:`pdbtool.heuristics.kernels`, which releases the GIL) for exactly one iteration of bound
B - D, starting from the move that led into the subtree so that it is never undone.  The next bound is the
least f over the pruned nodes of the enumeration and of all subtrees.  When a thread finds the goal, the
others stop at the end of their current chunk of nodes and no new subtree starts.  Small iterations
(those after an iteration of fewer than ``SERIAL_BELOW`` nodes) run on one thread, from the root, since
enumerating subtrees in Python would cost more than they do.

Every goal found in the iteration of bound B has length B, which is optimal: the same argument as for
serial IDA* (no solution is shorter than B, or an earlier iteration would have found it).  So the length
equals the serial search's.  The node counts of every iteration but the last equal the serial counts
exactly (the same nodes are generated, only in another order); in the last iteration the serial search
stops at the first goal in depth-first order, while here the threads have searched other subtrees,
partly or wholly, by the time one of them reaches a goal, which may lie in a later subtree: the last
iteration's counts can be larger or smaller than the serial ones.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..heuristics import kernels as ida

FRONTIER_PER_THREAD = 256
MAX_CHUNK = 1 << 20  # nodes per kernel call: how soon a thread notices a stop
SERIAL_BELOW = 1 << 22  # an iteration after a smaller one runs on one thread


@dataclass
class ParallelOutcome:
    moves: list[int] | None = None   # the blank's moves of the solution, None if none was found
    generated: int = 0
    expanded: int = 0
    iterations: int = 0
    timed_out: bool = False
    bound: int = 0
    subtrees: list[int] = field(default_factory=list)  # subtrees per iteration
    # (bound, generated, expanded) after each iteration that ran to its end, counts cumulative
    finished: list[tuple[int, int, int]] = field(default_factory=list)


class _Shared:
    """What the threads of one iteration share (counters under a lock)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.next_index = 0
        self.generated = 0
        self.expanded = 0
        self.next_bound = ida.INF
        self.found: list[tuple[int, list[int]]] = []
        self.error: BaseException | None = None


def _frontier(heuristic, nb, goal, tiles, bound, target):
    """Expand breadth-first under ``bound`` until a level has ``target`` nodes.

    Returns (level, depth, generated, expanded, next_bound, goal_path); a level entry is
    (tiles, blank, move into it, path of moves)."""
    blank = tiles.index(0)
    level = [(tiles, blank, -1, [])]
    depth = generated = expanded = 0
    next_bound = ida.INF
    while level and len(level) < target:
        children = []
        for state, b, prev, path in level:
            expanded += 1
            for m in range(4):
                q = int(nb[b, m])
                if q < 0 or m + prev == 3:
                    continue
                generated += 1
                child = list(state)
                child[b], child[q] = child[q], 0
                h = heuristic.value(child)
                f = depth + 1 + h
                if f > bound:
                    next_bound = min(next_bound, f)
                    continue
                if h == 0 and tuple(child) == goal:
                    return [], depth + 1, generated, expanded, next_bound, path + [m]
                children.append((child, q, m, path + [m]))
        level = children
        depth += 1
    return level, depth, generated, expanded, next_bound, None


def _run_subtree(shared: _Shared, i, subtree, depth, bound, heuristic, nb, goal_tiles, chunk, deadline, node_limit,
                 on_chunk=None) -> bool:
    """Search subtree ``i`` (at ``depth``) for one iteration of ``bound``; False if the search must stop."""
    kernel = heuristic.kernel
    capacity = ida_capacity(bound - depth)
    state, blank, prev, path = subtree
    tiles = np.array(state, dtype=np.int64)
    _, levels, params = heuristic.setup(tiles, capacity)
    reg = ida.new_registers(bound - depth, blank)
    reg[ida.R_ROOT_PREV] = prev
    reg[ida.R_ONE_ITERATION] = 1
    next_move = np.zeros(capacity, dtype=np.int64)
    prev_move = np.zeros(capacity, dtype=np.int64)
    while True:
        gen0, exp0 = int(reg[ida.R_GEN]), int(reg[ida.R_EXP])
        status = kernel(tiles, nb, goal_tiles, reg, chunk, next_move, prev_move, *levels, *params)
        with shared.lock:
            shared.generated += int(reg[ida.R_GEN]) - gen0
            shared.expanded += int(reg[ida.R_EXP]) - exp0
            total = shared.generated
        if status == ida.FOUND:
            d = int(reg[ida.R_DEPTH])
            with shared.lock:
                shared.found.append((i, path + [int(m) for m in prev_move[1:d + 1]]))
            shared.stop.set()
            return False
        if status == ida.ITERATION_DONE:
            with shared.lock:
                shared.next_bound = min(shared.next_bound, int(reg[ida.R_NEXT]) + depth)
        elif status != ida.RUNNING:
            raise RuntimeError(f"subtree search returned status {status} (a bug)")
        elif on_chunk is not None:
            on_chunk()
        # checked after a finished subtree too: subtrees smaller than a chunk would otherwise never check
        if (deadline is not None and time.perf_counter() >= deadline) or \
                (node_limit is not None and total >= node_limit):
            shared.stop.set()
            return False
        if status == ida.ITERATION_DONE:
            return True
        if shared.stop.is_set():
            return False


def _worker(shared: _Shared, subtrees, depth, bound, heuristic, nb, goal_tiles, chunk, deadline, node_limit):
    try:
        while not shared.stop.is_set():
            with shared.lock:
                i = shared.next_index
                if i >= len(subtrees):
                    return
                shared.next_index += 1
            if not _run_subtree(shared, i, subtrees[i], depth, bound, heuristic, nb, goal_tiles, chunk, deadline,
                                node_limit):
                return
    except BaseException as exc:  # reported by the main thread
        shared.error = exc
        shared.stop.set()


def ida_capacity(depth_left: int) -> int:
    """Stack levels for a subtree search whose bound is ``depth_left``."""
    return 1 << max(6, int(depth_left + 4).bit_length())


def parallel_search(heuristic, nb: np.ndarray, goal_tiles: np.ndarray, state, h0: int, threads: int,
                    deadline: float | None = None, node_limit: int | None = None,
                    progress: Callable[[int, int, int], None] | None = None, chunk: int = MAX_CHUNK,
                    frontier_per_thread: int = FRONTIER_PER_THREAD, serial_below: int = SERIAL_BELOW,
                    report_every: float = 0.5) -> ParallelOutcome:
    """IDA* from ``state`` (not the goal) with ``threads`` threads; see the module docstring.

    An iteration after one that generated fewer than ``serial_below`` nodes runs on one thread (its
    counts are the serial ones, whether or not it is the last)."""
    goal = tuple(int(t) for t in goal_tiles)
    tiles = [int(t) for t in state]
    chunk = max(1, min(chunk, MAX_CHUNK))
    out = ParallelOutcome()
    bound = int(h0)
    last_iteration = 0
    while True:
        if deadline is not None and time.perf_counter() >= deadline:
            out.timed_out = True
            return out
        out.iterations += 1
        out.bound = bound
        limit = None if node_limit is None else node_limit - out.generated
        shared = _Shared()
        if last_iteration < serial_below:
            # a small iteration: one kernel from the root costs less than enumerating subtrees in Python
            before = out.generated
            root = (tiles, tiles.index(0), -1, [])

            def report():
                if progress is not None:
                    progress(bound, out.generated + shared.generated, out.expanded + shared.expanded)

            _run_subtree(shared, 0, root, 0, bound, heuristic, nb, goal_tiles, chunk, deadline, limit, report)
            level = []
            out.subtrees.append(1)
        else:
            before = out.generated
            level, depth, gen, exp, next_bound, path = _frontier(heuristic, nb, goal, tiles, bound,
                                                                 frontier_per_thread * threads)
            out.generated += gen
            out.expanded += exp
            out.subtrees.append(len(level))
            if path is not None:
                out.moves = path
                return out
            shared.next_bound = next_bound
            limit = None if limit is None else limit - gen
        if level:
            workers = [threading.Thread(target=_worker, daemon=True,
                                        args=(shared, level, depth, bound, heuristic, nb, goal_tiles, chunk,
                                              deadline, limit))
                       for _ in range(min(threads, len(level)))]
            for w in workers:
                w.start()
            for w in workers:
                while w.is_alive():
                    w.join(report_every)
                    if progress is not None and w.is_alive():
                        progress(bound, out.generated + shared.generated, out.expanded + shared.expanded)
        if shared.error is not None:
            raise shared.error
        out.generated += shared.generated
        out.expanded += shared.expanded
        last_iteration = out.generated - before
        if shared.found:
            out.moves = min(shared.found)[1]
            return out
        if shared.stop.is_set() or (deadline is not None and time.perf_counter() >= deadline):
            out.timed_out = True
            return out
        if shared.next_bound >= ida.INF:
            raise RuntimeError("the search space was exhausted without reaching the goal (a bug)")
        out.finished.append((bound, out.generated, out.expanded))
        bound = shared.next_bound
        if progress is not None:
            progress(bound, out.generated, out.expanded)


__all__ = ["parallel_search", "ParallelOutcome", "FRONTIER_PER_THREAD"]
