"""The tile puzzles' sections of docs/performance.md: tables, searches, heuristics and the 24- and 35-puzzles."""

from __future__ import annotations

import math
from pathlib import Path

from _report import (ROOT, Plots, fmt, not_measured, literature_table, number, provenance, row_provenance,
                     run_provenance, section, table)


# Felner, Korf & Hanan (2004) and Felner's talk, as docs/literature.md gives them -> pdbtool's names
FKH_NAMES = {"Manhattan": "manhattan", "linear conflict": "linear-conflict", "5-5-5": "15-5-5-5+reflect",
             "6-6-3": "15-6-6-3+reflect", "7-8": "15-7-8+reflect"}
TALK_NAMES = {"dynamic pairs": "ddb-pairs", "dynamic pairs + triples": "ddb-pairs+triples"}


def published_15() -> dict[str, tuple[float | None, float | None, str]]:
    out = {}
    for row in literature_table("Felner, Korf & Hanan (2004)"):
        if row[0] in FKH_NAMES:
            out[FKH_NAMES[row[0]]] = (number(row[1]), number(row[2]), "Felner, Korf & Hanan 2004")
    for row in literature_table("Felner's talk"):
        if row[0] in TALK_NAMES:
            out[TALK_NAMES[row[0]]] = (number(row[1]), number(row[2]), "Felner's talk")
    return out


def korf_md_mean(ids) -> float | None:
    """Korf's 1985 mean count over these instances, less the start node he counted (examples/, cited there)."""
    counts = {}
    try:
        for line in (ROOT / "examples" / "korf100_md_nodes.txt").read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                ident, count = line.split()
                counts[ident] = int(count) - 1
    except (OSError, ValueError):
        return None
    got = [counts[str(i)] for i in ids if str(i) in counts]
    return sum(got) / len(got) if got and len(got) == len(ids) else None


def entries(board_cells: int, k: int) -> int:
    return math.perm(board_cells, k)


@section("Building tables", ["build"], "python bench/run.py --only build")
def build_section(plots: Plots, data) -> str:
    out = []
    rows, points = [], {"minimized": [], "ignored": []}
    for r in data.get("rows", []):
        cells = 25 if r["partition"].startswith("24") else 16
        sizes = [entries(cells, len(t["tiles"])) for t in r["tables"]]
        cpu = r.get("cpu_seconds")
        if r.get("builder", "current") != "current":  # a comparison with an older builder: history
            continue
        rows.append([r["partition"], r["blank"], fmt(sum(sizes)),
                     fmt(r["build_seconds"]), fmt(cpu) if cpu is not None else "",
                     f"{r['peak_rss_bytes'] / 2**30:.2f}", r.get("threads", "")])
        for t, size in zip(r["tables"], sizes):
            points[r["blank"]].append((size, t.get("cpu_seconds", t["seconds"]), r["peak_rss_bytes"] / 2**30))
    out.append("Each partition's tables built in a fresh process on all cores (`bench/bench_build.py`); the\n"
               "peak resident memory is the process's, and the times are sums over the tables.\n\n")
    out.append(table(["tables", "blank", "placements", "build s", "CPU s", "peak RSS GiB", "threads"],
                     rows))
    out.append("\n" + provenance(data) + "\n\n")

    def draw(ax_time, ax_mem):
        for blank, marker in (("minimized", "o"), ("ignored", "s")):
            pts = sorted(points[blank])
            if pts:
                ax_time.loglog([p[0] for p in pts], [p[1] for p in pts], marker, label=f"blank {blank}")
                ax_mem.semilogx([p[0] for p in pts], [p[2] for p in pts], marker, label=f"blank {blank}")
        ax_time.set(xlabel="placements in the table", ylabel="CPU seconds", title="Build CPU time per table")
        ax_mem.set(xlabel="placements in the table", ylabel="peak RSS (GiB)", title="Peak memory of the build",
                   ylim=(0, None))
        ax_time.legend(fontsize=8)
        ax_time.grid(alpha=0.3)
        ax_mem.grid(alpha=0.3)

    out.append(plots.figure("build", draw, "build time and memory per table size", panels=2))
    return "".join(out)


