"""``pdbtool solve``: solve instance files optimally with IDA*."""

from __future__ import annotations

import contextlib
import sys
import time

import click

from ..tables.dynamic_sets import DYNAMIC_SETS
from ._common import Interrupted, board_option, cache_dir_option, goal_option, say, user_errors


@click.command("solve")
@click.argument("instances", metavar="INSTANCES", type=click.Path(allow_dash=True, dir_okay=False))
@board_option
@goal_option
@click.option("--partition", default=None, metavar="NAME|FILE",
              help="Partition for the pdb heuristic (default: 15-7-8 on 4x4, 24-6-6-6-6 on 5x5).")
@click.option("--heuristic", type=click.Choice(["pdb", "manhattan", "linear-conflict", "ddb", "max"]), default="pdb",
              show_default=True, help="Heuristic of the search (ddb: pairs/triples with a vertex cover; "
                                      "max: the larger of pdb and ddb).")
@click.option("--dynamic", type=click.Choice(DYNAMIC_SETS), default=None,
              help="Tables of ddb and max (default: pairs+triples).")
@click.option("--no-reflect", is_flag=True, help="Do not take the max with the diagonal reflection.")
@click.option("--blank", type=click.Choice(["minimized", "ignored"]), default="minimized", show_default=True,
              help="Blank rule of the pattern tables (mod3 and parity need ignored).")
@click.option("--encoding", type=click.Choice(["byte", "nibble", "mod3", "parity", "min-nibble", "sparse"]),
              default="byte", show_default=True,
              help="Encoding of the pattern tables (converted from byte tables if absent; pdb only).")
@click.option("--group", type=int, default=None, metavar="C", help="Group size of min-nibble (a power of two).")
@click.option("--jobs", "-j", type=click.IntRange(1, 256), default=1, show_default=True,
              help="Solve instances in this many processes (they share the memory-mapped tables).")
@click.option("--threads", type=click.IntRange(1, 1024), default=1, show_default=True,
              help="Threads searching one instance (each iteration's subtrees are shared out), also used "
                   "to build missing tables.")
@click.option("--time-limit", type=click.FloatRange(min=0, min_open=True), default=None, metavar="SECONDS",
              help="Give up an instance after this many seconds of search (reported as unsolved).")
@click.option("--ray", "ray_address", is_flag=False, flag_value="local", default=None, metavar="[ADDRESS]",
              help="Solve on a Ray cluster (ADDRESS: auto, ray://host:10001); without ADDRESS on a local Ray "
                   "instance started for the run.  Needs: pip install 'pdbtool[ray]'.")
@cache_dir_option
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv"]), default="text", show_default=True,
              help="text: a line per instance and a summary; json: JSON Lines; csv: a row per instance.")
