"""Dynamically partitioned pattern databases beside the static partitions, on Korf's 100 and the 24-puzzle.

For each heuristic: mean h(start) over all instances of the file, then IDA* on the chosen instances
(single-threaded, one process): solved, mean nodes generated, total seconds of search (wall clock, and the
process's CPU time, which a machine shared with other jobs disturbs much less), nodes per CPU second.
Every solved length is checked against the file's optimum.  Writes bench/results/dynamic.json (each entry
with the machine, its cores, the date, the git commit, the command and the load average).

    python bench/bench_dynamic.py                      # Korf's 100, every heuristic
    python bench/bench_dynamic.py --instances 1-25     # a subset (reported as such)
    python bench/bench_dynamic.py --only "ddb-pairs;ddb-pairs+triples" --time-limit 60
    python bench/bench_dynamic.py --board 5x5 --instances 1-10 --time-limit 600
    python bench/bench_dynamic.py --only "ddb-pairs+triples-region" --h-only   # mean h(start) only
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from pdbtool.puzzle.board import Board  # noqa: E402
from pdbtool.search.solver import Solver  # noqa: E402

PUBLISHED_15 = {  # Felner, Korf & Hanan (2004), Korf's 100, means per instance (docs/literature.md)
    "ddb-pairs": {"mean_h": 40.43, "mean_nodes": 9_983_886},  # Felner's talk
    "ddb-pairs+triples": {"mean_h": 42.79, "mean_nodes": 707_476},  # Felner's talk
    "pdb 15-5-5-5+reflect": {"mean_h": 41.6, "mean_nodes": 3_090_000},
    "pdb 15-6-6-3+reflect": {"mean_h": 42.9, "mean_nodes": 618_000},
}


def read_instances(path: Path, n: int):
    out = []
    for line in path.read_text().splitlines():
        body, _, comment = line.partition("#")
        v = [int(x) for x in body.split()]
        if not v:
            continue
        optimal = None
        if len(v) == n + 2:  # id, the cells, the optimal length (korf24_first10.txt)
            v, optimal = v[:-1], v[-1]
        ident, tiles = (v[0], v[1:]) if len(v) == n + 1 else (len(out) + 1, v)
        words = comment.split()
        if "optimal" in words:
            optimal = int(words[words.index("optimal") + 1])
        out.append((ident, tuple(tiles), optimal))
    return out


def configs(board: Board):
    """The heuristics compared on ``board``: each partition with the reflection, the dynamic sets, and the
    maximum of each partition with pairs+triples, in that order (the names key the published figures)."""
    if board.n == 16:
        partitions = ("15-5-5-5", "15-6-6-3")
        dynamic = ("pairs", "pairs+triples", "pairs+triples-fkh", "pairs-region", "pairs+triples-region")
    else:
        partitions = ("24-6-6-6-6",)
        dynamic = ("pairs+triples", "pairs+triples-fkh", "pairs+triples-region")
    table = {f"pdb {p}+reflect": dict(heuristic="pdb", partition=p) for p in partitions}
    table.update({f"ddb-{d}": dict(heuristic="ddb", dynamic=d) for d in dynamic})
    table.update({f"max({p}+reflect, ddb-pairs+triples)": dict(heuristic="max", dynamic="pairs+triples", partition=p)
                  for p in partitions})
    return table


def default_instances(board: Board) -> Path:
    """Korf's 100 on 4x4, Korf & Felner's first ten 24-puzzles otherwise."""
    return ROOT / "examples" / ("korf100.txt" if board.n == 16 else "korf24.txt")


def run_facts() -> dict:
    """Where and how this run was made: machine, cores, date, git commit, command, load average."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                check=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                                    capture_output=True, text=True, check=True).stdout.strip())
    except (OSError, subprocess.CalledProcessError):
        commit, dirty = None, None
    return {"machine": f"{platform.node()} {platform.machine()} {platform.processor() or ''}".strip(),
            "cores": os.cpu_count(), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "git_commit": commit, "git_dirty": dirty,
            "command": " ".join(shlex.quote(a) for a in [Path(sys.executable).name, *sys.argv]),
            "load_average": [round(x, 2) for x in os.getloadavg()]}


