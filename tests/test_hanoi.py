"""The four-peg Towers of Hanoi domain: tables, heuristics and search against a full breadth-first search
of the real puzzle (small disk counts), the table file and cache, and the commands."""

from __future__ import annotations

import json
from collections import deque

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pdbtool.cli.main import cli
from pdbtool.hanoi4 import kernels as K
from pdbtool.hanoi4.heuristics import (HeuristicError, compile_plan, mean_infinite_peg, mean_sampled, mean_static,
                                       parse_spec)
from pdbtool.hanoi4.instance import Instance, InstanceError, apply_moves, load_instances, pack, standard, unpack
from pdbtool.hanoi4.search import frame_stewart, solve
from pdbtool.hanoi4.tables import (DiskTable, build_values, entries_of, get_table, seeds_of, table_name,
                                   verify_file)
from pdbtool.tables.cache import TableCache

FRAME_STEWART = [0, 1, 3, 5, 9, 13, 17, 25, 33, 41, 49, 65, 81, 97, 113, 129, 161, 193, 225]


def children(s: int, n: int) -> list[int]:
    """The moves of the real puzzle, written independently of the kernels: the top disk of a peg onto an
    empty peg or a larger disk."""
    pegs = unpack(s, n)
    out = []
    for d in range(n):
        if any(pegs[e] == pegs[d] for e in range(d)):
            continue  # covered by a smaller disk
        for q in range(4):
            if q != pegs[d] and not any(pegs[e] == q for e in range(d)):
                out.append(s ^ ((pegs[d] ^ q) << (2 * d)))
    return out


def bfs(n: int, seeds) -> dict[int, int]:
    dist = {int(s): 0 for s in seeds}
    queue = deque(dist)
    while queue:
        s = queue.popleft()
        for c in children(s, n):
            if c not in dist:
                dist[c] = dist[s] + 1
                queue.append(c)
    return dist


_TABLES: dict = {}


def table_for(k: int, goal: str) -> DiskTable:
    if (k, goal) not in _TABLES:
        _TABLES[(k, goal)] = DiskTable(k, goal, build_values(k, goal, threads=2).values)
    return _TABLES[(k, goal)]


@pytest.fixture(scope="module")
def oracle8():
    """Exact distances of every placement of 8 disks to peg 3 and to the middle set."""
    return {"peg3": bfs(8, seeds_of(8, "peg3")), "middle": bfs(8, seeds_of(8, "middle"))}


def test_moves_match_the_real_puzzle():
    for n in range(1, 6):
        for s in range(4 ** n):
            out = np.empty(K.MAX_MOVES, dtype=np.uint64)
            c = K.children_into(np.uint64(s), n, out)
            assert sorted(int(x) for x in out[:c]) == sorted(children(s, n))


@pytest.mark.parametrize("k", range(1, 7))
def test_half_index_is_a_bijection_of_mirror_pairs(k):
    swap = [0, 2, 1, 3]
    classes: dict[int, set] = {}
    for s in range(4 ** k):
        i = int(K.half_index(np.uint64(s), k))
        mirror = pack(swap[p] for p in unpack(s, k))
        assert i == int(K.half_index(np.uint64(mirror), k))
        classes.setdefault(i, set()).update({s, mirror})
    assert sorted(classes) == list(range(entries_of(k, "half")))
    for i, members in classes.items():
        assert int(K.half_state(i, k)) in members


@pytest.mark.parametrize("k", range(1, 7))
@pytest.mark.parametrize("goal", ["peg3", "middle", "state"])
def test_tables_equal_a_breadth_first_search(k, goal):
    if goal == "state":
        goal = "state:" + "".join(str((3 * d + 1) % 4) for d in range(k))
    dist = bfs(k, seeds_of(k, goal))
    table = DiskTable(k, goal, build_values(k, goal, threads=2).values)
    assert len(dist) == 4 ** k
    for s, d in dist.items():
        assert table.lookup(unpack(s, k)) == d
    assert sum(table.state_histogram().values()) == 4 ** k


def test_parallel_build_equals_single_threaded():
    for goal in ("peg3", "middle"):
        one = build_values(9, goal, threads=1)
        two = build_values(9, goal, threads=2)
        assert np.array_equal(one.values, two.values) and one.layers == two.layers


