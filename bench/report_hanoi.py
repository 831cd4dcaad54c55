"""docs/performance-hanoi.md: the four-peg Towers of Hanoi."""

from __future__ import annotations


from _report import (ROOT, Plots, fmt, provenance, section, table)


@section("The Towers of Hanoi: compact tables", ["hanoi_encodings"], "python bench/bench_hanoi.py --encodings")
def hanoi_encodings_section(plots: Plots, data) -> str:
    out = ["The same searches with each table encoding (`bench/bench_hanoi.py --encodings`; [hanoi.md](hanoi.md)): "
           "the node counts are the byte table's, the tables smaller:\n\n"]
    rows = []
    for name, row in (data.get("rows") or {}).items():
        for r in row.get("runs", []):
            rows.append([name, r.get("encoding"), r.get("length"), fmt(r.get("generated")),
                         fmt(r.get("largest_table_bits_per_entry"), 2),
                         fmt((r.get("largest_table_bytes") or 0) / 2**20, 1),
                         fmt((r.get("max_rss_bytes") or 0) / 2**20, 0), fmt(r.get("cpu_seconds"), 2),
                         ", ".join(f"{x:.1f}" for x in (r.get("load_before") or [])[:1])])
    out.append(table(["row", "encoding", "length", "nodes generated", "bits per entry", "largest table MiB",
                       "peak MiB", "CPU s", "load"], rows))
    out.append("\n" + provenance(data) + "\n")
    return "".join(out)


@section("The four-peg Towers of Hanoi beside Felner's talk", ["hanoi"], "python bench/run.py --only hanoi")
def hanoi_section(plots: Plots, data) -> str:
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_hanoi", ROOT / "bench" / "bench_hanoi.py")
    bench_hanoi = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench_hanoi)
    out = ["The talk's rows (docs/literature.md) beside pdbtool's breadth-first heuristic search "
           "(`bench/bench_hanoi.py`; [hanoi.md](hanoi.md) explains the columns and the one row over 2x), then "
           "the middle-state searches up to 20 disks. Each row's load is in the results file; most rows ran on "
           "a shared, loaded machine, so their seconds are CPU seconds first.\n\n",
           bench_hanoi.markdown(data["rows"]), "\n\n", provenance(data), "\n"]
    return "".join(out)


