"""The hanoi4 domain's commands: ``build``, ``inspect``, ``verify``, ``convert`` and ``solve`` of the four-peg
Towers of Hanoi (library: :mod:`pdbtool.hanoi4`), selected by ``--domain hanoi4`` or a hanoi4 table file
(:mod:`pdbtool.domains`).  A module of the CLI layer: nothing in the domain's library imports it.
"""

from __future__ import annotations

import sys

import click

from .. import registry
from ..cli._checks import check_options, raise_on_failures
from ..cli._common import (EXIT_USAGE, UserError, cache_dir_option, format_option, layer_progress, output_option,
                           record_printer, say, threads_option_for, user_errors)
from ..errors import PdbtoolError

NAME = "hanoi4"
HELP = "the four-peg Towers of Hanoi"
TABLE_KINDS = ("hanoi4",)
INSTANCE_SUFFIXES: tuple[str, ...] = ()  # its instance files are plain text ('PEGS -> GOAL' lines)


class UsageLine(UserError):
    """A one-line message and exit status 2: an option value this domain does not take."""

    exit_code = EXIT_USAGE


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
hanoi_threads = threads_option_for("Threads (default: all cores).")
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
@click.option("--disks", type=click.IntRange(1, 15), required=True, multiple=True,
              help="Disks of a table (1 to 15; repeat for several).")
@goal_choice
@encoding_opt
@hanoi_threads
@cache_dir_option
@click.option("--force", is_flag=True, help="Rebuild even when a valid table is cached.")
@format_option()
@user_errors
def hanoi_build(disks, goal, encoding, threads, cache_dir, force, fmt):
    """Build four-peg Towers of Hanoi disk tables into the cache (parallel two-bit BFS).  A compact
    encoding is converted from the cached byte table when there is one, else built directly.

    \b
    Examples:
      pdbtool build --domain hanoi4 --disks 14 --disks 2
      pdbtool build --domain hanoi4 --disks 14 --goal middle
      pdbtool build --domain hanoi4 --disks 15 --encoding mod3
    """
    _check_encoding(encoding)
    cache = _cache(cache_dir)
    with record_printer(fmt) as emit:
        for k in disks:
            _build_one(k, goal, encoding, threads, force, cache, emit)


def _build_one(k, goal, encoding, threads, force, cache, emit):
    """Build (or find cached) the table of ``k`` disks and print its record."""
    import time

    from ..hanoi4.tables import get_table

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
    emit(rec, f"hanoi4 {k} disks to {table.goal} ({table.encoding}): {rec['entries']:,} entries in "
              f"{rec['payload_bytes']:,} bytes, {'built' if rec['built'] else 'cached'} in "
              f"{rec['seconds']:.2f} s, max {rec['max']}, mean {rec['mean']:.3f}  {rec['file']}")


@click.command("inspect")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
@disks_table
@goal_choice
@encoding_opt
@cache_dir_option
@format_option()
@user_errors
def hanoi_inspect(files, disks, goal, encoding, cache_dir, fmt):
    """Show a hanoi4 table's identity, encoding, size, checksum status and distance histogram (FILES, or
    the cached table of --disks, --goal and --encoding)."""
    paths = list(files)
    if disks is not None:
        paths.append(_cached_path(cache_dir, disks, goal, encoding))
    if not paths:
        raise UserError("nothing to inspect: give table files or --disks K")
    with record_printer(fmt) as emit:
        for i, p in enumerate(paths):
            inspect_file(p, emit, first=i == 0)


def _cached_path(cache_dir, disks: int, goal: str, encoding: str) -> str:
    from ..hanoi4.tables import table_name

    _check_encoding(encoding)
    path = _cache(cache_dir).dir / table_name(disks, _goal_name(goal), encoding)
    if not path.exists():
        raise UserError(f"the hanoi4 table of {disks} disks to {goal} ({encoding}) is not in the cache: run "
                        f"'pdbtool build --domain hanoi4 --disks {disks} --goal {goal} --encoding {encoding}'")
    return str(path)


def inspect_file(path, emit, first: bool = True) -> None:
    """Print a hanoi4 table's description through ``emit`` (:func:`record_printer`'s; the tile domain's
    ``inspect`` calls this for the hanoi4 files among its own)."""
    from ..hanoi4.tables import describe_file, format_description

    info = describe_file(path)
    emit(info, format_description(info) if first else "\n" + format_description(info))


@click.command("verify")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
@disks_table
@goal_choice
@encoding_opt
@check_options
@hanoi_threads
@cache_dir_option
@format_option()
@user_errors
def hanoi_verify(files, disks, goal, encoding, samples, full, rebuild, seed, threads, cache_dir, fmt):
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
    with record_printer(fmt) as emit:
        for r in reports:
            emit(r.as_dict(), r.summary())
    raise_on_failures(reports)


@click.command("convert")
@click.argument("file", required=False, type=click.Path(dir_okay=False))
@output_option("With FILE: where to write (default: the cache, under the table's name).")
@disks_table
@goal_choice
@click.option("--from", "source", type=click.Choice(["byte", "nibble", "mod3"]), default="byte", show_default=True,
              help="With --disks: the encoding of the cached table to convert.")
@encoding_opt
@hanoi_threads
@cache_dir_option
@format_option()
@user_errors
def hanoi_convert(file, output, disks, goal, source, encoding, threads, cache_dir, fmt):
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
    with record_printer(fmt) as emit:
        emit(info, f"{table.describe()} ({info['from']} -> {encoding}): {info['payload_bytes']:,} bytes, "
                   f"{info['bits_per_placement']:g} bits a placement, {info['seconds']:.2f} s  {info['file']}")


@click.command("solve")
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
@hanoi_threads
@cache_dir_option
@format_option("text: a line per instance; json: JSON Lines, an object per instance; csv: a header, then a row "
               "per instance.")
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
    with record_printer(fmt) as emit:
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
            emit(rec, _solution_text(sol, rec, show_moves))
    if failures:
        sys.exit(1)


def _solution_text(sol, rec, show_moves: bool) -> str:
    s = sol.stats
    text = (f"{rec['instance']}: {sol.length} moves ({sol.heuristic}{', to the middle' if sol.middle else ''}), "
            f"h(start) {sol.h_start}, {s.expanded:,} expanded ({s.expanded_below_bound:,} with f < bound), "
            f"{s.generated:,} generated, mean h {sol.mean_h_expanded:.2f}, {sol.seconds:.2f} s "
            f"({sol.cpu_seconds:.2f} CPU s), peak {s.peak_layer_states:,} states a layer, "
            f"search arrays {s.peak_bytes / 2**20:.1f} MiB, max RSS {sol.max_rss_bytes / 2**20:.0f} MiB")
    if show_moves and sol.moves is not None:
        text += "\n" + " ".join(f"{d + 1}:{a}>{b}" for d, a, b in sol.moves)
    return text


def _progress_line(inst, every: float = 30.0):
    """A line on stderr every ``every`` seconds of a long search: depth, layer, states expanded."""
    import time

    from ..cli._common import Interrupted

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


COMMANDS = {"build": hanoi_build, "inspect": hanoi_inspect, "verify": hanoi_verify, "convert": hanoi_convert,
                  "solve": hanoi_solve}