@section("Solving Korf's 100", ["solve", "dynamic"], "python bench/run.py --only solve")
def solve_section(plots: Plots, solve, dynamic) -> str:
    out = []
    published = published_15()
    rows, bars = [], []
    for e in (solve or {}).get("results", []):
        pub = published.get(e["config"]) if e["instances"] == 100 else None
        if e["config"] == "manhattan" and isinstance(e.get("ids"), list):
            korf = korf_md_mean(e["ids"])
            pub = (None, korf, "Korf 1985, same instances") if korf else pub
        cpu_per = e["total_seconds"] / e["instances"]
        count = e["instances"]
        if e["config"] in ("manhattan", "linear-conflict") and count < 100:
            count = f"{count} (the cheapest)"
        rows.append([e["config"], count, fmt(e["mean_h0"]), fmt(round(e["mean_nodes_generated"])),
                     fmt(e["total_seconds"], 3), fmt((e["nodes_per_second"] or 0) / 1e6, 1),
                     _pub_text(pub)])
        bars.append((e["config"] + ("" if e["instances"] == 100 else f" ({e['instances']})"),
                     e["mean_nodes_generated"], cpu_per, pub[1] if pub else None))
    for name, s in ((dynamic or {}).get("4x4") or {}).items():
        if not isinstance(s, dict) or not s.get("solved"):
            continue
        n = s["solved"]
        pub = published.get(name) if n == 100 else None
        cpu = s.get("cpu_seconds") or s.get("seconds")
        run = s.get("instances_run") or []
        rows.append([name, f"{n} ({run[0]}-{run[-1]})" if n < 100 and run else n, fmt(s["mean_h0_run"]),
                     fmt(s["mean_nodes"]), fmt(cpu, 3),
                     fmt((s.get("nodes_per_cpu_second") or 0) / 1e6, 2), _pub_text(pub)])
        bars.append((name + ("" if n == 100 else f" ({n})"), s["mean_nodes"], cpu / n, pub[1] if pub else None))
    out.append("IDA* on one thread, every length checked against the known optimum. \"instances\" is how many\n"
               "of Korf's 100 were solved (Manhattan and linear conflicts run on the cheapest ones, and their\n"
               "Manhattan counts are checked against Korf's 1985 table); CPU seconds are the search's, summed.\n"
               "Published means are over all 100 instances, so they stand only beside rows of 100.\n\n")
    out.append(table(["heuristic", "instances", "mean h(start)", "mean nodes generated", "search CPU s",
                      "M nodes / CPU s", "published h / nodes"], rows))
    for name, data in (("solve", solve), ("dynamic", dynamic)):
        if data and (data.get("meta") or name != "dynamic"):
            out.append(f"\n`{name}.json`: " + provenance(data) + "\n")
        elif data:
            out.append(f"\n`{name}.json`: " + row_provenance(data.get("4x4") or {}) + "\n")
    if not dynamic:
        out.append("\nThe dynamic heuristics (ddb, max): "
                   + not_measured("dynamic", "python bench/run.py --only dynamic"))
    out.append("\n")

    def draw(ax_nodes, ax_cpu):
        labels = [b[0] for b in bars]
        y = range(len(bars))
        ax_nodes.barh(y, [b[1] for b in bars], color="tab:blue", label="measured")
        pub = [(i, b[3]) for i, b in enumerate(bars) if b[3]]
        if pub:
            ax_nodes.plot([p[1] for p in pub], [p[0] for p in pub], "k|", markersize=12, mew=2, label="published")
        ax_nodes.set_xscale("log")
        ax_nodes.xaxis.set_minor_formatter(plots.plt.NullFormatter())
        ax_nodes.set_yticks(list(y), labels, fontsize=7)
        ax_nodes.invert_yaxis()
        ax_nodes.set(xlabel="mean nodes generated", title="Nodes per instance")
        ax_nodes.legend(fontsize=7)
        ax_cpu.barh(y, [b[2] for b in bars], color="tab:orange")
        ax_cpu.set_xscale("log")
        ax_cpu.xaxis.set_minor_formatter(plots.plt.NullFormatter())
        ax_cpu.set_yticks(list(y), [""] * len(bars))
        ax_cpu.invert_yaxis()
        ax_cpu.set(xlabel="search CPU seconds per instance", title="Search time per instance")

    if bars:
        out.append(plots.figure("solve", draw, "nodes and search time per heuristic on Korf's 100", panels=2))
    return "".join(out)


