"""Benchmark: Korf & Felner's first ten 24-puzzle instances with 6-6-6-6 and its diagonal reflection.

Each instance of ``examples/korf24.txt`` (Korf & Felner's first ten, with their optimal lengths) is solved
optimally with ``Solver(Board(5, 5), partition="24-6-6-6-6", reflect=True)``, searching with ``--threads``
threads (:mod:`pdbtool.search.parallel`); the two tables that 6-6-6-6 needs (the other two patterns are looked up
through board symmetries, :mod:`pdbtool.tables.sharing`) are built into the cache on first use.  Every length
is checked against the known optimum.  Target: all ten in at most 40 minutes on this machine (2 cores).

Writes ``bench/results/24.json`` and prints a table: per instance the optimal length, h(start), nodes
generated, wall and CPU seconds, nodes per second; the mean; and the published figures that
``docs/literature.md`` gives (for instance 1, the node count of Felner's talk, which the serial search
reproduces exactly).

    .venv/bin/python bench/bench_24.py [--limit K] [--ids 1,5] [--time-limit SECONDS] [--threads N]
                                       [--no-reflect] [--quick] [--cache-dir DIR] [--out FILE]

``--quick`` (as ``make bench --quick`` passes): instance 1 only, with a 600-second limit.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pdbtool.puzzle.board import Board  # noqa: E402
from pdbtool.puzzle.instances import load_instances  # noqa: E402
from pdbtool.search.solver import Solver  # noqa: E402

INSTANCES = ROOT / "examples" / "korf24.txt"
PUBLISHED = {
    "source": "docs/literature.md: Korf & Felner (2002), 6-6-6-6 + reflection",
    "mean_length_of_50": 100.78,
    "mean_nodes_of_50": 3.6e11,
}
# docs/literature.md, Felner's talk "Additive pattern databases": 24-puzzle instance 1, static 6-6-6-6 with
# the reflection; no other per-instance count is in the repository's sources
PUBLISHED_NODES = {"1": 2_031_102_635}
TARGET_SECONDS = 40 * 60


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None, help="only the first K instances")
    ap.add_argument("--ids", default=None, help="only these instance ids (comma-separated)")
    ap.add_argument("--time-limit", type=float, default=None, help="seconds per instance")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--no-reflect", action="store_true")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "24.json"))
    args = ap.parse_args(argv)
    if args.quick:
        args.limit = args.limit or 1
        args.time_limit = args.time_limit or 600.0

    board = Board(5, 5)
    items = load_instances(str(INSTANCES), board, None)
    if args.ids:
        wanted = [s.strip() for s in args.ids.split(",")]
        items = [i for i in items if str(i.id) in wanted]
    if args.limit is not None:
        items = items[:args.limit]
    build_start = time.perf_counter()
    solver = Solver(board, partition="24-6-6-6-6", reflect=not args.no_reflect, cache_dir=args.cache_dir,
                    threads=args.threads, search_threads=args.threads)
    solver.warm_up()
    setup_seconds = time.perf_counter() - build_start

    rows = []
    print(f"{solver.label}, {args.threads} search threads, tables ready in {setup_seconds:.1f} s", flush=True)
    print(f"{'id':>3} {'opt':>4} {'h0':>4} {'length':>6} {'nodes generated':>17} {'wall s':>8} {'cpu s':>8} "
          f"{'M nodes/s':>9}", flush=True)

    for inst in items:
        started = last = time.perf_counter()
        ends = {}  # bound -> nodes generated (cumulative) when its iteration ended
        current = [None]

        def progress(bound, generated, expanded, current=current, ends=ends, inst=inst, started=started):
            nonlocal last
            if current[0] is not None and bound != current[0]:
                ends[current[0]] = generated
            current[0] = bound
            now = time.perf_counter()
            if now - last >= 60:
                last = now
                print(f"    {inst.id}: bound {bound}, {generated:,} nodes, "
                      f"{generated / (now - started) / 1e6:.1f} M nodes/s, {now - started:.0f} s", file=sys.stderr,
                      flush=True)

        r = solver.solve(inst.tiles, time_limit=args.time_limit, progress=progress)
        last_bound = current[0] if current[0] is not None else r.h0
        row = {"id": inst.id, "optimal": inst.optimal, "h0": r.h0, "length": r.length, "solved": r.solved,
               "nodes_generated": r.nodes_generated, "nodes_expanded": r.nodes_expanded,
               "iterations": r.iterations, "seconds": round(r.seconds, 3), "cpu_seconds": round(r.cpu_seconds, 3),
               "nodes_per_second": round(r.nodes_generated / r.seconds) if r.seconds else None,
               "iteration_nodes": iteration_nodes(ends, r.h0, last_bound, r.nodes_generated),
               "published_nodes": PUBLISHED_NODES.get(str(inst.id))}
        if not r.solved:
            # every iteration below last_bound was exhausted: the optimum is at least last_bound
            row["last_bound"] = last_bound
            row["projection"] = project(row["iteration_nodes"], last_bound, inst.optimal, row["nodes_per_second"])
        if r.solved and r.length != inst.optimal:
            print(f"instance {inst.id}: length {r.length}, but the optimum is {inst.optimal}", file=sys.stderr)
            return 1
        rows.append(row)
        length = r.length if r.solved else "-"
        note = ""
        if not r.solved:
            pr = row["projection"]
            note = f"  (time limit in bound {last_bound}"
            if pr:
                note += (f"; projected {pr['nodes_low']:.2g}-{pr['nodes_high']:.2g} nodes, "
                         f"{pr['hours_low']:.1f}-{pr['hours_high']:.1f} h at this rate")
            note += ")"
        if row["published_nodes"]:
            note += f"  [published: {row['published_nodes']:,}]"
        print(f"{inst.id:>3} {inst.optimal:>4} {r.h0:>4} {length!s:>6} {r.nodes_generated:>17,} {r.seconds:>8.1f} "
              f"{r.cpu_seconds:>8.1f} {row['nodes_per_second'] / 1e6 if row['nodes_per_second'] else 0:>9.2f}"
              + note, flush=True)

    solved = [r for r in rows if r["solved"]]
    summary = {
        "instances": len(rows), "solved": len(solved),
        "mean_nodes_generated": round(sum(r["nodes_generated"] for r in solved) / len(solved)) if solved else None,
        "mean_seconds": round(sum(r["seconds"] for r in solved) / len(solved), 3) if solved else None,
        "total_seconds": round(sum(r["seconds"] for r in rows), 3),
        "total_cpu_seconds": round(sum(r["cpu_seconds"] for r in rows), 3),
        "target_total_seconds_for_ten": TARGET_SECONDS,
    }
    if solved:
        print(f"mean over {len(solved)} solved: {summary['mean_nodes_generated']:,} nodes, "
              f"{summary['mean_seconds']:.1f} s; total {summary['total_seconds']:.1f} s wall")
    print(f"published ({PUBLISHED['source']}): mean length {PUBLISHED['mean_length_of_50']} and about "
          f"{PUBLISHED['mean_nodes_of_50']:.1e} nodes per instance over all 50")
    report = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "load_average": os.getloadavg()},
        "command": " ".join([Path(sys.argv[0]).name] + (argv if argv is not None else sys.argv[1:])),
        "heuristic": solver.label, "threads": args.threads, "time_limit": args.time_limit,
        "setup_seconds": round(setup_seconds, 3), "instances": rows, "summary": summary, "published": PUBLISHED,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


def iteration_nodes(ends: dict, h0: int, last_bound: int, generated: int) -> list:
    """[bound, nodes generated in that iteration] for each iteration, from the cumulative counts at which
    the progress callback saw the bound change (exact with threads, where the search reports the end of
    every iteration; to within one chunk of nodes serially).  The last entry is the iteration that was
    running when the search stopped."""
    rows, before = [], 0
    for bound in sorted(ends):
        rows.append([bound, ends[bound] - before])
        before = ends[bound]
    if not rows or rows[-1][0] != last_bound:
        rows.append([last_bound, generated - before])
    return rows


def project(iters: list, last_bound: int, optimal: int | None, rate: float | None) -> dict | None:
    """An estimate, not a measurement: the nodes an unfinished instance would need, extrapolating the
    growth factor of its last two complete iterations to every iteration up to the optimum.  ``nodes_low``
    assumes the goal is met at the very start of the last iteration, ``nodes_high`` at its very end."""
    complete = [n for b, n in iters if b < last_bound]
    if optimal is None or len(complete) < 2 or complete[-2] <= 0:
        return None
    growth = complete[-1] / complete[-2]
    done_before = sum(complete)
    done_last = iters[-1][1]

    def full(bound):  # estimated size of the whole iteration of this bound
        return complete[-1] * growth ** ((bound - (last_bound - 2)) // 2)

    low = done_before + done_last if last_bound == optimal else done_before + max(done_last, full(last_bound))
    low += sum(full(b) for b in range(last_bound + 2, optimal, 2))
    high = (done_before + max(done_last, full(optimal)) if last_bound == optimal
            else low + full(optimal))
    out = {"growth_per_iteration": round(growth, 2), "nodes_low": low, "nodes_high": high}
    if rate:
        out["hours_low"] = low / rate / 3600
        out["hours_high"] = high / rate / 3600
    return out


if __name__ == "__main__":
    sys.exit(main())
