"""Duplicate-path pruning (the move automaton) against full searches of small boards, threads against serial,
and the driver's defence in depth (h below zero, the stack's end, a solution that contradicts the heuristic)."""

from __future__ import annotations

import random
from collections import deque

import numpy as np
import pytest

from pdbtool.errors import PdbtoolError
from pdbtool.heuristics.linear_conflict import LinearConflict
from pdbtool.heuristics.manhattan import Manhattan
from pdbtool.puzzle.board import Board
from pdbtool.search.driver import FOUND, ITERATION_DONE, R_BOUND, RUNNING, Search, SearchFault
from pdbtool.search.automata import automaton_for, with_pruning
from pdbtool.search.move_automaton import PRUNED, PruningError, build_automaton
from pdbtool.search.parallel import parallel_search
from pdbtool.search.solution_check import check_solution, is_consistent
from pdbtool.search.solver import Solver, replay
from pdbtool.search.units import search_unit, split_iteration
from pdbtool.tables.build import build_table
from pdbtool.tables.ranking import TilePattern

from oracle import true_distances
from test_large_boards import random_state


def _apply(nb, tiles, blank, m):
    q = int(nb[blank, m])
    t = list(tiles)
    t[blank], t[q] = t[q], 0
    return tuple(t), q


def _pruned_bfs(board, automaton, start):
    """Distances from ``start`` when each state is expanded once, along its first path in (length, move
    order), through the moves neither the parent rule nor the automaton prunes."""
    nb = board.neighbours()
    blank = start.index(0)
    dist = {start: 0}
    queue = deque([(start, blank, -1, automaton.start(blank))])
    while queue:
        tiles, b, last, s = queue.popleft()
        for m in range(4):
            if nb[b, m] < 0 or m + last == 3:
                continue
            nxt = int(automaton.table[s, m])
            if nxt == PRUNED:
                continue
            child, q = _apply(nb, tiles, b, m)
            if child not in dist:
                dist[child] = dist[tiles] + 1
                queue.append((child, q, m, nxt))
    return dist


def _true_from(board, start):
    nb = board.neighbours()
    dist = {start: 0}
    queue = deque([(start, start.index(0))])
    while queue:
        tiles, b = queue.popleft()
        for m in range(4):
            if nb[b, m] >= 0:
                child, q = _apply(nb, tiles, b, m)
                if child not in dist:
                    dist[child] = dist[tiles] + 1
                    queue.append((child, q))
    return dist


@pytest.mark.parametrize("dims,depth", [("2x3", 12), ("3x2", 16), ("2x4", 14), ("4x2", 10),
                                        pytest.param("3x3", 12, marks=pytest.mark.slow),
                                        pytest.param("3x3", 16, marks=pytest.mark.slow)])
def test_the_smallest_path_to_every_state_survives(dims, depth):
    """Full BFS of the real puzzle from several starts (blank in each kind of cell): every state is reached
    at its true distance through the moves the automaton leaves, so it never prunes the only shortest path."""
    board = Board.parse(dims)
    automaton = build_automaton(board, depth)
    assert automaton.duplicates > 0
    rng = random.Random(depth)
    starts = [tuple(board.goal_tiles)]
    truth0 = _true_from(board, starts[0])
    starts += rng.sample(sorted(truth0), 1 if board.n > 8 else 3)
    for start in starts:
        truth = truth0 if start == starts[0] else _true_from(board, start)
        assert _pruned_bfs(board, automaton, start) == truth, start


