"""Building the excess of every group of tiles (from the blank-minimized builder, or a 0-1 search over
placement and blank cell), the region rows of the placements whose regions differ, and the sets of
groups in worker processes."""

from __future__ import annotations

import os
from collections.abc import Callable
from math import perm

import numba
import numpy as np
from numba import njit

from ..._native.intrinsics import trailing_zeros
from ...puzzle.board import Board
from ..ranking import TilePattern, cells_mask, column_masks, flood_region, manhattan_of_ranks, rank_cells, unrank_cells
from .sets import GOAL_RULES, DynamicError, groups_of


def group_excess(board: Board, tiles: tuple[int, ...], goal: str = "region") -> tuple[np.ndarray, int]:
    """(excess per rank as uint8, unreachable count) of one group, from its blank-minimized table.

    ``goal``: the abstract goal is the group's tiles at home with the blank in the goal blank's region
    (``"region"``, what the builders do) or anywhere (``"anywhere"``: weaker where the home cells cut the
    free cells, e.g. tiles 1 and 5 around the corner of Korf's goal; computed from
    :func:`group_distances`)."""
    from ..build import build_table

    if goal == "region":
        pattern = TilePattern(board, tiles)
        least = build_table(pattern, "minimized", threads=1).table.astype(np.int64)
    else:
        pattern, dist = group_distances(board, tiles, goal)
        least = dist.reshape(pattern.entries, pattern.n).min(axis=1).astype(np.int64)
    md = manhattan_of_ranks(np.arange(pattern.entries, dtype=np.int64), pattern.n, pattern.k, pattern.md_rows())
    unreached = least == 255
    excess = np.where(unreached, 0, least - md)
    if excess.min() < 0 or excess.max() >= 255 or (excess & 1).any():
        raise AssertionError(f"group {tiles}: excess over Manhattan is negative or odd (a builder bug)")
    return excess.astype(np.uint8), int(unreached.sum())


@njit(cache=True)
def _blank_distances(goal_cells, goal_blank, n, k, entries, nb):
    """Distance of every (placement, blank cell) to the goal (index ``rank * n + blank``; 255: none): a
    0-1 breadth-first search in which a move of a group tile costs 1 and a step of the blank through the
    free cells costs nothing.  ``goal_blank[b]``: whether the goal holds with the blank in cell b (an array, not
    a mask: a 64-cell mask does not fit the int64 a Python int is passed as)."""
    states = entries * n
    dist = np.full(states, 255, dtype=np.uint8)
    cur = np.empty(2 * states, dtype=np.int64)
    nxt = np.empty(2 * states, dtype=np.int64)
    cells = np.empty(k, dtype=np.int64)
    goal = rank_cells(goal_cells, n)
    ncur = 0
    for b in range(n):
        if goal_blank[b]:
            dist[goal * n + b] = 0
            cur[ncur] = goal * n + b
            ncur += 1
    d = 0
    while ncur > 0:
        nnext = 0
        i = 0
        while i < ncur:  # the zero-cost steps append to the layer being read
            s = cur[i]
            i += 1
            if dist[s] != d:
                continue
            r = s // n
            b = s - r * n
            unrank_cells(r, n, k, cells)
            for j in range(4):
                q = nb[b, j]
                if q < 0:
                    continue
                moved = -1
                for a in range(k):
                    if cells[a] == q:
                        moved = a
                if moved < 0:
                    t = r * n + q
                    if dist[t] > d:
                        dist[t] = d
                        cur[ncur] = t
                        ncur += 1
                else:
                    cells[moved] = b
                    t = rank_cells(cells, n) * n + q
                    cells[moved] = q
                    if dist[t] > d + 1:
                        dist[t] = d + 1
                        nxt[nnext] = t
                        nnext += 1
        cur, nxt = nxt, cur
        ncur = nnext
        d += 1
    return dist


@njit(cache=True)
def _region_rows(dist, n, k, entries, md_rows, not_first, not_last, width, out):
    """Rows ``(rank, region mask, excess)`` of every region of the placements whose free cells form regions
    of different distances (all of them, so that a look-up needs no other value); returns their count."""
    cells = np.empty(k, dtype=np.int64)
    masks = np.empty(n, dtype=np.int64)
    full = cells_mask(n)
    rows = 0
    for r in range(entries):
        used = unrank_cells(r, n, k, cells)
        free = full & ~used
        rem = free
        nreg = 0
        while rem:
            seed = rem & (~rem + numba.uint64(1))
            region = flood_region(seed, free, not_first, not_last, width)
            masks[nreg] = np.int64(region)
            rem &= ~region
            nreg += 1
        if nreg < 2:
            continue
        first = dist[r * n + trailing_zeros(masks[0])]
        differ = False
        for i in range(1, nreg):
            if dist[r * n + trailing_zeros(masks[i])] != first:
                differ = True
        if not differ:
            continue
        md = 0
        for i in range(k):
            md += md_rows[i, cells[i]]
        for i in range(nreg):
            v = dist[r * n + trailing_zeros(masks[i])]
            if v == 255:  # a region the goal is not reached from: no row, no constraint
                continue
            out[rows, 0] = r
            out[rows, 1] = masks[i]
            out[rows, 2] = np.int64(v) - md
            rows += 1
    return rows


