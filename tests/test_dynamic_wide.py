"""The conflict graph on boards of more than 32 cells (up to 64): the wide layout of the packed look-ups, the
incremental update against the graph from scratch, and covers of tile masks that use bit 63.

The tables here are synthetic (random pair and triple placements near the tiles' home cells, some valid only
for part of the board's blank cells): what is checked is that the packed look-ups and the graph give exactly
the edges the tables hold, whatever their values, on cells and tiles past 32.  The real tables of a wide board
are checked against a plain search in tests/test_35.py."""

from __future__ import annotations

import random
from itertools import combinations

import numpy as np
import pytest
from conflict_graph_probe import (ProbedGraph, brute_force_cover, move_key_lookup, reference_edges,
                                  walk_against_scratch)
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from pdbtool.heuristics.vertex_cover import is_wide
from pdbtool.heuristics.vertex_cover.exact_cover import min_cover
from pdbtool.heuristics.vertex_cover.lookups import ENTRY_BLOCK, pack_lookups, pack_move_lookups
from pdbtool.puzzle.board import MAX_CELLS, Board
from pdbtool.tables.pairs_triples import PAIR_BY_REGION, DynamicTables, pair_units_at
from pdbtool.tables.pairs_triples.lookups import _csr

pytestmark = pytest.mark.skipif(MAX_CELLS < 36, reason="boards of more than 32 cells are not supported yet")


