"""The nodes of IDA*'s search of one given start, by stratified sampling of its own tree (Chen, Heuristics
for combinatorial search, 1992; applied to IDA* by Lelis, Zilles & Holte, Predicting the size of IDA*'s
search tree, Artificial Intelligence 196, 2013).

Korf, Reid & Edelkamp's prediction (:mod:`.prediction`) is the expected count of a *random* start; an
instance searched to its own optimal length is not one (docs/prediction.md).  Stratified sampling follows
the instance's own iteration of bound d level by level.  The nodes of a level are grouped by a *type*
(here the node's h and its parent's h: nodes of one type are taken to root subtrees of about the same
size); a probe keeps one representative of each type per level, with a weight, the number of nodes of the
level it stands for.  Each representative within the bound is expanded (its weight is added to the
expanded count, times its children to the generated count); its children within the bound are merged into
the next level's types: a child of weight w joins a type of weight W, and replaces the type's
representative with probability w / (W + w).  The sums are unbiased estimates of the iteration's expanded
and generated nodes; the mean over probes is the prediction.

The last iteration stops at the first solution that the depth-first order meets.  A probe also estimates
the number k of solution paths within the bound (the weight of the goal nodes it reaches); taking the
solutions as spread at random through the iteration's order, the expected part of the last iteration that
is searched is 1 / (k + 1) of it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .._native import numba_cache  # noqa: F401  (the package-wide cache stamp)
from ..errors import PdbtoolError
from ..processes import run_in_slices
from .evaluators import evaluator, state_value, value_bound


class InstancePredictionError(PdbtoolError):
    pass


@njit(cache=True, inline="always")
def _is_goal(state, goal_tiles):
    for c in range(state.shape[0]):
        if state[c] != goal_tiles[c]:
            return False
    return True


@njit(cache=True)
def _subtree(ev, root, blank0, move0, depth0, bound, nb, goal_tiles, where, cells, path, stack_moves, last, out):
    """The exact counts of the subtree of ``root`` (at depth ``depth0``, reached by ``move0``) within the
    iteration of ``bound``: ``out`` += (expanded, generated, goal nodes), by an iterative depth-first search
    with the parent-move rule, counting as the sampled levels do (every node within the bound expanded, a
    goal node counted when generated).  The caller has checked that the root is within the bound."""
    n = root.shape[0]
    for c in range(n):
        path[c] = root[c]
    blank = blank0
    top = 0
    stack_moves[0] = -1
    last[0] = move0
    out[0] += 1.0
    while top >= 0:
        m = stack_moves[top] + 1
        advanced = False
        while m < 4:
            q = nb[blank, m]
            if q < 0 or m + last[top] == 3:
                m += 1
                continue
            stack_moves[top] = m
            out[1] += 1.0
            path[blank] = path[q]
            path[q] = 0
            hc = state_value(ev, path, where, cells)
            if depth0 + top + 1 + hc <= bound:
                if hc == 0 and _is_goal(path, goal_tiles):
                    out[2] += 1.0
                out[0] += 1.0
                top += 1
                stack_moves[top] = -1
                last[top] = m
                blank = q
                advanced = True
                break
            path[q] = path[blank]
            path[blank] = 0
            m += 1
        if not advanced:
            # every move of this node tried: step back to its parent
            if top == 0:
                break
            mv = last[top]
            top -= 1
            prev = nb[blank, 3 - mv]
            path[blank] = path[prev]
            path[prev] = 0
            blank = prev
    return out


@njit(cache=True)
def _probe(ev, start, blank0, bound, nb, goal_tiles, top, reps, weights, blanks, moves, hs,
           nreps, nxt, nweights, nblanks, nmoves, nhs, slot_of, used, move0):
    """One stratified-sampling probe of the iteration of ``bound`` from a root reached by the blank's move
    ``move0`` (4: none): (expanded, generated, solutions)."""
    n = start.shape[0]
    where = np.empty(n, dtype=np.int64)
    cells = np.empty(n, dtype=np.int64)
    child = np.empty(n, dtype=np.int64)
    for c in range(n):
        reps[0, c] = start[c]
    weights[0] = 1.0
    blanks[0] = blank0
    moves[0] = move0
    for c in range(n):
        child[c] = start[c]
    hs[0] = state_value(ev, child, where, cells)
    count = 1
    expanded = 0.0
    generated = 0.0
    solutions = 0.0
    depth = 0
    while count > 0:
        ncount = 0
        for r in range(count):
            if depth + hs[r] > bound:
                continue
            w = weights[r]
            expanded += w
            b = blanks[r]
            for m in range(4):
                q = nb[b, m]
                if q < 0 or m + moves[r] == 3:
                    continue
                generated += w
                for c in range(n):
                    child[c] = reps[r, c]
                child[b] = child[q]
                child[q] = 0
                hc = state_value(ev, child, where, cells)
                if depth + 1 + hc > bound:
                    continue
                if hc == 0 and _is_goal(child, goal_tiles):
                    solutions += w
                key = hs[r] * top + hc
                s = slot_of[key]
                if s < 0:
                    s = ncount
                    slot_of[key] = s
                    used[s] = key
                    ncount += 1
                    nweights[s] = w
                    take = True
                else:
                    nweights[s] += w
                    take = np.random.random() * nweights[s] < w
                if take:
                    for c in range(n):
                        nxt[s, c] = child[c]
                    nblanks[s] = q
                    nmoves[s] = m
                    nhs[s] = hc
        for s in range(ncount):
            slot_of[used[s]] = -1
            for c in range(n):
                reps[s, c] = nxt[s, c]
            weights[s] = nweights[s]
            blanks[s] = nblanks[s]
            moves[s] = nmoves[s]
            hs[s] = nhs[s]
        count = ncount
        depth += 1
    return expanded, generated, solutions


@njit(cache=True)
def _probes(ev, start, blank0, bound, nb, goal_tiles, top, probes, seed, move0, out, reseed):
    """``probes`` probes into ``out``; ``reseed``: the first call of an iteration seeds the generator, and
    later calls go on with its stream (Numba's generator state belongs to the calling thread), so an
    iteration's probes are the same in one call or in many."""
    if reseed:
        np.random.seed(seed)
    n = start.shape[0]
    cap = top * top
    reps = np.empty((cap, n), dtype=np.int64)
    nxt = np.empty((cap, n), dtype=np.int64)
    weights = np.empty(cap)
    nweights = np.empty(cap)
    blanks = np.empty(cap, dtype=np.int64)
    nblanks = np.empty(cap, dtype=np.int64)
    moves = np.empty(cap, dtype=np.int64)
    nmoves = np.empty(cap, dtype=np.int64)
    hs = np.empty(cap, dtype=np.int64)
    nhs = np.empty(cap, dtype=np.int64)
    slot_of = np.full(cap, -1, dtype=np.int64)
    used = np.empty(cap, dtype=np.int64)
    for p in range(probes):
        e, g, s = _probe(ev, start, blank0, bound, nb, goal_tiles, top, reps, weights, blanks, moves, hs,
                         reps.shape[0], nxt, nweights, nblanks, nmoves, nhs, slot_of, used, move0)
        out[p, 0] = e
        out[p, 1] = g
        out[p, 2] = s


@njit(cache=True)
def _exact(ev, root, blank0, move0, depth0, bound, nb, goal_tiles):
    """(expanded, generated, goal nodes) of the subtree of ``root`` within the iteration, counted exactly."""
    n = root.shape[0]
    out = np.zeros(3)
    _subtree(ev, root, blank0, move0, depth0, bound, nb, goal_tiles, np.empty(n, dtype=np.int64),
             np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(bound + 2, dtype=np.int64),
             np.empty(bound + 2, dtype=np.int64), out)
    return out


def blank_moves(board, tiles, solution) -> list[int]:
    """The blank's moves (0 up, 1 left, 2 right, 3 down) of a solution given as the tiles moved."""
    state = list(board.check_state(tiles))
    nb = board.neighbours()
    out = []
    for tile in solution:
        b, q = state.index(0), state.index(int(tile))
        m = next((m for m in range(4) if nb[b, m] == q), None)
        if m is None:
            raise InstancePredictionError(f"the solution moves tile {tile}, which is not beside the blank")
        out.append(m)
        state[b], state[q] = state[q], 0
    return out


def first_solution_path(solver, tiles) -> list[int]:
    """The blank's moves of the first optimal solution that IDA*'s depth-first order (up, left, right, down,
    never undoing the last move) meets, found by ``solver`` (a search with a stronger heuristic and the
    parent-move rule only: its last iteration is the weaker heuristic's, pruned by h, so its first solution
    is the same path).  One thread, so the first solution is the depth-first order's."""
    if getattr(solver, "pruning", None) not in (None, "parent"):
        raise InstancePredictionError("the solution path must come from a search with the parent-move rule only")
    result = solver.solve(tiles, threads=1)
    if not result.solved:
        raise InstancePredictionError("the search that finds the solution path did not finish")
    return blank_moves(solver.board, tiles, result.solution)


@dataclass
class InstanceIteration:
    bound: int
    expanded: float
    generated: float
    solutions: float        # estimated solution paths within the bound (0 below the optimal length)
    probes: int


@dataclass
class InstancePrediction:
    iterations: list[InstanceIteration]
    # (expanded, generated) of the last iteration up to its first solution, when the solution path is known
    before_solution: tuple[float, float] | None = None

    @property
    def last_share(self) -> float:
        """The part of the last iteration searched before the first solution: the count along the known
        first solution path over the whole iteration's, or, without the path, 1 / (k + 1) (k the estimated
        solutions, at least one: solutions spread at random through the iteration's order)."""
        last = self.iterations[-1]
        if self.before_solution is not None:
            return min(1.0, self.before_solution[1] / last.generated) if last.generated > 0 else 1.0
        k = max(1.0, last.solutions)
        return 1.0 / (k + 1.0)

    @property
    def generated(self) -> float:
        """Every iteration's generated nodes, the last one's up to its first solution."""
        its = self.iterations
        last = self.before_solution[1] if self.before_solution is not None else its[-1].generated * self.last_share
        return sum(i.generated for i in its[:-1]) + last

    @property
    def expanded(self) -> float:
        its = self.iterations
        last = self.before_solution[0] if self.before_solution is not None else its[-1].expanded * self.last_share
        return sum(i.expanded for i in its[:-1]) + last


class InstancePredictor:
    """Stratified-sampling predictions for one heuristic (one with a compiled evaluator)."""

    def __init__(self, heuristic, probes: int = 100, seed: int = 0, exact_below: int = 50_000):
        ev = evaluator(heuristic)
        if ev is None:
            raise InstancePredictionError("predicting one instance needs a heuristic with a compiled evaluator "
                                          "(manhattan, linear-conflict, pdb with byte tables, ddb)")
        if probes < 1:
            raise InstancePredictionError(f"probes {probes}: give at least 1")
        self.heuristic = heuristic
        self.ev = ev
        self.board = heuristic.board
        self.probes = int(probes)
        self.seed = int(seed) % (1 << 32)
        self.exact_below = int(exact_below)
        self.top = value_bound(heuristic) + 2
        if self.top * self.top * self.board.n * 8 * 2 > 1 << 31:
            raise InstancePredictionError(f"the heuristic's values reach {self.top}: too many types to sample")
        self.nb = self.board.neighbours()
        self.goal_tiles = np.array(self.board.goal_tiles, dtype=np.int64)

    def iteration(self, tiles, bound: int, move: int = 4) -> InstanceIteration:
        """The iteration of ``bound`` from ``tiles`` (``move``: the blank's move that reached it, which its
        children do not undo; 4: none)."""
        start = np.array(self.board.check_state(tiles), dtype=np.int64)
        out = np.zeros((self.probes, 3))
        blank, seed = int(np.flatnonzero(start == 0)[0]), (self.seed * 1_000_003 + int(bound)) % (1 << 32)

        def probe(a: int, b: int) -> None:
            _probes(self.ev, start, blank, int(bound), self.nb, self.goal_tiles, self.top, b - a, seed, int(move),
                    out[a:b], a == 0)

        # slices of probes of about a quarter of a second each: a signal is seen between two
        run_in_slices(self.probes, probe, 0, None, [1])
        mean = out.mean(axis=0)
        return InstanceIteration(int(bound), float(mean[0]), float(mean[1]), float(mean[2]), self.probes)

    def _value(self, state: np.ndarray) -> int:
        return int(self.heuristic.value(state))

    def before_solution(self, tiles, bound: int, path: list[int]) -> tuple[float, float]:
        """(expanded, generated) of the iteration of ``bound`` up to the goal at the end of ``path`` (the
        blank's moves of the first solution that the search meets, in its move order: up, left, right,
        down).  The depth-first search expands each node of the path and, before the path's next node,
        the subtrees of the children it tries first: each is estimated by stratified sampling, and counted
        exactly where that estimate is at most ``exact_below`` nodes."""
        state = np.array(self.board.check_state(tiles), dtype=np.int64)
        if len(path) != bound:
            raise InstancePredictionError(f"the solution path has {len(path)} moves, the bound is {bound}")
        expanded = generated = 0.0
        blank = int(np.flatnonzero(state == 0)[0])
        last = 4
        for depth, step in enumerate(path):
            expanded += 1.0
            for m in range(4):
                q = int(self.nb[blank, m])
                if q < 0 or m + last == 3:
                    continue
                generated += 1.0
                if m == step:
                    break
                child = state.copy()
                child[blank], child[q] = child[q], 0
                hc = self._value(child)
                if depth + 1 + hc > bound:
                    continue
                it = self.iteration(child, bound - depth - 1, m)
                e, g = it.expanded, it.generated
                if g <= self.exact_below:
                    e, g, _ = _exact(self.ev, child, q, m, depth + 1, bound, self.nb, self.goal_tiles)
                expanded += float(e)
                generated += float(g)
            else:
                raise InstancePredictionError(f"move {step} at depth {depth} is not a move of the search")
            q = int(self.nb[blank, step])
            state[blank], state[q] = state[q], 0
            blank, last = q, step
        if tuple(state) != tuple(self.goal_tiles):
            raise InstancePredictionError("the solution path does not reach the goal")
        return expanded, generated

    def search(self, tiles, h0: int, last: int, step: int, path: list[int] | None = None) -> InstancePrediction:
        """Every iteration from h(start) ``h0`` through ``last`` by ``step``; with the first solution's
        ``path`` (of ``last`` moves), the last iteration counted up to it."""
        if last < h0:
            raise InstancePredictionError(f"depth {last} is below h(start) = {h0}")
        its = [self.iteration(tiles, d) for d in range(h0, last + 1, step)]
        before = self.before_solution(tiles, last, path) if path is not None else None
        return InstancePrediction(its, before)


__all__ = ["InstancePredictor", "InstancePrediction", "InstanceIteration", "InstancePredictionError", "blank_moves"]