@user_errors
def command(instances, board_dims, goal, partition, heuristic, dynamic, no_reflect, jobs, threads, time_limit,
            cache_dir, fmt, blank, encoding, group, ray_address):
    """Solve the instances of a file (or - for stdin) optimally with IDA*.

    A line holds the tile in each cell, row by row (0 = blank), optionally preceded by an id; '#' starts a
    comment.  A trailing '# optimal N' is checked against the length found.  The exit status is 1 when any
    line failed (bad input, wrong optimal length), 0 otherwise; instances that hit --time-limit are
    reported as unsolved and do not fail the run.  A long search shows its bound, nodes, nodes per second
    and elapsed time on stderr (live on a terminal, else a line every 30 seconds).

    \b
    Examples:
      pdbtool solve examples/korf100.txt
      pdbtool solve examples/8puzzle.txt --heuristic manhattan --format json
      pdbtool solve examples/korf100.txt --partition 15-6-6-3 --jobs 2 --format csv > out.csv
      pdbtool solve examples/korf100.txt --partition 15-6-6-3 --blank ignored --encoding mod3
      pdbtool solve examples/korf24.txt --threads 2 --time-limit 600
      pdbtool solve examples/korf100.txt --ray auto
    """
    start = time.perf_counter()
    from ..puzzle.board import Board
    from ..puzzle.instances import ResultWriter, load_instances, summarize
    from ..search.solver import SolveOptions, solve_batch

    board = Board.parse(board_dims, goal) if board_dims else None
    if heuristic not in ("pdb", "max") and partition is not None:
        raise click.UsageError("--partition applies to --heuristic pdb and max only")
    if heuristic not in ("ddb", "max") and dynamic is not None:
        raise click.UsageError("--dynamic applies to --heuristic ddb and max only")
    if heuristic != "pdb" and (encoding != "byte" or group is not None):
        raise click.UsageError("--encoding and --group apply to --heuristic pdb only")
    if heuristic not in ("pdb", "max") and blank != "minimized":
        raise click.UsageError("--blank applies to --heuristic pdb and max only")
    if ray_address is not None and jobs > 1:
        raise click.UsageError("--jobs does not apply with --ray (the cluster's CPUs are the workers)")
    if encoding != "byte" or group is not None:
        from ..heuristics.encoded import check_encoding

        check_encoding(encoding, blank, group)   # one line for the user before any instance is read
    items = load_instances(instances, board, goal)
    if not items:
        say(f"{instances if instances != '-' else '<stdin>'}: no instances")
    options = SolveOptions(heuristic=heuristic, blank=blank, encoding=encoding, group=group,
                           partition=partition, reflect=not no_reflect,
                           cache_dir=cache_dir, time_limit=time_limit, dynamic=dynamic,
                           threads=threads if threads > 1 else None, search_threads=threads)
    writer = ResultWriter(sys.stdout, fmt)
    results = []
    bar = None
    interrupted = None
    if items:
        from tqdm import tqdm

        bar = tqdm(total=len(items), desc="solve", unit=" instance", file=sys.stderr, disable=None, leave=False)
    stream = None
    # Ray's driver prints the cluster's errors ("A worker died ...") on sys.stdout, from a thread of its own,
    # until the session ends in stream.close(): send them to stderr, stdout is for results (the writer holds
    # the real stdout).
    ray_prints = contextlib.redirect_stdout(sys.stderr) if ray_address is not None else contextlib.nullcontext()
    with ray_prints:
        try:
            live = bar is not None and not bar.disable
            progress = ProgressLine(bar if live else None)
            if ray_address is None:
                stream = solve_batch(items, options, jobs=jobs, notify=say, progress=progress)
            else:
                from ..search import ray_backend

                stream = ray_backend.solve_batch(items, options, address=ray_address, notify=say, progress=progress)
            for result in stream:
                results.append(result)
                if result.error is not None:
                    if bar is not None:
                        bar.clear()
                    say(result.error)
                writer.write(result)
                if bar is not None:
                    bar.update(1)
        except Interrupted as exc:  # report what was solved, then let the entry point exit 128 + signal
            interrupted = exc
        finally:
            if bar is not None:
                bar.close()
            if stream is not None:
                stream.close()  # stops the work still running (worker processes, Ray tasks)
    stopped = items[len(results)] if interrupted is not None and len(results) < len(items) else None
    if stopped is not None:
        writer.write_interrupted(stopped)
    writer.write_summary(summarize(results, time.perf_counter() - start, stopped,
                                   len(items) - len(results) - 1 if stopped is not None else 0), sys.stderr)
    if interrupted is not None:
        interrupted.note = ""  # the results above say what was kept
        raise interrupted
    if any(r.error is not None for r in results):
        sys.exit(1)


class ProgressLine:
    """Progress of a long search: bound, nodes generated, nodes per second and elapsed time of the instance;
    on the bar's line on a terminal, else a plain line on stderr every ``every`` seconds."""

    def __init__(self, bar, every: float = 30.0):
        self.bar = bar
        self.every = every
        self.inst = None
        self.start = self.last = 0.0

    def text(self, inst, bound, generated, elapsed, workers=None) -> str:
        rate = generated / elapsed if elapsed > 0 else 0.0
        return (f"{inst.id}: bound {bound}, {generated:,} nodes generated, {rate / 1e6:.1f} M nodes/s, "
                f"{elapsed:.0f} s" + (f", {workers} workers" if workers else ""))

    def __call__(self, inst, bound, generated, expanded, workers=None):
        Interrupted.raise_dropped()
        now = time.perf_counter()
        if inst is not self.inst:
            self.inst, self.start, self.last = inst, now, now
        elapsed = now - self.start
        if self.bar is not None:
            self.bar.set_postfix_str(self.text(inst, bound, generated, elapsed, workers), refresh=True)
        elif now - self.last >= self.every:
            self.last = now
            say(self.text(inst, bound, generated, elapsed, workers))


from ._hanoi4 import with_domains  # noqa: E402  (--domain hanoi4 hands the arguments to that domain)

command = with_domains(command)
