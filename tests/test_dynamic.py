"""Dynamically partitioned pattern databases against exact oracles: the full BFS of the 8-puzzle, optimal
3x4 distances from the Manhattan IDA*, brute-force vertex covers, from-scratch graphs along random walks,
and Korf's optimal lengths."""

from __future__ import annotations

import random
import zlib
from pathlib import Path

import numpy as np
import pytest
from conflict_graph_probe import (ProbedGraph, brute_force_cover, move_key_lookup, reference_edges,
                                  walk_against_scratch)
from conftest import examples, korf100
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import reference_ida, tile_blank_distances, true_distances

from pdbtool.heuristics.dynamic import DynamicHeuristic
from pdbtool.heuristics.vertex_cover.components import MEMO_KEYS
from pdbtool.heuristics.vertex_cover.exact_cover import min_cover
from pdbtool.heuristics.vertex_cover.layout import CMASK, G_HCOUNT, GS, HMASK, HW
from pdbtool.puzzle.board import Board
from pdbtool.search.solver import Solver, replay
from pdbtool.tables import fileformat
from pdbtool.tables.cache import TableCache
from pdbtool.tables.dynamic_sets import DYNAMIC_SETS
from pdbtool.tables.pairs_triples import (
    PAIR_BY_REGION,
    file_name,
    get_regions,
    get_set,
    groups_of,
    make_lookups,
    pair_bound,
)

SETS = DYNAMIC_SETS
# h of one set is at most h of the other on every state (fewer constraints, or smaller values)
WEAKER = [("pairs", "pairs+triples-fkh"), ("pairs+triples-fkh", "pairs+triples"),
          ("pairs+triples", "pairs+triples-region"), ("pairs", "pairs-region"),
          ("pairs-region", "pairs+triples-region")]

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


KORF = {i: korf100()[i] for i in (2, 4)}  # cheap with ddb


@pytest.fixture(scope="session")
def tables(dynamic_tables):
    """Look-ups of every set on 3x3, 4x3 and 4x4, built on first use (tests/conftest.py)."""
    return dynamic_tables


@pytest.fixture(scope="session")
def cache_dir(dynamic_tables):
    """The cache those look-ups are built in (solvers reuse their files)."""
    return dynamic_tables.cache_dir


def random_walk(board, steps, seed):
    """A state ``steps`` random moves from the goal."""
    rng = random.Random(seed)
    nb = board.neighbours()
    tiles = list(board.goal_tiles)
    blank = tiles.index(0)
    for _ in range(steps):
        q = rng.choice([int(c) for c in nb[blank] if c >= 0])
        tiles[blank], tiles[q] = tiles[q], 0
        blank = q
    return tuple(tiles)


def random_state(board, rng):
    while True:
        s = list(range(board.n))
        rng.shuffle(s)
        if board.is_solvable(s):
            return tuple(s)


def manhattan(board, states):
    md = board.manhattan_table()
    return md[states, np.arange(board.n)].sum(axis=1)


# --- admissibility -----------------------------------------------------------------------------------------

def test_admissible_on_every_8puzzle_state(tables):
    board = Board(3, 3)
    dist = true_distances(3, 3)
    states = np.array(list(dist), dtype=np.int64)
    truth = np.array(list(dist.values()))
    md = manhattan(board, states)
    h = {}
    for name in SETS:
        h[name] = md + 2 * ProbedGraph(tables[(3, 3), name]).covers(states)
        assert (h[name] <= truth).all(), f"{name}: inadmissible on {int((h[name] > truth).sum())} states"
        assert (h[name] >= md).all()
        assert ((h[name] - truth) % 2 == 0).all()  # same parity as the true distance
    for weaker, stronger in WEAKER:
        assert (h[weaker] <= h[stronger]).all(), (weaker, stronger)
    # the heuristics are informative, not just Manhattan, and each refinement adds something
    assert h["pairs"].mean() > md.mean() + 1.5
    assert h["pairs+triples"].mean() > h["pairs"].mean() + 2
    for weaker, stronger in WEAKER:
        assert (h[weaker] < h[stronger]).sum() > 50, (weaker, stronger)


def test_admissible_on_random_3x4_states(tables):
    board = Board(4, 3)
    rng = random.Random(7)
    manhattan_solver = Solver(board, heuristic="manhattan")
    states = [random_state(board, rng) for _ in range(25)]
    arr = np.array(states, dtype=np.int64)
    md = manhattan(board, arr)
    truth = np.array([manhattan_solver.solve(s).length for s in states])
    h = {}
    for name in SETS:
        h[name] = md + 2 * ProbedGraph(tables[(4, 3), name]).covers(arr)
        assert (h[name] <= truth).all(), name
        assert (h[name] >= md).all()
    for weaker, stronger in WEAKER:
        assert (h[weaker] <= h[stronger]).all(), (weaker, stronger)


