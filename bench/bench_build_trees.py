"""Build time of the tile tables by this tree's builders against another tree's, in alternating rounds.

``--baseline-tree DIR`` is a copy of another commit's ``pdbtool`` package (``git archive COMMIT pdbtool |
tar -x -C DIR``).  Each round builds every case once with each tree, each build in a fresh process (its
kernels loaded by a small build first), alternating which tree goes first, so that both see the same
load.  The figures are CPU seconds (the machine may be shared) and wall seconds; the table bytes of the
two trees must be equal.  Writes bench/results/history/build_trees.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _results  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
from pdbtool.puzzle.board import Board
from pdbtool.tables.build import build_table
from pdbtool.tables.ranking import TilePattern
w, h, blank, tiles, threads = json.loads(sys.argv[1])
build_table(TilePattern(Board(3, 3), (1, 2)), blank)  # load the compiled kernels before timing
cpu0, wall0 = time.process_time(), time.perf_counter()
result = build_table(TilePattern(Board(w, h), tuple(tiles)), blank, threads=threads)
cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
import xxhash
print(json.dumps({"cpu_seconds": cpu, "seconds": wall, "xxh64": xxhash.xxh64(result.table.tobytes()).hexdigest()}))
"""

CASES = {"4x4-6-minimized": (4, 4, "minimized", [1, 2, 3, 4, 5, 6]),
         "4x4-6-ignored": (4, 4, "ignored", [1, 2, 3, 4, 5, 6]),
         "4x4-6-zero-aware": (4, 4, "zero-aware", [1, 2, 3, 4, 5, 6]),
         "4x4-7-minimized": (4, 4, "minimized", [1, 2, 3, 4, 5, 6, 7])}


def run(tree: Path, case: tuple, threads: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps([*case, threads])], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline-tree", type=Path, required=True)
    parser.add_argument("--tree", type=Path, default=ROOT, help="the tree measured (default: this one; a copy "
                        "made the same way keeps edits made meanwhile out of the measurement)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="default: the 6-tile ones")
    args = parser.parse_args()
    started, load_before = time.time(), _results.load_average()
    trees = {"this": args.tree.resolve(), "baseline": args.baseline_tree.resolve()}
    rows = {}
    for name in args.case or [c for c in CASES if "-6-" in c]:
        runs: dict[str, list[dict]] = {"this": [], "baseline": []}
        for r in range(args.rounds):
            order = ["this", "baseline"] if r % 2 == 0 else ["baseline", "this"]
            for which in order:
                runs[which].append(dict(run(trees[which], CASES[name], args.threads), load=_results.load_average()))
        digests = {run["xxh64"] for rs in runs.values() for run in rs}
        cpu = {which: statistics.median(x["cpu_seconds"] for x in rs) for which, rs in runs.items()}
        rows[name] = {"runs": runs, "same_bytes": len(digests) == 1, "median_cpu_seconds": cpu,
                      "cpu_ratio_this_over_baseline": round(cpu["this"] / cpu["baseline"], 4)}
        print(f"{name}: CPU s this {cpu['this']:.2f}, baseline {cpu['baseline']:.2f}, ratio "
              f"{rows[name]['cpu_ratio_this_over_baseline']:.3f}, same bytes {len(digests) == 1}", flush=True)
    _results.write(_results.RESULTS / "history" / "build_trees.json", {"cases": rows, "threads": args.threads},
                   command=sys.argv, started=started, load_before=load_before)


if __name__ == "__main__":
    main()
