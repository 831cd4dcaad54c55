"""Random states of a board: uniformly random solvable states and random walks from the goal.

Both come from a counter-based stream: state ``j`` of a run with seed ``s`` is drawn from a generator
seeded by ``(s, j // CHUNK)``, so a run is reproducible whatever the number of threads, and the sampler
(:mod:`pdbtool.analysis.sampling`) evaluates exactly the states that :func:`random_states` returns for the
same seed.

A uniformly random permutation of all the cells is drawn (Fisher-Yates); when it is unsolvable, the tiles
of the first two cells that do not hold the blank are swapped.  That swap is a bijection between the
unsolvable and the solvable permutations, so the result is uniform over the solvable states.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from .._native import numba_cache  # noqa: F401  (the package-wide cache stamp)
from ..errors import PdbtoolError
from ..puzzle.board import Board

CHUNK = 4096  # states drawn from one generator seed
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


class SamplingError(PdbtoolError):
    pass


@njit(cache=True, inline="always")
def _mix(z):
    """SplitMix64's output function."""
    z = (z ^ (z >> numba.uint64(30))) * numba.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> numba.uint64(27))) * numba.uint64(0x94D049BB133111EB)
    return z ^ (z >> numba.uint64(31))


@njit(cache=True, inline="always")
def chunk_state(seed, chunk):
    """The generator state of chunk ``chunk`` of a run with ``seed``."""
    return _mix(numba.uint64(seed) * numba.uint64(0xD1B54A32D192ED03) + numba.uint64(chunk) * _GOLDEN
                + numba.uint64(1))


@njit(cache=True, inline="always")
def next_below(rng, bound):
    """(a number in 0..bound-1, the next generator state): the high 32 bits scaled by a multiply, not a
    division (a bias below bound / 2**32)."""
    rng = rng + _GOLDEN
    return numba.int64(((_mix(rng) >> numba.uint64(32)) * numba.uint64(bound)) >> numba.uint64(32)), rng


