"""Options and error handling shared by the commands."""

from __future__ import annotations

import functools
import json
import os
import signal
import sys
from contextlib import contextmanager

import click

from .. import registry
from ..errors import PdbtoolError, shortened


class Interrupted(BaseException):
    """SIGINT or SIGTERM, raised in the main thread: ``finally`` blocks remove temporary and lock files.

    Not a KeyboardInterrupt, which Click would turn into "Aborted!"; not an Exception, which a command
    might catch.  A Numba kernel is not interrupted: the signal takes effect when it returns (a BFS layer,
    a chunk of search).  ``note`` ends the line the entry point prints; a command that reports what it
    finished (``solve``) clears it."""

    note = "no partial table was kept"
    dropped: list[int] = []  # signals whose exception a callback dropped (llvmlite's, as Numba loads a kernel)

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    @classmethod
    def raise_dropped(cls) -> None:
        """Raise again, at a safe point (a progress callback), a signal whose exception was dropped."""
        if cls.dropped:
            raise cls(cls.dropped.pop())


# Exit statuses, the same for every command (listed by `pdbtool --help`, EXIT_STATUSES)
EXIT_OK = 0
EXIT_FAILED = 1          # the tool could not run, or an instance could not be solved
EXIT_USAGE = 2           # a command line that Click refused
EXIT_DISAGREES = 3       # the results disagree with the file: a length other than its '# optimal', a FAIL of verify
EXIT_WORKER_KILLED = 4   # a worker process of --jobs was killed twice while solving one instance
EXIT_CLOSED_PIPE = 128 + signal.SIGPIPE  # stdout closed by its reader (as a process killed by SIGPIPE reports)

EXIT_STATUSES = (
    (str(EXIT_OK), "success: every instance solved (or stopped by --time-limit), every table passed"),
    (str(EXIT_FAILED), "the tool could not run, or an instance or a table could not be read: bad input, "
                       "a missing table, an I/O error, a lost cluster"),
    (str(EXIT_USAGE), "bad usage: an unknown option or a value it does not take"),
    (str(EXIT_DISAGREES), "the results disagree with the file: a length other than the line's '# optimal', "
                          "a table that fails verify (this status wins over 1 and 4)"),
    (str(EXIT_WORKER_KILLED), "a worker process of --jobs was killed (by a signal) twice while solving one "
                              "instance (this status wins over 1)"),
    (f"{128 + signal.SIGINT}, {128 + signal.SIGTERM}", "interrupted by SIGINT (Ctrl-C) or SIGTERM; the results "
                                                       "finished so far were written"),
    (str(EXIT_CLOSED_PIPE), "stdout was closed by its reader (pdbtool solve ... | head -1): no message"),
)


class UserError(click.ClickException):
    """A one-line ``pdbtool: message`` on stderr and exit status 1 (like the per-line errors of solve)."""

    exit_code = EXIT_FAILED

    def show(self, file=None):
        click.echo(f"pdbtool: {shortened(self.format_message())}", err=True)


class Disagreement(UserError):
    """A one-line message and exit status 3: the results disagree with what the file says."""

    exit_code = EXIT_DISAGREES


def batch_status(results) -> int:
    """The exit status of a batch of ``SolveResult``: 3 when a solved length differs from the line's
    '# optimal', else 4 when a worker was killed twice on an instance, else 1 when any instance failed,
    else 0."""
    if any(r.solved and r.optimal is not None and r.length != r.optimal for r in results):
        return EXIT_DISAGREES
    if any(getattr(r, "signal", None) is not None for r in results):
        return EXIT_WORKER_KILLED
    return EXIT_FAILED if any(r.error is not None for r in results) else EXIT_OK


def closed_pipe() -> None:
    """Stdout's reader has gone (``| head``): end quietly with the closed pipe's status, as coreutils do.

    Stdout is pointed at /dev/null first, so that flushing it at exit raises nothing more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout without a descriptor (a test's capture)
        pass
    sys.exit(EXIT_CLOSED_PIPE)


def user_errors(func):
    """Turn library errors into a one-line message on stderr and exit status 1 (never a traceback); a
    closed stdout ends the command quietly (:func:`closed_pipe`)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except BrokenPipeError:
            closed_pipe()
        except PdbtoolError as exc:
            raise UserError(str(exc)) from None
        except MemoryError:
            raise UserError("out of memory") from None
        except OSError as exc:
            where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
            raise UserError(f"{where}{exc.strerror or exc}") from None

    return wrapper


