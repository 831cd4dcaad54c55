"""`pdbtool solve`: formats, exit status, bad input line by line, time limits, stdin, parallel jobs."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import korf100_file, korf100_line

from pdbtool.puzzle.board import Board
from pdbtool.cli.main import cli
from pdbtool.search.solver import replay

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
EIGHT = EXAMPLES / "8puzzle.txt"
EIGHT_PARTITION = EXAMPLES / "8puzzle-4-4.txt"
JSON_KEYS = {"id": (str,), "board": (str,), "length": (int, type(None)), "solution": (list,),
             "nodes_generated": (int,), "nodes_expanded": (int,), "h0": (int, type(None)), "seconds": (float, int),
             "solved": (bool,), "error": (str, type(None))}


def run(*args, input=None):
    return CliRunner().invoke(cli, ["solve", *map(str, args)], input=input)


def json_rows(result):
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows[-1]["summary"] is True
    return rows[:-1], rows[-1]


def eight_states():
    out = {}
    for line in EIGHT.read_text().splitlines():
        body, _, comment = line.partition("#")
        if body.split():
            v = body.split()
            out[v[0]] = (tuple(int(x) for x in v[1:]), int(comment.split()[-1]))
    return out


@pytest.fixture
def cache_dir(shared_cache_dir):
    """The run's shared cache (tests/conftest.py): these tests only read the tables."""
    return shared_cache_dir


def test_text_output_and_summary():
    result = run(EIGHT, "--heuristic", "manhattan")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len([ln for ln in lines if "length" in ln and "(optimal" in ln]) == 10
    assert "solved 10 of 10 (unsolved 0, failed 0)" in result.stdout
    assert "mean h(start)" in result.stdout and "nodes generated/s" in result.stdout


@pytest.mark.parametrize("extra", [["--heuristic", "linear-conflict"], ["--partition", str(EIGHT_PARTITION)],
                                   ["--partition", str(EIGHT_PARTITION), "--no-reflect"]])
def test_json_schema_and_solutions(cache_dir, extra):
    result = run(EIGHT, "--format", "json", "--cache-dir", cache_dir, *extra)
    assert result.exit_code == 0, result.output
    rows, summary = json_rows(result)
    states = eight_states()
    assert len(rows) == len(states)
    for row in rows:
        for key, types in JSON_KEYS.items():
            assert isinstance(row[key], types), (key, row[key])
        state, optimal = states[row["id"]]
        assert row["solved"] and row["error"] is None and row["board"] == "3x3"
        assert row["length"] == optimal == len(row["solution"])
        assert replay(Board(3, 3), state, row["solution"]) == Board(3, 3).goal_tiles
        assert row["h0"] <= optimal and row["nodes_generated"] >= row["nodes_expanded"] > 0
    assert summary["solved"] == len(rows) and summary["failed"] == 0
    assert summary["total_nodes_generated"] == sum(r["nodes_generated"] for r in rows)
    reflect = "--no-reflect" not in extra and "--partition" in extra
    assert rows[0]["heuristic"].endswith("+reflect") == reflect


