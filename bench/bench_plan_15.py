"""Benchmark of ``pdbtool plan``'s plans on the 15-puzzle, measured against search (issue 55, targets 4 and 5).

Each partition or catalogue file given (``FILE`` or ``FILE:ENCODING``) is, in one run:

* scored as the planner scores it: Korf, Reid & Edelkamp's predicted nodes of an iteration from a random
  start, relative to Manhattan's, on one sample of random solvable 4x4 states with their diagonal
  reflections (``pdbtool.plan.scoring``);
* searched: Korf's 100 (or the first ``--first``), each with its reflection, single-threaded, with
  ``--pruning`` (the tile benchmarks' duplicate pruning), every length checked against the known optimum;
  nodes generated and the search thread's CPU seconds.

Against the reference (the first plan, 15-7-8 by default): the predicted node ratio (the scores' ratio) and
the measured one (the searches' node totals), and predicted over measured, which target 5 wants between
0.67 and 1.5.  Writes ``bench/results/plan_15.json``.

    nice -n 5 .venv/bin/python bench/bench_plan_15.py --plans 15-7-8 15-6-6-3 partitions/15-577MB.txt:nibble
                                                      [--first N] [--samples 1e6] [--cache-dir DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _results import load_average  # noqa: E402
from bench_plan import add_scoring_options, candidate_of, manhattan_scorer, write_result  # noqa: E402

AGREEMENT = (0.67, 1.5)  # predicted over measured node ratio that target 5 accepts


def search_row(solver, instances) -> dict:
    """Solve ``instances``; their node and CPU totals (each length checked against the optimum)."""
    solver.warm_up()
    per = []
    for inst in instances:
        r = solver.solve(inst.tiles)
        if inst.optimal is not None and r.length != inst.optimal:
            raise SystemExit(f"instance {inst.id}: length {r.length}, optimal {inst.optimal}")
        per.append([inst.id, r.h0, r.nodes_generated, round(r.cpu_seconds, 4)])
    return {"instances": len(per), "mean_h0": round(sum(p[1] for p in per) / len(per), 2),
            "nodes_generated": sum(p[2] for p in per), "cpu_seconds": round(sum(p[3] for p in per), 2),
            "per_instance": per}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plans", nargs="+", required=True,
                    help="partition or catalogue files or built-in names, each FILE or FILE:ENCODING; the first is "
                         "the reference of the ratios")
    ap.add_argument("--instances", default=str(ROOT / "examples" / "korf100.txt"))
    ap.add_argument("--first", type=int, default=None, help="only the first N instances")
    ap.add_argument("--pruning", default="fsm")
    add_scoring_options(ap, 16, "plan_15.json")
    args = ap.parse_args(argv)
    from pdbtool.plan.scoring import score_of
    from pdbtool.puzzle.board import Board
    from pdbtool.puzzle.instances import load_instances
    from pdbtool.search.solver import Solver
    from pdbtool.tables.partitions import load_partition

    started, load_before, cpu = time.time(), load_average(), time.process_time()
    board = Board.parse("4x4")
    instances = load_instances(args.instances, board)[:args.first]
    scorer, costs = manhattan_scorer(board, args)
    samples = scorer.samples
    rows = []
    for spec in args.plans:
        name, cand = candidate_of(spec, board)
        s = score_of(scorer, scorer.h(cand))
        c = costs.costs(cand)
        path = spec.partition(":")[0]
        solver = Solver(board, partition=load_partition(path, board), encoding=cand.encoding, reflect=True,
                        pruning=args.pruning, cache_dir=args.cache_dir, threads=args.threads)
        row = {"plan": name, "file": spec, "structure": cand.describe(), "encoding": cand.encoding,
               "tables": c.tables, "memory_bytes": c.memory, "mean_h": round(s.mean_h, 4), "least_h": s.min_h,
               "predicted_relative_to_manhattan": s.relative, **search_row(solver, instances)}
        rows.append(row)
        print(f"{name:>24} {cand.describe():>28}: {c.memory:,} bytes, predicted {s.relative:.4g} x Manhattan's, "
              f"{row['nodes_generated']:,} nodes, {row['cpu_seconds']} CPU s", flush=True)
    ref = rows[0]
    key = "predicted_relative_to_manhattan"
    for row in rows:
        row["predicted_ratio"] = round(row[key] / ref[key], 4)
        row["measured_ratio"] = round(row["nodes_generated"] / ref["nodes_generated"], 4)
        row["cpu_ratio"] = round(row["cpu_seconds"] / ref["cpu_seconds"], 3) if ref["cpu_seconds"] else None
        row["predicted_over_measured"] = round(row["predicted_ratio"] / row["measured_ratio"], 3)
        row["agrees"] = AGREEMENT[0] <= row["predicted_over_measured"] <= AGREEMENT[1]
    out = {"benchmark": "plan_15", "board": "4x4", "goal": "korf", "reference": ref["plan"],
           "instances": f"{Path(args.instances).name}" + (f", first {args.first}" if args.first else ""),
           "pruning": args.pruning, "reflection": True, "samples": samples.count, "seed": args.seed,
           "bound": scorer.weights.bound if scorer.weights else None, "agreement": list(AGREEMENT), "rows": rows}
    return write_result(args.out, out, started, load_before, cpu)


if __name__ == "__main__":
    sys.exit(main())
