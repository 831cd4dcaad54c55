"""The multiple-sequence-alignment page of docs/performance-msa.md, from ``bench/results/msa_*.json``
(``bench/bench_msa.py``): pdbtool beside PA-Star.  ``bench/report.py`` calls :func:`render`."""

from __future__ import annotations

import re

TITLE = "Multiple sequence alignment beside PA-Star"
NAMES = ["msa_side", "msa_balibase", "msa_synthetic", "msa_longest"]
COMMAND = "python bench/bench_msa.py"
LONGEST = ["1bgl", "1taq", "1gpb"]


def _mib(x) -> str:
    return "" if x is None else f"{x / 2**20:,.0f}"


def _int(x) -> str:
    return "" if x is None else f"{int(x):,}"


def _cpu(r: dict) -> float | None:
    """A run's CPU seconds: the whole process's (pdbtool's includes starting Python and its kernels)."""
    return r.get("process_cpu_seconds", r.get("cpu_seconds"))


def _own(r: dict | None) -> str:
    """pdbtool's CPU seconds for the alignment itself (tables and search, as its record says)."""
    if not r or r["solver"] != "pdbtool" or r.get("cpu_seconds") is None:
        return ""
    return f"{r['cpu_seconds']:.2f}"


def _peak(r: dict) -> int | None:
    return r.get("max_rss_bytes", r.get("peak_bytes"))


def _label(r: dict) -> str:
    if r["solver"] == "pdbtool":
        return f"pdbtool {r.get('heuristic')}"
    return r["solver"] + (f" -t {r['threads']}" if r["solver"] == "msa_pastar" else "")


def _no_verdict(r: dict) -> bool:
    """Stopped by the wall-clock guard (a starved run on a loaded machine), not the CPU limit."""
    why = None if r["solved"] else r.get("stopped_by")
    cpu, limit = _cpu(r), r.get("limit_cpu_seconds")
    return why == "wall" or (why == "time" and cpu is not None and bool(limit)
                             and cpu < 0.95 * limit * r.get("threads", 1))


def _outcome(r: dict) -> str:
    if r["solved"]:
        return _int(r.get("cost"))
    why = r.get("stopped_by") or "error"
    if _no_verdict(r):
        return f"unsolved (wall-clock guard at {_cpu(r) or 0:.0f} CPU s)"
    return f"unsolved ({why})" if why != "error" else f"failed: {(r.get('error') or '')[:80]}"


def _load(r: dict) -> str:
    load = r.get("load_before")
    return f"{load[0]:.1f}" if load else ""


def _runs(data: dict, table, busy_note) -> str:
    """One line per run that wrote the file: date, commit, command, load, cores."""
    out = []
    for run in data.get("runs", []):
        m = run.get("machine", {})
        loads = [x[0] for x in (run.get("load_average_before"), run.get("load_average_after")) if x]
        commit = (run.get("commit") or "unknown")
        commit = commit[:12] + (" (with uncommitted changes)" if commit.endswith("+dirty") else "")
        settings = run.get("settings") or {}
        limit = settings.get("time_limit_cpu_seconds")
        memory = settings.get("memory_bytes")
        out.append(f"- {run.get('date', '?')}, commit `{commit}`: `{run.get('command', '?')}` on {m.get('cores', '?')} "
                   f"cores ({m.get('cpu') or 'CPU unknown'}, {(m.get('memory_bytes') or 0) / 2**30:.0f} GiB); "
                   f"limits {limit:g} CPU s and {(memory or 0) / 2**30:g} GiB a run; 1-minute load "
                   f"{' to '.join(f'{x:.1f}' for x in loads) or 'not recorded'}; "
                   f"{run.get('wall_seconds', '?')} s wall.{busy_note(loads, m.get('cores'))}")
    return "_Runs that wrote this file:_\n\n" + "\n".join(out) + "\n" if out else ""


def _disagreements(data: dict) -> str:
    found = data.get("cost_disagreements") or []
    if not found:
        return ""
    lines = []
    for d in found:
        costs = ", ".join(f"{k} {v:,}" for k, v in d["costs"].items())
        extra = ""
        if "pastar_cost_of_pdbtool_alignment" in d:
            extra = f"; PA-Star's own matrix scores pdbtool's alignment {d['pastar_cost_of_pdbtool_alignment']:,}"
        lines.append(f"- **{d['instance']}**: {costs}{extra}")
    return ("**Different optimal costs** (the benchmark exits with status 3):\n\n" + "\n".join(lines) + "\n\n")