@njit(cache=True, inline="always")
def solvable(tiles, goal, width):
    """The parity rule of :meth:`pdbtool.puzzle.board.Board.is_solvable`, on an array."""
    n = tiles.shape[0]
    one = numba.uint64(1)
    visited = numba.uint64(0)  # a cell set: unsigned, so that cell 63 of a 64-cell board is a plain bit
    transpositions = 0
    blank = 0
    for c in range(n):
        if tiles[c] == 0:
            blank = c
        if not (visited >> numba.uint64(c)) & one:
            j = c
            length = 0
            while not (visited >> numba.uint64(j)) & one:
                visited |= one << numba.uint64(j)
                j = goal[tiles[j]]
                length += 1
            transpositions += length - 1
    g = goal[0]
    dist = abs(blank // width - g // width) + abs(blank % width - g % width)
    return (transpositions & 1) == (dist & 1)


@njit(cache=True, inline="always")
def draw_uniform(rng, goal, width, tiles):
    """A uniformly random solvable state into ``tiles``; returns the generator state."""
    n = tiles.shape[0]
    for c in range(n):
        tiles[c] = c
    for i in range(n - 1, 0, -1):
        j, rng = next_below(rng, i + 1)
        x = tiles[i]
        tiles[i] = tiles[j]
        tiles[j] = x
    if not solvable(tiles, goal, width):
        a = 0 if tiles[0] != 0 else 1
        b = a + 1 if tiles[a + 1] != 0 else a + 2
        x = tiles[a]
        tiles[a] = tiles[b]
        tiles[b] = x
    return rng


@njit(cache=True, inline="always")
def _walk_moves(rng, nb, steps, tiles, blank, prev, allowed):
    """``steps`` more random moves of the blank (in ``blank`` after move ``prev``; -1: none), each allowed
    move equally likely and the previous one never undone, so that a walk made in pieces is the walk made
    in one.  Returns (generator state, blank, previous move)."""
    for _ in range(steps):
        k = 0
        for m in range(4):
            if nb[blank, m] >= 0 and m + prev != 3:
                allowed[k] = m
                k += 1
        i, rng = next_below(rng, k)
        m = allowed[i]
        q = nb[blank, m]
        tiles[blank] = tiles[q]
        tiles[q] = 0
        blank = q
        prev = m
    return rng, blank, prev


@njit(cache=True)
def _cursors(seed, first_chunk, chunks):
    """The generator state of each chunk of a run, from chunk ``first_chunk`` on."""
    rngs = np.empty(chunks, dtype=np.uint64)
    for c in range(chunks):
        rngs[c] = chunk_state(seed, first_chunk + c)
    return rngs


@njit(cache=True, parallel=True)
def _advance(rngs, nexts, walks, tiles, count, goal, goal_tiles, width, nb, walk_length, budget, out):
    """Draw more states of every chunk, at most ``budget`` units of work per chunk (a move of a walk is a
    unit, a uniform state as many as its cells), into ``out``; return how many states are left to draw.

    Chunk ``c``'s cursor: its generator state ``rngs[c]``, its next state ``nexts[c]``, and of the walk in
    progress ``walks[c]`` (moves left, -1 when none; its blank; its previous move) and ``tiles[c]``.  The
    states are those of one call per chunk, whatever the budget."""
    chunks = rngs.shape[0]
    n = goal.shape[0]
    left = np.zeros(chunks, dtype=np.int64)
    goal_blank = 0
    for c in range(n):
        if goal_tiles[c] == 0:
            goal_blank = c
    for c in prange(chunks):
        end = min(count, (c + 1) * CHUNK)
        rng = rngs[c]
        row = tiles[c]
        allowed = np.empty(4, dtype=np.int64)
        units = 0
        while nexts[c] < end and units < budget:
            j = nexts[c]
            if walk_length < 0:
                rng = draw_uniform(rng, goal, width, row)
                units += n
            else:
                if walks[c, 0] < 0:
                    for i in range(n):
                        row[i] = goal_tiles[i]
                    walks[c, 0] = walk_length
                    walks[c, 1] = goal_blank
                    walks[c, 2] = -1
                steps = min(walks[c, 0], max(1, budget - units))
                rng, walks[c, 1], walks[c, 2] = _walk_moves(rng, nb, steps, row, walks[c, 1], walks[c, 2], allowed)
                walks[c, 0] -= steps
                units += steps + 1
                if walks[c, 0] > 0:
                    continue
                walks[c, 0] = -1
            for i in range(n):
                out[j, i] = row[i]
            nexts[c] = j + 1
        rngs[c] = rng
        left[c] = end - nexts[c]
    return left.sum()


UNITS_PER_CALL = 1 << 24  # work of one kernel call (a walk's moves, a uniform state's cells): a fraction of a second


def _draw(board: Board, count: int, seed: int, walk: int, first_chunk: int, out: np.ndarray) -> None:
    """The states of :func:`random_states` into ``out``, drawn in kernel calls of at most about
    ``UNITS_PER_CALL`` units of work, between which a signal is seen (a walk of 10**12 moves, or many
    long ones, was one call, deaf to SIGINT and SIGTERM until it ended)."""
    chunks = (count + CHUNK - 1) // CHUNK
    rngs = _cursors(seed, first_chunk, chunks)
    nexts = np.arange(chunks, dtype=np.int64) * CHUNK
    walks = np.full((chunks, 3), -1, dtype=np.int64)
    tiles = np.empty((chunks, board.n), dtype=np.int64)
    budget = max(board.n, UNITS_PER_CALL // chunks)
    goal, goal_tiles = np.array(board.goal, dtype=np.int64), np.array(board.goal_tiles, dtype=np.int64)
    nb = board.neighbours()
    while _advance(rngs, nexts, walks, tiles, count, goal, goal_tiles, board.width, nb, walk, budget, out):
        pass


def check_seed(seed: int) -> int:
    if not 0 <= int(seed) < 1 << 64:
        raise SamplingError(f"seed {seed}: give a number from 0 to 2**64 - 1")
    return int(seed)


def random_states(board: Board, count: int, seed: int = 0, walk: int | None = None,
                  first_chunk: int = 0) -> np.ndarray:
    """``count`` states (rows of the tile in each cell): uniformly random solvable ones, or with ``walk``
    the ends of random walks of that many moves from the goal (the previous move never undone).  With
    ``first_chunk``, the states of the stream from state ``first_chunk * CHUNK`` on."""
    if count < 1:
        raise SamplingError(f"count {count}: give at least 1")
    if walk is not None and walk < 0:
        raise SamplingError(f"walk length {walk}: give 0 or more")
    out = np.empty((count, board.n), dtype=np.int64)
    _draw(board, count, check_seed(seed), -1 if walk is None else int(walk), int(first_chunk), out)
    return out


def format_instances(board: Board, states: np.ndarray, header: list[str], first_id: int = 1) -> str:
    """An instance file (the format ``pdbtool solve`` reads): comment lines, then ``id tiles...`` a line."""
    lines = [f"# {h}" for h in header]
    width = len(str(first_id + len(states) - 1))
    for i, row in enumerate(states):
        lines.append(f"{str(first_id + i).ljust(width)} " + " ".join(str(int(t)) for t in row))
    return "\n".join(lines) + "\n"


__all__ = ["CHUNK", "SamplingError", "random_states", "format_instances", "check_seed", "draw_uniform",
           "chunk_state", "next_below", "solvable"]