def test_surviving_sequences_are_the_distinct_states_on_the_8_puzzle():
    """With duplicates of up to L moves, the paths of d <= L moves that survive are exactly one per state at
    distance d (each state's smallest path); beyond L some duplicates survive, but never fewer paths than
    states and far fewer than under the parent rule alone."""
    board = Board(3, 3)
    L = 14
    automaton = build_automaton(board, L)
    nb = board.neighbours()
    start = tuple(board.goal_tiles)
    truth = _true_from(board, start)
    states_at = np.bincount(list(truth.values()))
    top = L + 4
    surviving = np.zeros(top + 1, dtype=np.int64)
    parent_only = np.zeros(top + 1, dtype=np.int64)

    def walk(b, last, s, d, fsm_alive):
        if fsm_alive:
            surviving[d] += 1
        parent_only[d] += 1
        if d == top:
            return
        for m in range(4):
            if nb[b, m] < 0 or m + last == 3:
                continue
            nxt = int(automaton.table[s, m]) if fsm_alive else PRUNED
            if not fsm_alive and d >= L:
                continue  # the parent rule's count beyond L is not needed
            walk(int(nb[b, m]), m, nxt, d + 1, fsm_alive and nxt != PRUNED)

    walk(start.index(0), -1, automaton.start(start.index(0)), 0, True)
    assert list(surviving[:L + 1]) == list(states_at[:L + 1])
    assert (surviving[L + 1:] >= states_at[L + 1:top + 1]).all()
    assert (surviving[L + 1:] > states_at[L + 1:top + 1]).any()   # duplicates longer than L remain
    assert (parent_only[6:L + 1] > surviving[6:L + 1]).all()  # the first duplicates have 6 moves


def test_ida_with_pruning_finds_every_optimal_length():
    """IDA* (Manhattan) with the automaton against BFS: every state of 2x3, samples of 2x4 and the 8-puzzle
    with the farthest states; always fewer or as many nodes as the parent rule alone, and fewer in all."""
    for dims, sample in (("2x3", None), ("2x4", 300), ("3x3", 40)):
        board = Board.parse(dims)
        dist = true_distances(board.width, board.height, board.goal)
        states = sorted(dist)
        if sample is not None:
            top = max(dist.values())
            states = random.Random(5).sample(states, sample) + [s for s in states if dist[s] == top][:4]
        fsm = Solver(board, heuristic="manhattan", pruning="fsm")
        parent = Solver(board, heuristic="manhattan")
        fewer = 0
        for state in states:
            r = fsm.solve(state)
            assert r.length == dist[state], (dims, state)
            assert replay(board, state, r.solution) == board.goal_tiles
            p = parent.solve(state)
            assert r.nodes_generated <= p.nodes_generated
            fewer += r.nodes_generated < p.nodes_generated
        assert fewer > len(states) // 4, dims


def test_threads_count_as_serial_with_pruning():
    """Every iteration cut into units (the automaton's state at each unit's root recomputed from its path):
    the finished iterations count exactly the serial iterations' nodes, and the length is the same."""
    board = Board(4, 4)
    state = _random_walk(board, 70, seed=4)
    heuristic = with_pruning(Manhattan(board), "fsm")
    serial = Search(heuristic, state, one_iteration=True)
    per_iteration = []
    while True:
        status = serial.step(1 << 40)
        if status == FOUND:
            break
        assert status == ITERATION_DONE
        per_iteration.append((serial.bound, serial.generated, serial.expanded))
    out = parallel_search(heuristic, state, serial.h0, threads=3, serial_below=0, frontier_per_thread=8)
    assert len(out.moves) == len(serial.moves())
    assert len(out.finished) == len(per_iteration) >= 2
    # the serial registers hold the next bound between iterations; compare the counts
    assert [f[1:] for f in out.finished] == [p[1:] for p in per_iteration]
    # and the units of one iteration add up to the serial iteration
    bound = len(serial.moves()) - 2  # an iteration that does not reach the goal
    units, top = split_iteration(heuristic, state, bound, 40)
    assert len(units) >= 40
    results = [search_unit(heuristic, state, u) for u in units]
    whole = Search(heuristic, state, bound=bound, one_iteration=True)
    assert whole.step(1 << 40) == ITERATION_DONE
    assert top.generated + sum(r.generated for r in results) == whole.generated
    # without the path the units would prune less: the path matters
    plain = [Search(heuristic, _root(board, state, u.path), bound=u.bound - len(u.path),
                    root_prev=u.path[-1], one_iteration=True) for u in units]
    for s in plain:
        assert s.step(1 << 40) == ITERATION_DONE
    assert top.generated + sum(s.generated for s in plain) > whole.generated


def _random_walk(board, moves, seed):
    rng = random.Random(seed)
    nb = board.neighbours()
    tiles, blank = tuple(board.goal_tiles), board.goal_tiles.index(0)
    for _ in range(moves):
        tiles, blank = _apply(nb, tiles, blank, rng.choice([m for m in range(4) if nb[blank, m] >= 0]))
    return tiles


