"""The A*+IDA* frontier measurements (bench/bench_frontier_order.py) on the 15-puzzle: the iterations add up
to the solver's own count, duplicates are counted once, and every order of the frontier finds the goal."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import korf100

from pdbtool.puzzle.board import Board
from pdbtool.search.solver import Solver

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import bench_frontier_order  # noqa: E402


@pytest.fixture(scope="module")
def solvers(shared_cache_dir):
    return {pruning: Solver(Board(4, 4), partition="15-5-5-5", pruning=pruning, cache_dir=shared_cache_dir)
            for pruning in ("parent", "fsm")}


@pytest.mark.parametrize("pruning", ["parent", "fsm"])
def test_the_iterations_add_up_to_the_solver_count(solvers, pruning):
    solver = solvers[pruning]
    tiles, optimal = korf100()[3]
    row = bench_frontier_order.last_iteration(solver, tiles)
    assert row["bound"] == optimal
    assert row["nodes"] == solver.solve(tiles).nodes_generated
    assert row["earlier_iterations"] == sum(n for _, n in row["iterations"])
    assert 0 < row["found_after"] <= row["last_iteration_whole"]


def test_the_frontier_counts_each_state_once_and_every_order_finds_the_goal(solvers):
    tiles, optimal = korf100()[3]
    _, parent_nodes, parent_total = bench_frontier_order.frontier(solvers["parent"], tiles, optimal, 12)
    _, fsm_nodes, fsm_total = bench_frontier_order.frontier(solvers["fsm"], tiles, optimal, 12)
    assert parent_total > len(parent_nodes)  # the parent rule leaves duplicates at this depth
    assert len(fsm_nodes) <= fsm_total <= parent_total
    assert len({path for _, path in fsm_nodes}) == len(fsm_nodes)
    row = bench_frontier_order.orders(solvers["fsm"], tiles, optimal, 12)
    assert row["frontier"] == len(fsm_nodes)
    for name in ("depth-first", "h ascending", "h descending"):
        assert row[name]["nodes"] > row["top"] and 1 <= row[name]["units_searched"] <= row["frontier"]
