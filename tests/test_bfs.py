"""The two builders against exact oracles: plain BFS over the real puzzle and over the abstraction."""

import functools
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from oracle import abstract_distances, true_distances
from pdbtool.puzzle.board import Board
from pdbtool.tables.build import build_table
from pdbtool.tables.ranking import TilePattern, manhattan_of_ranks, rank_many


@pytest.mark.parametrize("w,h,diameter", [(3, 3, 31), (2, 4, 36)])
@pytest.mark.parametrize("blank", ["minimized", "ignored"])
def test_pattern_of_all_tiles_gives_true_distances(w, h, diameter, blank):
    board = Board(w, h)
    pattern = TilePattern(board, tuple(range(1, board.n)))
    table = build_table(pattern, blank).table
    truth = true_distances(w, h)
    assert max(truth.values()) == diameter
    for state, d in truth.items():
        assert table[pattern.rank_state(state)] == d
    # the other half of the permutations is unreachable
    assert int((table == 255).sum()) == pattern.entries - len(truth)


@pytest.mark.parametrize("w,h,tiles", [
    (3, 3, (1, 2, 3)), (3, 3, (2, 4, 6, 8)), (3, 3, (1, 5, 6, 8)), (2, 4, (1, 2, 3)), (3, 4, (1, 2, 3, 4)),
    (4, 3, (5, 6, 7)), (4, 8, (30, 31)), (4, 8, (1, 2, 3)), (5, 5, (1, 2, 5)), (3, 7, (20, 19, 1)),
])
@pytest.mark.parametrize("blank", ["minimized", "ignored"])
def test_builders_match_an_independent_search_of_the_abstraction(w, h, tiles, blank):
    board = Board(w, h)
    pattern = TilePattern(board, tiles)
    table = build_table(pattern, blank).table
    expected = abstract_distances(board, tiles, blank)
    assert len(expected) == pattern.entries
    for cells, d in expected.items():
        assert table[pattern.rank(cells)] == d


def test_other_goal():
    board = Board.parse("3x3", "blank-last")
    pattern = TilePattern(board, tuple(range(1, 9)))
    table = build_table(pattern, "minimized").table
    truth = true_distances(3, 3, board.goal)
    for state, d in list(truth.items())[::97]:
        assert table[pattern.rank_state(state)] == d


PARTITIONS_3X3 = [((1, 2, 3, 4), (5, 6, 7, 8)), ((1, 2, 3), (4, 5, 6), (7, 8)), ((1, 4, 7), (2, 5, 8), (3, 6))]


def _states_and_distances(w, h):
    truth = true_distances(w, h)
    states = np.array(list(truth.keys()), dtype=np.int64)
    return states, np.array(list(truth.values()), dtype=np.int64)


def _ranks_of_states(pattern, states):
    where = np.argsort(states, axis=1)  # where[s, t] = cell of tile t
    return rank_many(np.ascontiguousarray(where[:, list(pattern.tiles)]), pattern.n)


@pytest.mark.parametrize("groups", PARTITIONS_3X3)
def test_every_real_state_3x3_admissible_and_ordered(groups):
    board = Board(3, 3)
    states, truth = _states_and_distances(3, 3)
    total_min = np.zeros(len(states), dtype=np.int64)
    total_ign = np.zeros(len(states), dtype=np.int64)
    for tiles in groups:
        pattern = TilePattern(board, tiles)
        ranks = _ranks_of_states(pattern, states)
        minimized = build_table(pattern, "minimized").table[ranks].astype(np.int64)
        ignored = build_table(pattern, "ignored").table[ranks].astype(np.int64)
        assert (ignored <= minimized).all()
        total_min += minimized
        total_ign += ignored
    md = board.manhattan_table()
    manhattan = md[states, np.arange(board.n)].sum(axis=1)
    assert (manhattan <= total_ign).all()
    assert (total_ign <= total_min).all()
    assert (total_min <= truth).all()


def _move_differences(board, pattern, table):
    """|h(P) - h(P')| over every real move of a pattern tile (a tile slides into the adjacent blank)."""
    nb = board.neighbours()
    worst = 0
    for r in range(pattern.entries):
        cells = list(pattern.unrank(r))
        occupied = set(cells)
        for i, c in enumerate(cells):
            for q in nb[c]:
                if q >= 0 and q not in occupied:
                    moved = cells[:i] + [int(q)] + cells[i + 1:]
                    worst = max(worst, abs(int(table[r]) - int(table[pattern.rank(moved)])))
    return worst


