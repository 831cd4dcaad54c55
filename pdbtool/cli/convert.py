"""``pdbtool convert``: re-encode byte tables (cached, or a file) without a new breadth-first search."""

from __future__ import annotations

import json
import time
from contextlib import nullcontext
from pathlib import Path

import click

from ._common import (blank_option, board_option, cache_dir_option, encoding_option, goal_option, group_option,
                      say, threads_option, user_errors)
from ..errors import PdbtoolError


@click.command("convert")
@click.argument("file", required=False, type=click.Path(dir_okay=False))
@click.option("--partition", default=None, metavar="NAME|FILE", help="Convert the cached byte tables of a partition.")
@click.option("--pattern", default=None, metavar="LIST", help="Convert the cached byte table of one pattern.")
@board_option
@goal_option
@blank_option
@encoding_option
@group_option
@threads_option
@cache_dir_option
@click.option("--output", "-o", default=None, type=click.Path(dir_okay=False),
              help="With FILE: where to write (default: the cache, under the table's name).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per table.")
@user_errors
def command(file, partition, pattern, board_dims, goal, blank, encoding, group, threads, cache_dir, output,
            as_json):
    """Re-encode byte tables: a byte table FILE, or the cached tables of a partition or pattern.

    \b
    Examples:
      pdbtool convert --partition 15-6-6-3 --encoding min-nibble --group 2
      pdbtool convert --pattern 1,2,3,4,5 --board 4x4 --blank ignored --encoding mod3
      pdbtool convert table.pdb --encoding nibble -o table-nibble.pdb
    """
    from ..tables.cache import TableCache
    from ..tables.encodings import normalize_params
    from ..tables.table import PatternTable, convert_table

    params = normalize_params(encoding, None, group)
    if encoding == "byte":
        raise PdbtoolError("convert makes compact tables from byte tables: choose --encoding other than byte")
    cache = TableCache(cache_dir, notify=say)
    sources: list[PatternTable] = []
    if file is not None:
        if partition or pattern:
            raise PdbtoolError("give a table FILE or --partition/--pattern, not both")
        sources.append(PatternTable.load(file))
    else:
        if output:
            raise PdbtoolError("--output goes with a table FILE")
        from ..tables.resolve import resolve_patterns

        for p in resolve_patterns(partition, pattern, board_dims, goal):
            table = cache.load_valid(p, blank)
            if table is None:
                what = f"--partition {partition}" if partition else f"--pattern {pattern} --board {p.board.dims}"
                raise PdbtoolError(f"byte table {{{p}}} ({blank}) is not in the cache {cache.dir}: "
                                   f"run 'pdbtool build {what} --blank {blank}' first")
            sources.append(table)
    for source in sources:
        if source.encoding != "byte":
            raise PdbtoolError(f"{source.path}: a {source.encoding} table; convert starts from a byte table")
        target = Path(output) if output else cache.path_for(source.pattern, source.blank, encoding, params)
        start = time.perf_counter()
        with cache.lock(target) if not output else nullcontext():
            if not output:
                cache.remove_stale_temporaries(target)
            table, extra = convert_table(source, encoding, params, threads)
            cache.store(table, target, extra)
        seconds = time.perf_counter() - start
        info = extra["conversion"]
        p = source.pattern
        record = {"tiles": list(p.tiles), "board": p.board.dims, "blank": source.blank, "encoding": encoding,
                  "encoding_params": params, "entries": p.entries, "seconds": round(seconds, 3),
                  "payload_bytes": int(table.values.nbytes), "bits_per_entry": info["bits_per_entry"],
                  "file": str(target), "source": str(source.path)}
        for key in ("saturated", "nonzero", "mean_loss"):
            if key in info:
                record[key] = info[key]
        if as_json:
            click.echo(json.dumps(record))
        else:
            extra_text = "".join(f", {key.replace('_', ' ')} {record[key]:,}" if isinstance(record[key], int)
                                 else f", {key.replace('_', ' ')} {record[key]:g}"
                                 for key in ("saturated", "mean_loss") if key in record)
            click.echo(f"{{{p}}} on {p.board.dims} ({source.blank}) -> {encoding}"
                       + (f" group {params['group']}" if params else "")
                       + f": {table.values.nbytes:,} bytes, {info['bits_per_entry']:g} bits per entry, "
                       f"{seconds:.2f} s{extra_text}  {target}")