def _pub_text(pub) -> str:
    if not pub:
        return ""
    h, nodes, source = pub
    return f"{f'{h:g}' if h else '-'} / {fmt(nodes) if nodes else '-'} ({source})"


@section("Threads: one instance on several cores", ["threads"], "python bench/run.py --only threads")
def threads_section(plots: Plots, data) -> str:
    out = []
    rows = data.get("rows", [])
    out.append(f"`solve --threads N` with {data.get('heuristic')} on Korf's instances "
               f"{', '.join(map(str, data.get('ids', [])))} ({data.get('rounds', 1)} round(s), the thread counts "
               "taking turns instance by instance; `bench/bench_threads.py`). The speed-up is the serial wall time\n"
               "over the threaded one; CPU seconds are the whole process's.\n\n")
    out.append(table(["threads", "nodes generated", "wall s", "CPU s", "M nodes / wall s", "speed-up"],
                     [[r["threads"], fmt(r["nodes_generated"]), fmt(r["wall_seconds"]), fmt(r["cpu_seconds"]),
                       fmt(r["nodes_per_wall_second"] / 1e6), fmt(r["speedup"])] for r in rows]))
    out.append("\n" + provenance(data) + "\n\n")

    def draw(ax_rate, ax_speed):
        t = [r["threads"] for r in rows]
        ax_rate.plot(t, [r["nodes_per_wall_second"] / 1e6 for r in rows], "o-")
        ax_rate.set(xlabel="threads", ylabel="M nodes / wall second", title="Nodes per second", ylim=(0, None))
        ax_speed.plot(t, [r["speedup"] for r in rows], "o-", label="measured")
        ax_speed.plot(t, t, ":", color="gray", label="ideal")
        ax_speed.set(xlabel="threads", ylabel="speed-up", title="Speed-up", ylim=(0, None))
        ax_speed.legend(fontsize=8)
        for ax in (ax_rate, ax_speed):
            ax.set_xticks(t)
            ax.grid(alpha=0.3)

    out.append(plots.figure("threads", draw, "nodes per second and speed-up per thread count", panels=2))
    return "".join(out)


@section("Table encodings: size against search time", ["solve_encodings", "encodings"],
         "python bench/run.py --only encodings,solve_encodings")
def encodings_section(plots: Plots, solve, sizes) -> str:
    out = []
    points = []
    if solve:
        rows = []
        for e in solve.get("results", []):
            rows.append([e["partition"], e["blank"], e["encoding"], e["instances"],
                         f"{e['bytes_on_disk'] / 1e6:.2f}", fmt(e["mean_h0"]), fmt(e["nodes_generated"]),
                         fmt(e["nodes_vs_byte"]), fmt(e["cpu_seconds"], 3), fmt(e["cpu_vs_byte"])])
            points.append(e)
        out.append("Korf's instances with the reflection, one thread, the encodings of one set of tables taking\n"
                   "turns instance by instance (`bench/bench_solve_encodings.py`). Lossless encodings generate\n"
                   "exactly the byte encoding's nodes; the ratios to the byte encoding come from one run.\n\n")
        out.append(table(["tables", "blank", "encoding", "instances", "MB on disk", "mean h(start)",
                          "nodes generated", "nodes vs byte", "search CPU s", "CPU vs byte"], rows))
        out.append("\n" + provenance(solve) + "\n\n")
    else:
        out.append("Search time per encoding: " + not_measured("solve_encodings",
                                                                "python bench/run.py --only solve_encodings") + "\n")
    if sizes:
        rows = []
        for r in sizes.get("rows", []):
            label = r["encoding"] + (f" C={r['params']['group']}" if r.get("params") else "")
            rows.append([r["partition"], r["blank"], label, f"{r['file_bytes'] / 1e6:.2f}",
                         fmt(r["bits_per_entry"], 3), fmt(r.get("encode_seconds"), 2), fmt(r.get("load_seconds"), 3),
                         fmt(r.get("mean_loss", 0), 3)])
        out.append("Sizes, conversion and load times of every encoding (`bench/bench_encodings.py`; load = header\n"
                   "checks, checksum of the whole file and memory map):\n\n")
        out.append(table(["tables", "blank", "encoding", "MB on disk", "bits / entry", "encode s", "load s",
                          "mean h lost"], rows))
        jumps = sizes.get("minimized_tile_move_changes") or []
        if jumps:
            out.append("\nWhy mod3 and parity refuse blank-minimized tables: the share of tile moves that change a\n"
                       "minimized table's value by 3 or more "
                       "([design.md](design.md#how-mod3-and-parity-recover-exact-values)):\n\n")
            out.append(table(["tables", "pattern", "tile moves", "changed by 3 or more", "by change (1 / 3 / 5 / 7)"],
                             [[j["partition"], "{" + ",".join(map(str, j["tiles"])) + "}", fmt(j["moves"]),
                               f"{100 * j['share_3_or_more']:.2f} %",
                               " / ".join(fmt(j["by_change"].get(str(d), 0)) for d in (1, 3, 5, 7))]
                              for j in jumps]))
        out.append("\n" + provenance(sizes) + "\n\n")
    else:
        out.append("Sizes per encoding: " + not_measured("encodings", "python bench/run.py --only encodings") + "\n")

    def draw(ax):
        groups = {}
        for e in points:
            groups.setdefault(f"{e['partition']} {e['blank']}", []).append(e)
        for (label, es), marker in zip(groups.items(), "osD^v"):
            ax.loglog([e["bytes_on_disk"] / 1e6 for e in es], [e["cpu_seconds"] / e["instances"] for e in es],
                      marker, label=label)
            for e in es:
                ax.annotate(e["encoding"], (e["bytes_on_disk"] / 1e6, e["cpu_seconds"] / e["instances"]),
                            fontsize=6, xytext=(3, 2), textcoords="offset points")
        from matplotlib.ticker import NullFormatter, ScalarFormatter

        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xticks([1, 2, 5, 10, 20, 50, 100, 200, 500])
        ax.set_xlim(min(e["bytes_on_disk"] for e in points) / 1.4e6, max(e["bytes_on_disk"] for e in points) * 1.6e-6)
        ax.set(xlabel="tables on disk (MB)", ylabel="search CPU seconds per instance",
               title="Table size against search time")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)

    if points:
        out.append(plots.figure("encodings", draw, "table size against search time per encoding"))
    return "".join(out)


