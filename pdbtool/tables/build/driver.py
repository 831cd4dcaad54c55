"""The public entry point of the builders: :func:`build_table` runs the layered BFS of one pattern under a blank
rule, one parallel step (:mod:`.ignored_bfs`, :mod:`.minimized_bfs`) a layer, and checks the result.

Every step is top-down: each frontier rank is unranked incrementally from the last one scanned, its
moves are generated, prefetched and looked up a batch later so that their cache misses overlap.  A flag
per chunk of ``CHUNK`` ranks says whether the chunk holds states of the layer to expand; a step scans
only the flagged chunks, so that the many small first and last layers cost about their states, not a
pass over the whole table.  (A bottom-up step, each unseen state looking for a neighbour in the
frontier, was not kept: the sliding-tile searches are deep, with no layer above about an eighth of the
states, and it cost as much or more at every layer.)
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Callable

import numba
import numpy as np

from ... import registry
from ..._native.arrays import read_only
from ..resources import require_memory
from ..ranking import TilePattern, column_masks, radix_inverses, rank_weights
from ..zero_aware import layout_bytes, layout_of
from .checks import excess_violations, zero_aware_violations
from .ignored_bfs import ignored_top_down
from .minimized_bfs import minimized_top_down
from .scheduling import CHUNK, block_size, fill_parallel

UNSEEN = 255
BLANK_RULES = tuple(registry.BLANK_RULES)


@dataclass
class BuildResult:
    table: np.ndarray           # uint8 distance per rank (zero-aware: per entry of its layout; 255: unreachable)
    layers: list[int]           # states (placements or placement/region pairs) per depth
    seconds: float
    unreachable: int
    moves: int = 0              # moves generated (children looked up)


def bits_bytes(pattern: TilePattern) -> int:
    """Bytes of the two-bit state array of a blank-minimized or zero-aware build."""
    states = pattern.entries * pattern.free_cells
    return ((states + 31) // 32) * 8


EXACT_LAYOUT_BYTES = 1 << 28
"""The largest zero-aware layout a memory estimate makes to count the table's entries exactly."""


def estimate_peak_bytes(pattern: TilePattern, blank: str) -> int:
    """Peak memory of a build: the byte table, the two-bit states (minimized, zero-aware), the zero-aware
    layout and entries and a small margin.

    The zero-aware entries are counted exactly only when the layout that counts them is small (it is cached
    for the build); otherwise as the placements, a lower bound (every map has at least one region), so that
    a build far beyond memory is refused without making its layout first."""
    peak = pattern.entries
    if blank != "ignored":
        peak += bits_bytes(pattern)
    if blank == "zero-aware":
        arrays = layout_bytes(pattern.n, pattern.k)
        peak += arrays + (layout_of(pattern).entries if arrays <= EXACT_LAYOUT_BYTES else pattern.entries)
    return peak + (64 << 20)


def check_memory(pattern: TilePattern, blank: str) -> None:
    """Refuse a build whose estimated peak memory exceeds what this process may use."""
    require_memory(estimate_peak_bytes(pattern, blank), f"building pattern {pattern} on {pattern.board.dims} ({blank})")


def _count_unseen(values: np.ndarray) -> int:
    return sum(int(np.count_nonzero(values[i:i + (1 << 24)] == UNSEEN)) for i in range(0, values.shape[0], 1 << 24))