def say(message: str) -> None:
    """A note for the user on stderr."""
    click.echo(f"pdbtool: {shortened(message)}", err=True)


cache_dir_option = click.option(
    "--cache-dir", type=click.Path(file_okay=False), default=None,
    help="Table cache directory (default: $PDBTOOL_CACHE_DIR or the user cache dir).")
class BadValue(UserError):
    """A one-line ``pdbtool: message`` on stderr and exit status 2: an option's value that the command does
    not take."""

    exit_code = EXIT_USAGE


def _board_value(ctx, param, value):
    """``--board``: refused with one line and status 2 unless it is WxH with sides of 2 or more and at most
    the supported number of cells."""
    if value is None:
        return None
    from ..puzzle.board import BoardError, parse_dims

    try:
        parse_dims(value)
    except BoardError as exc:
        raise BadValue(str(exc)) from None
    return value


board_option = click.option("--board", "board_dims", default=None, metavar="WxH", callback=_board_value,
                            help="Board size, e.g. 4x4 (default: from the partition).")
goal_option = click.option("--goal", default=None, metavar="GOAL",
                           help="'korf' (default), 'blank-last', or the goal's tiles cell by cell.")
blank_option = click.option("--blank", type=click.Choice(list(registry.BLANK_RULES)), default=registry.DEFAULT_BLANK,
                            show_default=True, help="Blank rule of the abstraction.")
encoding_option = click.option(
    "--encoding", type=click.Choice(list(registry.ENCODINGS)), default=registry.DEFAULT_ENCODING,
    show_default=True, help="How the table is stored (mod3 and parity need --blank ignored).")
group_option = click.option("--group", type=int, default=None, metavar="C",
                            help="min-nibble: ranks per group (a power of two).")
threads_option = click.option("--threads", type=click.IntRange(1, 1024), default=None, metavar="N",
                              help="Threads for the build (default: all cores).")


def table_options(partition_help: str, pattern_help: str):
    """The options that name stored tables (build, convert, inspect): ``--partition`` or ``--pattern``, with
    the board, goal, blank rule, encoding and group they are stored under."""
    options = (click.option("--partition", default=None, metavar="NAME|FILE", help=partition_help),
               click.option("--pattern", default=None, metavar="LIST", help=pattern_help),
               board_option, goal_option, blank_option, encoding_option, group_option)
    return lambda func: functools.reduce(lambda f, option: option(f), reversed(options), func)


def echo_outcomes(outcomes, fmt: str, blank: str, verb: str, line) -> None:
    """A record per table as it is done (:func:`record_printer`), in text the table whose values it shares
    (not ``verb``, e.g. "built") or ``line(record, pattern)``."""
    with record_printer(fmt) as emit:
        for outcome in outcomes:
            record, p = outcome.record, outcome.pattern
            emit(record, f"{{{p}}} on {p.board.dims} ({blank}): not {verb}, {outcome.shared.describe()}"
                 if outcome.shared is not None else line(record, p))


def progress_bar(description: str):
    """A tqdm bar on stderr (shown only on a terminal) fed by a builder's per-layer callback
    ``update(depth, states, done)``: the layer, states per second and, from the fraction ``done`` of the
    state space reached, an estimate of the time left (the work of a layer follows its states).  A resumed
    build first reports no states and the fraction it starts from, so that the estimate counts only the
    work done since."""
    import time

    from tqdm import tqdm

    bar = tqdm(desc=description, unit=" layer", file=sys.stderr, disable=None, leave=False)
    start = time.perf_counter()
    total = [0]
    base = [0.0, start]  # the fraction done when the work began, and when: a resumed build says its own

    def update(depth: int, states: int, done: float | None = None) -> None:
        Interrupted.raise_dropped()
        now = time.perf_counter()
        if states == 0 and total[0] == 0 and done is not None:  # a resumed build: where it starts
            base[:] = [done, now]
            return
        total[0] += states
        text = f"depth {depth}: {states:,} states, {total[0] / max(now - start, 1e-9):,.0f} states/s"
        elapsed = now - base[1]
        if done and done > base[0] and elapsed > 0:
            text += f", ~{elapsed * (1 - done) / (done - base[0]):,.0f} s left"
        bar.set_postfix_str(text)
        bar.update(1)

    return bar, update


@contextmanager
def layer_progress(description: str):
    """:func:`progress_bar` as a context: yields the per-layer callback, closes the bar on the way out."""
    bar, update = progress_bar(description)
    try:
        yield update
    finally:
        bar.close()


