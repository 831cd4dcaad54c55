"""Vertex cover beside Felner's talk, Peaty and CP-SAT (issue 53): three runs, each with its own result file.

    python bench/bench_vcover.py [--quick] [--table] [--side] [--pace PATH] [options]

--table   the talk's table in shape (``bench/results/vcover_table.json``): the 20 seeded graphs of 150
          vertices and 1,200 edges, every configuration of the table (none, static:2/3/4, dynamic:2/3/4),
          nodes and CPU per graph, each cover's size confirmed by Peaty's optimum.  Rows are measured one at
          a time and merged into the file (``--rows none,static:2``), so that the slow "none" row can be run
          apart; ``--row-limit S`` stops each graph of a row after S seconds (its nodes then a lower bound).
--side    side by side (``vcover_side.json``): pdbtool's default on one thread, Peaty (one thread) and CP-SAT
          (its default workers) on the same graphs in the same run: the 20 graphs, then classes of 150
          vertices of average degree 30 and 60 and of 300 vertices of degree 16 (``--per-class`` graphs each).
--pace    PACE 2019's exact vertex-cover graphs (``vcover_pace.json``, every run appended to
          ``vcover_pace.runs.jsonl`` as it ends): PATH is the tarball or folder of ``vc-exact_*.gr`` from the
          public repository daajoe/pace2019_vc_instances, ``--pace-tsv`` their optimal sizes (default: the
          ``.tsv`` beside a tarball).  Each solver gets ``--pace-limits`` (60,600) seconds a graph, of CPU a
          thread it is given (``--clock cpu``, the default: on a shared machine a wall-clock limit would
          measure the load) or wall-clock (``--clock wall``, PACE's rule); a graph solved within the shorter
          limit counts for the longer one without a second run.
          ``--resume`` skips the (solver, graph, limit) runs already in the runs file; ``--limit N`` and
          ``--names a,b`` take a subset.

``--solvers`` (pdbtool, peaty, cp-sat) picks the solvers of --side and --pace; with --side, the records of
the solvers left out are kept from the file, so a class may be measured solver by solver (each solver's
run, its load and commit are recorded apart).

With neither flag, --table and --side run; --quick takes 5 graphs a class and a 60-second "none" row.
Peaty is built by ``bench/peers/peaty.sh`` from ``--peaty-src`` (default ../shared/peers/peaty-src.tar.gz)
into ``$PDBTOOL_PEERS/peaty``; graphs drawn by ``pdbtool random`` and unpacked PACE graphs go to
``$PDBTOOL_PEERS/vcover`` (``$PDBTOOL_PEERS`` defaults to ~/.cache/pdbtool-peers).  The limits of --table
and --side are wall-clock seconds (pdbtool's ``--time-limit``, CP-SAT's ``max_time_in_seconds``); CPU
seconds are reported, and the load average is recorded with every run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _vcover_peers as peers  # noqa: E402
from _results import RESULTS, git_commit, load_average, write  # noqa: E402

CONFIGS = ["none", "static:2", "static:3", "static:4", "dynamic:2", "dynamic:3", "dynamic:4"]
TALK_CLASS = (150, 16)
CLASSES = {"150-d16": (150, 16), "150-d30": (150, 30), "150-d60": (150, 60), "300-d16": (300, 16)}
TALK_GRAPHS = HERE.parent / "examples" / "vc-150-16"   # the 20 graphs, as committed in examples/
OWN_CPU_SHARE = 0.9      # pdbtool's own --time-limit (--clock cpu) in a PACE run: this share of the CPU limit
SEED = 2003              # the seed of examples/vc-150-16, used for the other classes too


def peers_dir() -> Path:
    base = os.environ.get("PDBTOOL_PEERS") or str(Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                                                    / "pdbtool-peers")
    return Path(base)


def scratch_dir() -> Path:
    path = peers_dir() / "vcover"
    path.mkdir(parents=True, exist_ok=True)
    return path


# --- graphs ---------------------------------------------------------------------------------------------

def graph_files(spec: str | Path) -> list[Path]:
    """A folder's graph files (sorted), or the file named."""
    path = Path(spec)
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix in (".gr", ".dimacs", ".col", ".clq"))
    return [path]


