"""The compact encodings of hanoi4 tables (nibble, mod3): exact against the byte tables and a breadth-first
search of the real puzzle, the same search with every encoding, the file checks, the cache and the
commands, and the encodings refused."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pdbtool.cli.main import cli
from pdbtool.hanoi4 import encodings as E
from pdbtool.hanoi4 import kernels as K
from pdbtool.hanoi4.heuristics import HeuristicError, compile_plan
from pdbtool.hanoi4.instance import Instance, standard
from pdbtool.hanoi4.search import solve
from pdbtool.hanoi4.tables import (DiskTable, build_values, convert_file, get_table, goal_kind, seeds_of, table_name,
                                   verify_file)
from pdbtool.tables.cache import TableCache
from pdbtool.tables.encodings import EncodingError

from test_hanoi import bfs

GOALS = ["peg3", "middle", "state:3102120"]
_BYTES: dict = {}
_TABLES: dict = {}


def byte_values(k: int, goal: str) -> np.ndarray:
    if (k, goal) not in _BYTES:
        _BYTES[(k, goal)] = build_values(k, goal, threads=2).values
    return _BYTES[(k, goal)]


def tables_in(encoding: str):
    def table_for(k: int, goal: str) -> DiskTable:
        if (k, goal, encoding) not in _TABLES:
            _TABLES[(k, goal, encoding)] = DiskTable.from_values(k, goal, byte_values(k, goal), encoding)
        return _TABLES[(k, goal, encoding)]
    return table_for


def goal_of(k: int, goal: str) -> str:
    return goal if not goal.startswith("state:") else goal[: len("state:") + k]


@pytest.mark.parametrize("k", range(1, 8))
@pytest.mark.parametrize("goal", GOALS)
@pytest.mark.parametrize("encoding", ["nibble", "mod3"])
def test_encodings_decode_to_the_byte_table(k, goal, encoding):
    goal = goal_of(k, goal)
    values = byte_values(k, goal)
    table = DiskTable.from_values(k, goal, values, encoding)
    lay = 1 if table.layout == "half" else 0
    assert np.array_equal(table.byte_values(), values)
    size = {"nibble": 2 * E.groups_of(k, lay), "mod3": (values.shape[0] + 4) // 5}[encoding]
    assert table.values.nbytes == size
    assert 2 * size <= values.shape[0] + 2 ** k  # half the byte table, but for the self-mirrored groups


@pytest.mark.parametrize("goal", GOALS)
@pytest.mark.parametrize("encoding", ["byte", "nibble", "mod3"])
def test_every_placement_reads_its_distance(goal, encoding):
    """Every placement of 6 disks (both mirror images, every peg of the smallest disk) reads the exact
    distance of a breadth-first search of the real puzzle through the encoding (mod3 by EXACT)."""
    k = 6
    goal = goal_of(k, goal)
    dist = bfs(k, seeds_of(k, goal))
    tabs = np.array([tables_in(encoding)(k, goal).row()], dtype=np.int64)
    for s, d in dist.items():
        assert K.table_value(tabs, 0, np.uint64(s)) == d


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 4 ** 9 - 1), st.sampled_from(["peg3", "middle"]))
def test_mod3_exact_and_child_h_agree_with_the_byte_table(s, goal):
    """EXACT of a placement, and CHILD-H of each of its neighbours from it, give the byte table's values."""
    k = 9
    values = byte_values(k, goal)
    table = tables_in("mod3")(k, goal)
    code, state = goal_kind(goal)
    lay = 1
    exact = E.exact_value(table.values, k, lay, code, state, s)
    assert exact == values[K.half_index(np.uint64(s), k)]
    kids = np.empty(K.MAX_MOVES, dtype=np.uint64)
    from pdbtool.tables.encodings import value_of, MOD3
    for t in range(K.children_into(np.uint64(s), k, kids)):
        idx = int(K.half_index(kids[t], k))
        assert value_of(MOD3, table.values, idx, 0, exact, 0) == values[idx]


@pytest.mark.parametrize("n, spec, middle", [
    (8, "static:6-2", False), (9, "static:6-3,infinite", False), (9, "static:5-3", None),
    (9, "static:4-2-2", None), (8, "infinite,static:4-4", False), (9, "static:6-3,static:4-5", False)])
def test_search_is_the_same_with_every_encoding(n, spec, middle):
    """Same length, h(start), states expanded and generated, and sum of h: the encodings are exact, and the
    carried mod3 values equal the looked-up ones at every state."""
    seen = set()
    for encoding in ("byte", "nibble", "mod3"):
        sol = solve(standard(n), spec, middle=middle, table_for=tables_in(encoding))
        s = sol.stats
        seen.add((sol.length, sol.h_start, s.expanded, s.expanded_below_bound, s.generated, s.h_sum, tuple(s.layers)))
    assert len(seen) == 1


def test_dynamic_search_with_nibble_tables_and_placement_goals():
    for spec in ("dynamic:6-2", "dynamic:5-3,infinite"):
        a, b = (solve(standard(8), spec, middle=False, table_for=tables_in(e)) for e in ("byte", "nibble"))
        assert (a.length, a.stats.expanded, a.stats.h_sum) == (b.length, b.stats.expanded, b.stats.h_sum)
    inst = Instance((0, 1, 2, 3, 3, 2, 1), None, (3, 1, 0, 2, 1, 2, 0))  # placement goal: full-layout tables
    lengths = {e: solve(inst, "static:4-3,infinite", table_for=tables_in(e)).stats.h_sum
               for e in ("byte", "nibble", "mod3")}
    assert len(set(lengths.values())) == 1


