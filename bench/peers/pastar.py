"""PA-Star (Sundfeld, Teodoro & de Melo; https://github.com/danielsundfeld/astar_msa, MIT): build it from a
source tarball into a scratch directory outside the repository, and run its serial ``msa_astar`` or its
parallel ``msa_pastar`` on one FASTA file under a time and a memory limit.

    python bench/peers/pastar.py build [--source TARBALL] [--dest DIR]
    python bench/peers/pastar.py run FASTA [--threads N] [--time-limit S] [--memory BYTES]   # one JSON line

It needs g++ and Boost's program_options, system and filesystem libraries (Debian:
``apt-get install g++ make libboost-program-options-dev libboost-system-dev libboost-filesystem-dev``).
Nothing of PA-Star is kept in this repository: users get its source from the repository above.

What is parsed from its output: the optimal cost (``Final Score: (...) g - COST``), the search time it
prints (``Phase 2: ... running time: MM:SS.mmm s``) and the heuristic's set-up time (``Phase 1``), the
alignment rows, and, from ``msa_pastar`` only (``msa_astar`` prints no counts), its node counts: the sum of
its threads' closed lists (the distinct nodes expanded, the goal included), the nodes it re-opened, the
children it processed (nodes generated) and what was left on its open lists.  CPU seconds and peak
resident memory are measured by ``bench/_limited.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import _limited  # noqa: E402

ROOT = HERE.parents[1]
DEFAULT_SOURCE = ROOT.parent / "shared" / "peers" / "astar_msa-src.tar.gz"
if not DEFAULT_SOURCE.exists():       # a worktree beside the main checkout: the shared folder is the same
    DEFAULT_SOURCE = Path("/work/shared/peers/astar_msa-src.tar.gz")
DEFAULT_DEST = Path(os.environ.get("PDBTOOL_PEERS", "/work/peers")) / "astar_msa"
REPOSITORY = "https://github.com/danielsundfeld/astar_msa"
BINARIES = ("msa_astar", "msa_pastar")


class PeerError(RuntimeError):
    pass


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def build(source: Path = DEFAULT_SOURCE, dest: Path = DEFAULT_DEST, jobs: int = 2, quiet: bool = True) -> Path:
    """Unpack ``source`` into ``dest`` and ``make`` it; returns the folder of the binaries.  A build of the
    same tarball (its SHA-256 is recorded beside it) is reused."""
    source, dest = Path(source).resolve(), Path(dest).resolve()
    if ROOT in dest.parents or dest == ROOT:
        raise PeerError(f"{dest} is inside the repository: build peers in a scratch directory outside it")
    if not source.is_file():
        raise PeerError(f"no PA-Star source at {source}: get it from {REPOSITORY} (git archive or a release)")
    stamp = dest / ".source-sha256"
    digest = _digest(source)
    binaries = dest / "bin"
    if stamp.exists() and stamp.read_text().strip() == digest and all((binaries / b).exists() for b in BINARIES):
        return binaries
    missing = [tool for tool in ("g++", "make") if shutil.which(tool) is None]
    if missing:
        raise PeerError(f"{' and '.join(missing)} not found: PA-Star builds with make and g++")
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    with tarfile.open(source) as tar:
        members = tar.getmembers()
        for m in members:
            if m.name.startswith("/") or ".." in Path(m.name).parts:
                raise PeerError(f"{source}: refusing an archive member outside its folder: {m.name}")
        tar.extractall(dest, members=members)
    top = [p for p in dest.iterdir() if p.name != ".source-sha256"]
    if len(top) == 1 and top[0].is_dir() and not (dest / "Makefile").exists():   # a tarball with a top folder
        for p in top[0].iterdir():
            p.rename(dest / p.name)
        top[0].rmdir()
    done = subprocess.run(["make", f"-j{jobs}"], cwd=dest, capture_output=True, text=True)
    if done.returncode or not all((binaries / b).exists() for b in BINARIES):
        log = (done.stderr or done.stdout).strip().splitlines()
        hint = ""
        if any("boost" in line for line in log):
            hint = (" (Boost missing? apt-get install libboost-program-options-dev libboost-system-dev "
                    "libboost-filesystem-dev)")
        raise PeerError(f"make failed in {dest}{hint}: {' | '.join(log[-3:])}")
    stamp.write_text(digest + "\n")
    if not quiet:
        print(f"built {binaries}", file=sys.stderr)
    return binaries


def version(binaries: Path) -> str:
    out = subprocess.run([str(binaries / "msa_astar"), "--version"], capture_output=True, text=True)
    return out.stdout.strip()


def cost_matrix(dest: Path = DEFAULT_DEST) -> dict[tuple[str, str], int]:
    """PA-Star's protein costs as its source states them (``src/Cost.cpp``, ``set_cost_pam250``): every
    ``cost_matrix[X][Y] = ...`` assignment, read from the built copy, so that an alignment can be scored
    with PA-Star's own numbers."""
    text = (Path(dest) / "src" / "Cost.cpp").read_text()
    body = text[text.index("set_cost_pam250()\n"):text.index("set_cost_nuc()\n")]
    matrix = {}
    for statement in body.split(";"):
        value = re.search(r"=\s*(\d+)\s*$", statement.strip())
        for a, b in re.findall(r"cost_matrix\[(\w)\]\[(\w)\]", statement):
            if value:
                matrix[a, b] = int(value.group(1))
    for name in ("GapCost", "GapGap"):
        m = re.search(name + r"\s*=\s*(\d+);", body)
        if m:
            matrix[name, name] = int(m.group(1))
    return matrix


