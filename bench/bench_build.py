"""Build time, CPU time and peak memory of the tables (issue 13), each table built in a fresh process.

Per table: wall and CPU seconds, peak RSS, states expanded, moves looked up, CPU nanoseconds per state, and
a floor for this machine: the moves the build looked up, divided by the rate of random one-byte loads
from an array the size of the build's state array (measured here by a small Numba gather loop, one
thread, so the floor is CPU seconds; the wall floor divides it by the threads).  ``--baseline FILE``
builds every table a second time with another builder module (e.g. an older ``bfs.py`` extracted from
git, its relative imports made absolute), alternating with the current one, so that before/after ratios come
from one run under one load.

Writes bench/results/build.json (machine, cores, load, date, git commit, command) and prints a table; with
``--baseline`` the run describes a change, not the code, and writes bench/results/history/build_baseline.json.
Targets (2 idle cores): 15-7-8 minimized <= 100 s and <= 1.8 GB; its 7-tile table <= 10 s; 15-6-6-3
<= 3 s; one 24-puzzle 6-tile table <= 20 s; 24-6-6-6-6 (two tables built, two shared) <= 45 s.
``--quick`` leaves out the 8-tile and 24-puzzle builds.  ``--append`` keeps the rows of the results file
that this run does not measure again (each row records the command and commit that measured it), so
that cases too long for one run can be measured in several.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
REPO = Path(__file__).resolve().parent.parent

CHILD = r"""
import importlib, json, os, resource, sys, time
from pdbtool.puzzle.board import Board
from pdbtool.tables.ranking import TilePattern
w, h, blank, tiles, threads, module = json.loads(sys.argv[1])
if module:  # imported under its own name, so that Numba's cache finds its kernels
    sys.path.insert(0, os.path.dirname(module))
    bfs = importlib.import_module(os.path.basename(module).removesuffix(".py"))
else:
    import pdbtool.tables.build as bfs
