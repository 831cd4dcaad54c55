"""Optimal search for the four-peg Towers of Hanoi: breadth-first heuristic search (Zhou & Hansen's BFHS)
with layered duplicate detection, and the middle-state trick for the standard problem.

The state space is full of short cycles, so a depth-first search (IDA*) would revisit states without end;
BFHS expands the states layer by layer, keeping those with g + h <= U for an upper bound U, and detects
duplicates against the previous two layers (in an undirected graph a child of layer d lies in layer d-1,
d or d+1).  Each layer step runs in Numba kernels: the children of the layer (in parallel), one sort,
the removal of the states of the previous and current layers (a merge), and the heuristic of the new
states only (in parallel), which prunes a state as soon as one split exceeds the bound.  With a
consistent heuristic every state is reached at its true depth, so the first goal generated is optimal.

* With a known upper bound (the standard problem: the Frame-Stewart solution, constructed and checked
  move by move), one pass with U = that bound.  Otherwise U starts at h(start) and grows by one until a
  goal is found (breadth-first iterative deepening).
* The middle-state trick (standard problem, all disks from one peg to another): the largest disk moves
  once, when the other n-1 disks are all on the two intermediate pegs.  The search of the n-1 smaller
  disks to that set of states finds its nearest member at depth d; the solution is the path there, the
  largest disk's move, and the mirror image (pegs source <-> target) of the path, reversed: 2d + 1 moves.

A plan with a mod3 table (static splits only) is *carried*: every state of a layer holds the exact value
of each group, a child's found from its parent's and its own residue (CHILD-H), so a mod3 table costs
one look-up a group as a byte table does; the start's values are found by EXACT.

Nodes are counted as the tile searches do: ``expanded`` states (every state of a layer is expanded) and
``generated`` children.  The states expanded with f < U (those every A* must expand when U is optimal)
are counted apart from those with f = U.
"""

from __future__ import annotations

import resource
import time
from dataclasses import dataclass, field
from collections.abc import Callable

import numpy as np

from ..errors import PdbtoolError
from . import kernels as K
from .heuristics import Plan, compile_plan, parse_spec
from .instance import Instance, InstanceError, apply_moves, pack, relabel


@dataclass
class SearchStats:
    expanded: int = 0  # states of the layers, each expanded once
    expanded_below_bound: int = 0  # those with f < U: the states every A* expands when U is optimal
    generated: int = 0  # children, duplicates included
    h_sum: int = 0  # h of the states expanded (for their mean)
    peak_layer_states: int = 0  # the largest layer kept
    peak_bytes: int = 0  # the search arrays at their largest
    layers: list[int] = field(default_factory=list)
    bounds: list[int] = field(default_factory=list)


@dataclass
class Solution:
    instance: Instance
    length: int
    moves: list[tuple[int, int, int]] | None
    h_start: int
    stats: SearchStats
    seconds: float
    cpu_seconds: float
    middle: bool
    heuristic: str
    max_rss_bytes: int

    @property
    def mean_h_expanded(self) -> float:
        return self.stats.h_sum / self.stats.expanded if self.stats.expanded else 0.0

    def as_dict(self) -> dict:
        s = self.stats
        return {"instance": self.instance.name or self.instance.describe(), "disks": self.instance.disks,
                "heuristic": self.heuristic, "length": self.length, "h_start": self.h_start,
                "middle": self.middle, "expanded": s.expanded, "expanded_f_below_bound": s.expanded_below_bound,
                "generated": s.generated, "mean_h_expanded": round(self.mean_h_expanded, 4),
                "bounds": s.bounds, "peak_layer_states": s.peak_layer_states, "peak_search_bytes": s.peak_bytes,
                "max_rss_bytes": self.max_rss_bytes, "seconds": round(self.seconds, 3),
                "cpu_seconds": round(self.cpu_seconds, 3)}


def frame_stewart(n: int, source: int = 0, target: int = 3, spare=(1, 2)) -> list[tuple[int, int, int]]:
    """The Frame-Stewart solution of n disks (moves as (disk, from, to), disk 0 the smallest): the top
    n-k disks to a spare peg with four pegs, the k largest to the target with three, the rest on top."""
    moves: list[tuple[int, int, int]] = []

    def three(disks: list[int], a: int, b: int, c: int) -> None:  # a -> c via b
        if not disks:
            return
        three(disks[1:], a, c, b)
        moves.append((disks[0], a, c))
        three(disks[1:], b, a, c)

    best = _fs_splits(n)

    def four(disks: list[int], a: int, b: int, c: int, d: int) -> None:  # a -> d via b, c
        m = len(disks)
        if m == 0:
            return
        if m == 1:
            moves.append((disks[0], a, d))
            return
        k = best[m]
        top = disks[k:]  # the m - k smallest
        four(top, a, d, c, b)
        three(disks[:k], a, c, d)
        four(top, b, a, c, d)

    four(list(range(n - 1, -1, -1)), source, spare[0], spare[1], target)
    return moves


