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

from dataclasses import dataclass

import numpy as np

from ..errors import PdbtoolError
from .sampling import Distribution
from .tree import branching, level_sizes


class PredictionError(PdbtoolError):
    pass


@dataclass
class IterationPrediction:
    bound: int
    expanded: float
    generated: float
    brute_force: float  # N_bound: the brute-force tree's nodes at depth bound


class Predictor:
    """Predictions for one board and one heuristic's distribution."""

    def __init__(self, distribution: Distribution):
        self.distribution = distribution
        self.board = distribution.board
        self.cum = distribution.cell_cumulative()
        self.step = 2 if distribution.parity else 1
        self.branch = branching(self.board).astype(np.float64)
        self._levels: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def _tree(self, start_cell: int, depth: int) -> tuple[np.ndarray, np.ndarray]:
        """(E, G): ``E[i, c]`` nodes at depth i with the blank in c, ``G[i, c]`` their children."""
        have = self._levels.get(start_cell)
        if have is None or have[0].shape[0] <= depth:
            sizes = level_sizes(self.board, start_cell, max(depth, 2 * (have[0].shape[0] if have else 64)))
            nodes = np.array([[[float(x) for x in row] for row in level] for level in sizes])
            self._levels[start_cell] = (nodes.sum(axis=2), (nodes * self.branch[None, :, :]).sum(axis=2))
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
        k = len(parts)
        return IterationPrediction(bound, sum(p.expanded for p in parts) / k, sum(p.generated for p in parts) / k,
                                   sum(p.brute_force for p in parts) / k)


def blank_cell(tiles) -> int:
    return int(list(tiles).index(0))


__all__ = ["Predictor", "IterationPrediction", "PredictionError", "blank_cell"]
