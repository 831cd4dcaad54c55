"""Benchmark: what an A*+IDA* frontier could save on the 24-puzzle with duplicate-path pruning (issue 31).

A*+IDA* (Bu & Korf 2019) runs A* until memory is full, then IDA* below each frontier node: the frontier's
duplicates are searched once, and the frontier nodes can be searched in an order that reaches the goal early
in the last iteration.  This measures both gains on IDA* with 6-6-6-6 + reflection and the move-pruning
automaton (``fsm``), with pdbtool's own driver:

* ``last_iteration``: per instance, the nodes of every iteration and how far into the last one the goal is
  found (the rest of that iteration is searched too, to know its size).  No order of the last iteration can
  save more than the nodes it generates before the goal; the iterations before it are searched whole by
  any order.
* ``duplicates``: in the last iteration of one instance, the nodes within the bound at a cut depth, and how
  many distinct states they are (the part of a frontier that duplicate detection removes), with ``fsm`` and
  with the parent rule alone.
* ``orders``: the last iteration cut at one depth, its distinct frontier nodes searched one by one (each
  with the automaton's state at the end of its path) in depth-first order, by h ascending and by h
  descending, until the goal: the nodes generated, the top of the tree included.

Instances are Korf & Felner's (``examples/korf24_50.txt``); CPU-light enough for a laptop (a few minutes).

    .venv/bin/python bench/bench_frontier_order.py [--ids 38,40,25,32] [--dup-id 38] [--dup-depths 10,14,18,22]
        [--order-ids 40,25,38] [--order-depth 16] [--cache-dir DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _results import load_average, write  # noqa: E402
from bench_24 import load_korf24_50  # noqa: E402
from pdbtool.puzzle.board import Board  # noqa: E402
from pdbtool.search.driver import CUT, FOUND, INF, Search  # noqa: E402
from pdbtool.search.solver import Solver  # noqa: E402
from pdbtool.search.units import WorkUnit, search_unit  # noqa: E402

PARTITION = "24-6-6-6-6"


def instances() -> dict[int, tuple[list[int], int]]:
    """Korf & Felner's 50: id -> (tiles, optimal length)."""
    return {i: (list(r["tiles"]), int(r["optimal"])) for i, r in load_korf24_50().items()}


def last_iteration(solver: Solver, tiles) -> dict:
    """The nodes of each iteration; in the last, those generated before the goal and in all."""
    bound = Search(solver.heuristic, tiles).h0
    iterations = []
    while True:
        search = Search(solver.heuristic, tiles, bound=bound, one_iteration=True)
        status = search.step(INF)
        if status == FOUND:
            found_at = search.generated
            while status == FOUND:  # on past the goal, to the end of the iteration
                status = search.step(INF)
            before = sum(n for _, n in iterations)
            return {"iterations": iterations, "bound": bound, "found_after": found_at,
                    "last_iteration_whole": search.generated, "earlier_iterations": before,
                    "nodes": before + found_at, "best_order_saves_at_most": (before + found_at) / max(1, before)}
        iterations.append((bound, search.generated))
        bound = search.next_bound


def frontier(solver: Solver, tiles, bound: int, depth: int) -> tuple[int, list[tuple[int, tuple[int, ...]]], int]:
    """The top's nodes, the distinct nodes within ``bound`` at ``depth`` (h, path) in depth-first order, and
    how many nodes within the bound there are at that depth in all."""
    search = Search(solver.heuristic, tiles, bound=bound, one_iteration=True, cut=depth)
    seen: set[bytes] = set()
    out = []
    total = 0
    while search.step(INF) == CUT:
        total += 1
        key = search.tiles.tobytes()
        if key not in seen:
            seen.add(key)
            out.append((int(solver.heuristic.value(search.tiles)), tuple(search.moves())))
    return search.generated, out, total


def orders(solver: Solver, tiles, bound: int, depth: int) -> dict:
    top, nodes, _ = frontier(solver, tiles, bound, depth)
    out = {"depth": depth, "bound": bound, "top": top, "frontier": len(nodes)}
    for name, order in (("depth-first", nodes), ("h ascending", sorted(nodes, key=lambda x: x[0])),
                        ("h descending", sorted(nodes, key=lambda x: -x[0]))):
        generated = searched = 0
        start = time.process_time()
        for _, path in order:
            result = search_unit(solver.heuristic, tiles, WorkUnit(path, bound))
            generated += result.generated
            searched += 1
            if result.solution is not None:
                break
        out[name] = {"nodes": top + generated, "units_searched": searched,
                     "cpu_seconds": round(time.process_time() - start, 2)}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ids", default="38,40,25,32")
    ap.add_argument("--dup-id", type=int, default=38)
    ap.add_argument("--dup-depths", default="10,14,18,22")
    ap.add_argument("--order-ids", default="40,25,38")
    ap.add_argument("--order-depth", type=int, default=16)
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "history" / "frontier_order.json"))
    args = ap.parse_args(argv)
    started, load_before = time.time(), load_average()
    cpu_start = time.process_time()
    data = instances()
    fsm = Solver(Board(5, 5), partition=PARTITION, pruning="fsm", cache_dir=args.cache_dir)
    parent = Solver(Board(5, 5), partition=PARTITION, pruning="parent", cache_dir=args.cache_dir)
    fsm.warm_up()
    parent.warm_up()
    report: dict = {"partition": PARTITION + "+reflect", "pruning": "fsm", "last_iteration": {},
                    "duplicates": {}, "orders": {}}
    for i in (int(x) for x in args.ids.split(",")):
        row = report["last_iteration"][str(i)] = last_iteration(fsm, data[i][0])
        print(f"{i}: {row['nodes']:,} nodes, goal after {row['found_after']:,} of the last iteration's "
              f"{row['last_iteration_whole']:,}", flush=True)
    tiles, optimal = data[args.dup_id]
    for name, solver in (("fsm", fsm), ("parent", parent)):
        for depth in (int(x) for x in args.dup_depths.split(",")):
            _, nodes, total = frontier(solver, tiles, optimal, depth)
            report["duplicates"].setdefault(name, {})[str(depth)] = {"within_bound": total, "distinct": len(nodes)}
            print(f"{args.dup_id} {name} depth {depth}: {total:,} nodes, {len(nodes):,} distinct", flush=True)
    report["duplicates"]["id"] = args.dup_id
    for i in (int(x) for x in args.order_ids.split(",")):
        tiles, optimal = data[i]
        row = report["orders"][str(i)] = orders(fsm, tiles, optimal, args.order_depth)
        print(f"{i}: " + ", ".join(f"{k} {row[k]['nodes']:,}" for k in ("depth-first", "h ascending",
                                                                         "h descending")), flush=True)
    write(args.out, report, started=started, load_before=load_before,
          cpu_seconds=round(time.process_time() - cpu_start, 1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