# --- the vertex cover ------------------------------------------------------------------------------------------

hypergraphs = st.integers(2, 6).flatmap(lambda n: st.tuples(
    st.just(n),
    st.lists(st.tuples(st.lists(st.integers(0, n - 1), min_size=2, max_size=3, unique=True), st.integers(1, 3)),
             max_size=9)))


@given(hypergraphs)
@settings(max_examples=examples(300), deadline=None)
def test_cover_equals_brute_force(graph):
    n, edges = graph
    assert min_cover(edges, n) == brute_force_cover(edges, n)


larger_hypergraphs = st.integers(5, 8).flatmap(lambda n: st.tuples(
    st.just(n),
    st.lists(st.tuples(st.lists(st.integers(0, n - 1), min_size=2, max_size=3, unique=True), st.integers(1, 3)),
             min_size=4, max_size=16)))


@given(larger_hypergraphs)
@settings(max_examples=examples(150), deadline=None)
def test_cover_of_denser_hypergraphs_equals_brute_force(graph):
    """Graphs with cycles and shared vertices, where the reductions leave a core to branch on."""
    n, edges = graph
    assert min_cover(edges, n) == brute_force_cover(edges, n)


def test_cover_examples():
    assert min_cover([], 3) == 0
    assert min_cover([((0, 1), 1), ((1, 2), 1), ((0, 2), 1)], 3) == 2      # a triangle
    assert min_cover([((0, 1), 1), ((2, 3), 1)], 4) == 2                   # two components
    assert min_cover([((0, 1, 2), 3), ((0, 1), 1)], 3) == 3
    assert min_cover([((0, 1), 1), ((1, 2), 1), ((2, 3), 1), ((3, 4), 1)], 5) == 2  # a path
    assert min_cover([((v, (v + 1) % 5), 1) for v in range(5)], 5) == 3               # an odd cycle
    assert min_cover([((0, 1), 2), ((0, 2), 1), ((0, 3), 1)], 4) == 2                 # a star
    assert min_cover([((0, 1, 2), 2), ((0, 1), 1), ((1, 2), 1), ((2, 3), 1)], 4) == 2


def test_pair_bound_is_the_least_cover_of_a_triangle():
    for p in range(4):
        for q in range(4):
            for r in range(4):
                edges = [((0, 1), p), ((0, 2), q), ((1, 2), r)]
                assert pair_bound(p, q, r) == brute_force_cover([e for e in edges if e[1]], 3)


# --- incremental updates ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dims,name", [((4, 3), "pairs+triples"), ((4, 4), "pairs"), ((4, 4), "pairs+triples"),
                                       ((3, 3), "pairs+triples-region"), ((4, 3), "pairs+triples-region"),
                                       ((4, 4), "pairs+triples-region"), ((4, 4), "pairs+triples-fkh")])
def test_incremental_equals_from_scratch_along_random_walks(tables, dims, name):
    """A walk that, like the search, goes forward (saving what each move changed) or backtracks (restoring
    it): after every step the graph, the components and their covers equal those built from scratch."""
    board = Board(*dims)
    rng = random.Random(zlib.crc32(repr((dims, name)).encode()))
    nonzero, backtracks = walk_against_scratch(board, tables[dims, name], rng, 1500, ProbedGraph(tables[dims, name]))
    assert nonzero > 600  # the walk met real conflicts
    assert backtracks > 300


@pytest.mark.parametrize("dims,name", [((4, 4), "pairs+triples"), ((4, 4), "pairs+triples-region"),
                                       ((4, 3), "pairs-region"), ((3, 3), "pairs+triples-region")])
def test_packed_lookups_give_the_tables_edges(tables, dims, name):
    """The packed filter, records, int32 rows and table of blank masks give exactly the edges that the
    tables' own look-ups give, on random states (many with the blank cut off by a group)."""
    board = Board(*dims)
    look = tables[dims, name]
    graph = ProbedGraph(look)
    rng = random.Random(zlib.crc32(name.encode()))
    by_mask = 0
    for _ in range(300):
        tiles = list(range(board.n))
        rng.shuffle(tiles)
        graph.reset(np.array(tiles, dtype=np.int64))
        want = reference_edges(look, tiles)
        assert sorted(graph.edges()) == want
        by_mask += any(len(vs) == 3 for vs, _ in want)
    assert by_mask > 0 or "triples" not in name


