"""docs/performance-vcover.md: vertex cover beside the talk, Peaty, CP-SAT and PACE 2019."""

from __future__ import annotations


from _report import (Plots, _load1, fmt, literature_table, number, provenance, section, table)


# --- vertex cover (bench/bench_vcover.py) ---------------------------------------------------------------

VC_TALK_NAMES = {"none": "none", "static, cliques of 2": "static:2", "static, 3": "static:3",
                 "static, 4": "static:4", "dynamic, 2": "dynamic:2", "dynamic, 3": "dynamic:3",
                 "dynamic, 4": "dynamic:4"}


def vcover_talk() -> dict[str, tuple[float | None, float | None]]:
    """The talk's vertex-cover rows (nodes, nodes/s) from docs/literature.md, by pdbtool's heuristic name."""
    return {VC_TALK_NAMES[row[0]]: (number(row[1]), number(row[3]))
            for row in literature_table("Vertex cover: Felner's talk") if row and row[0] in VC_TALK_NAMES}


def _run_note(row: dict) -> str:
    loads = [_load1(row.get("load_before")), _load1(row.get("load_after"))]
    loads = [x for x in loads if x is not None]
    return " to ".join(f"{x:.1f}" for x in loads) if loads else "-"


@section("Vertex cover: the talk's table in shape", ["vcover_table"], "python bench/bench_vcover.py --table")
def vcover_table_section(plots: Plots, data) -> str:
    talk = vcover_talk()
    talk_none = (talk.get("none") or (None,))[0]
    rows, runs = [], []
    summary = data.get("summary") or {}
    order = list(VC_TALK_NAMES.values())
    for config in sorted(summary, key=lambda c: order.index(c) if c in order else len(order)):
        s, row = summary[config], data["rows"][config]
        t_nodes, t_rate = talk.get(config, (None, None))
        t_ratio = talk_none / t_nodes if talk_none and t_nodes else None
        ratio = s.get("ratio_none_over_row")
        if ratio is None or t_ratio is None or config == "none":
            within = ""
        elif s.get("ratio_is_lower_bound"):         # a lower bound says "no" only when it is already past 2x
            within = "no (above)" if ratio / t_ratio > 2 else "not known (a lower bound)"
        else:
            within = "yes" if 0.5 <= ratio / t_ratio <= 2 else "no"
        runs.append(f"`{config}` {row.get('date', '?')} at `{(row.get('commit') or '?')[:12]}`"
                    + (f" (`{row['command']}`)" if row.get("command") else ""))
        cpu = s.get("cpu_seconds_total") or 0
        limit = row.get("time_limit")
        rows.append([f"`{config}`" + (f" (stopped at {limit:g} s)" if limit and s["solved"] < s["graphs"] else ""),
                     f"{s['solved']} of {s['graphs']}", f"{s['agree_with_peaty']} of {s['graphs']}",
                     fmt(round(s["nodes_mean"])) if s.get("nodes_mean") is not None else "", fmt(t_nodes),
                     ("≥ " if s.get("ratio_is_lower_bound") else "") + fmt(ratio, 1) if ratio else "",
                     fmt(t_ratio, 1), within, fmt(s.get("cpu_seconds_median"), 3),
                     fmt(s["nodes_total"] / cpu / 1e3, 0) if cpu else "", fmt(t_rate / 1e3 if t_rate else None, 0),
                     _run_note(row)])
    count = len(data.get("graphs") or [])
    ran = sorted({s["graphs"] for s in summary.values()})
    subset = (f"the first {', '.join(map(str, ran))} of " if ran and ran != [count] else "")
    out = [f"pdbtool's `solve --domain vertex-cover` with each of the talk's databases on {subset}the {count} "
           "seeded graphs of its class (150 vertices, 1,200 edges), one thread (`bench/bench_vcover.py --table`); "
           "every size compared with Peaty's optimum; the talk's figures from [literature](literature.md). "
           "Nodes are means per graph; the ratio is \"none\"'s nodes over the row's on the graphs both solved "
           "(\"≥\" where \"none\" was stopped by its limit on some of them, its count then a lower bound); "
           "\"within 2x\" compares it with the talk's ratio.\n\n",
           table(["database", "solved", "= Peaty", "nodes", "talk nodes", "none / row", "talk", "within 2x",
                  "median CPU s a graph", "k nodes / CPU s", "talk (k / s, 2003)", "load"], rows)]
    extra = {r.get("args") and " ".join(r["args"]) for r in (data.get("rows") or {}).values()} - {None, ""}
    if extra:
        out.append(f"\nArguments of every row: `{'`, `'.join(sorted(extra))}`.\n")
    out.append("\nRows measured: " + "; ".join(runs) + ".\n")
    out.append("\n" + provenance(data) + "\n")
    return "".join(out)


VC_SIDE_CLASSES = ["150-d16", "150-d30", "150-d60", "300-d16"]    # bench/bench_vcover.py's CLASSES


def _within_3(summary: dict, ratio: float) -> str:
    """Whether pdbtool's median is at most 3 times Peaty's: unknown when neither solved a graph of the class
    (both medians are then only the CPU at the limit)."""
    if not summary.get("pdbtool_over_peaty_is_lower_bound"):
        return "yes" if ratio <= 3 else "no"
    return "unknown: Peaty solved none either" if not (summary.get("peaty") or {}).get("solved") else "no"


