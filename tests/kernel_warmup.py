"""Compile the package's common kernels into Numba's on-disk cache before parallel test processes start.

Each process of ``make test`` would otherwise compile a kernel the first time one of its tests needs it, and
at the start of a run they all need the same ones at once.  :func:`warm_up` runs the jobs below in as many
processes as the run has, each job compiling different kernels, so that the test processes load them from
the cache.  The jobs are drawn from the registry (every heuristic, blank rule and encoding, on the 8-puzzle),
so that a new name is warmed without an edit here; the sampler has a job per compiled evaluator
(``ANALYSIS_JOBS``), and each other domain one of its own (``DOMAIN_JOBS``: the Towers of Hanoi, vertex
cover, multiple sequence alignment).  A job that fails only costs its compile later; it does not fail the
run (the tests of that code will).

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
    out += ["catalogue:zero-aware", "max:catalogue", "threads:2"]
    out += [f"analysis:{name}" for name in ANALYSIS_JOBS]
    out += [f"domain:{name}" for name in DOMAIN_JOBS]
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
    elif kind == "analysis":
        return run_analysis_job(name, cache_dir)
    elif kind == "threads":
        options.update(partition="8-4-4")
        solve["threads"] = int(name)
    else:
        raise ValueError(f"unknown warm-up job {job!r}")
    Solver(Board(3, 3), **options).solve(STATE, **solve)


# the sampler's kernels are specialized per compiled evaluator: a job each, so that they share out over the
# processes (ddb's conflict graphs and the pattern sum read tables: the builders' jobs are ahead of them)
ANALYSIS_JOBS = ("manhattan", "ddb", "linear-conflict", "pdb")


def run_analysis_job(name: str, cache_dir: str) -> None:
    """The sampler's kernels for one evaluator: sampled and (on the 8-puzzle) enumerated distributions; the
    random states and walks with Manhattan's, the line scan of long lines with the linear conflicts'."""
    from pdbtool.analysis.sampling import enumerate_all, sample
    from pdbtool.analysis.states import random_states
    from pdbtool.heuristics.linear_conflict import LinearConflict
    from pdbtool.heuristics.manhattan import Manhattan
    from pdbtool.puzzle.board import Board
    from pdbtool.search.solver import Solver

    board = Board(3, 3)
    if name == "manhattan":
        random_states(board, 100, seed=1, walk=7)
        heuristic = Manhattan(board)
    elif name == "linear-conflict":
        sample(LinearConflict(Board(8, 8)), 200, seed=1)
        heuristic = LinearConflict(board)
    elif name == "pdb":
        heuristic = Solver(board, partition="8-4-4", cache_dir=cache_dir).heuristic
    elif name == "ddb":
        sample(Solver(board, heuristic="ddb", cache_dir=cache_dir).heuristic, 200, seed=1, threads=2)
        return
    else:
        raise ValueError(f"unknown warm-up analysis job {name!r}")
    sample(heuristic, 2000, seed=1)
    enumerate_all(heuristic)


def _one_partition_catalogue():
    """The catalogue of 8-4-4 alone: the catalogue kernel's jobs on the 8-puzzle."""
    from pdbtool.puzzle.board import Board
    from pdbtool.tables.partitions import Catalogue, load_partition

    return Catalogue("one", Board(3, 3), (load_partition("8-4-4"),))


def run_domain_job(name: str, cache_dir: str) -> None:
    """Another domain's kernels (``DOMAIN_JOBS``)."""
    if name not in DOMAIN_JOBS:
        raise ValueError(f"unknown warm-up domain {name!r}")
    DOMAIN_JOBS[name](cache_dir)


def _hanoi4(cache_dir: str) -> None:
    """The four-peg Towers of Hanoi: 8 disks with each table encoding, the search to the middle state and to
    the goal peg with the dynamic and infinite-peg heuristics."""
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


def _invoke(command, args: list) -> None:
    """A domain's Click command run in this process (as the tests run them); its failure is the job's."""
    from click.testing import CliRunner

    result = CliRunner().invoke(command, [str(a) for a in args])
    if result.exit_code != 0:
        raise RuntimeError(f"{command.name} {' '.join(map(str, args))}: exit {result.exit_code}: "
                           f"{result.output.strip()[-300:]}")


def _vertex_cover(cache_dir: str) -> None:
    """Vertex cover: every bound on both branchings (with and without the reductions, the local search and
    the max-SAT step), a search stopped by its time limit, the clique table's build, inspect and verify, and
    a solve that loads it."""
    from pdbtool.vcover.commands import COMMANDS
    from pdbtool.vcover.graph import random_graph
    from pdbtool.vcover.search import solve

    graph = random_graph(30, 6, 1)
    for heuristic in ("none", "matching", "static:3", "dynamic:3", "cliques", "lp", "dynamic:4,lp,cliques"):
        for reductions in ("none", "default"):
            solve(graph, heuristic, reductions, out_first=reductions == "none")
    solve(graph, "cliques", "none", branching="binary")
    solve(graph, "cliques", "none", maxsat=False, local_steps=0)
    solve(random_graph(150, 16, 2003), "none", "none", time_limit=0.05)  # a search stopped by its time limit
    path = Path(cache_dir) / "warm-up.gr"
    path.write_text(f"p td {graph.n} {len(graph.edges)}\n" + "".join(f"{u + 1} {v + 1}\n" for u, v in graph.edges))
    tables = Path(cache_dir) / "vcover"
    _invoke(COMMANDS["build"], [path, "--cache-dir", tables])
    _invoke(COMMANDS["inspect"], ["--graph", path, "--cache-dir", tables])
    _invoke(COMMANDS["verify"], ["--graph", path, "--cache-dir", tables])
    _invoke(COMMANDS["solve"], [path, "-H", "static:4", "--reductions", "none", "--cache-dir", tables])


