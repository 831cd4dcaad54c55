"""Korf, Reid & Edelkamp's prediction of IDA*'s nodes (Time complexity of iterative-deepening-A*,
Artificial Intelligence 129, 2001).

An iteration of bound d expands the nodes of the brute-force tree whose depth i plus h is at most d (with
a consistent heuristic their ancestors are expanded too).  Among the N_i nodes at depth i, the share with
h <= d - i tends to the heuristic's *equilibrium* distribution P(d - i), which for the sliding-tile puzzles
depends on the blank's cell: so the sum runs over the cells,

    expanded(d) = sum_i sum_c N_i(c) P_c(d - i),    generated(d) = sum_i sum_c G_i(c) P_c(d - i),

with N_i(c) the tree's nodes at depth i with the blank in cell c and G_i(c) their children (both exact,
:mod:`pdbtool.analysis.tree`), and P_c the distribution of h over the random solvable states with the
blank in c (:mod:`pdbtool.analysis.sampling`).  The start node itself (depth 0) is expanded in every
iteration.  The bounds of the iterations are h(start), then every value (every other value when the
heuristic keeps the parity of the optimal length) up to the last one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import PdbtoolError
from .sampling import Distribution
from .tree import branching, level_sizes


class PredictionError(PdbtoolError):
    pass


@dataclass
class IterationPrediction:
    """The predicted nodes of an iteration: floats, or Python ints past a float's range (a deep bound)."""

    bound: int
    expanded: float | int
    generated: float | int
    brute_force: float | int  # N_bound: the brute-force tree's nodes at depth bound


FLOAT_SAFE = 1e300  # level sizes below this are summed as floats; past it, as logarithms (no overflow)

class Predictor:
    """Predictions for one board and one heuristic's distribution."""

    def __init__(self, distribution: Distribution):
        self.distribution = distribution
        self.board = distribution.board
        self.cum = distribution.cell_cumulative()
        self.step = 2 if distribution.parity else 1
        self.branch = branching(self.board).astype(np.float64)
        self._levels: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._logs: set[int] = set()  # start cells whose levels are held as logarithms

    def _tree(self, start_cell: int, depth: int) -> tuple[np.ndarray, np.ndarray]:
        """(E, G): ``E[i, c]`` nodes at depth i with the blank in c, ``G[i, c]`` their children."""
        have = self._levels.get(start_cell)
        if have is None or have[0].shape[0] <= depth:
            sizes = level_sizes(self.board, start_cell, max(depth, 2 * (have[0].shape[0] if have else 64)))
            branch = self.branch.astype(np.int64).tolist()
            # exact integers first, then floats, or natural logarithms where a float would overflow
            e = [[sum(row) for row in level] for level in sizes]
            g = [[sum(x * b for x, b in zip(row, branch[c])) for c, row in enumerate(level)] for level in sizes]
            if max(map(max, g)) < FLOAT_SAFE:
                self._levels[start_cell] = (np.array(e, dtype=np.float64), np.array(g, dtype=np.float64))
            else:
                self._levels[start_cell] = (_logs(e), _logs(g))
                self._logs.add(start_cell)
        return self._levels[start_cell]

    def _share(self, x: np.ndarray) -> np.ndarray:
        """``P[i, c]`` = P_c(x[i]): 0 below 0, 1 beyond the histogram."""
        width = self.cum.shape[1]
        out = np.zeros((x.size, self.cum.shape[0]))
        inside = (x >= 0) & (x < width)
        out[inside] = self.cum[:, x[inside]].T
        out[x >= width] = 1.0
        return out

    def iteration(self, start_cell: int, bound: int, start_known: bool = True) -> IterationPrediction:
        """The nodes of the iteration of ``bound`` from a start with the blank in ``start_cell``.

        With ``start_known`` the start is a given state, expanded in every iteration; without, it is a
        uniformly random state with its blank there (expanded when its h is within the bound), for which
        the sum is the exact expectation when the heuristic is consistent: along any fixed path of moves,
        a uniformly random start makes the node at its end a uniformly random state with its blank cell."""
        if bound < 0:
            raise PredictionError(f"bound {bound}: give 0 or more")
        e, g = self._tree(start_cell, bound)
        share = self._share(bound - np.arange(bound + 1))
        if start_known:
            share[0, :] = 1.0
        if start_cell in self._logs:
            with np.errstate(divide="ignore"):
                log_share = np.log(share)
            return IterationPrediction(bound, _exp_sum(e[: bound + 1] + log_share),
                                       _exp_sum(g[: bound + 1] + log_share), _exp_sum(e[bound]))
        expanded = float((e[: bound + 1] * share).sum())
        generated = float((g[: bound + 1] * share).sum())
        return IterationPrediction(bound, expanded, generated, float(e[bound].sum()))

    def bounds(self, h0: int, last: int) -> list[int]:
        """The bounds of the iterations from h(start) ``h0`` to ``last``."""
        if last < h0:
            raise PredictionError(f"depth {last} is below h(start) = {h0}")
        return list(range(h0, last + 1, self.step))

    def search(self, start_cell: int, h0: int, last: int) -> list[IterationPrediction]:
        """Every iteration of a search from h(start) ``h0`` through the bound ``last``."""
        return [self.iteration(start_cell, d) for d in self.bounds(h0, last)]

    def iteration_any_start(self, bound: int) -> IterationPrediction:
        """The iteration of ``bound`` from a uniformly random start (its blank uniform over the cells)."""
        parts = [self.iteration(c, bound, start_known=False) for c in range(self.board.n)]
        return IterationPrediction(bound, _mean([p.expanded for p in parts]), _mean([p.generated for p in parts]),
                                   _mean([p.brute_force for p in parts]))


def _logs(rows) -> np.ndarray:
    """Natural logarithms of non-negative Python integers of any size (-inf for 0)."""
    return np.array([[math.log(x) if x > 0 else -np.inf for x in row] for row in rows], dtype=np.float64)


def _exp_sum(logs: np.ndarray) -> float | int:
    """The sum of exp(logs): a float when it fits, else a Python int (of the float's precision)."""
    top = float(np.max(logs)) if logs.size else -np.inf
    if top == -np.inf:
        return 0.0
    log_total = top + math.log(float(np.exp(logs - top).sum()))
    if log_total < math.log(FLOAT_SAFE):
        return math.exp(log_total)
    exponent = math.floor(log_total / math.log(2)) - 52   # a 53-bit mantissa times a power of two
    return int(round(math.exp(log_total - exponent * math.log(2)))) << exponent


def _mean(values) -> float | int:
    if all(isinstance(v, float) for v in values):
        return sum(values) / len(values)
    return sum(int(v) for v in values) // len(values)


def blank_cell(tiles) -> int:
    return int(list(tiles).index(0))


__all__ = ["Predictor", "IterationPrediction", "PredictionError", "blank_cell"]
