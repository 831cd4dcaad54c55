"""The distribution of a heuristic's values over the solvable states, by the blank's cell: sampled
uniformly at random (parallel kernels, reproducible with a seed) or, on small boards, over every state.

The counts are kept per blank cell because Korf, Reid & Edelkamp's prediction weights each cell's
distribution by the share of the brute-force tree's nodes that have the blank there
(:mod:`pdbtool.analysis.prediction`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numba
import numpy as np
from numba import njit, prange

from .._native import numba_cache  # noqa: F401  (the package-wide cache stamp)
from ..processes import run_in_slices
from ..puzzle.board import Board
from .evaluators import evaluator, state_value, value_bound
from .states import CHUNK, SamplingError, check_seed, chunk_state, draw_uniform, random_states, solvable

EXACT_MAX_CELLS = 10  # every state of a board: 10! / 2 states at most
PYTHON_BATCH = 16 * CHUNK
FIRST_SLICE_CHUNKS = 16  # chunks of the sampler's first kernel call; later ones are sized by their time


@dataclass
class Distribution:
    """``counts[c, h]``: the states counted with the blank in cell c and heuristic value h.  ``odd``: how
    many of them have h of the other parity than the blank's distance to its goal cell (0: the heuristic
    keeps the parity of the optimal length, and IDA*'s bounds grow by two)."""

    board: Board
    heuristic: str
    counts: np.ndarray
    odd: int
    exact: bool
    seed: int | None = None
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # of the whole process (every thread) while sampling
    of: str | None = None  # the states counted were these (an instance file's), not the state space's
    states: int = field(init=False)

    def __post_init__(self):
        self.states = int(self.counts.sum())
        if self.states == 0:
            raise SamplingError("no states counted")

    @property
    def histogram(self) -> np.ndarray:
        """States counted per heuristic value, all blank cells together (trailing zeros dropped)."""
        total = self.counts.sum(axis=0)
        nz = np.nonzero(total)[0]
        return total[: nz[-1] + 1]

    @property
    def mean(self) -> float:
        hist = self.histogram
        return float((hist * np.arange(hist.size)).sum() / self.states)

    @property
    def parity(self) -> bool:
        """Whether every state counted had h of the parity of its optimal length."""
        return self.odd == 0

    def cell_cumulative(self) -> np.ndarray:
        """``P[c, x]``: the share of the states with the blank in cell c whose h is at most x (a cell with
        no state counted borrows the distribution of all cells together)."""
        counts = self.counts.astype(np.float64)
        per_cell = counts.sum(axis=1)
        overall = counts.sum(axis=0) / counts.sum()
        cum = np.empty_like(counts)
        for c in range(counts.shape[0]):
            row = counts[c] / per_cell[c] if per_cell[c] > 0 else overall
            cum[c] = np.cumsum(row)
        return np.minimum(cum, 1.0)

    def to_dict(self) -> dict:
        return {"board": self.board.dims, "goal": self.board.goal_name, "heuristic": self.heuristic,
                "states": self.states, "exact": self.exact, "seed": self.seed, "mean": round(self.mean, 6),
                "parity": self.parity, "seconds": round(self.seconds, 3), "cpu_seconds": round(self.cpu_seconds, 3),
                "states_per_second": round(self.states / self.seconds) if self.seconds > 0 else None,
                "states_per_cpu_second": round(self.states / self.cpu_seconds) if self.cpu_seconds > 0 else None,
                "histogram": [int(x) for x in self.histogram], **({"of": self.of} if self.of else {})}


@njit(cache=True)
def _unrank_permutation(r, n, tiles, pool):
    """Permutation number ``r`` of 0..n-1 in the factorial number system."""
    for i in range(n):
        pool[i] = i
    for i in range(n):
        f = 1
        for j in range(2, n - i):
            f *= j
        d = r // f
        r -= d * f
        tiles[i] = pool[d]
        for j in range(d, n - i - 1):
            pool[j] = pool[j + 1]