def near_home(board, rng, tile, reach=2):
    """A random cell within ``reach`` moves of ``tile``'s home cell."""
    home = board.goal_tiles.index(tile)
    hx, hy = home % board.width, home // board.width
    cells = [c for c in range(board.n) if abs(c % board.width - hx) + abs(c // board.width - hy) <= reach]
    return rng.choice(cells)


def some_tiles(board, rng, k):
    """k distinct tiles, half the time with one of the last four (bits 32 and up on a 6x6 board)."""
    tiles = set()
    if rng.random() < 0.5:
        tiles.add(rng.randrange(max(1, board.n - 4), board.n))
    while len(tiles) < k:
        tiles.add(rng.randrange(1, board.n))
    return sorted(tiles)


def free_regions(board, cells):
    """The masks of the connected regions of the cells other than ``cells``."""
    nb = board.neighbours()
    left = set(range(board.n)) - set(cells)
    regions = []
    while left:
        todo = [left.pop()]
        region = set(todo)
        while todo:
            for q in (int(x) for x in nb[todo.pop()] if x >= 0):
                if q in left:
                    left.discard(q)
                    region.add(q)
                    todo.append(q)
        regions.append(sum(1 << c for c in region))
    return regions


def as_int64(mask):
    return mask - (1 << 64) if mask >= 1 << 63 else mask


def synthetic_tables(board, seed, pairs=2500, triples=4000, by_region=300):
    """DynamicTables of random placements near home: pairs of 1 or 2 units; pairs around a corner cell, whose
    value follows the blank's region (the corner or the rest); triples of 1 to 3 units, valid in all the
    regions their cells leave or (when they cut the board) in some of them.  As with the real tables, a
    placement's rows change only when one of its tiles moves."""
    rng = random.Random(seed)
    n, nb = board.n, board.neighbours()

    def key(t, ct, u, cu):
        return ((t * n + ct) * n + u) * n + cu

    units = np.zeros(n ** 4, dtype=np.uint8)
    rows = []
    for _ in range(pairs):
        a, b = some_tiles(board, rng, 2)
        ca, cb = near_home(board, rng, a), near_home(board, rng, b)
        if ca != cb and units[key(a, ca, b, cb)] == 0:
            units[key(a, ca, b, cb)] = units[key(b, cb, a, ca)] = rng.choice((1, 1, 1, 2))
    corners = [c for c in range(board.n) if sum(int(q) >= 0 for q in nb[c]) == 2]
    for _ in range(by_region):
        corner = rng.choice(corners)
        a, b = some_tiles(board, rng, 2)
        ca, cb = (int(q) for q in nb[corner] if q >= 0)
        if units[key(a, ca, b, cb)]:
            continue
        values = [(region, rng.choice((0, 1, 2))) for region in free_regions(board, (ca, cb))]
        for k in (key(a, ca, b, cb), key(b, cb, a, ca)):
            units[k] = PAIR_BY_REGION
            rows.extend((k, 0, -1, w, as_int64(region)) for region, w in values)
    seen = set()
    for _ in range(triples):
        tiles = some_tiles(board, rng, 3)
        cells = [near_home(board, rng, t) for t in tiles]
        if len(set(cells)) < 3 or (tuple(tiles), tuple(cells)) in seen:
            continue
        seen.add((tuple(tiles), tuple(cells)))
        w = rng.choice((1, 1, 2, 3))
        regions = free_regions(board, cells)
        for region in (regions if len(regions) == 1 else rng.sample(regions, rng.randrange(1, len(regions)))):
            for s in range(3):
                (u, cu), (v, cv) = [(tiles[j], cells[j]) for j in range(3) if j != s]
                rows.append((key(tiles[s], cells[s], u, cu), v, cv, w, as_int64(region)))
    start, ent = _csr(np.array(rows, dtype=np.int64), n ** 4)
    return DynamicTables(board, "synthetic", units, start, ent)


WIDE_BOARDS = [(6, 6), (3, 12), (2, 17)]


@pytest.fixture(scope="module", params=WIDE_BOARDS, ids=lambda d: f"{d[0]}x{d[1]}")
def wide(request):
    board = Board(*request.param)
    return board, synthetic_tables(board, sum(request.param))


def test_wide_boards_have_the_wide_layout(wide):
    board, tables = wide
    assert is_wide(board.n) and not is_wide(32)
    near, records, rows = pack_lookups(tables)
    assert near.shape == (2 * board.n ** 3,)  # the cells' bits, then the index of each word's first key
    assert ProbedGraph(tables).wide


def test_state_lookups_give_the_tables_edges(wide):
    """From scratch, the packed look-ups give exactly the edges the tables' own look-ups give, on states
    near the goal (where the synthetic placements are), tiles and cells past 32 among them."""
    board, tables = wide
    graph = ProbedGraph(tables)
    rng = random.Random(3)
    nb = board.neighbours()
    tiles = list(board.goal_tiles)
    blank = tiles.index(0)
    high = triples = 0
    for step in range(4000):
        q = rng.choice([int(c) for c in nb[blank] if c >= 0])
        tiles[blank], tiles[q] = tiles[q], 0
        blank = q
        if step % 10:
            continue
        graph.reset(np.array(tiles, dtype=np.int64))
        want = reference_edges(tables, tiles)
        assert sorted(graph.edges()) == want
        high += any(max(vs) >= 32 for vs, _ in want)
        triples += any(len(vs) == 3 for vs, _ in want)
    assert high > 20 and triples > 20  # the check met edges past bit 32, and hyperedges


def test_move_lookups_hold_what_holds_with_the_blank_where_the_tile_was(wide):
    """For a sample of moves, the wide move look-ups hold the pair units that hold with the blank where the
    moved tile was, and each triple placement that holds there exactly once (under u's or v's key)."""
    board, tables = wide
    n, nb = board.n, board.neighbours()
    packed = pack_move_lookups(tables)
    assert not packed[-2 * (ENTRY_BLOCK - 1):].any()  # the padding a last block of entries reads
    rng = random.Random(5)
    # moves whose keys hold something: the tables' keys with a pair or rows
    busy = np.flatnonzero((tables.pair_units != 0) | (np.diff(tables.tri_start) > 0))
    checked = 0
    for k in rng.sample(list(busy), 25):
        t, c = int(k) // n ** 3, int(k) // n ** 2 % n
        for m in range(4):
            blank = int(nb[c, m])
            for u in range(1, n):
                if u == t:
                    continue
                for cu in range(n):
                    if cu in (c, blank):
                        continue
                    got = move_key_lookup(packed, n, t, c, m, u, cu)
                    if blank < 0:
                        assert got is None
                        continue
                    key = ((t * n + c) * n + u) * n + cu
                    want_pair = int(pair_units_at(tables.pair_units, tables.tri_start, tables.tri_ent, key, blank))
                    assert (got[0] if got else 0) == want_pair
                    checked += 1
            if blank >= 0:
                # every triple placement of t in c that holds with the blank there, once over u's and v's keys
                want, found = [], []
                for key in range((t * n + c) * n ** 2, (t * n + c + 1) * n ** 2):
                    u, cu = key // n % n, key % n
                    for v, cv, w, mask in tables.tri_ent[tables.tri_start[key]:tables.tri_start[key + 1]]:
                        if v and cv != blank and cu != blank and int(mask) >> blank & 1:
                            want.append(tuple(sorted(((u, cu), (int(v), int(cv))))) + (int(w),))
                for u in range(1, n):
                    for cu in range(n):
                        got = move_key_lookup(packed, n, t, c, m, u, cu) if u != t and cu != c else None
                        for v, cv, w in (got[1] if got else []):
                            found.append(tuple(sorted(((u, cu), (v, cv)))) + (w,))
                assert sorted(found) == sorted(want)
    assert checked > 5000


def test_incremental_equals_from_scratch_along_random_walks(wide):
    """The search's update (try_move_wide, commit, restore) keeps the graph, its components and their covers
    equal to those from scratch along a walk that goes forward and back."""
    board, tables = wide
    nonzero, backtracks = walk_against_scratch(board, tables, random.Random(11), 1200, ProbedGraph(tables))
    assert nonzero > 300
    assert backtracks > 200


@st.composite
def high_hypergraphs(draw):
    """Hypergraphs over 8 vertices taken among 0..63 (always 63, the sign bit), with their relabelling."""
    vertices = sorted(set(draw(st.lists(st.integers(0, 62), min_size=7, max_size=7, unique=True))) | {63})
    edges = draw(st.lists(st.tuples(st.sampled_from(list(combinations(range(len(vertices)), 2)) +
                                                    list(combinations(range(len(vertices)), 3))),
                                    st.integers(1, 3)), min_size=1, max_size=10))
    return vertices, edges


@given(high_hypergraphs())
@settings(max_examples=examples(150), deadline=None)
def test_covers_of_tiles_up_to_63_equal_brute_force(graph):
    """The least cover of constraints whose tile masks use bits up to 63 equals the brute force on the same
    hypergraph over vertices 0..7."""
    vertices, edges = graph
    wide_edges = [(tuple(vertices[v] for v in vs), w) for vs, w in edges]
    assert min_cover(wide_edges, 64) == brute_force_cover(edges, len(vertices))


# --- the real tables of wide boards (pairs: their tables build in seconds) ------------------------------------

@pytest.fixture(scope="module")
def wide_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("wide-ddb")


@pytest.mark.parametrize("dims", [(6, 6), (2, 17)])
def test_pair_tables_of_wide_boards_equal_a_plain_search(wide_cache, dims):
    """For a sample of pairs (always one with tile n - 1, the last cell's), every placement's excess is the
    least over the blank's cells of the exact distance of the two tiles and the blank (a plain search of the
    abstraction) less their Manhattan distances; and the look-ups hold it under both keys."""
    from oracle import tile_blank_distances

    from pdbtool.tables.cache import TableCache
    from pdbtool.tables.pairs_triples import get_set, groups_of, load_dynamic
    from pdbtool.tables.ranking import TilePattern

    board = Board(*dims)
    n, md = board.n, board.manhattan_table()
    excess = np.asarray(get_set(TableCache(wide_cache), board, 2, jobs=1))
    look = load_dynamic(board, "pairs", cache_dir=wide_cache)
    groups = groups_of(board, 2)
    rng = random.Random(n)
    picked = rng.sample(range(len(groups)), 5) + [len(groups) - 1]
    for gi in picked:
        tiles = groups[gi]
        pattern = TilePattern(board, tiles)
        least: dict = {}
        for (cells, _), d in tile_blank_distances(board, tiles, (board.goal_tiles.index(0),)).items():
            least[cells] = min(d, least.get(cells, d))
        assert len(least) == n * (n - 1)
        for cells, d in least.items():
            exact = d - sum(int(md[t, c]) for t, c in zip(tiles, cells))
            assert int(excess[gi, pattern.rank(cells)]) == exact, (tiles, cells)
            (a, b), (ca, cb) = tiles, cells
            assert 2 * int(look.pair_units[((a * n + ca) * n + b) * n + cb]) == exact
            assert 2 * int(look.pair_units[((b * n + cb) * n + a) * n + ca]) == exact


@pytest.mark.slow  # the reference IDA* is plain Python
def test_the_search_on_a_wide_board_matches_a_reference_ida(wide_cache):
    """ddb (pairs) on 2x17 searches with the wide move look-ups: on random walks from the goal, the same
    length and node counts as a plain Python IDA* with the heuristic's value from scratch."""
    from oracle import reference_ida

    from pdbtool.heuristics.dynamic import DynamicHeuristic, WideDynamicState
    from pdbtool.search.solver import Solver, replay
    from pdbtool.tables.pairs_triples import load_dynamic

    board = Board(2, 17)
    heuristic = DynamicHeuristic(load_dynamic(board, "pairs", cache_dir=wide_cache))
    assert isinstance(heuristic.setup(np.array(board.goal_tiles, dtype=np.int64), 8)[1], WideDynamicState)
    solver = Solver(board, heuristic="ddb", dynamic="pairs", cache_dir=wide_cache)
    rng = random.Random(17)
    nb = board.neighbours()
    conflicts = 0
    for _ in range(6):
        tiles = list(board.goal_tiles)
        blank = tiles.index(0)
        for _ in range(30):
            q = rng.choice([int(c) for c in nb[blank] if c >= 0])
            tiles[blank], tiles[q] = tiles[q], 0
            blank = q
        result = solver.solve(tiles)
        assert replay(board, tuple(tiles), result.solution) == board.goal_tiles
        length, generated, expanded = reference_ida(board, heuristic.ddb_value, tuple(tiles))
        assert (result.length, result.nodes_generated, result.nodes_expanded) == (length, generated, expanded)
        conflicts += heuristic.cover(np.array(tiles)) > 0
    assert conflicts >= 1  # a start with pair conflicts (the searches meet many more)
