"""The sections of docs/performance.md on running pdbtool: start-up, kernels, loading, checkpoints, resume,
stopping, Ray, more cores."""

from __future__ import annotations


from _report import (Plots, _load1, busy_note, fmt, provenance, section, table)


@section("A machine with more cores", ["scaling"], "python bench/bench_scaling.py")
def scaling_section(plots: Plots, data) -> str:
    out = []
    cores = data.get("cores", "?")
    out.append(f"`bench/bench_scaling.py` on {data.get('machine', '?')} ({cores} cores, {data.get('cpu_model', '?')}): "
               "each step a fresh process, tables built into an empty cache.\n\n")
    rows = data.get("table_7") or []
    if rows:
        out.append("The 7-tile table of 15-7-8 (blank minimized) by thread count:\n\n")
        out.append(table(["threads", "wall s", "CPU s", "speed-up"],
                         [[r["threads"], fmt(r["seconds"]), fmt(r["cpu_seconds"]), fmt(r.get("speedup"))]
                          for r in rows]) + "\n")
    steps = []
    for key, label in (("build_15_7_8", "build --partition 15-7-8"),
                       ("build_24_6_6_6_6", "build --partition 24-6-6-6-6")):
        run = data.get(key)
        if run:
            steps.append([f"`{label} --threads {cores}`", fmt(run["wall_seconds"]), fmt(run["cpu_seconds"]),
                          fmt(run["peak_rss_bytes"] / 2**30), "", ""])
    runs = ([data["solve_korf100_15_7_8"]] if data.get("solve_korf100_15_7_8") else []) + (data.get("solve_24_1") or [])
    runs += [run for pair in data.get("solve_24_1_repeats") or [] for run in pair]
    for run in runs:
        steps.append([run["label"], fmt(run["wall_seconds"]), fmt(run["cpu_seconds"]),
                      fmt(run["peak_rss_bytes"] and run["peak_rss_bytes"] / 2**30),
                      fmt(run["search_seconds"]), fmt(run["nodes_generated"])])
    if steps:
        out.append(table(["step", "wall s", "CPU s", "peak RSS GiB", "search s", "nodes generated"], steps))
    if data.get("ray_over_threads_wall"):
        walls = data.get("ray_over_threads_wall_all") or [data["ray_over_threads_wall"]]
        searches = data.get("ray_over_threads_search_all") or [data["ray_over_threads_search"]]
        inits = [x for x in data.get("ray_init_seconds_all") or [data.get("ray_init_seconds")] if x is not None]
        out.append(f"\n`--ray` over `--threads {cores}` on instance 1 ({len(walls)} pair(s) in turn): "
                   f"{', '.join(fmt(x) for x in walls)} times the wall time "
                   f"(median {fmt(data['ray_over_threads_wall'])}), "
                   f"{', '.join(fmt(x) for x in searches)} times the search time; `ray.init` of a local instance "
                   f"alone took {', '.join(fmt(x) for x in inits)} s.\n")
    if data.get("note"):
        out.append(f"\n{data['note']}\n")
    load_text = f"{data.get('load_before', '?')} before, {data.get('load_after', '?')} after"
    loads = [_load1(data.get("load_before")), _load1(data.get("load_after"))]
    out.append(f"\n_Measured {data.get('date', '?')} at commit `{(data.get('git_commit') or 'unknown')[:12]}` with "
               f"`{data.get('command', '?')}`; 1-minute load average {load_text}.{busy_note(loads, cores)}_\n\n")
    if rows and rows[0]["threads"] == 1:
        def draw(ax):
            t = [r["threads"] for r in rows]
            ax.plot(t, [r["speedup"] for r in rows], "o-", label="measured")
            ax.plot(t, t, ":", color="gray", label="ideal")
            ax.set(xlabel="threads", ylabel="speed-up", title="7-tile table build", ylim=(0, None))
            ax.set_xticks(t)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)

        out.append(plots.figure("scaling", draw, "speed-up of the 7-tile table's build per thread count"))
    return "".join(out)


