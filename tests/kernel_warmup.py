"""Compile the package's common kernels into Numba's on-disk cache before parallel test processes start.

Each process of ``make test`` would otherwise compile a kernel the first time one of its tests needs it, and
at the start of a run they all need the same ones at once.  :func:`warm_up` runs the jobs below in as many
processes as the run has, each job compiling different kernels, so that the test processes load them from
the cache.  The jobs are drawn from the registry (every heuristic, blank rule and encoding, on the 8-puzzle),
so that a new name is warmed without an edit here; one job runs the Towers of Hanoi.  A job that fails
only costs its compile later; it does not fail the run (the tests of that code will).

Run by tests/conftest.py; by hand: ``python tests/kernel_warmup.py [JOB ...]``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STATE = (8, 1, 3, 4, 0, 2, 7, 6, 5)  # an 8-puzzle state a few moves from the goal


# the groups of jobs that start first, a process each, in this order.  The pattern sum's job compiles the
# blank-minimized builder, which the jobs of pair tables, other encodings and blank rules need too: the
# second group needs none of its kernels (no table, or blank-ignored ones, or another domain), and lasts
# longer than that compile, so that no two processes compile the builder at once and the jobs after them
# load it; the other jobs follow in groups, a process each
FIRST = (("heuristic:pdb",),
         ("domain:hanoi4", "heuristic:manhattan", "heuristic:linear-conflict", "encoding:mod3", "encoding:parity"),
         ("heuristic:ddb",), ("encoding:nibble",), ("blank:zero-aware", "catalogue:zero-aware"))


def jobs() -> list[str]:
    """The names of the warm-up jobs (``KIND:NAME``)."""
    from pdbtool import registry

    out = [f"heuristic:{name}" for name in registry.HEURISTICS]
    out += [f"encoding:{name}" for name in registry.ENCODINGS if name != registry.DEFAULT_ENCODING]
    out += [f"blank:{name}" for name in registry.BLANK_RULES if name != registry.DEFAULT_BLANK]
    out += [f"pruning:{name}" for name in registry.PRUNING_RULES if name != registry.DEFAULT_PRUNING]
    out += ["catalogue:zero-aware", "max:catalogue", "threads:2", "domain:hanoi4"]
    return out


def job_groups(names: list[str], processes: int) -> list[list[str]]:
    """The jobs in groups, one process each, in the order they start: ``FIRST``, then the rest shared out
    over ``processes`` groups."""
    first = [kept for kept in ([name for name in group if name in names] for group in FIRST) if kept]
    placed = {name for group in first for name in group}
    rest = [name for name in names if name not in placed]
    return first + [share for share in (rest[i::processes] for i in range(processes)) if share]


def run_job(job: str, cache_dir: str) -> None:
    """Solve one 8-puzzle state with the job's choice (the tables it needs built in ``cache_dir``)."""
    from pdbtool import registry
    from pdbtool.puzzle.board import Board
    from pdbtool.search.solver import Solver

    kind, _, name = job.partition(":")
    if kind == "domain":
        return run_domain_job(name, cache_dir)
    options: dict = dict(cache_dir=cache_dir)
    solve: dict = {}
    if kind == "heuristic":
        options["heuristic"] = name
        entry = registry.heuristic(name)
        if entry.partition:
            options["partition"] = "8-4-4"
    elif kind == "encoding":
        options.update(partition="8-4-4", encoding=name,
                       blank="ignored" if name in ("mod3", "parity") else registry.DEFAULT_BLANK)
        if name == "min-nibble":
            options["group"] = 2  # a lossy encoding's group of ranks
    elif kind == "blank":
        options.update(partition="8-4-4", blank=name)
    elif kind == "pruning":
        options.update(partition="8-4-4", pruning=name)
    elif kind == "catalogue":  # the catalogue kernel: a catalogue of one partition
        options.update(partition=_one_partition_catalogue(), blank=name)
    elif kind == "max":  # the catalogue kernel as the static part of max (its own driver specialization)
        options.update(heuristic="max", blank="zero-aware", partition=_one_partition_catalogue())
    elif kind == "threads":
        options.update(partition="8-4-4")
        solve["threads"] = int(name)
    else:
        raise ValueError(f"unknown warm-up job {job!r}")
    Solver(Board(3, 3), **options).solve(STATE, **solve)


