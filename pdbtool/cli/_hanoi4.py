"""The ``--domain hanoi4`` side of ``build``, ``inspect``, ``verify`` and ``solve``: the four-peg Towers of
Hanoi (library: :mod:`pdbtool.hanoi4`).

Each shared command is wrapped by :func:`with_domains`: its arguments are read by the tile command, or,
when they hold ``--domain hanoi4``, by this module's command of the same name.  The tile command keeps
its own options untouched and gains ``--domain`` only.
"""

from __future__ import annotations

import json
import sys

import click

from .. import registry
from ..errors import PdbtoolError
from ._checks import check_options, raise_on_failures
from ._common import EXIT_USAGE, UserError, cache_dir_option, layer_progress, say, user_errors

DOMAINS = ("tile", "hanoi4")


class UsageLine(UserError):
    """A one-line message and exit status 2: an option value this domain does not take."""

    exit_code = EXIT_USAGE


def _domain_param(default: str) -> click.Option:
    return click.Option(["--domain"], type=click.Choice(DOMAINS), default=default, show_default=True,
                        expose_value=False,
                        help="tile: sliding-tile puzzles; hanoi4: the four-peg Towers of Hanoi "
                             "(see --domain hanoi4 --help).")


def _domain_option(default: str):
    def decorate(f):
        f.__dict__.setdefault("__click_params__", []).append(_domain_param(default))
        return f
    return decorate


def _wants_hanoi(args: list[str], files_tell: bool = False) -> bool:
    """Whether the arguments ask for the hanoi4 domain (``--domain hanoi4``; with ``files_tell``, also a
    hanoi4 table file among them)."""
    for i, a in enumerate(args):
        if a == "--":
            return False
        if a == "--domain" and i + 1 < len(args):
            return args[i + 1] == "hanoi4"
        if a.startswith("--domain="):
            return a.split("=", 1)[1] == "hanoi4"
    if files_tell:
        import os

        return any(not a.startswith("-") and os.path.isfile(a) and _is_hanoi_file(a) for a in args)
    return False


def _is_hanoi_file(path: str) -> bool:
    """Whether a file's header says hanoi4 (read without the domain's Numba kernels)."""
    from ..tables import fileformat

    try:
        header, _ = fileformat.read_header(path)
    except fileformat.TableFileError:
        return False
    return header.get("kind") == "hanoi4"


class DomainCommand(click.Command):
    """A tile command that hands its arguments to the hanoi4 command when they ask for that domain."""

    def __init__(self, tile: click.Command, hanoi: click.Command):
        super().__init__(tile.name, context_settings=tile.context_settings, callback=tile.callback,
                         params=list(tile.params) + [_domain_param("tile")],
                         help=tile.help, epilog=tile.epilog, short_help=tile.short_help,
                         options_metavar=tile.options_metavar, add_help_option=tile.add_help_option,
                         no_args_is_help=tile.no_args_is_help, hidden=tile.hidden, deprecated=tile.deprecated)
        self.hanoi = hanoi

    def make_context(self, info_name, args, parent=None, **extra):
        if _wants_hanoi(list(args), files_tell=self.name == "convert"):
            return self.hanoi.make_context(info_name, args, parent=parent, **extra)
        return super().make_context(info_name, args, parent=parent, **extra)


def with_domains(tile: click.Command) -> click.Command:
    return DomainCommand(tile, HANOI_COMMANDS[tile.name])  # type: ignore[index]


def _cache(cache_dir):
    from ..tables.cache import TableCache

    return TableCache(cache_dir, notify=say)


def _set_threads(threads):
    if threads:
        import numba

        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))


def _goal_name(goal: str) -> str:
    return {"peg": "peg3", "middle": "middle"}[goal]


goal_choice = click.option("--goal", "goal", type=click.Choice(["peg", "middle"]), default="peg", show_default=True,
                           help="peg: every disk on one peg; middle: every disk on the two intermediate pegs "
                                "(the tables of the middle-state search).")
disks_table = click.option("--disks", type=click.IntRange(1, 15), required=False, default=None,
                           help="Disks of the table (1 to 15; 4**k placements).")
threads_opt = click.option("--threads", type=click.IntRange(1, 1024), default=None,
                           help="Threads (default: all cores).")
