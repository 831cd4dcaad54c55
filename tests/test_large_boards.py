"""Issue 6: threads searching one instance, tables shared through board symmetries, rectangular boards,
a 24-puzzle smoke check and the progress line.  Nothing here builds a table bigger than a 3x4 6-tile one."""

from __future__ import annotations

import itertools
import random
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import EXAMPLES, korf100  # noqa: E402
from oracle import true_distances  # noqa: E402

from pdbtool.tables.build import build_table  # noqa: E402
from pdbtool.puzzle.board import Board  # noqa: E402
from pdbtool.heuristics.pattern_sum import PatternSum  # noqa: E402
from pdbtool.search.parallel import parallel_search  # noqa: E402
from pdbtool.tables.partitions import load_partition  # noqa: E402
from pdbtool.tables.ranking import TilePattern  # noqa: E402
from pdbtool.search.solver import Solver, SolverError, replay  # noqa: E402
from pdbtool.tables.sharing import (board_symmetries, find_symmetry, maps_onto, materialize,  # noqa: E402
                              share_tables)

KORF = korf100()


def random_walk(board: Board, steps: int, seed: int) -> tuple[int, ...]:
    """A state ``steps`` random moves (never undoing the last) from the goal."""
    rng = random.Random(seed)
    nb = board.neighbours()
    tiles = list(board.goal_tiles)
    blank, prev = tiles.index(0), -1
    for _ in range(steps):
        q = rng.choice([int(c) for c in nb[blank] if c >= 0 and c != prev])
        tiles[blank], tiles[q] = tiles[q], 0
        prev, blank = blank, q
    return tuple(tiles)


def random_state(board: Board, rng: random.Random) -> tuple[int, ...]:
    tiles = list(range(board.n))
    rng.shuffle(tiles)
    if not board.is_solvable(tiles):
        i, j = [c for c in range(board.n) if tiles[c] != 0][:2]
        tiles[i], tiles[j] = tiles[j], tiles[i]
    return tuple(tiles)


def blocks(board: Board, size: int) -> list[list[int]]:
    """A partition of the tiles into consecutive groups of at most ``size``."""
    tiles = list(range(1, board.n))
    return [tiles[i:i + size] for i in range(0, len(tiles), size)]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    from pdbtool.tables.cache import TableCache

    return TableCache(tmp_path_factory.mktemp("large-boards-cache"))


# --- threads: the same optimal length as the serial search ------------------------------------------------

@pytest.mark.parametrize("heuristic", ["pdb", "ddb", "max"])
@pytest.mark.parametrize("ident", [97, 93, 42, 47, 9])
def test_threads_find_the_serial_length_on_15_puzzles(cache, heuristic, ident):
    """With any heuristic (the dynamic kernel gives each subtree its own conflict graph)."""
    solver = Solver(Board(4, 4), heuristic=heuristic, partition="15-5-5-5", cache=cache)
    state, optimal = KORF[ident]
    serial = solver.solve(state)
    threaded = solver.solve(state, threads=2)
    assert serial.length == threaded.length == optimal
    assert replay(solver.board, state, threaded.solution) == solver.board.goal_tiles
    # the subtree path itself, forced on every iteration with small frontiers
    for frontier in (1, 3):
        out = parallel_search(solver.heuristic, state, serial.h0, 2,
                              frontier_per_thread=frontier, serial_below=0)
        assert len(out.moves) == optimal and out.iterations == serial.iterations
        assert max(out.subtrees) > 1
        assert replay(solver.board, state, _tiles(solver.board, state, out.moves)) == solver.board.goal_tiles


