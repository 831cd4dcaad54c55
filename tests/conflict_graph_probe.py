"""Test-side access to the conflict graph of :mod:`pdbtool.heuristics.vertex_cover`: the graph's edges, a move
tried, committed or restored one at a time, covers of many states from scratch, a brute-force cover and a
decoder of the packed move look-ups.  The search itself drives the same kernels through the ddb hooks."""

from __future__ import annotations

from itertools import product
from typing import Sequence

import numpy as np
from numba import njit

from pdbtool.heuristics.vertex_cover.graph import ConflictGraph, graph_from_scratch
from pdbtool.heuristics.vertex_cover.layout import G_HCOUNT, G_PENDING, GS, HMASK, HW, POS
from pdbtool.heuristics.vertex_cover.moves import EXACT, commit_saving, restore_move, try_move


def brute_force_cover(edges: Sequence[tuple[Sequence[int], int]], n: int) -> int:
    """The least weighted cover of hyperedges (vertices, weight) by trying every assignment (tiny graphs only)."""
    top = max((w for _, w in edges), default=0)
    best = None
    for y in product(range(top + 1), repeat=n):
        if all(sum(y[v] for v in vs) >= w for vs, w in edges):
            s = sum(y)
            best = s if best is None or s < best else best
    return best or 0


@njit(cache=True)
def covers_of_states(states, n, near, records, rows, g, hl, cons, memo):
    """The least cover of each state (row: the tile in each cell), each from scratch."""
    out = np.empty(states.shape[0], dtype=np.int64)
    for i in range(states.shape[0]):
        for c in range(n):
            g[POS, states[i, c]] = c
        out[i] = graph_from_scratch(n, near, records, rows, g, hl, cons, memo)
    return out


def move_key_lookup(look: np.ndarray, n: int, t: int, c: int, m: int, u: int, cu: int):
    """What :func:`pdbtool.heuristics.vertex_cover.lookups.pack_move_lookups` holds for the key (t, c, m, u, cu):
    ``None`` when the key has nothing, else ``(pair units, sorted [(v, cell of v, units)] of its triples)``."""
    word = int(look[((t * n + c) * 4 + m) * n + u])
    if not word >> cu & 1:
        return None
    rec = int(look[(word >> 32) + bin(word & ((1 << cu) - 1)).count("1")])
    first, count = rec & 0xFFFFFFFF, (rec >> 32) & 0xFFFF
    triples = sorted((int(e) >> 32 & 31, cell, int(e) >> 37) for e in look[first:first + count]
                     for cell in range(32) if int(e) >> cell & 1)
    return (rec >> 48) & 255, triples


class ProbedGraph(ConflictGraph):
    """A :class:`ConflictGraph` whose moves the tests make one at a time, and whose edges they read."""

    def __init__(self, tables, memo: np.ndarray | None = None, packed=None):
        super().__init__(tables, memo, packed)
        self._undo = self.undo_rows(1)  # what commit() replaces, never restored

    @property
    def pos(self) -> np.ndarray:
        return self.g[POS, :self.n]

    def covers(self, states: np.ndarray) -> np.ndarray:
        """The least cover of each row of ``states`` (from scratch; leaves the graph at the last one)."""
        states = np.ascontiguousarray(np.asarray(states, dtype=np.int64).reshape(-1, self.n))
        return covers_of_states(states, self.n, *self.lookups, *self.arrays)

    def try_move(self, t: int, c: int, need: int = EXACT) -> int:
        """``try_move`` of tile t into the blank's cell ``c``, which must be t's neighbour."""
        m = int(np.flatnonzero(self.nb[c] == self.g[POS, t])[0])
        return int(try_move(t, c, m, need, self.n, self.move_lookups, self.work, self.memo))

    @property
    def pending(self) -> bool:
        """Whether the last :meth:`try_move` left new edges for a commit (else the move changes no edge)."""
        return bool(self.g[GS, G_PENDING])

    def commit(self, t: int, c: int) -> None:
        """Make the move of the last :meth:`try_move` (tile t into cell c), with nothing saved."""
        commit_saving(t, c, self.n, self.work, self._undo, 0)

    def revert(self, t: int) -> None:
        """Drop what the last :meth:`try_move` left pending (the graph itself never changed)."""
        self.g[GS, G_PENDING] = 0

    def commit_saving(self, t: int, c: int, undo: np.ndarray, d: int) -> None:
        commit_saving(t, c, self.n, self.work, undo, d)

    def restore(self, t: int, c: int, undo: np.ndarray, d: int) -> None:
        restore_move(t, c, self.n, self.work, undo, d)

    def edges(self) -> list[tuple[tuple[int, ...], int]]:
        """The current (hyper)edges as (tiles, weight)."""
        g, hl = self.g, self.hl
        return [(tuple(v for v in range(self.n) if int(hl[HMASK, j]) >> v & 1), int(hl[HW, j]))
                for j in range(int(g[GS, G_HCOUNT]))]
