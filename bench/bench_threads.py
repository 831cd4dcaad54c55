"""Nodes per second and speed-up of one instance's search per thread count (``solve --threads N``).

Korf's instances whose Manhattan-distance search generates 20 to 65 million nodes (by Korf's 1985 counts,
examples/korf100_md_nodes.txt), solved with Manhattan distance on 1, 2, ... threads, taking turns instance
by instance.  Wall seconds give the speed-up; the process's CPU seconds show what the threads cost.  The
node counts of a threaded run differ from the serial ones only in the last iteration.  Writes
bench/results/threads.json.

    python bench/bench_threads.py [--threads 1,2] [--ids 4,6,8] [--heuristic manhattan] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pdbtool.puzzle.board import Board  # noqa: E402
from pdbtool.puzzle.instances import load_instances  # noqa: E402
from pdbtool.search.solver import Solver  # noqa: E402

DEFAULT_IDS = "4,6,8,18,24"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default=None, help="thread counts, e.g. 1,2,4 (default: 1, 2, ..., cores)")
    ap.add_argument("--ids", default=DEFAULT_IDS, help="Korf instance ids")
    ap.add_argument("--heuristic", default="manhattan")
    ap.add_argument("--partition", default=None)
    ap.add_argument("--rounds", type=int, default=1, help="solve every instance this many times per count")
    ap.add_argument("--quick", action="store_true", help="the first two instances only")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "threads.json"))
    args = ap.parse_args(argv)
    counts = ([int(x) for x in args.threads.split(",")] if args.threads
              else sorted({1, 2, *range(2, (os.cpu_count() or 1) + 1, 2)}))
    wanted = args.ids.split(",")[:2] if args.quick else args.ids.split(",")
    korf = {i.id: i for i in load_instances(str(ROOT / "examples" / "korf100.txt"))}
    instances = [korf[i] for i in wanted]
    solvers = {n: Solver(Board(4, 4), heuristic=args.heuristic, partition=args.partition, search_threads=n)
               for n in counts}
    for s in solvers.values():
        s.warm_up()
    runs = {n: [] for n in counts}
    for _ in range(args.rounds):
        for inst in instances:
            for n in counts:           # alternate the counts, so that a change of load hits them all alike
                cpu, wall = time.process_time(), time.perf_counter()
                r = solvers[n].solve(inst.tiles)
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
                if r.length != inst.optimal:
                    raise SystemExit(f"instance {inst.id}, {n} threads: length {r.length}, optimal {inst.optimal}")
                runs[n].append({"id": inst.id, "nodes_generated": r.nodes_generated, "wall_seconds": round(wall, 3),
                                "cpu_seconds": round(cpu, 3)})
                print(f"  {inst.id:>3} {n:>2} threads  {r.nodes_generated:>13,} nodes  {wall:7.2f} s wall  "
                      f"{cpu:7.2f} s CPU", flush=True)
    rows = []
    for n in counts:
        nodes = sum(x["nodes_generated"] for x in runs[n])
        wall = sum(x["wall_seconds"] for x in runs[n])
        cpu = sum(x["cpu_seconds"] for x in runs[n])
        rows.append({"threads": n, "nodes_generated": nodes, "wall_seconds": round(wall, 3),
                     "cpu_seconds": round(cpu, 3), "nodes_per_wall_second": round(nodes / wall),
                     "runs": runs[n]})
    base = rows[0]
    for row in rows:
        row["speedup"] = round(base["wall_seconds"] / row["wall_seconds"], 3)
        row["rate_speedup"] = round(row["nodes_per_wall_second"] / base["nodes_per_wall_second"], 3)
        print(f"{row['threads']:>2} threads: {row['nodes_per_wall_second'] / 1e6:7.2f} M nodes/s wall, "
              f"speed-up {row['speedup']:.2f} (rate {row['rate_speedup']:.2f}), CPU {row['cpu_seconds']:.1f} s")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"benchmark": "threads", "heuristic": args.heuristic, "partition": args.partition,
                               "ids": wanted, "rounds": args.rounds, "rows": rows}, indent=1) + "\n")
    print(f"written {out}")


if __name__ == "__main__":
    main()