def build_table(pattern: TilePattern, blank: str = "minimized", threads: int | None = None,
                progress: Callable[[int, int, float], None] | None = None) -> BuildResult:
    """Build the distance table of ``pattern`` under a blank rule.

    ``progress(depth, states, done)`` is called once per layer with the layer's size and the fraction of
    the state space reached so far (placements, or (placement, blank cell) pairs for the blank minimized).

    ``zero-aware`` runs the blank-minimized search and also records the depth of every (placement, blank
    region) state: its ``table`` is indexed as :mod:`pdbtool.tables.zero_aware` says, not by rank.
    """
    if blank not in BLANK_RULES:
        raise ValueError(f"blank rule {blank!r}: choose one of {', '.join(BLANK_RULES)}")
    threads = threads or os.cpu_count() or 1
    threads = max(1, min(threads, numba.config.NUMBA_NUM_THREADS))
    board = pattern.board
    n, k = pattern.n, pattern.k
    entries = pattern.entries
    block = block_size(entries, threads)
    goal_rank = pattern.goal_rank()
    weights, inverses = rank_weights(n, k), radix_inverses(n, k)
    start = time.perf_counter()
    previous_threads = numba.get_num_threads()
    numba.set_num_threads(threads)
    layers: list[int] = []
    moves = 0
    try:
        table = np.empty(entries, dtype=np.uint8)
        fill_parallel(table, UNSEEN)
        nfc, nlc = column_masks(board)
        masks = (np.uint64(nfc), np.uint64(nlc), board.width)
        # the chunks of ranks that hold the layer to expand, and those that receive the next: a step scans
        # only the former, so that the small first and last layers cost no pass over the table
        active = np.zeros((entries + CHUNK - 1) // CHUNK, dtype=np.uint8)
        active_next = np.zeros_like(active)
        active[goal_rank // CHUNK] = 1
        if blank == "ignored":
            table[goal_rank] = 0
            depth, seen = 0, 1
            while True:
                expanded, discovered, looked_up = (int(x) for x in ignored_top_down(
                    table, depth, n, k, block, *masks, weights, inverses, active, active_next, threads))
                active, active_next = active_next, active
                active_next[:] = 0
                moves += looked_up
                layers.append(expanded)
                if progress:
                    progress(depth, expanded, min(1.0, (seen + discovered) / entries))
                if discovered == 0:
                    break
                seen += discovered  # may count a child twice when two threads reach it: progress only
                depth += 1
                if depth >= UNSEEN - 1:
                    raise OverflowError("distances exceed 253: the table would not fit a byte")
        else:
            if blank == "zero-aware":
                za_layout = layout_of(pattern)
                za = np.empty(za_layout.entries, dtype=np.uint8)
                fill_parallel(za, UNSEEN)
                za_args = (za, za_layout.base, za_layout.region, za_layout.binom, za_layout.kfact)
            else:  # read-only like a zero-aware layout's arrays: both builds share one compiled builder
                za_args = (np.empty(0, np.uint8), read_only(np.empty(1, np.int64)),
                           read_only(np.empty(0, np.uint8)), read_only(np.empty((1, 1), np.int64)), 1)
            nfree = pattern.free_cells
            bits = np.zeros(bits_bytes(pattern) // 8, dtype=np.uint64)
            goal_cells = pattern.goal_cells()
            occupied = 0
            for c in goal_cells:
                occupied |= 1 << int(c)
            # depth 0 (value 01) in every cell of the goal's blank region
            goal_region = pattern.blank_region(goal_cells, board.goal[0])
            for cell in goal_region:
                s = goal_rank * nfree + cell - bin(occupied & ((1 << cell) - 1)).count("1")
                bits[s >> 5] |= np.uint64(1) << np.uint64(2 * (s & 31))
            cells_total = entries * nfree
            depth, frontier, frontier_cells, seen_cells = 0, 1, len(goal_region), len(goal_region)
            while True:
                layers.append(frontier)
                if progress:
                    progress(depth, frontier, seen_cells / cells_total)
                expanded, discovered, new_cells, looked_up = (int(x) for x in minimized_top_down(
                    bits, table, depth, n, k, block, *masks, weights, inverses, active, active_next, threads,
                    *za_args))
                if expanded != frontier_cells:
                    raise AssertionError(f"depth {depth}: {expanded} cells expanded, {frontier_cells} "
                                         "marked: a builder bug")
                active, active_next = active_next, active
                active_next[:] = 0
                moves += looked_up
                if discovered == 0:
                    break
                frontier, frontier_cells = discovered, new_cells
                seen_cells += new_cells
                depth += 1
                if depth >= UNSEEN - 1:
                    raise OverflowError("distances exceed 253: the table would not fit a byte")
            del bits
        bad, unreachable = excess_violations(table, n, k, pattern.md_rows(), block, inverses)
        if blank == "zero-aware":
            bad += zero_aware_violations(za, table, n, k, pattern.md_rows(), block, za_layout.base,
                                         za_layout.region, za_layout.binom, za_layout.kfact)
            unreachable = _count_unseen(za)
            table = za
    finally:
        numba.set_num_threads(previous_threads)
    if bad:
        raise AssertionError(f"{bad} entries violate h >= Manhattan with an even excess: a builder bug")
    return BuildResult(table, layers, time.perf_counter() - start, int(unreachable), moves)
