"""Benchmark: IDA* on Korf's 100 with the pattern tables in each encoding (pdbtool.heuristics.encoded).

Per partition (15-6-6-3; 15-7-8 when its tables are cached: 8-tile tables are never built here) and blank
rule, every encoding of the same tables solves the same instances with the diagonal reflection, one
instance at a time in turn across the encodings (so the load of the shared machine falls on all of them
alike).  Reported per encoding: nodes generated, search CPU seconds (thread time) and wall seconds, mean
h(start), and the ratios to the byte encoding of the same tables; lossless encodings are checked to
generate exactly the byte encoding's nodes on every instance, and every length against the optimum.
Targets: mod3 and parity within 1.5x the byte encoding's search time.

15-6-6-3 with blank-ignored tables needs ~12 M nodes an instance, so by default it runs the first 30
instances only (``--ignored-663 N``).

    .venv/bin/python bench/bench_solve_encodings.py [--cache-dir /tmp/pdbtool-bench-encodings] [--quick]
                                                    [--ignored-663 N] [--out FILE]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _results import write  # noqa: E402
from pdbtool.puzzle.board import Board  # noqa: E402
from pdbtool.tables.cache import TableCache  # noqa: E402
from pdbtool.puzzle.instances import load_instances  # noqa: E402
from pdbtool.tables.partitions import load_partition  # noqa: E402
from pdbtool.search.solver import Solver  # noqa: E402

ENCODINGS = {
    "ignored": [("byte", None), ("nibble", None), ("mod3", None), ("parity", None), ("sparse", None),
                ("min-nibble", 2), ("min-nibble", 4)],
    "minimized": [("byte", None), ("nibble", None), ("sparse", None), ("min-nibble", 2), ("min-nibble", 4)],
}
LOSSLESS = ("byte", "nibble", "mod3", "parity", "sparse")   # nibble/sparse: while nothing saturates (checked)
TARGET_RATIO = 1.5


def _name(encoding, group):
    return encoding if group is None else f"{encoding} C={group}"


def cached(cache: TableCache, partition, blank, encoding, group) -> bool:
    params = {"group": group} if group else None
    return all(cache.path_for(p, blank, encoding, params).exists() for p in partition.patterns)


def run_group(cache, board, part_name, blank, instances, allow_build):
    partition = load_partition(part_name, board)
    solvers = {}
    skipped = []
    for encoding, group in ENCODINGS[blank]:
        if not allow_build and not cached(cache, partition, blank, encoding, group):
            skipped.append(_name(encoding, group))
            continue
        s = Solver(board, partition=part_name, reflect=True, cache=cache, blank=blank, encoding=encoding, group=group)
        s.warm_up()
        solvers[_name(encoding, group)] = s
    if "byte" not in solvers:
        return None
    rows = {name: [] for name in solvers}
    for inst in instances:
        for name, s in solvers.items():
            r = s.solve(inst.tiles)
            if r.length != inst.optimal:
                raise SystemExit(f"{part_name} {blank} {name}: instance {inst.id}: length {r.length}, "
                                 f"optimal {inst.optimal}")
            rows[name].append((r.nodes_generated, r.nodes_expanded, r.cpu_seconds, r.seconds, r.h0))
    byte_nodes = [x[0] for x in rows["byte"]]
    byte_cpu = sum(x[2] for x in rows["byte"])
    out = []
    for name, rs in rows.items():
        cpu = sum(x[2] for x in rs)
        nodes = sum(x[0] for x in rs)
        entry = {
            "partition": part_name + "+reflect", "blank": blank, "encoding": name, "instances": len(rs),
            "nodes_generated": nodes, "nodes_expanded": sum(x[1] for x in rs),
            "mean_h0": round(sum(x[4] for x in rs) / len(rs), 3),
            "cpu_seconds": round(cpu, 3), "wall_seconds": round(sum(x[3] for x in rs), 3),
            "nodes_per_cpu_second": round(nodes / cpu) if cpu > 0 else None,
            "nodes_vs_byte": round(nodes / sum(byte_nodes), 4),
            "cpu_vs_byte": round(cpu / byte_cpu, 3) if byte_cpu > 0 else None,
            "bytes_on_disk": sum(cache.path_for(p, blank, *_enc_params(name)).stat().st_size
                                 for p in partition.patterns),
        }
        if name.split()[0] in LOSSLESS:
            entry["same_nodes_as_byte"] = [x[0] for x in rs] == byte_nodes
            if not entry["same_nodes_as_byte"]:
                raise SystemExit(f"{part_name} {blank} {name}: node counts differ from byte")
        if name in ("mod3", "parity"):
            entry["target_cpu_vs_byte"] = TARGET_RATIO
            entry["target_met"] = entry["cpu_vs_byte"] <= TARGET_RATIO
        out.append(entry)
        print(f"{entry['partition']:17} {blank:9} {name:14} {len(rs):3} inst  nodes {nodes:>13,}  "
              f"x{entry['nodes_vs_byte']:<7} cpu {cpu:8.2f} s  x{entry['cpu_vs_byte']:<6} "
              f"{entry['bytes_on_disk'] / 1e6:8.2f} MB", flush=True)
    return out, skipped


def _enc_params(name):
    if name.startswith("min-nibble"):
        return "min-nibble", {"group": int(name.split("=")[1])}
    return name, None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache-dir", default="/tmp/pdbtool-bench-encodings",
                    help="cache holding the tables (15-7-8 is skipped unless all its tables are there)")
    ap.add_argument("--quick", action="store_true", help="15-6-6-3 only, 10 instances")
    ap.add_argument("--ignored-663", type=int, default=30, help="instances for 15-6-6-3 with ignored tables")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "solve_encodings.json"))
    args = ap.parse_args(argv)
    board = Board(4, 4)
    cache = TableCache(args.cache_dir)
    instances = load_instances(str(ROOT / "examples" / "korf100.txt"), None, None)
    plan = [("15-6-6-3", "minimized", 100, True), ("15-6-6-3", "ignored", args.ignored_663, True),
            ("15-7-8", "minimized", 100, False), ("15-7-8", "ignored", 100, False)]
    if args.quick:
        plan = [(p, b, 10, True) for p, b, _, _ in plan[:2]]
    results, notes = [], []
    start = time.perf_counter()
    for part_name, blank, count, allow_build in plan:
        got = run_group(cache, board, part_name, blank, instances[:count], allow_build)
        if got is None:
            notes.append(f"{part_name} {blank}: byte tables not cached in {args.cache_dir}, skipped")
            print(notes[-1], flush=True)
            continue
        rows, skipped = got
        results += rows
        if skipped:
            notes.append(f"{part_name} {blank}: not cached, skipped: {', '.join(skipped)}")
    report = {
        "cache_dir": args.cache_dir, "seconds": round(time.perf_counter() - start, 1),
        "search": "single-threaded, diagonal reflection; cpu = thread time of the search",
        "results": results, "notes": notes,
    }
    print(f"wrote {write(args.out, report)}")


if __name__ == "__main__":
    main()