encoding_opt = click.option("--encoding", type=click.Choice(list(registry.ENCODINGS)), default="byte",
                            show_default=True,
                            help="How tables are stored: byte; nibble (4 bits a placement, every heuristic); "
                                 "mod3 (1.6 bits, static splits only).  parity, min-nibble and sparse do not "
                                 "apply to hanoi4 tables.")


def _check_encoding(encoding: str, spec: str | None = None) -> None:
    """A refused encoding (or one the heuristic cannot read) is a usage error: one line, exit status 2."""
    from ..hanoi4.encodings import check_encoding
    from ..hanoi4.heuristics import check_encoding as check_spec_encoding

    try:
        check_encoding(encoding)
        if spec is not None:
            check_spec_encoding(spec, encoding)
    except PdbtoolError as exc:
        raise UsageLine(str(exc)) from None


@click.command("build")
@_domain_option("hanoi4")
@click.option("--disks", type=click.IntRange(1, 15), required=True, multiple=True,
              help="Disks of a table (1 to 15; repeat for several).")
@goal_choice
@encoding_opt
@threads_opt
@cache_dir_option
@click.option("--force", is_flag=True, help="Rebuild even when a valid table is cached.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per table.")
@user_errors
def hanoi_build(disks, goal, encoding, threads, cache_dir, force, as_json):
    """Build four-peg Towers of Hanoi disk tables into the cache (parallel two-bit BFS).  A compact
    encoding is converted from the cached byte table when there is one, else built directly.

    \b
    Examples:
      pdbtool build --domain hanoi4 --disks 14 --disks 2
      pdbtool build --domain hanoi4 --disks 14 --goal middle
      pdbtool build --domain hanoi4 --disks 15 --encoding mod3
    """
    import time

    from ..hanoi4.tables import get_table

    _check_encoding(encoding)
    cache = _cache(cache_dir)
    for k in disks:
        built = {}
        t0 = time.perf_counter()
        with layer_progress(f"hanoi4 {k} disks to {goal}") as progress:
            table = get_table(k, _goal_name(goal), cache, threads, force,
                              progress=lambda d, c: progress(d, c),
                              on_build=lambda r, built=built: built.update(seconds=r.seconds, cpu=r.cpu_seconds),
                              encoding=encoding)
        rec = {"disks": k, "goal": table.goal, "encoding": table.encoding, "entries": table.entries,
               "payload_bytes": int(table.values.nbytes), "built": bool(built),
               "seconds": round(built.get("seconds", time.perf_counter() - t0), 3),
               "max": int(table.header.get("max_value", 0)), "mean": table.mean(), "file": str(table.path)}
        if as_json:
            click.echo(json.dumps(rec))
        else:
            click.echo(f"hanoi4 {k} disks to {table.goal} ({table.encoding}): {rec['entries']:,} entries in "
                       f"{rec['payload_bytes']:,} bytes, {'built' if rec['built'] else 'cached'} in "
                       f"{rec['seconds']:.2f} s, max {rec['max']}, mean {rec['mean']:.3f}  {rec['file']}")


@click.command("inspect")
@_domain_option("hanoi4")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
@disks_table
@goal_choice
@encoding_opt
@cache_dir_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per table.")
@user_errors
def hanoi_inspect(files, disks, goal, encoding, cache_dir, as_json):
    """Show a hanoi4 table's identity, encoding, size, checksum status and distance histogram (FILES, or
    the cached table of --disks, --goal and --encoding)."""
    paths = list(files)
    if disks is not None:
        paths.append(_cached_path(cache_dir, disks, goal, encoding))
    if not paths:
        raise UserError("nothing to inspect: give table files or --disks K")
    for i, p in enumerate(paths):
        inspect_file(p, as_json, first=i == 0)


def _cached_path(cache_dir, disks: int, goal: str, encoding: str) -> str:
    from ..hanoi4.tables import table_name

    _check_encoding(encoding)
    path = _cache(cache_dir).dir / table_name(disks, _goal_name(goal), encoding)
    if not path.exists():
        raise UserError(f"the hanoi4 table of {disks} disks to {goal} ({encoding}) is not in the cache: run "
                        f"'pdbtool build --domain hanoi4 --disks {disks} --goal {goal} --encoding {encoding}'")
    return str(path)


