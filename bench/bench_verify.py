"""`pdbtool verify`: time of the sampled, full and rebuild checks, and how often one wrong entry is caught.

Writes bench/results/verify.json.  ``--quick`` uses the 15-puzzle 5-tile tables only (the default adds the
6-tile ones).  Timings exclude process start-up; the kernels are compiled (and cached) by a warm-up run.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from pdbtool.puzzle.board import Board
from pdbtool.tables.cache import TableCache
from pdbtool.tables.ranking import TilePattern
from pdbtool.tables.ranking import column_masks
from pdbtool.tables.verify import consistency_scan, verify_file

HERE = Path(__file__).resolve().parent


def neighbourhood(pattern, r):
    """Rank r and the ranks one tile move away: the only placements whose checks read entry r."""
    cells = list(pattern.unrank(r))
    nb = pattern.board.neighbours()
    ranks = [r]
    for i, c in enumerate(cells):
        for q in nb[c]:
            if q >= 0 and int(q) not in cells:
                child = cells.copy()
                child[i] = int(q)
                ranks.append(pattern.rank(child))
    return np.array(ranks, dtype=np.int64)


def detection(table, values, rng, delta, trials=200):
    """Of ``trials`` single entries changed by ``delta``, how many the full consistency check catches
    (it suffices to check the changed placement and its neighbours: no other check reads the entry)."""
    pattern, board = table.pattern, table.pattern.board
    nf, nl = column_masks(board)
    caught = tried = 0
    while tried < trials:
        r = int(rng.integers(0, values.shape[0]))
        v = int(values[r])
        if v == 255 or not 0 <= v + delta <= 254:
            continue
        tried += 1
        ranks = neighbourhood(pattern, r)
        values[r] = v + delta
        bad = consistency_scan(values, ranks, ranks.shape[0], board.n, pattern.k, board.neighbours(),
                               pattern.md_rows(), table.blank == "minimized", pattern.goal_rank(),
                               np.uint64(nf), np.uint64(nl), board.width, 64, True, 0,
                               (ranks.shape[0] + 63) // 64)[0]
        values[r] = v
        caught += bad > 0
    return caught


def main():
    quick = "--quick" in sys.argv
    tiles = [(1, 2, 3, 4, 5)] + ([] if quick else [(1, 2, 3, 4, 5, 6)])
    rows = []
    rng = np.random.default_rng(2026)
    with tempfile.TemporaryDirectory() as tmp:
        cache = TableCache(tmp)
        for t in tiles:
            pattern = TilePattern(Board(4, 4), t)
            for blank in ("minimized", "ignored"):
                table = cache.get(pattern, blank)
                verify_file(table.path, samples=100)  # warm-up: load the compiled kernels
                row = {"tiles": list(t), "blank": blank, "entries": pattern.entries}
                for name, kwargs in (("sampled_10000_s", {}), ("full_s", {"full": True}),
                                     ("full_and_rebuild_s", {"full": True, "rebuild": True})):
                    start = time.perf_counter()
                    report = verify_file(table.path, **kwargs)
                    row[name] = round(time.perf_counter() - start, 3)
                    assert report.ok, report.summary()
                values = np.asarray(table.values).copy()
                row["caught_of_200"] = {f"{d:+d}": detection(table, values, rng, d) for d in (1, 2, -2, 4)}
                rows.append(row)
                print(json.dumps(row), flush=True)
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "verify.json").write_text(json.dumps({"rows": rows}, indent=2))


if __name__ == "__main__":
    main()
