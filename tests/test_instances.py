"""Instance files: ids, comments, the board from the count, every bad-input case, and the result formats."""

from __future__ import annotations

import csv
import io
import json

import pytest

from pdbtool.puzzle.board import Board
from pdbtool.puzzle.instances import (CSV_COLUMNS, ResultWriter, load_instances, parse_line, read_instances, record,
                               summarize)
from pdbtool.search.solver import SolveResult

KORF1 = "14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3"


def one(text, board=None, goal=None):
    items = read_instances(text, "f.txt", board, goal)
    assert len(items) == 1
    return items[0]


def test_ids_comments_and_optimal():
    text = f"""# a comment line

k1: {KORF1}   # optimal 57
7 {KORF1}
{KORF1}  # from somewhere, optimal=57 trailing words
"""
    items = read_instances(text, "f.txt")
    assert [i.id for i in items] == ["k1", "7", "3"]
    assert [i.line for i in items] == [3, 4, 5]
    assert [i.optimal for i in items] == [57, None, 57]
    assert all(i.error is None and i.board == Board(4, 4) for i in items)
    assert items[0].tiles == tuple(int(x) for x in KORF1.split())
    assert items[0].where == "f.txt:3"


def test_board_from_count_and_from_the_option():
    assert one("1 0 2 3 4 5 6 7 8").board == Board(3, 3)
    assert one("x 1 0 2 3 4 5 6 7 8").board == Board(3, 3)
    assert one("5 1 0 2 3 4 5 6 7 8").id == "5"
    inst = one(" ".join(str(t) for t in range(25)))
    assert inst.board == Board(5, 5) and inst.error is None
    # a 2x4 board needs --board; with it, an id is recognized by the count
    board = Board(4, 2)
    assert one("1 0 2 3 4 5 6 7", board).error is None
    assert one("9 1 0 2 3 4 5 6 7", board).id == "9"
    assert "do not make a square" in one("1 0 2 3 4 5 6 7").error
    # a goal applies to the inferred board
    inst = one("1 2 3 4 5 6 7 8 0", goal="blank-last")
    assert inst.board == Board.parse("3x3", "blank-last") and inst.tiles == (1, 2, 3, 4, 5, 6, 7, 8, 0)


@pytest.mark.parametrize("line,board,reason", [
    ("1 0 2 3 4 5 6 7", Board(3, 3), "expected 9 numbers for a 3x3 board, got 8"),
    ("1 0 2 3 4 5 6 7 8 9 10", Board(3, 3), "expected 9 numbers for a 3x3 board, got 11"),
    ("1 0 2 3 4 5 6 7 7", None, "tile 7 appears twice and tile 8 is missing"),
    ("1 0 2 3 4 5 6 7 9", None, "tile 9 is out of range 0..8"),
    ("1 0 2 3 4 5 6 -7 8", None, "tile -7 is out of range 0..8"),
    ("1 0 2 3 4 5 6 seven 8", None, "'seven' is not a whole number"),
    # odd width: swapping two tiles makes the permutation odd with the blank at home
    ("0 2 1 3 4 5 6 7 8", None, "unsolvable"),
    # even width: the same swap on the 15-puzzle
    ("0 2 1 3 4 5 6 7 8 9 10 11 12 13 14 15", None, "unsolvable"),
    # even width, the blank moved one row down without a tile swap: parity differs
    ("4 1 2 3 0 5 6 7 8 9 10 11 12 13 14 15", None, None),
    # one number too many is read as an id first
    ("1 0 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16", Board(4, 4), "tile 16 is out of range 0..15"),
    ("1 0 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17", Board(4, 4), "expected 16 numbers for a 4x4 board, got 18"),
    ("1 0 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17", None, "18 numbers do not make a square board"),
])
def test_bad_lines(line, board, reason):
    inst = one(line, board)
    if reason is None:
        assert inst.error is None
    else:
        assert reason in inst.error
        assert inst.tiles is None


BIG = "9" * 5000  # past int()'s limit of 4300 digits


@pytest.mark.parametrize("line, reason", [
    (f"1 0 2 3 4 5 6 7 8  # optimal {BIG}", "'# optimal 99999999999999999999...' is not a length (5000 digits)"),
    (f"1 0 2 3 4 5 6 7 {BIG}", "99999999999999999999... (5000 digits) is out of range for a tile or an id"),
    (f"{BIG} 1 0 2 3 4 5 6 7 8", "(5000 digits) is out of range for a tile or an id"),
    (f"id7 1 0 2 3 4 5 6 7 -{BIG}", "(5000 digits) is out of range"),
    ("1 0 2 3 4 5 6 7 ³", "'³' is not a whole number"),
])
def test_numbers_of_thousands_of_digits_are_a_bad_line(line, reason):
    inst = one(line)
    assert inst.error is not None and reason in inst.error and len(inst.error) < 100
    assert inst.tiles is None