def _agreement(records: list[dict]) -> str:
    by: dict[str, set] = {}
    solvers: dict[str, set] = {}
    for r in records:
        if r["solved"] and r.get("cost") is not None:
            by.setdefault(r["instance"], set()).add(r["cost"])
            solvers.setdefault(r["instance"], set()).add(r["solver"])
    both = [n for n, s in solvers.items() if "pdbtool" in s and s - {"pdbtool"}]
    same = [n for n in both if len(by[n]) == 1]
    return (f"Optimal costs identical on {len(same)} of the {len(both)} instances that pdbtool and PA-Star "
            f"both solved.\n\n")


def side_section(data: dict, table, busy_note) -> str:
    records = data.get("records", [])
    rows = []
    for r in records:
        nodes = r.get("expanded", r.get("closed"))
        rows.append([r["instance"], f"{r['k']} x {max(r['lengths'])}", _label(r), r["threads"], _outcome(r),
                     _int(nodes), f"{_cpu(r):.2f}" if _cpu(r) is not None else "", _own(r),
                     f"{r.get('wall_seconds', 0):.2f}",
                     _mib(_peak(r)), _load(r)])
    out = ["### Side by side: the same instances, one thread and then all cores\n\n",
           "pdbtool with `--cost pastar` (PA-Star's matrix and gap costs) and its three-way heuristic, beside "
           "PA-Star's serial `msa_astar` and parallel `msa_pastar`, each run in a process of its own "
           "(`bench/bench_msa.py --part side`). Expanded nodes: pdbtool's count; for `msa_pastar`, the sum of "
           "its closed lists (`msa_astar` prints none). CPU seconds and peak resident memory are the whole "
           "process's, measured by GNU time: pdbtool's include starting Python and loading its compiled "
           "kernels (about 1.5 CPU s and 150 MiB on their own); \"align CPU s\" is pdbtool's own figure for "
           "the alignment alone (its tables and its search).\n\n",
           _agreement(records), _disagreements(data),
           table(["instance", "k x longest", "solver", "threads", "cost", "expanded", "CPU s", "align CPU s", "wall s",
                  "peak MiB", "load"], rows), "\n", _runs(data, table, busy_note)]
    return "".join(out)


def _pick(records, name, solver, heuristic=None, limit=None):
    for r in records:
        if r["instance"] == name and r["solver"] == solver and (heuristic is None or r.get("heuristic") == heuristic) \
                and (limit is None or r["limit_cpu_seconds"] == limit):
            return r
    return None


def _ratio(a: dict | None, b: dict | None, key: str = "expanded") -> str:
    if not (a and b and a["solved"] and b["solved"] and a.get(key) and b.get(key)):
        return ""
    return f"{a[key] / b[key]:.1f}"


def _pairwise_section(records, instances, first, table) -> str:
    """Expanded nodes and CPU seconds of the pairwise heuristics against the three-way one, on the instances
    where they were run (5 and 6 sequences): PA-Star's own pairwise heuristic (``pairwise``) and the same
    tables with the two-gap column bound (``pairwise-columns``)."""
    rows = []
    sums = {"pairwise": [0, 0, 0.0, 0.0], "pairwise-columns": [0, 0, 0.0, 0.0]}
    for name in instances:
        tw = _pick(records, name, "pdbtool", "threeway", first)
        pw = _pick(records, name, "pdbtool", "pairwise", first)
        pc = _pick(records, name, "pdbtool", "pairwise-columns", first)
        if not tw or not (pw or pc):
            continue
        for key, other in (("pairwise", pw), ("pairwise-columns", pc)):
            if other and other["solved"] and tw["solved"]:
                sums[key][0] += other["expanded"]
                sums[key][1] += tw["expanded"]
                sums[key][2] += _cpu(other) or 0
                sums[key][3] += _cpu(tw) or 0

        def shown(r):
            return (_int(r.get("expanded")) if r["solved"] else _outcome(r)) if r else ""

        def cpu(r):
            return f"{_cpu(r):.1f}" if r and _cpu(r) is not None else ""

        rows.append([name, f"{tw['k']} x {max(tw['lengths'])}", shown(pw), shown(pc), shown(tw),
                     _ratio(pw, tw), _ratio(pc, tw), cpu(pw), cpu(pc), cpu(tw)])
    if not rows:
        return ""
    lines = []
    for key, label in (("pairwise", "PA-Star's pairwise heuristic"),
                       ("pairwise-columns", "the pairwise tables with the two-gap column bound")):
        e_pw, e_tw, c_pw, c_tw = sums[key]
        if e_tw:
            lines.append(f"- against {label}: {e_pw:,} against {e_tw:,} expanded nodes, {e_pw / e_tw:.1f} times "
                         f"fewer in all; process CPU {c_pw:,.1f} s against {c_tw:,.1f} s.\n")
    return ("\nPairwise against three-way tables on the instances of 5 and 6 sequences, in the same run (an "
            "unsolved pairwise run bounds its ratio from below; a search expands at least one node a column of "
            "the alignment, so where a pairwise run expands fewer than 5 times the longest sequence's length, "
            "no heuristic is 5 times below it). Expanded nodes on those both solved:\n\n"
            + "".join(lines) + "\n"
            + table(["instance", "k x longest", "pairwise (PA-Star's)", "pairwise + columns", "three-way",
                     "ratio", "ratio to + columns", "CPU s pairwise", "CPU s + columns", "CPU s three-way"], rows))