def test_standard_distances_are_frame_stewart():
    for k in range(1, 11):
        table = table_for(k, "peg3")
        assert table.lookup((0,) * k) == FRAME_STEWART[k]
    assert len(frame_stewart(12)) == FRAME_STEWART[12]
    inst = standard(12)
    assert apply_moves(inst, frame_stewart(12)) == (3,) * 12


SPECS_8 = ["infinite", "static:7-1", "static:6-2", "static:5-3", "static:4-4", "static:4-2-2", "dynamic:6-2",
           "dynamic:5-3", "dynamic:7-1", "static:6-2,infinite", "dynamic:6-2,static:5-3,infinite"]


@pytest.mark.parametrize("spec", SPECS_8)
@pytest.mark.parametrize("goal", ["peg3", "middle"])
def test_every_heuristic_is_admissible_and_consistent(oracle8, spec, goal):
    """h <= the exact distance from every placement of 8 disks, and |h(s) - h(child)| <= 1 (the search's
    layered duplicate detection needs a consistent heuristic)."""
    plan = compile_plan(spec, 8, goal, table_for=table_for)
    states = np.arange(4 ** 8, dtype=np.uint64)
    h = plan.values(states)
    exact = np.array([oracle8[goal][s] for s in range(4 ** 8)])
    assert (h <= exact).all()
    assert h.max() > 0
    out = np.empty(K.MAX_MOVES, dtype=np.uint64)
    for s in range(0, 4 ** 8, 7):
        c = K.children_into(np.uint64(s), 8, out)
        assert all(abs(int(h[s]) - int(h[int(x)])) <= 1 for x in out[:c])


def test_static_split_is_exact_on_its_own_disks(oracle8):
    """With one group of all the disks the heuristic is the exact distance."""
    plan = compile_plan("static:8", 8, "peg3", table_for=table_for)
    for s in range(0, 4 ** 8, 97):
        assert plan(unpack(s, 8)) == oracle8["peg3"][s]


def test_dynamic_dominates_static():
    static = compile_plan("static:6-2", 8, "peg3", table_for=table_for)
    dynamic = compile_plan("dynamic:6-2", 8, "peg3", table_for=table_for)
    states = np.arange(4 ** 8, dtype=np.uint64)
    hs, hd = static.values(states), dynamic.values(states)
    assert (hd >= hs).all() and (hd > hs).any()
    assert dynamic.splits == 28


def test_placement_goal_heuristics_are_admissible():
    goal = (1, 0, 3, 3, 2, 0, 1)
    dist = bfs(7, [pack(goal)])
    for spec in ("infinite", "static:4-3", "static:5-2,infinite"):
        plan = compile_plan(spec, 7, "state", goal_pegs=goal, table_for=table_for)
        h = plan.values(np.arange(4 ** 7, dtype=np.uint64))
        assert all(h[s] <= d for s, d in dist.items())
        assert plan(goal) == 0
    with pytest.raises(HeuristicError):
        compile_plan("dynamic:4-3", 7, "state", goal_pegs=goal, table_for=table_for)


def test_means_over_all_placements():
    for n in range(1, 8):
        plan = compile_plan("infinite", n, "peg3", table_for=table_for)
        assert mean_infinite_peg(n) == pytest.approx(plan.values(np.arange(4 ** n, dtype=np.uint64)).mean())
    plan = compile_plan("static:5-3", 8, "peg3", table_for=table_for)
    exact = plan.values(np.arange(4 ** 8, dtype=np.uint64)).mean()
    assert mean_static(plan) == pytest.approx(exact)
    sampled, se = mean_sampled(plan, 200_000)
    assert abs(sampled - exact) < 5 * se


@pytest.mark.parametrize("n", range(1, 10))
def test_standard_problem_lengths(n):
    for middle in (True, False):
        spec = "zero" if n > 7 and not middle else "static:auto"
        sol = solve(standard(n), spec, middle=middle, table_for=table_for)
        assert sol.length == FRAME_STEWART[n]
        assert len(sol.moves) == sol.length
        assert apply_moves(standard(n), sol.moves) == (3,) * n


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=6, max_size=6), st.lists(st.integers(0, 3), min_size=6, max_size=6),
       st.sampled_from(["infinite", "static:4-2", "zero", "static:3-3,infinite"]))
