"""``pdbtool convert``: re-encode byte tables (cached, or a file) without a new breadth-first search."""

from __future__ import annotations

import click

from ._common import (cache_dir_option, echo_outcomes, format_option, output_option, say, table_options,
                      threads_option, user_errors)
from ..errors import PdbtoolError


@click.command("convert")
@click.argument("file", required=False, type=click.Path(dir_okay=False))
@table_options("Convert the cached byte tables of a partition.", "Convert the cached byte table of one pattern.")
@threads_option
@cache_dir_option
@output_option("With FILE: where to write (default: the cache, under the table's name).")
@format_option()
@user_errors
def command(file, partition, pattern, board_dims, goal, blank, encoding, group, threads, cache_dir, output,
            fmt):
    """Re-encode byte tables: a byte table FILE, or the cached tables of a partition or pattern.

    \b
    Examples:
      pdbtool convert --partition 15-6-6-3 --encoding min-nibble --group 2
      pdbtool convert --pattern 1,2,3,4,5 --board 4x4 --blank ignored --encoding mod3
      pdbtool convert table.pdb --encoding nibble -o table-nibble.pdb
    """
    from ..tables.cache import TableCache
    from ..tables.encodings import check_blank, normalize_params
    from ..tables.operations import convert_file, convert_tables, partition_plan

    if file is None:
        check_blank(encoding, blank)
    params = normalize_params(encoding, None, group)
    cache = TableCache(cache_dir, notify=say)
    if file is not None:
        if partition or pattern:
            raise PdbtoolError("give a table FILE or --partition/--pattern, not both")
        outcomes = [convert_file(cache, file, encoding, params, threads, output)]
    else:
        if output:
            raise PdbtoolError("--output goes with a table FILE")
        from ..tables.resolve import partition_from_options

        part = partition_from_options(partition, pattern, board_dims, goal)
        what = f"--partition {partition}" if partition else f"--pattern {pattern} --board {part.board.dims}"
        outcomes = convert_tables(cache, partition_plan(part, blank), encoding, params, threads,
                                  build_command=f"pdbtool build {what}")

    def line(record, p):
        extra_text = "".join(f", {key.replace('_', ' ')} {record[key]:,}" if isinstance(record[key], int)
                             else f", {key.replace('_', ' ')} {record[key]:g}"
                             for key in ("saturated", "mean_loss") if key in record)
        return (f"{{{p}}} on {p.board.dims} ({record['blank']}) -> {encoding}"
                + (f" group {params['group']}" if params else "")
                + f": {record['payload_bytes']:,} bytes, {record['bits_per_entry']:g} bits per entry, "
                f"{record['seconds']:.2f} s{extra_text}  {record['file']}")

    echo_outcomes(outcomes, fmt, blank, "converted", line)

