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


@njit(cache=True)
def _probe(ev, start, blank0, bound, nb, goal_tiles, top, reps, weights, blanks, moves, hs,
           nreps, nxt, nweights, nblanks, nmoves, nhs, slot_of, used):
    """One stratified-sampling probe of the iteration of ``bound``: (expanded, generated, solutions)."""
    n = start.shape[0]
    where = np.empty(n, dtype=np.int64)
    cells = np.empty(n, dtype=np.int64)
    child = np.empty(n, dtype=np.int64)
    for c in range(n):
        reps[0, c] = start[c]
    weights[0] = 1.0
    blanks[0] = blank0
    moves[0] = 4
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
                if hc == 0:
                    same = True
                    for c in range(n):
                        if child[c] != goal_tiles[c]:
                            same = False
                            break
                    if same:
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
def _probes(ev, start, blank0, bound, nb, goal_tiles, top, probes, seed, out, reseed):
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
                         reps.shape[0], nxt, nweights, nblanks, nmoves, nhs, slot_of, used)
        out[p, 0] = e
        out[p, 1] = g
        out[p, 2] = s


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

    @property
    def last_share(self) -> float:
        """The expected part of the last iteration searched before the first solution: 1 / (k + 1), k the
        estimated solutions (at least one: the last bound is the solution's length)."""
        k = max(1.0, self.iterations[-1].solutions)
        return 1.0 / (k + 1.0)

    @property
    def generated(self) -> float:
        """Every iteration's generated nodes, the last one's up to its first solution."""
        its = self.iterations
        return sum(i.generated for i in its[:-1]) + its[-1].generated * self.last_share

    @property
    def expanded(self) -> float:
        its = self.iterations
        return sum(i.expanded for i in its[:-1]) + its[-1].expanded * self.last_share


class InstancePredictor:
    """Stratified-sampling predictions for one heuristic (one with a compiled evaluator)."""

    def __init__(self, heuristic, probes: int = 100, seed: int = 0):
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
        self.top = value_bound(heuristic) + 2
        if self.top * self.top * self.board.n * 8 * 2 > 1 << 31:
            raise InstancePredictionError(f"the heuristic's values reach {self.top}: too many types to sample")
        self.nb = self.board.neighbours()
        self.goal_tiles = np.array(self.board.goal_tiles, dtype=np.int64)

    def iteration(self, tiles, bound: int) -> InstanceIteration:
        start = np.array(self.board.check_state(tiles), dtype=np.int64)
        out = np.zeros((self.probes, 3))
        blank, seed = int(np.flatnonzero(start == 0)[0]), (self.seed * 1_000_003 + int(bound)) % (1 << 32)

        def probe(a: int, b: int) -> None:
            _probes(self.ev, start, blank, int(bound), self.nb, self.goal_tiles, self.top, b - a, seed, out[a:b],
                    a == 0)

        # slices of probes of about a quarter of a second each: a signal is seen between two
        run_in_slices(self.probes, probe, 0, None, [1])
        mean = out.mean(axis=0)
        return InstanceIteration(int(bound), float(mean[0]), float(mean[1]), float(mean[2]), self.probes)

    def search(self, tiles, h0: int, last: int, step: int) -> InstancePrediction:
        """Every iteration from h(start) ``h0`` through ``last`` by ``step``."""
        if last < h0:
            raise InstancePredictionError(f"depth {last} is below h(start) = {h0}")
        return InstancePrediction([self.iteration(tiles, d) for d in range(h0, last + 1, step)])


__all__ = ["InstancePredictor", "InstancePrediction", "InstanceIteration", "InstancePredictionError"]