@section("Start-up of the command line", ["startup"], "python bench/run.py --only startup")
def startup_section(plots: Plots, data) -> str:
    out = []
    out.append(f"Median over runs of each command's `--help` (`bench/bench_startup.py`; target "
               f"{fmt(data.get('target_seconds'), 2)} s, and no Numba imported):\n\n")
    out.append(table(["command", "runs", "median wall s", "median CPU s", "imports Numba"],
                     [[f"`{r['command']}`", r["runs"], fmt(r["median_wall_seconds"], 3),
                       fmt(r["median_cpu_seconds"], 3), "yes" if r.get("imports_numba") else "no"]
                      for r in data.get("results", [])]))
    loads = [_load1(data.get("load_average"))]
    out.append(f"\n_Measured {data.get('date', '?')} at commit `{(data.get('commit') or 'unknown')[:12]}` with "
               f"`{data.get('command', '?')}`, on {data.get('cores', '?')} cores; 1-minute load average "
               f"{fmt(loads[0], 1) if loads[0] is not None else 'not recorded'}."
               f"{busy_note(loads, data.get('cores'))}_\n")
    return "".join(out)


@section("Search kernels: CPU per node", ["kernels"], "python bench/run.py --only kernels")
def kernels_section(plots: Plots, data) -> str:
    out = ["`bench/bench_kernels.py` solves a fixed set of Korf's 100 with each heuristic on one thread, in a\n"
           "fresh process per round after a warm-up (compilation and table loading excluded), and divides the\n"
           "searching thread's CPU time by the nodes generated; the least of the rounds, and each round:\n\n"]
    rows = [[name, fmt(c["rounds"][0]["this"]["nodes"]), fmt(c["ns_per_node_min"]["this"], 1),
             ", ".join(fmt(r["this"]["ns_per_node"], 1) for r in c["rounds"])]
            for name, c in data.get("cases", {}).items()]
    out.append(table(["heuristic", "nodes generated", "ns per node", "per round"], rows))
    out.append("\n" + provenance(data) + "\n")
    return "".join(out)


@section("Checkpoints: what recording and resuming cost", ["checkpoint"], "python bench/run.py --only checkpoint")
def checkpoint_section(plots: Plots, data) -> str:
    every = fmt(data.get("every_seconds"), 1)
    out = [f"`solve --checkpoint` with {data.get('heuristic', '?')}, a record every {every} s, "
           "against the plain search, and a search stopped half way and resumed (`bench/bench_checkpoint.py`;\n"
           "the three count the same nodes). CPU seconds of the searching thread, all rounds:\n\n"]
    rows = []
    for r in data.get("runs", []):
        both = r["stopped_and_resumed"]
        rows.append([r["id"], fmt(r["plain"]["nodes"]), fmt(r["plain"]["cpu_seconds"], 3),
                     fmt(r["checkpointed"]["cpu_seconds"], 3),
                     fmt(both["cpu_seconds_first"] + both["cpu_seconds_resumed"], 3)])
    out.append(table(["id", "nodes", "plain CPU s", "checkpointed CPU s", "stopped and resumed CPU s"], rows))
    out.append(f"\nIn all: checkpointed {fmt(data.get('checkpointed_over_plain'), 3)} times the plain search's CPU, "
               f"stopped and resumed {fmt(data.get('stopped_and_resumed_over_plain'), 3)} times.\n\n"
               + provenance(data) + "\n")
    return "".join(out)


@section("Resume: re-checking held results", ["resume", "resume_text"], "python bench/bench_resume.py")
def resume_section(plots: Plots, as_json, as_text) -> str:
    out = ["`solve --output FILE --resume` re-checks every held line before it trusts it (the instance's hash, "
           "the moves replayed to the goal, the length, `# optimal`, h(start); [trust.md](trust.md)). "
           "`bench/bench_resume.py` times the re-check of held 15-puzzle results (the best of its rounds, CPU "
           "seconds of the whole resume, nothing left to solve):\n\n"]
    rows = []
    for data in (as_json, as_text):
        if data:
            rows.append([data.get("format", "?"), fmt(data.get("count")), data.get("heuristic", "?"),
                         fmt(data.get("best_cpu_seconds"), 2), fmt(data.get("cpu_microseconds_per_line"), 1),
                         fmt(data.get("target_seconds"), 1)])
    out.append(table(["results file", "held lines", "heuristic", "CPU s", "µs a line", "target s"], rows))
    out.append("\n" + "\n\n".join(provenance(d) for d in (as_json, as_text) if d) + "\n")
    return "".join(out)


