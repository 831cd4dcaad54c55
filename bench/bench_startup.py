"""Start-up of the command line: `pdbtool --help` and `pdbtool COMMAND --help`, each a fresh process.

Writes bench/results/startup.json: per command line, the median wall and CPU seconds (user + system of the
child) over ``--runs`` runs (default 9; ``--quick``: 5), whether Numba was imported, and the 0.25 s
target.  The console script next to this Python is timed (``python -m pdbtool`` if there is none).
The children run with Python's default of writing bytecode (``PYTHONDONTWRITEBYTECODE`` removed), and each
command line runs once untimed first, so the figures are those of an installed tool, not of compiling its
sources on every start.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET_SECONDS = 0.25
COMMANDS = [[], ["build"], ["convert"], ["inspect"], ["solve"], ["verify"]]


def launcher() -> list[str]:
    script = Path(sys.executable).with_name("pdbtool")
    return [str(script)] if script.exists() else [sys.executable, "-m", "pdbtool"]


CHILD_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def timed_run(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=CHILD_ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def imports_numba(args: list[str]) -> bool:
    code = (f"import sys\nfrom pdbtool.cli.main import main\ntry:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
            "print('NUMBA' if 'numba' in sys.modules else 'LIGHT', file=sys.stderr)")
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=CHILD_ENV).stderr
    return err.strip().endswith("NUMBA")


def machine() -> dict:
    model = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    except OSError:
        pass
    return {"machine": platform.node(), "cpu": model, "cores": os.cpu_count(), "python": platform.python_version(),
            "load_average": [round(x, 2) for x in os.getloadavg()]}


def commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def main() -> None:
    quick = "--quick" in sys.argv
    runs = 5 if quick else 9
    if "--runs" in sys.argv:
        runs = int(sys.argv[sys.argv.index("--runs") + 1])
    base = launcher()
    rows = []
    for args in COMMANDS:
        argv = base + args + ["--help"]
        timed_run(argv)  # untimed: fills the page cache and writes the bytecode of what this command imports
        samples = []
        for _ in range(runs):
            samples.append(timed_run(argv))
        wall = statistics.median(s[0] for s in samples)
        cpu = statistics.median(s[1] for s in samples)
        rows.append({"command": " ".join(["pdbtool"] + args + ["--help"]), "runs": runs,
                     "median_wall_seconds": round(wall, 4), "median_cpu_seconds": round(cpu, 4),
                     "max_wall_seconds": round(max(s[0] for s in samples), 4),
                     "imports_numba": imports_numba(args + ["--help"]),
                     "within_target": wall <= TARGET_SECONDS})
        print(f"{rows[-1]['command']:<26} wall {wall:.3f} s (median of {runs}), CPU {cpu:.3f} s, "
              f"numba {'imported' if rows[-1]['imports_numba'] else 'not imported'}")
    out = {"benchmark": "startup", "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "commit": commit(),
           "command": " ".join([Path(sys.executable).name, "bench/bench_startup.py", *sys.argv[1:]]),
           "launcher": " ".join(base), "target_seconds": TARGET_SECONDS, **machine(), "results": rows}
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    (results / "startup.json").write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {results / 'startup.json'}")


if __name__ == "__main__":
    main()