def test_dynamic_splits_refuse_mod3():
    with pytest.raises(HeuristicError, match="cannot read mod3"):
        compile_plan("dynamic:6-2", 8, "peg3", encoding="mod3", table_for=tables_in("mod3"))
    with pytest.raises(HeuristicError, match="cannot read mod3"):
        compile_plan("dynamic:6-2", 8, "peg3", table_for=tables_in("mod3"))


def test_encoders_refuse_a_table_that_is_not_a_distance_table():
    values = byte_values(5, "peg3").copy()
    s = int(K.half_state(200, 5))
    values[K.half_index(np.uint64(s ^ 1), 5)] += 2  # two apart from a placement one move away
    with pytest.raises(EncodingError, match="not a breadth-first table"):
        E.encode(values, 5, 1, "nibble")
    values[7] = K.UNSEEN
    with pytest.raises(EncodingError):
        E.encode(values, 5, 1, "mod3")
    for name in ("parity", "min-nibble", "sparse", "nonsense"):
        with pytest.raises(EncodingError, match="byte, nibble, mod3"):
            E.check_encoding(name)


def _damaged(tmp_path, encoding, index, xor=0, value=None):
    table = DiskTable.from_values(7, "peg3", byte_values(7, "peg3"), encoding)
    table.values = table.values.copy()
    table.values[index] = table.values[index] ^ xor if value is None else value
    path = tmp_path / f"{encoding}.pdb"
    table.save(path)  # a good checksum over a wrong payload
    return path


def test_verify_finds_damaged_payloads(tmp_path):
    good = tmp_path / "good.pdb"
    for encoding in ("nibble", "mod3"):
        DiskTable.from_values(7, "peg3", byte_values(7, "peg3"), encoding).save(good)
        assert verify_file(good, full=True).ok and verify_file(good, seed=1).ok
    r = verify_file(_damaged(tmp_path, "nibble", 1, value=0x0F))  # every flag set: the least value is nobody's
    assert not r.ok and "malformed" in r.failure
    r = verify_file(_damaged(tmp_path, "nibble", 4000, xor=0x01), full=True)  # a least value one off
    assert not r.ok and ("consistency" in r.failure or "histogram" in r.failure)
    path = _damaged(tmp_path, "mod3", 1000, xor=0x01)  # five residues in one byte change
    r = verify_file(path, full=True)
    assert not r.ok and "decode" in r.failure
    assert not verify_file(path, samples=4000, seed=3).ok  # EXACT walks through the damaged residues


def test_cache_converts_from_the_byte_table_or_builds(tmp_path):
    cache = TableCache(tmp_path)
    built: list = []
    t = get_table(7, "middle", cache, threads=2, on_build=built.append, encoding="nibble")
    assert built and t.encoding == "nibble" and not (tmp_path / table_name(7, "middle")).exists()
    get_table(7, "peg3", cache, threads=2)
    built.clear()
    m = get_table(7, "peg3", cache, on_build=built.append, encoding="mod3")
    assert not built and m.header["converted_from"] == table_name(7, "peg3")
    assert m.lookup((0,) * 7) == 25 and m.mean() == get_table(7, "peg3", cache).mean()
    back, info = convert_file(m.path, "byte", tmp_path / "back.pdb")
    assert np.array_equal(back.values, byte_values(7, "peg3")) and info["from"] == "mod3"


def run(args, cache):
    return CliRunner().invoke(cli, args + ["--cache-dir", str(cache)])


def test_commands_with_encodings(tmp_path):
    cache = tmp_path / "cache"
    r = run(["build", "--domain", "hanoi4", "--disks", "6", "--disks", "2", "--encoding", "mod3", "--format", "json"],
            cache)
    assert r.exit_code == 0, r.output
    assert [json.loads(x)["payload_bytes"] for x in r.stdout.splitlines()] == [416, 2]
    r = run(["solve", "--domain", "hanoi4", "--disks", "8", "--heuristic", "static:6-2", "--no-middle",
             "--encoding", "mod3", "--format", "json"], cache)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["length"] == 33
    r = run(["convert", "--domain", "hanoi4", "--disks", "6", "--from", "mod3", "--encoding", "nibble"], cache)
    assert r.exit_code == 0 and "mod3 -> nibble" in r.output, r.output
    r = run(["inspect", "--domain", "hanoi4", "--disks", "6", "--encoding", "nibble", "--format", "json"], cache)
    assert r.exit_code == 0 and json.loads(r.stdout)["encoding"] == "nibble"
    out = tmp_path / "d6.pdb"
    r = CliRunner().invoke(cli, ["convert", str(cache / table_name(6, "peg3", "nibble")), "--encoding", "byte",
                                 "-o", str(out)])  # a hanoi4 FILE needs no --domain
    assert r.exit_code == 0 and DiskTable.load(out).encoding == "byte", r.output
    r = run(["verify", "--domain", "hanoi4", "--full"], cache)
    assert r.exit_code == 0 and r.output.count("OK ") == 3 and "byte.pdb" not in r.output, r.output


@pytest.mark.parametrize("args, message", [
    (["build", "--domain", "hanoi4", "--disks", "5", "--encoding", "parity"], "smallest disk's moves form triangles"),
    (["build", "--domain", "hanoi4", "--disks", "5", "--encoding", "sparse"], "Manhattan"),
    (["solve", "--domain", "hanoi4", "--disks", "8", "--heuristic", "dynamic:6-2", "--encoding", "mod3"],
     "cannot read mod3")])
def test_encodings_that_do_not_apply_are_usage_errors(tmp_path, args, message):
    r = CliRunner().invoke(cli, args + ["--cache-dir", str(tmp_path)])
    assert r.exit_code == 2 and message in r.output and len(r.output.strip().splitlines()) == 1, r.output
