"""IDA* against exact oracles: Korf's 1985 node counts, a full BFS of the 8-puzzle, a plain Python IDA*,
and Korf's optimal lengths with the 15-5-5-5 and 15-6-6-3 tables."""

from __future__ import annotations

import random
from collections import namedtuple

import numba
import numpy as np
import pytest

from pdbtool.heuristics import hooks
from pdbtool.search import driver
from pdbtool.tables.build import build_table
from pdbtool.puzzle.board import Board
from pdbtool.heuristics.linear_conflict import LinearConflict
from pdbtool.heuristics.manhattan import Manhattan
from pdbtool.heuristics.pattern_sum import PatternSum
from pdbtool.tables.ranking import TilePattern
from pdbtool.search.solver import Solver, replay

from conftest import korf100
from oracle import reference_ida, true_distances

KORF = korf100()

# Korf (1985), IDA* with Manhattan distance: nodes generated including the start node
# (examples/korf100_md_nodes.txt); the cheapest instances.
KORF_MD_NODES = {79: 540860, 12: 546344, 42: 877823, 55: 927212, 97: 1002927, 19: 1280495, 94: 1337340}


# --- oracles ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def eight():
    board = Board(3, 3)
    return board, true_distances(board.width, board.height, board.goal)


@pytest.fixture(scope="module")
def eight_tables():
    board = Board(3, 3)
    patterns = [TilePattern(board, (1, 2, 3, 4)), TilePattern(board, (5, 6, 7, 8))]
    return patterns, [build_table(p).table for p in patterns]


def _sample(dist, count, seed, extra_far=5):
    rng = random.Random(seed)
    states = sorted(dist)
    picked = rng.sample(states, count)
    top = max(dist.values())
    far = [s for s in states if dist[s] == top]
    return picked + far[:extra_far]


# --- Korf's counts -------------------------------------------------------------------------------------

@pytest.mark.parametrize("ident", sorted(KORF_MD_NODES))
def test_manhattan_reproduces_korf_1985_node_counts(ident):
    board = Board(4, 4)
    state, optimal = KORF[ident]
    result = Solver(board, heuristic="manhattan").solve(state)
    assert result.length == optimal
    assert result.nodes_generated == KORF_MD_NODES[ident] - 1
    assert replay(board, state, result.solution) == board.goal_tiles


# --- the 8-puzzle against a full BFS ----------------------------------------------------------------------

def test_bfs_oracle_is_the_real_8_puzzle(eight):
    board, dist = eight
    assert len(dist) == 181440
    assert max(dist.values()) == 31


@pytest.mark.parametrize("heuristic,reflect", [("manhattan", False), ("linear-conflict", False),
                                               ("pdb", False), ("pdb", True)])
def test_8_puzzle_lengths_match_bfs(eight, eight_tables, heuristic, reflect):
    board, dist = eight
    patterns, tables = eight_tables
    if heuristic == "pdb":
        solver = Solver(board, heuristic="pdb", partition=patterns, tables=tables, reflect=reflect)
        assert solver.reflect == reflect
    else:
        solver = Solver(board, heuristic=heuristic)
    for state in _sample(dist, 60, seed=10 * len(heuristic) + reflect):
        result = solver.solve(state)
        assert result.solved
        assert result.length == dist[state], state
        assert len(result.solution) == result.length
        assert replay(board, state, result.solution) == board.goal_tiles
        assert result.h0 <= dist[state]


def test_kernels_count_like_a_plain_python_ida(eight, eight_tables):
    """The incremental kernels visit exactly the nodes of an IDA* that evaluates h from scratch."""
    board, dist = eight
    patterns, tables = eight_tables
    heuristics = {
        "manhattan": (Solver(board, heuristic="manhattan"), Manhattan(board).value),
        "linear-conflict": (Solver(board, heuristic="linear-conflict"), LinearConflict(board).value),
        "pdb": (Solver(board, partition=patterns, tables=tables, reflect=False),
                PatternSum(patterns, tables, reflect=False).value),
        "pdb+reflect": (Solver(board, partition=patterns, tables=tables, reflect=True),
                        PatternSum(patterns, tables, reflect=True).value),
    }
    rng = random.Random(7)
    states = rng.sample(sorted(s for s, d in dist.items() if 14 <= d <= 18), 6)
    for name, (solver, h) in heuristics.items():
        for state in states:
            length, generated, expanded = reference_ida(board, h, state)
            result = solver.solve(state)
            assert (result.length, result.nodes_generated, result.nodes_expanded) == (length, generated, expanded), \
                (name, state)


def test_each_state_class_declares_its_walk(eight, eight_tables):
    """The driver compiles the walk each heuristic declares for its state class: children at once for the
    pattern sums and Manhattan, one at a time for linear conflict; a state of no declared walk is refused."""
    board, _ = eight
    patterns, tables = eight_tables
    tiles = np.array(board.goal_tiles, dtype=np.int64)
    for heuristic, at_once in ((Manhattan(board), True), (LinearConflict(board), False),
                               (PatternSum(patterns, tables, reflect=True), True)):
        _, state = heuristic.setup(tiles, 8)
        assert hooks.walks_at_once(numba.typeof(state)) is at_once, type(heuristic).__name__
    Unknown = namedtuple("Unknown", ["cells"])
    with pytest.raises(hooks.HeuristicError, match="no walk declared"):
        hooks.walks_at_once(numba.typeof(Unknown(np.zeros(3, dtype=np.int64))))


