"""``pdbtool plan``: the search against a brute-force enumeration of the partitions, resume, the budget."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from pdbtool.analysis.prediction import Predictor
from pdbtool.analysis.sampling import Distribution
from pdbtool.plan.run import PlanOptions, plan
from pdbtool.plan.scoring import SampleSet, Scorer
from pdbtool.plan.search import Planner, PlanInterrupted, StateFile, partitions_count, ranking_key
from pdbtool.plan.space import Budget, Candidate, CostModel
from pdbtool.puzzle.board import Board
from pdbtool.tables.cache import TableCache
from pdbtool.tables.encodings import payload_bytes
from pdbtool.tables.operations import build_tables, partition_plan
from pdbtool.tables.partitions import load_partition



def all_partitions(tiles):
    """Every set partition, by restricted growth strings (another enumeration than the planner's)."""
    n = len(tiles)

    def grow(i, labels, top):
        if i == n:
            groups = [[] for _ in range(top + 1)]
            for t, lab in zip(tiles, labels):
                groups[lab].append(t)
            yield groups
            return
        for lab in range(top + 2):
            yield from grow(i + 1, labels + [lab], max(top, lab))

    yield from grow(1, [0], 0)


def build_memory(board, groups, blank, encoding):
    """The bytes ``build`` stores for a partition: its own table plan, every stored table's payload."""
    from pdbtool.tables.partitions import Partition
    from pdbtool.tables.ranking import TilePattern

    part = Partition("p", board, tuple(TilePattern(board, g) for g in groups))
    return sum(payload_bytes(encoding, p.entries) for p in partition_plan(part, blank).stored)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return TableCache(tmp_path_factory.mktemp("plan-cache"))


class MemoScorer(Scorer):
    """The scorer with each candidate's score kept: the enumerations and the planners of one test score the
    same candidates, and a score is a function of the candidate and the sample."""

    def __init__(self, *args):
        super().__init__(*args)
        self._memo: dict[Candidate, object] = {}

    def score(self, cand):
        if cand not in self._memo:
            self._memo[cand] = super().score(cand)
        return self._memo[cand]


def make_scorer(dims, cache, samples=1000):
    board = Board.parse(dims)
    ss = SampleSet(board, samples, 3)
    scorer = MemoScorer(board, "minimized", True, ss, cache, 1)
    scorer.set_reference("manhattan", ss.manhattan(range(1, board.n)))
    return board, scorer


@pytest.fixture(scope="module")
def scorer33(cache):
    return make_scorer("3x3", cache)


@pytest.fixture(scope="module")
def scorer34(cache):
    return make_scorer("3x4", cache)


def brute_force_best(board, scorer, budget, encodings, partitions):
    """The best score over the ``partitions`` whose tables and builds fit ``budget``."""
    costs = CostModel(board, "minimized")
    best = None
    count = 0
    for groups in partitions:
        for e in encodings:
            cand = Candidate.make([groups], e)
            c = costs.costs(cand)
            if not budget.fits(c):
                continue
            if count % 16 == 0:  # the planner's count of the stored tables is build's own (a sample of them)
                assert c.memory == build_memory(board, cand.members[0], "minimized", e)
            count += 1
            s = scorer.score(cand)
            if best is None or s.relative < best.relative:
                best = s
    return best, count


def pairs_and_singles(tiles, most):
    """Every partition of ``tiles`` into at most ``most`` pairs and single tiles."""

    def pairs(rest, k):
        if k == 0:
            yield []
            return
        first = rest[0]
        for u in rest[1:]:
            left = [t for t in rest[1:] if t != u]
            for tail in pairs(left, k - 1):
                yield [(first, u)] + tail
        if len(rest) > 2 * k:  # the first tile alone
            yield from pairs(rest[1:], k)

    for k in range(most + 1):
        for chosen in pairs(list(tiles), k):
            used = {t for p in chosen for t in p}
            yield chosen + [(t,) for t in tiles if t not in used]


def planners_agree(board, scorer, budget, encodings, best, strategies=("exhaustive", "climb")):
    for strategy in strategies:
        planner = Planner(board, scorer, budget, "minimized", StateFile(None, {}), encodings,
                          strategy=strategy, max_members=1)
        result = planner.run()
        assert result.strategy == strategy or strategy == "auto"
        assert len(result.best.members) == 1
        assert result.score.relative == pytest.approx(best.relative, rel=1e-12), strategy


def test_plan_is_the_enumerations_best(scorer33):
    """3x3 within 600 bytes of tables: with builds held to the same 600 bytes, a triple's build (more than
    600 bytes of arrays) is out, so the partitions that fit are those into pairs and single tiles (every
    one of them: eight single tiles and four pairs take 72 + 4 * 63 bytes); with builds apart, one triple
    (504 bytes) fits too, beside single tiles or, where symmetric tables are shared, a pair, which every
    set partition's enumeration finds."""
    board, scorer = scorer33
    tiles = list(range(1, board.n))
    memory, encodings = 600, ("byte",)
    costs, held = CostModel(board, "minimized"), Budget(memory, None, 1)
    triple = Candidate.make([[(1, 2, 3)] + [(t,) for t in tiles[3:]]], "byte")
    assert not held.fits(costs.costs(triple))
    best, count = brute_force_best(board, scorer, held, encodings, pairs_and_singles(tiles, 4))
    assert count == 764  # the matchings of eight tiles
    planners_agree(board, scorer, held, encodings, best)
    apart = Budget(memory, None, 1, build_memory=1 << 20)
    assert apart.fits(costs.costs(triple))
    best_apart, count = brute_force_best(board, scorer, apart, encodings, all_partitions(tiles))
    # every matching, every triple with single tiles (C(8, 3)), and more where tables are shared; a better one
    assert count > 764 + 56 and best_apart.relative < best.relative
    planners_agree(board, scorer, apart, encodings, best_apart, ("exhaustive", "auto"))  # a climb stops short


def test_plan_on_3x4_is_the_enumerations_best(scorer34):
    """3x4 within 300 bytes (builds apart): eleven single tiles take at most 132 bytes and a pair's table
    132, so no triple (1,320 bytes) fits, and the partitions into pairs and single tiles that fit (those
    whose pairs a board symmetry maps onto each other share a table) are the space."""
    board, scorer = scorer34
    tiles = list(range(1, board.n))
    budget, encodings = Budget(300, None, 1, build_memory=1 << 20), ("byte",)
    costs = CostModel(board, "minimized")
    assert not budget.fits(costs.costs(Candidate.make([[(1, 2, 3)] + [(t,) for t in tiles[3:]]], "byte")))
    best, count = brute_force_best(board, scorer, budget, encodings, pairs_and_singles(tiles, 5))
    assert count > 1 + 55  # no pair, or any one of C(11, 2), and more
    planners_agree(board, scorer, budget, encodings, best, ("exhaustive",))


def test_score_is_the_predictors(scorer33):
    """The planner's score is Predictor.iteration_any_start's sum on the same distribution."""
    board, scorer = scorer33
    cand = Candidate.make([[(1, 2, 3), (4, 5, 6), (7, 8)]], "byte")
    h = scorer.h(cand)
    ss = scorer.samples
    counts = np.zeros((board.n, int(h.max()) + 2), dtype=np.int64)
    np.add.at(counts, (ss.blank, h), 1)
    predictor = Predictor(Distribution(board, "x", counts, 0, False))
    bound = scorer.weights.bound
    ref = Predictor(Distribution(board, "md", _counts(board, ss.blank, ss.manhattan(range(1, 9))), 0, False))
    expect = predictor.iteration_any_start(bound).generated / ref.iteration_any_start(bound).generated
    assert scorer.score(cand).relative == pytest.approx(expect, rel=1e-9)


def _counts(board, blank, h):
    counts = np.zeros((board.n, int(h.max()) + 2), dtype=np.int64)
    np.add.at(counts, (blank, h), 1)
    return counts


def test_mirror_groups_table_gives_the_groups_values(scorer33):
    """With the reflection, a group's values are its mirror group's with the sides swapped (the scorer
    looks a group up in its mirror's table when that one is at hand)."""
    _, scorer = scorer33
    group = (1, 2, 5)
    mirror = tuple(sorted(int(scorer._reflect_tile[t]) for t in group))
    assert mirror != group
    (g0, g1), (m0, m1) = scorer._lookup_group(group), scorer._lookup_group(mirror)
    assert (g0 == m1).all() and (g1 == m0).all() and (g0 != g1).any()


def test_merging_never_lowers_h(scorer34):
    """A table of the union of two groups is at least the sum of theirs (byte tables, every sample)."""
    _, scorer = scorer34
    a, b = (1, 2, 4), (3, 5)
    merged = scorer.h(Candidate.make([[a + b]], "byte"))
    apart = scorer.h(Candidate.make([[a, b]], "byte"))
    assert (merged >= apart).all() and (merged > apart).any()


def test_resumed_plan_equals_uninterrupted(scorer33, tmp_path):
    board, scorer = scorer33
    args = dict(encodings=("byte", "nibble"), strategy="climb", max_members=2, seed=5)
    whole = Planner(board, scorer, Budget(2500, None, 1), "minimized", StateFile(None, {}), **args).run()
    assert whole.steps >= 2
    path = tmp_path / "plan.state"
    stops = 0
    for stop in (7, 19, 40):
        try:
            Planner(board, scorer, Budget(2500, None, 1), "minimized", StateFile(path, {"c": 1}), stop_after=stop,
                    **args).run()
            break
        except PlanInterrupted:
            stops += 1
        held = json.loads(path.read_text())["scores"]
        assert len(held) >= stop
    assert stops >= 1
    resumed = Planner(board, scorer, Budget(2500, None, 1), "minimized", StateFile(path, {"c": 1}), **args).run()
    assert resumed.best == whole.best and resumed.history == whole.history
    assert resumed.computed < whole.computed
    with pytest.raises(Exception, match="another plan"):
        StateFile(path, {"c": 2})


@pytest.mark.parametrize("dims,memory,build_memory", [("3x3", 2500, None), ("3x4", 4000, 4000)])
def test_budget_never_exceeded(dims, memory, build_memory, cache, tmp_path):
    """The file the plan writes, built by build's own code, stores at most the budget, and no build it
    asks for makes more than the build memory (on 3x4, a triple's table fits the memory, its build not);
    the plan is the best of its finalists on the fresh sample."""
    board = Board.parse(dims)
    if build_memory is not None:
        triple = CostModel(board, "minimized").costs(Candidate.make([[(1, 2, 3)]], "byte"))
        assert triple.memory <= memory < triple.build_peak
    options = PlanOptions(board=board, memory=memory, samples=1000, seed=1, strategy="climb",
                          max_members=3, cache_dir=str(cache.dir), threads=1, build_memory=build_memory)
    outcome = plan(options, tmp_path / "s.state")
    path = tmp_path / "plan.txt"
    path.write_text(outcome.file_text(str(path)))
    part = load_partition(str(path))
    stored = [o for o in build_tables(cache, partition_plan(part, "minimized"), outcome.best.encoding, threads=1)
              if o.shared is None]
    made = sum(payload_bytes(outcome.best.encoding, o.record["entries"]) for o in stored)
    assert made == outcome.memory <= memory
    costs = CostModel(options.board, "minimized").costs(outcome.best)
    assert costs.build_peak <= outcome.build_memory
    if build_memory is not None:
        assert outcome.build_memory == build_memory
    check = outcome.check
    assert check is not None and check.ranked[0][0] == outcome.best and check.seed != options.seed
    assert all(outcome.result.score.relative <= s.relative for _, s in check.ranked)
    if outcome.result.builtin is not None:  # never worse than the best built-in that fits
        assert outcome.result.score.relative <= outcome.result.builtin[2].relative


def test_build_memory_is_kept_and_checked(tmp_path):
    from pdbtool.plan.run import default_build_memory, resolve_build_memory
    from pdbtool.plan.space import PlanError

    board = Board.parse("3x3")
    state = StateFile(tmp_path / "s.state", {"c": 1})
    free = default_build_memory()
    assert resolve_build_memory(PlanOptions(board=board, memory=600), state) == (free if free is not None else 600)
    state.build_memory = 12345  # a resumed plan keeps what its first run had
    assert resolve_build_memory(PlanOptions(board=board, memory=600), state) == 12345
    assert resolve_build_memory(PlanOptions(board=board, memory=600, build_memory=999), state) == 999
    if free is not None:
        with pytest.raises(PlanError, match="free for a build"):
            resolve_build_memory(PlanOptions(board=board, memory=600, build_memory=free + 1), state)


def test_partitions_count():
    assert partitions_count(8, 8) == 4140  # Bell(8)
    assert partitions_count(11, 2) == 35696
    assert partitions_count(5, 1) == 1


def test_cli_writes_a_partition_build_takes(cache, tmp_path):
    from pdbtool.cli.plan import command

    out = tmp_path / "p.txt"
    result = CliRunner().invoke(command, ["--board", "3x3", "--memory", "4K", "--samples", "1000", "--cache-dir",
                                          str(cache.dir), "--max-partitions", "1", "-o", str(out), "--format",
                                          "json", "--threads", "1", "--strategy", "climb"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output.strip().splitlines()[-1])
    assert data["memory"] <= 4096 and data["output"] == str(out)
    part = load_partition(str(out))
    assert [list(p.tiles) for p in part.patterns] == sorted(data["partitions"][0], key=lambda g: (-len(g), g))
    bad = CliRunner().invoke(command, ["--board", "3x3", "--memory", "lots"])
    assert bad.exit_code == 2 and "8G" in bad.output
    none = CliRunner().invoke(command, ["--board", "3x3", "--memory", "10", "--cache-dir", str(cache.dir),
                                        "--samples", "1000"])
    assert none.exit_code == 1 and "fits the budget" in none.output


def test_ranking_prefers_byte_then_memory(scorer33):
    board, scorer = scorer33
    costs = CostModel(board, "minimized")
    a = Candidate.make([[(1, 2, 3, 4), (5, 6, 7, 8)]], "byte")
    b = Candidate.make([[(1, 2, 3, 4), (5, 6, 7, 8)]], "nibble")
    sa, sb = scorer.score(a), scorer.score(b)
    assert sa == sb
    assert ranking_key(a, sa, costs) < ranking_key(b, sb, costs)


def test_a_catalogue_is_planned_only_in_byte_tables(scorer33):
    """solve reads a max of several partitions (a catalogue) from byte tables only: the planner never
    proposes one in another encoding, though a single partition may be nibble."""
    board, scorer = scorer33
    planner = Planner(board, scorer, Budget(1 << 20, None, 1), "minimized", StateFile(None, {}), ("byte", "nibble"))
    two = [[(1, 2, 3, 4), (5, 6, 7, 8)], [(1, 2, 5, 6), (3, 4, 7, 8)]]
    assert planner.fits(Candidate.make(two, "byte")) and not planner.fits(Candidate.make(two, "nibble"))
    assert planner.fits(Candidate.make(two[:1], "nibble"))
