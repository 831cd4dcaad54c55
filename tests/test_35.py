"""The 35-puzzle benchmark's parts (bench/bench_35.py) on small inputs, the compiled sampler of ``ddb``, the
named 6x6 partition, and the one-line errors of the bad inputs the benchmark's commands can meet."""

from __future__ import annotations

import json
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from pdbtool.cli.main import cli
from pdbtool.puzzle.board import MAX_CELLS, Board

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import bench_35  # noqa: E402

wide = pytest.mark.skipif(MAX_CELLS < 36, reason="boards of more than 32 cells are not supported yet")


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@wide
def test_manhattan_mean_of_the_35_puzzle_is_135_exactly():
    """The formula's mean on 6x6 (the talk sampled 135.02); and on 3x3 it is the mean over every solvable
    state, counted one by one."""
    from itertools import permutations

    assert bench_35.exact_manhattan_mean(Board(6, 6)) == Fraction(135)
    board = Board(3, 3)
    md = board.manhattan_table()
    values = [sum(md[t, c] for c, t in enumerate(p)) for p in permutations(range(9)) if board.is_solvable(p)]
    assert bench_35.exact_manhattan_mean(board) == Fraction(sum(values), len(values))


@wide
def test_the_35_partition_covers_every_tile_once_in_fives():
    from pdbtool.tables.resolve import resolve_partition

    part = resolve_partition(bench_35.PARTITION, None)
    assert part.board.dims == "6x6"
    tiles = [t for p in part.patterns for t in p.tiles]
    assert sorted(tiles) == list(range(1, 36))
    assert [len(p.tiles) for p in part.patterns] == [5] * 7


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """The benchmark's rows on 3x3 (partition 8-4-4), tables in a cache of their own."""
    cache = tmp_path_factory.mktemp("cache35")
    board = Board(3, 3)
    return board, bench_35.solvers(board, "8-4-4", cache_dir=str(cache)), cache


def test_stronger_heuristics_predict_fewer_nodes(small):
    """The static sum and ddb are each at least Manhattan on every state, so their distributions lie to the
    right of Manhattan's and the predicted nodes of any bound are no more than Manhattan's."""
    board, rows, _ = small
    dists = bench_35.distributions(rows, 20_000, 5_000, seed=1)
    assert [d.states for d in dists.values()] == [20_000, 20_000, 5_000]
    means = {name: d.mean for name, d in dists.items()}
    assert means["manhattan"] < means["static fives"] and means["manhattan"] < means["dynamic pairs + triples"]
    for bound in (12, 20, 30):
        rel = bench_35.relative_nodes(dists, bound)
        assert rel["dynamic pairs + triples"][1] == 1.0
        assert rel["manhattan"][0] >= rel["static fives"][0] > 0
        assert rel["manhattan"][1] >= 1.0


def test_the_compiled_ddb_sampler_gives_the_values_of_value(small):
    """``ddb`` is sampled by a compiled evaluator (a conflict graph per thread): the histogram of its values
    over the sampler's states is that of the heuristic's own ``value`` over the same states."""
    from pdbtool.analysis.evaluators import DynamicEval, evaluator
    from pdbtool.analysis.sampling import sample
    from pdbtool.analysis.states import random_states

    board, rows, _ = small
    h = rows[-1][1].heuristic
    assert isinstance(evaluator(h), DynamicEval)
    dist = sample(h, 3000, seed=9, threads=2)
    states = random_states(board, 3000, seed=9)
    want = np.bincount([h.value(s) for s in states])
    assert np.array_equal(dist.histogram, want)


def test_node_rates_count_the_nodes_of_each_heuristic(small):
    board, rows, _ = small
    rates = bench_35.node_rates(board, rows, instances=2, node_limit=200, seed=3)
    assert set(rates) == {name for name, _ in rows}
    for r in rates.values():
        # each instance stops near the limit or at its solution
        assert 0 < r["nodes"] <= 2 * 1000 and r["cpu_seconds"] >= 0


def test_the_benchmark_writes_its_rows_and_plot(tmp_path, small):
    pytest.importorskip("matplotlib")
    out, png = tmp_path / "p35.json", tmp_path / "p35.png"
    board, _, cache = small
    args = ["--board", "3x3", "--partition", "8-4-4", "--samples", "5000", "--dynamic-samples", "2000",
            "--bounds", "16", "20", "--instances", "1", "--node-limit", "500", "--out", out, "--plot", png,
            "--cache-dir", cache]
    assert bench_35.main([str(a) for a in args]) == 0
    data = json.loads(out.read_text())
    assert [r["heuristic"] for r in data["rows"]] == ["manhattan", "static fives", "dynamic pairs + triples"]
    assert data["manhattan_exact_mean"]["fraction"] == str(bench_35.exact_manhattan_mean(board))
    for row in data["rows"]:
        assert set(row["relative_nodes"]) == {"16", "20"} and row["talk"]["mean_h"] > 100
        assert sum(row["histogram"]) == row["states"]
    assert png.stat().st_size > 1000 and data["meta"]["command"]


def test_the_benchmark_refuses_a_sample_count_of_0(capsys):
    assert bench_35.main(["--samples", "0"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "at least 1 sample" in err


@pytest.mark.parametrize("args,words", [
    (["build", "--dynamic", "pairs+triples", "--board", "8x8"], "9.9 GB"),
    (["sample", "--board", "3x3", "--heuristic", "ddb", "-n", "0"], "--samples 0"),
    (["predict", "{instance}", "--board", "3x3", "--heuristic", "manhattan", "--depth", "3"], "below h(start)"),
])
def test_bad_input_is_one_line(args, words, tmp_path):
    instance = tmp_path / "one.txt"
    instance.write_text("1 8 7 6 5 4 3 2 1 0\n")
    res = invoke(*[str(instance) if a == "{instance}" else a for a in args], "--cache-dir", tmp_path)
    assert res.exit_code != 0
    assert words in res.output and res.output.strip().count("\n") == 0 and "Traceback" not in res.output
    assert not list(tmp_path.glob("*.ddb"))  # nothing was built
