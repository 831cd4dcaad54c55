"""The ``pdbtool`` command line: a thin Click shell over the library.

Each command name is dispatched to the command of a domain (:mod:`pdbtool.domains`, :mod:`._dispatch`); a
domain's commands are imported only when invoked, so that ``pdbtool --help`` stays light (Numba kernels
load only where a command needs them).
"""

from __future__ import annotations

import sys

import click

from .._version import __version__
from ._common import EXIT_STATUSES, Interrupted

# the shared command names, each with its one-line help shown by `pdbtool --help`; each domain
# (pdbtool.domains) has its own command for some of them, chosen by --domain or by the files given
COMMANDS = {
    "build": "Build pattern-database tables into the cache.",
    "convert": "Re-encode byte tables compactly (nibble, mod3, parity, min-nibble, sparse).",
    "inspect": "Show a table's header, size, checksum status and distance histogram.",
    "plan": "Find the partition or catalogue of tables with the fewest predicted nodes for a memory budget.",
    "predict": "Predict IDA*'s nodes per iteration (Korf, Reid & Edelkamp) from a heuristic's sample.",
    "random": "Write instance files of random solvable states or random walks.",
    "sample": "The distribution of a heuristic's values over random (or all) solvable states.",
    "solve": "Solve instances optimally with IDA*.",
    "verify": "Check tables: format, checksum, identity, value consistency, optional rebuild.",
}


class LazyGroup(click.Group):
    """A group whose commands are imported on first use, from the domain the arguments select."""

    def list_commands(self, ctx):
        return list(COMMANDS)

    def get_command(self, ctx, name):
        if name not in COMMANDS:
            return None
        from ._dispatch import DomainDispatch

        return DomainDispatch(name, COMMANDS[name])

    def format_commands(self, ctx, formatter):
        rows = [(name, COMMANDS[name]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def format_epilog(self, ctx, formatter):
        with formatter.section("Exit status (every command)"):
            formatter.write_dl(EXIT_STATUSES)
        super().format_epilog(ctx, formatter)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="pdbtool")
def cli():
    """Additive pattern databases for the sliding-tile puzzles, and optimal IDA* solving."""


def _interrupt(signum, frame):
    raise Interrupted(signum)


def _keep_dropped(default_hook):
    """An unraisable hook: an Interrupted that a callback could not raise (ctypes callbacks drop their
    exceptions) is kept for later instead of printed as a traceback."""

    def hook(info):
        if isinstance(info.exc_value, Interrupted):
            Interrupted.dropped.append(info.exc_value.signum)
        else:
            default_hook(info)

    return hook


def _quiet(info):
    """The unraisable hook while an interrupted command exits: nothing but its one line is printed."""


def main(argv=None):
    """Entry point of the console script: errors are one line on stderr, never a traceback."""
    import gc
    import signal

    Interrupted.dropped.clear()
    default_hook = sys.unraisablehook
    sys.unraisablehook = _keep_dropped(default_hook)
    previous = {}
    try:
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous[signum] = signal.signal(signum, _interrupt)
    except ValueError:  # not the main thread: leave signals alone
        pass
    status = None
    try:
        return cli.main(args=argv, prog_name="pdbtool", standalone_mode=True)
    except (Interrupted, KeyboardInterrupt) as exc:
        signum = getattr(exc, "signum", signal.SIGINT)
        note = getattr(exc, "note", Interrupted.note)
        how = "interrupted" if signum == signal.SIGINT else "terminated"
        click.echo(f"pdbtool: {how}" + (f"; {note}" if note else ""), err=True)
        status = 128 + signum
        # The signal may have stopped an object half way through its constructor (llvmlite's, while Numba
        # compiles or loads a kernel), and its destructor fails when the traceback's frames let it go: the
        # frames go here and now, quietly, rather than at exit through the default hook.
        sys.unraisablehook = _quiet
    except SystemExit:
        # a dropped signal that no progress callback raised again: the command ran to its end
        if Interrupted.dropped:
            signum = Interrupted.dropped.pop()
            click.echo(f"pdbtool: {'interrupted' if signum == signal.SIGINT else 'terminated'}", err=True)
            sys.exit(128 + signum)
        raise
    finally:
        if status is not None:
            gc.collect()
        sys.unraisablehook = default_hook
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    sys.exit(status)