@section("Verifying tables", ["verify"], "python bench/run.py --only verify")
def verify_section(plots: Plots, data) -> str:
    out = []
    rows = []
    for r in data.get("rows", []):
        caught = r.get("caught_of_200", {})
        rows.append([f"{{{','.join(map(str, r['tiles']))}}} {r['blank']}", fmt(r["entries"]),
                     " / ".join(str(caught.get(k, "")) for k in ("+1", "+2", "-2", "+4")),
                     fmt(r["sampled_10000_s"], 3), fmt(r["full_s"], 3), fmt(r["full_and_rebuild_s"], 3)])
    out.append("How often `verify --full` catches a single wrong entry (200 trials per change of the value),\n"
               "and how long each kind of check takes on 15-puzzle tables (`bench/bench_verify.py`, times\n"
               "without process start-up):\n\n")
    out.append(table(["table", "placements", "caught of 200: +1 / +2 / -2 / +4", "10,000 samples s", "--full s",
                      "--full --rebuild s"], rows))
    out.append("\n" + provenance(data) + "\n")
    return "".join(out)


@section("The 24-puzzle", ["24"], "python bench/run.py --only 24 -- --ids 1 --threads 2")
def puzzle24_section(plots: Plots, data) -> str:
    out = []
    rows = [[r["id"], r["optimal"], r["h0"], r["length"] if r["solved"] else f">= {r.get('last_bound', '?')}",
             fmt(r["nodes_generated"]), fmt(r["seconds"], 1), fmt(r["cpu_seconds"], 1)]
            for r in data.get("instances", [])]
    out.append(f"{data.get('heuristic', '')}, {data.get('threads', '?')} search thread(s) (`bench/bench_24.py`):\n\n")
    out.append(table(["id", "optimal", "h(start)", "length", "nodes generated", "wall s", "CPU s"], rows))
    out.append("\n" + provenance(data) + "\n")
    return "".join(out)


@section("The dynamic heuristics: CPU per node", ["dynamic_cost", "dynamic_cost_whole"],
         "python bench/run.py --only dynamic_cost -- --board 5x5 --instances 1 --node-limit 20000000 --configs ...")