def _fs_splits(n: int) -> list[int]:
    cost = [0] * (n + 1)
    best = [0] * (n + 1)
    for m in range(1, n + 1):
        cost[m], best[m] = min((2 * cost[m - k] + 2 ** k - 1, k) for k in range(1, m + 1))
    return best


def _max_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def bfhs(start: int, n: int, plan: Plan, bound: int, goal_code: int, goal: int, keep_layers: bool,
         stats: SearchStats, progress: Callable[[int, int, SearchStats], None] | None = None):
    """One breadth-first heuristic search with upper bound ``bound``.  Returns (depth of the first goal,
    goal state, the layers kept or None) or (None, None, None) when no goal has f <= bound."""
    args = plan.args()
    h0 = int(K.heuristic(np.uint64(start), 1 << 30, *args))
    if h0 > bound:
        return None, None, None
    layer = np.array([start], dtype=np.uint64)
    vals = plan.group_values(start).reshape(1, -1) if plan.carried else None
    prev = np.empty(0, dtype=np.uint64)
    kept = [layer] if keep_layers else None
    stats.h_sum += h0
    depth = 0
    if K.find_goal(layer, n, goal_code, np.uint64(goal)) >= 0:
        stats.expanded += 1
        return 0, start, kept
    while layer.shape[0]:
        stats.expanded += layer.shape[0]
        stats.layers.append(int(layer.shape[0]))
        out = np.empty(layer.shape[0] * K.MAX_MOVES, dtype=np.uint64)
        stats.generated += int(K.expand_layer(layer, n, out))
        out.sort()
        fresh = K.unique_subtract(out, prev, layer)
        del out
        limit = bound - depth - 1
        hs = np.empty(fresh.shape[0], dtype=np.int64)
        fresh_vals = None
        if vals is None:
            K.evaluate(fresh, limit, *args, hs)
        else:
            fresh_vals = np.empty((fresh.shape[0], vals.shape[1]), dtype=np.uint8)
            if K.evaluate_carried(fresh, layer, vals, *args, hs, fresh_vals):  # pragma: no cover - by construction
                raise PdbtoolError("internal error: a child has no parent in the layer")
        keep = hs <= limit
        nxt = fresh[keep]
        hk = hs[keep]
        stats.h_sum += int(hk.sum())
        stats.expanded_below_bound += int(np.count_nonzero(hk < limit))
        live = prev.nbytes + layer.nbytes + fresh.nbytes + hs.nbytes + nxt.nbytes + \
            (sum(x.nbytes for x in kept) if kept else 0) + \
            (vals.nbytes + 2 * fresh_vals.nbytes if fresh_vals is not None and vals is not None else 0)
        if fresh_vals is not None:
            vals = fresh_vals[keep]
        stats.peak_bytes = max(stats.peak_bytes, live + layer.shape[0] * K.MAX_MOVES * 8)
        stats.peak_layer_states = max(stats.peak_layer_states, int(nxt.shape[0]))
        del fresh, hs, hk
        depth += 1
        if progress:
            progress(depth, int(nxt.shape[0]), stats)
        found = K.find_goal(nxt, n, goal_code, np.uint64(goal))
        if found >= 0:
            if kept is not None:
                kept.append(nxt)
            stats.expanded += 1  # the goal, reached and recognized
            return depth, int(nxt[found]), kept
        prev, layer = layer, nxt
        if kept is not None:
            kept.append(layer)
    return None, None, None


def _path(kept: list[np.ndarray], goal_state: int, n: int) -> list[int]:
    """States from the start to ``goal_state`` through the kept layers (a predecessor of each state is one
    of its neighbours in the layer before)."""
    path = [goal_state]
    kids = np.empty(K.MAX_MOVES, dtype=np.uint64)
    for d in range(len(kept) - 2, -1, -1):
        layer = kept[d]
        c = K.children_into(np.uint64(path[-1]), n, kids)
        for t in range(c):
            i = int(np.searchsorted(layer, kids[t]))
            if i < layer.shape[0] and layer[i] == kids[t]:
                path.append(int(kids[t]))
                break
        else:  # pragma: no cover - the layers hold a predecessor by construction
            raise PdbtoolError("internal error: a state of the path has no predecessor")
    return path[::-1]


def _moves_of(states: list[int], n: int) -> list[tuple[int, int, int]]:
    moves = []
    for a, b in zip(states, states[1:]):
        diff = a ^ b
        d = (diff & -diff).bit_length() - 1 >> 1
        moves.append((d, (a >> (2 * d)) & 3, (b >> (2 * d)) & 3))
    return moves


