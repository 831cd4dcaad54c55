"""Move automata kept in the table cache (``pdbtool.search.automata``): built once per cache, read back
exactly, refused when damaged or crafted (then moved aside and built again), shown by ``inspect`` and
rebuilt by ``verify``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from pdbtool.cli.main import cli
from pdbtool.puzzle.board import Board
from pdbtool.search import automata as af
from pdbtool.search import move_automaton as ma
from pdbtool.search.solver import Solver
from pdbtool.tables import fileformat
from pdbtool.tables.cache import CacheReadOnly, TableCache
from pdbtool.tables.fileformat import TableFileError

DEPTH = af.CACHED_FROM_DEPTH


@pytest.fixture
def fresh_memo():
    """Each test sees the process's automata as a new process would: none yet."""
    saved = dict(af._MEMO)
    af._MEMO.clear()
    yield
    af._MEMO.clear()
    af._MEMO.update(saved)


def _same(a, b) -> bool:
    return a.depth == b.depth and a.duplicates == b.duplicates and np.array_equal(a.table, b.table) and \
        np.array_equal(a.starts, b.starts)


def test_a_deep_automaton_is_built_once_per_cache_and_read_back_exactly(tmp_path, fresh_memo):
    board = Board(3, 3)
    said = []
    solver = Solver(board, heuristic="manhattan", pruning="fsm", fsm_depth=DEPTH, cache_dir=tmp_path,
                    notify=said.append)
    path = tmp_path / f"3x3-moves-L{DEPTH}.fsm"
    assert path.exists() and [p.name for p in TableCache(tmp_path).entries()] == [path.name]
    assert any("building the move automaton of 3x3" in s for s in said)
    built = ma.build_automaton(board, DEPTH)
    assert _same(solver.heuristic.automaton, built)
    af._MEMO.clear()  # another process: reads the file
    said.clear()
    again = Solver(board, heuristic="manhattan", pruning="fsm", fsm_depth=DEPTH, cache_dir=tmp_path,
                   notify=said.append)
    assert not said and _same(again.heuristic.automaton, built)
    assert again.heuristic.automaton.table.flags.owndata  # copied out of the mapped file
    state = [8, 1, 3, 4, 0, 2, 7, 6, 5]
    assert solver.solve(state).nodes_generated == again.solve(state).nodes_generated
    af._MEMO.clear()  # the goal does not matter
    other_goal = Solver(Board.parse("3x3", "blank-last"), heuristic="manhattan", pruning="fsm", fsm_depth=DEPTH,
                        cache_dir=tmp_path, notify=said.append)
    assert not said and _same(other_goal.heuristic.automaton, built)
    # a shallower one builds in about a second: no file
    Solver(board, heuristic="manhattan", pruning="fsm", fsm_depth=DEPTH - 2, cache_dir=tmp_path)
    assert len(list(tmp_path.glob("*.fsm"))) == 1


def _rewrite(path, change):
    """Rewrite an automaton file with ``change(header, payload)`` applied and a valid checksum: a crafted
    file, not a damaged one."""
    loaded = fileformat.load(path)
    header = {k: v for k, v in loaded.header.items() if not k.startswith("_") and not k.startswith("payload")}
    payload = np.array(loaded.payload)
    del loaded
    change(header, payload)
    path.unlink()
    fileformat.save(path, header, payload)


@pytest.mark.parametrize("what,change,message", [
    ("a transition past the table", lambda h, p: p.__setitem__(5, h["states"] + 3), "not one of its"),
    ("a negative start", lambda h, p: p.__setitem__(-1, 0xFFFFFFF0), "not one of its"),
    ("another depth", lambda h, p: h.__setitem__("depth", DEPTH + 2), "up to 16 moves, not of 3x3 up to 14"),
    ("another board", lambda h, p: h.update(width=2, height=4, board="2x4"), "2x4"),
    ("a short payload", lambda h, p: h.__setitem__("states", h["states"] + 1), "damaged header"),
])
def test_a_crafted_automaton_is_refused_then_moved_aside_and_rebuilt(tmp_path, fresh_memo, what, change, message):
    board = Board(3, 3)
    cache = TableCache(tmp_path)
    path = tmp_path / af.file_name(board, DEPTH)
    good = af.stored_automaton(cache, board, DEPTH)
    _rewrite(path, change)
    with pytest.raises(TableFileError, match=message):
        af.load_automaton(path, board, DEPTH)
    said = []
    again = af.stored_automaton(TableCache(tmp_path, notify=said.append), board, DEPTH)
    assert _same(again, good), what
    assert any("moved aside" in s for s in said) and len(list(tmp_path.glob("*.corrupt-*"))) == 1
    assert _same(af.load_automaton(path, board, DEPTH), good)


def test_a_damaged_automaton_is_rebuilt_and_a_read_only_cache_builds_in_memory(tmp_path, fresh_memo, monkeypatch):
    board = Board(3, 3)
    cache = TableCache(tmp_path)
    path = tmp_path / af.file_name(board, DEPTH)
    good = af.stored_automaton(cache, board, DEPTH)
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(TableFileError, match="checksum"):
        af.load_automaton(path)
    assert _same(af.stored_automaton(TableCache(tmp_path), board, DEPTH), good)
    # a cache that cannot be written: built here, nothing kept
    elsewhere = tmp_path / "read-only"

    def refuse(self, path, why=None):
        raise CacheReadOnly(f"the cache {self.dir} cannot be written")

    monkeypatch.setattr(TableCache, "lock", refuse)
    assert _same(af.stored_automaton(TableCache(elsewhere), board, DEPTH), good)
    assert not elsewhere.exists()


def test_inspect_and_verify_an_automaton(tmp_path, fresh_memo):
    board = Board(3, 3)
    af.stored_automaton(TableCache(tmp_path), board, DEPTH)
    path = tmp_path / af.file_name(board, DEPTH)
    runner = CliRunner()
    result = runner.invoke(cli, ["inspect", str(path), "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    good = ma.build_automaton(board, DEPTH)
    assert (info["kind"], info["board"], info["depth"], info["states"]) == ("move-automaton", "3x3", DEPTH, good.states)
    result = runner.invoke(cli, ["inspect", str(path)])
    assert f"move automaton of 3x3: duplicates of up to {DEPTH} moves" in result.output
    result = runner.invoke(cli, ["verify", "--cache", "--cache-dir", str(tmp_path)])
    assert result.exit_code == 0 and result.output.startswith("PASS") and "rebuild" in result.output
    # a file whose checksum holds but whose table is not the automaton: verify's rebuild finds it
    table_col = 4 * 3 + 1  # a transition of state 3 that is not pruned becomes another state
    _rewrite(path, lambda h, p: p.__setitem__(table_col, (int(p[table_col]) + 1) % h["states"]))
    result = runner.invoke(cli, ["verify", str(path)])
    assert result.exit_code == 3 and "FAIL" in result.output and "differs from a fresh build" in result.output