def dynamic_cost_section(plots: Plots, cost, whole) -> str:
    runs = [(name, data) for name, data in (("dynamic_cost", cost), ("dynamic_cost_whole", whole)) if data]
    out = []
    out.append("Each configuration in turn, in rounds, in one process (`bench/bench_dynamic_cost.py`), so that the\n"
               "machine's load weighs on all alike: the median CPU time per generated node over the rounds, and\n"
               "its ratio to the first configuration's. Each file keeps every run; the last is shown.\n\n")
    for name, data in runs:
        run = data[-1] if isinstance(data, list) else data
        ids = ", ".join(map(str, run.get("instances", [])))
        limit = f"first {fmt(run['node_limit'])} nodes" if run.get("node_limit") else "whole searches"
        out.append(f"`{name}.json`: {run.get('board', '?')}, instance(s) {ids}, {limit}:\n\n")
        rows = [[f"`{cfg}`", fmt(c["median_cpu_us_per_node"], 3), fmt(c.get("ratio_to_first"), 2),
                 fmt(c["rounds"][-1]["nodes"]) if c.get("rounds") else ""]
                for cfg, c in run.get("configs", {}).items()]
        out.append(table(["configuration", "CPU µs per node", "ratio to the first", "nodes per round"], rows))
        out.append("\n" + provenance(run) + "\n\n")
    return "".join(out)


@section("The dynamic databases against the published definition",
         ["dynamic_definitions", "dynamic_variants", "dynamic-24-region"],
         "python bench/run.py --only dynamic_definitions")
def dynamic_definitions_section(plots: Plots, defs, variants, whole) -> str:
    out = []
    for board, d in (defs or {}).items():
        out.append(f"Mean h over Korf's 100 ({board}; mean Manhattan distance {fmt(d.get('mean_manhattan'), 2)}) of "
                   "each definition of the pair and triple values (`bench/bench_dynamic_definitions.py`):\n\n")
        out.append(table(["definition", "mean h"], [[r["definition"], fmt(r["mean_h"], 2)]
                                                     for r in d.get("definitions", [])]))
        out.append("\n" + run_provenance(d.get("run") or {}) + "\n\n")
    for label, d in (variants or {}).items():
        rows = []
        for name, v in d.get("variants", {}).items():
            to_bound = sum(i.get("generated", 0) for i in v.get("iterations") or [])
            states = v.get("states") or {}
            rows.append([f"`{name}`", v.get("h0", ""), fmt(to_bound) if to_bound else "",
                         fmt(v["generated"]) if v.get("complete") else "",
                         f"{states.get('lower', '')} / {states.get('count', '')}" if states else ""])
        runs = [v.get("run") for v in d.get("variants", {}).values() if v.get("run")]
        out.append(f"Variants of the region rule on {label} (optimal {d.get('optimal', '?')}; "
                   "`bench/bench_dynamic_variants.py`): nodes generated up to the bound of the run, of the whole\n"
                   "search where it was run to the end, and on how many random states h is below that of\n"
                   "`pairs+triples-region`:\n\n")
        out.append(table(["variant", "h(start)", "nodes to the bound", "whole search", "h below the region set's"],
                         rows))
        out.append("\n" + (run_provenance(runs[0]) if runs else "_Metadata not recorded._") + "\n\n")
    for board, entries in (whole or {}).items():
        for name, w in entries.items():
            for r in w.get("rows", []):
                out.append(f"The whole search of instance {r['id']} on {board} with `{name}` "
                           f"(`dynamic-24-region.json`): h(start) {r['h0']}, length {r['length']}, "
                           f"{fmt(r['nodes'])} nodes generated, {fmt(r['cpu_seconds'], 0)} CPU s.\n\n")
            out.append(run_provenance(w.get("run") or {}) + "\n\n")
    return "".join(out)


@section("The 24-puzzle benchmark set: the 16 cheapest Korf-Felner instances", ["frontier_24_target"],
         "python bench/bench_24.py --set target --configs BASELINE,NEW --log FILE --resume")
