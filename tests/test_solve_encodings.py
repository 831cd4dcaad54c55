"""IDA* over compactly encoded tables (pdbtool.heuristics.encoded) against the byte kernel on the same tables:
identical h0, node counts (generated and expanded), iterations and solutions for the lossless encodings,
the exact values carried down the stack (direct and reflected rows) equal to the byte tables' on the
solution path, optimal lengths for the lossy min-nibble; and the solve command's options and errors."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from pdbtool.search.driver import FOUND, Search
from pdbtool.puzzle.board import Board
from pdbtool.tables.cache import TableCache
from pdbtool.cli.main import cli
from pdbtool.tables.encodings import ENCODINGS
from pdbtool.errors import PdbtoolError
from pdbtool.heuristics.pattern_sum import PatternSum
from pdbtool.heuristics.encoded import EncodedPatternSum
from pdbtool.tables.partitions import load_partition
from pdbtool.search.solver import Solver, replay

from test_ida import KORF

BOARD = Board(4, 4)
# instances these partitions solve with few nodes, even with blank-ignored tables
CHEAP = {"15-5-5-5": (97, 42, 47, 9, 79), "15-6-6-3": (97, 42, 9)}
LOSSLESS = {"ignored": ("nibble", "mod3", "parity", "sparse"), "minimized": ("nibble", "sparse")}


@pytest.fixture
def cache(shared_cache_dir):
    """The run's shared cache (tests/conftest.py): these tests only read the tables."""
    return TableCache(shared_cache_dir)


def _outcome(result):
    return (result.length, result.solution, result.h0, result.nodes_generated, result.nodes_expanded,
            result.iterations)


@pytest.mark.parametrize("partition,blank", [("15-5-5-5", "ignored"), ("15-5-5-5", "minimized"),
                                             ("15-6-6-3", "ignored")])
def test_lossless_encodings_search_exactly_like_byte(cache, partition, blank):
    for reflect in (False, True):
        byte = Solver(BOARD, partition=partition, reflect=reflect, cache=cache, blank=blank)
        assert type(byte.heuristic) is PatternSum        # the byte encoding keeps the byte kernel
        expected = {i: _outcome(byte.solve(KORF[i][0])) for i in CHEAP[partition]}
        for i, (length, solution, *_) in expected.items():
            assert length == KORF[i][1]
            assert replay(BOARD, KORF[i][0], solution) == BOARD.goal_tiles
        for encoding in LOSSLESS[blank]:
            solver = Solver(BOARD, partition=partition, reflect=reflect, cache=cache, blank=blank, encoding=encoding)
            assert isinstance(solver.heuristic, EncodedPatternSum)
            if encoding in ("nibble", "sparse"):   # exact only while no excess saturates: make sure of it
                for p in load_partition(partition, BOARD).patterns:
                    table = cache.get(p, blank, encoding=encoding)
                    assert table.header["conversion"]["saturated"] == 0
            for i in CHEAP[partition]:
                assert _outcome(solver.solve(KORF[i][0])) == expected[i], (encoding, reflect, i)


def test_reflection_changes_the_search_so_its_lookups_are_exercised(cache):
    state = KORF[42][0]
    counts = {}
    for reflect in (False, True):
        for encoding in ("byte", "mod3", "parity"):
            r = Solver(BOARD, partition="15-5-5-5", reflect=reflect, cache=cache, blank="ignored",
                       encoding=encoding).solve(state)
            counts.setdefault(reflect, set()).add(r.nodes_generated)
    assert len(counts[False]) == len(counts[True]) == 1
    assert counts[False] != counts[True]


def _run_kernel(heuristic, state):
    """Search with ``heuristic`` to the goal; return (moves, the per-level table values hv)."""
    search = Search(heuristic, state, capacity=128)
    assert search.step(1 << 40) == FOUND
    return search.moves(), search.state.hv


@pytest.mark.parametrize("encoding", ["mod3", "parity", "nibble", "sparse"])
def test_values_carried_down_the_stack_are_the_byte_values(cache, encoding):
    """CHILD-H (mod3/parity) and the carried Manhattan (nibble/sparse) on every level of the solution path,
    for the direct and the reflected rows, against the byte tables evaluated on the path's states."""
    patterns = load_partition("15-6-6-3", BOARD).patterns
    byte = PatternSum(patterns, [cache.get(p, "ignored").values for p in patterns], reflect=True)
    enc = EncodedPatternSum(patterns, [cache.get(p, "ignored", encoding=encoding).values for p in patterns],
                            encoding, reflect=True)
    state = KORF[9][0]
    moves, hv = _run_kernel(enc, state)
    nb = BOARD.neighbours()
    tiles = list(state)
    npat = len(patterns)
    for d in range(len(moves) + 1):
        direct, mirrored = byte.parts(tiles)
        assert list(hv[d, :npat]) == direct and list(hv[d, npat:2 * npat]) == mirrored, d
        if d < len(moves):
            blank = tiles.index(0)
            q = int(nb[blank, moves[d]])
            tiles[blank], tiles[q] = tiles[q], 0
    assert tuple(tiles) == BOARD.goal_tiles