def _one_partition_catalogue():
    """The catalogue of 8-4-4 alone: the catalogue kernel's jobs on the 8-puzzle."""
    from pdbtool.puzzle.board import Board
    from pdbtool.tables.partitions import Catalogue, load_partition

    return Catalogue("one", Board(3, 3), (load_partition("8-4-4"),))


def run_domain_job(name: str, cache_dir: str) -> None:
    """Another domain's kernels: the four-peg Towers of Hanoi, 8 disks with each table encoding, the search
    to the middle state and to the goal peg with the dynamic and infinite-peg heuristics."""
    if name != "hanoi4":
        raise ValueError(f"unknown warm-up domain {name!r}")
    from pdbtool.hanoi4.instance import standard
    from pdbtool.hanoi4.search import solve
    from pdbtool.hanoi4.tables import get_table
    from pdbtool.tables.cache import TableCache

    cache = TableCache(cache_dir)
    for encoding in ("byte", "nibble", "mod3"):
        def table_for(k: int, goal: str, encoding: str = encoding):
            return get_table(k, goal, cache=cache, encoding=encoding)

        solve(standard(8), "static:6-2", table_for=table_for)
        if encoding != "mod3":
            solve(standard(8), "dynamic:6-2,infinite", middle=False, table_for=table_for)


def warm_up(processes: int, timeout: float = 600.0) -> tuple[int, list[str]]:
    """Run every job, in at most ``processes`` processes at once, each group of jobs (:func:`job_groups`)
    starting as soon as a process is free; (jobs, a line for each job or process that failed)."""
    names = jobs()
    queue = job_groups(names, processes)
    failed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="pdbtool-warmup-") as cache_dir:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        # each process writes to a file of its own, not a pipe: a pipe read only at the end would block a
        # process that writes more than the pipe holds
        running: list[tuple[subprocess.Popen, Path]] = []
        end = time.monotonic() + timeout
        started = 0
        while queue or running:
            while queue and len(running) < processes:
                log = Path(cache_dir) / f"job-{started}.log"
                started += 1
                with log.open("w") as out:
                    running.append((subprocess.Popen([sys.executable, __file__, "--cache-dir", cache_dir,
                                                      *queue.pop(0)], env=env, stdout=out,
                                                     stderr=subprocess.STDOUT), log))
            if time.monotonic() > end:  # the jobs not started are left to the tests
                queue.clear()
                for proc, _ in running:
                    proc.kill()
            for proc, log in [r for r in running if r[0].poll() is not None]:
                text = log.read_text()
                failed += [line for line in text.splitlines() if line.startswith("warm-up job failed")]
                if proc.returncode:
                    failed.append(f"a warm-up process exited with {proc.returncode}: {text.strip()[-300:]}")
                running.remove((proc, log))
            time.sleep(0.05)  # a poll of the running processes, not a wait on any of them
    return len(names), failed


def _keep_traceback(job: str) -> str:
    """The failing job's whole traceback in a file of the system's temporary folder (a Numba typing error
    runs over hundreds of lines, whose cause is at the end); its path."""
    import traceback

    fd, path = tempfile.mkstemp(prefix=f"pdbtool-warmup-{job.replace(':', '-')}-", suffix=".txt")
    with os.fdopen(fd, "w") as f:
        f.write(traceback.format_exc())
    return path


def main(argv: list[str]) -> int:
    if argv[:1] != ["--cache-dir"]:
        with tempfile.TemporaryDirectory(prefix="pdbtool-warmup-") as cache_dir:
            return main(["--cache-dir", cache_dir, *argv])
    cache_dir, argv = argv[1], argv[2:]
    for job in argv or jobs():
        try:
            run_job(job, cache_dir)
        except Exception as exc:  # reported, not raised: the tests of that code say what is wrong
            detail = " ".join(str(exc).split())  # one line: the run's output shows it
            where = _keep_traceback(job)
            print(f"warm-up job failed: {job}: {type(exc).__name__}: {detail[:400]} (whole traceback: {where})",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
