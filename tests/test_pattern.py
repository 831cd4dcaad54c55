"""Ranking placements: a bijection onto [0, entries) that preserves lexicographic order."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdbtool.puzzle.board import Board, BoardError
from pdbtool.tables.ranking import PatternError, TilePattern, check_disjoint, rank_many, unrank_many

BOARDS = [(2, 3), (3, 3), (4, 4), (5, 5), (4, 8)]


@st.composite
def pattern_and_placement(draw):
    w, h = draw(st.sampled_from(BOARDS))
    n = w * h
    k = draw(st.integers(1, min(7, n - 1)))
    tiles = draw(st.lists(st.integers(1, n - 1), min_size=k, max_size=k, unique=True))
    cells = draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k, unique=True))
    return TilePattern(Board(w, h), tuple(tiles)), tuple(cells)


@settings(max_examples=400, deadline=None)
@given(pattern_and_placement())
def test_rank_unrank_round_trip(case):
    pattern, cells = case
    r = pattern.rank(cells)
    assert 0 <= r < pattern.entries
    assert pattern.unrank(r) == cells


@settings(max_examples=200, deadline=None)
@given(pattern_and_placement(), pattern_and_placement())
def test_rank_preserves_lexicographic_order(a, b):
    pattern, cells = a
    other = b[1]
    if len(other) != len(cells) or max(other) >= pattern.n:
        return
    assert (pattern.rank(cells) < pattern.rank(other)) == (cells < other)


@pytest.mark.parametrize("w,h,k", [(2, 3, 3), (3, 3, 4), (4, 4, 3), (3, 3, 8)])
def test_every_rank_is_hit_once_in_order(w, h, k):
    pattern = TilePattern(Board(w, h), tuple(range(1, k + 1)))
    ranks = np.arange(pattern.entries, dtype=np.int64)
    placements = unrank_many(ranks, pattern.n, k)
    assert len({tuple(p) for p in placements.tolist()}) == pattern.entries
    assert (rank_many(placements, pattern.n) == ranks).all()
    # lexicographic order: the placements come out sorted
    as_tuples = [tuple(p) for p in placements.tolist()]
    assert as_tuples == sorted(as_tuples)


def test_entries_and_goal_rank():
    board = Board(4, 4)
    assert TilePattern(board, (1, 2, 3, 4, 5, 6, 7)).entries == 57_657_600
    assert TilePattern(board, tuple(range(8, 16))).entries == 518_918_400
    assert TilePattern(Board(5, 5), (1, 2, 5, 6, 7, 12)).entries == 127_512_000
    p = TilePattern(board, (3, 1, 2))
    assert p.tiles == (1, 2, 3)
    assert p.unrank(p.goal_rank()) == (1, 2, 3)


def test_manhattan_and_blank_region():
    board = Board(3, 3)
    p = TilePattern(board, (1, 2))
    assert p.manhattan((1, 2)) == 0
    assert p.manhattan((8, 0)) == 3 + 2
    # tiles in cells 1 and 3 wall off cell 0
    assert p.blank_region((1, 3), 0) == (0,)
    assert p.blank_region((1, 3), 8) == (2, 4, 5, 6, 7, 8)
    with pytest.raises(PatternError):
        p.blank_region((1, 3), 1)


@pytest.mark.parametrize("tiles,message", [
    ((), "empty"), ((1, 1), "twice"), ((0, 1), "outside"), ((1, 16), "outside"),
])
def test_bad_patterns_are_refused(tiles, message):
    with pytest.raises(PatternError, match=message):
        TilePattern(Board(4, 4), tiles)


def test_overlapping_partition_is_refused():
    board = Board(4, 4)
    with pytest.raises(PatternError, match="overlap on tile 3"):
        check_disjoint([TilePattern(board, (1, 2, 3)), TilePattern(board, (3, 4))])


@pytest.mark.parametrize("dims", ["1x4", "4", "9x8", "13x5", "axb"])
def test_bad_boards_are_refused(dims):
    with pytest.raises(BoardError):
        Board.parse(dims)


def test_goal_spec():
    assert Board.parse("3x3", "blank-last").goal_tiles == (1, 2, 3, 4, 5, 6, 7, 8, 0)
    assert Board.parse("2x2", "3 2 1 0").goal == (3, 2, 1, 0)
    with pytest.raises(BoardError, match="permutation"):
        Board.parse("2x2", "0 1 1 2")
