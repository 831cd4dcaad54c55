"""How the builder and the search scale with the cores of one machine, and what ``--ray`` adds there.

Meant for a machine with more cores than the 2 of the development machine (it runs anywhere), each step a
fresh ``pdbtool`` process or builder child, so that the figures are what a user gets:

* the 7-tile table of 15-7-8 (tiles 1-7, blank minimized) built with 1, 2, 4, ... threads up to all
  cores: wall and CPU seconds, speed-up over one thread;
* ``pdbtool build --partition 15-7-8`` and ``--partition 24-6-6-6-6`` into an empty cache, all cores
  (wall, CPU of the process, peak RSS): the new user's first build;
* ``pdbtool solve examples/korf100.txt`` on the 15-7-8 tables just built (one process, one thread);
* the 24-puzzle's instance 1 (``examples/korf24_easy.txt``) with 6-6-6-6 + reflection, ``--threads N``
  (all cores) against ``--ray`` with a local Ray instance of N CPUs, when Ray is installed (``--no-ray``
  leaves it out).  The Ray figure includes ``ray.init``, which the run also reports apart.

Writes ``--out`` (default ``bench/results/scaling.json``: machine, cores, load, date, commit, commands) and
prints a line per step.

    python bench/bench_scaling.py [--threads 1,2,4,8,16] [--skip table,build15,solve15,build24,solve24]
                                  [--quick] [--no-ray] [--out FILE]

``--quick`` (as ``make bench --quick`` passes): the 7-tile table's scaling only.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_build import CHILD, _cpu_model, git_commit, run_child  # noqa: E402

PDBTOOL = [sys.executable, "-m", "pdbtool"]


def load() -> float:
    return os.getloadavg()[0]


# Runs the command as its child and prints the child's peak RSS last on stderr: getrusage(RUSAGE_CHILDREN)
# in this process would give the largest child so far, not this step's.
PEAK_OF_CHILD = (
    "import resource, subprocess, sys\n"
    "code = subprocess.call(sys.argv[1:])\n"
    "print('peak_rss_kib', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(code)\n")


def timed(cmd: list[str], env: dict | None = None) -> dict:
    """Run ``cmd``: its wall seconds, the CPU seconds of its process tree, its peak RSS and its output lines.

    Processes that are not its descendants (a Ray instance's workers) are not counted in the CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", PEAK_OF_CHILD, *cmd], capture_output=True, text=True, cwd=ROOT,
                          env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        sys.exit(f"bench_scaling: {' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    stderr, _, peak = proc.stderr.rpartition("peak_rss_kib ")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"command": " ".join(cmd[2:] if cmd[:2] == PDBTOOL[:2] else cmd), "wall_seconds": round(wall, 2),
            "cpu_seconds": round(cpu, 2), "peak_rss_bytes": int(peak.split()[0]) * 1024,
            "lines": proc.stdout.splitlines(), "stderr_tail": stderr[-400:]}


def json_lines(lines: list[str]) -> list[dict]:
    return [json.loads(line) for line in lines if line.startswith("{")]


def table_scaling(threads_list: list[int]) -> list[dict]:
    rows = []
    for threads in threads_list:
        data = run_child(CHILD, json.dumps([4, 4, "minimized", [1, 2, 3, 4, 5, 6, 7], threads, None]))
        data.update(threads=threads, load_before=round(load(), 2))
        rows.append(data)
    one = rows[0]["seconds"] if rows and rows[0]["threads"] == 1 else None
    for row in rows:
        row["speedup"] = round(one / row["seconds"], 2) if one else None
        print(f"7-tile table  {row['threads']:3d} threads  wall {row['seconds']:7.2f} s  "
              f"cpu {row['cpu_seconds']:7.2f} s"
              + (f"  speed-up {row['speedup']:.2f}" if one else ""), flush=True)
    return rows


def build(partition: str, cache: str, threads: int) -> dict:
    run = timed([*PDBTOOL, "build", "--partition", partition, "--cache-dir", cache, "--threads", str(threads),
                 "--json"])
    run["tables"] = json_lines(run.pop("lines"))
    print(f"build {partition:11s} {threads:3d} threads  wall {run['wall_seconds']:7.2f} s  "
          f"cpu {run['cpu_seconds']:7.2f} s  peak RSS {run['peak_rss_bytes'] / 2**30:.2f} GiB", flush=True)
    return run


def solve(instances: str, cache: str, extra: list[str], label: str, env: dict | None = None) -> dict:
    run = timed([*PDBTOOL, "solve", instances, "--cache-dir", cache, "--format", "json", *extra], env=env)
    results = [r for r in json_lines(run.pop("lines")) if "length" in r]  # not the summary line
    run["label"] = label
    run["instances"] = len(results)
    run["all_optimal"] = all(r["solved"] and r.get("optimal") in (None, r["length"]) for r in results)
    run["nodes_generated"] = sum(r["nodes_generated"] for r in results)
    search = sum(r["seconds"] for r in results)
    run["search_seconds"] = round(search, 2)
    run["nodes_per_second"] = round(run["nodes_generated"] / max(search, 1e-9))
    if len(results) == 1:
        run["length"] = results[0]["length"]
    print(f"solve {label:28s} wall {run['wall_seconds']:7.2f} s  search {run['search_seconds']:7.2f} s  "
          f"{run['nodes_generated']:,} nodes  {run['nodes_per_second'] / 1e6:.1f} M/s  "
          f"optimal {run['all_optimal']}", flush=True)
    return run


def ray_init_seconds(cpus: int) -> float | None:
    code = ("import time, logging, ray; t = time.perf_counter(); "
            f"ray.init(num_cpus={cpus}, include_dashboard=False, logging_level=logging.WARNING); "
            "ray.get(ray.remote(lambda: 1).remote()); print(time.perf_counter() - t); ray.shutdown()")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return round(float(proc.stdout.split()[-1]), 2) if proc.returncode == 0 else None


def main(argv=None) -> dict:
    cores = os.cpu_count() or 1
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default=",".join(str(1 << i) for i in range(cores.bit_length())
                                                      if 1 << i <= cores),
                        help="thread counts of the 7-tile table's scaling (default: 1, 2, 4, ... up to the cores)")
    parser.add_argument("--skip", default="", help="comma-separated: table, build15, solve15, build24, solve24")
    parser.add_argument("--quick", action="store_true", help="the 7-tile table's scaling only")
    parser.add_argument("--no-ray", action="store_true", help="leave out the --ray run of the 24-puzzle")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "scaling.json"))
    args = parser.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    if args.quick:
        skip |= {"build15", "solve15", "build24", "solve24"}
    report = {"benchmark": "scaling", "machine": platform.node(), "cpu_model": _cpu_model(), "cores": cores,
              "platform": platform.platform(), "python": platform.python_version(),
              "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
              # PDBTOOL_GIT_COMMIT: for a copy of the tree elsewhere
              "git_commit": os.environ.get("PDBTOOL_GIT_COMMIT") or git_commit(),
              "command": " ".join([Path(sys.executable).name, *sys.argv]), "load_before": round(load(), 2)}

    def save():
        report["load_after"] = round(load(), 2)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report, indent=2))

    with tempfile.TemporaryDirectory(prefix="pdbtool-scaling-") as cache:
        if "table" not in skip:
            report["table_7"] = table_scaling([int(t) for t in args.threads.split(",")])
            save()
        if "build15" not in skip:
            report["build_15_7_8"] = build("15-7-8", cache, cores)
            save()
        if "solve15" not in skip and "build15" not in skip:
            report["solve_korf100_15_7_8"] = solve("examples/korf100.txt", cache, [], "korf100 15-7-8, 1 thread")
            save()
        if "build24" not in skip:
            report["build_24_6_6_6_6"] = build("24-6-6-6-6", cache, cores)
            save()
        if "solve24" not in skip and "build24" not in skip:
            # the CPU seconds of the --ray run leave out the Ray instance's workers (not pdbtool's children)
            runs = [solve("examples/korf24_easy.txt", cache, ["--threads", str(cores)], f"24 #1 --threads {cores}")]
            if not args.no_ray:
                try:
                    import ray  # noqa: F401
                except ImportError:
                    print("ray is not installed: no --ray run", flush=True)
                else:
                    report["ray_init_seconds"] = ray_init_seconds(cores)
                    runs.append(solve("examples/korf24_easy.txt", cache, ["--ray"], f"24 #1 --ray ({cores} CPUs)"))
            report["solve_24_1"] = runs
            if len(runs) == 2:
                report["ray_over_threads_wall"] = round(runs[1]["wall_seconds"] / runs[0]["wall_seconds"], 3)
                report["ray_over_threads_search"] = round(runs[1]["search_seconds"] / runs[0]["search_seconds"], 3)
            save()
    save()
    return report


if __name__ == "__main__":
    main()