@pytest.mark.parametrize("w,h,tiles", [(3, 3, (1, 2, 3, 4)), (3, 4, (1, 2, 3, 4)), (3, 4, (6, 7, 10, 11))])
def test_ignored_tables_are_consistent_and_below_minimized(w, h, tiles):
    board = Board(w, h)
    pattern = TilePattern(board, tiles)
    ignored = build_table(pattern, "ignored").table
    minimized = build_table(pattern, "minimized").table
    assert (ignored <= minimized).all()
    assert _move_differences(board, pattern, ignored) == 1


def test_minimized_tables_are_admissible_but_not_always_consistent():
    # The least distance over blank regions may fall by more than one when a tile moves: the new
    # placement can have another blank region much closer to the goal. Admissibility still holds
    # (checked on every real state above); what the search may assume is documented in the README.
    board = Board(3, 3)
    pattern = TilePattern(board, (1, 2, 3))
    assert _move_differences(board, pattern, build_table(pattern, "minimized").table) > 1


PARALLEL_CHECK = textwrap.dedent("""
    import json, sys
    import numba
    from pdbtool.tables.build import build_table
    from pdbtool.tables.build.scheduling import block_size
    from pdbtool.puzzle.board import Board
    from pdbtool.tables.ranking import TilePattern
    threads = 4
    assert numba.config.NUMBA_NUM_THREADS == threads
    out = []
    for w, h, tiles in json.loads(sys.argv[1]):
        pattern = TilePattern(Board(w, h), tuple(tiles))
        assert pattern.entries // block_size(pattern.entries, threads) >= 3 * threads  # several blocks each
        for blank in ("minimized", "ignored"):
            one = build_table(pattern, blank, threads=1)
            many = build_table(pattern, blank, threads=threads)
            out.append([w, h, blank, one.table.tobytes() == many.table.tobytes(), one.layers == many.layers])
    print(json.dumps(out))
""")