@section("Stopping: from SIGTERM to exit", ["stop"], "python bench/bench_stop.py")
def stop_section(plots: Plots, data) -> str:
    out = [f"Every long-running command is sent SIGTERM {fmt(data.get('wait_seconds'), 1)} s after it starts, in its "
           "long phase (a kernel, a search, a write), and the wall seconds until it has exited are measured "
           f"(`bench/bench_stop.py`; target {fmt(data.get('target_seconds'), 1)} s; [long-runs.md](long-runs.md)). "
           "A probe whose command had ended before the signal is void:\n\n"]
    rows = []
    for name, row in data.get("probes", {}).items():
        seconds = "void" if row.get("void") else (fmt(row.get("seconds_to_exit"), 2) if row.get("seconds_to_exit")
                                                   is not None else f"> {fmt(row.get('killed_after'))}")
        rows.append([name, seconds, fmt(row.get("exit_status")), ", ".join(fmt(x, 1) for x in row.get("load") or [])])
    out.append(table(["command", "s to exit", "exit status", "load"], rows))
    out.append("\n" + provenance(data) + "\n")
    return "".join(out)


@section("Loading a table: what the checks cost", ["load_checks"], "python bench/run.py --only load")
def load_checks_section(plots: Plots, data) -> str:
    out = [f"Loading each table of {data.get('partition', '?')} ({data.get('blank', '?')}), {data.get('rounds', '?')} "
           "rounds (`bench/bench_load.py`; [trust.md](trust.md)): the file's envelope alone against every check:\n\n"]
    rows = [[f"`{t['file']}`", fmt(t["bytes"]), fmt(t["envelope"]["cpu_s"], 4), fmt(t["every check"]["cpu_s"], 4),
             fmt(t["checks_over_envelope_cpu"], 3)] for t in data.get("tables", [])]
    out.append(table(["file", "bytes", "envelope CPU s", "every check CPU s", "ratio"], rows))
    out.append("\n" + provenance(data) + "\n")
    return "".join(out)


RAY_24 = ["ray_24"]


@section("Ray against threads on one machine", ["ray", *RAY_24], "python bench/run.py --only ray")
def ray_section(plots: Plots, batch, *repeats) -> str:
    single = [(n, d) for n, d in zip(RAY_24, repeats) if d]
    out = []
    out.append("`bench/bench_ray.py` runs the same solve with `--ray` (a local Ray instance) and with threads or\n"
               "processes, in turn; [cluster.md](cluster.md) explains the differences.\n\n")
    if batch:
        runs = (batch.get("batch") or {}).get("runs", {})
        rows = [[kind, i + 1, fmt(r["wall_seconds"], 1), r.get("load_before", "")]
                for kind, rs in runs.items() for i, r in enumerate(rs)]
        what = batch.get("batch") or {}
        out.append(f"{what.get('instances', '')} with {what.get('partition', '')} (`ray.json`):\n\n")
        out.append(table(["run", "#", "wall s", "load before"], rows))
        loads = [_load1(r.get("load_before")) for rs in runs.values() for r in rs]
        out.append(f"\n_Measured {batch.get('date', '?')} at commit `{batch.get('commit', '?')}` with "
                   f"`{batch.get('command', '?')}`, on {batch.get('cores', '?')} cores."
                   f"{busy_note(loads, batch.get('cores'))}_\n\n")
    rows, loads = [], []
    for name, d in single:
        for i, r in enumerate(d.get("runs", [])):
            threads, ray = r.get("threads2") or {}, r.get("ray") or {}
            load_before = _load1(threads.get("load_before"))
            loads.append(load_before)
            rows.append([f"`{name}.json`", i + 1, fmt(threads.get("wall_seconds"), 1), fmt(ray.get("wall_seconds"), 1),
                         fmt(r.get("wall_ratio"), 3), fmt(load_before, 1) if load_before is not None else ""])
    if rows:
        label = single[0][1].get("label", "")
        out.append(f"{label}: wall seconds of `--threads 2` and of `--ray`, and their ratio:\n\n")
        out.append(table(["file", "#", "threads 2 wall s", "ray wall s", "ray / threads", "load before"], rows))
        metas = [d.get("meta") or {} for _, d in single]
        out.append(f"\n_Measured {', '.join(sorted(m.get('date', '?') for m in metas))} on "
                   f"{(metas[0].get('machine') or {}).get('cores', '?')} cores."
                   f"{busy_note(loads, (metas[0].get('machine') or {}).get('cores'))}_\n")
    return "".join(out)


