"""Benchmark: what a zero-aware table lookup costs beside a blank-minimized one, and what other layouts of
the zero-aware values could cost (issue 31; a study of designs, not of the code's own kernels alone).

A random walk of the 24-puzzle (no move undone at once) looks up, at every state, the table value of each
child whose moved tile is in the pattern {1,2,5,6,7,12}, as the search's children are evaluated; the CPU
per step is reported for each way of finding the value:

* ``rank``: the blank-minimized table, indexed by the placement's rank (the pattern-sum kernel's lookup);
* ``zero-aware``: the zero-aware table as pdbtool lays it out (map, then region, then order: the lookup of
  ``pdbtool.tables.zero_aware.indexed``);
* ``map order``: the minimized table's size indexed map-first (map rank * k! + order) without regions: the
  cost of the map-major order alone (the values read are not meaningful, the addresses are);
* ``rank + pocket mask``: a layout not built: the rank-indexed table holds each placement's value for its
  largest blank region, a per-map mask names the cells outside it, and a blank there is looked up in the
  zero-aware table (standing for an overflow area);
* ``rank + flood fill``: the same, the blank's region found by a flood fill (in the largest region when it
  holds more than half the free cells) instead of the mask;
* ``rank index only`` / ``zero-aware index only``: the index without the table's load (the zero-aware
  index reads its layout's ``base`` and, for a map of several regions, ``region`` arrays).

The pocket columns also give how often the blank is outside the largest region.  Needs the two tables of
{1,2,5,6,7,12} (built into the cache when missing: about 1.5 minutes on 2 cores).

    .venv/bin/python bench/bench_zero_aware_lookup.py [--steps 20000000] [--repeats 2] [--cache-dir DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numba
import numpy as np
from numba import njit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _results import load_average, write  # noqa: E402
from pdbtool._native.intrinsics import load_u8, popcount  # noqa: E402
from pdbtool.heuristics.pattern_sum import _rank_row  # noqa: E402
from pdbtool.puzzle.board import Board  # noqa: E402
from pdbtool.tables.ranking import column_masks  # noqa: E402
from pdbtool.tables.ranking import grown_region  # noqa: E402
from pdbtool.tables.zero_aware import (colex_chunks, indexed, joined_layouts,  # noqa: E402
                                       occupied_mask, occupied_rank, order_rank)

PATTERN = (1, 2, 5, 6, 7, 12)
MODES = ("rank", "zero-aware", "map order", "rank + pocket mask", "rank + flood fill", "rank index only",
         "zero-aware index only")


@njit
def _walk(mode, steps, seed, nb, slot_of, a_rank, a_za, base, region, colex, pockets, not_first, not_last, width):
    """(sum of the values read, lookups, lookups whose blank is outside the largest region)."""
    np.random.seed(seed)
    n = nb.shape[0]
    k = 6
    kfact = 720
    full = (numba.uint64(1) << numba.uint64(n)) - numba.uint64(1)
    tiles = np.arange(n)
    cells = np.empty((1, k), dtype=np.int64)
    for c in range(n):
        if slot_of[tiles[c]] >= 0:
            cells[0, slot_of[tiles[c]]] = c
    blank, prev, acc, lookups, pocketed = 0, -1, 0, 0, 0
    for _ in range(steps):
        for m in range(4):
            q = nb[blank, m]
            if q < 0 or slot_of[tiles[q]] < 0:
                continue
            s = slot_of[tiles[q]]
            cells[0, s] = blank  # the child: the tile in the blank's cell, the blank in q
            lookups += 1
            if mode == 0:
                acc += load_u8(a_rank + _rank_row(cells, 0, k, n))
            elif mode == 1:
                acc += load_u8(a_za + indexed(cells[0], k, n, colex, base, 0, region, 0, kfact, q))
            elif mode == 2:
                occupied = occupied_mask(cells[0], k)
                acc += load_u8(a_rank + occupied_rank(occupied, colex) * kfact + order_rank(cells[0], k, occupied))
            elif mode == 3 or mode == 4:
                occupied = occupied_mask(cells[0], k)
                if mode == 3:
                    mr = occupied_rank(occupied, colex)
                    main = not (pockets[mr] >> numba.uint64(q)) & numba.uint64(1)
                else:
                    free = full & ~occupied
                    half = popcount(free) >> numba.uint64(1)
                    part = numba.uint64(1) << numba.uint64(q)
                    main = False
                    while True:
                        grown = grown_region(part, free, not_first, not_last, width)
                        if grown == part:
                            break
                        part = grown
                        if popcount(part) > half:
                            main = True
                            break
                if main:
                    acc += load_u8(a_rank + _rank_row(cells, 0, k, n))
                else:
                    pocketed += 1
                    acc += load_u8(a_za + indexed(cells[0], k, n, colex, base, 0, region, 0, kfact, q))
            elif mode == 5:
                acc += _rank_row(cells, 0, k, n)
            else:
                acc += indexed(cells[0], k, n, colex, base, 0, region, 0, kfact, q)
            cells[0, s] = q
        while True:
            m = np.random.randint(4)
            q = nb[blank, m]
            if q >= 0 and q != prev:
                break
        if slot_of[tiles[q]] >= 0:
            cells[0, slot_of[tiles[q]]] = blank
        tiles[blank] = tiles[q]
        tiles[q] = 0
        prev, blank = blank, q
    return acc, lookups, pocketed


def pocket_masks(region: np.ndarray, n: int) -> np.ndarray:
    """Per map, the mask of the free cells outside its largest region (its lowest-numbered among equals)."""
    rows = region.reshape(-1, n)
    masks = np.zeros(rows.shape[0], dtype=np.uint64)
    for m, row in enumerate(rows):
        free = row != 255
        if row[free].max() == 0:
            continue
        largest = np.bincount(row[free]).argmax()
        masks[m] = sum(1 << int(c) for c in np.flatnonzero(free & (row != largest)))
    return masks


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20_000_000)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "history" / "zero_aware_lookup.json"))
    args = ap.parse_args(argv)
    from pdbtool.tables.cache import TableCache
    from pdbtool.tables.ranking import TilePattern

    started, load_before, cpu_start = time.time(), load_average(), time.process_time()
    board = Board(5, 5)
    cache = TableCache(args.cache_dir)
    pattern = TilePattern(board, PATTERN)
    keep = [cache.get(pattern, blank, threads=2) for blank in ("minimized", "zero-aware")]
    rank_table, za_table = (np.asarray(t.values) for t in keep)
    base, region, _, _, _ = joined_layouts(5, 5, [6])
    colex = colex_chunks(board.n, 6)
    pockets = pocket_masks(region, board.n)
    not_first, not_last = (np.uint64(m) for m in column_masks(board))
    slot_of = np.full(board.n, -1, dtype=np.int64)
    for s, t in enumerate(PATTERN):
        slot_of[t] = s
    fixed = (board.neighbours(), slot_of, rank_table.ctypes.data, za_table.ctypes.data, base, region, colex, pockets,
             not_first, not_last, board.width)
    for mode in range(len(MODES)):
        _walk(mode, 1000, 1, *fixed)
    runs: dict = {name: [] for name in MODES}
    pocket_share = None
    for rep in range(args.repeats):  # the modes alternate, so that a change of load touches them alike
        for mode, name in enumerate(MODES):
            start = time.process_time()
            _, lookups, pocketed = _walk(mode, args.steps, 7 + rep, *fixed)
            cpu = time.process_time() - start
            runs[name].append(round(cpu / args.steps * 1e9, 1))
            if mode == 3:
                pocket_share = round(pocketed / lookups, 4)
            print(f"{name}: {runs[name][-1]} ns per step ({lookups / args.steps:.2f} lookups per step)", flush=True)
    report = {"pattern": list(PATTERN), "board": "5x5", "steps": args.steps,
              "ns_per_step": {name: min(v) for name, v in runs.items()}, "runs": runs,
              "share_of_lookups_outside_the_largest_region": pocket_share,
              "maps_with_more_than_one_region": round(float((pockets != 0).mean()), 4)}
    write(args.out, report, started=started, load_before=load_before,
          cpu_seconds=round(time.process_time() - cpu_start, 1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
