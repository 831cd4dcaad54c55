"""Build time and peak memory of the tables (issue: pattern tables), each build in a fresh process.

Writes bench/results/build.json and prints a table. Targets (2 cores, 24 GiB): 15-7-8 minimized in
<= 100 s and <= 1.8 GB; its 7-tile table <= 8 s; 15-6-6-3 <= 3 s; a 24-puzzle 6-tile table <= 25 s and
<= 1 GB.  ``--quick`` leaves out the 8-tile and 24-puzzle builds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"

CHILD = r"""
import json, resource, sys, time
from pdbtool.puzzle.board import Board
from pdbtool.tables.build import build_table
from pdbtool.tables.ranking import TilePattern
w, h, blank, groups, threads = json.loads(sys.argv[1])
board = Board(w, h)
build_table(TilePattern(Board(3, 3), (1, 2)), blank)  # load the compiled kernels before timing
out = []
for tiles in groups:
    start = time.perf_counter()
    result = build_table(TilePattern(board, tuple(tiles)), blank, threads=threads)
    out.append({"tiles": tiles, "seconds": time.perf_counter() - start, "states": sum(result.layers),
                "max": int(result.table[result.table < 255].max()), "layers": len(result.layers)})
    del result
print(json.dumps({"tables": out, "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""

CASES = [
    # name, board, groups, targets {blank: (seconds, rss_bytes)}
    ("15-5-5-5", (4, 4), [[1, 2, 4, 5, 8], [3, 6, 7, 10, 11], [9, 12, 13, 14, 15]], {}),
    ("15-6-6-3", (4, 4), [[1, 2, 4, 5, 8, 9], [3, 6, 7, 10, 11, 15], [12, 13, 14]], {"minimized": (3.0, None)}),
    ("15-7 (tiles 1-7)", (4, 4), [[1, 2, 3, 4, 5, 6, 7]], {"minimized": (8.0, None)}),
    ("15-7-8", (4, 4), [[1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14, 15]], {"minimized": (100.0, 1.8e9)}),
    ("24: one 6-tile", (5, 5), [[1, 2, 5, 6, 7, 12]], {"minimized": (25.0, 1.0e9)}),
]


def run_case(board, groups, blank, threads):
    arg = json.dumps([board[0], board[1], blank, groups, threads])
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD, arg], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    data["wall_seconds"] = wall
    return data


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="leave out the 8-tile and 24-puzzle builds")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args(argv)
    rows = []
    for name, board, groups, targets in CASES:
        if args.quick and (board == (5, 5) or any(len(g) == 8 for g in groups)):
            continue
        for blank in ("minimized", "ignored"):
            data = run_case(board, groups, blank, args.threads)
            seconds = sum(t["seconds"] for t in data["tables"])
            target = targets.get(blank, (None, None))
            row = {"partition": name, "blank": blank, "threads": args.threads, "build_seconds": round(seconds, 2),
                   "peak_rss_bytes": data["peak_rss_bytes"], "tables": data["tables"],
                   "target_seconds": target[0], "target_rss_bytes": target[1]}
            row["meets_target"] = ((target[0] is None or seconds <= target[0])
                                   and (target[1] is None or data["peak_rss_bytes"] <= target[1]))
            rows.append(row)
            print(f"{name:18s} {blank:9s} {seconds:8.2f} s  peak RSS {data['peak_rss_bytes'] / 2**30:5.2f} GiB"
                  + (f"   target {target[0]:g} s" if target[0] else "")
                  + (f" / {target[1] / 1e9:g} GB" if target[1] else "")
                  + ("" if target[0] is None else ("  ok" if row["meets_target"] else "  MISSED")), flush=True)
    RESULTS.mkdir(exist_ok=True)
    report = {"benchmark": "build", "cpu_count": os.cpu_count(), "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
              "rows": rows}
    (RESULTS / "build.json").write_text(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