@pytest.mark.parametrize("heuristic", ["pdb", "ddb", "max"])
def test_iterations_before_the_last_count_like_the_serial_search(cache, heuristic):
    """Every iteration that runs to its end generates exactly the serial iteration's nodes."""
    solver = Solver(Board(4, 4), heuristic=heuristic, partition="15-5-5-5", reflect=True, cache=cache)
    state, optimal = KORF[1]
    h0 = solver.h(state)
    whole = parallel_search(solver.heuristic, state, h0, 2,
                            serial_below=1 << 62)  # every iteration one kernel from the root
    split = parallel_search(solver.heuristic, state, h0, 2,
                            frontier_per_thread=16, serial_below=0)
    assert len(whole.moves) == len(split.moves) == optimal
    assert whole.finished == split.finished and len(whole.finished) == whole.iterations - 1
    # and the root-only run is the ordinary serial search, node for node
    serial = solver.solve(state)
    assert (serial.nodes_generated, serial.nodes_expanded) == (whole.generated, whole.expanded)


@pytest.mark.parametrize("heuristic", ["manhattan", "linear-conflict"])
def test_threads_on_random_3x4_and_2x5_states(heuristic):
    rng = random.Random(6)
    for board in (Board(3, 4), Board(5, 2)):
        solver = Solver(board, heuristic=heuristic)
        for _ in range(4):
            state = random_state(board, rng)
            serial = solver.solve(state)
            out = parallel_search(solver.heuristic, state, serial.h0, 2,
                                  frontier_per_thread=4, serial_below=0)
            assert len(out.moves) == serial.length
            assert replay(board, state, [int(t) for t in _tiles(board, state, out.moves)]) == board.goal_tiles


@pytest.mark.parametrize("heuristic", ["ddb", "max"])
def test_ddb_and_max_threads_on_random_3x4_states(cache, heuristic):
    board = Board.parse("3x4")
    solver = Solver(board, heuristic=heuristic, partition=[[1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11]], cache=cache)
    rng = random.Random(7)
    for _ in range(4):
        state = random_state(board, rng)
        serial = solver.solve(state)
        whole = parallel_search(solver.heuristic, state, serial.h0, 2,
                                serial_below=1 << 62)
        split = parallel_search(solver.heuristic, state, serial.h0, 2,
                                frontier_per_thread=4, serial_below=0)
        assert len(split.moves) == len(whole.moves) == serial.length
        assert whole.finished == split.finished and len(split.finished) == serial.iterations - 1
        assert replay(board, state, _tiles(board, state, split.moves)) == board.goal_tiles


def _tiles(board, state, moves):
    from pdbtool.search.solver import _tiles_moved

    return _tiles_moved(state, moves, board.neighbours())


@pytest.mark.parametrize("heuristic, ident, budget", [("manhattan", 1, 40_000_000), ("ddb", 3, 1_500_000)])
def test_kernels_release_the_gil(cache, heuristic, ident, budget):
    """A short search on a second thread finishes while a long kernel call is still running on the first
    (were the GIL held, it could not even start before the long call returned)."""
    import threading
    import time

    from pdbtool.search.driver import Search

    board = Board(4, 4)
    solver = Solver(board, heuristic=heuristic, cache=cache)
    solver.warm_up()
    short_solver = Solver(board, heuristic="manhattan")
    short_solver.warm_up()
    search = Search(solver.heuristic, KORF[ident][0])
    started = threading.Event()
    done = {}

    def long_call():
        started.set()  # the next thing this thread does is enter the kernel, holding the GIL until it does
        search.step(budget)
        done["long"] = time.perf_counter()

    worker = threading.Thread(target=long_call)
    worker.start()
    started.wait()
    short = short_solver.solve(random_walk(board, 20, 0))
    done["short"] = time.perf_counter()
    worker.join()
    # a kernel that held the GIL would have run to its end before the short search could start
    assert short.solved and done["short"] < done["long"]


def test_search_threads_must_be_positive():
    with pytest.raises(SolverError):
        Solver(Board(3, 3), heuristic="manhattan", search_threads=0)
    solver = Solver(Board(3, 3), heuristic="manhattan", search_threads=2)
    state = random_walk(Board(3, 3), 30, 1)
    assert solver.solve(state).length == solver.solve(state, threads=1).length


