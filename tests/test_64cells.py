"""Boards of 33 to 64 cells on the static path: ranks, the builders, pattern sums with their reflection,
Manhattan and linear conflicts, the IDA* driver (serial, threads, move pruning) and the commands, each
against an exact oracle on small patterns and short random walks."""

from __future__ import annotations

import json
import sys
from math import perm
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from oracle import abstract_distances, reference_ida  # noqa: E402
from test_large_boards import random_walk  # noqa: E402

from pdbtool.cli.main import cli  # noqa: E402
from pdbtool.heuristics.linear_conflict import LinearConflict  # noqa: E402
from pdbtool.heuristics.manhattan import Manhattan  # noqa: E402
from pdbtool.heuristics.pattern_sum import PatternSum  # noqa: E402
from pdbtool.puzzle.board import MAX_CELLS, Board, BoardError  # noqa: E402
from pdbtool.search.parallel import parallel_search  # noqa: E402
from pdbtool.search.solver import Solver, replay  # noqa: E402
from pdbtool.tables.build import build_table  # noqa: E402
from pdbtool.tables.ranking import TilePattern, cells_mask, rank_many, unrank_many  # noqa: E402


def true_distance(board: Board, state: tuple[int, ...], most: int) -> int:
    """The optimal length of ``state`` (at most ``most``), by a breadth-first search from both ends."""
    nb = [[q for q in row if q >= 0] for row in board.neighbours().tolist()]
    goal = board.goal_tiles
    if state == goal:
        return 0
    sides = [{state: 0}, {goal: 0}]
    frontiers = [[state], [goal]]
    depth = [0, 0]
    while depth[0] + depth[1] < most:
        side = 0 if len(frontiers[0]) <= len(frontiers[1]) else 1
        seen, other = sides[side], sides[1 - side]
        nxt = []
        for s in frontiers[side]:
            blank = s.index(0)
            for q in nb[blank]:
                t = list(s)
                t[blank], t[q] = t[q], 0
                t = tuple(t)
                if t in other:
                    return depth[side] + 1 + other[t]
                if t not in seen:
                    seen[t] = depth[side] + 1
                    nxt.append(t)
        frontiers[side] = nxt
        depth[side] += 1
    raise AssertionError(f"no path of at most {most} moves")


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    from pdbtool.tables.cache import TableCache

    return TableCache(tmp_path_factory.mktemp("cells64-cache"))


# --- boards and ranks -------------------------------------------------------------------------------------

def test_the_cell_limit_is_64():
    assert MAX_CELLS == 64
    for dims in ("8x8", "2x32", "4x16", "16x4", "5x12", "7x7"):
        assert Board.parse(dims).n <= 64
    for dims in ("9x8", "5x13", "2x33", "65x1"):
        with pytest.raises(BoardError):
            Board.parse(dims)


def test_cells_mask_covers_every_cell_up_to_64():
    for n in (1, 2, 31, 32, 33, 63, 64):
        assert int(cells_mask(n)) == (1 << n) - 1


def _python_rank(cells, n):
    """Lexicographic rank among the k-permutations of n cells, from the definition."""
    r, used = 0, set()
    for i, c in enumerate(cells):
        r = r * (n - i) + (c - sum(1 for u in used if u < c))
        used.add(c)
    return r


@settings(max_examples=300, deadline=None)
@given(st.integers(33, 64).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.integers(0, n - 1), min_size=1, max_size=8, unique=True))))
def test_ranks_round_trip_up_to_cell_63(case):
    n, cells = case
    k = len(cells)
    arr = np.array([cells], dtype=np.int64)
    r = rank_many(arr, n)
    assert int(r[0]) == _python_rank(cells, n) and 0 <= r[0] < perm(n, k)
    assert unrank_many(r, n, k).tolist() == [cells]


def test_first_and_last_ranks_on_64_cells():
    n, k = 64, 5
    last = np.array([perm(n, k) - 1, 0], dtype=np.int64)
    assert unrank_many(last, n, k).tolist() == [[63, 62, 61, 60, 59], [0, 1, 2, 3, 4]]
    pattern = TilePattern(Board(8, 8), (59, 60, 61, 62, 63))
    assert pattern.rank((63, 62, 61, 60, 59)) == perm(n, k) - 1
    assert pattern.blank_region((59, 60, 61, 62, 63), 0) == tuple(range(59))


# --- the builders against a plain search of the abstraction ---------------------------------------------

