"""Benchmark: the 24-puzzle at the frontier -- several heuristics on the same Korf-Felner instances, in one run.

Each configuration ``NAME:BLANK[:PRUNING[:HEURISTIC[:ENCODING]]]`` is a partition or catalogue
(``partitions/``: ``24-6-6-6-6``, ``24-cat-2``, ``24-cat-7``, or a file) with a blank rule (``minimized``,
``zero-aware``), optionally a pruning rule (``parent``, ``fsm``, or ``fsmL`` for the automaton of the
duplicates of up to L moves, e.g. ``fsm16``; else ``--pruning``), a heuristic (``pdb`` by default; ``max``:
the larger of the partition's sum and ``ddb``; ``max/SET`` with the dynamic set SET, e.g.
``max/pairs+triples-region``) and the tables' encoding (``byte`` by default; ``nibble``,
``sparse``, or ``min-nibbleC`` for min-nibble with groups of C ranks, e.g. ``min-nibble8``), always with the
diagonal reflection.
Every instance is solved with every configuration in turn (configurations alternate per
instance, so that a change in the machine's load falls on all of them alike); per instance and
configuration: h(start), nodes generated, CPU and wall seconds, the length (checked against the optimum),
and, beside them, the count Korf & Felner's program generated with 6-6-6-6 (``examples/korf24_50.txt``,
their paper's table).  A node limit (``--node-limit``) stops long searches: the instance then counts as
unsolved, with its nodes and last bound.

Instance sets: ``target`` (issue 31's benchmark set: the 16 instances whose 6-6-6-6 count is at most 1.1e10,
about an hour of CPU for 6-6-6-6 alone), ``first10``, or ``--ids``.  ``--pruning fsm`` is passed to the
solver where it takes it (duplicate-path pruning, when present).

    .venv/bin/python bench/bench_24.py [--set target|first10] [--ids 38,40] [--configs C1,C2]
        [--node-limit N] [--time-limit S] [--threads N] [--pruning fsm] [--sample-h K] [--quick]
        [--cache-dir DIR] [--copy-tables] [--out FILE] [--log FILE [--resume]]

``--log FILE`` appends each finished (instance, configuration) run to FILE as one JSON line, with its own
date, load and commit, and ``--resume`` skips the runs FILE already holds: a set that takes hours can be
stopped and continued, and the report is built from every run in the log.

``--copy-tables``: the catalogue kernel reads private copies of its tables, mostly in 2 MiB pages
(``CatalogueSum.copy_tables``: fewer page walks, the tables' size more private memory).

``--sample-h K`` also reports each configuration's mean h over K random states (seeded) and its CPU per
evaluation.  ``--quick``: instance 38 only, 6-6-6-6 and 6-6-6-6 zero-aware, a node limit of 2e8.
Writes ``bench/results/frontier_24.json``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _results import git_commit, load_average, write  # noqa: E402
from pdbtool.puzzle.board import Board  # noqa: E402
from pdbtool.search.solver import Solver  # noqa: E402

INSTANCES = ROOT / "examples" / "korf24_50.txt"
TARGET_IDS = [38, 40, 25, 32, 44, 37, 30, 13, 1, 28, 36, 5, 22, 16, 29, 4]
DEFAULT_CONFIGS = "24-6-6-6-6:minimized,24-6-6-6-6:zero-aware,24-cat-2:zero-aware"


def load_korf24_50(path: Path = INSTANCES) -> dict[int, dict]:
    """id -> {tiles, optimal, kf_nodes} from the file's lines ``id, 25 cells, optimal length, nodes``."""
    out = {}
    for line in path.read_text().splitlines():
        body = line.split("#", 1)[0].split()
        if len(body) == 28:
            nums = [int(x) for x in body]
            out[nums[0]] = {"tiles": nums[1:26], "optimal": nums[26], "kf_nodes": nums[27]}
    return out


