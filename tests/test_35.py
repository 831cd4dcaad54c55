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


def test_standard_error_is_that_of_the_values_listed_one_by_one():
    hist = [0, 3, 0, 5, 2]
    values = np.repeat(np.arange(len(hist)), hist)
    assert bench_35.standard_error(hist) == pytest.approx(values.std(ddof=1) / np.sqrt(values.size))
    assert bench_35.standard_error([0, 0, 7]) == 0.0


def test_relative_time_is_relative_nodes_over_the_rate_ratio():
    predicted = {"a": (1000.0, 100.0), bench_35.DYNAMIC: (10.0, 1.0)}
    rates = {"a": {"nodes_per_cpu_second": 400}, bench_35.DYNAMIC: {"nodes_per_cpu_second": 20}}
    rel = bench_35.relative_times(predicted, rates)
    assert rel == {"a": pytest.approx(100 * 20 / 400), bench_35.DYNAMIC: 1.0}
    rates["a"]["nodes_per_cpu_second"] = None
    assert bench_35.relative_times(predicted, rates)["a"] is None


def test_memory_is_that_of_the_tables_the_search_reads(small):
    """Manhattan reads no table; the static sum its two 4-tile tables (9!/5! placements, a byte each); ddb
    its packed look-ups."""
    board, rows, _ = small
    mem = {name: bench_35.memory_bytes(solver) for name, solver in rows}
    assert mem["manhattan"] == 0 and mem["static fives"] == 2 * 9 * 8 * 7 * 6
    h = rows[-1][1].heuristic
    lookups, move_lookups = h._packed()
    assert mem["dynamic pairs + triples"] == sum(a.nbytes for a in (*lookups, move_lookups)) > 0


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
            "--cache-dir", cache, "--reflection-row"]
    assert bench_35.main([str(a) for a in args]) == 0
    data = json.loads(out.read_text())
    assert [r["heuristic"] for r in data["rows"]] == ["manhattan", "static fives", "static fives + reflection",
                                                      "dynamic pairs + triples"]
    assert data["manhattan_exact_mean"]["fraction"] == str(bench_35.exact_manhattan_mean(board))
    rows = {r["heuristic"]: r for r in data["rows"]}
    for row in data["rows"]:
        assert set(row["relative_nodes"]) == {"16", "20"} and row["talk"]["mean_h"] > 100
        assert sum(row["histogram"]) == row["states"]
        assert 0 < row["standard_error"] < 1 and "issue 33 asks for 100,000,000" in row["note"]
    # the reflection's max is at least the direct sum on every state: on the same states, a mean as high
    assert rows["static fives + reflection"]["mean"] >= rows["static fives"]["mean"]
    assert rows["static fives + reflection"]["talk"] == rows["static fives"]["talk"]
    assert rows["dynamic pairs + triples"]["relative_time"] == {"16": 1.0, "20": 1.0}
    meta = data["meta"]
    assert png.stat().st_size > 1000 and meta["command"] and meta["cpu_seconds"] > 0
    assert meta["load_average_before"] is not None and meta["wall_seconds"] >= 0


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
