"""CPU per node of several heuristics, measured in alternating rounds in one process (a shared machine's
load then weighs on all of them alike).  Writes bench/results/dynamic_cost.json.

Each round solves every chosen instance once with every configuration, in turn, under an optional node
limit (a stopped search still counts its nodes), and records the process's CPU seconds
(``time.process_time``) and the nodes generated, after a short untimed warm-up search per configuration
(Numba compiles the kernels on first use).  The summary gives, per configuration, the CPU per
million nodes of each round and their median, and the ratio of each median to the first configuration's.

    python bench/bench_dynamic_cost.py --instances 1-10 --rounds 3           # Korf's 100: ddb sets
    python bench/bench_dynamic_cost.py --board 5x5 --instances 1 --node-limit 20000000 \\
        --configs "pdb:24-6-6-6-6;ddb:pairs+triples;ddb:pairs+triples-region"
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_dynamic import default_instances, parse_range, read_instances, run_facts  # noqa: E402

from pdbtool.puzzle.board import Board  # noqa: E402
from pdbtool.search.solver import Solver  # noqa: E402


def make_solver(board: Board, spec: str) -> Solver:
    """``ddb:SET``, ``max:PARTITION:SET`` or ``pdb:PARTITION``."""
    kind, _, rest = spec.partition(":")
    if kind == "ddb":
        return Solver(board, heuristic="ddb", dynamic=rest)
    if kind == "max":
        partition, _, dynamic = rest.partition(":")
        return Solver(board, heuristic="max", partition=partition, dynamic=dynamic)
    if kind == "pdb":
        return Solver(board, heuristic="pdb", partition=rest)
    raise SystemExit(f"unknown configuration {spec!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--board", default="4x4")
    ap.add_argument("--instances", default="1-10", help="1-based positions in the file")
    ap.add_argument("--configs", default="ddb:pairs+triples;ddb:pairs+triples-region;ddb:pairs+triples-fkh")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--node-limit", type=int, default=None)
    ap.add_argument("--out", default=str(HERE / "results" / "dynamic_cost.json"))
    args = ap.parse_args()
    board = Board.parse(args.board)
    path = default_instances(board)
    instances = read_instances(path, board.n)
    chosen = [instances[i] for i in parse_range(args.instances, len(instances))]
    specs = [s.strip() for s in args.configs.split(";") if s.strip()]
    solvers = {s: make_solver(board, s) for s in specs}
    facts = run_facts()
    for s in specs:  # compile the kernels and warm the memos before anything is timed
        solvers[s].solve(chosen[0][1], node_limit=100_000)
    rounds = {s: [] for s in specs}
    for rnd in range(args.rounds):
        for s in specs:
            cpu = time.process_time()
            nodes = 0
            for ident, state, optimal in chosen:
                r = solvers[s].solve(state, node_limit=args.node_limit)
                if r.solved and optimal is not None and r.length != optimal:
                    raise SystemExit(f"{s}: instance {ident} solved in {r.length}, optimal is {optimal}")
                nodes += r.nodes_generated
            cpu = time.process_time() - cpu
            rounds[s].append({"nodes": nodes, "cpu_seconds": round(cpu, 3),
                              "cpu_us_per_node": round(1e6 * cpu / max(1, nodes), 4)})
            print(f"round {rnd + 1} {s}: {nodes:,} nodes, {cpu:.2f} CPU s, "
                  f"{1e6 * cpu / max(1, nodes):.3f} us/node", file=sys.stderr, flush=True)
    base = statistics.median(r["cpu_us_per_node"] for r in rounds[specs[0]])
    summary = {"run": facts, "board": board.dims, "instances": [i for i, _, _ in chosen],
               "node_limit": args.node_limit, "configs": {}}
    for s in specs:
        med = statistics.median(r["cpu_us_per_node"] for r in rounds[s])
        summary["configs"][s] = {"rounds": rounds[s], "median_cpu_us_per_node": med,
                                 "ratio_to_first": round(med / base, 3)}
        print(f"{s}: median {med:.3f} us/node, {med / base:.2f} x {specs[0]}")
    out = Path(args.out)
    results = json.loads(out.read_text()) if out.exists() else []
    results.append(summary)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