def make_solver(config: str, args) -> Solver:
    name, blank, pruning, heuristic, encoding = (config.split(":") + ["", "", "", ""])[:5]
    kwargs = dict(partition=name, blank=blank or "minimized", reflect=True, cache_dir=args.cache_dir,
                  threads=args.threads, search_threads=args.threads)
    if heuristic:
        heuristic, _, dynamic = heuristic.partition("/")
        kwargs["heuristic"] = heuristic
        if dynamic:
            kwargs["dynamic"] = dynamic
    if encoding.startswith("min-nibble") and encoding[len("min-nibble"):].isdigit():
        kwargs["encoding"], kwargs["group"] = "min-nibble", int(encoding[len("min-nibble"):])
    elif encoding:
        kwargs["encoding"] = encoding
    pruning = pruning or args.pruning
    if pruning:
        if "pruning" not in inspect.signature(Solver).parameters:
            raise SystemExit(f"--pruning {pruning}: this pdbtool's Solver has no pruning option")
        if pruning.startswith("fsm") and pruning[3:].isdigit():
            kwargs["fsm_depth"] = int(pruning[3:])
            pruning = "fsm"
        kwargs["pruning"] = pruning
    solver = Solver(Board(5, 5), **kwargs)
    if args.copy_tables:
        heuristic = getattr(solver.heuristic, "heuristic", solver.heuristic)
        heuristic = getattr(heuristic, "static", heuristic)  # max: its static part
        if hasattr(heuristic, "copy_tables"):  # the catalogue kernel: tables in 2 MiB pages
            heuristic.copy_tables()
    solver.warm_up()
    return solver


def read_log(path: str | None) -> dict[tuple[int, str], dict]:
    """(id, config) -> run, from a ``--log`` file (a line cut short by a killed run is skipped)."""
    out: dict[tuple[int, str], dict] = {}
    if path and Path(path).exists():
        for line in Path(path).read_text().splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            out[int(entry["id"]), entry["config"]] = entry["run"]
    return out


def append_log(path: str, ident: int, config: str, run: dict, load_before) -> None:
    entry = {"id": ident, "config": config, "run": {**run, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
             "load_before": load_before, "load_after": load_average(), "commit": git_commit()}}
    with open(path, "a") as f:
        f.write(json.dumps(entry) + "\n")
        f.flush()
        os.fsync(f.fileno())


def project_50(data: dict[int, dict], rows: list[dict], configs: list[str]) -> dict | None:
    """CPU-hours for all 50 instances, projected from the instances every configuration solved: each
    configuration's CPU on them times the ratio of Korf & Felner's counts over the 50 and over them.  For
    6-6-6-6 + reflection with the parent rule (which generates their counts) this is its CPU per node times
    their count of each instance.  An estimate: a configuration's gain varies per instance."""
    both = [r for r in rows if all(r["runs"][c]["solved"] for c in configs)]
    if not both:
        return None
    total_kf = sum(x["kf_nodes"] for x in data.values())
    kf_both = sum(r["kf_nodes"] for r in both)
    hours = {c: round(sum(r["runs"][c]["cpu_seconds"] for r in both) * total_kf / kf_both / 3600, 1) for c in configs}
    return {"instances": len(data), "kf_nodes_total": total_kf, "measured_on": [r["id"] for r in both],
            "kf_nodes_measured": kf_both, "cpu_hours": hours}