def test_threads_respect_the_node_limit():
    board = Board(4, 4)
    solver = Solver(board, heuristic="manhattan")
    state, _ = KORF[1]
    r = solver.solve(state, node_limit=3_000_000, threads=2)
    assert not r.solved and r.timed_out and r.length is None
    # subtrees smaller than a chunk: the limit is checked after each subtree too, so at most a chunk a thread over
    chunk = 1 << 16
    out = parallel_search(solver.heuristic, state, solver.h(state), 2,
                          node_limit=1_000_000, chunk=chunk, serial_below=0)
    assert out.timed_out and out.moves is None
    assert 1_000_000 <= out.generated <= 1_000_000 + 2 * chunk


# --- tables shared through board symmetries ---------------------------------------------------------------

def test_board_symmetries_keep_adjacency():
    for board in (Board(4, 4), Board(3, 4), Board(5, 2)):
        syms = board_symmetries(board)
        assert len(syms) == (8 if board.width == board.height else 4)
        assert len({s.cell for s in syms}) == len(syms)
        edges = {(int(c), int(q)) for c in range(board.n) for q in board.neighbours()[c] if q >= 0}
        for s in syms:
            assert {(s.cell[a], s.cell[b]) for a, b in edges} == edges


@pytest.mark.parametrize("blank", ["minimized", "ignored"])
def test_every_sharing_on_3x3_equals_the_built_table(blank):
    """All 3-tile patterns of the 8-puzzle, every pair and symmetry: whenever the rule allows sharing, the
    table read through the symmetry equals the directly built one on every placement; and the region
    condition of blank-minimized tables is needed (some pairs whose goal cells match differ)."""
    board = Board(3, 3)
    patterns = [TilePattern(board, t) for t in itertools.combinations(range(1, 9), 3)]
    tables = {p: build_table(p, blank).table for p in patterns}
    shared = refused_differ = 0
    for a, b in itertools.permutations(patterns, 2):
        for g in board_symmetries(board)[1:]:
            goal_cells_match = {g.cell[int(c)] for c in a.goal_cells()} == {int(c) for c in b.goal_cells()}
            if not goal_cells_match:
                continue
            from pdbtool.tables.sharing import SharedTable

            looked_up = materialize(SharedTable(a, b, g), tables[b])
            if maps_onto(g, a, b, blank):
                shared += 1
                assert np.array_equal(looked_up, tables[a]), (a, b, g.name)
            else:
                assert blank == "minimized"
                refused_differ += not np.array_equal(looked_up, tables[a])
    assert shared > 50
    if blank == "minimized":
        assert refused_differ > 0


def test_rotation_and_quarter_turn_on_4x4():
    board = Board(4, 4)
    top_right, bottom_left = TilePattern(board, (2, 3, 6, 7)), TilePattern(board, (8, 9, 12, 13))
    top, right = TilePattern(board, (1, 2, 3)), TilePattern(board, (7, 11, 15))
    corner = TilePattern(board, (1, 4, 5))
    g = find_symmetry(bottom_left, top_right, "minimized")
    assert g is not None and g.name == "180-degree rotation"
    q = find_symmetry(right, top, "minimized")
    assert q is not None and q.name.startswith("quarter turn")
    for a, b in ((bottom_left, top_right), (right, top)):
        s = share_tables([b, a], "minimized")[1]
        assert s is not None and s.source == b
        assert np.array_equal(materialize(s, build_table(b).table), build_table(a).table)
    # {1,4,5} walls the goal blank into cell 0; its rotation {10,11,14} would wall it out of cell 15
    corner3 = TilePattern(board, (10, 11, 14))
    assert find_symmetry(corner3, corner, "minimized") is None
    assert find_symmetry(corner3, corner, "ignored") is not None


