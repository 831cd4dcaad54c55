"""Zero-aware tables (a distance per placement and blank region) and catalogues (the max over several
additive partitions), against exact oracles: a 0-1 BFS of the abstraction, a full BFS of the 8-puzzle,
and optimal lengths of random 3x4 and 4x4 states and of Korf's 15-puzzles."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from itertools import combinations
from math import comb
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import examples, korf100  # noqa: E402
from oracle import tile_blank_distances, true_distances  # noqa: E402

from pdbtool.puzzle.board import Board  # noqa: E402
from pdbtool.search.solver import Solver, SolverError  # noqa: E402
from pdbtool.tables.build import build_table  # noqa: E402
from pdbtool.tables.cache import TableCache  # noqa: E402
from pdbtool.tables.partitions import (Catalogue, PartitionError, builtin_names,  # noqa: E402
                                       load_partition, parse_catalogue)
from pdbtool.tables.ranking import TilePattern  # noqa: E402
from pdbtool.tables.zero_aware import (check_values, colex_chunks, layout, layout_of,  # noqa: E402
                                      occupied_rank)

REPO = Path(__file__).resolve().parents[1]
KORF = korf100()  # id -> (tiles, optimal length)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return TableCache(tmp_path_factory.mktemp("zero-aware-cache"))


@pytest.fixture(scope="module")
def truth_3x3():
    return true_distances(3, 3)


# --- the layout ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("w,h,k", [(3, 3, 4), (3, 4, 5), (4, 3, 3), (2, 4, 3)])
def test_layout_numbers_maps_in_colex_order_and_regions_by_lowest_cell(w, h, k):
    board = Board(w, h)
    lay = layout(w, h, k)
    pattern = TilePattern(board, tuple(range(1, k + 1)))
    n = board.n
    total = 0
    maps = sorted(combinations(range(n), k), key=lambda cells: sum(1 << c for c in cells))
    assert len(maps) == lay.maps
    for mr, occupied in enumerate(maps):
        regions = sorted({frozenset(pattern.blank_region(occupied, c)) for c in range(n) if c not in occupied},
                         key=min)
        assert lay.base[mr] == total
        for c in range(n):
            want = 255 if c in occupied else next(i for i, r in enumerate(regions) if c in r)
            assert lay.region[mr * n + c] == want
        total += len(regions) * lay.kfact
    assert lay.entries == total


def test_layout_indices_are_a_bijection_onto_the_table():
    board = Board(3, 3)
    pattern = TilePattern(board, (2, 5, 7))
    lay = layout_of(pattern)
    seen = set()
    for r in range(pattern.entries):
        cells = pattern.unrank(r)
        for c in range(board.n):
            if c not in cells:
                seen.add((lay.index(cells, c), frozenset(pattern.blank_region(cells, c)), cells))
    indices = {i for i, _, _ in seen}
    assert indices == set(range(lay.entries))
    assert len(indices) == len(seen)  # one index per (placement, region)


# --- the builder ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("w,h,tiles", [(3, 3, (1, 2, 3)), (3, 3, (2, 4, 6, 8)), (3, 3, (1, 5, 6, 8)),
                                       (2, 4, (1, 2, 3)), (3, 4, (1, 2, 3, 4)), (4, 3, (5, 6, 7)),
                                       (5, 5, (1, 2, 5)), (3, 7, (20, 19, 1)),
                                       (8, 8, (62, 63)), (2, 32, (1, 63))])  # 64 cells: a full 64-bit mask
def test_builder_matches_a_01_bfs_of_each_blank_region(w, h, tiles):
    board = Board(w, h)
    pattern = TilePattern(board, tiles)
    result = build_table(pattern, "zero-aware")
    lay = layout_of(pattern)
    assert result.table.shape[0] == lay.entries
    # a Dijkstra over the tiles and the blank, written apart from the builders (cells in ascending tile order)
    expected = tile_blank_distances(board, tuple(sorted(tiles)), (board.goal[0],))
    seen = set()
    for (cells, blank), d in expected.items():  # cells in ascending tile order, as the pattern ranks them
        i = lay.index(cells, blank)
        seen.add(i)
        assert result.table[i] == d
    assert result.unreachable == lay.entries - len(seen)
    assert sum(result.layers) == len(seen)
    minimized = build_table(pattern, "minimized").table
    for r in range(0, pattern.entries, 7):
        cells = pattern.unrank(r)
        values = [result.table[lay.index(cells, c)] for c in range(board.n) if c not in cells]
        assert min(values) == minimized[r]


def test_all_tiles_of_the_8_puzzle_give_the_true_distances(truth_3x3):
    board = Board(3, 3)
    pattern = TilePattern(board, tuple(range(1, 9)))
    table = build_table(pattern, "zero-aware").table
    lay = layout_of(pattern)
    for state, d in truth_3x3.items():
        assert table[lay.index(pattern.placement_of(state), state.index(0))] == d


PARALLEL_CHECK = textwrap.dedent("""
    import json, sys
    from pdbtool.tables.build import build_table
    from pdbtool.puzzle.board import Board
    from pdbtool.tables.ranking import TilePattern
    out = []
    for w, h, tiles in json.loads(sys.argv[1]):
        pattern = TilePattern(Board(w, h), tuple(tiles))
        one = build_table(pattern, "zero-aware", threads=1)
        many = build_table(pattern, "zero-aware", threads=4)
        out.append(one.table.tobytes() == many.table.tobytes() and one.layers == many.layers)
    print(json.dumps(out))
