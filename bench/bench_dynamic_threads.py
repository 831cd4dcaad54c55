"""`solve --threads` with the dynamic heuristics: one instance searched by 1 and by N threads, alternating.

Each round runs the serial search (``Solver.solve``, one thread) and the threaded one
(:func:`pdbtool.search.parallel.parallel_search`, as ``Solver.solve(threads=N)`` runs it, called directly to record
its subtrees and finished iterations), both up to the same node limit.  Reported per run: nodes generated and
expanded, iterations, wall seconds and the process's CPU seconds.  Once, untimed, a one-thread run that
searches every iteration from the root records the serial cumulative counts of each finished iteration, which
the threaded runs must equal exactly.  Compare the two modes' ratios within a round (a shared machine
disturbs wall time most).  Writes bench/results/dynamic_threads.json.

    python bench/bench_dynamic_threads.py                                    # 5x5, korf24 #1, ddb, 30 M nodes
    python bench/bench_dynamic_threads.py --heuristic max --node-limit 10000000 --rounds 3
    python bench/bench_dynamic_threads.py --quick                            # 4x4, Korf #3, ddb
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from pdbtool.puzzle.board import Board  # noqa: E402
from pdbtool.search.parallel import SERIAL_BELOW, parallel_search  # noqa: E402
from pdbtool.search.solver import Solver  # noqa: E402


def read_instance(path: Path, ident: int, n: int):
    for line in path.read_text().splitlines():
        body = line.partition("#")[0].split()
        if len(body) == n + 1 and int(body[0]) == ident:
            return [int(x) for x in body[1:]]
    raise SystemExit(f"{path}: no instance {ident}")


def serial_run(solver, state, node_limit):
    wall, cpu = time.perf_counter(), time.process_time()
    r = solver.solve(state, node_limit=node_limit, threads=1)
    return {"threads": 1, "generated": r.nodes_generated, "expanded": r.nodes_expanded, "iterations": r.iterations,
            "solved": r.solved, "length": r.length,
            "wall_seconds": round(time.perf_counter() - wall, 3), "cpu_seconds": round(time.process_time() - cpu, 3)}


def threaded_run(solver, state, h0, threads, node_limit, **kw):
    wall, cpu = time.perf_counter(), time.process_time()
    out = parallel_search(solver.heuristic, state, h0, threads, node_limit=node_limit,
                          **kw)
    return {"threads": threads, "generated": out.generated, "expanded": out.expanded, "iterations": out.iterations,
            "solved": out.moves is not None, "length": None if out.moves is None else len(out.moves),
            "subtrees": out.subtrees, "finished": [list(f) for f in out.finished],
            "wall_seconds": round(time.perf_counter() - wall, 3), "cpu_seconds": round(time.process_time() - cpu, 3)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--board", default="5x5")
    ap.add_argument("--id", type=int, default=1, help="instance id in the file")
    ap.add_argument("--heuristic", choices=["ddb", "max"], default="ddb")
    ap.add_argument("--partition", default=None, help="static partition of max (default: the board's)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--node-limit", type=int, default=30_000_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--serial-below", type=int, default=SERIAL_BELOW,
                    help="threads split an iteration only after one of at least this many nodes")
    ap.add_argument("--quick", action="store_true", help="4x4, Korf's instance 3, 1 round, split from 65,536 nodes")
    ap.add_argument("--out", default=str(HERE / "results" / "dynamic_threads.json"))
    args = ap.parse_args()
    if args.quick:
        args.board, args.id, args.rounds, args.node_limit, args.serial_below = "4x4", 3, 1, None, 1 << 16
    board = Board.parse(args.board)
    path = ROOT / "examples" / ("korf100.txt" if board.n == 16 else "korf24.txt")
    state = read_instance(path, args.id, board.n)
    solver = Solver(board, heuristic=args.heuristic, partition=args.partition)
    solver.warm_up()
    load_before = os.getloadavg()
    h0 = solver.h(state)
    reference = threaded_run(solver, state, h0, 1, args.node_limit, serial_below=1 << 62)
    print(f"reference (1 thread, every iteration from the root): {reference['generated']:,} nodes, "
          f"finished {reference['finished']}", file=sys.stderr, flush=True)
    rounds = []
    for k in range(args.rounds):
        one = serial_run(solver, state, args.node_limit)
        many = threaded_run(solver, state, h0, args.threads, args.node_limit, serial_below=args.serial_below)
        n_done = len(many["finished"])
        many["finished_equal_serial"] = many["finished"] == reference["finished"][:n_done]
        rounds.append({"one": one, "many": many})
        for run in (one, many):
            print(f"round {k + 1}, {run['threads']} thread(s): {run['generated']:,} generated, "
                  f"{run['iterations']} iterations, {run['cpu_seconds']} CPU s, {run['wall_seconds']} wall s, "
                  f"{run['generated'] / run['cpu_seconds'] / 1e6:.2f} M nodes/CPU s, "
                  f"{run['generated'] / run['wall_seconds'] / 1e6:.2f} M nodes/wall s"
                  + (f", subtrees {run['subtrees']}" if "subtrees" in run else ""), file=sys.stderr, flush=True)
    result = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                          "load_average_before": load_before,
                          "load_average_after": os.getloadavg()},
              "command": " ".join(["bench_dynamic_threads.py", *sys.argv[1:]]),
              "board": board.dims, "instance": args.id, "heuristic": solver.label, "h0": h0,
              "node_limit": args.node_limit, "threads": args.threads, "serial_below": args.serial_below,
              "reference": reference, "rounds": rounds}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
