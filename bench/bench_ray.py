"""Benchmark of ``pdbtool solve --ray`` on this machine (a local Ray instance) against the local executors.

* Batches: Korf's 100 with 15-5-5-5 (``--partition``), ``--ray`` against ``--jobs 2``, each as a
  ``pdbtool solve`` subprocess with cached tables; the wall times, and Ray's start-up cost (``ray.init`` of
  a local instance to the first task's answer, and ``ray.shutdown``) measured alone.
* One hard instance: ``--ray`` against ``--threads 2``.  The issue asks for the 24-puzzle's instance 1
  with 24-6-6-6-6 (``--instance 24``: needs the two 6-tile tables, about 90 s to build, and minutes of
  search); the default is a stand-in, Korf's 15-puzzle instances 1 and 3 with Manhattan distance (about
  0.3 and 0.5 billion nodes), labelled as such in the results.
* Tables: the time to ship a table to a node whose cache lacks it (the object store, the write, the
  checksum) against the time to check a cached copy; and the memory of the workers' mappings of the tables
  (from ``/proc/PID/smaps``: Rss, Pss, private bytes), which shows whether the workers share one copy.

Writes ``bench/results/ray.json`` (machine, cores, date, commit, commands, load) and prints a summary.

    .venv/bin/python bench/bench_ray.py [--cache-dir DIR] [--batch-partition 15-5-5-5] [--instance 15|24]
                                        [--skip batch,single,tables] [--out FILE]

The issue's overhead target alone (writes ``bench/results/ray_24.json``; about 3.5 minutes a pair on the
idle machine):

    .venv/bin/python bench/bench_ray.py --k24 --repeat 2

Each ``--ray`` run's CPU seconds are read per thread from /proc for every process of the command's tree
(``cpu_by_process``: the driver, Ray's daemons and agents, the workers' searching threads and their other
threads).  Whether a worker searches more slowly than a thread, apart from Ray's other processes (writes
``bench/results/ray_units.json``; about a minute a round):

    .venv/bin/python bench/bench_ray.py --units --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PDBTOOL = [sys.executable, "-m", "pdbtool"]


def load() -> str:
    return " ".join(open("/proc/loadavg").read().split()[:3])


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


TICK = os.sysconf("SC_CLK_TCK")


def _stat(path: str) -> tuple[float, int]:
    """(CPU seconds, parent pid) from a /proc stat file (a process's or a thread's)."""
    with open(path) as f:
        text = f.read()
    fields = text[text.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / TICK, int(fields[1])


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def _process_kind(pid: int, root: int, cmdline: str) -> str:
    """What a process of a run's tree is: the command, one of Ray's daemons or agents, or a worker."""
    if pid == root:
        return "driver"
    for part, kind in (("gcs_server", "gcs_server"), ("raylet", "raylet"), ("dashboard.py", "dashboard"),
                       ("ray::DashboardAgent", "dashboard_agent"), ("ray::RuntimeEnvAgent", "runtime_env_agent"),
                       ("log_monitor", "log_monitor"), ("monitor.py", "autoscaler_monitor")):
        if part in cmdline:
            return kind
    return "worker" if cmdline.startswith(("ray::", "default_worker")) or "default_worker.py" in cmdline else "other"


def _sample_tree(root: int, threads: dict, kinds: dict) -> None:
    """Note the CPU seconds of every thread of ``root`` and of every process below it now: ``threads``
    maps (pid, tid) to (seconds, the thread's name, or MAIN for a process's first thread); ``kinds`` each
    pid to what it is (:func:`_process_kind`, a worker named by the tasks it ran)."""
    parent = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parent[int(entry)] = _stat(f"/proc/{entry}/stat")[1]
            except (OSError, ValueError):
                pass
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    tree, i = [root], 0
    while i < len(tree):
        tree += children.get(tree[i], [])
        i += 1
    for pid in tree:
        try:
            cmdline = _read(f"/proc/{pid}/cmdline").replace("\0", " ").strip()
            kind = _process_kind(pid, root, cmdline)
            if not cmdline:  # exiting: it keeps the kind it was seen as
                kinds.setdefault(pid, "other")
            elif kind != "worker":
                kinds[pid] = kind
            elif cmdline.startswith("ray::") and not cmdline.startswith("ray::IDLE"):
                kinds[pid] = "worker " + cmdline.split()[0][len("ray::"):]  # the task it runs
            else:
                kinds.setdefault(pid, "worker (idle)")
            for tid in os.listdir(f"/proc/{pid}/task"):
                seconds, _ = _stat(f"/proc/{pid}/task/{tid}/stat")
                name = "MAIN" if int(tid) == pid else _read(f"/proc/{pid}/task/{tid}/comm").strip()
                key = (pid, int(tid))
                threads[key] = (max(threads.get(key, (0.0,))[0], seconds), name)
        except (OSError, ValueError):
            pass


def cpu_by_process(threads: dict, kinds: dict) -> dict:
    """The CPU seconds sampled by :func:`_sample_tree`, summed per kind of process, with the first thread
    of the driver and of the workers (the tasks' searches) apart from their other threads (the driver's
    search threads, Ray's gRPC and io_service threads)."""
    out: dict[str, float] = {}
    for (pid, _tid), (seconds, name) in threads.items():
        kind = kinds.get(pid, "other")
        if kind == "driver" or kind.startswith("worker ") and kind != "worker (idle)":
            kind += " (main thread)" if name == "MAIN" else " (other threads)"
        out[kind] = out.get(kind, 0.0) + seconds
    return {k: round(v, 2) for k, v in sorted(out.items(), key=lambda kv: -kv[1])}


def solve_cli(args: list[str], sample_every: float = 0.25) -> dict:
    """Run ``pdbtool solve ARGS --format json``: its summary, wall time and the load before and after, the
    CPU seconds of it and its children, and with ``--ray`` the lines where it reports Ray's start-up.

    CPU: from ``getrusage`` of the waited children; with ``--ray`` (Ray's workers are not waited for by the
    command) the sum over every thread of every process of the command's tree, read from /proc every
    ``sample_every`` seconds (the CPU a thread spends after its last sample is missed:
    ``cpu_seconds_sampled``), and per kind of process (``cpu_by_process``: the driver, Ray's daemons and
    agents, the workers' searching threads apart from their other threads)."""
    command = PDBTOOL + ["solve", *args, "--format", "json"]
    before = load()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    threads: dict = {}
    kinds: dict = {}
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out_file, tempfile.TemporaryFile("w+") as err_file:
        proc = subprocess.Popen(command, cwd=ROOT, stdout=out_file, stderr=err_file, text=True)
        while proc.poll() is None:
            _sample_tree(proc.pid, threads, kinds)
            time.sleep(sample_every)
        wall = time.perf_counter() - start
        out_file.seek(0)
        err_file.seek(0)
        stdout, stderr = out_file.read(), err_file.read()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{stderr[-2000:]}")
    rows = [json.loads(line) for line in stdout.splitlines()]
    out = {"command": "pdbtool " + " ".join(command[3:]), "wall_seconds": round(wall, 2),
           "cpu_seconds": round(after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime, 2),
           "summary": rows[-1], "lengths": [r["length"] for r in rows[:-1]],
           "generated": [r["nodes_generated"] for r in rows[:-1]], "load_before": before, "load_after": load()}
    notes = [ln[len("pdbtool: "):] for ln in stderr.splitlines()
             if ln.startswith("pdbtool: ray:") or ln.startswith("pdbtool: tables:")]
    if "--ray" in args:
        del out["cpu_seconds"]
        out["cpu_seconds_sampled"] = round(sum(seconds for seconds, _ in threads.values()), 2)
        out["cpu_by_process"] = cpu_by_process(threads, kinds)
    if notes:
        out["ray_notes"] = notes
        started = [float(m.group(1)) for ln in notes if (m := re.search(r"Ray instance .* in ([0-9.]+) s", ln))]
        if started:
            out["ray_start_seconds"] = started[0]
    return out


def ray_start_cost(repeat: int = 2) -> list[dict]:
    """Seconds of ``ray.init`` (a local instance, 2 CPUs), of the first round trip of a task, of shutdown."""
    code = """
import json, time, ray
t0 = time.perf_counter()
ray.init(num_cpus=2, include_dashboard=False, logging_level="warning")
t1 = time.perf_counter()
ray.get(ray.remote(lambda: 1).remote())
t2 = time.perf_counter()
ray.shutdown()
t3 = time.perf_counter()
print(json.dumps({"init": round(t1 - t0, 2), "first_task": round(t2 - t1, 2), "shutdown": round(t3 - t2, 2)}))
"""
    out = []
    for _ in range(repeat):
        before = load()
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        out.append(dict(json.loads(done.stdout.strip().splitlines()[-1]), load=before))
    return out


def bench_batch(args) -> dict:
    korf = str(ROOT / "examples" / "korf100.txt")
    common = [korf, "--partition", args.batch_partition, "--cache-dir", args.cache_dir]
    subprocess.run(PDBTOOL + ["build", "--partition", args.batch_partition, "--cache-dir", args.cache_dir],
                   cwd=ROOT, check=True, capture_output=True)
    runs = {"jobs2": [], "ray": []}
    for _ in range(args.repeat):  # alternated, so that a change of load hits both alike
        runs["jobs2"].append(solve_cli(common + ["--jobs", "2"]))
        runs["ray"].append(solve_cli(common + ["--ray"]))
    same = all(r["lengths"] == runs["jobs2"][0]["lengths"] and r["generated"] == runs["jobs2"][0]["generated"]
               for r in runs["jobs2"] + runs["ray"])
    return {"instances": "Korf's 100", "partition": args.batch_partition, "runs": runs,
            "same_lengths_and_nodes": same, "ray_start_cost": ray_start_cost()}


def bench_single(args) -> dict:
    if args.instance == "24":
        src = ROOT / "examples" / "korf24.txt"
        line = next(ln for ln in src.read_text().splitlines() if ln.strip() and not ln.startswith("#"))
        label = "24-puzzle instance 1 (Korf & Felner), 24-6-6-6-6 with the reflection"
        extra = ["--partition", "24-6-6-6-6", "--cache-dir", args.cache_dir]
        cases = [("24-1", line)]
    else:
        src = ROOT / "examples" / "korf100.txt"
        lines = {ln.split()[0]: ln for ln in src.read_text().splitlines() if ln.strip() and not ln.startswith("#")}
        label = "STAND-IN for the 24-puzzle: Korf's 15-puzzle instances 1 and 3, Manhattan distance"
        extra = ["--heuristic", "manhattan"]
        cases = [("15-1", lines["1"]), ("15-3", lines["3"])]
    out = {"label": label, "cases": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name, line in cases:
            path = Path(tmp) / f"{name}.txt"
            path.write_text(line.split("#")[0] + "\n")
            runs = {"threads2": [], "ray": []}
            for _ in range(args.repeat):
                runs["threads2"].append(solve_cli([str(path), *extra, "--threads", "2"]))
                runs["ray"].append(solve_cli([str(path), *extra, "--ray"]))
            for rs in runs.values():
                for r in rs:
                    s = r["summary"]
                    r["search_seconds"] = s["total_seconds"]
            out["cases"][name] = runs
    return out


def _mapping_report():
    """In a worker: per table file mapped, Rss, Pss and private bytes (from /proc/self/smaps)."""
    import os as _os

    report, current = {}, None
    with open("/proc/self/smaps") as f:
        for line in f:
            parts = line.split()
            if "-" in parts[0] and len(parts) >= 5 and ":" not in parts[0]:
                current = parts[5] if len(parts) >= 6 and parts[5].endswith(".pdb") else None
                if current is not None:
                    report.setdefault(current, {"Rss": 0, "Pss": 0, "Private": 0})
            elif current is not None and parts[0] in ("Rss:", "Pss:", "Private_Clean:", "Private_Dirty:"):
                key = "Private" if parts[0].startswith("Private") else parts[0][:-1]
                report[current][key] += int(parts[1]) * 1024
    return _os.getpid(), report


def ship_synthetic(ray, megabytes: int, repeat: int) -> list[dict]:
    """Ship a file in the table format of ``megabytes`` MB (random payload: the size of a 24-puzzle table,
    without its 90 s build) to an empty node cache, then check the copy: seconds of each."""
    import numpy as np

    from pdbtool.search.ray_tables import stage_tables
    from pdbtool.tables import fileformat

    out = []
    with tempfile.TemporaryDirectory() as driver_dir, tempfile.TemporaryDirectory() as node_dir:
        path = Path(driver_dir) / "synthetic-byte.pdb"
        payload = np.random.default_rng(1).integers(0, 60, megabytes * 10**6, dtype=np.uint8)
        fileformat.save(path, fileformat.make_header(synthetic=True), payload)
        del payload
        for _ in range(repeat):
            for f in Path(node_dir).glob("*.pdb"):
                f.unlink()
            shipped = stage_tables(ray, [path], node_dir)
            checked = stage_tables(ray, [path], node_dir)
            out.append({"bytes": shipped.bytes_put, "ship_seconds": round(shipped.seconds, 3),
                        "check_seconds": round(checked.seconds, 3), "load": load()})
    return out


def bench_tables(args) -> dict:
    import ray

    from pdbtool.puzzle.board import Board
    from pdbtool.puzzle.instances import load_instances
    from pdbtool.search import ray_backend
    from pdbtool.search.ray_tables import stage_tables
    from pdbtool.search.solver import SolveOptions

    partition = args.tables_partition
    options = SolveOptions(partition=partition, cache_dir=args.cache_dir)
    files = ray_backend.RaySolver(Board(4, 4), options).files
    ray.init(num_cpus=2, include_dashboard=False, logging_level="warning")
    try:
        out = {"partition": partition, "files": {f.name: f.stat().st_size for f in files}, "ship": [],
               "check": []}
        with tempfile.TemporaryDirectory() as node_dir:
            for _ in range(args.repeat):
                for f in Path(node_dir).glob("*.pdb"):
                    f.unlink()
                os.sync()
                shipped = stage_tables(ray, files, node_dir)
                checked = stage_tables(ray, files, node_dir)
                out["ship"].append({"seconds": round(shipped.seconds, 3), "bytes": shipped.bytes_put,
                                    "load": load()})
                out["check"].append({"seconds": round(checked.seconds, 3), "load": load()})
        out["synthetic"] = ship_synthetic(ray, args.synthetic_mb, args.repeat)
        # two workers solve Korf 1-10 from the cache, then report their mappings of the tables
        korf = load_instances(str(ROOT / "examples" / "korf100.txt"))[:10]
        list(ray_backend.solve_batch(korf, options))
        report = ray.remote(num_cpus=1)(_mapping_report)
        seen = {}
        for pid, maps in ray.get([report.remote() for _ in range(8)]):
            seen[pid] = maps
        out["worker_mappings"] = {str(pid): maps for pid, maps in seen.items()}
    finally:
        ray.shutdown()
    return out


def bench_24(args) -> dict:
    """The 24-puzzle's instance 1 (24-6-6-6-6 with the reflection, tables in ``--cache-dir``): ``--threads
    2`` and ``--ray`` (a local instance) alternated ``--repeat`` times; the ratio of their wall times."""
    src = ROOT / "examples" / "korf24.txt"
    line = next(ln for ln in src.read_text().splitlines() if ln.strip() and not ln.startswith("#"))
    pairs = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "K24_1.txt"
        path.write_text(line.split("#")[0] + "\n")
        common = [str(path), "--partition", "24-6-6-6-6", "--cache-dir", args.cache_dir]
        for _ in range(args.repeat):
            pair = {"threads2": solve_cli(common + ["--threads", "2"]), "ray": solve_cli(common + ["--ray"])}
            pair["wall_ratio"] = round(pair["ray"]["wall_seconds"] / pair["threads2"]["wall_seconds"], 3)
            pairs.append(pair)
            print("24-1 threads2 wall", pair["threads2"]["wall_seconds"], "cpu", pair["threads2"]["cpu_seconds"],
                  "ray wall", pair["ray"]["wall_seconds"], "cpu (sampled)", pair["ray"]["cpu_seconds_sampled"],
                  "ratio", pair["wall_ratio"], "ray start", pair["ray"].get("ray_start_seconds"),
                  "load", pair["threads2"]["load_before"], pair["ray"]["load_after"], flush=True)
            print("    ray CPU by process:", pair["ray"]["cpu_by_process"], flush=True)
    ratios = sorted(p["wall_ratio"] for p in pairs)
    return {"benchmark": "ray-24",
            "label": "24-puzzle instance 1, 24-6-6-6-6 with the reflection, tables cached: --threads 2 against "
                     "--ray on a local instance (2 CPUs), alternated; wall times of the whole command",
            "target": "ray wall at most 1.10 x threads wall (issue 15)",
            "runs": pairs, "wall_ratios": ratios, "median_wall_ratio": ratios[len(ratios) // 2]}


K24_OPTIONS = dict(partition="24-6-6-6-6")  # the SolveOptions of the 24-puzzle's units


def _k24_state() -> tuple[int, ...]:
    src = ROOT / "examples" / "korf24.txt"
    line = next(ln for ln in src.read_text().splitlines() if ln.strip() and not ln.startswith("#"))
    return tuple(int(t) for t in line.split("#")[0].split()[1:])


def _unit_heuristic(cache_dir: str):
    """The heuristic as a Ray worker builds it (its solver pool: tables memory-mapped from the cache)."""
    from pdbtool.puzzle.board import Board
    from pdbtool.search.ray_backend import worker_pool
    from pdbtool.search.solver import SolveOptions

    options = SolveOptions(**K24_OPTIONS, cache_dir=cache_dir, search_threads=1)
    return worker_pool(options).get(Board(5, 5)).heuristic


def search_units_timed(cache_dir: str, units: list) -> dict:
    """Search ``units`` ((path, bound) pairs of the 24-puzzle's instance 1) on this thread, after building
    the heuristic: the nodes, this thread's CPU and wall seconds, its page faults and context switches."""
    from pdbtool.search.units import WorkUnit, search_unit

    heuristic, state = _unit_heuristic(cache_dir), _k24_state()
    before, cpu, wall = resource.getrusage(resource.RUSAGE_THREAD), time.thread_time(), time.perf_counter()
    nodes = sum(search_unit(heuristic, state, WorkUnit(tuple(path), bound)).generated for path, bound in units)
    after = resource.getrusage(resource.RUSAGE_THREAD)
    cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
    return {"pid": os.getpid(), "nodes": nodes, "cpu_seconds": round(cpu, 3), "wall_seconds": round(wall, 3),
            "m_nodes_per_cpu_second": round(nodes / cpu / 1e6, 2), "minor_faults": after.ru_minflt - before.ru_minflt,
            "major_faults": after.ru_majflt - before.ru_majflt,
            "involuntary_switches": after.ru_nivcsw - before.ru_nivcsw}


def bench_units(args) -> dict:
    """The same units of one iteration of the 24-puzzle's instance 1 searched by two searchers at once:
    two threads of one process (as ``--threads 2``), two plain processes, two Ray workers of a local
    instance started as ``--ray`` starts it; in turn, ``--repeat`` rounds.  Nodes per CPU second of the
    searching threads separate a slower search in a worker from CPU taken by Ray's other processes."""
    import threading

    from pdbtool.search import ray_backend
    from pdbtool.search.units import search_unit, split_iteration

    heuristic, state = _unit_heuristic(args.cache_dir), _k24_state()
    cut, _ = split_iteration(heuristic, state, args.units_bound, 64)
    units, nodes = [], 0
    for unit in cut:  # the first units of the cut, up to about --units-nodes nodes
        units.append((list(unit.path), unit.bound))
        nodes += search_unit(heuristic, state, unit).generated
        if nodes >= args.units_nodes:
            break
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import bench_ray; "
            "print(json.dumps(bench_ray.search_units_timed(sys.argv[2], json.loads(sys.stdin.read()))))")

    def threads():
        results = [None, None]

        def run(i):
            results[i] = search_units_timed(args.cache_dir, units)

        workers = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return results

    def processes():
        procs = [subprocess.Popen([sys.executable, "-c", code, str(ROOT / "bench"), args.cache_dir], cwd=ROOT,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(2)]
        for proc in procs:
            proc.stdin.write(json.dumps(units))
            proc.stdin.close()
        return [json.loads(proc.stdout.read().strip().splitlines()[-1]) for proc in procs if proc.wait() == 0]

    def ray_workers():
        with ray_backend.ray_session(num_cpus=2) as ray:
            task = ray.remote(num_cpus=1)(search_units_timed)
            warm = ray.remote(num_cpus=1)(lambda cache_dir: (_unit_heuristic(cache_dir), os.getpid())[1])
            ray.get([warm.remote(args.cache_dir) for _ in range(2)])  # both workers set up before timing
            return ray.get([task.remote(args.cache_dir, units) for _ in range(2)])

    rounds = []
    for _ in range(args.repeat):
        for name, run in (("threads", threads), ("processes", processes), ("ray_workers", ray_workers)):
            before = load()
            rows = run()
            rounds.append({"searchers": name, "load_before": before, "load_after": load(), "runs": rows})
            print(f"{name:12} M nodes per CPU s", [r["m_nodes_per_cpu_second"] for r in rows],
                  "wall", [r["wall_seconds"] for r in rows], "load", before, flush=True)
    return {"benchmark": "ray-units",
            "label": f"the first {len(units)} units ({nodes:,} nodes) of the iteration of bound {args.units_bound} "
                     "of the 24-puzzle's instance 1 (24-6-6-6-6), searched by each of two searchers at once",
            "rounds": rounds}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", default=str(Path.home() / ".cache" / "pdbtool"))
    parser.add_argument("--batch-partition", default="15-5-5-5")
    parser.add_argument("--tables-partition", default="15-6-6-3")
    parser.add_argument("--instance", choices=["15", "24"], default="15")
    parser.add_argument("--synthetic-mb", type=int, default=255)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--skip", default="", help="comma-separated: batch, single, tables")
    parser.add_argument("--out", default=None,
                        help="default: bench/results/ray.json, with --k24 bench/results/ray_24.json")
    parser.add_argument("--units", action="store_true",
                        help="only the unit search: the same units in two threads, two processes, two Ray workers")
    parser.add_argument("--units-bound", type=int, default=91)
    parser.add_argument("--units-nodes", type=float, default=6e7)
    parser.add_argument("--k24", action="store_true",
                        help="only the 24-puzzle's instance 1: --threads 2 against --ray, alternated --repeat "
                             "times")
    args = parser.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    import ray

    if args.units:
        meta = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": commit(),
                "command": " ".join(["bench/bench_ray.py", *(argv or sys.argv[1:])]),
                "machine": {"name": platform.node(), "cores": os.cpu_count()}, "ray": ray.__version__}
        result = bench_units(args)
        result = {"benchmark": result.pop("benchmark"), "meta": meta, **result}
        out = Path(args.out or ROOT / "bench" / "results" / "ray_units.json")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {out}")
        return
    if args.k24:
        out = Path(args.out or ROOT / "bench" / "results" / "ray_24.json")
        meta = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": commit(),
                "command": " ".join(["bench/bench_ray.py", *(argv or sys.argv[1:])]),
                "machine": {"name": platform.node(), "cores": os.cpu_count()}, "ray": ray.__version__,
                "load_average_before": load()}
        result = bench_24(args)
        meta["load_average_after"] = load()
        result = {"benchmark": result.pop("benchmark"), "meta": meta, **result}
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {out}")
        return
    args.out = args.out or str(ROOT / "bench" / "results" / "ray.json")

    result = {"machine": platform.node(), "platform": platform.platform(), "cores": os.cpu_count(),
              "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "commit": commit(),
              "ray": ray.__version__, "command": " ".join([Path(sys.argv[0]).name, *(argv or sys.argv[1:])]),
              "load_at_start": load()}
    if "tables" not in skip:
        result["tables"] = bench_tables(args)
        print(json.dumps({k: v for k, v in result["tables"].items() if k != "worker_mappings"}))
    if "batch" not in skip:
        result["batch"] = bench_batch(args)
        for key, runs in result["batch"]["runs"].items():
            print(key, [r["wall_seconds"] for r in runs], "search s", [r["summary"]["total_seconds"] for r in runs])
        print("ray start", result["batch"]["ray_start_cost"])
    if "single" not in skip:
        result["single"] = bench_single(args)
        for name, runs in result["single"]["cases"].items():
            for key, rs in runs.items():
                print(name, key, "wall", [r["wall_seconds"] for r in rs], "search", [r["search_seconds"] for r in rs])
    result["load_at_end"] = load()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
