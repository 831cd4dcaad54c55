"""Heuristics: Manhattan, linear conflicts, pattern sums and the diagonal reflection, against exact oracles."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from pdbtool.tables.build import build_table
from pdbtool.puzzle.board import Board
from pdbtool.heuristics import HeuristicError
from pdbtool.heuristics.linear_conflict import (LinearConflict, LineScanConflict, _line_conflict_table,
                                                line_conflicts)
from pdbtool.heuristics.manhattan import Manhattan
from pdbtool.heuristics.pattern_sum import PatternSum
from pdbtool.tables.ranking import TilePattern

from oracle import true_distances


@pytest.fixture(scope="module")
def eight():
    board = Board(3, 3)
    dist = true_distances(board.width, board.height, board.goal)
    sample = random.Random(5).sample(sorted(dist), 3000)
    return board, dist, sample


def brute_line_conflicts(goals: list[int]) -> int:
    """2 x the least number of entries to delete so that the rest increase (by trying every subset)."""
    k = len(goals)
    for removed in range(k + 1):
        for drop in itertools.combinations(range(k), removed):
            rest = [g for i, g in enumerate(goals) if i not in drop]
            if all(a < b for a, b in zip(rest, rest[1:])):
                return 2 * removed
    raise AssertionError


@pytest.mark.parametrize("length", [2, 3, 4, 5])
def test_line_conflict_table_is_the_least_removal(length):
    table = _line_conflict_table(length)
    base = length + 1
    for code in range(base ** length):
        digits = [(code // base ** j) % base for j in range(length)]
        goals = [d - 1 for d in digits if d]
        if len(set(goals)) != len(goals):
            continue  # two tiles with one goal slot never happen
        assert table[code] == brute_line_conflicts(goals)


@pytest.mark.parametrize("length", [1, 2, 5, 8, 9])
def test_line_conflicts_is_the_least_removal(length):
    """The one function behind the code tables, the scanned lines and the sampler: on random lines (other
    lines' tiles as -1, one entry read as another value or as none), against the subset search."""
    rng = random.Random(length)
    lines = np.full((3, length), -1, dtype=np.int64)
    tails = np.zeros(length, dtype=np.int64)
    for _ in range(150):
        a = rng.randrange(3)
        goals = rng.sample(range(length), rng.randint(0, length))
        lines[a] = -1
        for i, g in zip(rng.sample(range(length), len(goals)), goals):
            lines[a, i] = g
        entries = [int(x) for x in lines[a]]
        assert line_conflicts(lines, a, -1, 0, tails) == brute_line_conflicts([g for g in entries if g >= 0])
        pos = rng.randrange(length)
        free = [g for g in range(length) if g not in entries] + [-1]
        value = rng.choice(free)
        entries[pos] = value
        assert line_conflicts(lines, a, pos, value, tails) == brute_line_conflicts([g for g in entries if g >= 0])


def test_manhattan_and_linear_conflict_values():
    board = Board(4, 4)
    md, lc = Manhattan(board), LinearConflict(board)
    assert md.value(board.goal_tiles) == lc.value(board.goal_tiles) == 0
    # tiles 2 and 1 swapped in the top row: Manhattan 2, one conflict (+2)
    state = [0, 2, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
    assert md.value(state) == 2
    assert lc.value(state) == 4
    # 3 2 1 in the top row: Manhattan 4, two tiles must leave the row (+4)
    state = [0, 3, 2, 1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
    assert (md.value(state), lc.value(state)) == (4, 8)
    # a column conflict: 4 and 8 swapped in column 0
    state = [0, 1, 2, 3, 8, 5, 6, 7, 4, 9, 10, 11, 12, 13, 14, 15]
    assert (md.value(state), lc.value(state)) == (2, 4)
    # Korf's instance 1: Manhattan 41 (Korf 1985)
    korf1 = [14, 13, 15, 7, 11, 12, 9, 5, 6, 0, 2, 1, 4, 8, 10, 3]
    assert md.value(korf1) == 41
    assert lc.value(korf1) >= 41


def test_classic_heuristics_are_admissible_and_ordered(eight):
    board, dist, sample = eight
    md, lc = Manhattan(board), LinearConflict(board)
    for s in sample:
        a, b = md.value(s), lc.value(s)
        assert a <= b <= dist[s]
        assert (dist[s] - a) % 2 == 0


def test_linear_conflict_on_a_non_square_board():
    board = Board(4, 2)
    dist = true_distances(board.width, board.height, board.goal)
    lc = LinearConflict(board)
    for s in random.Random(2).sample(sorted(dist), 2000):
        assert Manhattan(board).value(s) <= lc.value(s) <= dist[s]


def _conflicts_by_definition(board, state):
    """Over every line: 2 x (its tiles that belong to it - the longest run of them in goal order, by the
    quadratic recurrence)."""
    w, h = board.width, board.height
    total = 0
    where = [divmod(board.goal[t], w) for t in state]  # the goal (row, column) of the tile in each cell
    lines = [[(where[r * w + c], 0, r, 1) for c in range(w) if state[r * w + c]] for r in range(h)]
    lines += [[(where[r * w + c], 1, c, 0) for r in range(h) if state[r * w + c]] for c in range(w)]
    for line in lines:
        goals = [goal[other] for goal, axis, index, other in line if goal[axis] == index]
        longest: list[int] = []
        for i, g in enumerate(goals):
            longest.append(1 + max([longest[j] for j in range(i) if goals[j] < g], default=0))
        total += 2 * (len(goals) - max(longest, default=0))
    return total


@pytest.mark.parametrize("dims", [(8, 4), (8, 8), (4, 16), (2, 32), (7, 7), (3, 5)])
def test_linear_conflict_on_long_lines_scans_them(dims):
    """Lines of more than 7 cells have no code table: their conflicts are computed from the line's tiles,
    the same function as the tables'."""
    board = Board(*dims)
    lc = LinearConflict(board)
    assert isinstance(lc, LineScanConflict) == (max(dims) > 7)
    scan = LineScanConflict(board)
    rng = random.Random(dims[0] * 100 + dims[1])
    for _ in range(300):
        tiles = list(range(board.n))
        rng.shuffle(tiles)
        want = _conflicts_by_definition(board, tiles)
        assert lc.conflicts(tiles) == scan.conflicts(tiles) == want
        assert lc.value(tiles) == Manhattan(board).value(tiles) + want


def test_line_tables_refuse_long_lines():
    with pytest.raises(HeuristicError, match="at most 7 cells"):
        LinearConflict.__init__(object.__new__(LinearConflict), Board(8, 4))


def test_reflection_maps_states_to_states_at_the_same_distance(eight):
    board, dist, sample = eight
    patterns = [TilePattern(board, (1, 2, 3, 4)), TilePattern(board, (5, 6, 7, 8))]
    h = PatternSum(patterns, [build_table(p).table for p in patterns], reflect=True)
    assert tuple(h.reflected(board.goal_tiles)) == board.goal_tiles
    assert list(h.rtile) == [0, 3, 6, 1, 4, 7, 2, 5, 8]
    for s in sample[:500]:
        r = tuple(int(x) for x in h.reflected(s))
        assert tuple(int(x) for x in h.reflected(r)) == tuple(s)
        assert dist[r] == dist[s]


@pytest.mark.parametrize("goal", ["korf", "blank-last"])
def test_pattern_sums_are_admissible_and_reflection_never_lowers(eight, goal):
    board = Board.parse("3x3", goal)
    dist = true_distances(board.width, board.height, board.goal) if goal != "korf" else eight[1]
    patterns = [TilePattern(board, (1, 2, 3)), TilePattern(board, (4, 5, 6, 7, 8))]
    tables = [build_table(p).table for p in patterns]
    plain = PatternSum(patterns, tables, reflect=False)
    mirrored = PatternSum(patterns, tables, reflect=True)
    md = Manhattan(board)
    higher = 0
    for s in random.Random(9).sample(sorted(dist), 2000):
        direct, reflected = mirrored.parts(s)
        a, b = plain.value(s), mirrored.value(s)
        assert a == sum(direct)
        assert b == max(sum(direct), sum(reflected))
        # the reflected sum is the plain sum of the reflected state
        assert sum(reflected) == plain.value(mirrored.reflected(s))
        assert md.value(s) <= a <= b <= dist[s]
        higher += b > a
    assert higher > 100      # the reflection does help on this partition


def test_pattern_sum_refuses_what_it_cannot_use():
    board = Board(4, 3)
    p = TilePattern(board, (1, 2, 3))
    table = build_table(p).table
    with pytest.raises(HeuristicError, match="reflection"):
        PatternSum([p], [table], reflect=True)
    assert PatternSum([p], [table], reflect=False).value(board.goal_tiles) == 0
    with pytest.raises(HeuristicError, match="uint8"):
        PatternSum([p], [table[:-1]], reflect=False)
    with pytest.raises(HeuristicError, match="2 patterns but 1"):
        PatternSum([p, TilePattern(board, (4, 5))], [table], reflect=False)
    off_diagonal = Board.parse("3x3", "1 0 2 3 4 5 6 7 8")
    assert not off_diagonal.reflection_valid()
    q = TilePattern(off_diagonal, (1, 2, 3, 4))
    with pytest.raises(HeuristicError):
        PatternSum([q], [np.zeros(q.entries, dtype=np.uint8)], reflect=True)


def test_tables_a_kernel_cannot_read_are_refused_before_it_reads_them():
    # every pattern-sum and catalogue kernel reads its tables through raw addresses, with no bounds checks:
    # a table of the wrong length, type or layout, or of the other blank rule, must be refused up front
    from pdbtool.heuristics.catalogue import CatalogueSum
    from pdbtool.heuristics.zero_aware_sum import ZeroAwareSum

    board = Board(3, 3)
    pattern = TilePattern(board, (1, 2, 3, 4))
    table = build_table(pattern, blank="minimized", threads=1).table
    zero_aware = build_table(pattern, blank="zero-aware", threads=1).table
    spread = np.zeros(2 * table.shape[0], dtype=np.uint8)[::2]  # the right length, not contiguous
    for bad in (table[:-1], table.astype(np.int16), spread, zero_aware):
        with pytest.raises(HeuristicError, match=f"not a contiguous uint8 array of {table.shape[0]} entries"):
            PatternSum([pattern], [bad], reflect=False)
        with pytest.raises(HeuristicError, match="not a contiguous uint8 array"):
            CatalogueSum([[pattern]], [[bad]], [[False]], reflect=False)
    for bad in (table, zero_aware[:-1]):
        with pytest.raises(HeuristicError, match=f"not a contiguous uint8 array of {zero_aware.shape[0]} entries"):
            ZeroAwareSum([pattern], [bad], reflect=False)
        with pytest.raises(HeuristicError, match="not a contiguous uint8 array"):
            CatalogueSum([[pattern]], [[bad]], [[True]], reflect=False)
    assert PatternSum([pattern], [table], reflect=False).value(list(board.goal_tiles)) == 0
    assert ZeroAwareSum([pattern], [zero_aware], reflect=False).value(list(board.goal_tiles)) == 0


def test_a_catalogue_without_its_table_plan_is_refused_by_pdb_and_max():
    from pdbtool.heuristics.dynamic import max_heuristic
    from pdbtool.heuristics import pattern_sum_heuristic
    from pdbtool.tables.partitions import load_partition, parse_catalogue

    board = Board(3, 3)
    cat = parse_catalogue("board 3x3\npartition 8-4-4\n", "t")
    patterns = list(load_partition("8-4-4").patterns)
    tables = [np.zeros(p.entries, dtype=np.uint8) for p in patterns]
    with pytest.raises(HeuristicError, match="a catalogue needs its table plan"):
        pattern_sum_heuristic(board, patterns, tables, True, None, partition=cat, plan=None)
    with pytest.raises(HeuristicError, match="a catalogue needs its table plan"):
        max_heuristic(board, patterns, tables, partition=cat, plan=None)