def group_distances(board: Board, tiles: tuple[int, ...], goal: str = "region") -> tuple[TilePattern, np.ndarray]:
    """(pattern, distance of every (placement, blank cell), see :func:`_blank_distances`) of one group, to
    its tiles at home with the blank in the goal blank's region (``goal="region"``) or anywhere."""
    if goal not in GOAL_RULES:
        raise DynamicError(f"unknown goal rule {goal!r}: choose one of {', '.join(GOAL_RULES)}")
    pattern = TilePattern(board, tiles)
    goal_cells = np.asarray(pattern.goal_cells(), dtype=np.int64)
    goal_blank = np.zeros(pattern.n, dtype=np.uint8)
    if goal == "region":
        goal_blank[list(pattern.blank_region(goal_cells, board.goal[0]))] = 1
    else:
        goal_blank[:] = 1
        goal_blank[goal_cells] = 0
    nb = np.asarray(board.neighbours(), dtype=np.int64)
    return pattern, _blank_distances(goal_cells, goal_blank, pattern.n, pattern.k, pattern.entries, nb)


def goal_splits(board: Board, tiles: tuple[int, ...]) -> bool:
    """Whether the group's home cells cut the free cells into regions (then the goal rules differ)."""
    pattern = TilePattern(board, tiles)
    goal_cells = pattern.goal_cells()
    return len(pattern.blank_region(goal_cells, board.goal[0])) != pattern.free_cells


def group_regions(board: Board, tiles: tuple[int, ...], goal: str = "region") -> np.ndarray:
    """The region rows (rank, region mask, excess) of one group (see :func:`_region_rows`); ``goal`` as in
    :func:`group_distances`."""
    pattern, dist = group_distances(board, tiles, goal)
    n, k = pattern.n, pattern.k
    not_first, not_last = column_masks(board)
    out = np.empty((pattern.entries * (k + 2), 3), dtype=np.int64)
    rows = _region_rows(dist, n, k, pattern.entries, pattern.md_rows(), np.uint64(not_first), np.uint64(not_last),
                        board.width, out)
    found = out[:rows].copy()
    if rows and (found[:, 2].min() < 0 or (found[:, 2] & 1).any()):
        raise AssertionError(f"group {tiles}: a region's excess is negative or odd (a builder bug)")
    return found


def _build_chunk(args):
    """Worker: the excess arrays (or region rows) of some groups (a process-pool task)."""
    width, height, goal, groups, regions = args
    board = Board(width, height, tuple(goal))
    if regions:
        return [group_regions(board, g) for g in groups]
    return [group_excess(board, g) for g in groups]


def _map_groups(board: Board, groups: list, regions: bool, jobs: int | None, small: bool,
                progress: Callable[[int], None] | None):
    """Yield (index, result) of every group, in ``jobs`` processes unless the work is small."""
    jobs = jobs or os.cpu_count() or 1
    if jobs <= 1 or small:
        for i, g in enumerate(groups):
            yield i, (group_regions(board, g) if regions else group_excess(board, g))
            if progress:
                progress(i + 1)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    size = max(1, min(64, len(groups) // (4 * jobs)))
    chunks = [(i, groups[i:i + size]) for i in range(0, len(groups), size)]
    done = 0
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_build_chunk, (board.width, board.height, list(board.goal), gs, regions)): i
                   for i, gs in chunks}
        for fut in as_completed(futures):
            i = futures[fut]
            results = fut.result()
            for j, res in enumerate(results):
                yield i + j, res
            done += len(results)
            if progress:
                progress(done)


def build_set(board: Board, k: int, jobs: int | None = None,
              progress: Callable[[int], None] | None = None) -> tuple[np.ndarray, int]:
    """Excess of every group of k tiles, stacked (groups x entries), and the unreachable count.

    Each table is tiny, so the builder runs single-threaded per group and ``jobs`` processes share the
    groups; ``progress(done)`` is called with the number of groups finished so far."""
    groups = groups_of(board, k)
    per = perm(board.n, k)
    out = np.zeros((len(groups), per), dtype=np.uint8)
    unreachable = 0
    # small sets are quicker in this process than a pool is to start
    for i, (ex, u) in _map_groups(board, groups, False, jobs, len(groups) * per < 200_000, progress):
        out[i] = ex
        unreachable += u
    return out, unreachable


def build_regions(board: Board, k: int, jobs: int | None = None,
                  progress: Callable[[int], None] | None = None) -> np.ndarray:
    """The region rows of every group of k tiles: int64 ``(group, rank, region mask, excess)``, by group
    and rank."""
    groups = groups_of(board, k)
    parts: list = [None] * len(groups)
    for i, rows in _map_groups(board, groups, True, jobs, len(groups) * perm(board.n, k) < 50_000, progress):
        parts[i] = np.column_stack([np.full(len(rows), i, dtype=np.int64), rows]) if len(rows) else \
            np.zeros((0, 4), dtype=np.int64)
    return np.concatenate(parts) if parts else np.zeros((0, 4), dtype=np.int64)