@section("Vertex cover: side by side with Peaty and CP-SAT", ["vcover_side"], "python bench/bench_vcover.py --side")
def vcover_side_section(plots: Plots, data) -> str:
    st = data.get("settings") or {}
    rows = []
    for c in (data.get("classes") or {}).values():
        s = c.get("summary") or {}
        for solver in ("pdbtool", "peaty", "cp-sat"):
            x = s.get(solver)
            if not x:
                continue
            ratio = s.get("pdbtool_over_peaty") if solver == "pdbtool" else None
            rows.append([f"{c['vertices']} v, degree {c['degree']} ({len(c.get('graphs', []))} graphs)", solver,
                         f"{x.get('solved')} of {x.get('graphs')}", x.get("wrong", ""),
                         fmt(x.get("cpu_seconds_median"), 3),
                         (("≥ " if s.get("pdbtool_over_peaty_is_lower_bound") else "") + fmt(ratio, 2)) if ratio
                         else "", fmt(s.get("pdbtool_over_peaty_per_graph_median"), 2) if solver == "pdbtool" else "",
                         _within_3(s, ratio) if ratio else "", _run_note((c.get("runs") or {}).get(solver) or {})])
    workers = sorted({w for c in (data.get("classes") or {}).values()
                      for w in ((c.get("summary") or {}).get("cp-sat") or {}).get("workers") or []})
    missing = [c for c in VC_SIDE_CLASSES if c not in (data.get("classes") or {})]
    cpsat_workers = ", ".join(map(str, workers)) or "?"
    out = [f"The same graphs in the same run (`bench/bench_vcover.py --side`): pdbtool's "
           f"`{st.get('pdbtool_heuristic', 'default')}` on one thread, each class in one process after a small "
           f"warm-up graph (so that loading its compiled kernels is not counted; wall limit "
           f"{fmt(st.get('pdbtool_limit'), 0)} s a graph), then graph by graph Peaty on one thread (wall limit "
           f"{fmt(st.get('peaty_limit'), 0)} s) and CP-SAT on its default workers ({cpsat_workers} here;"
           f" `max_time_in_seconds` {fmt(st.get('cpsat_limit'), 0)}). CPU seconds per graph, median over the "
           "class; a graph a solver did not solve counts at its CPU when stopped (so its median is then a lower "
           "bound). \"wrong\": sizes that differ from Peaty's optimum. The target is pdbtool's median at most 3 "
           "times Peaty's on every class." + (f" Not measured yet: {', '.join(missing)}." if missing else "")
           + "\n\n",
           table(["class", "solver", "solved", "wrong", "median CPU s", "pdbtool / Peaty (medians)",
                  "per-graph ratio, median", "≤ 3", "load"], rows),
           "\n" + provenance(data) + "\n"]
    return "".join(out)


@section("Vertex cover: PACE 2019's public graphs", ["vcover_pace"],
         "python bench/bench_vcover.py --pace PATH")
def vcover_pace_section(plots: Plots, data) -> str:
    rows = []
    for solver, by_limit in (data.get("summary") or {}).items():
        for limit, s in by_limit.items():
            rows.append([solver, f"{limit} s", s.get("attempted"), s.get("solved"), len(s.get("wrong") or []),
                         ", ".join(s.get("unsolved") or [])[:400]])
    ilp = data.get("organisers_ilp_solved") or {}
    for limit, solved in ilp.items():
        rows.append(["the organisers' ILP (Gurobi, their machine; published seconds)", f"{limit} s",
                     len(data.get("graphs_run") or []), solved, "", ""])
    loads = data.get("load_range")
    names = data.get("graphs_run") or ["-"]
    load_text = (f"; the 1-minute load average before the runs was {loads[0]:.1f} to {loads[1]:.1f}" if loads
                 else "")
    clock = ("CPU seconds for each thread it is given (one for pdbtool and Peaty, CP-SAT's workers for CP-SAT; "
             "on an idle machine the same as wall seconds), so that the machine's load does not change the counts"
             if data.get("clock", "wall") == "cpu" else "wall-clock seconds, as in PACE")
    out = ["PACE 2019's exact vertex-cover graphs (the public 100 of `daajoe/pace2019_vc_instances`, "
           f"[literature](literature.md)), each solver with the same limit a graph, in {clock} "
           f"(`bench/bench_vcover.py --pace PATH`; every run in `bench/results/{data.get('runs_file', '')}`). "
           "A graph solved within a shorter limit counts for the longer one. \"wrong\": a size other than "
           f"the published optimum. {len(data.get('graphs_run') or [])} graphs run so far ({names[0]} to "
           f"{names[-1]}, by name){load_text}.\n\n",
           table(["solver", "limit", "graphs run", "solved", "wrong", "not solved"], rows)]
    for solver, by_limit in (data.get("summary") or {}).items():
        for limit, s in by_limit.items():
            if s.get("bounds"):
                spans = ", ".join(f"{g.removeprefix('vc-exact_')} ({low:,} to {size:,})"
                                  for g, (low, size) in sorted(s["bounds"].items()))
                out.append(f"\n{solver} at {limit} s, the unsolved graphs whose record holds the proven lower bound "
                           f"and the best cover found (the solver stopped itself): {spans}.\n")
    out.append("\n" + provenance(data) + "\n")
    return "".join(out)