@pytest.mark.parametrize("dims,name,moves", [((3, 3), "pairs+triples-region", None), ((3, 3), "pairs+triples", None),
                                             ((4, 3), "pairs-region", None), ((4, 4), "pairs+triples-region", 150)])
def test_move_lookups_hold_what_holds_with_the_blank_where_the_tile_was(tables, dims, name, moves):
    """For every move (t into c from c's neighbour m; all of them, or a random sample), the keys
    (t, c, m, u, cu) of the move look-ups hold exactly the pair units of the tables' own look-ups that hold
    with the blank in m's cell, where t came from, and between them each triple placement that holds there
    exactly once, under the key of one of its two other tiles; nothing is there for a move from off the
    board or from u's cell."""
    from pdbtool.heuristics.vertex_cover.lookups import pack_move_lookups
    from pdbtool.tables.pairs_triples import pair_units_at

    board = Board(*dims)
    look = tables[dims, name]
    n, nb = board.n, board.neighbours()
    packed = pack_move_lookups(look)
    all_moves = [(t, c, m) for t in range(1, n) for c in range(n) for m in range(4)]
    if moves is not None:
        all_moves = random.Random(7).sample(all_moves, moves)
    found = flipped = 0
    for t, c, m in all_moves:
        blank = int(nb[c, m])
        want, got = [], []
        for u in range(1, n):
            for cu in range(n):
                if u == t or cu == c:
                    continue
                key = ((t * n + c) * n + u) * n + cu
                want_units = 0
                if blank >= 0 and blank != cu:
                    want_units = int(pair_units_at(look.pair_units, look.tri_start, look.tri_ent, key, blank))
                    want += [(frozenset([(u, cu), (int(v), int(cell))]), int(units))
                             for v, cell, units, mask in look.tri_ent[look.tri_start[key]:look.tri_start[key + 1]]
                             if v and int(mask) >> blank & 1 and cell != blank]
                held = move_key_lookup(packed, n, t, c, m, u, cu)
                if held is None:
                    assert want_units == 0, (t, c, m, u, cu)
                    continue
                found += 1
                units, rows = held
                assert units == want_units, (t, c, m, u, cu)
                assert units or rows  # no key holds nothing
                got += [(frozenset([(u, cu), (v, cell)]), w) for v, cell, w in rows]
                flipped += sum(v < u for v, _, _ in rows)
        assert len(got) == len(set(got)), (t, c, m)  # no placement twice
        assert set(got) == set(want), (t, c, m)
    assert found > 100
    assert flipped > 0 or "triples" not in name  # some placements are kept under their larger tile


@pytest.mark.parametrize("dims,name", [((3, 3), "pairs+triples"), ((4, 4), "pairs+triples-region")])
def test_move_lookups_end_in_padding_that_a_last_block_of_entries_can_read(tables, dims, name):
    """try_move reads a key's entries in blocks of ENTRY_BLOCK: after the last key's entries the array holds
    ENTRY_BLOCK - 1 words of 0 (an entry that matches no cell), and nothing else."""
    from pdbtool.heuristics.vertex_cover.lookups import ENTRY_BLOCK, pack_move_lookups

    n = Board(*dims).n
    packed = pack_move_lookups(tables[dims, name])
    near = packed[:n * n * 4 * n]
    starts = near[near != 0] >> 32
    nkeys = sum(bin(int(w) & 0xFFFFFFFF).count("1") for w in near)
    records = packed[int(starts.min()):int(starts.min()) + nkeys]
    ends = (records & 0xFFFFFFFF) + ((records >> 32) & 0xFFFF)
    assert len(packed) == int(ends.max()) + ENTRY_BLOCK - 1
    assert not packed[int(ends.max()):].any()


