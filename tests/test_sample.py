"""Random states, the sampler and the exact counts of `pdbtool sample` / `pdbtool random`, against
single-threaded Python evaluations and full enumerations of small boards."""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import numba
import numpy as np
import pytest
from click.testing import CliRunner

from pdbtool.analysis.evaluators import evaluator
from pdbtool.analysis.sampling import enumerate_all, manhattan_mean, sample
from pdbtool.analysis.states import SamplingError, random_states
from pdbtool.cli.main import cli
from pdbtool.heuristics.linear_conflict import LinearConflict
from pdbtool.heuristics.manhattan import Manhattan
from pdbtool.heuristics.pattern_sum import PatternSum
from pdbtool.puzzle.board import Board
from pdbtool.puzzle.instances import read_instances
from pdbtool.tables.build import build_table
from pdbtool.tables.partitions import load_partition


class PythonOnly:
    """A heuristic the sampler can evaluate only through ``value`` (as ddb and max)."""

    def __init__(self, inner):
        self.board, self.name, self.value = inner.board, inner.name, inner.value


@pytest.fixture(scope="module")
def pdb_8():
    """A pattern sum with the reflection: the 8-puzzle's 8-4-4 (the evaluator's code is the same on any board)."""
    part = load_partition("8-4-4")
    return PatternSum(list(part.patterns), [build_table(p).table for p in part.patterns], reflect=True)


def python_histogram(h, states, size):
    hist = np.zeros(size, dtype=np.int64)
    for tiles in states:
        hist[h.value(tiles)] += 1
    return hist


def test_random_states_are_solvable_reproducible_and_thread_independent():
    board = Board(4, 4)
    a = random_states(board, 9000, seed=7)
    assert all(board.is_solvable(list(row)) for row in a)
    assert all(sorted(row) == list(range(16)) for row in a[::97])
    assert np.array_equal(a, random_states(board, 9000, seed=7))
    assert not np.array_equal(a, random_states(board, 9000, seed=8))
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        assert np.array_equal(a, random_states(board, 9000, seed=7))
    finally:
        numba.set_num_threads(threads)
    # a later piece of the stream is the same piece of a longer run
    assert np.array_equal(random_states(board, 4096, seed=7, first_chunk=1), a[4096:8192])


@pytest.mark.parametrize("dims", [(2, 2), (3, 2)])
def test_random_states_are_uniform_over_the_solvable_states(dims):
    board = Board(*dims)
    solvable = [p for p in itertools.permutations(range(board.n)) if board.is_solvable(p)]
    draws = 200 * len(solvable)
    counts = Counter(map(tuple, random_states(board, draws, seed=3)))
    assert set(counts) == set(solvable)
    expected = draws / len(solvable)
    chi2 = sum((k - expected) ** 2 / expected for k in counts.values())
    # chi-square with len-1 degrees of freedom: far below this bound unless the draw is biased
    assert chi2 < len(solvable) + 6 * np.sqrt(2 * len(solvable))


def test_random_walks_follow_the_parent_rule():
    board = Board(3, 3)
    goal = np.array(board.goal_tiles)
    one = random_states(board, 200, seed=1, walk=1)
    nbs = {tuple(_moved(goal, board, m)) for m in range(4) if board.neighbours()[0, m] >= 0}
    assert {tuple(r) for r in one} == nbs
    md = Manhattan(board)
    for length in (2, 7, 20):
        walks = random_states(board, 300, seed=2, walk=length)
        assert all(board.is_solvable(list(r)) for r in walks)
        assert all(md.value(r) <= length and (md.value(r) - length) % 2 == 0 for r in walks)
    # two moves never undo each other: no walk of length 2 ends at the goal
    assert not any(np.array_equal(r, goal) for r in random_states(board, 300, seed=4, walk=2))


def _moved(tiles, board, m):
    tiles = tiles.copy()
    b = int(np.flatnonzero(tiles == 0)[0])
    q = board.neighbours()[b, m]
    tiles[b], tiles[q] = tiles[q], 0
    return tiles


@pytest.mark.parametrize("make", [Manhattan, LinearConflict])
def test_sampled_histogram_equals_python_values_of_the_same_states(make):
    h = make(Board(4, 4))
    dist = sample(h, 20000, seed=11)
    states = random_states(h.board, 20000, seed=11)
    assert np.array_equal(python_histogram(h, states, dist.histogram.size), dist.histogram)
    per_cell = Counter((int(np.flatnonzero(s == 0)[0]), h.value(s)) for s in states)
    assert all(dist.counts[c, v] == k for (c, v), k in per_cell.items())


@pytest.mark.parametrize("dims", [(8, 8), (2, 32)])
def test_sampled_line_scan_conflicts_equal_their_value(dims):
    """Lines longer than 7 cells: the compiled evaluator of the scanned conflicts."""
    h = LinearConflict(Board(*dims))
    assert evaluator(h) is not None
    dist = sample(h, 3000, seed=12)
    states = random_states(h.board, 3000, seed=12)
    assert np.array_equal(python_histogram(h, states, dist.histogram.size), dist.histogram)


def test_sampled_pattern_sums_with_reflection_equal_their_value(pdb_8):
    assert pdb_8.reflect
    dist = sample(pdb_8, 12000, seed=5)
    states = random_states(pdb_8.board, 12000, seed=5)
    assert np.array_equal(python_histogram(pdb_8, states, dist.histogram.size), dist.histogram)


