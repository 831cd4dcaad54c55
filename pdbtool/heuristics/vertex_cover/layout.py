"""The layout of a conflict graph's arrays: the named rows of ``g``, ``hl``, ``cons`` and ``undo``, and the
one ``work`` array whose views they are (a Numba call passes each array as several words, so fewer arrays make
the calls of every generated child cheaper)."""

from __future__ import annotations

from math import comb

import numpy as np
from numba import njit

# rows of g (width 2n + 2 or more): per-tile arrays, the branch and bound's work space, scalars
POS, CMASK, CCOVER, NROW, NCM, NCV, ORDER, DEG, BEST, GS = range(10)

G_ROWS = 10

# columns of g[GS]; G_PENDING: try_move left t's new edges (pair neighbours G_NADJ with weights in g[NROW],
# G_NH hyperedges in hl[NHM/NHW], G_NEWCOMP components in g[NCM/NCV]) for commit_saving to put in
G_HCOUNT, G_PENDING, G_NEWCOMP, G_NH, G_NADJ = range(5)

# rows of hl (width hmax): the graph's constraints (pair edges and hyperedges), the moving tile's new
# hyperedges
HMASK, HW, NHM, NHW = range(4)

HL_ROWS = 4

# rows of cons (width cmax, 2n + 5 rows): the constraints of one component, masks and weights (the first
# level of the branch and bound, whose levels follow in pairs of rows), then those of A | B in a move
# (masks, weights: rows -3 and -2; see try_move), and the memo key in the last row
CM, CW = 0, 1

# columns of a row of ``undo`` (one row per search depth, what the move into that depth changed): whether
# it changed edges, how many of the moved tile's constraints and of the old components were saved, then its
# old constraints (masks, weights) and the old components in A | B (masks, covers)
U_APPLIED, U_OH, U_NOLD, U_ROW = range(4)


@njit(cache=True, _nrt=False, forceinline=True)
def _work_rows(n):
    """``(c0, end)``: the first row of cons in ``work``, and its count of rows: g's rows first, then hl's,
    then the 2 (n + 1) + 3 of cons (the branch and bound's levels, A | B, the memo key).  Also called from
    Python (:func:`graph_work`, :func:`work_views`, :func:`cover_work`)."""
    c0 = G_ROWS + HL_ROWS
    return c0, c0 + 2 * (n + 1) + 3


@njit(cache=True, _nrt=False, forceinline=True)
def _views(work, n):
    """``(g, hl, cons)``: the graph's arrays, views of the rows of ``work`` (:func:`graph_work`)."""
    c0, end = _work_rows(n)
    return work[:G_ROWS], work[G_ROWS:c0], work[c0:end]


def graph_work(n: int, triples: bool) -> np.ndarray:
    """The ``work`` array of one conflict graph over tiles 0..n-1: the rows of g, hl and cons, one after
    another (:func:`_views`), as wide as the widest."""
    hmax = (max(16, comb(n - 1, 3)) if triples else 16) + comb(n, 2)
    return np.zeros((_work_rows(n)[1], max(n * n + hmax, 2 * n + 2)), dtype=np.int64)


def work_views(work: np.ndarray, n: int) -> tuple[np.ndarray, ...]:
    """:func:`_views` in Python (a compiled function would box each view as the whole array)."""
    c0, end = _work_rows(n)
    return work[:G_ROWS], work[G_ROWS:c0], work[c0:end]