@given(st.integers(4, 9), st.data())
@settings(max_examples=examples(60), deadline=None)
def test_orienting_triples_keeps_each_placement_once_and_never_adds_entries(n, data):
    """Each row comes back as it was or under the key of its other tile (the same placement), and the
    entries (key, other tile, units) number no more than before."""
    from pdbtool.heuristics.vertex_cover.lookups import _orient_triples

    nrows = data.draw(st.integers(0, 60))
    rows = []
    for _ in range(nrows):
        t, c, m = data.draw(st.integers(1, n - 1)), data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, 3))
        u, v = sorted(data.draw(st.lists(st.integers(1, n - 1).filter(lambda x, t=t: x != t), min_size=2, max_size=2,
                                         unique=True)))
        cu, cv = data.draw(st.lists(st.integers(0, n - 1).filter(lambda x, c=c: x != c), min_size=2, max_size=2,
                                    unique=True))
        rows.append(((((t * n + c) * 4 + m) * n + u) * n + cu, v, cv, data.draw(st.integers(1, 3))))
    rows = np.array(rows, dtype=np.int64).reshape(-1, 4)
    out = _orient_triples(rows, n)

    def placements(r):
        key, v, cv, units = r[:, 0], r[:, 1], r[:, 2], r[:, 3]
        return sorted((int(k) // (n * n), frozenset([(int(k) // n % n, int(k) % n), (int(a), int(b))]), int(w))
                      for k, a, b, w in zip(key, v, cv, units))

    def entries(r):
        return len({(int(k), int(a), int(w)) for k, a, w in zip(r[:, 0], r[:, 1], r[:, 3])})

    assert placements(out) == placements(rows)
    assert entries(out) <= entries(rows)


def test_move_lookups_keep_units_up_to_63_and_group_the_cells_of_one_v():
    """A move entry's units take six bits: 40 or 63 units come back as they were; the triples of one v with
    the same units share one entry (a mask of their cells), those with other units get their own."""
    from pdbtool.heuristics.vertex_cover.lookups import pack_move_lookups
    from pdbtool.tables.pairs_triples import DynamicTables

    board = Board(3, 3)
    n = board.n
    key = ((1 * n + 0) * n + 2) * n + 1  # tile 1 in cell 0, tile 2 in cell 1
    start = np.zeros(n ** 4 + 1, dtype=np.int64)
    start[key + 1:] = 4
    every = (1 << n) - 1
    ent = np.array([[3, 2, 40, every], [4, 4, 63, every], [4, 5, 63, every], [4, 6, 1, every]], dtype=np.int64)
    tables = DynamicTables(board, "probe", np.zeros(n ** 4, dtype=np.uint8), start, ent)
    packed = pack_move_lookups(tables)
    # moved into cell 0 from below (cell 3)
    assert move_key_lookup(packed, n, 1, 0, 3, 2, 1) == (0, [(3, 2, 40), (4, 4, 63), (4, 5, 63), (4, 6, 1)])
    record = packed[(int(packed[((1 * n + 0) * 4 + 3) * n + 2]) >> 32)]
    assert (record >> 32) & 0xFFFF == 3  # entries: (3, 40), (4, 63) with cells 4 and 5, (4, 1)


@given(seed=st.integers(0, 2 ** 32 - 1), slots=st.sampled_from([1, 2, 64, 1 << 14]),
       name=st.sampled_from(["pairs+triples", "pairs+triples-region"]))
@settings(max_examples=examples(30), deadline=None)
def test_incremental_equals_from_scratch_with_small_memos(tables, seed, slots, name):
    """Walks as above with memos of a few slots, so that entries are overwritten all the time and hits
    come from components of other tiles with the same shape: every cover still equals the fresh one."""
    board = Board(4, 4)
    memo = np.zeros((slots, MEMO_KEYS + 3), dtype=np.int64)
    walk_against_scratch(board, tables[(4, 4), name], random.Random(seed), 200,
                         ProbedGraph(tables[(4, 4), name], memo))


@pytest.mark.parametrize("name", ["pairs+triples", "pairs+triples-region"])
def test_try_move_stops_at_a_lower_bound_only_when_it_reaches_the_need(tables, name):
    """Along a random walk, every child's try_move with a need returns the exact change of the cover, or,
    with nothing pending, a value between the need and that exact change; try_move never changes the graph,
    and both lower bounds are taken on some children (only the bound of disjoint constraints settles a
    tile that has constraints before the move)."""
    board = Board(4, 4)
    look = tables[(4, 4), name]
    graph = ProbedGraph(look)
    nb = board.neighbours()
    rng = random.Random(zlib.crc32(name.encode()))
    tiles = np.array(board.goal_tiles, dtype=np.int64)
    graph.reset(tiles)
    blank = int(np.flatnonzero(tiles == 0)[0])
    bounded = bounded_with_edges = 0
    for _ in range(400):
        moves = [int(q) for q in nb[blank] if q >= 0]
        for q in moves:
            t = int(tiles[q])
            before = sorted(graph.edges())
            exact = graph.try_move(t, blank)
            assert sorted(graph.edges()) == before
            graph.revert(t)
            for need in range(-1, 4):
                got = graph.try_move(t, blank, need)
                if graph.pending or got == exact:
                    assert got == exact
                else:
                    assert need <= got <= exact
                    bounded += 1
                    bounded_with_edges += int(graph.g[CMASK, t]) != 1 << t
                assert sorted(graph.edges()) == before
                graph.revert(t)
        q = rng.choice(moves)
        t = int(tiles[q])
        graph.try_move(t, blank)
        graph.commit(t, blank)
        tiles[blank], tiles[q] = t, 0
        blank = q
    assert bounded > 20 and bounded_with_edges > 20


def test_memo_hits_across_tiles_with_the_same_shape(tables):
    """A component whose constraints are those of another one on other tiles (same order) reuses its memo
    entry, and the value is its own least cover; a component that the reductions solve (a path) needs no
    entry."""
    from pdbtool.heuristics.vertex_cover.components import _cover_of, new_memo

    graph = ProbedGraph(tables[(4, 4), "pairs"], new_memo())
    g, hl, cons, memo = graph.arrays

    def cover_of_edges(tiles, closed):
        pairs = list(zip(tiles, tiles[1:] + (tiles[:1] if closed else ())))
        for j, (a, b) in enumerate(pairs):
            hl[HMASK, j] = (1 << a) | (1 << b)
            hl[HW, j] = 1
        g[GS, G_HCOUNT] = len(pairs)
        return _cover_of(sum(1 << v for v in tiles), g, hl, cons, memo)

    assert cover_of_edges((1, 2, 3, 4, 5), closed=False) == 2  # a path of 5 vertices
    assert np.count_nonzero(memo[:, 0]) == 0
    for tiles_of_cycle in ((1, 2, 3, 4, 5), (6, 9, 10, 12, 15)):  # a cycle of 5 vertices on each: cover 3
        assert cover_of_edges(tiles_of_cycle, closed=True) == 3
    assert np.count_nonzero(memo[:, 0]) == 1  # one entry served both


# --- the search ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["pairs", "pairs+triples", "pairs+triples-region"])
def test_kernel_matches_reference_ida_on_the_8puzzle(tables, cache_dir, name):
    board = Board(3, 3)
    dist = true_distances(3, 3)
    heuristic = DynamicHeuristic(tables[(3, 3), name])
    solver = Solver(board, heuristic="ddb", dynamic=name, cache_dir=cache_dir)
    rng = random.Random(3)
    for state in rng.sample(sorted(dist), 40):
        result = solver.solve(state)
        assert result.length == dist[state]
        assert replay(board, state, result.solution) == board.goal_tiles
        length, generated, expanded = reference_ida(board, heuristic.ddb_value, state)
        assert (result.length, result.nodes_generated, result.nodes_expanded) == (length, generated, expanded)


def test_resumes_in_small_chunks(tables, cache_dir):
    board = Board(4, 3)
    solver = Solver(board, heuristic="ddb", dynamic="pairs+triples", cache_dir=cache_dir)
    state = random_walk(board, 60, 5)
    whole = solver.solve(state)
    chunked = solver.solve(state, chunk=97)
    assert (whole.length, whole.nodes_generated, whole.nodes_expanded) == \
        (chunked.length, chunked.nodes_generated, chunked.nodes_expanded)


@pytest.mark.parametrize("instance,name", [(i, name) for i in sorted(KORF) for name in
                                           ("pairs+triples", "pairs+triples-region")])
def test_korf_instances_optimal_with_ddb(tables, cache_dir, instance, name):
    state, optimal = KORF[instance]
    board = Board(4, 4)
    result = Solver(board, heuristic="ddb", dynamic=name, cache_dir=cache_dir).solve(state)
    assert result.length == optimal
    assert replay(board, state, result.solution) == board.goal_tiles


def test_max_is_at_least_either_and_optimal(tables, cache_dir):
    board = Board(4, 4)
    state, optimal = KORF[4]
    ddb = Solver(board, heuristic="ddb", dynamic="pairs+triples", cache_dir=cache_dir)
    static = Solver(board, heuristic="pdb", partition="15-5-5-5", cache_dir=cache_dir)
    both = Solver(board, heuristic="max", dynamic="pairs+triples", partition="15-5-5-5", cache_dir=cache_dir)
    rng = random.Random(11)
    tiles = list(state)
    nb = board.neighbours()
    blank = tiles.index(0)
    for _ in range(200):
        h = both.h(tiles)
        assert h == max(ddb.h(tiles), static.h(tiles))
        q = rng.choice([q for q in nb[blank] if q >= 0])
        tiles[blank], tiles[q] = tiles[q], 0
        blank = q
    result = both.solve(state)
    assert result.length == optimal
    assert result.nodes_generated <= ddb.solve(state).nodes_generated



def test_max_with_shared_tables_searches_exactly_like_direct_tables(tables, cache_dir):
    """max looks up a pattern that a board symmetry maps onto another in that one's table, as pdb does: the
    same h, node counts and solutions as with every table built (and the reflection on top)."""
    from pdbtool.heuristics.pattern_sum import PatternSum

    board = Board(4, 4)
    partition = [[2, 3, 6, 7], [8, 9, 12, 13], [1, 4, 5], [10, 11, 14, 15]]
    cache = TableCache(cache_dir)
    shared = Solver(board, heuristic="max", partition=partition, cache=cache)
    assert shared.reflect
    # {8,9,12,13} (180-degree rotation) and {10,11,14,15} (top-bottom mirror) read {2,3,6,7}'s table
    assert [s is None for s in shared.heuristic.static.shared] == [True, False, True, False]
    direct = Solver(board, heuristic="max", partition=partition, cache=cache)
    patterns = direct.heuristic.static.patterns
    direct.heuristic = DynamicHeuristic(tables[(4, 4), "pairs+triples"],
                                        PatternSum(patterns, [cache.get(p).values for p in patterns]))
    rng = random.Random(9)
    for _ in range(200):
        s = random_state(board, rng)
        assert shared.heuristic.static.parts(s) == direct.heuristic.static.parts(s)
        assert shared.h(s) == direct.h(s)
    for state in [random_walk(board, 45, seed) for seed in range(3)] + [KORF[4][0]]:
        a, b = shared.solve(state), direct.solve(state)
        assert (a.length, a.nodes_generated, a.nodes_expanded, a.solution) == \
            (b.length, b.nodes_generated, b.nodes_expanded, b.solution)
        assert replay(board, state, a.solution) == board.goal_tiles


# --- max with a catalogue or zero-aware tables: the catalogue kernel as the static part ---------------------

CAT_3X3 = "board 3x3\npartition\n1 2 3 4\n5 6 7 8\npartition\n1 4 7\n2 5 8\n3 6\n"
CAT_3X4 = "board 4x3\npartition\n1 2 3 5 6 7\n4 8 9 10 11\npartition\n1 2 3 4\n5 6 7 8\n9 10 11\n"


def _catalogue_max(board, text, blank, cache, lazy=True, **options):
    from pdbtool.tables.partitions import parse_catalogue

    solver = Solver(board, heuristic="max", partition=parse_catalogue(text, "t"), blank=blank, cache=cache,
                    **options)
    getattr(solver.heuristic, "heuristic", solver.heuristic).static.lazy = lazy
    return solver


def test_max_with_a_catalogue_on_8puzzle_states(tables, cache_dir):
    """h is the larger of the catalogue's and ddb's, never above the true distance; the searches are optimal,
    generate no more than either alone, and decide as the catalogue's plain evaluation does."""
    from pdbtool.tables.partitions import parse_catalogue

    board = Board(3, 3)
    dist = true_distances(3, 3)
    cache = TableCache(cache_dir)
    both = _catalogue_max(board, CAT_3X3, "zero-aware", cache)
    assert both.label == "max(t+reflect zero-aware, ddb-pairs+triples)"
    plain = _catalogue_max(board, CAT_3X3, "zero-aware", cache, lazy=False)
    catalogue = Solver(board, partition=parse_catalogue(CAT_3X3, "t"), blank="zero-aware", cache=cache)
    ddb = Solver(board, heuristic="ddb", cache=cache)
    rng = random.Random(5)
    above = 0
    for state in rng.sample(sorted(dist), 1500):
        h = both.h(state)
        assert h == max(catalogue.h(state), ddb.h(state)) <= dist[state]
        above += h > catalogue.h(state)
    assert above > 100  # ddb adds something on this board
    for state in rng.sample(sorted(dist), 40):
        a, b = both.solve(state), plain.solve(state)
        assert a.length == dist[state]
        assert replay(board, state, a.solution) == board.goal_tiles
        assert (a.length, a.nodes_generated, a.nodes_expanded, a.solution) == \
            (b.length, b.nodes_generated, b.nodes_expanded, b.solution)
        assert a.nodes_generated <= min(catalogue.solve(state).nodes_generated, ddb.solve(state).nodes_generated)


@pytest.mark.parametrize("blank", ["zero-aware", "minimized"])
@pytest.mark.parametrize("pruning", ["parent", "fsm"])
def test_max_with_a_catalogue_on_3x4_states(tables, cache_dir, blank, pruning):
    board = Board(4, 3)
    cache = TableCache(cache_dir)
    both = _catalogue_max(board, CAT_3X4, blank, cache, pruning=pruning)
    plain = _catalogue_max(board, CAT_3X4, blank, cache, lazy=False, pruning=pruning)
    exact = Solver(board, heuristic="manhattan")
    rng = random.Random(13)
    for _ in range(4):
        state = random_state(board, rng)
        a, b = both.solve(state), plain.solve(state)
        assert a.length == exact.solve(state).length
        assert (a.nodes_generated, a.solution) == (b.nodes_generated, b.solution)


def test_max_with_zero_aware_tables_threads_and_the_one_partition_catalogue(tables, cache_dir):
    """A zero-aware partition takes the zero-aware pattern sum (as ``pdb`` does), a catalogue of that one
    partition the catalogue kernel: the same counts and solutions; a threaded search the same length and
    counts."""
    from pdbtool.heuristics.catalogue import CatalogueSum
    from pdbtool.heuristics.zero_aware_sum import ZeroAwareSum
    from pdbtool.tables.partitions import parse_catalogue

    board = Board(4, 4)
    cache = TableCache(cache_dir)
    plain = Solver(board, heuristic="max", partition="15-5-5-5", blank="zero-aware", cache=cache, pruning="fsm")
    assert isinstance(plain.heuristic.heuristic.static, ZeroAwareSum)
    one = Solver(board, heuristic="max", partition=parse_catalogue("board 4x4\npartition 15-5-5-5\n", "t"),
                 blank="zero-aware", cache=cache, pruning="fsm")
    threaded = Solver(board, heuristic="max", partition="15-5-5-5", blank="zero-aware", cache=cache,
                      pruning="fsm", search_threads=2)
    for ident in sorted(KORF):
        state, optimal = KORF[ident]
        a, b, c = plain.solve(state), one.solve(state), threaded.solve(state)
        assert isinstance(one.heuristic.heuristic.static, CatalogueSum)
        assert a.length == optimal
        assert (a.nodes_generated, a.solution) == (b.nodes_generated, b.solution)
        assert (c.length, c.nodes_generated) == (a.length, a.nodes_generated)


def test_catalogues_and_zero_aware_tables_refuse_compact_encodings(tables, cache_dir):
    from pdbtool.search.solver import SolverError
    from pdbtool.tables.encodings import EncodingError

    with pytest.raises(SolverError, match="applies to --heuristic pdb only, not max"):
        Solver(Board(4, 4), heuristic="max", partition="15-5-5-5", blank="zero-aware", encoding="nibble",
               cache_dir=cache_dir)
    with pytest.raises(EncodingError, match="zero-aware tables are byte tables only"):
        Solver(Board(4, 4), partition="15-5-5-5", blank="zero-aware", encoding="nibble", cache_dir=cache_dir)
    with pytest.raises(SolverError, match="go with --heuristic pdb or max and byte tables"):
        Solver(Board(4, 4), partition=str(EXAMPLES / "15-cat-3.txt"), encoding="nibble", cache_dir=cache_dir)


# --- the table files --------------------------------------------------------------------------------------------

def test_table_file_header_and_damage(tmp_path):
    board = Board(3, 3)
    cache = TableCache(tmp_path)
    pairs = np.array(get_set(cache, board, 2, jobs=1))  # a copy: the file is damaged in place below
    path = tmp_path / file_name(board, 2)
    header, _ = fileformat.read_header(path)
    assert header["kind"] == "dynamic" and header["group_size"] == 2 and header["groups"] == 28
    assert header["entries"] == 28 * 72 and "description" in header
    assert fileformat.checksum_ok(path)
    # a flipped payload byte is caught by the checksum; the file is moved aside and rebuilt
    raw = bytearray(path.read_bytes())
    raw[-20] ^= 0xFF
    path.write_bytes(bytes(raw))
    notes = []
    cache = TableCache(tmp_path, notify=notes.append)
    again = get_set(cache, board, 2, jobs=1)
    assert np.array_equal(np.asarray(again), np.asarray(pairs))
    assert any("damaged" in n for n in notes)
    assert list(tmp_path.glob("*.corrupt-*"))


def test_lookups_match_the_tables(tables):
    """Every stored pair excess and every stored triple entry is what the per-group table says."""
    from itertools import combinations

    from pdbtool.tables.build import build_table
    from pdbtool.tables.ranking import TilePattern

    board = Board(4, 3)
    look = tables[(4, 3), "pairs+triples"]
    n = board.n
    md = board.manhattan_table()
    rng = random.Random(1)
    for tiles in rng.sample(list(combinations(range(1, n), 2)), 8):
        pattern = TilePattern(board, tiles)
        values = build_table(pattern, "minimized", threads=1).table
        for r in range(pattern.entries):
            cells = pattern.unrank(r)
            ex = int(values[r]) - sum(md[t, c] for t, c in zip(tiles, cells))
            (a, b), (ca, cb) = tiles, cells
            assert look.pair_units[((a * n + ca) * n + b) * n + cb] * 2 == ex
    assert look.triples_stored > 0
    assert make_lookups(board, "pairs", np.zeros((55, 132), np.uint8), None).triples_stored == 0


def abstract_distances(board, tiles):
    """{(cells of the tiles, blank cell): least number of moves of the tiles to the goal} (the blank in its
    goal cell)."""
    return tile_blank_distances(board, tiles, (board.goal_tiles.index(0),))


def test_region_values_match_an_exact_search(tables, cache_dir):
    """On 3x3, for every pair and some triples, every placement and every blank cell: the value by the
    blank's region (the region rows, else the minimized table) is the exact distance of the tiles and the
    blank, and the least over the regions is the minimized value."""
    from pdbtool.tables.pairs_triples import pair_units_at
    from pdbtool.tables.ranking import TilePattern

    board = Board(3, 3)
    n = board.n
    md = board.manhattan_table()
    cache = TableCache(cache_dir)
    look = tables[(3, 3), "pairs-region"]
    rng = random.Random(4)
    by_region = 0
    for k in (2, 3):
        excess = np.asarray(get_set(cache, board, k, jobs=1))
        rows = np.asarray(get_regions(cache, board, k, jobs=1))
        groups = groups_of(board, k)
        picked = range(len(groups)) if k == 2 else rng.sample(range(len(groups)), 6)
        for gi in picked:
            tiles = groups[gi]
            pattern = TilePattern(board, tiles)
            mine = rows[rows[:, 0] == gi]
            for (cells, blank), d in abstract_distances(board, tiles).items():
                exact = d - sum(int(md[t, c]) for t, c in zip(tiles, cells))
                r = pattern.rank(cells)
                listed = [int(e) for _, rr, mask, e in mine if rr == r and int(mask) >> blank & 1]
                assert len(listed) <= 1
                value = listed[0] if listed else int(excess[gi, r])
                assert value == exact, (tiles, cells, blank)
                assert int(excess[gi, r]) <= exact
                by_region += bool(listed)
                if k == 2:
                    (a, b), (ca, cb) = tiles, cells
                    key = ((a * n + ca) * n + b) * n + cb
                    assert 2 * pair_units_at(look.pair_units, look.tri_start, look.tri_ent, key, blank) == exact
            for r in set(int(x) for x in mine[:, 1]):
                assert min(int(e) for _, rr, _, e in mine if rr == r) == int(excess[gi, r])
    assert by_region > 100
    assert (look.pair_units == PAIR_BY_REGION).any()


# --- the command line -------------------------------------------------------------------------------------------

def test_cli_build_and_solve(tmp_path):
    import json

    from click.testing import CliRunner

    from pdbtool.cli.main import cli

    runner = CliRunner()
    built = runner.invoke(cli, ["build", "--dynamic", "pairs", "--board", "3x3", "--cache-dir", str(tmp_path),
                                "--json"])
    assert built.exit_code == 0, built.output
    record = json.loads(built.output.splitlines()[0])
    assert record["set"] == "pairs" and record["groups"] == 28 and record["built"]
    solved = runner.invoke(cli, ["solve", str(EXAMPLES / "8puzzle.txt"), "--heuristic", "ddb", "--dynamic", "pairs",
                                 "--cache-dir", str(tmp_path), "--format", "json"])
    assert solved.exit_code == 0, solved.output
    rows = [json.loads(line) for line in solved.output.splitlines() if line.startswith("{")]
    per_instance = [r for r in rows if not r.get("summary")]
    assert per_instance and all(r["solved"] and r["error"] is None for r in per_instance)
    assert all(r["heuristic"] == "ddb-pairs" for r in per_instance)
    wrong = runner.invoke(cli, ["solve", str(EXAMPLES / "8puzzle.txt"), "--dynamic", "pairs"])
    assert wrong.exit_code == 2 and "--dynamic applies to" in wrong.output
    regions = runner.invoke(cli, ["build", "--dynamic", "pairs-region", "--board", "3x3", "--cache-dir",
                                  str(tmp_path), "--json"])
    assert regions.exit_code == 0, regions.output
    records = [json.loads(line) for line in regions.output.splitlines()]
    assert [r["set"] for r in records] == ["pairs", "pairs-regions"]
    assert not records[0]["built"] and records[1]["built"] and records[1]["rows"] > 0
    text = runner.invoke(cli, ["build", "--dynamic", "pairs-region", "--board", "3x3", "--cache-dir", str(tmp_path)])
    assert text.exit_code == 0 and "region values, cached" in text.output, text.output
    mixed = runner.invoke(cli, ["build", "--dynamic", "pairs", "--partition", "15-7-8"])
    assert mixed.exit_code == 1 and "do not combine" in mixed.output
