"""CPU per node of each heuristic's search, optionally against another checkout of pdbtool (``make bench``).

Each case solves a fixed set of instances (single-threaded, ``Solver.solve``) in a fresh process and sums
the nodes generated and the CPU seconds of the searching thread (``SolveResult.cpu_seconds``; compilation
and table loading are excluded by a warm-up, and the pattern tables are paged in by a first untimed pass).
With ``--compare DIR`` every case also runs in the checkout at DIR (e.g. ``git worktree add`` or ``git
archive`` of an older commit), alternating the two in every round, so that both see the same load; the
node counts of the two must be equal, and the report gives each round's CPU ratio.

Writes ``bench/results/kernels.json`` (machine, cores, load, date, commit, command, per case and round:
nodes, CPU seconds, nanoseconds per node), the page's figures of the code as it is; a run with ``--compare``
describes a change, not the code, and writes ``bench/results/history/kernels_<this>_vs_<other>.json``
unless ``--out`` says where.  Tables are taken from the cache (``--cache-dir`` or
``$PDBTOOL_CACHE_DIR``) and built there on first use (the 15-7-8 tables take many minutes once).

    .venv/bin/python bench/bench_kernels.py [--quick] [--rounds N] [--only CASE ...] [--compare DIR]
                                            [--cache-dir DIR] [--out FILE]
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

ROOT = Path(__file__).resolve().parents[1]

# instances that Manhattan solves in 10 to 20 M nodes each (Korf 1985), 181 M in all
MD_SET = (2, 5, 13, 16, 20, 23, 39, 58, 65, 77, 96)

# name: (Solver options, Korf instances, node limit per instance or None, paged-in tables); every instance
# is solved (a node limit would stop the two checkouts a few nodes apart)
CASES = {
    "manhattan": (dict(heuristic="manhattan"), MD_SET, None, False),
    "linear-conflict": (dict(heuristic="linear-conflict"), (1,) + MD_SET, None, False),
    "pdb 15-7-8+reflect": (dict(heuristic="pdb", partition="15-7-8"), range(1, 101), None, True),
    "pdb 15-6-6-3+reflect": (dict(heuristic="pdb", partition="15-6-6-3"), range(1, 101), None, True),
    "nibble 15-5-5-5+reflect": (dict(heuristic="pdb", partition="15-5-5-5", encoding="nibble"), range(1, 31),
                                None, True),
    "ddb pairs+triples": (dict(heuristic="ddb", dynamic="pairs+triples"), range(1, 11), None, False),
    "max(15-5-5-5+reflect, ddb)": (dict(heuristic="max", dynamic="pairs+triples", partition="15-5-5-5"),
                                   range(1, 11), None, True),
}
QUICK = {"manhattan", "linear-conflict", "pdb 15-6-6-3+reflect", "nibble 15-5-5-5+reflect", "ddb pairs+triples"}


def measure(case: str, cache_dir: str | None) -> dict:
    """Run one case in this process, with the pdbtool found first on sys.path."""
    from pdbtool.puzzle.board import Board
    from pdbtool.puzzle.instances import load_instances
    from pdbtool.search.solver import Solver

    options, ids, node_limit, page_in = CASES[case]
    board = Board(4, 4)
    instances = {int(i.id): i.tiles for i in load_instances(str(ROOT / "examples" / "korf100.txt"))}
    solver = Solver(board, cache_dir=cache_dir, **options)
    solver.warm_up()
    if page_in:
        for i in ids:
            solver.solve(instances[i], node_limit=node_limit)
    nodes = cpu = 0
    counts = []
    for i in ids:
        r = solver.solve(instances[i], node_limit=node_limit)
        nodes += r.nodes_generated
        cpu += r.cpu_seconds
        counts.append((r.nodes_generated, r.iterations, r.length))
    import pdbtool

    return {"nodes": nodes, "cpu_seconds": cpu, "counts": counts, "package": str(Path(pdbtool.__file__).parent)}


def run_case(root: Path, case: str, cache_dir: str | None) -> dict:
    """Measure ``case`` in a fresh process on the checkout at ``root``."""
    code = (f"import sys, json; sys.path.insert(0, {str(root)!r}); sys.path.insert(1, {str(ROOT / 'bench')!r}); "
            f"import bench_kernels; print(json.dumps(bench_kernels.measure({case!r}, {cache_dir!r})))")
    load = os.getloadavg()[0]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"{case} in {root} failed:\n{out.stderr[-2000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if not result["package"].startswith(str(root)):
        raise SystemExit(f"{case}: ran the pdbtool at {result['package']}, not the one in {root}")
    result["load_before"] = load
    result["ns_per_node"] = 1e9 * result["cpu_seconds"] / max(1, result["nodes"])
    return result


def commit_of(root: Path) -> str | None:
    out = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip() or None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="leave out the cases that need the large tables")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", nargs="*", help="case names (default: all)")
    ap.add_argument("--compare", type=Path, help="another checkout of pdbtool to alternate with")
    ap.add_argument("--cache-dir", default=os.environ.get("PDBTOOL_CACHE_DIR"))
    ap.add_argument("--out", type=Path, help="default: bench/results/kernels.json, or with --compare "
                                             "bench/results/history/kernels_<this>_vs_<other>.json")
    args = ap.parse_args()
    cases = args.only or [c for c in CASES if not args.quick or c in QUICK]
    trees = {"this": ROOT} | ({"other": args.compare.resolve()} if args.compare else {})
    if args.out is None:
        results = ROOT / "bench" / "results"
        args.out = results / "kernels.json" if not args.compare else \
            results / "history" / f"kernels_{commit_of(ROOT)}_vs_{commit_of(args.compare) or args.compare.name}.json"
    report = {"machine": platform.node(), "processor": platform.processor() or platform.machine(),
              "cores": os.cpu_count(), "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
              "command": " ".join([Path(sys.executable).name, *sys.argv]),
              "commits": {name: commit_of(root) for name, root in trees.items()},
              "trees": {name: str(root) for name, root in trees.items()}, "cases": {}}
    for case in cases:
        rounds = []
        for r in range(args.rounds):
            order = list(trees) if r % 2 == 0 else list(reversed(trees))
            rounds.append({name: run_case(trees[name], case, args.cache_dir) for name in order})
        row = {"rounds": [{name: {k: v[k] for k in ("nodes", "cpu_seconds", "ns_per_node", "load_before")}
                           for name, v in rnd.items()} for rnd in rounds]}
        this = [rnd["this"]["ns_per_node"] for rnd in rounds]
        row["ns_per_node_min"] = {"this": min(this)}
        line = f"{case:28s} {rounds[0]['this']['nodes']:>13,} nodes  this {min(this):7.1f} ns/node"
        if "other" in trees:
            if any(rnd["this"]["counts"] != rnd["other"]["counts"] for rnd in rounds):
                raise SystemExit(f"{case}: the node counts of the two checkouts differ")
            other = [rnd["other"]["ns_per_node"] for rnd in rounds]
            ratios = sorted(t / o for t, o in zip(this, other))
            row["ns_per_node_min"]["other"] = min(other)
            row["ratio_per_round"] = ratios
            row["ratio_of_minima"] = min(this) / min(other)
            line += f"  other {min(other):7.1f}  this/other: min-min {min(this) / min(other):.3f}, " \
                    f"per round {', '.join(f'{x:.3f}' for x in ratios)}"
        print(line, flush=True)
        report["cases"][case] = row
    report["load_after"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
