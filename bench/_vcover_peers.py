"""The solvers of the vertex-cover benchmark (``bench/bench_vcover.py``), each run in a process of its own
under a wall-clock limit, with its CPU seconds taken from the kernel (``wait4``):

- pdbtool's ``solve --domain vertex-cover`` (one thread: ``NUMBA_NUM_THREADS=1``), its JSON records read back;
- Peaty (Trimble, PACE 2019; built from its source tarball by ``bench/peers/peaty.sh`` outside the
  repository), fed the graph in PACE format on its standard input;
- CP-SAT (OR-Tools), a boolean per vertex, ``x_u + x_v >= 1`` per edge, the sum minimised
  (``bench/peers/cpsat_vc.py``), on its default number of workers.

Graphs are read here by a reader of their own, not pdbtool's, so that every cover a solver returns is
checked (every edge covered, the size as reported) by code that shares nothing with the solver under test.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PEATY_SH = HERE / "peers" / "peaty.sh"
CPSAT_PY = HERE / "peers" / "cpsat_vc.py"


# --- graphs ---------------------------------------------------------------------------------------------

@dataclass
class Graph:
    name: str
    path: Path
    vertices: int
    edges: list[tuple[int, int]]      # 0-based, u < v, no repeats

    @property
    def degree(self) -> float:
        return 2 * len(self.edges) / self.vertices if self.vertices else 0.0


def read_graph(path: str | Path) -> Graph:
    """A graph in PACE ``.gr`` (``p td n m``, then ``u v``) or DIMACS (``p edge n m``, ``e u v``), vertices
    1..n; ``c`` and ``#`` lines are comments.  Repeated edges are merged; a self-loop, a vertex out of range
    or an edge before the ``p`` line is refused."""
    path = Path(path)
    n = None
    found: set[tuple[int, int]] = set()
    with open(path) as handle:
        for number, line in enumerate(handle, 1):
            parts = line.split()
            if not parts or parts[0] in ("c", "#") or parts[0].startswith("#"):
                continue
            if parts[0] == "p":
                n = int(parts[2])
                continue
            if parts[0] == "e":
                parts = parts[1:]
            u, v = int(parts[0]), int(parts[1])
            if n is None or not (1 <= u <= n and 1 <= v <= n) or u == v:
                raise ValueError(f"{path}:{number}: edge {u} {v} is a self-loop or out of range 1..{n}")
            found.add((min(u, v) - 1, max(u, v) - 1))
    if n is None:
        raise ValueError(f"{path}: no 'p' line")
    stem = path.name.removesuffix(".gz")
    for suffix in (".gr", ".dimacs", ".col", ".txt", ".edges"):
        stem = stem.removesuffix(suffix)
    return Graph(stem, path, n, sorted(found))


def write_pace(graph: Graph, path: str | Path) -> Path:
    path = Path(path)
    path.write_text(f"p td {graph.vertices} {len(graph.edges)}\n"
                    + "".join(f"{u + 1} {v + 1}\n" for u, v in graph.edges))
    return path


def cover_problem(graph: Graph, cover: list[int], size: int | None = None) -> str | None:
    """None when ``cover`` (1-based vertices) covers every edge and has ``size`` distinct vertices; else why not."""
    chosen = set(cover)
    if len(chosen) != len(cover):
        return "a vertex is repeated in the cover"
    if any(not 1 <= v <= graph.vertices for v in chosen):
        return "a vertex of the cover is out of range"
    if size is not None and size != len(chosen):
        return f"the cover has {len(chosen)} vertices, the solver says {size}"
    for u, v in graph.edges:
        if u + 1 not in chosen and v + 1 not in chosen:
            return f"edge {u + 1} {v + 1} is not covered"
    return None


# --- processes ------------------------------------------------------------------------------------------

@dataclass
class Finished:
    returncode: int | None        # None: stopped at the wall-clock limit
    stdout: str
    stderr: str
    cpu_seconds: float
    wall_seconds: float
    max_rss_bytes: int

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> float:
    """The CPU seconds of a running process, all its threads (``/proc/PID/stat``: utime + stime)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS
    except (OSError, IndexError, ValueError):
        return 0.0