def test_every_hook_implementation_is_loaded_with_the_driver():
    """Every module that implements the driver's hooks is listed in ``hooks.IMPLEMENTATIONS`` (found by its
    source: an overload of a hook, or a declared walk or served state), and importing the driver, in a
    fresh process, imports them all: an implementation imported while a driver is being typed changes the
    hooks' types halfway through (Numba imports a state's module when it reads a cached signature)."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    root = Path(hooks.__file__).resolve().parents[1]
    marks = re.compile(r"overload\(hooks\.|hooks\.at_once\(|hooks\.evaluated_alone\(|^serve_state\(", re.M)
    found = {".".join(path.relative_to(root.parent).with_suffix("").parts)
             for path in root.rglob("*.py") if path.name != "hooks.py" and marks.search(path.read_text())}
    assert found == set(hooks.IMPLEMENTATIONS)
    code = ("import sys, pdbtool.search.driver; from pdbtool.heuristics import hooks; "
            "print(sorted(set(hooks.IMPLEMENTATIONS) - set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root.parent)
    assert out.stdout.strip() == "[]"


def test_goal_and_other_goals(eight):
    board, _ = eight
    solver = Solver(board, heuristic="manhattan")
    result = solver.solve(board.goal_tiles)
    assert (result.length, result.solution, result.nodes_generated, result.solved) == (0, [], 0, True)
    # blank-last goal, and a 2x4 board (not square: no reflection) against their own BFS
    for other in (Board.parse("3x3", "blank-last"), Board(4, 2)):
        dist = true_distances(other.width, other.height, other.goal)
        patterns = [TilePattern(other, (1, 2, 3)), TilePattern(other, tuple(range(4, other.n)))]
        tables = [build_table(p).table for p in patterns]
        solvers = [Solver(other, heuristic="linear-conflict"),
                   Solver(other, partition=patterns, tables=tables, reflect=True)]
        assert solvers[1].reflect == other.reflection_valid()
        for state in _sample(dist, 15, seed=3, extra_far=2):
            for s in solvers:
                result = s.solve(state)
                assert result.length == dist[state]
                assert replay(other, state, result.solution) == other.goal_tiles


# --- the resumable kernel ---------------------------------------------------------------------------------

def test_chunks_do_not_change_the_search():
    board = Board(4, 4)
    state, optimal = KORF[79]
    solver = Solver(board, heuristic="linear-conflict")
    whole = solver.solve(state)
    calls = []
    chunked = solver.solve(state, chunk=997, progress=lambda *a: calls.append(a))
    assert len(calls) > 10
    assert [c[1] for c in calls] == sorted(c[1] for c in calls)
    assert (chunked.length, chunked.solution, chunked.nodes_generated, chunked.nodes_expanded) == \
        (whole.length, whole.solution, whole.nodes_generated, whole.nodes_expanded)
    assert whole.length == optimal


def test_stack_grows_beyond_its_first_capacity(monkeypatch, eight):
    board, dist = eight
    far = next(s for s in sorted(dist) if dist[s] == 31)
    monkeypatch.setattr(driver, "DEFAULT_CAPACITY", 4)
    result = Solver(board, heuristic="manhattan").solve(far)
    assert result.length == 31
    assert replay(board, far, result.solution) == board.goal_tiles


def test_limits_leave_the_instance_unsolved():
    board = Board(4, 4)
    state, _ = KORF[1]       # 276 M nodes with Manhattan
    solver = Solver(board, heuristic="manhattan")
    result = solver.solve(state, node_limit=100_000)
    assert not result.solved and result.timed_out and result.length is None
    assert 100_000 <= result.nodes_generated < 100_010
    result = solver.solve(state, time_limit=0.05, chunk=50_000)
    assert not result.solved and result.timed_out
    assert result.seconds < 2


# --- the 15-puzzle with real partitions -----------------------------------------------------------------

@pytest.fixture
def table_cache(shared_cache_dir):
    """The run's shared cache (tests/conftest.py): these tests only read the tables."""
    from pdbtool.tables.cache import TableCache

    return TableCache(shared_cache_dir)


# instances that the partitions solve with few nodes
CHEAP = {"15-5-5-5": (97, 93, 42, 47, 9), "15-6-6-3": (97, 93, 42, 47, 19, 9)}


@pytest.mark.parametrize("partition", sorted(CHEAP))
def test_korf_instances_with_partitions(table_cache, partition):
    board = Board(4, 4)
    plain = Solver(board, partition=partition, reflect=False, cache=table_cache)
    mirrored = Solver(board, partition=partition, reflect=True, cache=table_cache)
    assert mirrored.reflect and not plain.reflect
    for ident in CHEAP[partition]:
        state, optimal = KORF[ident]
        a = plain.solve(state)
        b = mirrored.solve(state)
        for r in (a, b):
            assert r.length == optimal
            assert replay(board, state, r.solution) == board.goal_tiles
        assert b.h0 >= a.h0
    # admissible along an optimal path, and never below the plain sum, on every instance's start
    state, optimal = KORF[CHEAP[partition][0]]
    path = [state]
    tiles = list(state)
    for t in mirrored.solve(state).solution:
        q, b = tiles.index(t), tiles.index(0)
        tiles[q], tiles[b] = 0, t
        path.append(tuple(tiles))
    for remaining, s in zip(range(optimal, -1, -1), path):
        assert plain.h(s) <= mirrored.h(s) <= remaining
    for state, optimal in KORF.values():
        assert plain.h(state) <= mirrored.h(state) <= optimal