def balibase_section(data: dict, table, busy_note) -> str:
    records = data.get("records", [])
    settings = data.get("settings") or {}
    first = settings.get("time_limit_cpu_seconds")
    limits = sorted({r["limit_cpu_seconds"] for r in records})
    instances = []
    for r in records:
        if r["instance"] not in instances:
            instances.append(r["instance"])
    out = ["### BAliBASE reference 1\n\n",
           "Serial runs, shortest lattice first (`bench/bench_msa.py --part balibase`), each within the CPU "
           "limit below and an address space of "
           f"{(settings.get('memory_bytes') or 0) / 2**30:g} GiB (the machine has "
           f"{(settings.get('machine_memory_bytes') or 0) / 2**30:.0f} GiB). "
           f"{len(instances)} of the 82 instances were run.\n\n"]
    summary = []
    for limit in limits:
        at = [r for r in records if r["limit_cpu_seconds"] == limit]
        # runs with a verdict only (not those the wall-clock guard stopped)
        mine = {r["instance"]: r for r in at if r["solver"] == "pdbtool" and r.get("heuristic") == "threeway"
                and not _no_verdict(r)}
        peer = {r["instance"]: r for r in at if r["solver"] == "msa_astar" and not _no_verdict(r)}
        both = [n for n in mine if n in peer and mine[n]["solved"] and peer[n]["solved"]]
        cpu_mine = sum(_cpu(mine[n]) or 0 for n in both)
        cpu_peer = sum(_cpu(peer[n]) or 0 for n in both)
        own = sum(mine[n].get("cpu_seconds") or 0 for n in both)
        summary.append([f"{limit:g}", f"{sum(r['solved'] for r in mine.values())} of {len(mine)}",
                        f"{sum(r['solved'] for r in peer.values())} of {len(peer)}", len(both),
                        f"{cpu_mine:,.1f}", f"{own:,.1f}", f"{cpu_peer:,.1f}",
                        f"{cpu_peer / cpu_mine:.2f}" if cpu_mine else "", f"{cpu_peer / own:.2f}" if own else ""])
    out.append(table(["CPU s limit", "pdbtool (three-way) solved", "msa_astar solved", "both solved",
                      "pdbtool CPU s on those", "pdbtool align CPU s", "msa_astar CPU s on those",
                      "msa_astar / pdbtool", "msa_astar / pdbtool align"], summary))
    out.append(_pairwise_section(records, instances, first, table))
    rows = []
    for name in instances:
        for limit in limits:
            tw = _pick(records, name, "pdbtool", "threeway", limit)
            pa = _pick(records, name, "msa_astar", None, limit)
            if not tw and not pa:
                continue
            ref = tw or pa
            rows.append([name, ref["group"], f"{ref['k']} x {max(ref['lengths'])}", f"{limit:g}",
                         _outcome(tw) if tw else "", _int(tw.get("expanded")) if tw else "",
                         f"{_cpu(tw):.1f}" if tw else "", _own(tw), _mib(_peak(tw)) if tw else "",
                         _outcome(pa) if pa else "", f"{_cpu(pa):.1f}" if pa else "", _mib(_peak(pa)) if pa else "",
                         _load(ref)])
    out.append("\n" + _agreement(records))
    out.append("Every run: pdbtool's three-way heuristic beside serial PA-Star (CPU seconds and peak resident "
               "memory of each process):\n\n")
    out.append(_disagreements(data))
    out.append(table(["instance", "group", "k x longest", "limit CPU s", "pdbtool cost", "expanded", "CPU s",
                      "align CPU s", "peak MiB", "msa_astar cost", "CPU s", "peak MiB", "load"], rows))
    longest = []
    for name in LONGEST:
        got = [r for r in records if r["instance"] == name]
        if not got:
            longest.append(f"- {name}: not reached by this pass (see the longest instances below).")
            continue
        parts = [f"{_label(r)} at {r['limit_cpu_seconds']:g} CPU s: {_outcome(r)}"
                 + (f" (bound {r['lower_bound']:,} of {r.get('upper_bound', 0):,})" if r.get("lower_bound") and
                    not r["solved"] else "") for r in got]
        longest.append(f"- {name}: " + "; ".join(parts) + ".")
    out.append("\nThe longest instances:\n\n" + "\n".join(longest) + "\n\n")
    out.append(_runs(data, table, busy_note))
    return "".join(out)