def test_encoded_kernel_with_byte_tables_counts_like_the_byte_kernel(cache):
    patterns = load_partition("15-5-5-5", BOARD).patterns
    tables = [cache.get(p, "minimized").values for p in patterns]
    for i in CHEAP["15-5-5-5"][:3]:
        a_moves, _ = _run_kernel(PatternSum(patterns, tables, reflect=True), KORF[i][0])
        b_moves, _ = _run_kernel(EncodedPatternSum(patterns, tables, "byte", reflect=True), KORF[i][0])
        assert a_moves == b_moves and len(a_moves) == KORF[i][1]


@pytest.mark.parametrize("blank,group", [("minimized", 2), ("minimized", 4), ("ignored", 4)])
def test_min_nibble_finds_optimal_lengths(cache, blank, group):
    byte = Solver(BOARD, partition="15-5-5-5", cache=cache, blank=blank)
    lossy = Solver(BOARD, partition="15-5-5-5", cache=cache, blank=blank, encoding="min-nibble", group=group)
    weaker = 0
    for i in CHEAP["15-5-5-5"]:
        state, optimal = KORF[i]
        r = lossy.solve(state)
        assert r.length == optimal and replay(BOARD, state, r.solution) == BOARD.goal_tiles
        assert r.h0 <= byte.h(state)
        weaker += r.nodes_generated > byte.solve(state).nodes_generated
    assert weaker > 0        # a lossy table that never costs nodes would mean it is not read


def test_solver_refuses_bad_combinations(cache):
    with pytest.raises(PdbtoolError, match="--blank ignored"):
        Solver(BOARD, partition="15-5-5-5", cache=cache, encoding="mod3")
    with pytest.raises(PdbtoolError, match="group"):
        Solver(BOARD, partition="15-5-5-5", cache=cache, encoding="min-nibble")
    with pytest.raises(PdbtoolError, match="pdb"):
        Solver(BOARD, heuristic="manhattan", encoding="nibble")


def test_solve_command_encodings(cache, tmp_path):
    lines = [f"{i} " + " ".join(map(str, KORF[i][0])) + f"  # optimal {KORF[i][1]}" for i in CHEAP["15-5-5-5"][:2]]
    path = tmp_path / "two.txt"
    path.write_text("\n".join(lines) + "\n")
    base = ["solve", str(path), "--partition", "15-5-5-5", "--cache-dir", str(cache.dir), "--format", "csv"]
    runner = CliRunner()
    byte = runner.invoke(cli, base + ["--blank", "ignored"])
    parity = runner.invoke(cli, base + ["--blank", "ignored", "--encoding", "parity"])
    assert byte.exit_code == 0 and parity.exit_code == 0, byte.output + parity.output

    def nodes(out):
        rows = [line.split(",") for line in out.strip().splitlines()]
        col = rows[0].index("nodes_generated")
        return [row[col] for row in rows[1:]]

    assert nodes(byte.stdout) == nodes(parity.stdout) and len(nodes(byte.stdout)) == 2
    bad = runner.invoke(cli, base + ["--encoding", "mod3"])
    assert bad.exit_code != 0 and "Traceback" not in bad.output
    assert "mod3 needs" in bad.output and "--blank ignored" in bad.output
    assert len([line for line in bad.output.splitlines() if line.strip()]) == 1
    ddb = runner.invoke(cli, ["solve", str(path), "--heuristic", "manhattan", "--encoding", "nibble"])
    assert ddb.exit_code != 0 and "pdb only" in ddb.output


def test_command_choices_are_the_encodings():
    from pdbtool.cli.solve import command

    choice = next(p for p in command.params if p.name == "encoding").type.choices
    assert tuple(choice) == ENCODINGS


def test_threads_search_encoded_tables(cache):
    """The parallel search (subtrees on threads, frontier h by EXACT) works with mod3 and parity tables."""
    from pdbtool.search.parallel import parallel_search

    state, optimal = KORF[42]
    for encoding in ("mod3", "parity"):
        solver = Solver(BOARD, partition="15-5-5-5", cache=cache, blank="ignored", encoding=encoding)
        serial = solver.solve(state)
        out = parallel_search(solver.heuristic, state, serial.h0, 2,
                              frontier_per_thread=3, serial_below=0)
        assert len(out.moves) == optimal and out.iterations == serial.iterations
        assert max(out.subtrees) > 1
        assert solver.solve(state, threads=2).length == optimal
