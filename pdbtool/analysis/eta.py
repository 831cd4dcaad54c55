"""The forecast that ``pdbtool solve`` shows in the progress line of a long search: the current
iteration's predicted nodes and the time left to its end, from the prediction
(:mod:`pdbtool.analysis.prediction`) and the node rate measured so far.

The heuristic's distribution is sampled once per board, on the first report of a search that has run
for ``after`` seconds, so that short solves pay nothing.

The prediction is the expected count of a random start; for one instance it can be far off (an instance
is not random once its bound is its own solution length, see docs/prediction.md), while the growth from
one iteration to the next is a property of the heuristic.  So once the search has finished an iteration,
the current one is forecast as the nodes that iteration took times the predicted growth; before that, the
prediction itself is shown.  The time left is what the forecast leaves of the current iteration, at the
node rate measured so far.  Iterations are seen through the reports, so their counts are exact to a
chunk of nodes.
"""

from __future__ import annotations

from ..errors import PdbtoolError
from .prediction import Predictor, blank_cell

SAMPLES_COMPILED = 200_000
SAMPLES_PYTHON = 20_000


class IterationForecast:
    """``text(inst, bound, generated, elapsed)``: the forecast's words for the progress line, or ''."""

    def __init__(self, options, after: float = 5.0, seed: int = 0):
        self.options = options
        self.after = after
        self.seed = seed
        self._predictors: dict = {}
        self._starts: dict = {}
        self._seen = None

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

    def observe(self, inst, bound: int, generated: int) -> None:
        """Every progress report of the search (the iterations' starts are seen through them)."""
        self._iteration_starts(inst, bound, generated)

    def _iteration_starts(self, inst, bound: int, generated: int) -> tuple[dict, int]:
        """(the nodes generated when each bound was first reported, the first bound reported) for the
        instance being searched."""
        if self._seen is None or self._seen[0] is not inst:
            self._seen = (inst, {}, bound)
        starts = self._seen[1]
        if bound not in starts:
            starts[bound] = generated
        return starts, self._seen[2]

    def forecast(self, inst, bound: int, generated: int, elapsed: float):
        """(forecast generated nodes of the iteration of ``bound``, seconds left to its end) or None."""
        if getattr(inst, "tiles", None) is None:
            return None
        starts, first = self._iteration_starts(inst, bound, generated)
        if elapsed < self.after:
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
        rate = generated / elapsed if elapsed > 0 else 0.0
        # an iteration's start is known when it is the first (0 nodes) or was not the first bound reported
        known = {b: (0 if b == h0 else n) for b, n in starts.items() if b == h0 or b != first}
        earlier = sorted(b for b in known if b < bound)
        if earlier and bound in known:
            prev = earlier[-1]
            done = known[bound] - known[prev]
            nodes = done * iterations[-1].generated / predictor.iteration(cell, prev).generated
            so_far = generated - known[bound]
        else:
            nodes = iterations[-1].generated
            so_far = generated - sum(it.generated for it in iterations[:-1])
        left = (nodes - so_far) / rate if rate > 0 else float("inf")
        return nodes, left

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
