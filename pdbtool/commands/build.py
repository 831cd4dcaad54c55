"""``pdbtool build``: build the tables of a partition or one pattern into the cache."""

from __future__ import annotations

import json
import resource
import time

import click

from ._common import (blank_option, board_option, cache_dir_option, encoding_option, goal_option,
                      group_option, progress_bar, say, threads_option, user_errors)


@click.command("build")
@click.option("--partition", default=None, metavar="NAME|FILE", help="A built-in partition name or a partition file.")
@click.option("--pattern", default=None, metavar="LIST", help="One pattern, e.g. 1,2,3 (needs --board or a default).")
@board_option
@goal_option
@blank_option
@threads_option
@cache_dir_option
@click.option("--force", is_flag=True, help="Rebuild even when a valid table is cached.")
@encoding_option
@group_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per table.")
@click.option("--dynamic", type=click.Choice(["pairs", "pairs+triples"]), default=None,
              help="Build the tables of every pair (and triple) of tiles for the ddb heuristic instead "
                   "(board: --board, default 4x4; --threads: worker processes).")
@user_errors
def command(partition, pattern, board_dims, goal, blank, threads, cache_dir, force, encoding, group, as_json,
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

        return build_dynamic_command(dynamic, board_dims, goal, threads, cache_dir, force, as_json,
                                     partition is not None or pattern is not None)
    from ..api import resolve_patterns
    from ..cache import TableCache
    from ..encodings import normalize_params

    params = normalize_params(encoding, None, group)
    patterns = resolve_patterns(partition, pattern, board_dims, goal)
    cache = TableCache(cache_dir, notify=say)
    shared = [None] * len(patterns)
    if partition is not None and encoding == "byte":
        from ..symmetry import share_tables

        shared = share_tables(patterns, blank)  # an image of another pattern under a board symmetry: not built
    for p, via in zip(patterns, shared):
        if via is not None:
            if as_json:
                click.echo(json.dumps({"tiles": list(p.tiles), "board": p.board.dims, "blank": blank,
                                       "entries": p.entries, "built": False, "shared_with": list(via.source.tiles),
                                       "symmetry": via.symmetry.name}))
            else:
                click.echo(f"{{{p}}} on {p.board.dims} ({blank}): not built, {via.describe()}")
            continue
        start = time.perf_counter()
        usage = resource.getrusage(resource.RUSAGE_SELF)
        built, converted = [], []
        bar, update = progress_bar(f"{p.board.dims} {{{p}}} {blank}")
        try:
            table = cache.get(p, blank, threads=threads, force=force, progress=update,
                              on_build=lambda t, r: built.append(r.seconds), encoding=encoding, params=params,
                              on_convert=lambda t, info: converted.append(info))
        finally:
            bar.close()
        stats = table.stats()
        seconds = built[0] if built else time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
        cpu = after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime
        record = {"tiles": list(p.tiles), "board": p.board.dims, "blank": blank, "entries": p.entries,
                  "built": bool(built), "seconds": round(seconds, 3), "max": stats["max"],
                  "mean": round(stats["mean"], 4), "file": str(table.path), "encoding": encoding,
                  "encoding_params": params, "converted": bool(converted),
                  "bits_per_entry": round(stats["bits_per_entry"], 4), "cpu_seconds": round(cpu, 3),
                  "peak_rss_bytes": after.ru_maxrss * 1024}  # the process's peak so far (Linux: KiB)
        if "saturated" in stats:
            record["saturated"] = stats["saturated"]
        if as_json:
            click.echo(json.dumps(record))
        else:
            how = "built" if built else "converted" if converted else "cached"
            enc = "" if encoding == "byte" else f", {encoding}" + (f" group {group}" if group else "") + \
                f" {stats['bits_per_entry']:.3g} bits/entry"
            sat = f", {stats['saturated']:,} saturated" if stats.get("saturated") else ""
            click.echo(f"{{{p}}} on {p.board.dims} ({blank}{enc}): {p.entries:,} entries, {how} in {seconds:.2f} s, "
                       f"max {stats['max']}, mean {stats['mean']:.3f}{sat}  {table.path}")
        del table  # one table mapped at a time: a partition's peak memory is its largest build
