"""Do the builders and the search keep their speed from one checkout to another (the lift to 64 cells,
the package's rework)?

Times the same work in two checkouts, ``--before`` (e.g. a worktree of ``main`` from before the lift, with its
own virtual environment) and ``--after`` (default: this one), each case in a fresh process of the
checkout's own Python, rounds alternating before / after / before / after ... so that both see the same
load.  Each process first runs the case's kernels once on a small input (Numba's compilation and cache
loads are not timed), then times the case in CPU seconds of the process (``time.process_time``), the
figure that a loaded machine disturbs least.  Cases:

* ``build-15-7``: the 15-puzzle table of tiles 1-7, blank minimized, one thread;
* ``build-24-5``: the 24-puzzle table of tiles 1,2,5,6,7 (5 tiles), blank minimized, one thread;
* ``solve-15-7-8``: Korf's 100 (or the first ``--korf`` of them) with 15-7-8 and its reflection;
* ``solve-manhattan``: the Korf instances ``--md-ids`` with Manhattan;
* ``solve-24``: 24-puzzle instances (``--ids24``, Korf & Felner's numbering) with 6-6-6-6 and reflection;
* ``solve-24-cat7``: the same instances with ``24-cat-7`` zero-aware and the automaton of 16 moves;
* ``solve-24-cat7-max``: the same with the max of that catalogue and ``pairs+triples-region``;
* ``solve-24-max-zero-aware``: the same instances with the max of 6-6-6-6 zero-aware and ``pairs+triples``.
* ``solve-15-E`` for each compact encoding E (``nibble``, ``sparse``, ``min-nibble`` with groups of 2, and
  ``mod3``, ``parity`` on blank-ignored tables): the Korf instances ``--ids15`` with 15-6-6-3 and reflection;
* ``solve-15-ddb``: the same instances with ``ddb`` and ``pairs+triples``.

The solve cases read their tables from ``--cache-dir`` (the same files for both checkouts).  Writes
``bench/results/history/lift64.json``: per case the CPU seconds of every round, the medians, after / before (the
ratio of the medians), the load averages and both commits, with the machine, load and command of the run
(``--append`` keeps the cases of an earlier run, each with its own commits and command).
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

REPO = Path(__file__).resolve().parents[1]
DATA = Path("/work/shared/data")

CHILD = r"""
import json, sys, time
case, args = sys.argv[1], json.loads(sys.argv[2])
from pdbtool.puzzle.board import Board

def korf(path, cells):
    out = {}
    for line in open(path):
        body = line.split("#", 1)[0].split()
        if len(body) >= cells + 1:
            out[int(body[0])] = [int(x) for x in body[1:cells + 1]]
    return out

if case.startswith("build"):
    from pdbtool.tables.build import build_table
    from pdbtool.tables.ranking import TilePattern
    build_table(TilePattern(Board(3, 3), (1, 2)), "minimized", threads=1)
    board = Board(*args["board"])
    pattern = TilePattern(board, tuple(args["tiles"]))
    cpu = time.process_time()
    result = build_table(pattern, "minimized", threads=1)
    cpu = time.process_time() - cpu
    print(json.dumps({"cpu_seconds": cpu, "states": sum(result.layers)}))
else:
    from pdbtool.search.solver import Solver
    board = Board(*args["board"])
    kwargs = {"partition": args["partition"]} if args.get("partition") else {}
    import inspect
    if "pruning" in inspect.signature(Solver).parameters:  # the parent rule: a checkout without the option has it
        kwargs["pruning"] = "parent"
    kwargs.update(args.get("options", {}))
    solver = Solver(board, heuristic=args["heuristic"], cache_dir=args["cache_dir"], **kwargs)
    instances = korf(args["file"], board.n)
    states = [instances[i] for i in args["ids"]]
    solver.solve(states[0], node_limit=1000)  # compile or load the driver before timing
    kernel = getattr(solver.heuristic, "heuristic", solver.heuristic)
    kernel = getattr(kernel, "static", kernel)
    for table in getattr(kernel, "tables", getattr(kernel, "row_tables", [])):  # and fault the mapped tables in
        int(table[::4096].sum())
    cpu = time.process_time()
    nodes = 0
    for s in states:
        nodes += solver.solve(s).nodes_generated
    cpu = time.process_time() - cpu
    print(json.dumps({"cpu_seconds": cpu, "nodes": nodes}))