def test_random_instances_solve_optimally(start, goal, spec):
    dist = _oracle6(tuple(goal))
    inst = Instance(tuple(start), goal_peg=None, goal_pegs=tuple(goal))
    sol = solve(inst, spec, table_for=table_for)
    assert sol.length == dist[inst.start]
    assert apply_moves(inst, sol.moves) == tuple(goal)


_ORACLES: dict = {}


def _oracle6(goal):
    if goal not in _ORACLES:
        _ORACLES[goal] = bfs(6, [pack(goal)])
    return _ORACLES[goal]


def test_goal_peg_instances_and_dynamic_search(oracle8):
    rng = np.random.default_rng(5)
    for _ in range(6):
        pegs = tuple(int(x) for x in rng.integers(0, 4, 8))
        target = int(rng.integers(0, 4))
        inst = Instance(pegs, goal_peg=target)
        sol = solve(inst, "dynamic:6-2,infinite", table_for=table_for)
        renamed = pack([{target: 3, 3: target}.get(p, p) for p in pegs])
        assert sol.length == oracle8["peg3"][renamed]
        assert apply_moves(inst, sol.moves) == (target,) * 8


def test_search_counts_fall_with_a_stronger_heuristic():
    counts = [solve(standard(9), spec, middle=False, table_for=table_for).stats.expanded
              for spec in ("zero", "infinite", "static:6-3", "dynamic:6-3")]
    assert counts == sorted(counts, reverse=True) and counts[0] > 2 * counts[-1]


def test_middle_search_without_path_gives_the_length():
    sol = solve(standard(9), "static:6-2", keep_path=False, table_for=table_for)
    assert sol.length == 41 and sol.moves is None and sol.middle


def test_spec_errors():
    for bad in ("static", "static:a-b", "dynamic:3-2-1", "weird", "static:0-8"):
        with pytest.raises(HeuristicError):
            parse_spec(bad)
    with pytest.raises(HeuristicError, match="hold 7 disks"):
        compile_plan("static:5-2", 8, "peg3", table_for=table_for)


def test_instance_files(tmp_path):
    f = tmp_path / "h.txt"
    f.write_text("# a comment\nstd: 000000 -> 3\n0 1 2 3 0 1 -> 0 0 0 0 0 3  # a goal placement\n")
    a, b = load_instances(f)
    assert a.name == "std" and a.is_standard and a.goal_peg == 3
    assert b.goal_pegs == (0, 0, 0, 0, 0, 3) and not b.is_standard
    for text, message in [("0124 -> 3", "pegs are 0, 1, 2 or 3"), ("0123 -> 01", "goal places 2 disks"),
                          ("hello", "expected 'PEGS -> GOAL'"), ("", "no instances")]:
        f.write_text(text + "\n")
        with pytest.raises(InstanceError, match=message):
            load_instances(f)
    with pytest.raises(InstanceError):
        apply_moves(standard(3), [(1, 0, 2)])  # disk 2 is covered by disk 1


# --- the table file, the cache and the commands -----------------------------------------------------------

