"""``pdbtool inspect``: header, size, checksum status and distance histogram of tables."""

from __future__ import annotations

import click

from ._common import cache_dir_option, format_option, record_printer, table_options, user_errors
from ..errors import PdbtoolError


@click.command("inspect")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
@table_options("Inspect the cached tables of a partition.", "Inspect the cached table of one pattern.")
@cache_dir_option
@format_option()
@user_errors
def command(files, partition, pattern, board_dims, goal, blank, encoding, group, cache_dir, fmt):
    """Show the header, size, checksum status and histogram of table FILES (pattern tables *.pdb in any
    encoding, the dynamic sets' *.ddb files, the move automata *.fsm) or of a partition's cached tables."""
    from ..tables.checks import describe_any, format_any

    paths = list(files)
    if partition or pattern:
        if paths:
            raise PdbtoolError("give table files or --partition/--pattern, not both")
        from ..tables.cache import TableCache
        from ..tables.encodings import check_blank, normalize_params
        from ..tables.operations import cached_files, partition_plan
        from ..tables.resolve import partition_from_options

        check_blank(encoding, blank)
        params = normalize_params(encoding, None, group)
        enc = "" if encoding == "byte" else f" --encoding {encoding}" + (f" --group {group}" if params else "")
        cache = TableCache(cache_dir)
        plan = partition_plan(partition_from_options(partition, pattern, board_dims, goal), blank)
        for f in cached_files(cache, plan, encoding, params):
            p = f.pattern
            if f.not_made:
                click.echo(f"pdbtool: {f.shared.describe()} (not built)", err=True)
                continue
            if not f.present:
                what = f"--partition {partition}" if partition else f"--pattern {pattern} --board {p.board.dims}"
                raise PdbtoolError(f"table {{{p}}} ({blank}{enc.replace(' --', ', ').replace('encoding ', '')}) "
                                   f"is not in the cache {cache.dir}: run 'pdbtool build {what} --blank {blank}{enc}'")
            paths.append(str(f.path))
    if not paths:
        raise PdbtoolError("nothing to inspect: give table files, --partition NAME or --pattern LIST")
    with record_printer(fmt) as emit:
        for i, path in enumerate(paths):
            from ..hanoi4.tables import is_hanoi_table
            from ..search.automata import describe_automaton, format_automaton, is_automaton_file
            if is_hanoi_table(path):  # with --domain tile: the four-peg Towers of Hanoi's tables describe themselves
                from ..hanoi4.commands import inspect_file
                inspect_file(path, emit, first=i == 0)
                continue
            automaton = is_automaton_file(path)  # a move automaton of --pruning fsm
            info = describe_automaton(path) if automaton else describe_any(path)
            text = format_automaton(info) if automaton else format_any(info)
            emit(info, "\n" + text if i else text)

