"""Options and error handling shared by the commands."""

from __future__ import annotations

import functools
import sys
from contextlib import contextmanager

import click

from ..errors import PdbtoolError


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


class UserError(click.ClickException):
    """A one-line ``pdbtool: message`` on stderr and exit status 1 (like the per-line errors of solve)."""

    def show(self, file=None):
        click.echo(f"pdbtool: {self.format_message()}", err=True)


def user_errors(func):
    """Turn library errors into a one-line message on stderr and exit status 1 (never a traceback)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
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
    click.echo(f"pdbtool: {message}", err=True)


cache_dir_option = click.option(
    "--cache-dir", type=click.Path(file_okay=False), default=None,
    help="Table cache directory (default: $PDBTOOL_CACHE_DIR or the user cache dir).")
board_option = click.option("--board", "board_dims", default=None, metavar="WxH",
                            help="Board size, e.g. 4x4 (default: from the partition).")
goal_option = click.option("--goal", default=None, metavar="GOAL",
                           help="'korf' (default), 'blank-last', or the goal's tiles cell by cell.")
blank_option = click.option("--blank", type=click.Choice(["minimized", "ignored", "zero-aware"]), default="minimized",
                            show_default=True, help="Blank rule of the abstraction.")
encoding_option = click.option(
    "--encoding", type=click.Choice(["byte", "nibble", "mod3", "parity", "min-nibble", "sparse"]), default="byte",
    show_default=True, help="How the table is stored (mod3 and parity need --blank ignored).")
group_option = click.option("--group", type=int, default=None, metavar="C",
                            help="min-nibble: ranks per group (a power of two).")
threads_option = click.option("--threads", type=click.IntRange(1, 1024), default=None,
                              help="Threads for the build (default: all cores).")


def progress_bar(description: str):
    """A tqdm bar on stderr (shown only on a terminal) fed by a builder's per-layer callback
    ``update(depth, states, done)``: the layer, states per second and, from the fraction ``done`` of the
    state space reached, an estimate of the time left (the work of a layer follows its states)."""
    import time

    from tqdm import tqdm

    bar = tqdm(desc=description, unit=" layer", file=sys.stderr, disable=None, leave=False)
    start = time.perf_counter()
    total = [0]

    def update(depth: int, states: int, done: float | None = None) -> None:
        Interrupted.raise_dropped()
        elapsed = time.perf_counter() - start
        total[0] += states
        text = f"depth {depth}: {states:,} states, {total[0] / max(elapsed, 1e-9):,.0f} states/s"
        if done and elapsed > 0:
            text += f", ~{elapsed * (1 - done) / done:,.0f} s left"
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
