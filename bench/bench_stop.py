"""How soon each long-running command ends after SIGTERM (issue 56: no run may outlive SIGTERM by more than
2 s).

Each probe starts a command that runs far longer than the probe, waits ``--wait`` seconds (past its start,
in its long phase: a kernel, a search, a write), sends SIGTERM and measures the wall time until the process
has exited (a probe whose command ended before the signal is marked void).  The floor is a command that
waits on its standard input in Python: what importing, the exit path and the machine's load cost any
command.  The commands: a large tile
table's build, ``random`` walks of 4M moves and a walk of 10**12 moves, ``sample``, ``predict`` (and
``--stratified``), ``solve`` on tiles (one process, ``--jobs 2``), ``verify --full`` and
``convert`` of a large table, and ``solve`` of the vertex-cover and msa domains on hard instances.  The
tables they need are built first into a scratch cache (``--scratch``).

Writes bench/results/stop.json: per probe the command, the seconds from SIGTERM to exit, the exit status
and the last line on stderr; ``--only NAME`` runs some probes (their rows replace those of the file).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _results  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 2.0
TABLE = ["--pattern", "1,2,3,4,5,6,7", "--board", "4x4"]  # 57,657,600 entries


def probes(scratch: Path, cache: str) -> dict[str, list[str]]:
    inst = str(ROOT / "examples" / "korf100.txt")
    return {
        "floor: solve - waiting on its input": ["solve", "-", "--heuristic", "manhattan"],
        "build 4x4 7-tile table": ["build", *TABLE, "--cache-dir", str(scratch / "fresh-cache"), "--force"],
        "random --walk 4194304 -n 65536": ["random", "--board", "4x4", "--walk", "4194304", "-n", "65536",
                                           "--output", str(scratch / "walks.txt")],
        "random --walk 10**12": ["random", "--board", "3x3", "--walk", str(10**12), "-n", "1"],
        "sample -n 10**10": ["sample", "--board", "5x5", "--heuristic", "manhattan", "-n", str(10**10)],
        "predict -n 10**10": ["predict", "--board", "4x4", "--heuristic", "manhattan", "--depth", "60", "-n",
                              str(10**10)],
        "predict --stratified": ["predict", inst, "--heuristic", "manhattan", "--stratified", str(10**7)],
        "solve korf100 manhattan": ["solve", inst, "--heuristic", "manhattan"],
        "solve korf100 manhattan --jobs 2": ["solve", inst, "--heuristic", "manhattan", "--jobs", "2"],
        "verify --full 7-tile": ["verify", str(scratch / "table.pdb"), "--full"],
        "convert 7-tile to nibble": ["convert", str(scratch / "table.pdb"), "--encoding", "nibble", "--output",
                                     str(scratch / "table-nibble.pdb")],
        "solve --domain vertex-cover": ["solve", "--domain", "vertex-cover", str(scratch / "vc")],
        "solve --domain msa": ["solve", "--domain", "msa", str(scratch / "msa")],
    }


def pdbtool(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pdbtool", *args], capture_output=True, text=True, **kw)


def warm(scratch: Path, cache: str) -> None:
    """Short runs of the probed commands, so that their kernels are compiled and cached before the probes
    (a probe measures the long phase, not a first compilation)."""
    eight = str(ROOT / "examples" / "8puzzle.txt")
    runs = [["solve", eight, "--heuristic", "manhattan"], ["solve", eight, "--heuristic", "manhattan", "--jobs", "2"],
            ["sample", "--board", "3x3", "--heuristic", "manhattan", "-n", "1000"],
            ["predict", "--board", "3x3", "--heuristic", "manhattan", "--depth", "20", "-n", "1000"],
            ["predict", eight, "--heuristic", "manhattan", "--stratified", "10"],
            ["random", "--board", "3x3", "--walk", "10", "-n", "3"],
            ["verify", str(scratch / "table.pdb"), "--samples", "100"],
            ["build", "--pattern", "1,2,3", "--board", "3x3", "--cache-dir", cache],
            ["convert", "--pattern", "1,2,3", "--board", "3x3", "--encoding", "nibble", "--cache-dir", cache]]
    for args in runs:
        pdbtool(*args)


def prepare(scratch: Path, cache: str) -> None:
    """The tables and instances the probes read, made once."""
    if not (scratch / "table.pdb").exists():
        pdbtool("build", *TABLE, "--cache-dir", cache, check=True)
        (table,) = Path(cache).glob("*t1.2.3.4.5.6.7-minimized-byte.pdb")
        os.link(table, scratch / "table.pdb")
    if not (scratch / "vc").exists():
        pdbtool("random", "--domain", "vertex-cover", "--vertices", "400", "--degree", "12", "-n", "4",
                "--output-dir", str(scratch / "vc"), check=True)
    if not (scratch / "msa").exists():
        pdbtool("random", "--domain", "msa", "-k", "6", "--length", "300", "-n", "2", "--output-dir",
                str(scratch / "msa"), check=True)


def probe(args: list[str], wait: float, limit: float = 60.0) -> dict:
    proc = subprocess.Popen([sys.executable, "-m", "pdbtool", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    time.sleep(wait)
    running = proc.poll() is None
    start = time.perf_counter()
    if running:
        proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=limit)  # closes stdin only after the signal: the floor waits on it
        seconds = time.perf_counter() - start
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        seconds = None
    lines = [line for line in err.strip().splitlines() if line.strip()]
    return {"command": "pdbtool " + " ".join(args), "void": not running,
            "seconds_to_exit": None if seconds is None else round(seconds, 3), "killed_after": None if seconds
            else limit, "exit_status": proc.returncode, "last_line": lines[-1][-300:] if lines else "",
            "load": _results.load_average()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wait", type=float, default=8.0, help="seconds between start and SIGTERM")
    parser.add_argument("--only", action="append", default=None, help="a probe's name (repeatable)")
    parser.add_argument("--cold", action="store_true", help="probe without compiling the kernels first")
    parser.add_argument("--scratch", type=Path, default=Path(tempfile.gettempdir()) / "pdbtool-bench-stop")
    args = parser.parse_args()
    started, load_before = time.time(), _results.load_average()
    args.scratch.mkdir(parents=True, exist_ok=True)
    cache = str(args.scratch / "cache")
    prepare(args.scratch, cache)
    if not args.cold:
        warm(args.scratch, cache)
    out = _results.RESULTS / "stop.json"
    rows = {}
    if args.only and out.exists():
        rows = json.loads(out.read_text()).get("probes", {})
    for name, argv in probes(args.scratch, cache).items():
        if args.only and name not in args.only:
            continue
        row = probe(argv, args.wait)
        row["within_target"] = bool(not row["void"] and row["seconds_to_exit"] is not None
                                    and row["seconds_to_exit"] <= TARGET_SECONDS)
        rows[name] = row
        print(f"{name}: {row['seconds_to_exit']} s{' (void)' if row['void'] else ''}, exit {row['exit_status']}, "
              f"load {row['load']}: {row['last_line'][:100]}", flush=True)
    _results.write(out, {"target_seconds": TARGET_SECONDS, "wait_seconds": args.wait, "probes": rows},
                   started=started, load_before=load_before)


if __name__ == "__main__":
    main()
