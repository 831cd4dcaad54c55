"""``pdbtool plan``: the best partition or catalogue of pattern tables for a memory budget."""

from __future__ import annotations

import contextlib
import json
import sys
import time

import click

from .. import registry
from ._common import (BadValue, board_option, cache_dir_option, format_option, goal_option, output_option,
                      progress_option, seed_option, threads_option_for, user_errors, write_csv)


def _parsed(parser_name: str):
    """A Click callback that reads an option with ``plan.files``'s parser of that name (imported when used,
    so that ``--help`` stays light), its error said as the option's."""
    def callback(ctx, param, value):
        if value is None:
            return None
        from ..plan import files
        from ..plan.space import PlanError

        try:
            return getattr(files, parser_name)(value)
        except PlanError as exc:
            raise BadValue(f"{param.opts[0]} {exc}") from None

    return callback


_size, _duration = _parsed("parse_size"), _parsed("parse_duration")


@click.command("plan")
@board_option
@goal_option
@click.option("--memory", required=True, callback=_size, metavar="SIZE",
              help="Memory the tables may take where the search runs (8G, 512M, 2GiB).")
@click.option("--build-memory", callback=_size, default=None, metavar="SIZE",
              help="Memory one build may make, here, where the plan builds its tables (default: what the machine "
                   "has free when the plan starts; kept on resume).")
@click.option("--build-time", callback=_duration, default=None, metavar="DURATION",
              help="Estimated wall time the plan's builds may take (90, 30m, 2h; default: no limit).")
@click.option("--plan-time", callback=_duration, default=None, metavar="DURATION",
              help="Time the planning may take, resumed runs included (default: until no neighbour improves).")
@click.option("--blank", type=click.Choice(["minimized", "ignored"]), default=registry.DEFAULT_BLANK,
              show_default=True, help="Blank rule of the tables.")
@click.option("--encodings", default=None, metavar="E,E",
              help="Encodings to choose among (default: byte,nibble; with --blank ignored also mod3).")
@click.option("--no-reflect", is_flag=True, help="Plan for a search without the diagonal reflection.")
@click.option("--reference", default="manhattan", show_default=True, metavar="manhattan|ddb|NAME|FILE",
              help="The heuristic the predicted nodes are relative to (a partition's tables are built if missing).")
@click.option("--samples", "-n", type=click.IntRange(1000, 10**8), default=100_000, show_default=True,
              help="Random states the candidates are scored on (one sample for all).")
@click.option("--check-samples", type=click.IntRange(0, 10**8), default=None,
              help="Fresh random states the search's best few are scored on again, the plan being the best there "
                   "(default: as many as --samples; 0: no check).")
@seed_option(0, "Seed of the sample and of the search's order.")
@click.option("--strategy", type=click.Choice(["auto", "climb", "exhaustive"]), default="auto", show_default=True,
              help="exhaustive: every single partition within the budget; climb: hill climbing; auto: "
                   "exhaustive where that space is small.")
@click.option("--max-partitions", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Most partitions in a catalogue (1: a partition file).")
@output_option("The partition or catalogue file to write (default: stdout).")
@click.option("--state", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="State file of the search, to resume a stopped plan (default: FILE.state beside --output).")
@cache_dir_option
@threads_option_for("Threads of the builds (default: all).")
@progress_option
@format_option("Of the summary on stdout (with --output) or stderr (the file on stdout): text, a JSON object, or "
               "CSV (a header and a row).")
@user_errors
def command(board_dims, goal, memory, build_memory, build_time, plan_time, blank, encodings, no_reflect, reference,
            samples, seed, check_samples, strategy, max_partitions, output, state, cache_dir, threads, show_progress,
            fmt):
    """Search partitions of the board's tiles into pattern tables (groups of any sizes, several partitions
    under a max, compact encodings) for the one with the fewest predicted IDA* nodes whose tables fit
    --memory, and write it as a partition or catalogue file that build and solve take.

    The score is Korf, Reid & Edelkamp's predicted nodes of an iteration from a random start, relative to
    --reference, from the distribution of h over one sample of random states.  The built-in partitions
    are among the candidates.  A stopped plan resumes from its state file.

    \b
    Examples:
      pdbtool plan --board 4x4 --memory 600M -o 15-600M.txt --progress
      pdbtool plan --board 3x4 --memory 1M --strategy exhaustive
      pdbtool plan --board 6x6 --memory 320M --plan-time 2h -o 35-320M.txt
      pdbtool build --partition 15-600M.txt && pdbtool solve examples/korf100.txt --partition 15-600M.txt
    """
    from pathlib import Path

    from ..errors import PdbtoolError
    from ..plan import run as planning
    from ..puzzle.board import Board

    if not board_dims:
        raise PdbtoolError("give --board WxH")
    board = Board.parse(board_dims, goal)
    chosen = tuple(e.strip() for e in encodings.split(",") if e.strip()) if encodings else None
    state_path = Path(state) if state else (Path(output + ".state") if output else None)
    last = [0.0]

    def progress(text: str, final: bool = False) -> None:
        now = time.monotonic()
        if show_progress and (final or now - last[0] >= 1.0):
            last[0] = now
            click.echo(f"\r\033[Kplan: {text}", err=True, nl=final)

    options = planning.PlanOptions(board=board, memory=memory, build_seconds=build_time, plan_seconds=plan_time,
                                   blank=blank, encodings=chosen, reflect=not no_reflect, reference=reference,
                                   samples=samples, seed=seed, strategy=strategy, max_members=max_partitions,
                                   cache_dir=cache_dir, threads=threads, build_memory=build_memory,
                                   check_samples=check_samples)
    outcome = planning.plan(options, state_path, progress=progress)
    progress(outcome.progress_text(), final=True)
    text = outcome.file_text(output or "FILE")
    if output:
        Path(output).write_text(text)
    else:
        sys.stdout.write(text)
    summary_err = output is None
    if fmt == "json":
        click.echo(json.dumps(outcome.to_dict(output)), err=summary_err)
    elif fmt == "csv":
        if summary_err:
            with contextlib.redirect_stdout(sys.stderr):
                write_csv([outcome.to_dict(output)])
        else:
            write_csv([outcome.to_dict(output)])
    else:
        click.echo("\n".join(outcome.summary_lines(output)), err=summary_err)