def test_24_puzzle_partition_needs_two_tables():
    part = load_partition("24-6-6-6-6")
    plan = share_tables(part.patterns, "minimized")
    assert [s is None for s in plan] == [True, True, False, False]
    assert {str(s.source) for s in plan if s} == {"3,4,8,9,13,14"}
    assert plan[2].symmetry.name == "180-degree rotation"


def test_the_7_7_7_3_example_covers_the_board_with_its_transposed_pair_sharing_a_table():
    part = load_partition(str(EXAMPLES / "24-7-7-7-3.txt"))
    assert part.board.dims == "5x5" and sorted(part.tiles) == list(range(1, 25))
    plan = share_tables(part.patterns, "minimized")
    assert [s is None for s in plan] == [True, False, True, True]
    assert str(plan[1].source) == "1,2,3,4,8,9,14" and plan[1].symmetry.name == "main-diagonal reflection"


def test_shared_tables_search_exactly_like_direct_ones(cache, tmp_path):
    board = Board(4, 4)
    partition = [(2, 3, 6, 7), (8, 9, 12, 13), (1, 4, 5), (10, 11, 14, 15)]
    path = tmp_path / "shared.txt"
    path.write_text("board 4x4\n" + "\n".join(" ".join(map(str, p)) for p in partition) + "\n")
    solver = Solver(board, partition=str(path), cache=cache)
    shared = solver.heuristic.shared
    # {8,9,12,13} (180-degree rotation) and {10,11,14,15} (top-bottom mirror) read {2,3,6,7}'s table
    assert [s is None for s in shared] == [True, False, True, False]
    assert shared[3].symmetry.name == "top-bottom mirror"
    patterns = solver.heuristic.patterns
    direct = PatternSum(patterns, [cache.get(p).values for p in patterns], reflect=True)
    rng = random.Random(3)
    for _ in range(300):
        s = random_state(board, rng)
        assert solver.heuristic.parts(s) == direct.parts(s)
    plain = Solver(board, partition=str(path), cache=cache)
    plain.heuristic = direct
    for seed in range(4):
        s = random_walk(board, 40, seed)
        a, b = solver.solve(s), plain.solve(s)
        assert (a.length, a.nodes_generated, a.nodes_expanded) == (b.length, b.nodes_generated, b.nodes_expanded)


def test_build_partition_skips_the_shared_table(tmp_path):
    from pdbtool.cli.main import cli as main

    path = tmp_path / "p.txt"
    path.write_text("board 4x4\n2 3 6 7\n8 9 12 13\n")
    r = CliRunner().invoke(main, ["build", "--partition", str(path), "--cache-dir", str(tmp_path / "c")])
    assert r.exit_code == 0, r.output
    assert "not built" in r.output and "180-degree rotation" in r.output
    assert len(list((tmp_path / "c").glob("*.pdb"))) == 1
    # inspect and verify of the partition accept the table that was not built
    for command in ("inspect", "verify"):
        r = CliRunner().invoke(main, [command, "--partition", str(path), "--cache-dir", str(tmp_path / "c")])
        assert r.exit_code == 0, r.output
        assert "not built" in r.output and "8,9,12,13" in r.output


# --- rectangular boards -------------------------------------------------------------------------------------

def test_2x5_against_a_full_bfs(cache):
    dist = true_distances(5, 2)
    board = Board(5, 2)
    rng = random.Random(25)
    states = rng.sample(list(dist), 12) + [max(dist, key=dist.get)]  # BFS order: deterministic
    pdb = Solver(board, partition=[[1, 2, 3, 4], [5, 6, 7, 8, 9]], cache=cache)
    assert not pdb.reflect  # not a square: no diagonal reflection
    md = Solver(board, heuristic="manhattan")
    for i, s in enumerate(states):
        assert pdb.h(s) <= dist[s]
        runs = [pdb.solve(s), pdb.solve(s, threads=2)]
        if i < 3:
            runs.append(md.solve(s))
        for r in runs:
            assert r.length == dist[s]
            assert replay(board, s, r.solution) == board.goal_tiles