""")


def test_parallel_zero_aware_build_equals_single_thread_build():
    boards = [(4, 4, (1, 2, 4, 5, 8)), (3, 4, (1, 2, 3, 4, 5, 6))]
    env = dict(os.environ, NUMBA_NUM_THREADS="4")
    proc = subprocess.run([sys.executable, "-c", PARALLEL_CHECK, json.dumps(boards)], capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == [True, True]


def test_value_check_passes_built_tables_and_catches_a_changed_entry():
    pattern = TilePattern(Board(3, 4), (1, 2, 5, 6))
    table = build_table(pattern, "zero-aware").table
    ok, message = check_values(pattern, table, 0, True, None)
    assert ok, message
    for value_from, value_to in ((6, 8), (6, 4), (0, 2)):
        bad = table.copy()
        bad[np.flatnonzero(bad == value_from)[-1]] = value_to
        ok, message = check_values(pattern, bad, 0, True, None)
        assert not ok and "fail" in message


def test_cache_stores_verifies_and_reloads_a_zero_aware_table(cache):
    from pdbtool.tables.verify import verify_file

    pattern = TilePattern(Board(3, 4), (3, 4, 7, 8))
    table = cache.get(pattern, "zero-aware")
    assert table.blank == "zero-aware" and table.entries == layout_of(pattern).entries
    assert "zero-aware" in table.path.name
    again = cache.load_valid(pattern, "zero-aware")
    assert np.array_equal(np.asarray(again.values), np.asarray(table.values))
    cells, blank = pattern.goal_cells(), pattern.board.goal[0]
    assert again.lookup(tuple(int(c) for c in cells), blank) == 0
    report = verify_file(table.path, rebuild=True, full=True)
    assert report.ok, report


# --- the search: admissible, never weaker, optimal ------------------------------------------------------------

CATALOGUE_3X3 = "board 3x3\npartition\n1 2 3 4\n5 6 7 8\npartition\n1 4 7\n2 5 8\n3 6\npartition 8-4-4\n"


@pytest.fixture(scope="module")
def minimized_values_3x3(cache, truth_3x3):
    """h of every 8-puzzle state (in ``truth_3x3``'s order) under each partition of ``CATALOGUE_3X3`` with
    blank-minimized tables: the baselines of the tests below, evaluated once."""
    catalogue = parse_catalogue(CATALOGUE_3X3, "test")
    solvers = [Solver(catalogue.board, partition=p, blank="minimized", cache=cache) for p in catalogue.partitions]
    return [[s.h(state) for state in truth_3x3] for s in solvers]


@pytest.mark.parametrize("blank", ["minimized", "zero-aware"])
def test_every_8_puzzle_state_admissible_and_at_least_each_partition(cache, truth_3x3, minimized_values_3x3, blank):
    catalogue = parse_catalogue(CATALOGUE_3X3, "test")
    solver = Solver(catalogue.board, partition=catalogue, blank=blank, cache=cache)
    for (state, d), *singles in zip(truth_3x3.items(), *minimized_values_3x3):
        assert max(singles) <= solver.h(state) <= d


def test_zero_aware_tables_dominate_minimized_ones_on_the_8_puzzle(cache, truth_3x3, minimized_values_3x3):
    zero = Solver(Board(3, 3), partition="8-4-4", blank="zero-aware", cache=cache)
    assert parse_catalogue(CATALOGUE_3X3, "test").partitions[2].name == "8-4-4"
    higher = 0
    for state, hm in zip(truth_3x3, minimized_values_3x3[2]):
        hz = zero.h(state)
        assert hz >= hm
        higher += hz > hm
    assert higher > 0


@pytest.mark.parametrize("blank", ["minimized", "zero-aware"])
def test_random_8_puzzle_and_3x4_states_solve_optimally(cache, truth_3x3, blank):
    rng = random.Random(7)
    states = rng.sample(sorted(truth_3x3), 15)
    solver = Solver(Board(3, 3), partition=parse_catalogue(CATALOGUE_3X3, "test"), blank=blank, cache=cache)
    for state in states:
        assert solver.solve(state).length == truth_3x3[state]
    board = Board(4, 3)
    catalogue = parse_catalogue("board 4x3\npartition\n1 2 3 5 6 7\n4 8 9 10 11\n"
                                "partition\n1 2 3 4\n5 6 7 8\n9 10 11\n", "test")
    fast = Solver(board, partition=catalogue, blank=blank, cache=cache)
    exact = Solver(board, heuristic="manhattan")
    for seed in range(5):
        tiles = list(range(board.n))
        random.Random(seed).shuffle(tiles)
        if not board.is_solvable(tiles):
            tiles[1], tiles[2] = tiles[2], tiles[1]
        assert fast.solve(tiles).length == exact.solve(tiles).length


def test_one_partition_catalogue_searches_exactly_like_the_pattern_sum(cache):
    # same h at every node entered, and pruned children judged alike: the same counts and solution
    board = Board(4, 4)
    part = load_partition("15-5-5-5")
    plain = Solver(board, partition=part, cache=cache)
    one = Solver(board, partition=Catalogue("one", board, (part,)), cache=cache)
    for ident in (1, 3, 12):
        a, b = plain.solve(KORF[ident][0]), one.solve(KORF[ident][0])
        assert (a.length, a.nodes_generated, a.solution) == (b.length, b.nodes_generated, b.solution)
        assert a.length == KORF[ident][1]


@pytest.mark.parametrize("text", ["board 3x3\n1 2 3 4\n5 6 7 8\n",
                                  "board 3x3\n1 2\n3 6\n4 7\n5 8\n"])  # 3 6 and 5 8: 1 2's table, mapped
def test_zero_aware_pattern_sum_searches_exactly_like_the_one_partition_catalogue(cache, truth_3x3, text):
    # the pattern-sum kernel's zero-aware index against the catalogue kernel's, which the 8-puzzle's true
    # distances check above
    from pdbtool.heuristics.catalogue import CatalogueSum
    from pdbtool.heuristics.zero_aware_sum import ZeroAwareSum

    board = Board(3, 3)
    part = parse_catalogue(text.replace("3x3\n", "3x3\npartition\n"), "t").partitions[0]
    plain = Solver(board, partition=part, blank="zero-aware", cache=cache)
    one = Solver(board, partition=Catalogue("one", board, (part,)), blank="zero-aware", cache=cache)
    assert isinstance(plain.heuristic, ZeroAwareSum) and isinstance(one.heuristic, CatalogueSum)
    assert plain.heuristic.mapped == (part.patterns[0].k == 2)
    for state in random.Random(11).sample(sorted(truth_3x3), 40):
        a, b = plain.solve(state), one.solve(state)
        assert (a.length, a.nodes_generated, a.solution) == (b.length, b.nodes_generated, b.solution)
        assert a.length == truth_3x3[state] and plain.h(state) == one.h(state)


def test_zero_aware_pattern_sum_with_the_automaton_searches_like_the_catalogue(cache):
    board = Board(4, 4)
    part = load_partition("15-5-5-5")
    plain = Solver(board, partition=part, blank="zero-aware", pruning="fsm", cache=cache)
    one = Solver(board, partition=Catalogue("one", board, (part,)), blank="zero-aware", pruning="fsm", cache=cache)
    for ident in (1, 3, 12):
        a, b = plain.solve(KORF[ident][0]), one.solve(KORF[ident][0])
        assert (a.length, a.nodes_generated, a.solution) == (b.length, b.nodes_generated, b.solution)
        assert a.length == KORF[ident][1]


@pytest.mark.slow
def test_korf_15_puzzles_optimal_with_zero_aware_catalogue(cache):
    board = Board(4, 4)
    catalogue = parse_catalogue("board 4x4\npartition 15-5-5-5\npartition\n1 2 3 4 5\n6 7 8 9 10\n"
                                "11 12 13 14 15\n", "test")
    solver = Solver(board, partition=catalogue, blank="zero-aware", cache=cache)
    plain = Solver(board, partition="15-5-5-5", cache=cache)
    for ident in (79, 12, 42, 55, 97, 19, 94, 47):  # the eight with the fewest Manhattan nodes (Korf 1985)
        state, optimal = KORF[ident]
        result = solver.solve(state)
        assert result.length == optimal
        assert result.nodes_generated <= plain.solve(state).nodes_generated


# --- catalogue files --------------------------------------------------------------------------------------------

def test_catalogue_file_reads_inline_and_named_partitions(tmp_path):
    (tmp_path / "halves.txt").write_text("board 3x3\n1 2 3 4\n5 6 7 8\n")
    path = tmp_path / "cat.txt"
    path.write_text("# a catalogue\nboard 3x3\ngoal korf\npartition halves.txt\npartition   # inline\n"
                    "1 4 7\n2 5 8\n3 6\npartition 8-4-4\n")
    cat = load_partition(str(path))
    assert isinstance(cat, Catalogue) and cat.name == "cat" and len(cat.partitions) == 3
    assert [p.tiles for p in cat.partitions[0].patterns] == [(1, 2, 3, 4), (5, 6, 7, 8)]
    # the distinct patterns: 8-4-4's patterns are the halves' again
    assert [p.tiles for p in cat.patterns] == [(1, 2, 3, 4), (5, 6, 7, 8), (1, 4, 7), (2, 5, 8), (3, 6)]


def test_the_example_15_puzzle_catalogue_is_three_complete_partitions():
    # examples/15-cat-3.txt is the catalogue docs/frontier-24.md checks Korf's 100 with
    cat = load_partition(str(Path(__file__).resolve().parents[1] / "examples" / "15-cat-3.txt"))
    assert isinstance(cat, Catalogue) and (cat.board.width, cat.board.height) == (4, 4)
    assert [len(p.patterns) for p in cat.partitions] == [3, 3, 3]
    for partition in cat.partitions:
        assert sorted(t for p in partition.patterns for t in p.tiles) == list(range(1, 16))


@pytest.mark.parametrize("name", [n for n in builtin_names() if isinstance(load_partition(n), Catalogue)])
def test_no_builtin_catalogue_repeats_a_partition_or_its_reflection(name):
    # a partition that is another's reflection adds nothing to the max (the reflection is searched anyway),
    # only lookups
    catalogue = load_partition(name)
    rtile = catalogue.board.reflect_tile()
    seen: list = []
    for part in catalogue.partitions:
        tiles = frozenset(frozenset(p.tiles) for p in part.patterns)
        reflected = frozenset(frozenset(int(rtile[t]) for t in p) for p in tiles)
        assert tiles not in seen and reflected not in seen, f"{name}: a partition repeats another or its reflection"
        seen += [tiles, reflected]


@pytest.mark.parametrize("text,message", [
    ("board 3x3\n# only comments\n", "no patterns"),
    ("board 3x3\n1 2\npartition\n3 4\n", "before the first 'partition'"),
    ("board 3x3\npartition\n", "without patterns"),
    ("board 3x3\npartition 8-4-4\n1 2\n", "no patterns may follow"),
    ("board 3x3\npartition 15-7-8\n", "4x4"),
    ("board 3x3\npartition\n1 2\n2 3\n", "tile 2"),
    ("board 3x3\npartition no-such-partition\n", "unknown partition"),
    ("board 3x3\npartition bad.txt\n", "bad.txt is a catalogue, not a partition"),  # names itself
    ("board 3x3\npartition other.txt\n", "other.txt is a catalogue, not a partition"),  # other names it
])
def test_bad_catalogue_files_get_one_line_errors(tmp_path, text, message):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    (tmp_path / "other.txt").write_text("board 3x3\npartition bad.txt\n")
    with pytest.raises(PartitionError, match=message) as err:
        load_partition(str(path))
    assert "\n" not in str(err.value)


def test_catalogue_tables_are_built_once_and_shared_by_symmetry(tmp_path):
    from pdbtool.tables.operations import build_tables, partition_plan

    cache = TableCache(tmp_path / "cache")
    # both partitions hold {1,2,3,4}; {5,6,7,8} is its image under the 180-degree rotation
    catalogue = parse_catalogue(CATALOGUE_3X3.replace("partition 8-4-4\n", "partition\n1 2 3 4\n5 6\n7 8\n"), "t")
    outcomes = list(build_tables(cache, partition_plan(catalogue, "zero-aware")))
    assert [o.pattern.tiles for o in outcomes] == [p.tiles for p in catalogue.patterns]
    built = [o for o in outcomes if o.shared is None]
    assert len(list(cache.entries())) == len(built) < len(catalogue.patterns)


def test_zero_aware_needs_byte_tables(cache):
    from pdbtool.tables.encodings import EncodingError

    # max takes zero-aware tables too (tests/test_dynamic.py), in bytes as well
    with pytest.raises(EncodingError, match="zero-aware tables are byte tables only"):
        Solver(Board(3, 3), partition="8-4-4", blank="zero-aware", encoding="nibble", cache=cache)
    with pytest.raises(SolverError, match="pdb only"):
        Solver(Board(3, 3), heuristic="max", partition="8-4-4", blank="zero-aware", encoding="nibble", cache=cache)


def test_threads_find_the_serial_length_with_a_zero_aware_catalogue(cache):
    board = Board(4, 3)
    catalogue = parse_catalogue("board 4x3\npartition\n1 2 3 5 6 7\n4 8 9 10 11\n"
                                "partition\n1 2 3 4\n5 6 7 8\n9 10 11\n", "test")
    serial = Solver(board, partition=catalogue, blank="zero-aware", cache=cache)
    threaded = Solver(board, partition=catalogue, blank="zero-aware", cache=cache, search_threads=2)
    for seed in range(3):
        tiles = list(range(board.n))
        random.Random(100 + seed).shuffle(tiles)
        if not board.is_solvable(tiles):
            tiles[1], tiles[2] = tiles[2], tiles[1]
        a, b = serial.solve(tiles), threaded.solve(tiles)
        assert a.solved and b.solved and a.length == b.length


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(min_value=1, max_value=64).flatmap(
    lambda n: st.tuples(st.just(n), st.sets(st.integers(0, n - 1), min_size=1, max_size=min(n, 12)))))
def test_chunked_colex_rank_is_the_binomial_sum_on_boards_up_to_64_cells(case):
    n, cells = case
    mask = np.uint64(sum(1 << c for c in cells))
    expected = sum(comb(c, j + 1) for j, c in enumerate(sorted(cells)))
    assert occupied_rank(mask, colex_chunks(n, 12)) == expected
    assert occupied_rank(mask, colex_chunks(64, len(cells))) == expected