def test_cache_round_trip_and_damage(tmp_path):
    cache = TableCache(tmp_path)
    built = []
    t = get_table(7, "peg3", cache, threads=2, on_build=built.append)
    assert built and t.path.name == table_name(7, "peg3") and t.lookup((0,) * 7) == 25
    again = get_table(7, "peg3", cache)
    assert np.array_equal(again.values, t.values)
    assert verify_file(t.path, full=True).ok
    assert dict(verify_file(t.path, rebuild=True, threads=2).checks)["rebuild"] == "identical"
    raw = bytearray(t.path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    t.path.write_bytes(bytes(raw))
    report = verify_file(t.path)
    assert not report.ok and "checksum" in report.failure
    rebuilt = get_table(7, "peg3", cache)  # moved aside and rebuilt
    assert rebuilt.lookup((0,) * 7) == 25 and list(tmp_path.glob("*.corrupt-*"))


def test_verify_finds_a_wrong_value_with_a_good_checksum(tmp_path):
    t = DiskTable(6, "peg3", build_values(6, "peg3").values.copy())
    t.values[100] = (int(t.values[100]) + 2) % 17
    path = tmp_path / "bad.pdb"
    t.save(path)
    report = verify_file(path, full=True)
    assert not report.ok and "consistency" in report.failure


def run(args, cache):
    return CliRunner().invoke(cli, args + ["--cache-dir", str(cache)] if "--cache-dir" not in args else args)


def test_commands(tmp_path):
    cache = tmp_path / "cache"
    r = run(["build", "--domain", "hanoi4", "--disks", "6", "--disks", "2", "--format", "json"], cache)
    assert r.exit_code == 0, r.output
    recs = [json.loads(line) for line in r.output.splitlines()]
    assert [x["disks"] for x in recs] == [6, 2] and recs[0]["max"] == 17
    r = run(["solve", "--domain", "hanoi4", "--disks", "8", "--heuristic", "static:6-2", "--no-middle",
             "--format", "json", "--moves"], cache)
    assert r.exit_code == 0, r.output
    rec = json.loads(r.output)
    assert rec["length"] == 33 and rec["h_start"] == 17 + 3 and len(rec["moves"]) == 33
    path = cache / table_name(6, "peg3")
    r = CliRunner().invoke(cli, ["inspect", str(path)])
    assert r.exit_code == 0 and "hanoi4 6 disks to peg3" in r.output
    r = CliRunner().invoke(cli, ["verify", "--cache", "--cache-dir", str(cache)])
    assert r.exit_code == 0 and r.output.count("OK") == 2, r.output
    r = run(["verify", "--domain", "hanoi4", "--disks", "6", "--full"], cache)
    assert r.exit_code == 0 and "OK" in r.output
    inst = tmp_path / "i.txt"
    inst.write_text("0123 -> 3210\n")
    r = run(["solve", "--domain", "hanoi4", str(inst), "--heuristic", "infinite", "--format", "json"], cache)
    assert r.exit_code == 0 and json.loads(r.output)["length"] == bfs(4, [pack((3, 2, 1, 0))])[pack((0, 1, 2, 3))]


def test_domain_option_picks_the_command():
    tile = CliRunner().invoke(cli, ["solve", "--domain", "tile", "--help"])
    hanoi = CliRunner().invoke(cli, ["solve", "--domain=hanoi4", "--help"])
    assert tile.exit_code == 0 and "--partition" in tile.output and "--domain" in tile.output
    assert hanoi.exit_code == 0 and "--disks" in hanoi.output and "--partition" not in hanoi.output


def test_command_errors(tmp_path):
    cache = tmp_path / "cache"
    inst = tmp_path / "i.txt"
    inst.write_text("0129 -> 3\n")
    for args, message in [(["solve", "--domain", "hanoi4", str(inst)], "pegs are 0, 1, 2 or 3"),
                          (["solve", "--domain", "hanoi4", "--disks", "8", "--heuristic", "static:5-1"],
                           "hold 6 disks"),
                          (["solve", "--domain", "hanoi4", "--disks", "8", "--heuristic", "nonsense"],
                           "unknown heuristic"),
                          (["inspect", "--domain", "hanoi4", "--disks", "9"], "not in the cache")]:
        r = CliRunner().invoke(cli, args + ["--cache-dir", str(cache)])
        assert r.exit_code != 0 and message in r.output, r.output
        assert "Traceback" not in r.output


def test_table_header_is_checked_by_kind(tmp_path):
    """A hanoi4 header lacking its identity is refused by the shared file reader, and a tile reader's
    keys are not asked of it."""
    from pdbtool.tables import fileformat

    values = build_values(3, "peg3").values
    good = tmp_path / "good.pdb"
    DiskTable(3, "peg3", values).save(good)
    assert DiskTable.load(good).lookup((0, 0, 0)) == 5
    bad = tmp_path / "bad.pdb"
    header = fileformat.make_header(kind="hanoi4", target="peg3", layout="half", encoding="byte", entries=36)
    fileformat.save(bad, header, values)
    with pytest.raises(fileformat.TableFileError, match="missing disks"):
        DiskTable.load(bad)
    report = verify_file(bad)
    assert not report.ok and "missing disks" in report.failure
