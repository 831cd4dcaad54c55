"""The catalogue kernel's lazy rule: a zero-aware table is consistent (a move changes its value by at most
one, a move of a tile outside its pattern not at all), so a partition-side whose upper bound cannot prune a
child is not looked up.  Its pruning decisions, and so its node counts and solutions, must be those of the
plain evaluation that looks up every side for every child."""

from __future__ import annotations

import random
import sys
from itertools import permutations
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import korf100  # noqa: E402
from oracle import tile_blank_distances  # noqa: E402

from pdbtool.puzzle.board import Board  # noqa: E402
from pdbtool.search.solver import Solver  # noqa: E402
from pdbtool.tables.build import build_table  # noqa: E402
from pdbtool.tables.cache import TableCache  # noqa: E402
from pdbtool.tables.partitions import parse_catalogue  # noqa: E402
from pdbtool.tables.ranking import TilePattern  # noqa: E402
from pdbtool.tables.zero_aware import layout_of  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
KORF = {i: tiles for i, (tiles, _) in korf100().items()}

CAT_4X4 = "board 4x4\npartition 15-5-5-5\npartition\n1 2 3 4 5\n6 7 8 9 10\n11 12 13 14 15\n"
CAT_3X4 = "board 4x3\npartition\n1 2 3 5 6 7\n4 8 9 10 11\npartition\n1 2 3 4\n5 6 7 8\n9 10 11\n"
# 5x5 with three-tile patterns: small tables, a weak heuristic, so that short walks still search widely
CAT_5X5 = ("board 5x5\npartition\n1 2 3\n4 5 6\n7 8 9\n10 11 12\n13 14 15\n16 17 18\n19 20 21\n22 23 24\n"
           "partition\n1 5 10\n2 6 11\n3 7 12\n4 8 9\n13 14 19\n15 16 20\n17 18 22\n21 23 24\n")


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return TableCache(tmp_path_factory.mktemp("lazy-cache"))


def _random_state(board: Board, seed: int) -> list[int]:
    tiles = list(range(board.n))
    random.Random(seed).shuffle(tiles)
    if not board.is_solvable(tiles):
        tiles[1], tiles[2] = tiles[2], tiles[1]
    return tiles


def _walk(board: Board, moves: int, seed: int) -> list[int]:
    """A state ``moves`` random moves (never undoing the last) from the goal."""
    rng = random.Random(seed)
    tiles = list(board.goal_tiles)
    nb = board.neighbours()
    blank, prev = tiles.index(0), -1
    for _ in range(moves):
        m = rng.choice([m for m in range(4) if nb[blank, m] >= 0 and m + prev != 3])
        q = int(nb[blank, m])
        tiles[blank], tiles[q] = tiles[q], 0
        blank, prev = q, m
    return tiles


def _lazy_and_plain(board, text, blank, cache, **options):
    lazy = Solver(board, partition=parse_catalogue(text, "t"), blank=blank, cache=cache, **options)
    plain = Solver(board, partition=parse_catalogue(text, "t"), blank=blank, cache=cache, **options)
    getattr(plain.heuristic, "heuristic", plain.heuristic).lazy = False
    assert getattr(lazy.heuristic, "heuristic", lazy.heuristic).lazy
    return lazy, plain


def _same_search(lazy, plain, state):
    a, b = lazy.solve(state), plain.solve(state)
    assert a.solved and b.solved
    assert (a.length, a.nodes_generated, a.nodes_expanded, a.solution) == \
        (b.length, b.nodes_generated, b.nodes_expanded, b.solution)
    return a


# --- consistency: what the lazy rule rests on -------------------------------------------------------------

@pytest.mark.parametrize("w,h,tiles", [(3, 3, (1, 2, 3, 4)), (3, 3, (5, 6, 7, 8)), (3, 3, (1, 4, 7)),
                                       (3, 3, (2, 5, 8)), (3, 3, (3, 6)), (4, 3, (1, 2, 3, 5)),
                                       (4, 3, (4, 8, 9, 10)), (3, 4, (1, 2, 3))])