def frontier_target_section(plots: Plots, data) -> str:
    configs = data.get("configs", [])
    out = ["Issue 31's benchmark set (`bench/bench_24.py --set target`): each instance with 6-6-6-6 + reflection "
           "(the parent rule: Korf & Felner's own search) and with the other configurations, one thread, "
           "nodes generated and CPU seconds per instance, beside the count Korf & Felner's program generated "
           "(`examples/korf24_50.txt`). Every run is logged with its own date and load (the JSON's runs).\n\n"]
    head = ["id", "optimal", "Korf & Felner nodes"]
    for c in configs:
        head += [f"`{c}` nodes", "CPU s"]
    rows = []
    for r in data.get("instances", []):
        row = [r["id"], r["optimal"], fmt(r["kf_nodes"])]
        for c in configs:
            x = r["runs"].get(c, {})
            row += [fmt(x.get("nodes_generated")) + ("" if x.get("solved", True) else " (stopped)"),
                    fmt(x.get("cpu_seconds"), 1)]
        rows.append(row)
    out.append(table(head, rows))
    srows = []
    for c, v in (data.get("summary") or {}).items():
        both = v.get("on_instances_solved_by_all") or {}
        srows.append([f"`{c}`", f"{v.get('solved')} of {v.get('instances')}", fmt(v.get("nodes_generated")),
                      fmt(v.get("cpu_seconds"), 1), fmt(both.get("kf_nodes_ratio"), 2),
                      fmt(both.get("cpu_ratio_to_first"), 2)])
    out.append("\nIn all:\n\n" + table(["configuration", "solved", "nodes generated", "CPU s",
                                          "Korf & Felner's nodes / these", "first's CPU / this"], srows))
    proj = data.get("projection_50")
    if proj:
        prow = [[f"`{c}`", fmt(h, 1)] for c, h in proj.get("cpu_hours", {}).items()]
        out.append(f"\nProjected CPU-hours for all {proj.get('instances')} instances (this machine): "
                   f"{PROJECTION_RULE} Clausecker & Reinefeld's catalogue with zero-aware tables "
                   "took 338 CPU-hours in their program ([literature](literature.md)).\n\n")
        out.append(table(["configuration", "CPU-hours, all 50"], prow))
    out.append("\n" + provenance(data) + "\n")
    return "".join(out)


PROJECTION_RULE = ("each configuration's CPU on the instances every configuration solved, times the ratio of "
                   "Korf & Felner's counts over the 50 and over those instances. An estimate: a configuration's "
                   "gain varies from instance to instance.")
KORF24_50 = Path(__file__).resolve().parents[1] / "examples" / "korf24_50.txt"


def kf_nodes_total(path: Path = KORF24_50) -> int:
    """The sum of Korf & Felner's node counts over their 50 instances (the last field of each line)."""
    total = 0
    for line in path.read_text().splitlines():
        body = line.split("#", 1)[0].split()
        if len(body) >= 27:
            total += int(body[-1])
    return total


def projected_hours(summary_row: dict, total_kf: int) -> float | None:
    """A configuration's CPU-hours for all 50, from its summary over the instances every configuration solved."""
    both = summary_row.get("on_instances_solved_by_all") or {}
    if not both.get("kf_nodes") or both.get("cpu_seconds") is None:
        return None
    return both["cpu_seconds"] * total_kf / both["kf_nodes"] / 3600


FRONTIER = ["frontier_24_same_run", "frontier_24_fsm_depth", "frontier_24_max_ddb",
            "frontier_24_cat7_max_ddb_ids5", "frontier_24_compressed"]


@section("The 24-puzzle: zero-aware tables, catalogues and the automaton's depth", FRONTIER,
         "python bench/run.py --only 24")
def frontier_section(plots: Plots, *files) -> str:
    out = ["Each configuration on the same instances, in turn, on the threads of the run's command "
           "(`bench/bench_24.py`; [frontier-24.md](frontier-24.md) says what the configurations are). "
           "`fsm` is the automaton of the default depth at the run's commit (12 before 5x5's became 16), "
           "`fsmL` that of depth L.  A run of ten instances or more projects its CPU-hours for all 50: "
           f"{PROJECTION_RULE}\n\n"]
    total_kf = kf_nodes_total()
    for name, data in zip(FRONTIER, files):
        if not data:
            continue
        rows = []
        wide = len(data.get("instances", [])) >= 10
        for config, c in (data.get("summary") or {}).items():
            both = c.get("on_instances_solved_by_all") or {}
            rows.append([f"`{config}`", f"{c.get('solved')} of {c.get('instances')}", fmt(c.get("nodes_generated")),
                         fmt(c.get("cpu_seconds"), 1), fmt(both.get("nodes_ratio_to_first"), 3),
                         fmt(both.get("cpu_ratio_to_first"), 3)]
                        + ([fmt(projected_hours(c, total_kf), 0)] if wide else []))
        ids = ", ".join(str(i.get("id")) for i in data.get("instances", []))
        out.append(f"`{name}.json` (instances {ids}):\n\n")
        out.append(table(["configuration", "solved", "nodes generated", "CPU s", "first's nodes / these",
                           "first's CPU / this"] + (["CPU-hours, all 50"] if wide else []), rows))
        out.append("\n" + provenance(data) + "\n\n")
    return "".join(out)