def test_python_path_gives_the_compiled_path_s_figures():
    h = LinearConflict(Board(3, 3))
    compiled = sample(h, 9000, seed=9)
    slow = sample(PythonOnly(h), 9000, seed=9)
    assert evaluator(PythonOnly(h)) is None and evaluator(h) is not None
    assert np.array_equal(compiled.counts, slow.counts[:, :compiled.counts.shape[1]])
    assert compiled.odd == slow.odd


def test_sampling_does_not_depend_on_threads():
    h = Manhattan(Board(4, 4))
    a = sample(h, 50000, seed=4, threads=1)
    b = sample(h, 50000, seed=4, threads=3)
    assert np.array_equal(a.counts, b.counts)


@pytest.mark.parametrize("make", [Manhattan, LinearConflict])
def test_exact_counts_over_every_state(make):
    board = Board(3, 2)
    h = make(board)
    dist = enumerate_all(h)
    states = [p for p in itertools.permutations(range(6)) if board.is_solvable(p)]
    assert dist.states == len(states) == 360 and dist.exact
    assert np.array_equal(python_histogram(h, states, dist.histogram.size), dist.histogram)
    assert dist.parity


def test_manhattan_mean_by_formula():
    for dims in [(3, 3), (3, 2), (2, 4)]:
        board = Board(*dims)
        m = Manhattan(board)
        exact = enumerate_all(m)
        assert Fraction(exact.mean).limit_denominator(10**6) == manhattan_mean(*dims, board.goal)
        cell = 4 % board.n
        per_cell = (exact.counts[cell] * np.arange(exact.counts.shape[1])).sum() / exact.counts[cell].sum()
        assert per_cell == pytest.approx(float(manhattan_mean(*dims, board.goal, blank_cell=cell)), abs=1e-12)
    assert manhattan_mean(6, 6, tuple(range(36))) == 135
    assert float(manhattan_mean(4, 4, tuple(range(16)))) == 37
    with pytest.raises(SamplingError):
        enumerate_all(Manhattan(Board(4, 4)))


def invoke(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def test_random_command_writes_files_that_solve_reads(tmp_path):
    out = tmp_path / "r.txt"
    res = invoke("random", "--board", "3x4", "--goal", "blank-last", "-n", "5", "--seed", "3", "-o", out)
    assert res.exit_code == 0, res.output
    insts = read_instances(out.read_text(), "r", Board.parse("3x4", "blank-last"))
    assert len(insts) == 5 and all(i.error is None for i in insts)
    again = invoke("random", "--board", "3x4", "--goal", "blank-last", "-n", "5", "--seed", "3")
    assert again.output == out.read_text()
    solved = invoke("solve", out, "--board", "3x4", "--goal", "blank-last", "--heuristic", "manhattan")
    assert solved.exit_code == 0, solved.output


@pytest.mark.parametrize("args,words", [
    (["random", "--board", "4x4", "-n", "0"], "--count 0"),
    (["random", "-n", "3"], "--board"),
    (["random", "--board", "4x4", "--walk", "-1"], "--walk"),
    (["sample", "--board", "4x4", "--heuristic", "manhattan", "-n", "0"], "--samples 0"),
    (["sample", "--board", "9x8", "--heuristic", "manhattan"], "72 cells"),
    (["sample", "--board", "4x4", "--heuristic", "linear-conflict", "--exact"], "at most 10 cells"),
    (["sample", "--board", "5x5", "--partition", "15-7-8"], "4x4"),
])
def test_bad_input_is_one_line(args, words):
    res = invoke(*args)
    assert res.exit_code != 0
    assert words in res.output and res.output.count("\n") == 1 and "Traceback" not in res.output


def test_missing_table_is_one_line(tmp_path):
    res = invoke("sample", "--partition", "8-4-4", "--cache-dir", tmp_path, "-n", "10")
    assert res.exit_code == 1 and "pdbtool build --partition 8-4-4" in res.output
    assert not list(tmp_path.glob("*.pdb"))  # nothing was built


def test_sample_command(tmp_path):
    res = invoke("sample", "--board", "3x3", "--heuristic", "manhattan", "--exact", "--format", "json")
    assert res.exit_code == 0, res.output
    import json

    data = json.loads(res.output)
    assert data["states"] == 181440 and data["mean"] == 14 and data["exact_mean_by_formula"] == 14
    big = invoke("sample", "--board", "6x6", "--heuristic", "manhattan", "--exact")
    assert big.exit_code == 0 and "135" in big.output
    text = invoke("sample", "--board", "3x3", "--heuristic", "linear-conflict", "-n", "5000", "--seed", "2")
    assert text.exit_code == 0 and "mean h" in text.output


def test_plot(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    png = tmp_path / "d.png"
    res = invoke("sample", "--board", "3x3", "--heuristic", "manhattan", "-n", "2000", "--plot", png)
    assert res.exit_code == 0, res.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    res = invoke("sample", "--board", "3x3", "--heuristic", "manhattan", "-n", "2000", "--plot", png)
    assert res.exit_code == 1 and "pip install 'pdbtool[bench]'" in res.output
