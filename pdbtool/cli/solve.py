"""``pdbtool solve``: solve instance files optimally with IDA*."""

from __future__ import annotations

import contextlib
import sys
import time

import click

from .. import registry
from ._common import (Interrupted, batch_status, board_option, cache_dir_option, format_option, goal_option,
                      jobs_option, output_option, progress_option, ray_option, resume_option, say,
                      threads_option_for, time_limit_option, user_errors)


@click.command("solve")
@click.argument("instances", metavar="INSTANCES", type=click.Path(allow_dash=True, dir_okay=False))
@board_option
@goal_option
@click.option("--partition", default=None, metavar="NAME|FILE",
              help="Partition for the pdb heuristic (default: 15-7-8 on 4x4, 24-6-6-6-6 on 5x5).")
@click.option("--heuristic", type=click.Choice(list(registry.HEURISTICS)), default=registry.DEFAULT_HEURISTIC,
              show_default=True, help=f"Heuristic of the search ({registry.help_text(registry.HEURISTICS)}).")
@click.option("--dynamic", type=click.Choice(list(registry.DYNAMIC_SETS)), default=None,
              help=f"Tables of ddb and max (default: {registry.DEFAULT_DYNAMIC_SET}).")
@click.option("--no-reflect", is_flag=True, help="Do not take the max with the diagonal reflection.")
@click.option("--blank", type=click.Choice(list(registry.BLANK_RULES)), default=registry.DEFAULT_BLANK,
              show_default=True,
              help="Blank rule of the pattern tables (mod3 and parity need ignored).")
@click.option("--encoding", type=click.Choice(list(registry.ENCODINGS)), default=registry.DEFAULT_ENCODING,
              show_default=True,
              help="Encoding of the pattern tables (converted from byte tables if absent; pdb only).")
@click.option("--group", type=int, default=None, metavar="C", help="Group size of min-nibble (a power of two).")
@click.option("--pruning", type=click.Choice(list(registry.PRUNING_RULES)), default=None,
              help="Duplicate paths pruned: parent (never undo the last move) or fsm (also every move sequence "
                   "with a shorter or equal equivalent, by a finite-state machine; fewer nodes, same lengths). "
                   "Default: fsm on 5x5, parent elsewhere (Korf & Felner's published 24-puzzle counts need "
                   "--pruning parent).")
@click.option("--fsm-depth", type=click.IntRange(2, 24), default=None, metavar="L",
              help="With fsm: prune the duplicates of up to L moves (longer: fewer nodes, a larger automaton, "
                   "slower to build).  Default: the board's (docs/pruning.md).")
@jobs_option
@threads_option_for("Threads searching one instance (each iteration's subtrees are shared out), also used to "
                    "build missing tables.", default=1)