def parse_range(text: str | None, count: int) -> list[int]:
    if not text:
        return list(range(count))
    picked = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        picked.extend(range(int(a) - 1, int(b or a)))
    return [i for i in picked if 0 <= i < count]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--board", default="4x4")
    ap.add_argument("--file", default=None, help="instances (default: Korf's 100, or korf24_first10 on 5x5)")
    ap.add_argument("--instances", default=None, help="1-based positions in the file, e.g. 1-25 or 1,3,5-7")
    ap.add_argument("--only", default=None, help="configuration names separated by semicolons")
    ap.add_argument("--time-limit", type=float, default=None, help="per instance, seconds of search")
    ap.add_argument("--out", default=str(HERE / "results" / "dynamic.json"))
    ap.add_argument("--quick", action="store_true", help="Korf's instances 1-10 only")
    ap.add_argument("--h-only", action="store_true", help="mean h(start) over the file, no search")
    args = ap.parse_args()
    board = Board.parse(args.board)
    path = Path(args.file) if args.file else default_instances(board)
    instances = read_instances(path, board.n)
    chosen = parse_range("1-10" if args.quick and not args.instances else args.instances, len(instances))
    table = configs(board)
    names = [n.strip() for n in args.only.split(";")] if args.only else list(table)
    out_path = Path(args.out)
    results = json.loads(out_path.read_text()) if out_path.exists() else {}
    key = f"{board.dims}" + (" h(start)" if args.h_only else "")
    results.setdefault(key, {})
    for name in names:
        start = time.perf_counter()
        solver = Solver(board, **table[name])
        setup = time.perf_counter() - start
        facts = run_facts()
        h0 = [solver.h(s) for _, s, _ in instances]
        rows = []
        for i in ([] if args.h_only else chosen):
            ident, state, optimal = instances[i]
            cpu = time.process_time()
            r = solver.solve(state, time_limit=args.time_limit)
            cpu = time.process_time() - cpu
            if r.solved and optimal is not None and r.length != optimal:
                raise SystemExit(f"{name}: instance {ident} solved in {r.length}, optimal is {optimal}")
            rows.append({"id": ident, "h0": r.h0, "length": r.length, "nodes": r.nodes_generated,
                         "expanded": r.nodes_expanded, "seconds": round(r.seconds, 4), "cpu_seconds": round(cpu, 4),
                         "solved": r.solved,
                         "iterations": r.iterations, "optimal": optimal})
            print(f"  {name} #{ident}: h0 {r.h0} length {r.length} nodes {r.nodes_generated:,} "
                  f"{r.seconds:.2f} s", file=sys.stderr, flush=True)
        solved = [r for r in rows if r["solved"]]
        nodes = sum(r["nodes"] for r in solved)
        seconds = sum(r["seconds"] for r in solved)
        cpu = sum(r["cpu_seconds"] for r in solved)
        summary = {"run": facts, "h0_all": h0, "instances_file": str(path.name),
                   "instances_run": [r["id"] for r in rows],
                   "solved": len(solved), "unsolved_ids": [r["id"] for r in rows if not r["solved"]],
                   "time_limit": args.time_limit, "setup_seconds": round(setup, 2),
                   "mean_h0_all": round(sum(h0) / len(h0), 3),
                   "mean_h0_run": round(sum(r["h0"] for r in rows) / max(1, len(rows)), 3),
                   "mean_nodes": round(nodes / max(1, len(solved))), "total_nodes": nodes,
                   "seconds": round(seconds, 2), "nodes_per_second": round(nodes / seconds) if seconds else None,
                   "cpu_seconds": round(cpu, 2), "nodes_per_cpu_second": round(nodes / cpu) if cpu else None,
                   "published": PUBLISHED_15.get(name) if board.n == 16 else None, "rows": rows}
        # merge into the file as it is now: another run (another board) may have written it meanwhile
        results = json.loads(out_path.read_text()) if out_path.exists() else {}
        results.setdefault(key, {})[name] = summary
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(json.dumps(results, indent=1))
        del solver
    print(render(results.get(key, {}), board))


def render(results: dict, board: Board) -> str:
    lines = [f"{board.dims}: heuristic | run | solved | mean h0 (all) | mean nodes | wall s | CPU s | "
             "nodes/CPU s | published mean h0 / nodes"]
    for name, s in results.items():
        pub = s.get("published") or {}
        pub_text = f"{pub['mean_h']} / {pub['mean_nodes']:,}" if pub else "-"
        run = s["instances_run"]
        run_text = f"{len(run)} ({run[0]}-{run[-1]})" if run else "0"
        nps = f"{s['nodes_per_cpu_second']:,}" if s.get("nodes_per_cpu_second") else "-"
        lines.append(f"{name} | {run_text} | {s['solved']} | {s['mean_h0_all']} | {s['mean_nodes']:,} | "
                     f"{s['seconds']} | {s.get('cpu_seconds', '-')} | {nps} | {pub_text}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