def alignment_cost(rows: list[str], matrix: dict) -> int:
    """The sum-of-pairs cost of ``rows`` as PA-Star counts it (``Node::pairCost``): the matrix for two
    residues, ``GapCost`` for a residue against a gap and ``GapGap`` for two gaps."""
    gap, gap_gap = matrix[("GapCost", "GapCost")], matrix[("GapGap", "GapGap")]
    total = 0
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            for a, b in zip(rows[i], rows[j]):
                if a == "-" and b == "-":
                    total += gap_gap
                elif a == "-" or b == "-":
                    total += gap
                else:
                    total += matrix.get((a, b), 0)
    return total


_SCORE = re.compile(r"^Final Score: \(([\d ]+)\)\s+g - (\d+)", re.M)
_PHASE = re.compile(r"^Phase (\d)[^:]*:[^:]*?(?:running time: )?(\d+):(\d+(?:\.\d+)?) s", re.M)
_SUM = re.compile(r"^Sum\tOpenList: (\d+)\tClosedList: (\d+)\tReopen: (\d+)\tTotal: (\d+)\t"
                  r"\(Total Processed: (\d+)\)", re.M)


def parse(stdout: str) -> dict:
    """The figures of one run's standard output (empty when it printed none)."""
    out: dict = {}
    m = _SCORE.search(stdout)
    if m:
        out["cost"] = int(m.group(2))
        out["goal"] = [int(x) for x in m.group(1).split()]
    for phase, minutes, seconds in _PHASE.findall(stdout):
        key = {"1": "heuristic_seconds", "2": "search_seconds", "3": "backtrace_seconds"}.get(phase)
        if key:
            out[key] = round(int(minutes) * 60 + float(seconds), 3)
    m = _SUM.search(stdout)
    if m:
        open_, closed, reopen, _total, processed = (int(x) for x in m.groups())
        out.update(closed=closed, reopened=reopen, generated=processed, open_left=open_)
    if "cost" in out:
        lines = stdout[stdout.index("Similarity:"):].splitlines()[1:] if "Similarity:" in stdout else []
        rows = [line for line in lines if line and not line.startswith(("Phase", "Total", "tid", "Sum"))]
        k = len(out["goal"])
        if rows and len(rows) % k == 0:        # wrapped blocks of k rows on a terminal, one block otherwise
            out["alignment"] = ["".join(rows[b + i] for b in range(0, len(rows), k)) for i in range(k)]
    return out


def solve(binaries: Path, fasta: Path, threads: int | None = None, time_limit: float | None = None,
          memory_bytes: int | None = None, cpu_limit: float | None = None, nice: int = 0) -> dict:
    """Run ``msa_astar`` (``threads`` None) or ``msa_pastar -t threads`` on ``fasta``: a record with
    ``solved``, ``cost``, the parsed counts, ``cpu_seconds``, ``wall_seconds``, ``peak_bytes`` and, when it
    did not solve it, ``stopped_by`` (``time``, ``memory`` or ``error``) and ``error``.  ``time_limit`` is in
    wall seconds, ``cpu_limit`` in CPU seconds (all threads together)."""
    if threads is None:
        command = [str(binaries / "msa_astar"), str(fasta)]
    else:
        command = [str(binaries / "msa_pastar"), "-t", str(threads), "--no-affinity", str(fasta)]
    done = _limited.run(command, time_limit=time_limit, memory_bytes=memory_bytes, cpu_limit=cpu_limit, nice=nice)
    record = {"solver": "msa_astar" if threads is None else "msa_pastar", "threads": threads or 1,
              "command": " ".join([Path(command[0]).name, *command[1:]]),
              "cpu_seconds": done.cpu_seconds, "wall_seconds": done.wall_seconds,
              "peak_bytes": done.peak_rss_bytes, "returncode": done.returncode}
    record.update(parse(done.stdout))
    record["solved"] = "cost" in record and done.returncode == 0 and not done.timed_out
    if not record["solved"]:
        text = done.stdout + done.stderr
        if done.timed_out:
            record["stopped_by"] = "time"
        elif "bad_alloc" in text or "memory" in text.lower():
            record["stopped_by"] = "memory"
        else:
            record["stopped_by"] = "error"
        record["error"] = None if done.timed_out else (done.tail() or f"exit status {done.returncode}")
    return record


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    b = sub.add_parser("build", help="unpack and make PA-Star")
    b.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    b.add_argument("--dest", type=Path, default=DEFAULT_DEST)
    r = sub.add_parser("run", help="solve one FASTA file, print a JSON record")
    r.add_argument("fasta", type=Path)
    r.add_argument("--threads", type=int, default=None, help="msa_pastar with N threads (default: msa_astar)")
    r.add_argument("--time-limit", type=float, default=None)
    r.add_argument("--cpu-limit", type=float, default=None, help="CPU seconds, all threads together")
    r.add_argument("--memory", type=int, default=None, help="address-space limit in bytes")
    r.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    r.add_argument("--dest", type=Path, default=DEFAULT_DEST)
    args = ap.parse_args(argv)
    try:
        binaries = build(args.source, args.dest, quiet=False)
        if args.what == "build":
            print(binaries)
            return
        print(json.dumps(solve(binaries, args.fasta, args.threads, args.time_limit, args.memory, args.cpu_limit)))
    except PeerError as e:
        sys.exit(f"pastar: {e}")


if __name__ == "__main__":
    main()
