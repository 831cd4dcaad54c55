"""The catalogue kernel's private table copies (``CatalogueSum.copy_tables``): the same values, one copy per
distinct table, searches unchanged."""

from __future__ import annotations

import random

import numpy as np
import pytest

from pdbtool.puzzle.board import Board
from pdbtool.search.solver import Solver
from pdbtool.tables.cache import TableCache
from pdbtool.tables.partitions import parse_catalogue

# two partitions of the 3x4 board sharing no pattern, and a third repeating the first's patterns: rows that
# read one table must keep reading one copy
CAT_3X4 = ("board 4x3\npartition\n1 2 3 5 6 7\n4 8 9 10 11\npartition\n1 2 3 4\n5 6 7 8\n9 10 11\n"
           "partition\n1 2 3 5 6 7\n4 8 9 10 11\n")


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return TableCache(tmp_path_factory.mktemp("copy-cache"))


def _states(board: Board, count: int) -> list[list[int]]:
    rng = random.Random(31)
    out = []
    while len(out) < count:
        tiles = list(range(board.n))
        rng.shuffle(tiles)
        if board.is_solvable(tiles):
            out.append(tiles)
    return out


@pytest.mark.parametrize("blank", ["zero-aware", "minimized"])
def test_copied_tables_search_exactly_as_the_mapped_ones(cache, blank):
    board = Board(4, 3)
    solver = Solver(board, partition=parse_catalogue(CAT_3X4, "t"), blank=blank, cache=cache, pruning="fsm")
    heuristic = solver.heuristic.heuristic
    states = _states(board, 3)
    before = [solver.solve(s) for s in states]
    values = [heuristic.sums(s) for s in states]
    mapped = list(heuristic.row_tables)

    copied = heuristic.copy_tables()

    distinct = {t.ctypes.data: t for t in mapped}
    assert copied == sum(t.nbytes for t in distinct.values())
    assert len({t.ctypes.data for t in heuristic.row_tables}) == len(distinct)
    for old, new in zip(mapped, heuristic.row_tables):
        assert not np.shares_memory(old, new)
        assert np.array_equal(old, new) and not new.flags.writeable
    assert list(heuristic.addrs) == [t.ctypes.data for t in heuristic.row_tables]
    after = [solver.solve(s) for s in states]
    assert [(r.length, r.nodes_generated, r.solution) for r in after] == \
        [(r.length, r.nodes_generated, r.solution) for r in before]
    assert all(np.array_equal(a, heuristic.sums(s)) for a, s in zip(values, states))
    exact = Solver(board, heuristic="manhattan")
    assert [r.length for r in after] == [exact.solve(s).length for s in states]