bfs.build_table(TilePattern(Board(3, 3), (1, 2)), blank)  # load the compiled kernels before timing
cpu0, wall0 = time.process_time(), time.perf_counter()
result = bfs.build_table(TilePattern(Board(w, h), tuple(tiles)), blank, threads=threads)
cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
import xxhash
print(json.dumps({"seconds": wall, "cpu_seconds": cpu, "states": sum(result.layers), "layers": len(result.layers),
                  "moves": getattr(result, "moves", None), "max": int(result.table[result.table < 255].max()),
                  "xxh64": xxhash.xxh64(result.table.tobytes()).hexdigest(),
                  "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""

GATHER = r"""
import json, sys, time
import numpy as np
from numba import njit

@njit
def gather(a, idx):
    s = 0
    for i in range(idx.shape[0]):
        s += a[idx[i]]
    return s

size = int(sys.argv[1])
a = np.ones(size, dtype=np.uint8)
idx = np.random.default_rng(1).integers(0, size, 20_000_000)
gather(a, idx[:10])
start = time.process_time()
gather(a, idx)
print(json.dumps({"loads_per_second": len(idx) / (time.process_time() - start)}))
"""

# name, board, tables built (a partition's tables shared by symmetry are left out), targets
# {blank: (seconds, rss_bytes)} for the whole case
CASES = [
    ("15-5-5-5", (4, 4), [[1, 2, 4, 5, 8], [3, 6, 7, 10, 11], [9, 12, 13, 14, 15]], {}),
    ("15-6-6-3", (4, 4), [[1, 2, 4, 5, 8, 9], [3, 6, 7, 10, 11, 15], [12, 13, 14]], {"minimized": (3.0, None)}),
    ("15-7 (tiles 1-7)", (4, 4), [[1, 2, 3, 4, 5, 6, 7]], {"minimized": (10.0, None)}),
    ("15-7-8", (4, 4), [[1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14, 15]], {"minimized": (100.0, 1.8e9)}),
    ("24: one 6-tile", (5, 5), [[1, 2, 5, 6, 7, 12]], {"minimized": (20.0, None)}),
    ("24-6-6-6-6", (5, 5), [[1, 2, 5, 6, 7, 12], [3, 4, 8, 9, 13, 14]], {"minimized": (45.0, None)}),
]


def state_bytes(board, k, blank):
    """Bytes of the array a build looks its moves up in: the byte table, or the two-bit states."""
    from math import perm

    n = board[0] * board[1]
    entries = perm(n, k)
    return entries if blank == "ignored" else (entries * (n - k) + 3) // 4


def run_child(code, *args):
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=REPO)
    if proc.returncode:
        sys.exit(f"bench_build: a child process failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def load_rate(size, rates):
    """Random byte loads per second per thread from an array of ``size`` bytes (measured once per size)."""
    size = max(1 << 20, size)
    if size not in rates:
        rates[size] = run_child(GATHER, str(size))["loads_per_second"]
    return rates[size]


def git_commit():
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=REPO,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="leave out the 8-tile and 24-puzzle builds")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--blank", choices=["minimized", "ignored", "both"], default="both")
    parser.add_argument("--only", default=None, help="run only the cases whose name contains this text")
    parser.add_argument("--baseline", default=None, metavar="FILE",
                        help="a builder module (bfs.py) to build every table with too, alternating")
    parser.add_argument("--append", action="store_true",
                        help="keep the results file's rows of the cases and builders not measured again")
    args = parser.parse_args(argv)
    out = RESULTS / "history" / "build_baseline.json" if args.baseline else RESULTS / "build.json"
    kept = _earlier_rows(out) if args.append else []
    blanks = ("minimized", "ignored") if args.blank == "both" else (args.blank,)
    builders = [("current", None)] + ([("baseline", str(Path(args.baseline).resolve()))] if args.baseline else [])
    rates: dict[int, float] = {}
    rows = []
    for name, board, groups, targets in CASES:
        if args.quick and (board == (5, 5) or any(len(g) == 8 for g in groups)):
            continue
        if args.only and args.only not in name:
            continue
        for blank in blanks:
            for builder, module in builders:
                load_before = os.getloadavg()[0]
                tables = []
                for tiles in groups:
                    data = run_child(CHILD, json.dumps([board[0], board[1], blank, tiles, args.threads, module]))
                    data["tiles"] = tiles
                    if data.get("moves"):
                        size = state_bytes(board, len(tiles), blank)
                        rate = load_rate(size, rates)
                        data["floor_cpu_seconds"] = round(data["moves"] / rate, 2)
                        data["floor_wall_seconds"] = round(data["moves"] / rate / args.threads, 2)
                        data["floor_how"] = (f"{data['moves']:,} moves looked up / {rate / 1e6:.1f} M random byte "
                                             f"loads per second per thread from {size / 2**20:,.0f} MiB")
                    data["ns_per_state"] = round(data["cpu_seconds"] / data["states"] * 1e9, 1)
                    tables.append(data)
                seconds = sum(t["seconds"] for t in tables)
                cpu = sum(t["cpu_seconds"] for t in tables)
                rss = max(t["peak_rss_bytes"] for t in tables)
                target = targets.get(blank, (None, None))
                row = {"partition": name, "blank": blank, "builder": builder, "threads": args.threads,
                       "build_seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2), "peak_rss_bytes": rss,
                       "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2),
                       "tables": tables, "target_seconds": target[0], "target_rss_bytes": target[1],
                       "command": " ".join([Path(sys.executable).name, *sys.argv]), "git_commit": git_commit()}
                row["meets_target"] = ((target[0] is None or seconds <= target[0])
                                       and (target[1] is None or rss <= target[1]))
                rows.append(row)
                floor = sum(t.get("floor_wall_seconds", 0) for t in tables)
                print(f"{name:18s} {blank:9s} {builder:8s} wall {seconds:7.2f} s  cpu {cpu:7.2f} s  "
                      f"peak RSS {rss / 2**30:5.2f} GiB  floor ~{floor:6.1f} s  load {load_before:.1f}"
                      + (f"   target {target[0]:g} s" if target[0] else "")
                      + (f" / {target[1] / 1e9:g} GB" if target[1] else "")
                      + ("" if target[0] is None else ("  ok" if row["meets_target"] else "  MISSED")), flush=True)
                # after every row: a long run stopped early keeps what it measured
                write_report(_merged(kept, rows), rates, out)
    return write_report(_merged(kept, rows), rates, out)


def _earlier_rows(path: Path):
    try:
        return json.loads(path.read_text())["rows"]
    except (OSError, ValueError, KeyError):
        return []


def _merged(kept, rows):
    """The earlier rows of the cases not measured in this run, then this run's, in the order of CASES."""
    def key(row):
        return row["partition"], row["blank"], row["builder"]

    fresh = {key(row) for row in rows}
    order = {name: i for i, (name, *_rest) in enumerate(CASES)}
    merged = [row for row in kept if key(row) not in fresh] + rows
    return sorted(merged, key=lambda row: (order.get(row["partition"], len(order)), row["blank"] != "minimized"))


def write_report(rows, rates, path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    report = {"benchmark": "build", "machine": platform.processor() or platform.machine(),
              "cpu_model": _cpu_model(), "cpu_count": os.cpu_count(), "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
              "git_commit": git_commit(), "command": " ".join([Path(sys.executable).name, *sys.argv]),
              "random_byte_loads_per_second": {str(k): round(v) for k, v in rates.items()}, "rows": rows}
    path.write_text(json.dumps(report, indent=2))
    return report


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    main()