def generate(vertices: int, degree: int, count: int, seed: int = SEED) -> list[Path]:
    """The first ``count`` graphs of the class and seed drawn by ``pdbtool random`` into the scratch folder
    (graph i of a seed is the same whatever the count)."""
    folder = scratch_dir() / "random" / f"vc-{vertices}-{degree}-s{seed}"
    done = subprocess.run(peers.pdbtool_command("random", ["--vertices", str(vertices), "--degree", str(degree),
                                                           "--seed", str(seed), "-n", str(count), "--output-dir",
                                                           str(folder)]),
                          capture_output=True, text=True, env=peers.one_thread_env())
    files = [Path(line) for line in done.stdout.split()]
    if done.returncode or len(files) != count:
        raise SystemExit(f"pdbtool random failed: {done.stderr.strip()[-500:]}")
    return files


def warm_up_graph() -> Path:
    """A small graph that pdbtool solves first in each process whose CPU seconds a graph are compared."""
    return generate(40, 8, 1, seed=1)[0]


def talk_graphs(args) -> list[peers.Graph]:
    if args.graphs:
        files = [f for spec in args.graphs for f in graph_files(spec)]
    elif TALK_GRAPHS.exists():
        files = graph_files(TALK_GRAPHS)
    else:
        files = generate(*TALK_CLASS, 20)
    graphs = [peers.read_graph(f) for f in files]
    return graphs[:5] if args.quick else graphs


# --- the talk's table -----------------------------------------------------------------------------------

def slim(record: dict) -> dict:
    """A pdbtool record without its bulky fields (the cover is checked, not stored)."""
    return {k: v for k, v in record.items() if not isinstance(v, (list, dict)) or k in ("bounds",)}


def peaty_optima(graphs, binary, limit, scratch) -> dict[str, dict]:
    out = {}
    for g in graphs:
        out[g.name] = peers.run_peaty(binary, g, limit, scratch)
        print(f"   peaty {g.name}: {out[g.name]['size']} in {out[g.name]['cpu_seconds']} CPU s", flush=True)
    return out