"""


def cases(args) -> dict[str, dict]:
    korf100 = str(REPO / "examples" / "korf100.txt")
    korf24 = str(DATA / "korf24_50.txt")
    out = {
        "build-15-7": {"board": [4, 4], "tiles": list(range(1, 8))},
        "build-24-5": {"board": [5, 5], "tiles": [1, 2, 5, 6, 7]},
        "solve-15-7-8": {"board": [4, 4], "heuristic": "pdb", "partition": "15-7-8", "file": korf100,
                         "ids": list(range(1, args.korf + 1)), "cache_dir": args.cache_dir},
        "solve-manhattan": {"board": [4, 4], "heuristic": "manhattan", "file": korf100, "ids": args.md_ids,
                            "cache_dir": args.cache_dir},
        "solve-24": {"board": [5, 5], "heuristic": "pdb", "partition": "24-6-6-6-6", "file": korf24,
                     "ids": args.ids24, "cache_dir": args.cache_dir},
        "solve-24-cat7": {"board": [5, 5], "heuristic": "pdb", "partition": "24-cat-7", "file": korf24,
                          "ids": args.ids24, "cache_dir": args.cache_dir,
                          "options": {"blank": "zero-aware", "pruning": "fsm", "fsm_depth": 16}},
        "solve-24-cat7-max": {"board": [5, 5], "heuristic": "max", "partition": "24-cat-7", "file": korf24,
                              "ids": args.ids24, "cache_dir": args.cache_dir,
                              "options": {"blank": "zero-aware", "pruning": "fsm", "fsm_depth": 16,
                                          "dynamic": "pairs+triples-region"}},
        "solve-24-max-zero-aware": {"board": [5, 5], "heuristic": "max", "partition": "24-6-6-6-6", "file": korf24,
                                    "ids": args.ids24, "cache_dir": args.cache_dir,
                                    "options": {"blank": "zero-aware", "pruning": "fsm", "fsm_depth": 16,
                                                "dynamic": "pairs+triples"}},
    }
    for encoding in ("nibble", "sparse", "min-nibble", "mod3", "parity"):
        options: dict = {"encoding": encoding, "blank": "ignored" if encoding in ("mod3", "parity") else "minimized"}
        if encoding == "min-nibble":
            options["group"] = 2
        out[f"solve-15-{encoding}"] = {"board": [4, 4], "heuristic": "pdb", "partition": "15-6-6-3", "file": korf100,
                                       "ids": args.ids15, "cache_dir": args.cache_dir, "options": options}
    out["solve-15-ddb"] = {"board": [4, 4], "heuristic": "ddb", "file": korf100, "ids": args.ids15,
                           "cache_dir": args.cache_dir, "options": {"dynamic": "pairs+triples"}}
    return out


def run_case(checkout: Path, case: str, spec: dict) -> dict:
    python = checkout / ".venv" / "bin" / "python"
    env = dict(os.environ, PYTHONPATH=str(checkout))
    out = subprocess.run([str(python), "-c", CHILD, case, json.dumps(spec)], cwd=checkout, env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{case} in {checkout} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="the checkout before (with its .venv)")
    parser.add_argument("--after", type=Path, default=REPO, help="the checkout after (default: this one)")
    parser.add_argument("--rounds", type=int, default=3, help="before/after pairs per case")
    parser.add_argument("--cases", default="build-15-7,build-24-5,solve-15-7-8,solve-manhattan,solve-24")
    parser.add_argument("--cache-dir", default=os.environ.get("PDBTOOL_CACHE_DIR"),
                        help="tables of 15-7-8 and 24-6-6-6-6 (read only)")
    parser.add_argument("--korf", type=int, default=100, help="Korf's instances 1..N with 15-7-8")
    parser.add_argument("--md-ids", type=lambda s: [int(x) for x in s.split(",")], default=[2, 5, 9, 12, 13, 16, 19],
                        help="Korf's instances with Manhattan")
    parser.add_argument("--ids24", type=lambda s: [int(x) for x in s.split(",")], default=[38, 40],
                        help="24-puzzle instances with 6-6-6-6")
    parser.add_argument("--ids15", type=lambda s: [int(x) for x in s.split(",")], default=[26, 13, 16],
                        help="Korf's instances of the encoded and dynamic cases (solve-15-*)")
    parser.add_argument("--out", type=Path, default=_results.RESULTS / "history" / "lift64.json")
    parser.add_argument("--append", action="store_true",
                        help="keep the cases of --out that this run does not measure (each with its own meta)")
    args = parser.parse_args()
    started, load_before = time.time(), _results.load_average()
    specs = cases(args)
    chosen = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [c for c in chosen if c not in specs]
    if unknown:
        raise SystemExit(f"unknown cases {unknown}: choose from {', '.join(specs)}")
    results = {}
    for case in chosen:
        rows = {"before": [], "after": []}
        loads = []
        for r in range(args.rounds):
            # alternate which side goes first, so that a drift in the load favours neither
            order = ("before", "after") if r % 2 == 0 else ("after", "before")
            for side in order:
                got = run_case(args.before if side == "before" else args.after, case, specs[case])
                rows[side].append(got)
                loads.append(_results.load_average())
                print(f"{case:16} {side:6} round {r + 1}: {got['cpu_seconds']:8.3f} CPU s  load {loads[-1]}",
                      flush=True)
        work = {k: v for k, v in rows["after"][0].items() if k != "cpu_seconds"}
        if any({k: v for k, v in x.items() if k != "cpu_seconds"} != work for x in rows["before"] + rows["after"]):
            raise SystemExit(f"{case}: the two checkouts did different work (states or nodes differ)")
        before = [x["cpu_seconds"] for x in rows["before"]]
        after = [x["cpu_seconds"] for x in rows["after"]]
        results[case] = {"spec": {k: v for k, v in specs[case].items() if k not in ("cache_dir", "file")},
                         "work": work, "before_cpu_seconds": before, "after_cpu_seconds": after,
                         "before_median": statistics.median(before), "after_median": statistics.median(after),
                         "ratio_after_before": round(statistics.median(after) / statistics.median(before), 4),
                         "load_averages": loads}
        print(f"{case:16} after / before = {results[case]['ratio_after_before']:.4f}", flush=True)
    commits = {"before": _results.git_commit(args.before), "after": _results.git_commit(args.after)}
    for case in results.values():
        case["commits"] = commits
        case["command"] = " ".join([Path(sys.executable).name, *sys.argv])
    if args.append and args.out.exists():
        kept = json.loads(args.out.read_text()).get("cases", {})
        results = {**{k: v for k, v in kept.items() if k not in results}, **results}
    _results.write(args.out, {"cases": results, "commits": commits}, started=started, load_before=load_before)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