def synthetic_section(data: dict, table, busy_note) -> str:
    records = data.get("records", [])
    source = (data.get("settings") or {}).get("data") or {}
    rows = []
    for r in records:
        rows.append([r["group"], "/".join(map(str, r["lengths"])), _label(r), _outcome(r),
                     _int(r.get("expanded", r.get("closed"))), f"{_cpu(r):.1f}" if _cpu(r) is not None else "",
                     _own(r), _mib(_peak(r)), _load(r)])
    if source.get("command"):
        rates = re.search(r"--substitution (\S+) --indel (\S+)", source["command"])
        how = (f"`pdbtool random --domain msa -k K --length N --seed {source.get('seed', '?')}`"
               + (f" (its default rates: substitution {rates.group(1)}, insertion or deletion {rates.group(2)} a "
                  "residue)" if rates else ""))
    else:
        how = (f"`{source.get('generator', '?')}` with seed {source.get('seed', '?')} (a random ancestor, each member "
               f"with substitutions at rate {source.get('substitution', '?')} and insertions or deletions of 1 to "
               f"{source.get('max_indel', '?')} residues at rate {source.get('indel', '?')} a residue)")
    out = ["### Synthetic families\n\n",
           f"Families written by {how}; they are not the issue's families, whose PA-Star figures "
           "[literature.md](literature.md) quotes.\n\n", _disagreements(data),
           table(["family", "lengths", "solver", "cost", "expanded", "CPU s", "align CPU s", "peak MiB", "load"],
                 rows), "\n",
           _runs(data, table, busy_note)]
    return "".join(out)


def longest_section(data: dict, table, busy_note) -> str:
    """``bench/bench_msa_longest.py``: each long instance's tables, outcome and the climb of its bound."""
    rows = []
    for r in data.get("records", []):
        trail = r.get("progress") or []
        climb = ", ".join(f"{p['f']:,} at {p['cpu_seconds']:g} s" for p in trail[::max(1, len(trail) // 4)])
        outcome = _int(r.get("cost")) if r.get("solved") else \
            f"unsolved ({r.get('stopped')}), bound {_int(r.get('lower_bound'))}"
        rows.append([r["instance"], f"{r['k']} x {max(r['lengths'])}", f"{r['table_cpu_seconds']:.1f}",
                     f"{r['table_bytes'] / 2**30:.2f}", _int(r.get("h_start")), _int(r.get("upper_bound")), outcome,
                     _int(r.get("expanded")), _int(r.get("stored")), f"{r['cpu_seconds']:.1f}",
                     f"{r['max_rss_bytes'] / 2**30:.2f}", climb,
                     " to ".join(f"{x[0]:.1f}" for x in (r.get("load_before"), r.get("load_after")) if x)])
    out = ["### The longest instances\n\n",
           "One thread, PA-Star's cost model, the default three-way heuristic, tables and search stopped "
           "together at the CPU limit (`bench/bench_msa_longest.py`, in-process: CPU seconds and peak resident "
           "memory are the whole process's). The bound is the least f on the open list when stopped; the "
           "climb samples it against the CPU seconds spent.\n\n",
           table(["instance", "k x longest", "tables CPU s", "tables GiB", "h at start", "upper bound", "outcome",
                  "expanded", "stored", "CPU s", "peak RSS GiB", "bound climbing", "load"], rows), "\n",
           _runs(data, table, busy_note)]
    return "".join(out)


def render(side, balibase, synthetic, table, busy_note, not_measured, longest=None) -> str:
    out = ["PA-Star (`danielsundfeld/astar_msa`, built from its source tarball by `bench/peers/pastar.py`; its "
           "cost model and the issue's measurements of it are in [literature.md](literature.md)) and pdbtool "
           "on the same FASTA files with the same cost model, each solver in a process of its own under the "
           "same limits: CPU seconds (`RLIMIT_CPU`, since this machine is shared and its wall seconds are "
           "inflated) and address space (`RLIMIT_AS`).\n\n"]
    for data, name, body in ((side, "msa_side", side_section), (balibase, "msa_balibase", balibase_section),
                             (synthetic, "msa_synthetic", synthetic_section),
                             (longest, "msa_longest", longest_section)):
        out.append(body(data, table, busy_note) if data else not_measured(name, f"{COMMAND} --part "
                                                                                f"{name.removeprefix('msa_')}"))
        out.append("\n")
    return "".join(out)