@section("Duplicate-path pruning", ["pruning", "pruning_24_whole"], "python bench/run.py --only pruning")
def pruning_section(plots: Plots, data, whole) -> str:
    out = ["`--pruning fsm` (a move automaton of the given depth) against the parent rule "
           "(`bench/bench_pruning.py`; [pruning.md](pruning.md)):\n\n"]
    rows = []
    for case in ("korf100_15_7_8", "korf100_manhattan"):
        for config, t in (((data or {}).get(case) or {}).get("totals") or {}).items():
            rows.append([case, config, fmt(t.get("nodes")), fmt(t.get("cpu_seconds"), 1), fmt(t.get("node_ratio"), 3),
                         fmt(t.get("cpu_ratio"), 3)])
    if rows:
        out.append(table(["instances", "pruning", "nodes", "CPU s", "parent's nodes / these",
                           "parent's CPU / this"], rows))
        out.append("\n" + provenance(data) + "\n\n")
    if whole:
        r = whole.get("result") or {}
        out.append(f"{whole.get('what', '')}: `{r.get('heuristic')}` length {r.get('length')}, "
                   f"{fmt(r.get('nodes_generated'))} nodes generated ({fmt(whole.get('node_ratio'), 3)} times fewer "
                   f"than the parent rule's {fmt(whole.get('parent_rule_nodes_generated'))}), "
                   f"{fmt(r.get('cpu_seconds'), 1)} CPU s.\n\n" + provenance(whole) + "\n")
    return "".join(out)


def _first(d) -> float | None:
    """The first value of a dict keyed by bound (the relative figures are the same at every bound measured)."""
    return next(iter(d.values()), None) if isinstance(d, dict) else d


def _p35_row(r: dict) -> list:
    """A heuristic's sampled mean, relative predicted nodes and time, and node rate, beside the talk's."""
    talk = r.get("talk") or {}
    rate = (r.get("node_rate") or {}).get("nodes_per_cpu_second")
    return [r.get("heuristic"), f"{fmt(r.get('mean'), 3)} ± {fmt(r.get('standard_error'), 3)}",
            fmt(talk.get("mean_h"), 2), fmt(r.get("states")), fmt(_first(r.get("relative_nodes")), 1),
            fmt(talk.get("relative_nodes"), 1), fmt(rate / 1e6 if rate else None, 1),
            fmt((talk.get("nodes_per_second") or 0) / 1e6 or None, 2), fmt(_first(r.get("relative_time")), 1),
            fmt(talk.get("relative_time"), 1)]


@section("The 35-puzzle beside Felner's talk", ["p35"], "python bench/bench_35.py")
def p35_section(plots: Plots, data) -> str:
    rows = list(map(_p35_row, data.get("rows", [])))
    out = ["Mean h over random solvable 6x6 states (`bench/bench_35.py`), beside the talk's row "
           "([literature](literature.md)):\n\n"]
    out.append(table(["heuristic", "mean h ± s.e.", "talk", "states sampled", "relative nodes", "talk",
                      "M nodes / CPU s", "talk (M / s)", "relative time", "talk"], rows))
    exact = data.get("manhattan_exact_mean") or {}
    if exact:
        out.append(f"\nManhattan's mean over every solvable state is exactly {exact.get('fraction')} "
                   f"({exact.get('note')}).\n")
    for what, why in (data.get("not_measured") or {}).items():
        out.append(f"\n- Not measured yet: {what}: {why}.")
    for r in data.get("rows", []):
        if r.get("command"):
            out.append(f"\n- {r['heuristic']}: `{r['command']}`, {r.get('date', '?')}, load {r.get('load', '?')}.")
    out.append("\n\n" + provenance(data) + "\n")
    return "".join(out)