# (board, tiles): the free cells of a rank fill one two-bit word (at most 32, 32 exactly on 3x11 and 2x17)
# or more (33 and up: a rank's states then span two or three words)
BUILDS = [((3, 11), (16,)), ((2, 17), (1, 33)), ((2, 17), (3,)), ((6, 6), (1, 2)), ((6, 6), (14, 35)),
          ((8, 8), (62, 63)), ((8, 8), (1,)), ((8, 8), (27, 36)), ((2, 32), (1, 63)), ((3, 21), (5, 30))]


@pytest.mark.parametrize("blank", ["ignored", "minimized"])
@pytest.mark.parametrize("dims,tiles", BUILDS)
def test_builders_match_a_plain_search(dims, tiles, blank):
    board = Board(*dims)
    pattern = TilePattern(board, tiles)
    result = build_table(pattern, blank, threads=2)
    want = abstract_distances(board, tiles, blank)
    got = {cells: int(result.table[pattern.rank(cells)]) for cells in want}
    assert got == want
    assert result.unreachable == pattern.entries - len(want) == 0


@pytest.mark.parametrize("goal", ["region", "anywhere"])
def test_dynamic_group_distances_on_64_cells(goal):
    # the dynamic tables' distances (tiles and blank) against a plain Dijkstra, on a board whose cell mask
    # needs all 64 bits
    from oracle import tile_blank_distances

    from pdbtool.tables.pairs_triples import group_distances

    group_distances(Board(3, 3), (1, 2), goal)  # a small board first, as a run over several boards does
    board = Board(2, 32)
    tiles = (1, 33)  # the blank's cells include cell 63
    pattern, dist = group_distances(board, tiles, goal)
    home = pattern.goal_cells()
    blanks = (pattern.blank_region(home, board.goal[0]) if goal == "region"
              else tuple(c for c in range(board.n) if c not in home))
    want = tile_blank_distances(board, tiles, blanks)
    assert len(want) == int(np.count_nonzero(dist != 255))
    for (cells, blank), d in want.items():
        assert dist[pattern.rank(cells) * board.n + blank] == d


def test_threads_build_the_same_table():
    pattern = TilePattern(Board(8, 8), (9, 18, 27))
    for blank in ("ignored", "minimized"):
        one = build_table(pattern, blank, threads=1)
        two = build_table(pattern, blank, threads=2)
        assert np.array_equal(one.table, two.table) and one.layers == two.layers


# --- the search -----------------------------------------------------------------------------------------

def _pattern_sum(board: Board, groups, reflect: bool) -> PatternSum:
    patterns = [TilePattern(board, g) for g in groups]
    return PatternSum(patterns, [build_table(p, threads=2).table for p in patterns], reflect=reflect)


def _triples(board: Board) -> list[tuple[int, ...]]:
    """Every tile, in patterns of three consecutive tiles (a sum at least as strong as a third of Manhattan's
    and usually near it, so that the plain IDA* in Python stays small)."""
    tiles = list(range(1, board.n))
    return [tuple(tiles[i:i + 3]) for i in range(0, len(tiles), 3)]


SEARCHES = [((6, 6), 16, 1), ((7, 7), 14, 2), ((8, 8), 14, 3)]  # (board, walk length, seed)


@pytest.mark.slow
@pytest.mark.parametrize("dims,walk,seed", SEARCHES)
def test_ida_matches_the_reference_and_the_optimum(dims, walk, seed):
    """Manhattan, linear conflicts and a small pattern sum (with the reflection on these square boards):
    the kernel's length and node counts are those of a plain recursive IDA*, the length the optimum."""
    board = Board(*dims)
    state = random_walk(board, walk, seed)
    optimal = true_distance(board, state, walk)
    groups = _triples(board)
    for heuristic in (Manhattan(board), LinearConflict(board), _pattern_sum(board, groups, False),
                      _pattern_sum(board, groups, True)):
        solver = Solver(board, heuristic="manhattan")
        solver.heuristic = heuristic
        result = solver.solve(state)
        length, generated, expanded = reference_ida(board, heuristic.value, state)
        assert (result.length, result.nodes_generated, result.nodes_expanded) == (length, generated, expanded)
        assert length == optimal
        assert replay(board, state, result.solution) == board.goal_tiles