class FiniteFloat(click.FloatRange):
    """A float option that refuses NaN and the infinities (a NaN passes every range check: a --time-limit of
    nan set no limit, a --checkpoint-every of nan wrote no checkpoint)."""

    name = "finite float"

    def convert(self, value, param, ctx):
        import math

        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


def finite_float(min: float | None = None, min_open: bool = False) -> FiniteFloat:
    """A :class:`FiniteFloat` type: a finite number, above ``min`` when given (``min_open``: strictly)."""
    return FiniteFloat(min=min, min_open=min_open)


# --- options shared by the commands of every domain: spelled here once ------------------------------------

FORMATS = ("text", "json", "csv")


def format_option(help_text: str = "text: lines for people; json: JSON Lines, an object per record; "
                                   "csv: a header, then a row per record."):
    """``--format text|json|csv`` (the parameter ``fmt``), and ``--json``, its hidden alias kept for one
    release (the same as ``--format json``)."""

    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args, json_alias=False, **kwargs):
            if json_alias:
                if kwargs.get("fmt") == "csv":
                    raise BadValue("--json is --format json: give --format csv or --json, not both")
                kwargs["fmt"] = "json"
                if sys.stderr.isatty():
                    say("--json is deprecated: give --format json (the same output)")
            return func(*args, **kwargs)

        wrapper = click.option("--json", "json_alias", is_flag=True, hidden=True,
                               help="The same as --format json (deprecated).")(wrapper)
        return click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
                            help=help_text)(wrapper)

    return decorate


def csv_cell(value) -> object:
    """A record's value in a CSV cell: None empty, a list of numbers or words space-separated, anything
    else nested as JSON."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)) and all(isinstance(v, (int, float, str)) and not isinstance(v, bool)
                                                for v in value):
        return " ".join(str(v) for v in value)
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value)
    return value


def write_csv(records: list[dict]) -> None:
    """``records`` as CSV on stdout: a header of every key, in the order first seen, then a row each."""
    import csv
    import io

    columns: dict[str, None] = {}
    for r in records:
        columns.update(dict.fromkeys(r))
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    for r in records:
        writer.writerow({k: csv_cell(v) for k, v in r.items()})
    click.echo(text.getvalue(), nl=False)


@contextmanager
def record_printer(fmt: str):
    """Yields ``emit(record, text=None)``, which prints a record as the command ends it: ``text`` (a line
    or lines; nothing when None) in the text format, the record as a JSON line in json; csv collects the
    records and writes them when the block ends (its header needs every record's keys)."""
    rows: list[dict] = []

    def emit(record: dict, text: str | None = None) -> None:
        if fmt == "json":
            click.echo(json.dumps(record))
        elif fmt == "csv":
            rows.append(record)
        elif text is not None:
            click.echo(text)

    try:
        yield emit
    finally:
        if rows:
            write_csv(rows)


def seed_option(default: int | None, help_text: str):
    return click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=default,
                        show_default=default is not None, metavar="SEED", help=help_text)


def threads_option_for(help_text: str, default: int | None = None):
    return click.option("--threads", type=click.IntRange(1, 1024), default=default,
                        show_default=default is not None, metavar="N", help=help_text)


def output_option(help_text: str):
    return click.option("--output", "-o", type=click.Path(dir_okay=False), default=None, metavar="FILE",
                        help=help_text)


jobs_option = click.option("--jobs", "-j", type=click.IntRange(1, 256), default=1, show_default=True, metavar="N",
                           help="Solve instances in this many processes.")
time_limit_option = click.option(
    "--time-limit", type=finite_float(min=0, min_open=True), default=None, metavar="SECONDS",
    help="Give up an instance after this many seconds of search (reported as unsolved).")
resume_option = click.option("--resume", is_flag=True,
                             help="With --output: re-check the results FILE holds and solve only the instances it "
                                  "lacks, or whose held result fails its check, or that were unsolved or failed.")
progress_option = click.option("--progress", "show_progress", is_flag=True,
                               help="Progress lines on stderr even when it is not a terminal.")
ray_option = click.option(
    "--ray", "ray_address", is_flag=False, flag_value="local", default=None, metavar="[ADDRESS]",
    help="Solve on a Ray cluster (ADDRESS: auto, ray://host:10001); without ADDRESS on a local Ray instance "
         "started for the run.  Needs: pip install 'pdbtool[ray]'.")
