"""`make bench`: run the benchmarks in turn; each writes bench/results/<name>.json, to which this adds the
metadata of the run (machine, cores, date, git commit, command, load average before and after, CPU
seconds of the benchmark's processes).  The results are committed; `make bench-report` turns them into
docs/performance*.md.

    python bench/run.py [--quick] [--only build,solve,...] [-- ARGS FOR EACH SCRIPT]

``--quick`` is passed to every script (each decides what it leaves out); arguments after ``--`` too.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _results import RESULTS, load_average, metadata  # noqa: E402


# benchmarks run by name only: one that compares this tree with another checkout (``--before DIR``), and one
# that measures a design not built (A*+IDA*); both write to bench/results/history/
BY_NAME_ONLY = {"lift", "frontier_order", "zero_aware_lookup"}


def scripts(only: list[str] | None) -> list[Path]:
    found = sorted(HERE.glob("bench_*.py"))
    names = {p.stem.removeprefix("bench_"): p for p in found}
    if not only:
        return [p for name, p in names.items() if name not in BY_NAME_ONLY]
    unknown = [n for n in only if n not in names]
    if unknown:
        raise SystemExit(f"unknown benchmark(s) {', '.join(unknown)}: choose from {', '.join(sorted(names))}")
    return [names[n] for n in only]


def result_files(args: list[str]) -> dict[Path, float]:
    """The result files a run may write, with their modification times: every JSON file below
    bench/results (a script names its own, some several), and ``--out``'s."""
    paths = set(RESULTS.rglob("*.json"))
    if "--out" in args:
        paths.add((HERE.parent / args[args.index("--out") + 1]).resolve())  # the scripts run from the root
    return {p: p.stat().st_mtime_ns for p in paths if p.exists()}


def run_one(script: Path, args: list[str]) -> bool:
    before = result_files(args)
    command = ["python", f"bench/{script.name}", *args]
    print(f"== {' '.join(command)}", flush=True)
    load_before = load_average()
    started = time.time()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    code = subprocess.call([sys.executable, str(script), *args], cwd=HERE.parent)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if code:
        print(f"   {script.name} failed with status {code}", file=sys.stderr)
        return False
    written = sorted(p for p, mtime in result_files(args).items() if before.get(p) != mtime)
    if not written:
        print(f"   {script.name} wrote no result file", file=sys.stderr)
        return False
    meta = metadata(command, started, load_before,
                    cpu_seconds=round(after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime, 1))
    for out in written:
        data = json.loads(out.read_text())
        if isinstance(data, list):  # a file of runs that the script appends to: the metadata goes with the new one
            data[-1]["meta"] = meta
        else:
            data["meta"] = meta
        out.write_text(json.dumps(data, indent=1) + "\n")
        print(f"   written {out}", flush=True)
    return True


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    own = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="pass --quick to every benchmark")
    ap.add_argument("--only", default=None, help="comma-separated names, e.g. build,solve")
    args = ap.parse_args(own)
    RESULTS.mkdir(exist_ok=True)
    failed = [s.name for s in scripts(args.only.split(",") if args.only else None)
              if not run_one(s, (["--quick"] if args.quick else []) + extra)]
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