@pytest.mark.parametrize("dims", ["3x4", "4x3"])
def test_3x4_against_serial_manhattan(cache, dims):
    board = Board.parse(dims)
    pdb = Solver(board, partition=[[1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11]], cache=cache)
    md = Solver(board, heuristic="manhattan")
    rng = random.Random(34)
    for _ in range(5):
        s = random_state(board, rng)
        want = md.solve(s).length
        assert pdb.solve(s).length == want
        assert pdb.solve(s, threads=2).length == want


@pytest.mark.parametrize("dims", ["2x6", "4x5", "3x7", "4x8"])
def test_rectangular_boards_build_and_solve(cache, dims):
    board = Board.parse(dims)
    pdb = Solver(board, partition=blocks(board, 3), cache=cache)
    md = Solver(board, heuristic="manhattan")
    for seed in range(2):
        s = random_walk(board, 36, seed)
        want = md.solve(s).length
        r = pdb.solve(s, threads=2)
        assert r.length == want and replay(board, s, r.solution) == board.goal_tiles


def test_partition_files_for_4x5_and_4x8_cover_their_boards():
    for name, dims in (("19-6-6-5-2", "4x5"), ("31-5-5-5-5-5-4-2", "4x8")):
        part = load_partition(name)
        assert part.board.dims == dims and part.tiles == tuple(range(1, part.board.n))


# --- the 24-puzzle, a few dozen moves from the goal -------------------------------------------------------

def test_24_puzzle_smoke(cache):
    board = Board(5, 5)
    s = random_walk(board, 44, 24)
    md = Solver(board, heuristic="manhattan", pruning="parent").solve(s)
    small = Solver(board, partition=blocks(board, 3), reflect=True, cache=cache, fsm_depth=12)
    assert small.reflect
    r = small.solve(s, threads=2)
    assert r.length == md.length >= 20
    assert replay(board, s, r.solution) == board.goal_tiles


# --- the progress line ----------------------------------------------------------------------------------------

def test_progress_line(capsys):
    from types import SimpleNamespace

    from pdbtool.cli.solve import ProgressLine

    line = ProgressLine(None, every=0.0)
    inst = SimpleNamespace(id="7")
    line(inst, 91, 0, 0)
    line(inst, 93, 5_000_000, 2_000_000)
    err = capsys.readouterr().err
    assert "7: bound 93, 5,000,000 nodes generated" in err and "M nodes/s" in err and " s" in err


def test_solve_command_with_threads(tmp_path):
    from pdbtool.cli.main import cli as main

    board = Board(3, 4)
    states = [random_walk(board, 40, seed) for seed in range(3)]
    text = "".join(" ".join(map(str, s)) + "\n" for s in states)
    serial = CliRunner().invoke(main, ["solve", "-", "--board", "3x4", "--heuristic", "manhattan",
                                       "--format", "csv"], input=text)
    threaded = CliRunner().invoke(main, ["solve", "-", "--board", "3x4", "--heuristic", "manhattan",
                                         "--threads", "2", "--format", "csv"], input=text)
    assert serial.exit_code == threaded.exit_code == 0, threaded.output
    lengths = [[row.split(",")[3] for row in r.stdout.splitlines()[1:]] for r in (serial, threaded)]
    assert lengths[0] == lengths[1] and len(lengths[0]) == 3
    ddb = CliRunner().invoke(main, ["solve", "-", "--board", "3x4", "--heuristic", "ddb", "--threads", "2",
                                    "--cache-dir", str(tmp_path), "--format", "csv"], input=text)
    assert ddb.exit_code == 0, ddb.output
    assert [row.split(",")[3] for row in ddb.stdout.splitlines()[1:]] == lengths[0]
