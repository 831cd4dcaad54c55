"""Test-side access to the conflict graph of :mod:`pdbtool.heuristics.vertex_cover`: the graph's edges, a move
tried, committed or restored one at a time, covers of many states from scratch, a brute-force cover and a
decoder of the packed move look-ups (either layout), the edges read from the unpacked tables, and a walk that
checks the incremental graph against one from scratch.  The search itself drives the same kernels through the
ddb hooks."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from pdbtool.heuristics.vertex_cover.exact_cover import min_cover
from pdbtool.heuristics.vertex_cover.graph import ConflictGraph, graph_from_scratch
from pdbtool.heuristics.vertex_cover.layout import CCOVER, CMASK, G_HCOUNT, G_PENDING, GS, HMASK, HW, POS
from pdbtool.heuristics.vertex_cover.lookups import is_wide
from pdbtool.heuristics.vertex_cover.moves import EXACT, commit_saving, restore_move, try_move, try_move_wide
from pdbtool.tables.pairs_triples import pair_units_at


def brute_force_cover(edges: Sequence[tuple[Sequence[int], int]], n: int) -> int:
    """The least weighted cover of hyperedges (vertices, weight) by trying every assignment of 0 .. the
    largest weight to the n vertices, all at once with NumPy (small graphs only)."""
    top = max((w for _, w in edges), default=0)
    if top == 0 or n == 0:
        return 0
    y = np.indices((top + 1,) * n).reshape(n, -1)
    ok = np.ones(y.shape[1], dtype=bool)
    for vs, w in edges:
        ok &= y[list(vs)].sum(axis=0) >= w
    return int(y.sum(axis=0)[ok].min())


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
    ``None`` when the key has nothing, else ``(pair units, sorted [(v, cell of v, units)] of its triples)``.
    Either layout: on a wide board the filter word is all cells, the record indices follow the filter and an
    entry is two words."""
    word_at = ((t * n + c) * 4 + m) * n + u
    word = int(look[word_at]) & ((1 << 64) - 1)
    if not word >> cu & 1:
        return None
    below = bin(word & ((1 << cu) - 1)).count("1")
    if is_wide(n):
        rec = int(look[int(look[4 * n ** 3 + word_at]) + below])
        first, count = rec & 0xFFFFFFFF, (rec >> 32) & 0xFFFF
        pairs = [(int(look[first + 2 * i]) & ((1 << 64) - 1), int(look[first + 2 * i + 1])) for i in range(count)]
        entries = [(cells, vu & 63, vu >> 6) for cells, vu in pairs]
    else:
        rec = int(look[(word >> 32) + below])
        first, count = rec & 0xFFFFFFFF, (rec >> 32) & 0xFFFF
        entries = [(int(e) & 0xFFFFFFFF, int(e) >> 32 & 63, int(e) >> 38) for e in look[first:first + count]]
    triples = sorted((v, cell, units) for cells, v, units in entries for cell in range(n) if cells >> cell & 1)
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
        move = try_move_wide if self.wide else try_move
        return int(move(t, c, m, need, self.n, self.move_lookups, self.work, self.memo))

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


def reference_edges(look, tiles):
    """The (hyper)edges of a state read directly from the tables' CSR look-ups (not the packed ones)."""
    n = len(tiles)
    pos = [0] * n
    for c, t in enumerate(tiles):
        pos[t] = c
    blank = pos[0]
    out = []
    for t in range(1, n):
        for u in range(t + 1, n):
            key = ((t * n + pos[t]) * n + u) * n + pos[u]
            w = int(pair_units_at(look.pair_units, look.tri_start, look.tri_ent, key, blank))
            if w:
                out.append(((t, u), w))
            for v, cell, units, mask in look.tri_ent[look.tri_start[key]:look.tri_start[key + 1]]:
                if v and pos[v] == cell and int(mask) >> blank & 1:
                    out.append((tuple(sorted((t, u, int(v)))), int(units)))
    return sorted(out)


def walk_against_scratch(board, lookups, rng, steps, graph):
    """Walk ``steps`` steps from the goal with ``graph``, checking it against a graph built from scratch
    after each; returns (steps with a nonzero cover, backtracks)."""
    nb = board.neighbours()
    scratch = ProbedGraph(lookups)
    tiles = np.array(board.goal_tiles, dtype=np.int64)
    cover = graph.reset(tiles)
    blank = int(np.flatnonzero(tiles == 0)[0])
    undo = graph.undo_rows(steps + 100)
    path = []  # per depth: (cell the moved tile came from, cover before the move)
    nonzero = backtracks = 0
    for step in range(steps):
        if path and rng.random() < 0.3:
            # backtrack: the tile in the previous blank cell goes back into the blank
            came_from, cover = path.pop()
            t = int(tiles[came_from])
            graph.restore(t, blank, undo, len(path) + 1)
            tiles[blank], tiles[came_from] = t, 0
            blank = came_from
            backtracks += 1
        else:
            moves = [q for q in nb[blank] if q >= 0]
            # try (and drop) every child first: none may change the graph
            for q in moves:
                t = int(tiles[q])
                graph.try_move(t, blank)
                graph.revert(t)
            q = int(rng.choice(moves))
            t = int(tiles[q])
            delta = graph.try_move(t, blank)
            path.append((blank, cover))
            graph.commit_saving(t, blank, undo, len(path))
            tiles[blank], tiles[q] = t, 0
            blank = q
            cover += delta
        expected = scratch.reset(tiles)
        assert cover == expected, f"step {step}: incremental {cover}, from scratch {expected}"
        assert sorted(graph.edges()) == sorted(scratch.edges())
        assert np.array_equal(graph.pos, scratch.pos)
        assert np.array_equal(graph.g[CMASK], scratch.g[CMASK]) and np.array_equal(graph.g[CCOVER], scratch.g[CCOVER])
        # and the (memoized) covers equal a fresh branch and bound on the same edges
        assert cover == min_cover(graph.edges(), board.n)
        nonzero += cover > 0
    return nonzero, backtracks
