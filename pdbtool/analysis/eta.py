"""The forecast that ``pdbtool solve`` shows in the progress line of a long search: the current
iteration's predicted nodes and the time left to its end, from the prediction
(:mod:`pdbtool.analysis.prediction`) and the node rate measured so far.

The heuristic's distribution is sampled once per board, on the first report of a search that has run
for ``after`` seconds, so that short solves pay nothing.  The forecast counts generated nodes from the
start of the search: the predicted nodes of every iteration up to the current one, less those generated,
at the measured rate.
"""

from __future__ import annotations

from ..errors import PdbtoolError
from .prediction import Predictor, blank_cell

SAMPLES_COMPILED = 1_000_000
SAMPLES_PYTHON = 20_000


class IterationForecast:
    """``text(inst, bound, generated, elapsed)``: the forecast's words for the progress line, or ''."""

    def __init__(self, options, after: float = 5.0, seed: int = 0):
        self.options = options
        self.after = after
        self.seed = seed
        self._predictors: dict = {}
        self._starts: dict = {}

    def _predictor(self, board):
        if board not in self._predictors:
            from .evaluators import evaluator
            from .sampling import sample
            from .source import open_heuristic

            o = self.options
            try:
                heuristic, label = open_heuristic(o.heuristic, board, o.partition, o.reflect, o.cache_dir,
                                                  o.dynamic, o.blank)
                count = SAMPLES_COMPILED if evaluator(heuristic) is not None else SAMPLES_PYTHON
                self._predictors[board] = (heuristic, Predictor(sample(heuristic, count, self.seed, name=label)))
            except PdbtoolError:
                self._predictors[board] = None  # no forecast (the search itself goes on)
        return self._predictors[board]

    def forecast(self, inst, bound: int, generated: int, elapsed: float):
        """(predicted generated nodes of the iteration of ``bound``, seconds left to its end) or None."""
        if elapsed < self.after or getattr(inst, "tiles", None) is None:
            return None
        made = self._predictor(inst.board)
        if made is None:
            return None
        heuristic, predictor = made
        key = (inst.board, tuple(inst.tiles))
        if key not in self._starts:
            self._starts[key] = int(heuristic.value(inst.tiles))
        h0, cell = self._starts[key], blank_cell(inst.tiles)
        if bound < h0:
            return None
        iterations = predictor.search(cell, h0, bound)
        total = sum(it.generated for it in iterations)
        rate = generated / elapsed if elapsed > 0 else 0.0
        left = (total - generated) / rate if rate > 0 else float("inf")
        return iterations[-1].generated, left

    def text(self, inst, bound: int, generated: int, elapsed: float) -> str:
        made = self.forecast(inst, bound, generated, elapsed)
        if made is None:
            return ""
        nodes, left = made
        tail = f"~{_duration(left)} left" if left >= 0 else "past the prediction"
        return f", iteration predicted {nodes:.3g} nodes, {tail}"


def _duration(seconds: float) -> str:
    if seconds == float("inf"):
        return "?"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


__all__ = ["IterationForecast"]
