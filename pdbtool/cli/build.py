"""``pdbtool build``: build the tables of a partition or one pattern into the cache."""

from __future__ import annotations

import click

from ..tables.dynamic_sets import DYNAMIC_SETS
from ._common import (cache_dir_option, echo_outcomes, format_option, layer_progress, say, table_options,
                      threads_option, user_errors)


@click.command("build")
@table_options("A built-in partition name or a partition file.",
               "One pattern, e.g. 1,2,3 (needs --board or a default).")
@threads_option
@cache_dir_option
@click.option("--force", is_flag=True, help="Rebuild even when a valid table is cached.")
@format_option()
@click.option("--dynamic", type=click.Choice(DYNAMIC_SETS), default=None,
              help="Build the tables of every pair (and triple) of tiles for the ddb heuristic instead "
                   "(board: --board, default 4x4; --threads: worker processes).")
@user_errors
def command(partition, pattern, board_dims, goal, blank, threads, cache_dir, force, encoding, group, fmt,
            dynamic):
    """Build pattern-database tables (backward BFS) into the cache.

    \b
    Examples:
      pdbtool build --partition 15-7-8
      pdbtool build --pattern 1,2,3,4,5 --board 4x4 --blank ignored
      pdbtool build --partition 15-6-6-3 --encoding min-nibble --group 2
      pdbtool build --dynamic pairs+triples --board 5x5
    """
    if dynamic is not None:
        from ._build_dynamic import build_dynamic_command

        return build_dynamic_command(dynamic, board_dims, goal, threads, cache_dir, force, fmt,
                                     partition is not None or pattern is not None)
    from ..tables.cache import TableCache
    from ..tables.encodings import check_blank, normalize_params
    from ..tables.operations import build_tables, partition_plan
    from ..tables.resolve import partition_from_options

    check_blank(encoding, blank)
    params = normalize_params(encoding, None, group)
    plan = partition_plan(partition_from_options(partition, pattern, board_dims, goal), blank)

    def progress(p):
        return layer_progress(f"{p.board.dims} {{{p}}} {blank}")

    def line(r, p):
        how = "built" if r["built"] else "converted" if r["converted"] else "cached"
        enc = "" if encoding == "byte" else f", {encoding}" + (f" group {group}" if group else "") + \
            f" {r['bits_per_entry']:.3g} bits/entry"
        sat = f", {r['saturated']:,} saturated" if r.get("saturated") else ""
        return (f"{{{p}}} on {p.board.dims} ({blank}{enc}): {r['entries']:,} entries, {how} in "
                f"{r['seconds']:.2f} s, max {r['max']}, mean {r['mean']:.3f}{sat}  {r['file']}")

    echo_outcomes(build_tables(TableCache(cache_dir, notify=say), plan, encoding, params, threads, force, progress),
                  fmt, blank, "built", line)