def _msa(cache_dir: str) -> None:
    """Multiple sequence alignment: two to four sequences under both searches, with and without three-way
    tables, the heuristic at every node, Gotoh's affine pairs, a search stopped by its memory budget, and the
    tables' build and verify."""
    import numpy as np

    from pdbtool.msa import align, make_model, parse_fasta
    from pdbtool.msa.commands import COMMANDS
    from pdbtool.msa.families import family
    from pdbtool.msa.heuristics import build, encode
    from pdbtool.msa.kernels import node_heuristics
    from pdbtool.msa.search import strides_of

    def instance(seqs):
        return parse_fasta("".join(f">s{i}\n{s}\n" for i, s in enumerate(seqs)), "warm-up", "protein")

    model = make_model("pastar")
    for k in (2, 3, 4):
        seqs = family(k, 6, seed=3, substitution=0.3, indel=0.2)
        for search in ("astar", "pea"):
            for partitions in (None, []):
                align(instance(seqs), model, partitions, search=search)
    seqs = family(4, 5, seed=3, substitution=0.3, indel=0.2)
    lens = np.array([len(s) for s in seqs], dtype=np.int64)
    node_heuristics(4, lens, strides_of(lens), *build(model, encode(model, seqs), [[(0, 1, 2)]]).arrays())
    align(instance(seqs[:2]), make_model("pam250", gaps="affine"))
    fasta = Path(cache_dir) / "warm-up.fasta"
    fasta.write_text("".join(f">s{i}\n{s}\n" for i, s in enumerate(family(5, 12, seed=1))))
    stopped = Path(cache_dir) / "memory.fasta"  # a search stopped by its memory budget
    stopped.write_text("".join(f">s{i}\n{s}\n" for i, s in enumerate(family(6, 60, seed=1, substitution=0.6,
                                                                             indel=0.2))))
    _invoke(COMMANDS["solve"], [stopped, "--triangles", "none", "--memory", "2M"])
    tables = Path(cache_dir) / "msa"
    _invoke(COMMANDS["build"], [fasta, "--cache-dir", tables])
    for path in tables.rglob("*.pdb"):
        _invoke(COMMANDS["verify"], [path])


DOMAIN_JOBS = {"hanoi4": _hanoi4, "vertex-cover": _vertex_cover, "msa": _msa}


# each process's limit: CPU seconds (the kernel stops a process past it, whatever the machine's load: a
# limit on wall time would kill whole jobs on a loaded machine, whose compiles the tests then do again), and
# a far longer one on wall time, against a process that hangs without using CPU
CPU_LIMIT = 900
WALL_LIMIT = 3600.0


def _limit_cpu(pid: int) -> None:
    """``CPU_LIMIT`` on process ``pid``, where the system can set another process's limits (Linux)."""
    try:
        import resource

        resource.prlimit(pid, resource.RLIMIT_CPU, (CPU_LIMIT, CPU_LIMIT + 5))
    except (ImportError, AttributeError, OSError):  # pragma: no cover - no prlimit: the wall limit only
        pass


def warm_up(processes: int, wall_limit: float = WALL_LIMIT) -> tuple[int, list[str]]:
    """Run every job, in at most ``processes`` processes at once, each group of jobs (:func:`job_groups`)
    starting as soon as a process is free; (jobs warmed, a line for each job or process that failed)."""
    names = jobs()
    queue = job_groups(names, processes)
    failed: list[str] = []
    lost = 0  # the jobs of the processes that failed or never started
    with tempfile.TemporaryDirectory(prefix="pdbtool-warmup-") as cache_dir:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        # each process writes to a file of its own, not a pipe: a pipe read only at the end would block a
        # process that writes more than the pipe holds
        running: list[tuple[subprocess.Popen, Path, list[str]]] = []
        end = time.monotonic() + wall_limit
        started = 0
        while queue or running:
            while queue and len(running) < processes:
                log = Path(cache_dir) / f"job-{started}.log"
                started += 1
                group = queue.pop(0)
                with log.open("w") as out:
                    proc = subprocess.Popen([sys.executable, __file__, "--cache-dir", cache_dir, *group], env=env,
                                            stdout=out, stderr=subprocess.STDOUT)
                _limit_cpu(proc.pid)
                running.append((proc, log, group))
            if time.monotonic() > end:  # the jobs not started are left to the tests
                lost += sum(len(group) for group in queue)
                queue.clear()
                for proc, _, _ in running:
                    proc.kill()
            for proc, log, group in [r for r in running if r[0].poll() is not None]:
                text = log.read_text()
                failures = [line for line in text.splitlines() if line.startswith("warm-up job failed")]
                failed += failures
                if proc.returncode:
                    failed.append(f"a warm-up process of {', '.join(group)} exited with {proc.returncode}: "
                                  f"{text.strip()[-300:]}")
                    lost += len(group)
                else:
                    lost += len(failures)
                running.remove((proc, log, group))
            time.sleep(0.05)  # a poll of the running processes, not a wait on any of them
    return len(names) - lost, failed


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
    from compile_profile import recorder

    profile = recorder("warm-up")
    for job in argv or jobs():
        started = time.process_time()
        try:
            run_job(job, cache_dir)
        except Exception as exc:  # reported, not raised: the tests of that code say what is wrong
            detail = " ".join(str(exc).split())  # one line: the run's output shows it
            where = _keep_traceback(job)
            print(f"warm-up job failed: {job}: {type(exc).__name__}: {detail[:400]} (whole traceback: {where})",
                  flush=True)
        if profile is not None:
            profile.jobs[job] = round(time.process_time() - started, 3)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