def inspect_file(path, as_json: bool, first: bool = True) -> None:
    """Print a hanoi4 table's description (``pdbtool inspect`` calls this for hanoi4 files)."""
    from ..hanoi4.tables import describe_file, format_description

    info = describe_file(path)
    if as_json:
        click.echo(json.dumps(info))
    else:
        if not first:
            click.echo("")
        click.echo(format_description(info))


@click.command("verify")
@_domain_option("hanoi4")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
@disks_table
@goal_choice
@encoding_opt
@check_options
@threads_opt
@cache_dir_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per table.")
@user_errors
def hanoi_verify(files, disks, goal, encoding, samples, full, rebuild, seed, threads, cache_dir, as_json):
    """Verify hanoi4 tables (FILES, the cached table of --disks, --goal and --encoding, or every hanoi4
    table in the cache): format, checksum, identity, the payload's structure and decoding, values in range,
    the goal at 0 only, BFS consistency of sampled (or all) entries, and with --rebuild a comparison with a
    fresh build.  A mod3 table is decoded (a breadth-first search checking every residue) with --full or
    --rebuild; otherwise its sampled entries are read by EXACT."""
    from ..hanoi4.tables import is_hanoi_table, verify_file

    _set_threads(threads)
    cache = _cache(cache_dir)
    paths = list(files)
    if disks is not None:
        paths.append(_cached_path(cache_dir, disks, goal, encoding))
    if not paths:
        paths = [str(p) for p in cache.entries() if is_hanoi_table(p)]
        if not paths:
            click.echo(f"no hanoi4 tables in the cache {cache.dir}", err=True)
            return
    reports = [verify_file(p, samples, full, rebuild, threads, seed) for p in paths]
    for r in reports:
        click.echo(json.dumps(r.as_dict()) if as_json else r.summary())
    raise_on_failures(reports)


@click.command("convert")
@_domain_option("hanoi4")
@click.argument("file", required=False, type=click.Path(dir_okay=False))
@click.option("--output", "-o", default=None, type=click.Path(dir_okay=False),
              help="With FILE: where to write (default: the cache, under the table's name).")
@disks_table
@goal_choice
@click.option("--from", "source", type=click.Choice(["byte", "nibble", "mod3"]), default="byte", show_default=True,
              help="With --disks: the encoding of the cached table to convert.")
@encoding_opt
@threads_opt
@cache_dir_option
@click.option("--json", "as_json", is_flag=True, help="Print the conversion as a JSON object.")
@user_errors
def hanoi_convert(file, output, disks, goal, source, encoding, threads, cache_dir, as_json):
    """Re-encode a hanoi4 table (FILE, or the cached table of --disks and --goal) without a new
    breadth-first search; any encoding to any other.

    \b
    Examples:
      pdbtool convert --domain hanoi4 --disks 14 --encoding nibble
      pdbtool convert hanoi4-d14-peg3-half-byte.pdb --encoding mod3 -o d14.pdb
    """
    from ..hanoi4.tables import convert_file

    _check_encoding(encoding)
    if (file is None) == (disks is None):
        raise click.UsageError("give a table FILE or --disks K (one of them)")
    if output is not None and file is None:
        raise click.UsageError("--output goes with a table FILE")
    path = file if file is not None else _cached_path(cache_dir, disks, goal, source)
    _set_threads(threads)
    table, info = convert_file(path, encoding, output, _cache(cache_dir), threads)
    if as_json:
        click.echo(json.dumps(info))
    else:
        click.echo(f"{table.describe()} ({info['from']} -> {encoding}): {info['payload_bytes']:,} bytes, "
                   f"{info['bits_per_placement']:g} bits a placement, {info['seconds']:.2f} s  {info['file']}")


@click.command("solve")
@_domain_option("hanoi4")
@click.argument("instances", required=False, type=click.Path(dir_okay=False))
@click.option("--disks", type=click.IntRange(1, 32), default=None,
              help="Solve the standard problem of N disks (all from peg 0 to peg 3).")
@click.option("--heuristic", default="static:auto", show_default=True, metavar="SPEC",
              help="infinite, zero, static:A-B-..., dynamic:A-B, or several joined by commas (their max); "
                   "static:auto puts the largest disks in a 14-disk table.")
@click.option("--no-middle", is_flag=True,
              help="Search the standard problem to its goal, not only to the middle state.")
