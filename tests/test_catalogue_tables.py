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


# 3-tile patterns of the 4x4 board and their transposes (tables shared through the diagonal symmetry)
CAT_4X4_SHARED = ("board 4x4\npartition\n1 2 3\n4 5 6\n7 8 9\n10 11 12\n13 14 15\n"
                  "partition\n4 8 12\n1 5 9\n13 2 6\n10 14 3\n7 11 15\n")


def _row_values_reference(h, tiles):
    """Each row's placement and table value, row by row in Python (the search kernel's setup reads the
    compiled evaluation; this is its oracle)."""
    from pdbtool.tables.ranking import rank_cells
    from pdbtool.tables.zero_aware import layout

    n, R = h.board.n, h.nrow
    where = np.empty(n, dtype=np.int64)
    where[tiles] = np.arange(n)
    blank = int(where[0])
    cells = np.zeros((2 * R, h.kmax), dtype=np.int64)
    values = np.zeros(2 * R, dtype=np.int64)
    for side in range(2 if h.reflect else 1):
        for row, p in enumerate(h.rows):
            via = h.row_shared[row]
            slots = via.slots() if via is not None else {t: s for s, t in enumerate(p.tiles)}
            x = side * R + row
            for t in p.tiles:
                cells[x, slots[t]] = h.cellmap[x, where[h.rtile[t]] if side else where[t]]
            own = np.ascontiguousarray(cells[x, :p.k])
            idx = (layout(h.board.width, h.board.height, p.k).index(own, int(h.cellmap[x, blank])) if h.row_za[row]
                   else rank_cells(own, n))
            values[x] = int(h.row_tables[row][idx])
    return cells, values


@pytest.mark.parametrize("text, dims", [(CAT_3X4, (4, 3)), (CAT_4X4_SHARED, (4, 4))], ids=["3x4", "4x4-shared"])
@pytest.mark.parametrize("blank", ["zero-aware", "minimized"])
@pytest.mark.parametrize("reflect", [True, False])
def test_whole_state_values_equal_a_row_by_row_evaluation(cache, text, dims, blank, reflect):
    board = Board(*dims)
    if reflect and not board.reflection_valid():
        pytest.skip("no diagonal reflection on this board")
    h = Solver(board, partition=parse_catalogue(text, "t"), blank=blank, cache=cache, reflect=reflect,
               pruning="fsm").heuristic.heuristic
    if dims == (4, 4):
        assert any(via is not None for via in h.row_shared)  # rows read through the symmetry
    for tiles in _states(board, 300):
        tiles = np.array(tiles, dtype=np.int64)
        cells, values = h._row_values(tiles)
        expected_cells, expected_values = _row_values_reference(h, tiles)
        assert np.array_equal(values, expected_values) and np.array_equal(cells, expected_cells)
