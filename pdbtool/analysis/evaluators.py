"""Whole-state evaluation of a heuristic in compiled code, for the sampler.

Each heuristic whose value a kernel can compute from a state alone has an *evaluator*: a namedtuple of
plain arrays, of a class of its own, for which :func:`state_value` is implemented with
``numba.extending.overload`` (as the search hooks are in :mod:`pdbtool.heuristics.hooks`).  The sampling
kernels are compiled once per evaluator class.  The evaluators take their arrays from the heuristic
objects themselves (Manhattan's table, the line tables of linear conflicts, the pattern tables, slots,
symmetry maps and reflection of a pattern sum, the packed look-ups of ``ddb``), so that they compute the same
function; the tests check them against each heuristic's ``value``.  Other heuristics (``max``, encoded tables)
are evaluated in Python through their ``value``: correct, and slow.
"""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np
from numba.extending import overload

from .._native.intrinsics import load_u8
from ..heuristics.dynamic import DynamicHeuristic
from ..heuristics.hooks import is_state
from ..heuristics.linear_conflict import LinearConflict, LineScanConflict, line_conflicts
from ..heuristics.manhattan import Manhattan
from ..heuristics.pattern_sum import PatternSum
from ..heuristics.vertex_cover.graph import graph_from_scratch
from ..heuristics.vertex_cover.layout import POS, _views
from ..tables.ranking import rank_cells

ManhattanEval = namedtuple("ManhattanEval", ["md"])
# row_of/col_of: the line of each cell; row_contrib/col_contrib/row_lc/col_lc: as in LinearConflict
LinearConflictEval = namedtuple("LinearConflictEval", ["md", "row_of", "col_of", "row_contrib", "col_contrib",
                                                       "row_lc", "col_lc", "height", "width"])
# row_val/col_val: as in LineScanConflict (the goal position in the line of a tile in a cell, -1 if another line's)
LineScanEval = namedtuple("LineScanEval", ["md", "row_val", "col_val", "height", "width"])
# tile_of[i, s]: the tile at slot s of pattern i; rtile: the reflection's tile map; cellmap: as in PatternSum
PatternSumEval = namedtuple("PatternSumEval", ["tile_of", "kk", "cellmap", "rtile", "addrs", "npat", "reflect"])
# ddb: Manhattan's table, the packed state look-ups, a conflict graph's work array and a memo per thread
# (indexed by Numba's thread id: the sampler's threads evaluate states at once)
DynamicEval = namedtuple("DynamicEval", ["md", "near", "records", "rows", "works", "memos"])


def state_value(ev, tiles, where, cells):
    """h of the state ``tiles`` (``where`` and ``cells`` are scratch arrays of n entries); per evaluator."""
    raise NotImplementedError("compiled only")


@numba.njit(cache=True, inline="always")
def _manhattan(md, tiles):
    h = 0
    for c in range(tiles.shape[0]):
        h += md[tiles[c], c]
    return h