def test_csv_output():
    result = run(EIGHT, "--heuristic", "manhattan", "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 10
    assert {"id", "board", "length", "solution", "nodes_generated", "nodes_expanded", "h0", "seconds", "solved",
            "error"} <= set(rows[0])
    assert all(r["solved"] == "True" and r["length"] == str(len(r["solution"].split())) for r in rows)
    assert "solved 10 of 10" in result.stderr


def test_bad_lines_are_reported_and_the_rest_solved(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("\n".join([
        "ok1 1 0 2 3 4 5 6 7 8",
        "short 1 0 2 3 4 5 6 7",
        "dup 1 0 2 3 4 5 6 7 7",
        "range 1 0 2 3 4 5 6 7 9",
        "odd 0 2 1 3 4 5 6 7 8",
        "even 0 2 1 3 4 5 6 7 8 9 10 11 12 13 14 15",
        "ok2 3 1 2 0 4 5 6 7 8  # optimal 1",
        "wrong 3 1 2 0 4 5 6 7 8  # optimal 3",
    ]) + "\n")
    result = run(path, "--heuristic", "manhattan", "--format", "json")
    assert result.exit_code == 3  # "wrong": a length other than its '# optimal' (wins over the bad lines' 1)
    rows, summary = json_rows(result)
    by_id = {r["id"]: r for r in rows}
    assert by_id["ok1"]["solved"] and by_id["ok2"]["solved"] and by_id["ok2"]["error"] is None
    expected = {"short": (2, "8 numbers do not make a square board"),
                "dup": (3, "tile 7 appears twice and tile 8 is missing"),
                "range": (4, "out of range"), "odd": (5, "unsolvable"), "even": (6, "unsolvable"),
                "wrong": (8, "found an optimal length of 1, but the file says 3")}
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("pdbtool: ")]
    assert len(errors) == len(expected)
    for ident, (line, reason) in expected.items():
        assert by_id[ident]["error"].startswith(f"{path}:{line}: ")
        assert reason in by_id[ident]["error"]
        assert any(f"{path}:{line}: " in e and reason in e for e in errors)
    assert by_id["wrong"]["solved"] and by_id["wrong"]["length"] == 1
    assert summary["failed"] == 6 and summary["solved"] == 3


def test_partition_errors_name_the_line(tmp_path):
    path = tmp_path / "korf1.txt"
    path.write_text(korf100_line(1, optimal=False) + "\n")
    result = run(path, "--partition", "no-such-partition")
    assert result.exit_code == 1  # said once, before any instance is read
    assert result.stderr.startswith("pdbtool: unknown partition 'no-such-partition'")
    assert len(result.stderr.splitlines()) == 1
    # a 3x3 partition on a 4x4 instance: the instance is not of the partition's board
    result = run(path, "--partition", EIGHT_PARTITION)
    assert result.exit_code == 1
    assert f"{path}:1: " in result.stderr and "3x3" in result.stderr
    # with --board, the line says that the tables are of another board
    result = run(path, "--partition", EIGHT_PARTITION, "--board", "4x4")
    assert result.exit_code == 1
    assert f"{path}:1: " in result.stderr and "3x3" in result.stderr
    # a partition file's board reads instances that are not square (--help: --board defaults from it)
    wide = tmp_path / "2x3.txt"
    wide.write_text("1 4 2 3 0 5\n")
    part = tmp_path / "2x3-part.txt"
    part.write_text("board 2x3\n1 2 3\n4 5\n")
    result = run(wide, "--partition", part)
    assert result.exit_code == 0 and " length  10 " in result.stdout, result.output
    # no default partition for 3x4
    small = tmp_path / "3x4.txt"
    small.write_text("1 1 0 2 3 4 5 6 7 8 9 10 11\n")
    result = run(small, "--board", "3x4")
    assert result.exit_code == 1
    assert "no default partition for 3x4" in result.stderr
    # 3x3 defaults to the built-in 8-4-4
    result = run(EIGHT)
    assert result.exit_code == 0, result.stderr
    result = run(path, "--heuristic", "manhattan", "--partition", "15-7-8")
    assert result.exit_code != 0 and "--partition applies to" in result.output


def test_time_limit_reports_unsolved(tmp_path):
    path = tmp_path / "korf1.txt"
    path.write_text(korf100_line(1) + "\n")
    result = run(path, "--heuristic", "manhattan", "--time-limit", "0.3", "--format", "json")
    assert result.exit_code == 0, result.output
    rows, summary = json_rows(result)
    assert rows[0]["solved"] is False and rows[0]["timed_out"] is True and rows[0]["length"] is None
    assert rows[0]["error"] is None and rows[0]["nodes_generated"] > 0 and rows[0]["seconds"] < 5
    assert summary["unsolved"] == 1
    text = run(path, "--heuristic", "manhattan", "--time-limit", "0.2")
    assert "unsolved: limit reached" in text.stdout


def test_stdin_and_board_option():
    result = run("-", "--heuristic", "manhattan", "--format", "json", input="a 1 0 2 3 4 5 6 7 8\n")
    rows, _ = json_rows(result)
    assert result.exit_code == 0 and rows[0]["id"] == "a" and rows[0]["length"] == 1
    result = run("-", "--board", "4x2", "--heuristic", "linear-conflict", "--format", "json",
                 input="1 0 2 3 4 5 6 7\n4 0 2 3 5 1 6 7\n")
    rows, _ = json_rows(result)
    assert result.exit_code == 0, result.output
    assert [r["length"] for r in rows] == [1, 3] and rows[1]["board"] == "4x2"


def test_jobs_give_the_same_results():
    one = json_rows(run(EIGHT, "--heuristic", "manhattan", "--format", "json"))[0]
    two = json_rows(run(EIGHT, "--heuristic", "manhattan", "--format", "json", "--jobs", "2"))[0]
    key = ("id", "length", "solution", "nodes_generated", "nodes_expanded", "h0")
    assert [tuple(r[k] for k in key) for r in one] == [tuple(r[k] for k in key) for r in two]


def test_fifteen_puzzle_with_a_partition(cache_dir, tmp_path):
    path = korf100_file(tmp_path / "two.txt", [42, 97])
    result = run(path, "--partition", "15-5-5-5", "--cache-dir", cache_dir, "--format", "json")
    assert result.exit_code == 0, result.output
    rows, summary = json_rows(result)
    assert [(r["id"], r["length"]) for r in rows] == [("42", 42), ("97", 44)]
    assert all(r["heuristic"] == "15-5-5-5+reflect" for r in rows)


def test_batch_progress_between_chunks():
    from pdbtool.puzzle.instances import read_instances
    from pdbtool.search.solver import SolveOptions, solve_batch

    # Korf's instance 2: 15.3 M nodes with Manhattan, several chunks of the kernel
    items = read_instances(korf100_line(2), "k.txt")
    calls = []
    results = list(solve_batch(items, SolveOptions(heuristic="manhattan"),
                               progress=lambda inst, *a: calls.append((inst.id, *a))))
    assert results[0].length == 55 and results[0].nodes_generated == 15300442 - 1
    assert len(calls) >= 5 and all(c[0] == "2" for c in calls)
    assert [c[2] for c in calls] == sorted(c[2] for c in calls)
