"""The check of a plan's choice on a fresh sample.

A search over thousands of candidates scored on one sample picks, among candidates of nearly equal score,
those whose sampled low tail of h happens to be lucky: the prediction weighs a state of small h at a deep
level most, and the least values of h are few in any sample.  So the search's best few candidates (and
the best built-in) are scored again on other random states, and the plan is the best of them there; its
figures are those of the fresh sample, which the search did not see.
"""

from __future__ import annotations

from dataclasses import dataclass

from .scoring import Score, Scorer
from .search import Planner, PlanResult, ranking_key
from .space import Candidate

# the fresh sample's seed is the plan's seed plus this, so that it differs from a sample a user draws with
# a nearby seed to measure the plan
CHECK_SEED_OFFSET = 1_000_003


@dataclass(frozen=True)
class Check:
    samples: int
    seed: int
    finalists: int                          # candidates scored on the fresh sample
    search_score: Score                     # the chosen candidate's score on the search's sample
    ranked: tuple[tuple[Candidate, Score], ...]  # the finalists by their fresh score, best first


def finalists(planner: Planner, result: PlanResult, count: int) -> list[Candidate]:
    """The ``count`` best candidates that fit by the search's scores, and the best built-in that fits."""
    costs = planner.costs
    held = [(Candidate.from_key(k), s) for k, s in planner.state.scores.items()]
    fitting = [(c, s) for c, s in held if planner.fits(c)]
    fitting.sort(key=lambda cs: ranking_key(cs[0], cs[1], costs))
    out = [c for c, _ in fitting[:count]]
    if result.builtin is not None and result.builtin[1] not in out:
        out.append(result.builtin[1])
    return out


def check_choice(planner: Planner, result: PlanResult, scorer: Scorer, count: int) -> Check:
    """Score the finalists on ``scorer``'s (fresh) sample and make the best there the result's choice
    (``result`` is updated in place: best, score, costs and the built-in's score are the fresh sample's)."""
    costs = planner.costs
    scored = [(c, scorer.score(c)) for c in finalists(planner, result, count)]
    scored.sort(key=lambda cs: ranking_key(cs[0], cs[1], costs))
    best, fresh = scored[0]
    held = planner.state.scores[best.key]
    result.best, result.score, result.costs = best, fresh, costs.costs(best)
    if result.builtin is not None:
        name, cand, _ = result.builtin
        result.builtin = (name, cand, dict(scored)[cand])
    return Check(scorer.samples.count, scorer.samples.seed, len(scored), held, tuple(scored))


__all__ = ["Check", "check_choice", "finalists", "CHECK_SEED_OFFSET"]