def run_table(args, binary: Path, out: Path) -> None:
    graphs = talk_graphs(args)
    data = json.loads(out.read_text()) if out.exists() else {}
    if data.get("graphs") and data["graphs"] != [g.name for g in graphs]:
        data = {}                               # another graph set: start afresh
    data.setdefault("rows", {})
    data["graphs"] = [g.name for g in graphs]
    data["graph_files"] = [str(g.path.relative_to(HERE.parent)) if g.path.is_relative_to(HERE.parent)
                           else g.path.name for g in graphs]
    scratch = scratch_dir()
    started = time.time()
    print("-- Peaty's optima", flush=True)
    data["peaty"] = peaty_optima(graphs, binary, args.peaty_limit, scratch)
    optima = {name: r["size"] if r["solved"] else None for name, r in data["peaty"].items()}
    rows = args.rows.split(",") if args.rows else CONFIGS
    extra = args.table_args.split() if args.table_args else []
    for config in rows:
        limit = args.row_limit if args.row_limit else (60.0 if args.quick and config == "none" else None)
        subset = graphs[:args.row_graphs] if args.row_graphs else graphs
        print(f"-- {config} on {len(subset)} graphs (limit {limit} s a graph)", flush=True)
        load_before = load_average()
        t0 = time.time()
        records = peers.run_pdbtool(subset, config, limit, extra, scratch, warm_up=warm_up_graph())
        for r in records:
            want = optima.get(r["id"])
            r["peaty_optimum"] = want
            r["agrees_with_peaty"] = (r.get("size") == want) if r.get("solved") and want is not None else None
            print(f"   {r['id']}: {r.get('size')} {r.get('nodes')} nodes {r.get('cpu_seconds')} CPU s"
                  f"{'' if r.get('solved') else ' (stopped)'}"
                  f"{' DISAGREES with Peaty' if r['agrees_with_peaty'] is False else ''}", flush=True)
        data["rows"][config] = {"records": [slim(r) for r in records], "time_limit": limit,
                                "args": extra, "load_before": load_before, "load_after": load_average(),
                                "wall_seconds": round(time.time() - t0, 1), "date": time.strftime(
                                    "%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0)), "commit": git_commit(),
                                "command": " ".join([Path(sys.executable).name, *sys.argv])}
        data["summary"] = table_summary(data)
        write(out, {k: v for k, v in data.items() if k != "meta"}, started=started, load_before=None)


def table_summary(data: dict) -> dict:
    """Per row: graphs solved, total and mean nodes, CPU, and the node ratio of "none" over the row on the
    graphs both solved (a lower bound, marked, when "none" was stopped on any graph)."""
    rows = data.get("rows", {})
    none = {r["id"]: r for r in rows.get("none", {}).get("records", [])}
    out = {}
    for config, row in rows.items():
        recs = row["records"]
        solved = [r for r in recs if r.get("solved")]
        nodes = [r.get("nodes") or 0 for r in recs]
        both = [r for r in recs if r["id"] in none and none[r["id"]].get("nodes") is not None
                and r.get("solved") and r.get("nodes")]
        ratio = (sum(none[r["id"]]["nodes"] for r in both) / sum(r["nodes"] for r in both)) if both else None
        out[config] = {"graphs": len(recs), "solved": len(solved),
                       "agree_with_peaty": sum(1 for r in recs if r.get("agrees_with_peaty")),
                       "disagree_with_peaty": sum(1 for r in recs if r.get("agrees_with_peaty") is False),
                       "nodes_total": sum(nodes), "nodes_mean": sum(nodes) / len(recs) if recs else None,
                       "nodes_median": statistics.median(nodes) if nodes else None,
                       "cpu_seconds_total": round(sum(r.get("cpu_seconds") or 0 for r in recs), 3),
                       "cpu_seconds_median": statistics.median([r.get("cpu_seconds") or 0 for r in recs])
                       if recs else None,
                       "ratio_none_over_row": ratio, "ratio_graphs": len(both),
                       "ratio_is_lower_bound": any(not none[r["id"]].get("solved") for r in both)}
    return out


# --- side by side ---------------------------------------------------------------------------------------

def run_side(args, binary: Path, out: Path) -> None:
    data = json.loads(out.read_text()) if out.exists() else {}
    data.setdefault("classes", {})
    scratch = scratch_dir()
    started = time.time()
    per_class = 5 if args.quick else args.per_class
    for name in (args.classes.split(",") if args.classes else CLASSES):
        vertices, degree = CLASSES[name]
        if (vertices, degree) == TALK_CLASS:
            graphs = talk_graphs(args)
        else:
            graphs = [peers.read_graph(p) for p in generate(vertices, degree, per_class)]
        print(f"-- {name}: {len(graphs)} graphs", flush=True)
        load_before = load_average()
        t0 = time.time()
        solvers = args.solvers.split(",")
        held = data["classes"].get(name) or {}
        if held.get("graphs") != [g.name for g in graphs]:
            held = {}                               # another graph set: the class afresh
        recs: dict[str, list[dict]] = {s: ([] if s in solvers else (held.get("records") or {}).get(s, []))
                                       for s in ("pdbtool", "peaty", "cp-sat")}
        if "pdbtool" in solvers:        # the class in one process, after a warm-up graph
            recs["pdbtool"] = [slim(r) for r in peers.run_pdbtool(graphs, args.heuristic, args.pdbtool_limit, [],
                                                                  scratch, warm_up=warm_up_graph())]
            for r in recs["pdbtool"]:
                print(f"   {r['id']}: pdbtool {r.get('size')}{'' if r.get('solved') else '?'} {r.get('nodes')} "
                      f"nodes {r.get('cpu_seconds')} CPU s", flush=True)
        for g in graphs:      # graph by graph, the peers in turn, so that a change of load hits both
            if "peaty" in solvers:
                recs["peaty"].append(peers.run_peaty(binary, g, args.peaty_limit, scratch))
            if "cp-sat" in solvers:
                recs["cp-sat"].append(peers.run_cpsat(g, args.cpsat_limit, scratch=scratch))
            r = [recs[s][-1] for s in solvers if s != "pdbtool"]
            if r:
                print(f"   {g.name}: " + ", ".join(f"{x['solver']} {x.get('size')}{'' if x.get('solved') else '?'} "
                                                 f"{x.get('cpu_seconds')} CPU s" for x in r), flush=True)
        runs = dict(held.get("runs") or {})
        for s in solvers:
            runs[s] = {"load_before": load_before, "load_after": load_average(),
                       "wall_seconds": round(time.time() - t0, 1), "commit": git_commit(),
                       "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0)),
                       "solvers_in_the_run": solvers}
        data["classes"][name] = {"vertices": vertices, "degree": degree, "graphs": [g.name for g in graphs],
                                 "edges": [len(g.edges) for g in graphs], "records": recs,
                                 "summary": side_summary(recs), "runs": runs}
        data["settings"] = {"pdbtool_heuristic": args.heuristic or "default", "pdbtool_threads": 1,
                            "pdbtool_limit": args.pdbtool_limit, "peaty_limit": args.peaty_limit,
                            "peaty_threads": 1, "cpsat_limit": args.cpsat_limit,
                            "cpsat_workers": "default (num_workers = 0)"}
        write(out, {k: v for k, v in data.items() if k != "meta"}, started=started, load_before=None)


def side_summary(recs: dict[str, list[dict]]) -> dict:
    """Per solver: solved, median CPU per graph (a graph it did not solve counts at its CPU when stopped,
    so the median is then a lower bound), and whether its covers agree with Peaty's optima."""
    optimum = {r["id"]: r["size"] for r in recs["peaty"] if r.get("solved")}
    out: dict = {}
    for solver, rs in recs.items():
        if not rs:
            continue
        cpu = [r.get("cpu_seconds") or 0.0 for r in rs]
        out[solver] = {"graphs": len(rs), "solved": sum(1 for r in rs if r.get("solved")),
                       "cpu_seconds_median": statistics.median(cpu) if cpu else None,
                       "cpu_seconds_total": round(sum(cpu), 3),
                       "wrong": sum(1 for r in rs if r.get("solved") and r["id"] in optimum
                                    and r.get("size") != optimum[r["id"]]),
                       "workers": sorted({r["workers"] for r in rs if r.get("workers")}) or None}
    if "pdbtool" not in out or "peaty" not in out:
        return out
    p, q = out["pdbtool"], out["peaty"]
    if p["cpu_seconds_median"] is not None and q["cpu_seconds_median"]:
        out["pdbtool_over_peaty"] = p["cpu_seconds_median"] / q["cpu_seconds_median"]
        out["pdbtool_over_peaty_is_lower_bound"] = p["solved"] < p["graphs"]
    per = [a["cpu_seconds"] / b["cpu_seconds"] for a, b in zip(recs["pdbtool"], recs["peaty"])
           if a.get("cpu_seconds") and b.get("cpu_seconds")]
    out["pdbtool_over_peaty_per_graph_median"] = statistics.median(per) if per else None
    return out


# --- PACE 2019 ------------------------------------------------------------------------------------------

def pace_graphs(path: Path) -> tuple[list[Path], Path]:
    """The ``vc-exact_*.gr`` files of a folder, or of a tarball unpacked once into the scratch folder."""
    if path.is_dir():
        folder = path
    else:
        folder = scratch_dir() / "pace2019"
        stamp = folder / ".unpacked-from"
        if not stamp.exists() or stamp.read_text() != f"{path.resolve()} {path.stat().st_size}":
            folder.mkdir(parents=True, exist_ok=True)
            with tarfile.open(path) as tar:
                tar.extractall(folder, filter="data")
            stamp.write_text(f"{path.resolve()} {path.stat().st_size}")
    files = sorted(folder.rglob("vc-exact_*.gr"))
    if not files:
        raise SystemExit(f"no vc-exact_*.gr graphs in {path}")
    return files, folder


def published(tsv: Path) -> dict[str, tuple[int, float]]:
    """Per graph: the published optimal size and the seconds of the organisers' plain ILP (Gurobi)."""
    out = {}
    for line in tsv.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            parts = line.split("\t")
            out[parts[0]] = (int(parts[3]), float(parts[4]))
    return out


def run_pace(args, binary: Path | None, out: Path) -> None:
    path = Path(args.pace)
    tsv = Path(args.pace_tsv) if args.pace_tsv else path.with_name(path.name.removesuffix(".tar.gz") + ".tsv")
    facts = published(tsv)
    optima = {name: size for name, (size, _) in facts.items()}
    files, _ = pace_graphs(path)
    if args.names:
        wanted = set(args.names.split(","))
        files = [f for f in files if f.stem in wanted]
    if args.limit:
        files = files[:args.limit]
    limits = sorted(float(x) for x in args.pace_limits.split(","))
    solvers = args.solvers.split(",")
    runs_path = out.with_suffix(".runs.jsonl")
    held = load_runs(runs_path, args.clock) if args.resume else {}
    if not args.resume and runs_path.exists():
        raise SystemExit(f"{runs_path} exists: pass --resume to go on with it, or move it away")
    scratch = scratch_dir()
    commit = git_commit()
    command = " ".join([Path(sys.executable).name, *sys.argv])
    for f in files:
        g = peers.read_graph(f)
        for solver in solvers:
            for limit in limits:
                key = (solver, g.name, limit)
                if key in held:
                    continue
                shorter = [held.get((solver, g.name, x)) for x in limits if x < limit]
                if any(r and r.get("solved") for r in shorter):
                    continue                      # solved within a shorter limit: within this one too
                load_before = load_average()
                if solver == "peaty":
                    rec = peers.run_peaty(binary, g, limit, scratch, clock=args.clock)
                elif solver == "cp-sat":
                    rec = peers.run_cpsat(g, limit, scratch=scratch, clock=args.clock)
                elif args.clock == "wall":
                    rec = slim(peers.run_pdbtool([g], args.heuristic, limit, [], scratch, wall_limit=limit + 60)[0])
                else:   # its start-up (imports, Numba's cache) counts in its CPU, as Peaty's and CP-SAT's do;
                    # it stops itself a little before the runner's kill, so that its record keeps the best
                    # cover and the proven bound
                    rec = slim(peers.run_pdbtool([g], args.heuristic, OWN_CPU_SHARE * limit, ["--clock", "cpu"],
                                                 scratch, wall_limit=peers.wall_cap(limit), cpu_limit=limit)[0])
                rec.update({"solver": solver, "id": g.name, "limit": limit, "clock": args.clock,
                            "vertices": g.vertices,
                            "edges": len(g.edges), "published": optima.get(g.name), "load_before": load_before,
                            "load_after": load_average(), "commit": commit, "command": command,
                            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
                rec["agrees"] = (rec.get("size") == rec["published"]) if rec.get("solved") else None
                with open(runs_path, "a") as handle:
                    handle.write(json.dumps(rec) + "\n")
                held[key] = rec
                print(f"   {solver} {g.name} ({g.vertices} v, {len(g.edges)} e) limit {limit:g}: "
                      f"{'solved' if rec.get('solved') else 'not solved'} {rec.get('size')} "
                      f"(published {rec['published']}) {rec.get('cpu_seconds')} CPU s"
                      f"{' DISAGREES' if rec['agrees'] is False else ''}", flush=True)
                write_pace_summary(runs_path, out, limits, command, facts, args.clock)


def load_runs(path: Path, clock: str = "cpu") -> dict[tuple, dict]:
    """The runs of the file whose limits counted on ``clock``, by (solver, graph, limit)."""
    out = {}
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                rec = json.loads(line)
                if rec.get("clock", "wall") != clock:
                    continue
                out[(rec["solver"], rec["id"], float(rec["limit"]))] = rec
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                continue                            # a line cut short by a kill: that run is redone
    return out


def write_pace_summary(runs_path: Path, out: Path, limits: list[float], command: str,
                       facts: dict[str, tuple[int, float]], clock: str = "cpu") -> None:
    """Per solver and limit: graphs attempted, solved within it (a graph solved within a shorter limit
    counts), wrong sizes, and the proven bound and cover size of each unsolved graph whose record has them
    (``bounds``: the solver stopped itself); the load range of the runs; and, on the same graphs, how many
    the organisers' ILP solved within each limit (its published seconds, on their machine)."""
    runs = load_runs(runs_path, clock)
    graphs = sorted({k[1] for k in runs})
    summary: dict = {}
    for solver in sorted({k[0] for k in runs}):
        summary[solver] = {}
        for limit in limits:
            attempted, solved, wrong, bounds = [], [], [], {}
            for g in graphs:
                recs = [runs.get((solver, g, x)) for x in limits if x <= limit]
                recs = [r for r in recs if r]
                if not recs:
                    continue
                done = [r for r in recs if r.get("solved")]
                if not done and (solver, g, limit) not in runs:
                    continue                        # not yet run at this limit
                attempted.append(g)
                if done:
                    solved.append(g)
                    if done[0].get("agrees") is False:
                        wrong.append(g)
                elif all(isinstance(recs[-1].get(k), int) for k in ("lower_bound", "size")):
                    bounds[g] = [recs[-1]["lower_bound"], recs[-1]["size"]]   # stopped by its own limit
            summary[solver][f"{limit:g}"] = {"attempted": len(attempted), "solved": len(solved),
                                             "wrong": wrong, "unsolved": sorted(set(attempted) - set(solved)),
                                             "bounds": bounds}
    ilp = {f"{limit:g}": sum(1 for g in graphs if g in facts and facts[g][1] <= limit) for limit in limits}
    loads = [r["load_before"][0] for r in runs.values() if r.get("load_before")]
    write(out, {"summary": summary, "organisers_ilp_solved": ilp, "graphs_run": graphs, "runs_file": runs_path.name,
                "limits_seconds": limits, "clock": clock, "load_range": [min(loads), max(loads)] if loads else None,
                "runs": len(runs)}, command=command)


# --- main -----------------------------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--table", action="store_true", help="the talk's table (vcover_table.json)")
    ap.add_argument("--side", action="store_true", help="pdbtool, Peaty and CP-SAT side by side (vcover_side.json)")
    ap.add_argument("--pace", default=None, metavar="PATH", help="PACE 2019's graphs: tarball or folder")
    ap.add_argument("--graphs", nargs="*", default=None, help="the talk-class graphs (files or a folder)")
    ap.add_argument("--rows", default=None, help="with --table: comma-separated configurations")
    ap.add_argument("--row-limit", type=float, default=None, help="with --table: seconds a graph for each row")
    ap.add_argument("--row-graphs", type=int, default=None, help="with --table: run the rows on the first N graphs")
    ap.add_argument("--table-args", default="", help="with --table: extra arguments to pdbtool solve")
    ap.add_argument("--classes", default=None, help=f"with --side: some of {','.join(CLASSES)}")
    ap.add_argument("--per-class", type=int, default=10, help="with --side: graphs of each drawn class")
    ap.add_argument("--heuristic", default=None, help="pdbtool's --heuristic for --side and --pace (default: "
                                                      "pdbtool's own default)")
    ap.add_argument("--pdbtool-limit", type=float, default=600.0)
    ap.add_argument("--peaty-limit", type=float, default=600.0)
    ap.add_argument("--cpsat-limit", type=float, default=60.0)
    ap.add_argument("--peaty-src", default=None, help="Peaty's source tarball")
    ap.add_argument("--pace-tsv", default=None)
    ap.add_argument("--pace-limits", default="60,600")
    ap.add_argument("--solvers", default="pdbtool,peaty,cp-sat")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="with --pace: what a limit counts: each solver's CPU seconds a thread it is given "
                         "(one for pdbtool and Peaty, CP-SAT's workers for CP-SAT; on an idle machine the same "
                         "as wall seconds) or wall-clock seconds")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--limit", type=int, default=None, help="with --pace: the first N graphs (by name)")
    ap.add_argument("--names", default=None, help="with --pace: comma-separated graph names")
    ap.add_argument("--out-dir", default=str(RESULTS))
    args = ap.parse_args(argv)
    peers.stop_on_sigterm()
    unknown = set(args.solvers.split(",")) - {"pdbtool", "peaty", "cp-sat"}
    if unknown:
        raise SystemExit(f"unknown solvers {sorted(unknown)}")
    if args.rows and set(args.rows.split(",")) - set(CONFIGS):
        raise SystemExit(f"unknown rows: choose from {','.join(CONFIGS)}")
    outdir = Path(args.out_dir)
    binary = peers.build_peaty(args.peaty_src, str(peers_dir() / "peaty"))
    if not (args.table or args.side or args.pace):
        args.table = args.side = True
    if args.pace:
        run_pace(args, binary, outdir / "vcover_pace.json")
    if args.table:
        run_table(args, binary, outdir / "vcover_table.json")
    if args.side:
        run_side(args, binary, outdir / "vcover_side.json")


if __name__ == "__main__":
    main()
