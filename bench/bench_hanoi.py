"""The four-peg Towers of Hanoi beside Felner's talk: h(start), mean h, nodes and time of each row of its
table, plus the targets (16 disks with dynamic 14-2, 18 disks to the middle).

    python bench/bench_hanoi.py [--quick] [--rows 15-static:14-1,16-dynamic:14-2,...] [--out FILE]
    python bench/bench_hanoi.py --encodings [--rows ...] [--repeat 2]      # byte against nibble and mod3

Rows are measured one at a time and merged into the result file (an existing file keeps the rows not
run), so that the long rows can be run apart.  The tables come from the user's cache (built if absent).
--quick runs the small rows only (15 disks with the 14-1 and 13-2 tables).

--encodings measures the compact table encodings against the byte tables (``bench/results/hanoi_encodings.json``):
each row with each encoding its heuristic can read, each run in a process of its own (its own max RSS), the
encodings alternated (forward, then backward) over ``--repeat`` rounds; the search's CPU seconds exclude
loading the tables and Numba's kernels (a small warm-up solve first).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _results import RESULTS, load_average, write  # noqa: E402

# Felner's talk "Additive pattern databases" (the slides this project follows; the same rows as Felner,
# Korf & Hanan, JAIR 22, 2004), 4-peg Towers of Hanoi, frontier A*: the table in docs/literature.md
# (section "Felner's talk"), with its sources.
TALK = [
    # disks, heuristic, h(start), mean h, nodes, seconds
    (15, "infinite", 29, 26.37, 371_556_049, 1198),
    (15, "static:12-3", 86, 62.63, 9_212_163, 32),
    (15, "static:13-2", 100, 74.23, 2_205_206, 7),
    (15, "static:14-1", 114, 87.79, 158_639, 2),
    (15, "dynamic:14-1", 114, 95.52, 122_128, 2),
    (16, "static:13-3", 102, 75.78, 65_472_582, 221),
    (16, "static:14-2", 114, 89.10, 17_737_145, 65),
    (16, "dynamic:14-2", 114, 95.52, 6_242_949, 86),
]
QUICK = ["15-static:14-1", "15-static:13-2"]
EXTRA = [  # beyond the talk: the middle-state search and the 18-disk target
    (15, "static:14", True), (16, "static:14-1", True), (16, "dynamic:14-1", True), (17, "static:14-2", True),
    (17, "dynamic:14-2", True), (18, "static:14-3", True), (18, "dynamic:14-3", True),
    (18, "dynamic:15-2", True), (13, "infinite", False), (14, "infinite", False), (19, "static:15-3", True),
    (20, "static:15-4", True),
]


ENCODED = [  # the rows of the encodings' comparison: 14- and 15-disk tables, static and dynamic
    (15, "static:14-1", False), (15, "dynamic:14-1", False), (17, "static:14-2", True),
    (17, "dynamic:14-2", True), (18, "dynamic:15-2", True), (19, "static:15-3", True),
]


def row_key(disks: int, spec: str, middle: bool) -> str:
    return f"{disks}-{spec}" + ("-middle" if middle else "")


def measure(disks: int, spec: str, middle: bool, samples: int) -> dict:
    from pdbtool.hanoi4.heuristics import compile_plan, mean_infinite_peg, mean_sampled, mean_static
    from pdbtool.hanoi4.instance import standard
    from pdbtool.hanoi4.search import solve

    load_before = load_average()
    t0, c0 = time.time(), time.process_time()
    sol = solve(standard(disks), spec, middle=middle, keep_path=False)
    searched = disks - 1 if middle else disks
    plan = compile_plan(spec, searched, "middle" if middle else "peg3")
    if spec == "infinite" and not middle:
        mean_all, mean_se, how = mean_infinite_peg(disks), 0.0, "exact"
    elif mean_static(plan) is not None:
        mean_all, mean_se, how = mean_static(plan), 0.0, "exact"
    else:
        mean_all, mean_se = mean_sampled(plan, samples)
        how = f"{samples:,} random placements"
    rec = sol.as_dict()
    rec.update({"mean_h_all_states": round(mean_all, 4), "mean_h_all_states_se": round(mean_se, 4),
                "mean_h_all_states_how": how, "row_cpu_seconds": round(time.process_time() - c0, 2),
                "row_wall_seconds": round(time.time() - t0, 2), "load_before": load_before,
                "load_after": load_average(),
                "max_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                "threads": int(os.environ.get("NUMBA_NUM_THREADS", os.cpu_count() or 1))})
    for d, s, h, m, nodes, secs in TALK:
        if d == disks and s == spec and not middle:
            rec["talk"] = {"h_start": h, "mean_h": m, "nodes": nodes, "seconds": secs}
    return rec


def encodings_for(spec: str) -> list[str]:
    return ["byte", "nibble"] + ([] if "dynamic" in spec else ["mod3"])


def measure_encoded(disks: int, spec: str, middle: bool, encoding: str) -> dict:
    """One row with every table in ``encoding``, in this process."""
    from pdbtool.hanoi4.heuristics import table_sizes
    from pdbtool.hanoi4.instance import standard
    from pdbtool.hanoi4.search import solve
    from pdbtool.hanoi4.tables import get_table

    goal = "middle" if middle else "peg3"
    loaded: dict = {}

    def table_for(k, g):
        if (k, g) not in loaded:
            loaded[(k, g)] = get_table(k, g, encoding=encoding)
        return loaded[(k, g)]

    searched = disks - 1 if middle else disks
    sizes = table_sizes(spec, searched)
    for k in sizes:
        table_for(k, goal)
    kind = spec.split(":")[0]
    solve(standard(7), f"{kind}:4-{3 - middle}", middle=middle, keep_path=False, table_for=table_for)  # warm-up
    load_before = load_average()
    sol = solve(standard(disks), spec, middle=middle, keep_path=False, table_for=table_for)
    rec = {key: value for key, value in sol.as_dict().items() if key != "bounds"}
    big = loaded[(max(sizes), goal)]
    rec.update({"encoding": encoding, "tables_bytes": sum(loaded[(k, goal)].values.nbytes for k in sizes),
                "largest_table": big.describe(), "largest_table_bytes": int(big.values.nbytes),
                "largest_table_bits_per_entry": round(8 * big.values.nbytes / big.entries, 4),
                "largest_table_bits_per_placement": round(8 * big.values.nbytes / 4 ** big.disks, 4),
                "load_before": load_before, "load_after": load_average(),
                "max_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024})
    return rec


def run_encodings(keys: list[str], repeat: int, out: Path) -> None:
    import subprocess

    rows = {row_key(d, s, m): (d, s, m) for d, s, m in ENCODED}
    data = json.loads(out.read_text()) if out.exists() else {"rows": {}}
    started = time.time()
    for key in keys:
        disks, spec, middle = rows[key]
        runs = []
        for r in range(repeat):
            order = encodings_for(spec)
            for encoding in (order if r % 2 == 0 else order[::-1]):
                print(f"-- {key} {encoding} (round {r + 1})", flush=True)
                done = subprocess.run([sys.executable, __file__, "--one-encoded", key, encoding], check=True,
                                      capture_output=True, text=True)
                runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
                print(json.dumps(runs[-1]), flush=True)
        data["rows"][key] = {"runs": runs, "summary": _summary(runs)}
        write(out, {"rows": data["rows"]}, started=started, load_before=None)


def _summary(runs: list[dict]) -> dict:
    """Per encoding: the least search CPU seconds over the rounds, its ratio to byte's, and the node
    counts (the same for every encoding, or the summary says so)."""
    out: dict = {}
    for r in runs:
        e = out.setdefault(r["encoding"], {"cpu_seconds": r["cpu_seconds"], "tables_bytes": r["tables_bytes"],
                                           "largest_table_bits_per_entry": r["largest_table_bits_per_entry"],
                                           "max_rss_bytes": r["max_rss_bytes"], "expanded": r["expanded"],
                                           "generated": r["generated"], "length": r["length"]})
        e["cpu_seconds"] = min(e["cpu_seconds"], r["cpu_seconds"])
        e["max_rss_bytes"] = max(e["max_rss_bytes"], r["max_rss_bytes"])
    base = out.get("byte")
    for e in out.values():
        e["cpu_vs_byte"] = round(e["cpu_seconds"] / base["cpu_seconds"], 3) if base and base["cpu_seconds"] else None
        e["same_nodes_as_byte"] = bool(base) and (e["expanded"], e["generated"], e["length"]) == \
            (base["expanded"], base["generated"], base["length"])
    return out


def markdown_encodings(rows: dict) -> str:
    out = ["| disks | heuristic | encoding | largest table: bits an entry | tables MiB | max RSS MiB | expanded "
           "| search CPU s (least) | CPU vs byte | same nodes as byte | load |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for row in rows.values():
        loads = [r["load_before"][0] for r in row["runs"] if r.get("load_before")]
        first = row["runs"][0]
        where = f"{first['disks']} ({'middle' if first['middle'] else 'goal'})"
        for encoding, e in row["summary"].items():
            out.append(f"| {where} | {first['heuristic']} | {encoding} | {e['largest_table_bits_per_entry']:g} | "
                       f"{e['tables_bytes'] / 2**20:.1f} | {e['max_rss_bytes'] / 2**20:.0f} | {e['expanded']:,} | "
                       f"{e['cpu_seconds']:.2f} | {e['cpu_vs_byte']:.2f} | "
                       f"{'yes' if e['same_nodes_as_byte'] else 'NO'} | "
                       f"{min(loads) if loads else '-'} to {max(loads) if loads else '-'} |")
    return "\n".join(out)


def markdown(rows: dict) -> str:
    """The talk's rows beside ours, then the middle-state rows."""
    out = ["| disks | heuristic | h(start) talk / ours | mean h talk / ours (all states) | mean h (expanded) "
           "| nodes talk | ours f < C* | ours f <= C* | ratio talk / f<C* | s talk (2003) | ours CPU s | ours s |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for d, s, h, m, nodes, secs in TALK:
        r = rows.get(row_key(d, s, False))
        if r is None:
            out.append(f"| {d} | {s} | {h} / - | {m} / - | - | {nodes:,} | - | - | - | {secs} | - | - |")
            continue
        out.append(f"| {d} | {s} | {h} / {r['h_start']} | {m} / {r['mean_h_all_states']:.2f} | "
                   f"{r['mean_h_expanded']:.2f} | {nodes:,} | {r['expanded_f_below_bound']:,} | {r['expanded']:,} | "
                   f"{nodes / max(1, r['expanded_f_below_bound']):.2f} | {secs} | {r['cpu_seconds']:.1f} | "
                   f"{r['seconds']:.1f} |")
    out += ["", "| disks | heuristic (smaller disks) | moves | h(start) | expanded f < d / f <= d | generated "
                "| peak layer | search arrays MiB | max RSS MiB | CPU s | s | load before |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    talk = {row_key(d, s, False) for d, s, *_ in TALK}
    for key, r in rows.items():
        if key in talk:
            continue
        where = "middle" if r["middle"] else "goal"
        out.append(f"| {r['disks']} ({where}) | {r['heuristic']} | {r['length']} | {r['h_start']} | "
                   f"{r['expanded_f_below_bound']:,} / {r['expanded']:,} | {r['generated']:,} | "
                   f"{r['peak_layer_states']:,} | {r['peak_search_bytes'] / 2**20:.1f} | "
                   f"{r['max_rss_bytes'] / 2**20:.0f} | {r['cpu_seconds']:.1f} | {r['seconds']:.1f} | "
                   f"{r['load_before'][0] if r.get('load_before') else '-'} |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rows", default=None, help="comma-separated keys, e.g. 15-static:14-1,17-dynamic:14-2-middle")
    ap.add_argument("--samples", type=int, default=1_000_000, help="random placements for a sampled mean h")
    ap.add_argument("--out", default=str(RESULTS / "hanoi.json"))
    ap.add_argument("--markdown", action="store_true", help="print the results file as tables and stop")
    ap.add_argument("--encodings", action="store_true", help="compare the table encodings (rows: ENCODED)")
    ap.add_argument("--repeat", type=int, default=2, help="with --encodings: rounds of each encoding")
    ap.add_argument("--one-encoded", nargs=2, metavar=("ROW", "ENCODING"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one_encoded:
        key, encoding = args.one_encoded
        print(json.dumps(measure_encoded(*{row_key(d, s, m): (d, s, m) for d, s, m in ENCODED}[key], encoding)))
        return
    if args.encodings:
        out = Path(args.out if args.out != str(RESULTS / "hanoi.json") else RESULTS / "hanoi_encodings.json")
        if args.markdown:
            print(markdown_encodings(json.loads(out.read_text())["rows"]))
            return
        keys = args.rows.split(",") if args.rows else [row_key(d, s, m) for d, s, m in ENCODED]
        unknown = [k for k in keys if k not in {row_key(d, s, m) for d, s, m in ENCODED}]
        if unknown:
            raise SystemExit(f"unknown rows {unknown}: choose from {', '.join(row_key(*r) for r in ENCODED)}")
        run_encodings(keys, args.repeat, out)
        return
    if args.markdown:
        print(markdown(json.loads(Path(args.out).read_text())["rows"]))
        return
    rows = {row_key(d, s, False): (d, s, False) for d, s, *_ in TALK}
    rows.update({row_key(d, s, m): (d, s, m) for d, s, m in EXTRA})
    wanted = QUICK if args.quick else (args.rows.split(",") if args.rows else list(rows))
    unknown = [w for w in wanted if w not in rows]
    if unknown:
        raise SystemExit(f"unknown rows {unknown}: choose from {', '.join(rows)}")
    out = Path(args.out)
    data = json.loads(out.read_text()) if out.exists() else {"rows": {}}
    started = time.time()
    for key in wanted:
        print(f"-- {key}", flush=True)
        data["rows"][key] = measure(*rows[key], args.samples)
        print(json.dumps(data["rows"][key]), flush=True)
        write(out, {"rows": data["rows"]}, started=started, load_before=None)
    data.pop("meta", None)


if __name__ == "__main__":
    main()
