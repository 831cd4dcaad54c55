"""What the load-time checks cost: loading a cached table with and without the value checks.

Loads each table of a partition from the cache, alternating "envelope only" (magic, header, sizes,
checksum, structure: ``PatternTable.from_file(fileformat.load(path))``) and "every check" (the same plus
:func:`pdbtool.tables.integrity.check_table`: goal, max value, sampled consistency), and reports the
median wall and CPU seconds of each.  The pages are in the page cache after the first round, as in a
search that loads tables it has used before.

    python bench/bench_load.py --partition 24-6-6-6-6 --cache-dir /work/cache/h-trust --rounds 5
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _results  # noqa: E402
from pdbtool.tables import fileformat, integrity  # noqa: E402
from pdbtool.tables.cache import TableCache  # noqa: E402
from pdbtool.tables.operations import partition_plan  # noqa: E402
from pdbtool.tables.resolve import resolve_partition  # noqa: E402
from pdbtool.tables.table import PatternTable  # noqa: E402


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partition", default="24-6-6-6-6")
    parser.add_argument("--blank", default="minimized")
    parser.add_argument("--cache-dir", default=None)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    cache = TableCache(args.cache_dir)
    plan = partition_plan(resolve_partition(args.partition, None), args.blank)
    paths = [cache.path_for(p, args.blank) for p in plan.stored]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        sys.exit(f"not in the cache: {', '.join(missing)}")
    integrity.check_table(PatternTable.from_file(fileformat.load(paths[0])))   # compile the kernels first
    rows = []
    for path in paths:
        times = {"envelope": [], "every check": []}
        for _ in range(args.rounds):
            for what in ("envelope", "every check"):
                integrity._checked.clear()
                w0, c0 = time.perf_counter(), cpu()
                table = PatternTable.from_file(fileformat.load(path))
                if what == "every check":
                    integrity.check_table(table)
                times[what].append((time.perf_counter() - w0, cpu() - c0))
                del table
        row = {"file": path.name, "bytes": path.stat().st_size}
        for what, got in times.items():
            row[what] = {"wall_s": round(statistics.median(w for w, _ in got), 4),
                         "cpu_s": round(statistics.median(c for _, c in got), 4)}
        row["checks_over_envelope_cpu"] = round(row["every check"]["cpu_s"] / max(row["envelope"]["cpu_s"], 1e-9), 3)
        rows.append(row)
        print(row, flush=True)
    out = args.out or _results.RESULTS / "load_checks.json"
    _results.write(out, {"partition": args.partition, "blank": args.blank, "rounds": args.rounds, "tables": rows})


if __name__ == "__main__":
    main()
