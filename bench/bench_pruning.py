"""Benchmark of duplicate-path pruning (``--pruning fsm``, :mod:`pdbtool.search.move_automaton`).

* The automata: per board and duplicate length L, the states, the duplicates found, the CPU seconds to
  build and the table's size.
* Korf's 100 with 15-7-8 (+ reflection): per instance, the parent rule and the automaton of each L, run one
  after the other (so each ratio is measured under the same load): nodes generated and CPU seconds.
* Korf's 100 with Manhattan distance, the instances whose 1985 count is at most ``--md-max-nodes``: the same.
* The 24-puzzle with 6-6-6-6 (+ reflection), instances of ``--korf24``: the iterations that finish within
  ``--nodes24`` nodes under the parent rule, searched again with each automaton: nodes per finished
  iteration (exact and comparable) and CPU per node.

Every length found is checked against the known optimum.  Single-threaded.  Writes
``bench/results/pruning.json``.

    .venv/bin/python bench/bench_pruning.py [--quick] [--cache-dir DIR] [--depths 10,12,14]
                                            [--md-max-nodes N] [--nodes24 N] [--korf24 FILE] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pdbtool.puzzle.board import Board  # noqa: E402
from pdbtool.puzzle.instances import load_instances  # noqa: E402
from pdbtool.search.driver import FOUND, INF, ITERATION_DONE, Search  # noqa: E402
from pdbtool.search.automata import PrunedHeuristic  # noqa: E402
from pdbtool.search.move_automaton import build_automaton  # noqa: E402
from pdbtool.search.solver import Solver  # noqa: E402

from _results import RESULTS, load_average, metadata  # noqa: E402

KORF_MD_NODES = ROOT / "examples" / "korf100_md_nodes.txt"


def automata(depths_by_board: dict[str, list[int]]) -> list[dict]:
    out = []
    for dims, depths in depths_by_board.items():
        board = Board.parse(dims)
        for depth in depths:
            t = time.process_time()
            a = build_automaton(board, depth)
            cpu = time.process_time() - t
            out.append({"board": dims, "depth": depth, "states": a.states, "duplicates": a.duplicates,
                        "build_cpu_seconds": round(cpu, 3), "table_bytes": int(a.table.nbytes)})
            print(f"automaton {dims} L={depth}: {a.states:,} states, {a.duplicates:,} duplicates, "
                  f"{cpu:.2f} s CPU, {a.table.nbytes / 2**20:.1f} MiB", flush=True)
    return out


def variants(heuristic, board: Board, depths: list[int]) -> dict[str, object]:
    """The parent rule and the automaton of each depth, around one heuristic; each searched once first, so
    that no figure includes a compilation."""
    out = {"parent": heuristic}
    for d in depths:
        out[f"fsm{d}"] = PrunedHeuristic(heuristic, build_automaton(board, d))
    nb = board.neighbours()
    near = list(board.goal_tiles)
    blank = near.index(0)
    for m in (3, 2, 3, 2):  # down, right: a few moves from the goal
        q = int(nb[blank, m]) if nb[blank, m] >= 0 else int(nb[blank, 3 - m])
        near[blank], near[q], blank = near[q], 0, q
    for h in out.values():
        solve_one(h, tuple(near))
    return out


def solve_one(heuristic, state) -> tuple[int, int, float]:
    """(length, generated, CPU seconds) of a whole serial IDA*."""
    search = Search(heuristic, state)
    t = time.thread_time()
    status = search.step(INF)
    cpu = time.thread_time() - t
    assert status == FOUND, status
    return len(search.moves()), search.generated, cpu


def korf100(kinds, instances, label: str) -> dict:
    per = []
    totals = {k: {"nodes": 0, "cpu_seconds": 0.0} for k in kinds}
    for inst in instances:
        row = {"id": inst.id, "optimal": inst.optimal}
        for name, h in kinds.items():
            length, nodes, cpu = solve_one(h, inst.tiles)
            if inst.optimal is not None and length != inst.optimal:
                raise SystemExit(f"{label} {name} instance {inst.id}: length {length}, optimal {inst.optimal}")
            row[name] = {"nodes": nodes, "cpu_seconds": round(cpu, 4)}
            totals[name]["nodes"] += nodes
            totals[name]["cpu_seconds"] += cpu
        per.append(row)
    summary = _summary(totals)
    print(f"{label}: {len(per)} instances", flush=True)
    _print(summary)
    return {"instances": per, "totals": summary}


def _summary(totals: dict) -> dict:
    base = totals["parent"]
    out = {}
    for name, t in totals.items():
        ns = 1e9 * t["cpu_seconds"] / t["nodes"] if t["nodes"] else None
        out[name] = {"nodes": t["nodes"], "cpu_seconds": round(t["cpu_seconds"], 3),
                     "ns_per_node": None if ns is None else round(ns, 2),
                     "node_ratio": round(base["nodes"] / t["nodes"], 4) if t["nodes"] else None,
                     "cpu_ratio": round(base["cpu_seconds"] / t["cpu_seconds"], 4) if t["cpu_seconds"] else None}
    return out


def _print(summary: dict) -> None:
    for name, s in summary.items():
        print(f"  {name:8s} nodes {s['nodes']:>14,}  cpu {s['cpu_seconds']:8.2f} s  {s['ns_per_node']} ns/node  "
              f"x{s['node_ratio']} nodes  x{s['cpu_ratio']} cpu", flush=True)


def iterations(heuristic, state, node_budget: int | None, bounds: list[int] | None):
    """Per finished iteration (bound, nodes generated, CPU seconds), until the budget is passed (the
    iteration that passes it is not counted) or, with ``bounds``, exactly those iterations."""
    search = Search(heuristic, state, one_iteration=True)
    out = []
    spent = 0
    while True:
        bound = search.bound
        if bounds is not None and bound > bounds[-1]:
            break
        before = search.generated
        t = time.thread_time()
        budget = INF if node_budget is None or bounds is not None else node_budget - spent
        status = search.step(max(1, budget))
        cpu = time.thread_time() - t
        if status not in (ITERATION_DONE, FOUND):
            break  # the budget ran out inside an iteration
        nodes = search.generated - before
        spent += nodes
        out.append({"bound": bound, "nodes": nodes, "cpu_seconds": round(cpu, 4), "found": status == FOUND})
        if status == FOUND:
            break
    return out


def puzzle24(kinds, instances, node_budget: int) -> dict:
    per = []
    totals = {k: {"nodes": 0, "cpu_seconds": 0.0} for k in kinds}
    for inst in instances:
        row = {"id": inst.id, "optimal": inst.optimal}
        base = iterations(kinds["parent"], inst.tiles, node_budget, None)
        bounds = [it["bound"] for it in base]
        if not bounds:
            continue
        row["parent"] = base
        for name, h in kinds.items():
            if name == "parent":
                continue
            its = iterations(h, inst.tiles, None, bounds)
            assert [i["bound"] for i in its] == bounds[:len(its)]
            row[name] = its
        for name in kinds:
            totals[name]["nodes"] += sum(i["nodes"] for i in row[name])
            totals[name]["cpu_seconds"] += sum(i["cpu_seconds"] for i in row[name])
        print(f"24 #{inst.id}: bounds {bounds[0]}..{bounds[-1]}: " + ", ".join(
            f"{n} {sum(i['nodes'] for i in row[n]):,}" for n in kinds), flush=True)
        per.append(row)
    summary = _summary(totals)
    print("24-puzzle, finished iterations:", flush=True)
    _print(summary)
    return {"instances": per, "totals": summary, "node_budget": node_budget}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--depths", default="10,12,14")
    ap.add_argument("--md-max-nodes", type=int, default=6_000_000)
    ap.add_argument("--nodes24", type=int, default=100_000_000)
    ap.add_argument("--korf24", default=str(ROOT / "examples" / "korf24.txt"))
    ap.add_argument("--count24", type=int, default=3, help="the first N instances of --korf24")
    ap.add_argument("--only", default="automata,7-8,manhattan,24")
    ap.add_argument("--out", default=str(RESULTS / "pruning.json"))
    args = ap.parse_args(argv)
    depths = [int(d) for d in args.depths.split(",")]
    only = set(args.only.split(","))
    started, load_before = time.time(), load_average()
    cpu_start = time.process_time()
    result: dict = {"depths": depths}
    if "automata" in only:
        result["automata"] = automata({"4x4": sorted(set(depths + [8, 16])), "5x5": sorted(set(depths + [8]))})
    board16 = Board(4, 4)
    korf = load_instances(str(ROOT / "examples" / "korf100.txt"), board16)
    if args.quick:
        korf = korf[:20]
    if "7-8" in only:
        solver = Solver(board16, partition="15-7-8", cache_dir=args.cache_dir, pruning="parent")
        result["korf100_15_7_8"] = korf100(variants(solver.heuristic, board16, depths), korf, "15-7-8+reflect")
    if "manhattan" in only:
        counts = {}
        for line in KORF_MD_NODES.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                ident, count = line.split()[:2]
                counts[ident] = int(count)
        cheap = [i for i in korf if counts.get(str(i.id), INF) <= args.md_max_nodes]
        solver = Solver(board16, heuristic="manhattan", pruning="parent")
        result["korf100_manhattan"] = korf100(variants(solver.heuristic, board16, depths), cheap,
                                              f"manhattan (1985 count <= {args.md_max_nodes:,})")
        result["korf100_manhattan"]["md_max_nodes"] = args.md_max_nodes
    if "24" in only:
        board25 = Board(5, 5)
        solver = Solver(board25, partition="24-6-6-6-6", cache_dir=args.cache_dir,
                        pruning="parent")  # the heuristic alone: the variants add the automata
        insts = load_instances(args.korf24, board25)[:2 if args.quick else args.count24]
        result["korf24_6666"] = puzzle24(variants(solver.heuristic, board25, depths), insts,
                                         args.nodes24 // (4 if args.quick else 1))
    result["cpu_seconds"] = round(time.process_time() - cpu_start, 2)
    result["meta"] = metadata(["python", "bench/bench_pruning.py", *(argv or sys.argv[1:])], started, load_before)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out} ({result['cpu_seconds']} CPU s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
