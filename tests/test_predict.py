"""Korf, Reid & Edelkamp's prediction: the tree's level sizes against a walk of the tree, the predicted
nodes of an iteration against the driver's counts averaged over every start state (where the sum is an
exact expectation), the iterations' bounds, the ETA of the solve progress line and `pdbtool predict`."""

from __future__ import annotations

import itertools
import json
from types import SimpleNamespace

import numpy as np
import pytest
from click.testing import CliRunner

from pdbtool.analysis.eta import IterationForecast
from pdbtool.analysis.prediction import PredictionError, Predictor
from pdbtool.analysis.sampling import enumerate_all, sample
from pdbtool.analysis.tree import branching, level_sizes, nodes_per_level
from pdbtool.cli.main import cli
from pdbtool.heuristics.linear_conflict import LinearConflict
from pdbtool.heuristics.manhattan import Manhattan
from pdbtool.puzzle.board import Board
from pdbtool.search.driver import ITERATION_DONE, Search
from pdbtool.search.solver import SolveOptions

EIGHT = "examples/8puzzle.txt"


def walk_tree(board, cell, depth):
    """The brute-force tree's nodes per depth, by walking it (the inverse move never generated)."""
    nb = board.neighbours()
    counts = [0] * (depth + 1)

    def go(c, prev, d):
        counts[d] += 1
        if d == depth:
            return
        for m in range(4):
            if nb[c, m] >= 0 and m + prev != 3:
                go(int(nb[c, m]), m, d + 1)

    go(cell, -1, 0)
    return counts


@pytest.mark.parametrize("dims,cell", [((3, 3), 0), ((3, 3), 4), ((4, 2), 5)])
def test_level_sizes_are_the_tree_s(dims, cell):
    board = Board(*dims)
    assert nodes_per_level(board, cell, 9) == walk_tree(board, cell, 9)
    sizes = level_sizes(board, cell, 6)
    b = branching(board)
    for i in range(6):  # the children of level i are level i + 1
        assert sum(sizes[i][c][m] * b[c, m] for c in range(board.n) for m in range(5)) == \
            sum(map(sum, sizes[i + 1]))


@pytest.mark.parametrize("make,bound", [(Manhattan, 13), (Manhattan, 16), (LinearConflict, 14)])
def test_prediction_is_the_mean_over_every_start(make, bound):
    """Along a fixed path, a uniformly random start (blank cell given) ends at a uniformly random state with
    the path's last blank cell; with a consistent heuristic the sum is then the exact mean of a complete
    iteration (here: with the goal test disabled) over the starts."""
    board = Board(3, 2)
    h = make(board)
    predictor = Predictor(enumerate_all(h))
    starts = [p for p in itertools.permutations(range(6)) if board.is_solvable(p)]
    never = np.full(6, -1, dtype=np.int64)
    for cell in range(6):
        mine = [p for p in starts if p[cell] == 0]
        gen = exp = 0
        for p in mine:
            if h.value(p) > bound:
                continue  # its start is not expanded: the iteration is empty
            s = Search(h, p, bound=bound, one_iteration=True)
            s.goal_tiles = never
            assert s.step(1 << 40) == ITERATION_DONE
            gen += s.generated
            exp += s.expanded
        it = predictor.iteration(cell, bound, start_known=False)
        assert it.generated == pytest.approx(gen / len(mine), rel=1e-9)
        assert it.expanded == pytest.approx(exp / len(mine), rel=1e-9)


def test_bounds_and_bad_depths():
    predictor = Predictor(sample(Manhattan(Board(4, 4)), 20000, seed=1))
    assert predictor.step == 2
    assert predictor.bounds(41, 57) == list(range(41, 58, 2))
    its = predictor.search(9, 41, 57)
    assert [i.bound for i in its] == list(range(41, 58, 2))
    assert all(b.generated > a.generated for a, b in zip(its, its[1:]))
    with pytest.raises(PredictionError):
        predictor.search(9, 41, 39)


def test_eta_of_the_progress_line():
    board = Board(4, 4)
    options = SolveOptions(heuristic="manhattan")
    inst = SimpleNamespace(board=board, tiles=(14, 13, 15, 7, 11, 12, 9, 5, 6, 0, 2, 1, 4, 8, 10, 3), id="1")
    quiet = IterationForecast(options, after=5.0)
    assert quiet.text(inst, 41, 10**6, 1.0) == ""  # a short search pays nothing
    eta = IterationForecast(options, after=0.0)
    nodes, left = eta.forecast(inst, 45, 10**6, 2.0)
    predictor = eta._predictors[board][1]
    its = predictor.search(9, 41, 45)
    assert nodes == its[-1].generated
    assert left == pytest.approx((sum(i.generated for i in its) - 10**6) / (10**6 / 2.0))
    assert "iteration predicted" in eta.text(inst, 45, 10**6, 2.0)
    # once an iteration has been seen whole, the next is its count times the predicted growth
    anchored = IterationForecast(options, after=5.0)
    assert anchored.forecast(inst, 41, 2000, 0.5) is None
    assert anchored.forecast(inst, 43, 9000, 1.0) is None
    nodes, left = anchored.forecast(inst, 45, 50000, 6.0)
    p = anchored._predictors[board][1]
    grown = (50000 - 9000) * p.iteration(9, 45).generated / p.iteration(9, 43).generated
    assert nodes == pytest.approx(grown)
    assert left == pytest.approx(grown / (50000 / 6.0))


def invoke(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def test_predict_command():
    res = invoke("predict", EIGHT, "--heuristic", "manhattan", "--board", "3x3", "-n", "20000", "--format", "json")
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.output.splitlines()]
    assert rows[-1]["summary"] and rows[-1]["instances"] == len(rows) - 1
    first = rows[0]
    assert first["iterations"][0]["bound"] == first["h0"] and first["iterations"][-1]["bound"] == 25
    one = invoke("predict", "--board", "4x4", "--heuristic", "manhattan", "--depth", "50", "-n", "20000")
    assert one.exit_code == 0 and "bound 50" in one.output


@pytest.mark.parametrize("args,words", [
    (["predict", EIGHT, "--heuristic", "manhattan", "--board", "3x3", "--depth", "3"], "below h(start)"),
    (["predict", "-", "--heuristic", "manhattan", "--board", "3x3"], "no '# optimal N'"),
    (["predict", "--board", "3x3", "--heuristic", "manhattan"], "--depth"),
    (["predict", "--board", "3x3", "--heuristic", "manhattan", "--depth", "20", "-n", "0"], "--samples 0"),
])
def test_bad_input_is_one_line(args, words):
    res = invoke(*args, input="1 2 0 3 4 5 6 7 8\n")
    assert res.exit_code != 0
    assert words in res.output and res.output.count("\n") == 1 and "Traceback" not in res.output