def run_limited(command: list[str], limit: float | None, stdin: Path | None = None, env: dict | None = None,
                scratch: Path | None = None, cpu_limit: float | None = None) -> Finished:
    """``command`` in a session of its own, killed (with its children) after ``limit`` wall seconds or once
    it has used ``cpu_limit`` CPU seconds; its CPU seconds and peak memory from ``wait4``.  Output goes
    through files so that a long one cannot block it."""
    scratch = scratch or Path("/tmp")
    out_path, err_path = scratch / f"vcb-{os.getpid()}.out", scratch / f"vcb-{os.getpid()}.err"
    with open(out_path, "w") as out, open(err_path, "w") as err, \
            (open(stdin) if stdin else open(os.devnull)) as inp:
        started = time.monotonic()
        proc = subprocess.Popen(command, stdin=inp, stdout=out, stderr=err, env=env, start_new_session=True)
        timed_out = False
        try:
            while True:
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                if (limit is not None and time.monotonic() - started > limit) or \
                        (cpu_limit is not None and process_cpu(proc.pid) >= cpu_limit):
                    timed_out = True
                    _kill_group(proc.pid)
                    pid, status, usage = os.wait4(proc.pid, 0)
                    break
                time.sleep(0.02)
        except BaseException:       # the benchmark stopped (Ctrl-C, SIGTERM): no solver is left behind
            _kill_group(proc.pid)
            raise
        wall = time.monotonic() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    try:
        text_out, text_err = out_path.read_text(errors="replace"), err_path.read_text(errors="replace")
    finally:
        out_path.unlink(missing_ok=True)
        err_path.unlink(missing_ok=True)
    return Finished(None if timed_out else proc.returncode, text_out, text_err,
                    round(usage.ru_utime + usage.ru_stime, 3), round(wall, 3), usage.ru_maxrss * 1024)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def stop_on_sigterm() -> None:
    """SIGTERM raises SystemExit, so that the solver a run waits for is killed with it."""
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


def wall_cap(limit: float | None) -> float | None:
    """The wall-clock limit of a run limited by its CPU seconds: far enough for a loaded machine."""
    return None if limit is None else 20 * limit + 60


# --- Peaty ----------------------------------------------------------------------------------------------

