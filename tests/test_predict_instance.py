"""Prediction of one instance's search by stratified sampling of its own tree, against exact counts."""

from __future__ import annotations

import numpy as np
import pytest

from pdbtool.analysis.instance_prediction import InstancePredictionError, InstancePredictor, blank_moves
from pdbtool.analysis.source import open_heuristic
from pdbtool.puzzle.board import Board
from pdbtool.search.driver import ITERATION_DONE, Search



@pytest.fixture(scope="module")
def manhattan8():
    return open_heuristic("manhattan", Board.parse("3x3"))[0]


def full_iteration(h, tiles, bound):
    """(expanded, generated) of IDA*'s iteration of ``bound`` with the goal test disabled."""
    s = Search(h, tiles, bound=bound, one_iteration=True)
    s.goal_tiles = np.full(h.board.n, -1, dtype=np.int64)
    assert s.step(1 << 50) == ITERATION_DONE
    return s.expanded, s.generated


STARTS = [(8, 6, 7, 2, 5, 4, 3, 0, 1), (6, 4, 7, 8, 5, 0, 3, 2, 1), (1, 2, 0, 3, 4, 5, 6, 7, 8)]


@pytest.mark.parametrize("tiles", STARTS)
def test_stratified_sampling_estimates_the_iteration(manhattan8, tiles):
    """The estimator is unbiased: the mean over many probes approaches the exact count of the instance's
    own iteration (not the expectation over random starts)."""
    h = manhattan8
    board = h.board
    assert board.is_solvable(tiles)
    h0 = int(h.value(tiles))
    predictor = InstancePredictor(h, probes=3000, seed=7)
    for bound in (h0 + 4, h0 + 8):
        expanded, generated = full_iteration(h, tiles, bound)
        got = predictor.iteration(tiles, bound)
        assert got.expanded == pytest.approx(expanded, rel=0.1)
        assert got.generated == pytest.approx(generated, rel=0.1)


def test_one_probe_is_exact_on_a_tree_of_distinct_types(manhattan8):
    """At the start's own bound the iteration is the start and its children: one probe counts it exactly."""
    h = manhattan8
    tiles = STARTS[0]
    h0 = int(h.value(tiles))
    got = InstancePredictor(h, probes=1).iteration(tiles, 0)
    assert got.expanded == 0 or h0 == 0
    expanded, generated = full_iteration(h, tiles, h0)
    got = InstancePredictor(h, probes=200, seed=1).iteration(tiles, h0)
    assert got.expanded == pytest.approx(expanded, rel=0.05) and got.generated == pytest.approx(generated, rel=0.05)


def test_solutions_are_counted(manhattan8):
    """Below the optimal length the goal is never reached; at it, a start near the goal finds its paths."""
    from pdbtool.search.solver import Solver

    h = manhattan8
    predictor = InstancePredictor(h, probes=500, seed=3)
    for tiles in (STARTS[1], STARTS[2]):
        length = Solver(h.board, heuristic="manhattan").solve(tiles).length
        assert predictor.iteration(tiles, length - 2).solutions == 0
    assert predictor.iteration(tiles, length).solutions > 0
    pred = predictor.search(tiles, int(h.value(tiles)), length + 4, 2)
    assert [i.bound for i in pred.iterations][-1] == length + 4
    assert 0 < pred.last_share <= 0.5


def test_refuses_what_it_cannot_evaluate(manhattan8):
    with pytest.raises(InstancePredictionError):
        InstancePredictor(manhattan8, probes=0)


def _iteration_counts(h, tiles, bound):
    s = Search(h, tiles, bound=bound, one_iteration=True)
    s.goal_tiles = np.full(h.board.n, -1, dtype=np.int64)
    assert s.step(1 << 50) == ITERATION_DONE
    return s.generated


FAR_STARTS = [(8, 6, 7, 2, 5, 4, 3, 0, 1), (6, 4, 7, 8, 5, 0, 3, 2, 1), (0, 8, 7, 6, 5, 4, 3, 2, 1),
              (3, 1, 2, 6, 4, 5, 0, 7, 8)]


@pytest.mark.parametrize("tiles", FAR_STARTS)
def test_the_last_iteration_up_to_the_first_solution_is_exact(manhattan8, tiles):
    """Counted along the first solution path (found by a stronger heuristic in the same move order) with
    every subtree left of it counted exactly, the iterations sum to the search's own count."""
    from pdbtool.analysis.instance_prediction import first_solution_path
    from pdbtool.search.solver import Solver

    h = manhattan8
    board = h.board
    md = Solver(board, heuristic="manhattan").solve(tiles, threads=1)
    h0, length = int(h.value(tiles)), md.length
    path = first_solution_path(Solver(board, heuristic="pdb", partition="8-4-4", pruning="parent"), tiles)
    assert path == blank_moves(board, tiles, md.solution)
    earlier = sum(_iteration_counts(h, tiles, d) for d in range(h0, length, 2))
    predictor = InstancePredictor(h, probes=1, exact_below=10**9)
    _, generated = predictor.before_solution(tiles, length, path)
    assert earlier + generated == md.nodes_generated
    # sampled where the slack is large: near the count, not exact
    sampled = InstancePredictor(h, probes=400, seed=2, exact_below=0).before_solution(tiles, length, path)[1]
    assert sampled == pytest.approx(generated, rel=0.25)


def test_a_path_that_is_not_a_solution_is_refused(manhattan8):
    h = manhattan8
    tiles = FAR_STARTS[0]
    predictor = InstancePredictor(h, probes=1)
    with pytest.raises(InstancePredictionError):
        predictor.before_solution(tiles, 4, [0, 3, 0, 3])
    with pytest.raises(InstancePredictionError):
        predictor.before_solution(tiles, 3, [0, 3])


def test_predict_locate_on_the_command_line(tmp_path):
    """`predict --stratified --locate` counts the last iteration up to the located path: with few
    probes on the 8-puzzle the located total is the search's own count within sampling noise, and
    --locate without --stratified is one line and exit 2."""
    import json

    from click.testing import CliRunner

    from pdbtool.cli.predict import command
    from pdbtool.search.solver import Solver

    board = Board.parse("3x3")
    tiles = FAR_STARTS[2]
    length = Solver(board, heuristic="manhattan").solve(tiles).length
    path = tmp_path / "one.txt"
    path.write_text("far " + " ".join(map(str, tiles)) + f"  # optimal {length}\n")
    measured = Solver(board, heuristic="manhattan").solve(tiles, threads=1).nodes_generated
    got = CliRunner().invoke(command, [str(path), "--board", "3x3", "--heuristic", "manhattan", "--stratified", "200",
                                       "--locate",
                                       "8-4-4", "--format", "json", "--samples", "2000", "--cache-dir",
                                       str(tmp_path)])
    assert got.exit_code == 0, got.output
    records = [json.loads(line) for line in got.output.splitlines() if line.startswith("{")]
    assert records[-1]["located_by"] == "8-4-4"
    assert records[0]["generated"] == pytest.approx(measured, rel=0.3)
    bad = CliRunner().invoke(command, [str(path), "--board", "3x3", "--heuristic", "manhattan", "--locate", "8-4-4",
                                       "--samples", "2000"])
    assert bad.exit_code != 0 and "--locate applies to --stratified" in bad.output
