"""Tile patterns: ranking placements as k-permutations of n cells, Manhattan distance, blank regions.

A placement of the k tiles of a pattern (in ascending tile order) is the tuple of their cells
``p_0 .. p_{k-1}``.  Its rank is lexicographic: digit ``d_i`` = number of cells below ``p_i`` not held by
the tiles before it (a popcount), ``rank = sum d_i * prod_{j>i} (n - j)``.  Unranking selects the
``d_i``-th free cell with BMI2 ``pdep``.  Ranks are a bijection onto ``[0, n!/(n-k)!)``, and consecutive
ranks differ only in the cell of the last tile.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import perm
from collections.abc import Iterable, Sequence

import numba
import numpy as np
from numba import njit

from .._native.intrinsics import popcount, select_bit, trailing_zeros
from ..puzzle.board import Board, BoardError
from ..errors import PdbtoolError


class PatternError(PdbtoolError, ValueError):
    """A pattern that cannot be used; the message is one line meant for the user."""


# --- kernels ------------------------------------------------------------------------------------------

@njit(cache=True, inline="always")
def cells_mask(n):
    """The mask of cells 0..n-1 for 1 <= n <= 64 (``(1 << n) - 1`` would shift by 64 on a board of 64
    cells, which LLVM leaves undefined)."""
    return ~numba.uint64(0) >> numba.uint64(64 - n)


@njit(cache=True, inline="always")
def rank_cells(cells, n):
    """Rank of a placement (``cells[i]`` = cell of the pattern's i-th tile) among the k-permutations of n."""
    used = numba.uint64(0)
    r = 0
    for i in range(cells.shape[0]):
        c = cells[i]
        below = (numba.uint64(1) << numba.uint64(c)) - numba.uint64(1)
        r = r * (n - i) + (c - popcount(used & below))
        used |= numba.uint64(1) << numba.uint64(c)
    return r


@njit(cache=True, inline="always")
def unrank_cells(r, n, k, cells):
    """Write the placement of rank r into ``cells`` (length k); return the mask of occupied cells."""
    # digits from the last (radix n-k+1) to the first (radix n)
    for i in range(k - 1, -1, -1):
        radix = n - i
        q = r // radix
        cells[i] = r - q * radix
        r = q
    used = numba.uint64(0)
    full = cells_mask(n)
    for i in range(k):
        bit = select_bit(cells[i], full & ~used)
        cells[i] = trailing_zeros(bit)
        used |= bit
    return used


def rank_weights(n, k):
    """``weights[i] = prod_{j>i} (n - j)``: the place value of digit i."""
    weights = np.ones(k, dtype=np.int64)
    for i in range(k - 2, -1, -1):
        weights[i] = weights[i + 1] * (n - i - 1)
    return weights


def radix_inverses(n, k):
    """``1 / (n - i)`` per digit: unranking divides by multiplying (exact after a one-step correction)."""
    return np.array([1.0 / (n - i) for i in range(k)], dtype=np.float64)


@njit(cache=True, inline="always")
def unrank_digits(r, n, k, inverses, cells, digits, prefix):
    """Unrank without integer division, keeping what incremental child ranks need.

    Writes the cells, the digits and ``prefix[i]`` = mask of the cells of tiles 0..i-1; returns the mask of
    all occupied cells.
    """
    for i in range(k - 1, -1, -1):
        radix = n - i
        q = np.int64(r * inverses[i])
        d = r - q * radix
        if d < 0:
            q -= 1
            d += radix
        elif d >= radix:
            q += 1
            d -= radix
        digits[i] = d
        r = q
    used = numba.uint64(0)
    full = cells_mask(n)
    for i in range(k):
        prefix[i] = used
        bit = select_bit(digits[i], full & ~used)
        cells[i] = trailing_zeros(bit)
        used |= bit
    return used


@njit(cache=True, inline="always")
def child_rank(r, i, c, q, cells, prefix, weights, k):
    """Rank after tile i moves from cell c to the free cell q, from the parent's rank r.

    Digit i changes by (q - c) less the earlier tiles' cells between them; a later tile j's digit changes
    only if its cell lies between c and q (never for a horizontal move), by one.
    """
    if q > c:
        between = ((numba.uint64(1) << numba.uint64(q)) - numba.uint64(1)) & ~(
            (numba.uint64(2) << numba.uint64(c)) - numba.uint64(1))
        r += (q - c - popcount(prefix[i] & between)) * weights[i]
        if q - c > 1:
            for j in range(i + 1, k):
                if c < cells[j] < q:
                    r += weights[j]
    else:
        between = ((numba.uint64(1) << numba.uint64(c)) - numba.uint64(1)) & ~(
            (numba.uint64(2) << numba.uint64(q)) - numba.uint64(1))
        r += (q - c + popcount(prefix[i] & between)) * weights[i]
        if c - q > 1:
            for j in range(i + 1, k):
                if q < cells[j] < c:
                    r -= weights[j]
    return r


@njit(cache=True)
def rank_many(placements, n):
    """Ranks of the rows of a 2-D array of placements."""
    out = np.empty(placements.shape[0], dtype=np.int64)
    for j in range(placements.shape[0]):
        out[j] = rank_cells(placements[j], n)
    return out


@njit(cache=True)
def unrank_many(ranks, n, k):
    """Placements (rows) of an array of ranks."""
    out = np.empty((ranks.shape[0], k), dtype=np.int64)
    cells = np.empty(k, dtype=np.int64)
    for j in range(ranks.shape[0]):
        unrank_cells(ranks[j], n, k, cells)
        out[j, :] = cells
    return out


@njit(cache=True, inline="always")
def grown_region(region, free, not_first_col, not_last_col, width):
    """``region`` (a mask of cells) grown by one step to its neighbours among ``free``."""
    return (region | ((region << numba.uint64(1)) & not_first_col) | ((region >> numba.uint64(1)) & not_last_col)
            | (region << numba.uint64(width)) | (region >> numba.uint64(width))) & free


@njit(cache=True, inline="always")
def flood_region(seed, free, not_first_col, not_last_col, width):
    """Cells reachable from the cells of ``seed`` through ``free`` (all masks of cells)."""
    region = seed & free
    while True:
        grown = grown_region(region, free, not_first_col, not_last_col, width)
        if grown == region:
            return region
        region = grown


@njit(cache=True)
def manhattan_of_ranks(ranks, n, k, md_rows):
    """Manhattan distance of each placement; ``md_rows[i, c]`` is the distance of tile i in cell c."""
    out = np.empty(ranks.shape[0], dtype=np.int64)
    cells = np.empty(k, dtype=np.int64)
    for j in range(ranks.shape[0]):
        unrank_cells(ranks[j], n, k, cells)
        s = 0
        for i in range(k):
            s += md_rows[i, cells[i]]
        out[j] = s
    return out


def column_masks(board: Board) -> tuple[int, int]:
    """Masks of the cells not in the first column and not in the last column."""
    not_first = not_last = 0
    for c in range(board.n):
        if c % board.width != 0:
            not_first |= 1 << c
        if c % board.width != board.width - 1:
            not_last |= 1 << c
    return not_first, not_last


# --- the pattern object ---------------------------------------------------------------------------------

def parse_tiles(text: str | Iterable[int]) -> tuple[int, ...]:
    """Tiles from ``'1,2,3'`` / ``'1 2 3'`` / an iterable; order and duplicates are checked later."""
    if isinstance(text, str):
        items = text.replace(",", " ").split()
        try:
            return tuple(int(x) for x in items)
        except ValueError:
            raise PatternError(f"pattern {text!r}: tiles must be whole numbers, like 1,2,3") from None
    return tuple(int(x) for x in text)


@dataclass(frozen=True)
class TilePattern:
    """A subset of the tiles of a board; ranks, unranks and measures their placements."""

    board: Board
    tiles: tuple[int, ...]

    def __post_init__(self):
        tiles = tuple(int(t) for t in self.tiles)
        if not tiles:
            raise PatternError("pattern is empty")
        seen = set()
        for t in tiles:
            if t in seen:
                raise PatternError(f"pattern {list(tiles)}: tile {t} appears twice")
            seen.add(t)
            if not 1 <= t <= self.board.n - 1:
                raise PatternError(f"pattern {list(tiles)}: tile {t} is outside 1..{self.board.n - 1}")
        object.__setattr__(self, "tiles", tuple(sorted(tiles)))

    @property
    def n(self) -> int:
        return self.board.n

    @property
    def k(self) -> int:
        return len(self.tiles)

    @property
    def entries(self) -> int:
        return perm(self.n, self.k)

    @property
    def free_cells(self) -> int:
        return self.n - self.k

    def goal_cells(self) -> np.ndarray:
        return np.array([self.board.goal[t] for t in self.tiles], dtype=np.int64)

    def goal_rank(self) -> int:
        return int(rank_cells(self.goal_cells(), self.n))

    def rank(self, cells: Sequence[int] | np.ndarray) -> int:
        """Rank of a placement (cell of each tile, in ascending tile order)."""
        arr = np.asarray(cells, dtype=np.int64)
        if arr.shape != (self.k,) or len(set(arr.tolist())) != self.k or arr.min() < 0 or arr.max() >= self.n:
            raise PatternError(f"placement {arr.tolist()} is not {self.k} distinct cells of 0..{self.n - 1}")
        return int(rank_cells(arr, self.n))

    def unrank(self, r: int) -> tuple[int, ...]:
        if not 0 <= r < self.entries:
            raise PatternError(f"rank {r} outside 0..{self.entries - 1}")
        cells = np.empty(self.k, dtype=np.int64)
        unrank_cells(np.int64(r), self.n, self.k, cells)
        return tuple(int(c) for c in cells)

    def sample_ranks(self, samples: int, full: bool, seed: int | None) -> tuple[np.ndarray, int, str]:
        """(ranks, count, what) of the placements a check reads: all of them (``ranks`` empty) when ``full``
        or ``samples`` covers them, else the goal's and ``samples`` random ones (seeded)."""
        if full or samples >= self.entries:
            return np.empty(0, dtype=np.int64), self.entries, f"all {self.entries:,} placements"
        rng = np.random.default_rng(seed)
        ranks = np.concatenate([[self.goal_rank()], rng.integers(0, self.entries, size=max(samples, 0))])
        count = ranks.shape[0]
        return ranks.astype(np.int64), count, f"{count:,} placements (goal and {count - 1:,} random, seed {seed})"

    def placement_of(self, state: Sequence[int]) -> tuple[int, ...]:
        """The cells of the pattern's tiles in a state (the tile in each cell)."""
        where = {int(t): c for c, t in enumerate(state)}
        return tuple(where[t] for t in self.tiles)

    def rank_state(self, state: Sequence[int]) -> int:
        return self.rank(self.placement_of(state))

    def md_rows(self) -> np.ndarray:
        """``md_rows[i, c]``: Manhattan distance of the pattern's i-th tile standing in cell c."""
        return np.ascontiguousarray(self.board.manhattan_table()[list(self.tiles)])

    def manhattan(self, cells: Sequence[int]) -> int:
        rows = self.md_rows()
        return int(sum(rows[i, c] for i, c in enumerate(cells)))

    def blank_region(self, cells: Sequence[int] | np.ndarray, blank: int) -> tuple[int, ...]:
        """Cells a blank in cell ``blank`` reaches through the cells free of pattern tiles."""
        occupied = 0
        for c in cells:
            occupied |= 1 << int(c)
        if occupied >> blank & 1:
            raise PatternError(f"cell {blank} is held by a pattern tile")
        free = ((1 << self.n) - 1) & ~occupied
        nf, nl = column_masks(self.board)
        region = int(flood_region(np.uint64(1 << blank), np.uint64(free), np.uint64(nf), np.uint64(nl),
                                  self.board.width))
        return tuple(c for c in range(self.n) if region >> c & 1)

    def __str__(self) -> str:
        return ",".join(str(t) for t in self.tiles)


def check_disjoint(patterns: Sequence[TilePattern]) -> None:
    """Refuse patterns of a partition that share a tile or belong to different boards."""
    owner: dict[int, int] = {}
    for j, p in enumerate(patterns):
        if p.board != patterns[0].board:
            raise PatternError("patterns of a partition must share one board and goal")
        for t in p.tiles:
            if t in owner:
                raise PatternError(f"patterns {owner[t] + 1} and {j + 1} of the partition overlap on tile {t}")
            owner[t] = j


__all__ = ["TilePattern", "PatternError", "BoardError", "cells_mask", "rank_cells", "unrank_cells", "rank_many",
           "unrank_many", "grown_region", "flood_region", "manhattan_of_ranks", "column_masks", "parse_tiles",
           "check_disjoint"]