@overload(state_value, inline="always")
def _state_value(ev, tiles, where, cells):
    if is_state(ev, ManhattanEval):
        return lambda ev, tiles, where, cells: _manhattan(ev.md, tiles)
    if is_state(ev, LinearConflictEval):
        def impl(ev, tiles, where, cells):
            h = _manhattan(ev.md, tiles)
            for r in range(ev.height):
                where[r] = 0
            for c in range(ev.width):
                cells[c] = 0
            for c in range(tiles.shape[0]):
                where[ev.row_of[c]] += ev.row_contrib[tiles[c], c]
                cells[ev.col_of[c]] += ev.col_contrib[tiles[c], c]
            for r in range(ev.height):
                h += ev.row_lc[where[r]]
            for c in range(ev.width):
                h += ev.col_lc[cells[c]]
            return h
        return impl
    if is_state(ev, LineScanEval):
        def impl(ev, tiles, where, cells):
            h = _manhattan(ev.md, tiles)
            n, w, height = tiles.shape[0], ev.width, ev.height
            # ``where`` holds the entries of every row, then of every column; ``cells``: the run's tails
            rows = where.reshape((height, w))
            for c in range(n):
                where[c] = ev.row_val[tiles[c], c]
            for r in range(height):
                h += line_conflicts(rows, r, -1, 0, cells)
            cols = where.reshape((w, height))
            for c in range(n):
                cols[c % w, c // w] = ev.col_val[tiles[c], c]
            for x in range(w):
                h += line_conflicts(cols, x, -1, 0, cells)
            return h
        return impl
    if is_state(ev, PatternSumEval):
        def impl(ev, tiles, where, cells):
            n = tiles.shape[0]
            for c in range(n):
                where[tiles[c]] = c
            best = 0
            sides = 2 if ev.reflect else 1
            for side in range(sides):
                total = 0
                for i in range(ev.npat):
                    k = ev.kk[i]
                    row = i + side * ev.npat
                    for s in range(k):
                        t = ev.tile_of[i, s]
                        if side == 1:
                            t = ev.rtile[t]
                        cells[s] = ev.cellmap[row, where[t]]
                    total += load_u8(ev.addrs[i] + rank_cells(cells[:k], n))
                if total > best:
                    best = total
            return best
        return impl
    if is_state(ev, DynamicEval):
        def impl(ev, tiles, where, cells):
            n = tiles.shape[0]
            me = numba.get_thread_id()
            g, hl, cons = _views(ev.works[me], n)
            h = 0
            for c in range(n):
                g[POS, tiles[c]] = c
                h += ev.md[tiles[c], c]
            return h + 2 * graph_from_scratch(n, ev.near, ev.records, ev.rows, g, hl, cons, ev.memos[me])
        return impl


def evaluator(heuristic):
    """The compiled evaluator of a heuristic object, or None when only its Python ``value`` can evaluate it."""
    kind = type(heuristic)
    if kind is Manhattan:
        return ManhattanEval(heuristic.md)
    if kind is LinearConflict:
        b = heuristic.board
        return LinearConflictEval(heuristic.md, heuristic.row_of, heuristic.col_of, heuristic.row_contrib,
                                  heuristic.col_contrib, heuristic.row_lc, heuristic.col_lc, b.height, b.width)
    if kind is LineScanConflict:
        b = heuristic.board
        return LineScanEval(heuristic.md, heuristic.row_val, heuristic.col_val, b.height, b.width)
    if kind is PatternSum:
        tile_of = np.zeros((heuristic.npat, heuristic.kmax), dtype=np.int64)
        for i, p in enumerate(heuristic.patterns):
            for t in p.tiles:
                tile_of[i, heuristic.slot[t]] = t
        return PatternSumEval(tile_of, heuristic.kk, heuristic.cellmap, heuristic.rtile, heuristic.addrs,
                              heuristic.npat, bool(heuristic.reflect))
    if kind is DynamicHeuristic and heuristic.static is None:
        (near, records, rows), works, memos = heuristic.thread_graphs(numba.config.NUMBA_NUM_THREADS)
        return DynamicEval(heuristic.md, near, records, rows, works, memos)
    return None


def value_bound(heuristic) -> int:
    """An upper bound of the heuristic's values (the size of a histogram)."""
    n = heuristic.board.n
    md_max = int(heuristic.board.manhattan_table().max(axis=1).sum())
    kind = type(heuristic)
    if kind is Manhattan:
        return md_max
    if kind is LinearConflict or kind is LineScanConflict:
        return md_max + 4 * n  # at most 2 (n - 1) conflicts among the rows, as many among the columns
    if isinstance(heuristic, PatternSum) and hasattr(heuristic, "tables"):
        return 255 * len(heuristic.tables)
    # the heuristics pdbtool has are admissible: no state is farther than the longest optimal path, which a
    # walk that moves every tile home one at a time bounds
    return 255 * n


__all__ = ["ManhattanEval", "LinearConflictEval", "LineScanEval", "PatternSumEval", "DynamicEval", "state_value",
           "evaluator", "value_bound"]