def test_zero_aware_tables_are_consistent_on_every_edge(w, h, tiles):
    # every (placement, blank cell) and each of the blank's moves: a move of a pattern tile changes the
    # table's value by at most one, a move into a free cell (another tile's move) not at all
    board = Board(w, h)
    pattern = TilePattern(board, tiles)
    values = build_table(pattern, blank="zero-aware", threads=1).table
    lay = layout_of(pattern)
    nb = [[q for q in row if q >= 0] for row in board.neighbours().tolist()]
    checked = 0
    for cells in permutations(range(board.n), len(tiles)):
        occupied = set(cells)
        for blank in range(board.n):
            if blank in occupied:
                continue
            v = int(values[lay.index(cells, blank)])
            for q in nb[blank]:
                if q in occupied:
                    i = cells.index(q)
                    child = cells[:i] + (blank,) + cells[i + 1:]
                    assert abs(int(values[lay.index(child, q)]) - v) <= 1
                else:
                    assert int(values[lay.index(cells, q)]) == v
                checked += 1
    assert checked > 0


def test_zero_aware_values_are_the_blank_cell_distances_of_the_oracle():
    # the values the consistency test reads are the abstraction's exact distances
    board = Board(3, 3)
    pattern = TilePattern(board, (1, 2, 3, 4))
    values = build_table(pattern, blank="zero-aware", threads=1).table
    lay = layout_of(pattern)
    for (cells, blank), d in tile_blank_distances(board, pattern.tiles, (board.goal[0],)).items():
        assert int(values[lay.index(cells, blank)]) == d


# --- the lazy rule decides as the plain evaluation does ----------------------------------------------------

@pytest.mark.parametrize("pruning", ["parent", "fsm"])
def test_lazy_rule_searches_the_4x4_exactly_like_the_plain_evaluation(cache, pruning):
    lazy, plain = _lazy_and_plain(Board(4, 4), CAT_4X4, "zero-aware", cache, pruning=pruning)
    for ident in (79, 12, 42):
        _same_search(lazy, plain, KORF[ident])


@pytest.mark.parametrize("blank", ["zero-aware", "minimized"])
@pytest.mark.parametrize("pruning", ["parent", "fsm"])
def test_lazy_rule_searches_3x4_states_exactly_like_the_plain_evaluation(cache, blank, pruning):
    board = Board(4, 3)
    lazy, plain = _lazy_and_plain(board, CAT_3X4, blank, cache, pruning=pruning)
    exact = Solver(board, heuristic="manhattan")
    for seed in range(4):
        state = _random_state(board, seed)
        assert _same_search(lazy, plain, state).length == exact.solve(state).length


@pytest.mark.parametrize("pruning", ["parent", "fsm"])
def test_lazy_rule_searches_5x5_walks_exactly_like_the_plain_evaluation(cache, pruning):
    board = Board(5, 5)
    depth = {"fsm_depth": 12} if pruning == "fsm" else {}  # the lazy rule, not the automaton's depth, is under test
    lazy, plain = _lazy_and_plain(board, CAT_5X5, "zero-aware", cache, pruning=pruning, **depth)
    for seed in range(3):
        _same_search(lazy, plain, _walk(board, 36, seed))


def test_lazy_rule_with_threads_counts_as_serial(cache):
    board = Board(4, 4)
    lazy, _ = _lazy_and_plain(board, CAT_4X4, "zero-aware", cache, pruning="fsm")
    threaded = Solver(board, partition=parse_catalogue(CAT_4X4, "t"), blank="zero-aware", cache=cache,
                      pruning="fsm", search_threads=2)
    for ident in (79, 12):
        a, b = lazy.solve(KORF[ident]), threaded.solve(KORF[ident])
        assert (a.length, a.nodes_generated) == (b.length, b.nodes_generated)


def test_mixed_blank_rules_keep_minimized_rows_exact(cache):
    # a catalogue whose partitions mix zero-aware and minimized tables: the minimized rows (not consistent)
    # are looked up at every move of their tiles, the zero-aware ones lazily; decisions as the plain kernel
    from pdbtool.heuristics.catalogue import CatalogueSum
    from pdbtool.search.driver import Search

    board = Board(4, 3)
    cat = parse_catalogue(CAT_3X4, "t")
    pats = [list(p.patterns) for p in cat.partitions]
    za = [[i % 2 == 0 for i in range(len(ps))] for ps in pats]
    tables = [[build_table(p, blank="zero-aware" if z else "minimized", threads=1).table
               for p, z in zip(ps, zs)] for ps, zs in zip(pats, za)]
    exact = Solver(board, heuristic="manhattan")
    for seed in range(3):
        state = _random_state(board, 10 + seed)
        counts = []
        for lazy in (True, False):
            heuristic = CatalogueSum(pats, tables, za, reflect=False, lazy=lazy)
            search = Search(heuristic, state)
            while search.step(1 << 30) != 1:  # FOUND
                pass
            counts.append((len(search.moves()), search.generated))
        assert counts[0] == counts[1]
        assert counts[0][0] == exact.solve(state).length