@click.option("--bound", type=click.IntRange(0), default=None,
              help="Upper bound of the search (default: the Frame-Stewart length of a standard problem, "
                   "else growing from h(start)).")
@click.option("--moves", "show_moves", is_flag=True, help="Print the solution's moves (disk from to).")
@click.option("--no-path", is_flag=True, help="Keep three layers only (less memory; the length, no moves).")
@encoding_opt
@threads_opt
@cache_dir_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@user_errors
def hanoi_solve(instances, disks, heuristic, no_middle, bound, show_moves, no_path, encoding, threads, cache_dir,
                fmt):
    """Solve four-peg Towers of Hanoi problems optimally (breadth-first heuristic search).

    INSTANCES is a file with a line per instance, 'PEGS -> GOAL' (the peg of each disk, the smallest
    first; GOAL a peg or the goal peg of each disk), or give --disks N for the standard problem.

    \b
    Examples:
      pdbtool solve --domain hanoi4 --disks 16 --heuristic dynamic:14-1
      pdbtool solve --domain hanoi4 --disks 15 --heuristic static:13-2 --no-middle
      pdbtool solve --domain hanoi4 examples/hanoi4.txt --heuristic static:4-3,infinite --moves
    """
    from ..hanoi4.heuristics import HeuristicError, parse_spec
    from ..hanoi4.instance import load_instances, standard
    from ..hanoi4.search import solve
    from ..hanoi4.tables import get_table

    if (instances is None) == (disks is None):
        raise click.UsageError("give an INSTANCES file or --disks N (one of them)")
    if heuristic != "static:auto":
        try:
            parse_spec(heuristic)
        except HeuristicError as exc:
            raise UserError(str(exc)) from None
    _check_encoding(encoding, heuristic)
    _set_threads(threads)
    insts = [standard(disks)] if disks is not None else load_instances(instances)
    cache = _cache(cache_dir)

    def table_for(k, goal):
        with layer_progress(f"building the hanoi4 table of {k} disks to {goal}") as progress:
            return get_table(k, goal, cache, threads, progress=lambda d, c: progress(d, c), encoding=encoding)

    failures = 0
    for inst in insts:
        try:
            sol = solve(inst, heuristic, middle=False if no_middle else None, bound=bound,
                        keep_path=not no_path, table_for=table_for, progress=_progress_line(inst),
                        encoding=encoding)
        except PdbtoolError as exc:  # one bad instance of a file does not stop the others
            failures += 1
            click.echo(f"pdbtool: {inst.name}: {exc}", err=True)
            continue
        rec = sol.as_dict()
        if show_moves and sol.moves is not None:
            rec["moves"] = [[d + 1, a, b] for d, a, b in sol.moves]
        if fmt == "json":
            click.echo(json.dumps(rec))
            continue
        s = sol.stats
        click.echo(f"{rec['instance']}: {sol.length} moves ({sol.heuristic}{', to the middle' if sol.middle else ''})"
                   f", h(start) {sol.h_start}, {s.expanded:,} expanded ({s.expanded_below_bound:,} with f < bound), "
                   f"{s.generated:,} generated, mean h {sol.mean_h_expanded:.2f}, {sol.seconds:.2f} s "
                   f"({sol.cpu_seconds:.2f} CPU s), peak {s.peak_layer_states:,} states a layer, "
                   f"search arrays {s.peak_bytes / 2**20:.1f} MiB, max RSS {sol.max_rss_bytes / 2**20:.0f} MiB")
        if show_moves and sol.moves is not None:
            click.echo(" ".join(f"{d + 1}:{a}>{b}" for d, a, b in sol.moves))
    if failures:
        sys.exit(1)


def _progress_line(inst, every: float = 30.0):
    """A line on stderr every ``every`` seconds of a long search: depth, layer, states expanded."""
    import time

    from ._common import Interrupted

    start = last = time.perf_counter()

    def progress(depth, layer, stats):
        nonlocal last
        Interrupted.raise_dropped()
        now = time.perf_counter()
        if now - last >= every:
            last = now
            say(f"{inst.name}: depth {depth}, {layer:,} states in the layer, {stats.expanded:,} expanded, "
                f"{now - start:.0f} s")

    return progress


HANOI_COMMANDS = {"build": hanoi_build, "inspect": hanoi_inspect, "verify": hanoi_verify, "convert": hanoi_convert,
                  "solve": hanoi_solve}
