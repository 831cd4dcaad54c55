"""``pdbtool verify``: check table files (structure, checksum, identity, values) and report each one."""

from __future__ import annotations

import click

from ._checks import check_options, raise_on_failures
from ._common import (blank_option, board_option, cache_dir_option, format_option, goal_option, progress_bar,
                      record_printer, threads_option, user_errors)


@click.command("verify")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--partition", default=None, metavar="NAME|FILE", help="Verify the cached tables of a partition.")
@click.option("--cache", "whole_cache", is_flag=True, help="Verify every table in the cache.")
@check_options
@board_option
@goal_option
@blank_option
@threads_option
@cache_dir_option
@format_option()
@user_errors
def command(files, partition, whole_cache, samples, full, rebuild, seed, board_dims, goal, blank, threads,
            cache_dir, fmt):
    """Verify table FILES, a partition's cached tables, or the whole cache (every file in it).

    Checks, in order, stopping at a table's first failure: the format (magic, version), the sizes (header
    against payload and file), the xxhash64 checksum, the identity (the table asked for), the goal at 0, the
    values within the header's max, the consistency of sampled (or, with --full, all) placements, and,
    with --rebuild, a byte-for-byte comparison with a fresh build.  The dynamic sets' pair and triple
    files (*.ddb) get the same checks, with groups recomputed by a small search for consistency; a move
    automaton (*.fsm, kept by --pruning fsm) is rebuilt and compared.
    Exit status 0 when every table passes, 3 when one fails, 1 when one cannot be read, 2 for a usage error.

    \b
    Examples:
      pdbtool verify --partition 15-7-8 --full
      pdbtool verify --cache
      pdbtool verify table.pdb --rebuild --format json
    """
    from ..tables.cache import TableCache
    from ..tables.checks import verify_any
    from ..tables.verify import Expected, missing_report

    sources = sum([bool(files), partition is not None, whole_cache])
    if sources != 1:
        raise click.UsageError("give table FILES, --partition NAME or --cache (exactly one of them)")
    if (board_dims or goal) and partition is None:
        raise click.UsageError("--board and --goal go with --partition")
    cache = TableCache(cache_dir)
    jobs = []  # (path, expected table or None, whether the name must be the cache's)
    if partition is not None:
        from ..tables.operations import cached_files, partition_plan
        from ..tables.resolve import partition_from_options

        plan = partition_plan(partition_from_options(partition, None, board_dims, goal), blank)
        for f in cached_files(cache, plan):
            if f.not_made:
                click.echo(f"pdbtool: {f.shared.describe()} (not built)", err=True)  # build --partition skips it
                continue
            jobs.append((f.path, Expected(f.pattern, blank), False))
    elif whole_cache:
        jobs = [(path, None, True) for path in cache.entries()]
        if not jobs:
            click.echo(f"no tables in the cache {cache.dir}", err=True)
            return
    else:
        jobs = [(path, None, False) for path in files]

    reports = []
    with record_printer(fmt) as emit:
        for path, expected, by_name in jobs:
            from ..hanoi4.tables import is_hanoi_table, verify_file as verify_hanoi
            from ..search.automata import is_automaton_file, verify_automaton_file
            if expected is None and is_hanoi_table(path):  # a four-peg Towers of Hanoi table
                report = verify_hanoi(path, samples, full, rebuild, threads, seed)
            elif expected is None and is_automaton_file(path):  # a move automaton: rebuilt and compared
                report = verify_automaton_file(path)
            elif expected is not None and not path.exists():
                report = missing_report(path, f"not in the cache: run 'pdbtool build --partition {partition} "
                                              f"--blank {blank}'")
            else:
                bar, update = progress_bar(f"rebuilding {path}") if rebuild else (None, None)
                try:
                    report = verify_any(path, expected, cache_name=by_name, samples=samples, full=full,
                                        rebuild=rebuild, threads=threads, seed=seed, progress=update)
                finally:
                    if bar is not None:
                        bar.close()
            reports.append(report)
            emit(report.as_dict(), report.summary())
    raise_on_failures(reports)