@pytest.mark.parametrize("dims", ["3x³", "³x3", "٣x3", f"{BIG}x2", "4x", "4x4x4", ""])
def test_board_dims_of_ascii_digits_only(dims):
    from pdbtool.puzzle.board import BoardError, parse_dims

    with pytest.raises(BoardError, match="is not of the form WxH") as error:
        parse_dims(dims)
    assert len(str(error.value)) < 100
    assert parse_dims(" 4 x 3 ") == (4, 3) and parse_dims("5\u00d75") == (5, 5)


def test_a_goal_of_huge_numbers_is_one_short_line():
    from pdbtool.puzzle.board import BoardError

    for goal in (f"1 2 {BIG}", [1, 2, 10**5000]):
        with pytest.raises(BoardError, match="goal") as error:
            Board.parse("3x3", goal)
        assert len(str(error.value)) < 150


def test_unsolvable_parity_rule_on_both_widths():
    # the 15-puzzle: a legal state with the blank one row down, then the same state with tiles 1, 2 swapped
    assert one("4 1 2 3 0 5 6 7 8 9 10 11 12 13 14 15").error is None
    assert "unsolvable" in one("4 2 1 3 0 5 6 7 8 9 10 11 12 13 14 15").error
    # the 8-puzzle: blank moved one row down is legal, with a swap it is not
    assert one("3 1 2 0 4 5 6 7 8").error is None
    assert "unsolvable" in one("3 2 1 0 4 5 6 7 8").error


def test_errors_do_not_stop_the_file(tmp_path):
    path = tmp_path / "mixed.txt"
    path.write_text("1 0 2 3 4 5 6 7 8\n1 1 2 3 4 5 6 7 8\n\n# c\n3 1 2 0 4 5 6 7 8\n")
    items = load_instances(str(path))
    assert [i.error is None for i in items] == [True, False, True]
    assert items[1].where == f"{path}:2"
    assert parse_line("   # only a comment", 1, "f", 1) is None
    with pytest.raises(Exception, match="cannot read"):
        load_instances(str(tmp_path / "missing.txt"))


def test_stdin():
    items = load_instances("-", stdin=io.StringIO("1 0 2 3 4 5 6 7 8\n"))
    assert items[0].source == "<stdin>" and items[0].error is None


def _results():
    ok = SolveResult(id="a", board="3x3", heuristic="manhattan", length=2, solution=[1, 2], nodes_generated=5,
                     nodes_expanded=3, h0=2, seconds=0.5, solved=True, optimal=2)
    late = SolveResult(id="b", board="4x4", heuristic="manhattan", h0=40, nodes_generated=1000, nodes_expanded=500,
                       seconds=1.5, timed_out=True)
    bad = SolveResult(id="c", error="f.txt:3: tile 7 appears twice and tile 8 is missing")
    return [ok, late, bad]


def test_summary_figures():
    s = summarize(_results(), wall_seconds=3.0)
    assert s["summary"] is True
    assert (s["instances"], s["solved"], s["unsolved"], s["failed"]) == (3, 1, 1, 1)
    assert s["mean_h0"] == 21.0 and s["mean_length"] == 2.0
    assert s["total_nodes_generated"] == 1005 and s["mean_nodes_generated"] == 502.5
    assert s["total_seconds"] == 2.0 and s["nodes_per_second"] == 502
    assert s["wall_seconds"] == 3.0


def test_json_and_csv_writers():
    out = io.StringIO()
    w = ResultWriter(out, "json")
    for r in _results():
        w.write(r)
    w.write_summary(summarize(_results()))
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(rows) == 4 and rows[-1]["summary"] is True
    for key in ("id", "board", "length", "solution", "nodes_generated", "nodes_expanded", "h0", "seconds",
                "solved", "error"):
        assert all(key in r for r in rows[:3])
    assert rows[0]["solution"] == [1, 2] and rows[1]["length"] is None and rows[2]["solved"] is False
    assert record(_results()[0])["optimal"] == 2

    out, err = io.StringIO(), io.StringIO()
    w = ResultWriter(out, "csv")
    for r in _results():
        w.write(r)
    w.write_summary(summarize(_results()), err)
    table = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert tuple(table[0]) == CSV_COLUMNS
    assert [r["id"] for r in table] == ["a", "b", "c"]
    assert table[0]["solution"] == "1 2" and table[1]["length"] == "" and table[2]["error"].startswith("f.txt:3")
    assert "solved 1 of 3" in err.getvalue()
