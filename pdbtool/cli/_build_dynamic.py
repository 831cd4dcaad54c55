"""``pdbtool build --dynamic``: the tables of every pair (and triple) of tiles, with one progress bar."""

from __future__ import annotations

import sys


from ..errors import PdbtoolError
from ._common import record_printer, say


def build_dynamic_command(name, board_dims, goal, threads, cache_dir, force, fmt, with_patterns):
    from tqdm import tqdm

    from ..puzzle.board import Board
    from ..tables.cache import TableCache
    from ..tables.pairs_triples import build_dynamic, total_groups

    if with_patterns:
        raise PdbtoolError("--dynamic builds every pair/triple: do not combine it with --partition or --pattern")
    board = Board.parse(board_dims or "4x4", goal)
    cache = TableCache(cache_dir, notify=say)
    bar = tqdm(total=total_groups(board, name), desc=f"{board.dims} dynamic {name}", unit=" group",
               file=sys.stderr, disable=None, leave=False)

    def progress(done: int) -> None:
        bar.update(done - bar.n)

    try:
        records = build_dynamic(board, name, cache, jobs=threads, force=force, progress=progress)
    finally:
        bar.close()
    with record_printer(fmt) as emit:
        for r in records:
            how = "built" if r["built"] else "cached"
            what = (f"{r['rows']:,} region values" if "rows" in r else
                    f"{r['entries']:,} placements, {r['placements_with_excess']:,} add to Manhattan")
            emit(r, f"{r['groups']:,} {r['set']} on {r['board']}: {what}, {how} in {r['seconds']:.2f} s "
                    f"(at most {r['max_excess']})  {r['file']}")
