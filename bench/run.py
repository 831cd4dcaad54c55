"""`make bench`: run every bench/bench_*.py in turn; each writes bench/results/<name>.json.

The combined machine-readable report is bench/results/report.json. Pass --quick to skip the
largest cases (each script decides what that means).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main():
    extra = sys.argv[1:]
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    combined = {"time": time.strftime("%Y-%m-%dT%H:%M:%S"), "benchmarks": {}}
    failed = []
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"== {script.name}", flush=True)
        code = subprocess.call([sys.executable, str(script), *extra])
        if code:
            failed.append(script.name)
            continue
        out = results / (script.stem.removeprefix("bench_") + ".json")
        if out.exists():
            combined["benchmarks"][script.stem] = json.loads(out.read_text())
    (results / "report.json").write_text(json.dumps(combined, indent=2))
    print(f"report: {results / 'report.json'}")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