def _root(board, state, path):
    from pdbtool.search.units import apply_path

    return apply_path(board.neighbours(), state, path)


def test_the_automaton_is_per_board_and_cached():
    a = automaton_for(Board(4, 4))
    assert automaton_for(Board.parse("4x4", "blank-last")) is a  # the goal does not matter
    assert a.table.dtype == np.int32 and a.table.shape[1] == 4
    assert (a.table[:16] != PRUNED).any()
    # moves off the board are never possible
    nb = Board(4, 4).neighbours()
    assert all(a.table[c, m] == PRUNED for c in range(16) for m in range(4) if nb[c, m] < 0)
    with pytest.raises(PruningError):
        build_automaton(Board(3, 3), 1)
    with pytest.raises(PdbtoolError, match="choose parent or fsm"):
        Solver(Board(3, 3), heuristic="manhattan", pruning="all")
    # a path with a duplicate cannot be a unit's path
    with pytest.raises(PruningError):
        build_automaton(Board(3, 3), 8).run(4, [1, 0, 2, 3, 1, 0])  # 1.5 turns around a block: the larger way
    assert build_automaton(Board(3, 3), 8).run(4, [0, 1, 3, 2, 0, 1]) >= 0  # the smaller way survives


def test_colliding_keys_build_the_same_automaton(monkeypatch):
    """The enumeration finds arrangements by their Zobrist keys, but only equal rows make a duplicate: with
    every key equal (each lookup meets every earlier arrangement) the automaton is the same."""
    from pdbtool.search import move_automaton

    for dims, depth in (("3x3", 10), ("2x4", 12)):
        board = Board.parse(dims)
        expected = build_automaton(board, depth)
        with monkeypatch.context() as m:
            m.setattr(move_automaton, "_zobrist", lambda cells: np.zeros((cells, cells), dtype=np.int64))
            colliding = build_automaton(board, depth)
        assert colliding.duplicates == expected.duplicates
        assert np.array_equal(colliding.table, expected.table) and np.array_equal(colliding.starts, expected.starts)


def test_a_deeper_automaton_prunes_more_and_keeps_the_lengths(tmp_path):
    """``fsm_depth`` (``--fsm-depth``): the duplicates of up to L moves; a deeper automaton holds every
    duplicate of a shallower one, so it never generates more nodes, and the lengths stay optimal."""
    board = Board(4, 4)
    nb = board.neighbours()
    rng = random.Random(7)
    # a test's own cache: an automaton of 14 moves is kept in one
    solvers = {d: Solver(board, heuristic="manhattan", pruning="fsm", fsm_depth=d, cache_dir=tmp_path)
               for d in (8, 10, 14)}
    assert [solvers[d].heuristic.automaton.depth for d in (8, 10, 14)] == [8, 10, 14]
    fewer = tried = 0
    while tried < 3:
        state, blank = tuple(board.goal_tiles), board.goal_tiles.index(0)
        for _ in range(150):  # a random walk
            m = rng.choice([m for m in range(4) if nb[blank, m] >= 0])
            state, blank = _apply(nb, state, blank, m)
        if not 26 <= solvers[8].h(state) <= 34:  # far enough for duplicates of 9 to 14 moves, quick enough
            continue
        tried += 1
        runs = [solvers[d].solve(state) for d in (8, 10, 14)]
        assert len({r.length for r in runs}) == 1
        assert runs[0].nodes_generated >= runs[1].nodes_generated >= runs[2].nodes_generated
        fewer += runs[0].nodes_generated > runs[2].nodes_generated
    assert fewer == 3
    assert Solver(board, heuristic="manhattan", pruning="fsm").fsm_depth == 12   # the default
    assert [solvers[d].label for d in (8, 14)] == ["manhattan fsm8", "manhattan fsm14"]
    assert Solver(board, heuristic="manhattan").fsm_depth is None   # the parent rule on 4x4
    with pytest.raises(PdbtoolError, match="applies to --pruning fsm"):
        Solver(board, heuristic="manhattan", fsm_depth=12)
    for bad in (1, 25, "12", 12.0, True):
        with pytest.raises(PruningError, match="whole number from 2 to 24"):
            Solver(board, heuristic="manhattan", pruning="fsm", fsm_depth=bad)