@pytest.mark.parametrize("heuristic", ["manhattan", "linear-conflict", "pdb"])
def test_threads_count_the_serial_nodes_on_8x8(cache, heuristic, tmp_path):
    board = Board(8, 8)
    kwargs = {"partition": [[1, 2, 8, 9], [3, 4, 10, 11]]} if heuristic == "pdb" else {}
    solver = Solver(board, heuristic=heuristic, cache=cache, **kwargs)
    state = random_walk(board, 22, 5)
    serial = solver.solve(state)
    whole = parallel_search(solver.heuristic, state, serial.h0, 2, serial_below=1 << 62)
    split = parallel_search(solver.heuristic, state, serial.h0, 2, frontier_per_thread=8, serial_below=0)
    assert (serial.nodes_generated, serial.nodes_expanded) == (whole.generated, whole.expanded)
    assert whole.finished == split.finished and len(split.moves) == serial.length
    threaded = solver.solve(state, threads=2)
    assert threaded.length == serial.length


@pytest.mark.parametrize("blank,encodings", [("minimized", ["nibble", "min-nibble", "sparse"]),
                                              ("ignored", ["mod3", "parity"])])
def test_encoded_tables_search_as_the_byte_tables_on_8x8(cache, blank, encodings):
    """Lossless encodings of 64-cell tables: the byte tables' h at every node, so their node counts."""
    board = Board(8, 8)
    partition = [[1, 2, 3], [8, 16], [4, 5]]
    state = random_walk(board, 18, 9)
    byte = Solver(board, partition=partition, cache=cache, blank=blank).solve(state)
    for encoding in encodings:
        group = 2 if encoding == "min-nibble" else None
        got = Solver(board, partition=partition, cache=cache, blank=blank, encoding=encoding,
                     group=group).solve(state)
        if group:  # groups keep their least value: a lower bound, so as many nodes or more
            assert got.length == byte.length and got.nodes_generated >= byte.nodes_generated
        else:
            assert (got.length, got.nodes_generated) == (byte.length, byte.nodes_generated), encoding


def test_move_pruning_keeps_the_length_on_6x6():
    board = Board(6, 6)
    state = random_walk(board, 24, 8)
    plain = Solver(board, heuristic="manhattan").solve(state)
    fsm = Solver(board, heuristic="manhattan", pruning="fsm").solve(state)
    assert fsm.length == plain.length == true_distance(board, state, 24)
    assert fsm.nodes_generated <= plain.nodes_generated


# --- the commands ---------------------------------------------------------------------------------------

def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.mark.parametrize("dims", ["6x6", "8x8"])
def test_commands_on_large_boards(tmp_path, dims):
    cache_dir = tmp_path / "cache"
    walks = tmp_path / "walks.txt"
    res = invoke("random", "--board", dims, "--walk", "12", "-n", "2", "--seed", "4", "-o", walks)
    assert res.exit_code == 0, res.output
    partition = tmp_path / "part.txt"
    partition.write_text(f"board {dims}\n1 2 3\n4 5\n")
    res = invoke("build", "--partition", partition, "--cache-dir", cache_dir, "--threads", "2", "--json")
    assert res.exit_code == 0, res.output
    built = [json.loads(line) for line in res.output.splitlines()]
    assert [b["entries"] for b in built] == [perm(Board.parse(dims).n, 3), perm(Board.parse(dims).n, 2)]
    res = invoke("verify", "--partition", partition, "--cache-dir", cache_dir)
    assert res.exit_code == 0, res.output
    res = invoke("inspect", built[0]["file"])
    assert res.exit_code == 0 and dims in res.output, res.output
    for args in (["--heuristic", "manhattan"], ["--heuristic", "linear-conflict"],
                 ["--partition", partition, "--cache-dir", cache_dir]):
        res = invoke("solve", walks, "--board", dims, "--format", "json", *args)
        assert res.exit_code == 0, res.output
        lines = [json.loads(line) for line in res.output.splitlines() if line.startswith("{")]
        results = [r for r in lines if "length" in r]
        assert len(results) == 2 and all(r["length"] is not None and r["length"] <= 12 for r in results), lines
    res = invoke("sample", "--board", dims, "--partition", partition, "--cache-dir", cache_dir, "-n", "20000",
                 "--threads", "2", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["states"] == 20000
    res = invoke("predict", "--board", dims, "--heuristic", "manhattan", "--depth", "60", "-n", "20000")
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("args", [
    ["solve", "-", "--board", "9x8", "--heuristic", "manhattan"],
    ["build", "--pattern", "1,2", "--board", "13x5"],
    ["random", "--board", "33x2"],
    ["sample", "--board", "5x13", "--heuristic", "manhattan", "-n", "10"],
    ["predict", "--board", "11x6", "--heuristic", "manhattan", "--depth", "80"],
])
def test_boards_past_64_cells_get_one_line(args):
    res = invoke(*args)
    assert res.exit_code == 2
    assert "at most 64" in res.output and res.output.count("\n") == 1 and "Traceback" not in res.output