@njit(cache=True, inline="always")
def _record(ev, tiles, where, cells, width, g, bound, hist, odd, slot):
    """Count one state in ``slot``'s histogram by its blank's cell (h capped at ``bound``), and whether h's
    parity differs from the blank's distance to its goal cell ``g`` (:class:`Distribution`'s ``odd``)."""
    h = state_value(ev, tiles, where, cells)
    blank = 0
    for c in range(tiles.shape[0]):
        if tiles[c] == 0:
            blank = c
    if h > bound:
        h = bound
    hist[slot, blank, h] += 1
    dist = abs(blank // width - g // width) + abs(blank % width - g % width)
    if (h - dist) & 1:
        odd[slot] += 1


@njit(cache=True, parallel=True)
def _enumerate(ev, total, goal, width, bound, slots, hist, odd):
    n = goal.shape[0]
    g = goal[0]
    per = (total + slots - 1) // slots
    for slot in prange(slots):
        tiles = np.empty(n, dtype=np.int64)
        pool = np.empty(n, dtype=np.int64)
        where = np.empty(n, dtype=np.int64)
        cells = np.empty(n, dtype=np.int64)
        for r in range(slot * per, min(total, (slot + 1) * per)):
            _unrank_permutation(r, n, tiles, pool)
            if not solvable(tiles, goal, width):
                continue
            _record(ev, tiles, where, cells, width, g, bound, hist, odd, slot)


def _slots(threads: int | None) -> int:
    return max(1, int(threads) if threads else numba.get_num_threads())


def _finish(board, name, hist, odd, bound, exact, seed, seconds, cpu=0.0) -> Distribution:
    counts = hist.sum(axis=0)
    if counts[:, bound].any():
        raise SamplingError(f"{name}: a value reached {bound}, beyond the tables' bound (a bug)")
    return Distribution(board, name, counts, int(odd.sum()), exact, seed, seconds, cpu)


def sample(heuristic, count: int, seed: int = 0, threads: int | None = None, name: str | None = None,
           progress=None) -> Distribution:
    """The distribution of ``heuristic``'s values over ``count`` uniformly random solvable states."""
    import time

    if count < 1:
        raise SamplingError(f"sample count {count}: give at least 1")
    seed = check_seed(seed)
    board = heuristic.board
    name = name or getattr(heuristic, "name", type(heuristic).__name__)
    bound = value_bound(heuristic) + 1
    goal = np.array(board.goal, dtype=np.int64)
    ev = evaluator(heuristic)
    start = time.perf_counter()
    if ev is not None:
        slots = _slots(threads)
        # compile (or load) the kernel before the clock starts: the rate is that of the sampling
        _sample_range(ev, 0, 1, seed, goal, board.width, bound, 1, np.zeros((1, board.n, bound + 1), dtype=np.int64),
                      np.zeros(1, dtype=np.int64))
        start, cpu = time.perf_counter(), time.process_time()
        hist = np.zeros((slots, board.n, bound + 1), dtype=np.int64)
        odd = np.zeros(slots, dtype=np.int64)
        # in slices of whole chunks of about a quarter of a second each, so that a long run can report
        # progress and be interrupted
        def draw(a: int, b: int) -> None:
            first = a * CHUNK
            part = min(count, b * CHUNK) - first
            _sample_offset(ev, first, part, seed, goal, board.width, bound, slots, hist, odd)
            if progress is not None:
                progress(first + part, count)

        run_in_slices((count + CHUNK - 1) // CHUNK, draw, 0, None, [FIRST_SLICE_CHUNKS])
        return _finish(board, name, hist, odd, bound, False, seed, time.perf_counter() - start,
                       time.process_time() - cpu)
    cpu = time.process_time()
    hist = np.zeros((1, board.n, bound + 1), dtype=np.int64)
    odd = np.zeros(1, dtype=np.int64)
    g = board.goal[0]
    done = 0
    while done < count:
        part = min(PYTHON_BATCH, count - done)
        states = random_states(board, part, seed, first_chunk=done // CHUNK)
        for tiles in states:
            h = min(int(heuristic.value(tiles)), bound)
            blank = int(np.flatnonzero(tiles == 0)[0])
            hist[0, blank, h] += 1
            dist = abs(blank // board.width - g // board.width) + abs(blank % board.width - g % board.width)
            odd[0] += (h - dist) & 1
        done += part
        if progress is not None:
            progress(done, count)
    return _finish(board, name, hist, odd, bound, False, seed, time.perf_counter() - start,
                   time.process_time() - cpu)


def _sample_offset(ev, first, count, seed, goal, width, bound, slots, hist, odd):
    """States ``first`` .. ``first + count - 1`` of the stream (``first`` a multiple of CHUNK)."""
    _sample_range(ev, first // CHUNK, count, seed, goal, width, bound, slots, hist, odd)


@njit(cache=True, parallel=True)
def _sample_range(ev, first_chunk, count, seed, goal, width, bound, slots, hist, odd):
    n = goal.shape[0]
    chunks = (count + CHUNK - 1) // CHUNK
    g = goal[0]
    for slot in prange(slots):
        tiles = np.empty(n, dtype=np.int64)
        where = np.empty(n, dtype=np.int64)
        cells = np.empty(n, dtype=np.int64)
        for k in range(slot, chunks, slots):
            rng = chunk_state(seed, first_chunk + k)
            for _ in range(k * CHUNK, min(count, (k + 1) * CHUNK)):
                rng = draw_uniform(rng, goal, width, tiles)
                _record(ev, tiles, where, cells, width, g, bound, hist, odd, slot)


def over_states(heuristic, states, of: str, name: str | None = None) -> Distribution:
    """The distribution over the given solvable ``states`` (each a tuple of the tile in each cell, e.g. an
    instance file's starts), ``of`` naming them."""
    import time

    board = heuristic.board
    if not states:
        raise SamplingError(f"{of}: no states")
    start = time.perf_counter()
    values = [int(heuristic.value(tiles)) for tiles in states]
    counts = np.zeros((board.n, max(values) + 1), dtype=np.int64)
    goal_blank = list(board.goal).index(0)
    odd = 0
    for tiles, h in zip(states, values):
        cell = list(tiles).index(0)
        counts[cell, h] += 1
        # every move moves the blank one cell: an optimal length has the parity of its distance to its goal
        distance = abs(cell % board.width - goal_blank % board.width) + abs(cell // board.width
                                                                           - goal_blank // board.width)
        odd += (h - distance) % 2
    label = str(name or getattr(heuristic, "name", type(heuristic).__name__))
    return Distribution(board, label, counts, odd, False, None, time.perf_counter() - start, of=of)


def enumerate_all(heuristic, threads: int | None = None, name: str | None = None) -> Distribution:
    """The exact distribution over every solvable state (boards of at most ``EXACT_MAX_CELLS`` cells)."""
    import time

    board = heuristic.board
    if board.n > EXACT_MAX_CELLS:
        raise SamplingError(f"board {board.dims} has {board.n} cells: every state can be counted on boards "
                            f"of at most {EXACT_MAX_CELLS} cells; sample instead")
    ev = evaluator(heuristic)
    name = name or getattr(heuristic, "name", type(heuristic).__name__)
    if ev is None:
        raise SamplingError(f"{name}: counting every state needs a compiled evaluator (manhattan, "
                            f"linear-conflict or pdb with byte tables); sample instead")
    bound = value_bound(heuristic) + 1
    slots = _slots(threads)
    hist = np.zeros((slots, board.n, bound + 1), dtype=np.int64)
    odd = np.zeros(slots, dtype=np.int64)
    start = time.perf_counter()
    _enumerate(ev, math.factorial(board.n), np.array(board.goal, dtype=np.int64), board.width, bound, slots,
               hist, odd)
    return _finish(board, name, hist, odd, bound, True, None, time.perf_counter() - start)


def manhattan_mean(width: int, height: int, goal: tuple[int, ...], blank_cell: int | None = None) -> Fraction:
    """The exact mean Manhattan distance over the uniformly random solvable states of a W x H board with
    ``goal`` (``goal[t]`` = goal cell of tile t), by formula: on a board of at least four cells, each tile
    stands in each cell in the same number of solvable states (fix it there: the other cells' arrangements
    split evenly by parity, since swapping two other tiles flips it), so the mean is the sum over the tiles
    of their mean distance over the cells.  With ``blank_cell``, over the states with the blank there (each
    tile then uniform over the other cells).  Needs no board object, so it holds for boards of any size."""
    n = width * height
    if sorted(goal) != list(range(n)):
        raise SamplingError(f"goal is not a permutation of the {n} cells")
    total = Fraction(0)
    for t in range(1, n):
        gr, gc = divmod(goal[t], width)
        s = 0
        for c in range(n):
            if c == blank_cell:
                continue
            r, col = divmod(c, width)
            s += abs(r - gr) + abs(col - gc)
        total += Fraction(s, n if blank_cell is None else n - 1)
    return total


__all__ = ["Distribution", "sample", "enumerate_all", "manhattan_mean", "EXACT_MAX_CELLS"]