def random_states(count: int, seed: int) -> list[list[int]]:
    board = Board(5, 5)
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        tiles = list(range(25))
        rng.shuffle(tiles)
        if board.is_solvable(tiles):
            out.append(tiles)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", choices=["target", "first10"], default="target")
    ap.add_argument("--ids", default=None, help="instance ids (comma-separated), instead of --set")
    ap.add_argument("--configs", default=DEFAULT_CONFIGS,
                    help="NAME:BLANK[:PRUNING[:HEURISTIC[:ENCODING]]], comma-separated")
    ap.add_argument("--node-limit", type=float, default=None)
    ap.add_argument("--time-limit", type=float, default=None, help="seconds per instance and configuration")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--pruning", default=None)
    ap.add_argument("--sample-h", type=int, default=0, help="mean h over this many random states")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--copy-tables", action="store_true",
                    help="the catalogue kernel reads private copies of its tables (CatalogueSum.copy_tables)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "frontier_24.json"))
    ap.add_argument("--log", default=None, help="append each finished run to this JSON-lines file")
    ap.add_argument("--resume", action="store_true", help="skip the runs the --log file already holds")
    args = ap.parse_args(argv)
    if args.resume and not args.log:
        print("--resume needs --log FILE", file=sys.stderr)
        return 2
    if args.quick:
        args.ids = args.ids or "38"
        args.configs = "24-6-6-6-6:minimized,24-6-6-6-6:zero-aware"
        args.node_limit = args.node_limit or 2e8
    data = load_korf24_50()
    ids = [int(x) for x in args.ids.split(",")] if args.ids else (TARGET_IDS if args.set == "target"
                                                                  else list(range(1, 11)))
    missing = [i for i in ids if i not in data]
    if missing:
        print(f"no instance {missing[0]} in {INSTANCES}", file=sys.stderr)
        return 2
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    done = read_log(args.log) if args.resume else {}
    started = time.time()
    load_before = [round(x, 2) for x in os.getloadavg()]
    setups, solvers = {}, {}
    for config in configs:
        if all((i, config) in done for i in ids):
            continue
        t0, c0 = time.perf_counter(), time.process_time()
        solvers[config] = make_solver(config, args)
        setups[config] = {"seconds": round(time.perf_counter() - t0, 3),
                          "cpu_seconds": round(time.process_time() - c0, 3), "label": solvers[config].label}
        print(f"{config}: {solvers[config].label}, tables ready in {setups[config]['seconds']:.1f} s", flush=True)

    sample = {}
    if args.sample_h:
        states = random_states(args.sample_h, 2024)
        for config, solver in solvers.items():
            c0 = time.process_time()
            hs = [solver.h(s) for s in states]
            sample[config] = {"states": len(states), "mean_h": round(sum(hs) / len(hs), 3),
                              "cpu_seconds_per_state": (time.process_time() - c0) / len(states)}
            print(f"{config}: mean h {sample[config]['mean_h']:.3f} over {len(states)} random states", flush=True)

    limit = int(args.node_limit) if args.node_limit else None
    rows = []
    print(f"{'id':>3} {'opt':>4} {'KF nodes':>15}  " + "  ".join(f"{c:>38}" for c in configs), flush=True)
    for ident in ids:
        inst = data[ident]
        row = {"id": ident, "optimal": inst["optimal"], "kf_nodes": inst["kf_nodes"], "runs": {}}
        for config in configs:
            if (ident, config) in done:
                row["runs"][config] = done[ident, config]
                continue
            load0 = load_average()
            r = solvers[config].solve(inst["tiles"], node_limit=limit, time_limit=args.time_limit)
            if r.solved and r.length != inst["optimal"]:
                print(f"instance {ident}, {config}: length {r.length}, but the optimum is {inst['optimal']}",
                      file=sys.stderr)
                return 1
            row["runs"][config] = {"h0": r.h0, "solved": r.solved, "length": r.length,
                                   "nodes_generated": r.nodes_generated, "iterations": r.iterations,
                                   "seconds": round(r.seconds, 3), "cpu_seconds": round(r.cpu_seconds, 3)}
            if args.copy_tables:
                row["runs"][config]["copy_tables"] = True
            if args.log:
                append_log(args.log, ident, config, row["runs"][config], load0)
        rows.append(row)
        cells = []
        for config in configs:
            x = row["runs"][config]
            mark = "" if x["solved"] else "+"
            cells.append(f"h0 {x['h0']:>3} {x['nodes_generated']:>14,}{mark:1} {x['cpu_seconds']:>8.1f} s")
        print(f"{ident:>3} {inst['optimal']:>4} {inst['kf_nodes']:>15,}  " + "  ".join(f"{c:>38}" for c in cells),
              flush=True)

    summary = {}
    base = configs[0]
    both = [r for r in rows if all(r["runs"][c]["solved"] for c in configs)]
    for config in configs:
        solved = [r for r in rows if r["runs"][config]["solved"]]
        s = {"solved": len(solved), "instances": len(rows),
             "nodes_generated": sum(r["runs"][config]["nodes_generated"] for r in rows),
             "cpu_seconds": round(sum(r["runs"][config]["cpu_seconds"] for r in rows), 3)}
        if both:
            n_all = sum(r["runs"][config]["nodes_generated"] for r in both)
            c_all = sum(r["runs"][config]["cpu_seconds"] for r in both)
            s["on_instances_solved_by_all"] = {
                "instances": [r["id"] for r in both], "nodes_generated": n_all, "cpu_seconds": round(c_all, 3),
                "kf_nodes": sum(r["kf_nodes"] for r in both),
                "nodes_ratio_to_first": round(sum(r["runs"][base]["nodes_generated"] for r in both) / n_all, 3),
                "cpu_ratio_to_first": round(sum(r["runs"][base]["cpu_seconds"] for r in both) / c_all, 3)
                if c_all else None,
                "kf_nodes_ratio": round(sum(r["kf_nodes"] for r in both) / n_all, 3)}
        summary[config] = s
        print(f"{config}: {s}", flush=True)
    projection = project_50(data, rows, configs) if both else None
    report = {"configs": configs, "setup": setups, "projection_50": projection, "threads": args.threads,
              "copy_tables": args.copy_tables,
              "node_limit": limit,
              "time_limit": args.time_limit, "pruning": args.pruning, "instances": rows, "summary": summary,
              "sample_h": sample,
              "source_of_kf_nodes": "examples/korf24_50.txt (Korf & Felner, AIJ 134, 2002, their table)"}
    command = [Path(sys.argv[0]).name] + (list(argv) if argv is not None else sys.argv[1:])
    out = write(args.out, report, command=command, started=started, load_before=load_before)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