def test_an_automaton_larger_than_the_memory_is_a_one_line_error(monkeypatch):
    """A depth whose automaton would not fit is refused before the allocation that would not fit (a killed
    process would be the alternative), naming the board, the depth and the option."""
    from pdbtool.tables import resources

    monkeypatch.setattr(resources, "available_memory", lambda: 200_000)
    build_automaton(Board(2, 3), 6)   # small enough
    with pytest.raises(PruningError, match=r"of 3x3 for duplicates of up to 14 moves needs more memory .* "
                                           r"choose a smaller --fsm-depth"):
        build_automaton(Board(3, 3), 14)


def test_fsm_depth_on_the_command_line(tmp_path):
    from click.testing import CliRunner

    from pdbtool.cli.main import cli

    import json

    from conftest import EXAMPLES

    path = EXAMPLES / "8puzzle.txt"   # each line with its '# optimal', which the command checks
    runner = CliRunner()
    nodes = {}
    for depth in ("6", "14"):
        result = runner.invoke(cli, ["solve", str(path), "--heuristic", "manhattan", "--pruning", "fsm",
                                     "--fsm-depth", depth, "--format", "json", "--cache-dir", str(tmp_path)])
        assert result.exit_code == 0, result.output
        rows = [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]
        nodes[depth] = sum(r["nodes_generated"] for r in rows if "nodes_generated" in r)
    assert nodes["14"] < nodes["6"]
    result = runner.invoke(cli, ["solve", str(path), "--heuristic", "manhattan", "--pruning", "parent",
                                 "--fsm-depth", "10"])
    assert result.exit_code == 2 and "--fsm-depth applies with --pruning fsm" in result.output
    result = runner.invoke(cli, ["solve", str(path), "--heuristic", "manhattan", "--fsm-depth", "30"])
    assert result.exit_code == 2 and "30 is not in the range 2<=x<=24" in result.output
    result = runner.invoke(cli, ["solve", str(path), "--heuristic", "manhattan", "--fsm-depth", "10"])
    assert result.exit_code == 1 and "applies to --pruning fsm" in result.output and "Traceback" not in result.output


def test_korf_1985_counts_kept_under_the_parent_rule():
    board = Board(4, 4)
    state = (14, 1, 9, 6, 4, 8, 12, 5, 7, 2, 3, 0, 10, 11, 13, 15)  # Korf's instance 12 (1985: 546,344 nodes)
    a = Solver(board, heuristic="manhattan").solve(state)
    b = Solver(board, heuristic="manhattan", pruning="fsm").solve(state)
    assert a.nodes_generated == 546_344 - 1
    assert a.length == b.length == 45 and b.nodes_generated < a.nodes_generated
    assert a.heuristic == "manhattan" and b.heuristic == "manhattan fsm"


# --- defence in depth -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def eight_tables():
    board = Board(3, 3)
    patterns = [TilePattern(board, (1, 2, 3, 4)), TilePattern(board, (5, 6, 7, 8))]
    return board, patterns, [build_table(p).table for p in patterns]


def test_a_negative_h_is_an_error_not_a_search(eight_tables):
    board = Board(3, 3)
    solver = Solver(board, heuristic="manhattan")
    md = solver.heuristic.md.copy()
    md[5, 0] = -40  # tile 5 in the corner: far below zero
    solver.heuristic.md = md
    # the blank in the corner, tile 5 beside it (reached from the goal by right, down, right, up, left, down,
    # left, up): its first child moves tile 5 into the corner
    with pytest.raises(PdbtoolError, match=r"manhattan: h = -\d+ for a node at depth 1 \(below zero\)"):
        solver.solve((0, 5, 4, 1, 3, 2, 6, 7, 8))
    with pytest.raises(SearchFault, match="below zero"):
        Search(solver.heuristic, (5, 0, 4, 1, 3, 2, 6, 7, 8))  # h0 itself