def solve(inst: Instance, heuristic: str = "static:auto", middle: bool | None = None, bound: int | None = None,
          keep_path: bool = True, table_for=None,
          progress: Callable[[int, int, SearchStats], None] | None = None, encoding: str = "byte") -> Solution:
    """An optimal solution of ``inst`` with ``heuristic`` (see :mod:`.heuristics`).

    ``middle`` searches the standard problem only to the middle state (default: whenever it applies and
    the heuristic's groups hold n - 1 disks; groups of n disks search to the goal).
    ``bound`` overrides the upper bound (default: the Frame-Stewart length for the standard problem, else
    none: the bound grows from h(start)).  ``keep_path`` keeps every layer to rebuild the moves (eight
    bytes a state expanded); without it only three layers are held and only the length is known.
    ``encoding``: how the tables are stored (default ``table_for``: the cache's tables in that encoding)."""
    t0, c0 = time.perf_counter(), time.process_time()
    n = inst.disks
    if middle is None or n == 1:  # one disk: nothing to search to the middle
        # by default, the middle-state search whenever it applies and the groups fit its n - 1 disks
        middle = inst.is_standard and n > 1 and spec_disks(heuristic) in (None, n - 1)
    if middle and not inst.is_standard:
        raise InstanceError("the middle-state search needs every disk on one peg and a goal peg")
    if inst.goal_peg is not None:
        src = inst.pegs[0] if inst.is_standard else None
        perm = _renaming(src, inst.goal_peg)
        inverse = [perm.index(p) for p in range(4)]
        start = relabel(inst.start, n, perm)
    else:
        perm = inverse = [0, 1, 2, 3]
        start = inst.start
    n_search = n - 1 if middle else n
    spec = auto_spec(n_search) if heuristic == "static:auto" else heuristic
    if middle:
        plan = compile_plan(spec, n_search, "middle", table_for=table_for, encoding=encoding)
        start_s = start & ((1 << (2 * n_search)) - 1)
        goal_code, goal = K.GOAL_MIDDLE, 0
    elif inst.goal_peg is not None:
        plan = compile_plan(spec, n, "peg3", table_for=table_for, encoding=encoding)
        start_s, goal_code, goal = start, K.GOAL_STATE, pack((3,) * n)
    else:
        plan = compile_plan(spec, n, "state", goal_pegs=inst.goal_pegs, table_for=table_for,
                            encoding=encoding)
        start_s, goal_code, goal = start, K.GOAL_STATE, inst.goal
    h_start = int(K.heuristic(np.uint64(start_s), 1 << 30, *plan.args()))
    if bound is None and inst.is_standard:
        fs = len(frame_stewart(n))
        bound = (fs - 1) // 2 if middle else fs
    stats = SearchStats()
    u = bound if bound is not None else h_start
    while True:
        stats.bounds.append(u)
        depth, found, kept = bfhs(start_s, n_search, plan, u, goal_code, goal, keep_path, stats, progress)
        if depth is not None:
            break
        if bound is not None:
            raise PdbtoolError(f"no solution within the bound {u} (the bound given is too small)")
        u += 1
    moves = None
    if keep_path:
        states = _path(kept, found, n_search)
        first = _moves_of(states, n_search)
        if middle:
            swap = [3, 1, 2, 0]
            mirrored = [relabel(s, n_search, swap) for s in reversed(states)]
            moves = first + [(n - 1, 0, 3)] + _moves_of(mirrored, n_search)
        else:
            moves = first
        moves = [(d, inverse[a], inverse[b]) for d, a, b in moves]
        if apply_moves(inst, moves) != inst.goal_placement:  # pragma: no cover - checked by construction
            raise PdbtoolError("internal error: the solution found does not reach the goal")
    length = 2 * depth + 1 if middle else depth
    return Solution(inst, length, moves, h_start, stats, time.perf_counter() - t0, time.process_time() - c0,
                    middle, spec, _max_rss())


def _renaming(source: int | None, target: int) -> list[int]:
    """A peg renaming (perm[old] = new) taking the goal peg to 3 and, if given, the source peg to 0."""
    perm = [None] * 4
    perm[target] = 3  # type: ignore[call-overload]
    if source is not None:
        perm[source] = 0  # type: ignore[call-overload]
    rest = [p for p in range(4) if perm[p] is None]
    free = [q for q in range(4) if q not in perm]
    for p, q in zip(rest, free):
        perm[p] = q  # type: ignore[call-overload]
    return perm  # type: ignore[return-value]


def spec_disks(spec: str) -> int | None:
    """The disks a specification's groups hold (None when it has no groups: infinite, zero, auto)."""
    if spec == "static:auto":
        return None
    sums = {sum(c.sizes) for c in parse_spec(spec) if c.sizes}
    return sums.pop() if len(sums) == 1 else None


def auto_spec(n: int) -> str:
    """The default heuristic: the largest table that fits (14 disks) and the rest in smaller tables."""
    if n == 0:
        return "zero"
    sizes = []
    left = n
    while left > 0:
        sizes.append(min(14, left))
        left -= sizes[-1]
    return "static:" + "-".join(map(str, sizes))