@time_limit_option
@ray_option
@output_option("Write the results to FILE (in --format) as each instance ends, each line synced to the disk.")
@resume_option
@click.option("--checkpoint", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Record the search in FILE as it goes; a rerun with FILE goes on from there (removed when "
                   "the instance is solved).")
@click.option("--checkpoint-every", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              metavar="SECONDS", help="Seconds between the records of --checkpoint.")
@progress_option
@cache_dir_option
@format_option("text: a line per instance and a summary; json: JSON Lines; csv: a row per instance.")
@user_errors
def command(instances, board_dims, goal, partition, heuristic, dynamic, no_reflect, jobs, threads, time_limit,
            cache_dir, fmt, blank, encoding, group, ray_address, output, resume, checkpoint, checkpoint_every,
            show_progress, pruning, fsm_depth):
    """Solve the instances of a file (or - for stdin) optimally with IDA*.

    A line holds the tile in each cell, row by row (0 = blank), optionally preceded by an id; '#' starts a
    comment.  A trailing '# optimal N' is checked against the length found.  The exit status is 3 when a
    length differs from its '# optimal', 4 when a worker process of --jobs was killed twice on one instance
    (reported failed, with the signal), 1 when any line failed (bad input, a missing table), 0 otherwise;
    instances that hit --time-limit are reported as unsolved and do not fail the run (pdbtool --help lists
    every status).  A long search shows its bound, nodes, nodes per second and elapsed time on stderr (live
    on a terminal, else a line every 30 seconds);
    a batch, the instances done and failed and the time left (on a terminal, or with --progress).

    With --output FILE the results go to FILE as each instance ends; after a kill, the same command with
    --resume solves only the instances FILE lacks.  --checkpoint FILE keeps a long search's progress
    (docs/long-runs.md).

    \b
    Examples:
      pdbtool solve examples/korf100.txt
      pdbtool solve examples/8puzzle.txt --heuristic manhattan --format json
      pdbtool solve examples/korf100.txt --partition 15-6-6-3 --jobs 2 --format csv > out.csv
      pdbtool solve examples/korf100.txt --partition 15-6-6-3 --blank ignored --encoding mod3
      pdbtool solve examples/korf24.txt --threads 2 --time-limit 600
      pdbtool solve examples/korf100.txt --ray auto
      pdbtool solve examples/korf100.txt --jobs 2 --format json --output korf100.json --resume
      pdbtool solve examples/korf24.txt --threads 2 --checkpoint korf24.ckpt
    """
    start = time.perf_counter()
    from ..puzzle.board import Board
    from ..puzzle.instances import load_instances
    from ..search.solver import SolveOptions, SolverPool

    board = Board.parse(board_dims, goal) if board_dims else None
    entry = registry.HEURISTICS[heuristic]
    if not entry.partition and partition is not None:
        raise click.UsageError(f"--partition applies to --heuristic {_ones_with('partition')} only")
    if not entry.dynamic and dynamic is not None:
        raise click.UsageError(f"--dynamic applies to --heuristic {_ones_with('dynamic')} only")
    if not entry.encodings and (encoding != registry.DEFAULT_ENCODING or group is not None):
        raise click.UsageError(f"--encoding and --group apply to --heuristic {_ones_with('encodings')} only")
    if not entry.partition and blank != registry.DEFAULT_BLANK:
        raise click.UsageError(f"--blank applies to --heuristic {_ones_with('partition')} only")
    if ray_address is not None and jobs > 1:
        raise click.UsageError("--jobs does not apply with --ray (the cluster's CPUs are the workers)")
    if resume and output is None:
        raise click.UsageError("--resume applies with --output FILE")
    if checkpoint is not None and jobs > 1:
        raise click.UsageError("--checkpoint follows one search at a time: use --threads, not --jobs")
    if fsm_depth is not None and pruning == "parent":
        raise click.UsageError("--fsm-depth applies with --pruning fsm")
    if encoding != "byte" or group is not None:
        from ..heuristics.encoded import check_encoding

        check_encoding(encoding, blank, group)   # one line for the user before any instance is read
    if board is None and partition is not None and entry.partition:
        from ..tables.resolve import resolve_partition

        board = resolve_partition(partition, None, goal).board   # the instances' board, as --help says
    items = load_instances(instances, board, goal)
    if not items:
        say(f"{instances if instances != '-' else '<stdin>'}: no instances")
    options = SolveOptions(heuristic=heuristic, blank=blank, encoding=encoding, group=group, pruning=pruning,
                           fsm_depth=fsm_depth, partition=partition, reflect=not no_reflect,
                           cache_dir=cache_dir, time_limit=time_limit, dynamic=dynamic,
                           threads=threads if threads > 1 else None, search_threads=threads,
                           checkpoint=checkpoint, checkpoint_every=checkpoint_every)
    pool = SolverPool(options, say) if ray_address is None else None
    results_file = None
    todo = items
    if output is not None:
        from ..search.results_file import ResultsFile

        labels = pool.labels(items) if pool is not None else {}
        results_file = ResultsFile.open(output, fmt, items, labels, resume)
        todo = [inst for inst in items if not results_file.holds(inst)]
        if resume:
            say(f"{output}: {len(results_file.held)} of {len(items)} instances done, {len(todo)} to solve")
    try:
        if checkpoint is not None:
            from ..search.checkpoint import check_batch

            check_batch(checkpoint, todo)
        _solve(todo, options, pool, fmt, results_file, jobs, ray_address, show_progress, start)
    finally:
        if results_file is not None:
            results_file.close()


def _solve(items, options, pool, fmt, results_file, jobs, ray_address, show_progress, start):
    """Solve ``items``, write their results (to ``results_file`` as they end, else to stdout in input order)
    and the summary; exit 1 when a result failed, 4 when a worker process was killed twice on one."""
    from ..puzzle.instances import ResultWriter, summarize, text_summary
    from ..search.solver import solve_batch

    writer = ResultWriter(sys.stdout, fmt) if results_file is None else None
    results = []
    bar = None
    interrupted = None
    held = len(results_file.held) if results_file is not None else 0
    if items:
        from tqdm import tqdm

        bar = tqdm(total=len(items) + held, initial=held, desc="solve", unit=" instance", file=sys.stderr,
                   disable=None, leave=False)
    live = bar is not None and not bar.disable
    batch = BatchProgress(len(items) + held, held, bar if live else None, show_progress)
    stream = None

    def done(index, result):
        if results_file is not None:
            results_file.write(result)
        batch(result)

    # Ray's driver prints the cluster's errors ("A worker died ...") on sys.stdout, from a thread of its own,
    # until the session ends in stream.close(): send them to stderr, stdout is for results (the writer holds
    # the real stdout).
    ray_prints = contextlib.redirect_stdout(sys.stderr) if ray_address is not None else contextlib.nullcontext()
    with ray_prints:
        try:
            progress = ProgressLine(bar if live else None)
            from ..analysis.eta import IterationForecast
            progress.forecast = IterationForecast(options)  # the iteration's predicted nodes and time left
            if ray_address is None:
                stream = solve_batch(items, options, jobs=jobs, notify=say, progress=progress, done=done, pool=pool)
            else:
                from ..search import ray_backend

                stream = ray_backend.solve_batch(items, options, address=ray_address, notify=say, progress=progress)
            for result in stream:
                results.append(result)
                if ray_address is not None:
                    done(len(results) - 1, result)
                if result.error is not None:
                    if bar is not None:
                        bar.clear()
                    say(result.error)
                if writer is not None:
                    writer.write(result)
        except Interrupted as exc:  # report what was solved, then let the entry point exit 128 + signal
            interrupted = exc
        finally:
            if bar is not None:
                bar.close()
            if stream is not None:
                stream.close()  # stops the work still running (worker processes, Ray tasks)
    stopped = items[len(results)] if interrupted is not None and len(results) < len(items) else None
    not_reached = len(items) - len(results) - 1 if stopped is not None else 0
    wall = time.perf_counter() - start
    if results_file is not None:
        everything = results_file.results
        if stopped is not None:  # the instances that ended after it were written: not "not reached"
            not_reached = len(items) - len(results_file.written) - 1
        summary = results_file.write_summary(wall, stopped, not_reached, sys.stderr)
        if fmt != "csv":
            sys.stderr.write(text_summary(summary) + "\n")
    else:
        everything = results
        if stopped is not None:
            writer.write_interrupted(stopped)
        writer.write_summary(summarize(results, wall, stopped, not_reached), sys.stderr)
    if interrupted is not None:
        interrupted.note = ""  # the results above say what was kept
        raise interrupted
    if batch_status(everything):
        sys.exit(batch_status(everything))


def _ones_with(attribute: str) -> str:
    return " and ".join(registry.heuristics_with(attribute))


class BatchProgress:
    """Progress of a batch: instances done of all, failed, and the time left at the rate so far; in the
    bar's description on a terminal, else (when ``asked``) a plain line on stderr at most every ``every``
    seconds."""

    def __init__(self, total: int, held: int, bar, asked: bool, every: float = 10.0):
        self.total, self.held, self.bar, self.asked, self.every = total, held, bar, asked, every
        self.done = self.failed = 0
        self.start = self.last = time.perf_counter()

    def text(self, now: float) -> str:
        elapsed = now - self.start
        finished = self.held + self.done
        left = elapsed / self.done * (self.total - finished) if self.done else None
        return (f"{finished} of {self.total} instances done, {self.failed} failed, {elapsed:.0f} s"
                + (f", ~{left:.0f} s left" if left is not None and finished < self.total else ""))

    def __call__(self, result) -> None:
        self.done += 1
        self.failed += result.error is not None
        now = time.perf_counter()
        if self.bar is not None:
            self.bar.set_description_str(f"solve ({self.failed} failed)" if self.failed else "solve")
            self.bar.update(1)
        elif self.asked and (now - self.last >= self.every or self.held + self.done == self.total):
            self.last = now
            say(self.text(now))


class ProgressLine:
    """Progress of a long search: bound, nodes generated, nodes per second and elapsed time of the instance;
    on the bar's line on a terminal, else a plain line on stderr every ``every`` seconds."""

    def __init__(self, bar, every: float = 30.0):
        self.bar = bar
        self.every = every
        self.inst = None
        self.start = self.last = 0.0

    forecast = None  # an analysis.eta.IterationForecast

    def text(self, inst, bound, generated, elapsed, workers=None) -> str:
        rate = generated / elapsed if elapsed > 0 else 0.0
        return (f"{inst.id}: bound {bound}, {generated:,} nodes generated, {rate / 1e6:.1f} M nodes/s, "
                f"{elapsed:.0f} s" + (f", {workers} workers" if workers else "")
                + (self.forecast.text(inst, bound, generated, elapsed) if self.forecast is not None else ""))

    def __call__(self, inst, bound, generated, expanded, workers=None):
        Interrupted.raise_dropped()
        if self.forecast is not None:
            self.forecast.observe(inst, bound, generated)
        now = time.perf_counter()
        if inst is not self.inst:
            self.inst, self.start, self.last = inst, now, now
        elapsed = now - self.start
        if self.bar is not None:
            self.bar.set_postfix_str(self.text(inst, bound, generated, elapsed, workers), refresh=True)
        elif now - self.last >= self.every:
            self.last = now
            say(self.text(inst, bound, generated, elapsed, workers))