def build_peaty(tarball: str | None = None, folder: str | None = None) -> Path:
    """The path of Peaty's binary, built by ``bench/peers/peaty.sh`` if it is not built yet."""
    args = [str(PEATY_SH), tarball or ""] + ([folder] if folder else [])      # "": the script's default
    done = subprocess.run(["sh", *args], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(done.stderr.strip() or "bench/peers/peaty.sh failed")
    return Path(done.stdout.strip().splitlines()[-1])


def run_peaty(binary: Path, graph: Graph, limit: float | None, scratch: Path, clock: str = "wall") -> dict:
    """Peaty on ``graph`` (one thread: its default algorithm is sequential), its cover checked; ``limit``
    seconds of the ``clock`` ("wall", or "cpu": its own CPU seconds)."""
    pace = write_pace(graph, scratch / f"{graph.name}.peaty.gr")
    wall, cpu = (limit, None) if clock == "wall" else (wall_cap(limit), limit)
    try:
        done = run_limited([str(binary)], wall, stdin=pace, scratch=scratch, cpu_limit=cpu)
    finally:
        pace.unlink(missing_ok=True)
    rec = {"solver": "peaty", "id": graph.name, "solved": False, "size": None, "cpu_seconds": done.cpu_seconds,
           "wall_seconds": done.wall_seconds, "max_rss_bytes": done.max_rss_bytes, "error": None}
    if done.timed_out:
        rec["error"] = None
        rec["stopped"] = "time limit"
        return rec
    lines = [ln.split() for ln in done.stdout.splitlines()]
    head = next((p for p in lines if p[:2] == ["s", "vc"]), None)
    if done.returncode or head is None:
        rec["error"] = f"exit {done.returncode}: {(done.stderr or done.stdout).strip()[-300:]}"
        return rec
    cover = [int(p[0]) for p in lines if len(p) == 1 and p[0].isdigit()]
    size = int(head[3])
    problem = cover_problem(graph, cover, size)
    rec.update(solved=problem is None, size=size, error=problem and f"Peaty's cover: {problem}")
    return rec


# --- CP-SAT ---------------------------------------------------------------------------------------------

def run_cpsat(graph: Graph, limit: float, workers: int | None = None, scratch: Path | None = None,
              clock: str = "wall") -> dict:
    """CP-SAT on ``graph``: with the "wall" clock, ``max_time_in_seconds = limit`` (and a kill a little after
    it); with "cpu", killed once it has used ``limit`` CPU seconds for each worker (its default: one a core)."""
    if clock == "wall":
        own, wall, cpu = limit, limit + 30, None
    else:
        own, wall, cpu = wall_cap(limit), wall_cap(limit), limit * (workers or os.cpu_count() or 1)
    command = [sys.executable, str(CPSAT_PY), str(graph.path), "--time-limit", str(own)]
    if workers:
        command += ["--workers", str(workers)]
    done = run_limited(command, wall, scratch=scratch, cpu_limit=cpu)
    rec = {"solver": "cp-sat", "id": graph.name, "solved": False, "size": None, "bound": None,
           "cpu_seconds": done.cpu_seconds, "wall_seconds": done.wall_seconds,
           "max_rss_bytes": done.max_rss_bytes, "error": None}
    if done.timed_out:
        rec["stopped"] = "time limit"
        return rec
    if done.returncode:
        rec["error"] = f"exit {done.returncode}: {done.stderr.strip()[-300:]}"
        return rec
    out = json.loads(done.stdout.strip().splitlines()[-1])
    rec.update({k: out[k] for k in ("status", "size", "bound", "workers", "version", "solve_cpu_seconds")})
    rec["solved"] = out["status"] == "OPTIMAL"
    if out.get("cover") is not None:
        problem = cover_problem(graph, out["cover"], out["size"])
        if problem:
            rec.update(solved=False, error=f"CP-SAT's cover: {problem}")
    return rec


# --- pdbtool --------------------------------------------------------------------------------------------

# Until the domain registry is on this branch, the vertex-cover commands are reached through their module.
_VIA_MODULE = ("import sys; from pdbtool.vcover.commands import COMMANDS; "
               "COMMANDS[sys.argv[1]].main(sys.argv[2:], prog_name='pdbtool ' + sys.argv[1])")


def pdbtool_command(name: str, args: list[str]) -> list[str]:
    """``pdbtool NAME --domain vertex-cover ARGS`` through the registry when it knows the domain, else
    through ``pdbtool.vcover.commands.COMMANDS``."""
    try:
        from pdbtool import domains  # type: ignore[attr-defined]

        registered = "vertex-cover" in repr(vars(domains))
    except ImportError:
        registered = False
    if registered:
        return [sys.executable, "-m", "pdbtool", name, "--domain", "vertex-cover", *args]
    return [sys.executable, "-c", _VIA_MODULE, name, *args]


def one_thread_env() -> dict:
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def parse_records(text: str) -> list[dict]:
    """pdbtool's ``--format json``: one JSON document (a record or a list of them) or one record a line."""
    text = text.strip()
    if not text:
        return []
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = [json.loads(line) for line in text.splitlines() if line.strip().startswith("{")]
    if isinstance(data, dict):
        data = data.get("results", data.get("records", [data]))
    return list(data)


def cover_size(record: dict) -> int | None:
    for key in ("size", "cover_size", "optimum", "best"):
        if isinstance(record.get(key), int):
            return record[key]
    cover = record.get("cover")
    return len(cover) if isinstance(cover, list) else None


def run_pdbtool(graphs: list[Graph], heuristic: str | None, limit: float | None, extra: list[str],
                scratch: Path, wall_limit: float | None = None, cpu_limit: float | None = None,
                warm_up: Path | None = None) -> list[dict]:
    """pdbtool's ``solve`` on ``graphs`` in one process (one thread), ``--time-limit`` a graph (wall seconds)
    and ``cpu_limit`` CPU seconds for the whole process; each record as pdbtool gives it, plus ``size`` and
    ``cover_check`` (this module's check of its cover).  ``warm_up``: a small graph solved first and left
    out of the records, so that loading Numba's kernels is not counted in the first graph's CPU seconds."""
    args = ([str(warm_up)] if warm_up else []) + [str(g.path) for g in graphs] + ["--format", "json"] + extra
    if heuristic:
        args += ["--heuristic", heuristic]
    if limit is not None:
        args += ["--time-limit", str(limit)]
    done = run_limited(pdbtool_command("solve", args), wall_limit, env=one_thread_env(), scratch=scratch,
                       cpu_limit=cpu_limit)
    by_name = {}
    for g in graphs:
        for key in (g.name, str(g.path), g.path.name):
            by_name[key] = g
    try:
        records = parse_records(done.stdout)
    except (json.JSONDecodeError, AttributeError):
        records = []
    if done.timed_out or not records:
        why = None if done.timed_out else \
            f"exit {done.returncode}, no records: {(done.stderr or done.stdout).strip()[-300:]}"
        return [{"solver": "pdbtool", "id": g.name, "solved": False, "size": None, "error": why,
                 "stopped": "time limit" if done.timed_out else None, "cpu_seconds": done.cpu_seconds,
                 "process_cpu_seconds": done.cpu_seconds} for g in graphs]
    out = []
    for rec in records:
        rec = dict(rec)
        if warm_up and str(rec.get("id")) in (warm_up.name, str(warm_up)):
            continue
        g = by_name.get(str(rec.get("id"))) or by_name.get(Path(str(rec.get("id"))).name)
        rec["solver"] = "pdbtool"
        rec["size"] = cover_size(rec)
        if g is not None:
            rec["id"] = g.name
            cover = rec.get("cover")
            rec["cover_check"] = (cover_problem(g, cover, rec["size"]) or "ok") if isinstance(cover, list) \
                else "no cover in the record"
            rec.pop("cover", None)          # the covers are checked here, not stored in the results
        rec["process_cpu_seconds"] = done.cpu_seconds
        rec["process_max_rss_bytes"] = done.max_rss_bytes
        out.append(rec)
    return out