def test_parallel_build_equals_single_thread_build():
    # Four threads even on a one-CPU machine (Numba runs more threads than cores when told to at start),
    # so that a race in the parallel steps can show up wherever the test runs.
    boards = [(4, 4, (1, 2, 4, 5, 8)), (3, 4, (1, 2, 3, 4, 5, 6)), (5, 2, (1, 2, 3, 4, 5, 6))]
    env = dict(os.environ, NUMBA_NUM_THREADS="4")
    proc = subprocess.run([sys.executable, "-c", PARALLEL_CHECK, json.dumps(boards)], capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(results) == len(boards) * 2
    for w, h, blank, same_table, same_layers in results:
        assert same_table and same_layers, (w, h, blank)


DISPENSER_CHECK = textwrap.dedent("""
    import json, sys
    import numba
    import numpy as np
    from numba import njit, prange
    from pdbtool._native.intrinsics import atomic_add_u64
    from pdbtool.tables.build.scheduling import block_dispenser, next_block

    @njit(parallel=True)
    def hand_out(nblocks, workers, spin_limit):
        # the builders' worker loop: each block counts its takers; the worker holding block 0 waits
        # (at most spin_limit atomic reads) until the others have taken every other block
        dispenser = block_dispenser(0)
        takers = np.zeros(nblocks, dtype=np.uint64)
        taken_by = np.zeros(workers, dtype=np.int64)
        waited = np.zeros(1, dtype=np.int64)
        for worker in prange(workers):
            while True:
                b = next_block(dispenser)
                if b >= nblocks:
                    break
                atomic_add_u64(takers, b, 1)
                taken_by[worker] += 1
                if b == 0:
                    spins = 0
                    while atomic_add_u64(dispenser, 0, 0) < nblocks and spins < spin_limit:
                        spins += 1
                    waited[0] = spins
        return takers, taken_by, waited[0], dispenser[0]

    workers = numba.config.NUMBA_NUM_THREADS
    nblocks, rounds = int(sys.argv[1]), int(sys.argv[2])
    report = {"workers": workers, "rounds": rounds, "takers_not_one": 0, "bad_counter": 0, "block_0_in_the_way": 0}
    for _ in range(rounds):
        takers, taken_by, spins, counter = hand_out(nblocks, workers, 10**10)
        report["takers_not_one"] += int((takers != 1).sum()) + int(taken_by.sum() != nblocks)
        # every worker's last take found the dispenser empty
        report["bad_counter"] += int(counter != nblocks + workers)
        # dynamic: the other workers took every remaining block while one worker held block 0
        report["block_0_in_the_way"] += int(spins >= 10**10)
    print(json.dumps(report))
""")


def test_block_dispenser_hands_out_every_block_exactly_once():
    # Eight threads whatever the machine's cores, so that racing takers can show up even on one CPU;
    # rounds of a million one-step blocks keep the counter as contended as it gets.
    env = dict(os.environ, NUMBA_NUM_THREADS="8")
    proc = subprocess.run([sys.executable, "-c", DISPENSER_CHECK, "1000000", "20"], capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result == {"workers": 8, "rounds": 20, "takers_not_one": 0, "bad_counter": 0, "block_0_in_the_way": 0}


@pytest.mark.parametrize("w,h,tiles", [(3, 3, (1, 2, 3)), (3, 3, (2, 4, 6, 8)), (4, 3, (5, 6, 7)), (2, 4, (1, 2, 3))])
def test_minimized_layers_count_every_placement_and_blank_region(w, h, tiles):
    # every (placement, blank region) pair of these patterns is reachable: the layers count each once
    board = Board(w, h)
    pattern = TilePattern(board, tiles)
    regions = 0
    for r in range(pattern.entries):
        cells = pattern.unrank(r)
        free = [c for c in range(board.n) if c not in cells]
        regions += len({pattern.blank_region(cells, c) for c in free})
    assert sum(build_table(pattern, "minimized").layers) == regions


def test_progress_reports_each_layer_and_the_fraction_done():
    calls = []
    pattern = TilePattern(Board(3, 3), (1, 2, 3))
    for blank in ("minimized", "ignored"):
        calls.clear()
        result = build_table(pattern, blank, progress=lambda *a: calls.append(a))
        assert [c[1] for c in calls] == result.layers
        assert [c[0] for c in calls] == list(range(len(result.layers)))
        done = [c[2] for c in calls]
        assert done == sorted(done) and 0 < done[0] < done[-1] == 1.0


@pytest.mark.parametrize("blank", ["minimized", "ignored"])
def test_values_exceed_manhattan_by_an_even_amount(blank):
    board = Board(4, 4)
    pattern = TilePattern(board, (9, 12, 13, 14, 15))
    table = build_table(pattern, blank).table
    m = manhattan_of_ranks(np.arange(pattern.entries), pattern.n, pattern.k, pattern.md_rows())
    assert (table >= m).all()
    assert ((table - m) % 2 == 0).all()
    assert table[pattern.goal_rank()] == 0


def test_layers_count_every_abstract_state():
    board = Board(3, 3)
    pattern = TilePattern(board, (1, 2, 3))
    result = build_table(pattern, "ignored")
    assert sum(result.layers) == pattern.entries
    assert len(result.layers) == int(result.table.max()) + 1


@functools.cache
def _unrank_mismatches():
    """The kernel of :func:`test_incremental_unrank_follows_any_increasing_ranks`, made once per process
    (one made inside the test is a new kernel, compiled again, for each case)."""
    from numba import njit

    from pdbtool.tables.build.moves import unrank_next
    from pdbtool.tables.build.scheduling import block_scratch
    from pdbtool.tables.ranking import unrank_digits

    @njit
    def mismatches(ranks, n, k, inverses, weights):
        cells, digits, prefix, _a, _b, _c, cellw = block_scratch(n, k, 1)
        ref_cells, ref_digits, ref_prefix = np.empty(k, np.int64), np.empty(k, np.int64), np.empty(k, np.uint64)
        full = (np.uint64(1) << np.uint64(n)) - np.uint64(1)
        run_start = -ranks.shape[0] - (1 << 40)
        bad = 0
        for r in ranks:
            occupied, run_start = unrank_next(r, run_start, n, k, inverses, weights, cells, digits, prefix,
                                               cellw, full)
            ref = unrank_digits(r, n, k, inverses, ref_cells, ref_digits, ref_prefix)
            ok = occupied == ref and run_start == r - ref_digits[k - 1]
            for i in range(k):
                ok = ok and cells[i] == ref_cells[i] and cellw[ref_cells[i]] == weights[i]
            ok = ok and np.count_nonzero(cellw) == k
            bad += not ok
        return bad

    return mismatches


@pytest.mark.parametrize("w,h,k", [(4, 4, 7), (5, 5, 3), (3, 3, 2), (4, 4, 1)])
def test_incremental_unrank_follows_any_increasing_ranks(w, h, k):
    """``unrank_next`` (last tile only within a run, last two within a group of runs, else a full unrank)
    gives the cells, the occupied mask and the cell weights of a full unrank, along increasing ranks with
    steps of every size: within a run, within a group, and beyond."""
    from pdbtool.tables.ranking import radix_inverses, rank_weights

    n = w * h
    entries = int(np.prod(np.arange(n - k + 1, n + 1)))
    run = n - k + 1
    rng = np.random.default_rng(k)
    steps = rng.choice([1, 2, run - 1, run, run + 1, run * run, run * (run + 1), 7 * run * run + 3], 4000)
    ranks = np.cumsum(steps) % entries
    ranks = np.sort(ranks)
    assert _unrank_mismatches()(ranks, n, k, radix_inverses(n, k), rank_weights(n, k)) == 0