def test_the_driver_stops_at_the_end_of_its_stack():
    board = Board(3, 3)
    far = (8, 6, 7, 2, 5, 4, 3, 0, 1)
    search = Search(LinearConflict(board), far, bound=4, capacity=8)  # children one at a time
    assert search.step(1) == RUNNING
    search.reg[R_BOUND] = 1000  # as a corrupt heuristic could make it: f never above the bound
    levels = search.next_move.shape[0]
    with pytest.raises(SearchFault, match=f"depth {levels} under bound 1000, past the stack of {levels} levels"):
        search.step(1 << 30)


def test_a_table_that_overestimates_is_never_reported_optimal(eight_tables):
    board, patterns, tables = eight_tables
    doubled = [np.minimum(t.astype(np.int64) * 2, 254).astype(np.uint8) for t in tables]
    solver = Solver(board, partition=patterns, tables=doubled, reflect=False)
    state = (8, 6, 7, 2, 5, 4, 3, 0, 1)
    with pytest.raises(PdbtoolError, match=r"^8-4-4: (h0|h after \d+ moves) = \d+ exceeds the \d+ moves left"):
        solver.solve(state)
    state = (1, 2, 0, 3, 4, 5, 6, 7, 8)  # two moves from the goal: h0 doubled is 4
    with pytest.raises(PdbtoolError, match=r"^8-4-4: h0 = 4 exceeds the 2 moves left on a solution of 2"):
        solver.solve(state)
    good = Solver(board, partition=patterns, tables=tables, reflect=False).solve(state)
    assert good.length == 2


def test_a_table_whose_goal_is_not_zero_is_refused(eight_tables):
    board, patterns, tables = eight_tables
    bad = [t.copy() for t in tables]
    goal = Solver(board, partition=patterns, tables=tables, reflect=False)
    h_goal_parts = goal.heuristic.parts(board.goal_tiles)[0]
    assert h_goal_parts == [0, 0]
    bad[0][:] = np.maximum(bad[0], 1)
    solver = Solver(board, partition=patterns, tables=bad, reflect=False)
    with pytest.raises(PdbtoolError, match=r"h\(goal\) = 1, not 0"):
        solver.solve(board.goal_tiles)


def test_an_inconsistent_drop_is_caught_on_the_solution():
    board = Board(3, 3)
    heuristic = Manhattan(board)
    state = (1, 2, 0, 3, 4, 5, 6, 7, 8)
    solution = [2, 1]
    assert replay(board, state, solution) == board.goal_tiles
    check_solution(heuristic, state, solution, "manhattan")

    class Drops(Manhattan):
        def value(self, s):
            return 0 if tuple(s) == board.goal_tiles else (2 if tuple(s) == state else 0)

    with pytest.raises(PdbtoolError, match="h drops from 2 to 0"):
        check_solution(Drops(board), state, solution, "crafted", consistent=True)
    check_solution(Drops(board), state, solution, "crafted", consistent=False)  # admissible: allowed
    with pytest.raises(PdbtoolError, match="not next to the blank"):
        check_solution(heuristic, state, [4, 1], "manhattan")


def test_a_lossy_table_that_ignores_the_blank_is_not_held_to_consistency(tmp_path):
    """min-nibble keeps the least value of each group of ranks: with the blank ignored it is admissible but
    may drop by more than one per move, so its solutions are checked as any admissible table's (the check
    of a consistent one refused a quarter of the 8-puzzle's random states as a damaged table)."""
    board = Board(3, 3)
    lossy = Solver(board, partition="8-4-4", blank="ignored", encoding="min-nibble", group=2, cache_dir=str(tmp_path))
    whole = Solver(board, partition="8-4-4", blank="ignored", cache_dir=str(tmp_path))
    assert is_consistent(whole) and not is_consistent(lossy)
    rng = random.Random(1)
    drops = 0
    for _ in range(60):
        tiles = random_state(board, rng)
        result = lossy.solve(tiles)
        assert result.length == whole.solve(tiles).length
        path = [tuple(tiles)]
        for tile in result.solution:
            path.append(replay(board, path[-1], [tile]))
        drops += any(lossy.h(a) - lossy.h(b) > 1 for a, b in zip(path, path[1:]))
    assert drops  # the case the consistent check refused
