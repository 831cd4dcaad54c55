"""Manhattan distance: the sum over the tiles of the row and column distances to their goal cells.

In the search (:mod:`pdbtool.search.driver`) h changes by one table difference per move: the moved tile's
distance in its new cell minus that in its old one.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence

import numpy as np
from numba.extending import overload

from ..puzzle.board import Board
from . import hooks
from .hooks import as_tiles, is_state

# hlev[d]: h at stack level d; md[t, c]: the distance of tile t in cell c
ManhattanState = namedtuple("ManhattanState", ["hlev", "md"])


class Manhattan:
    """Sum over the tiles of the row and column distances to their goal cells."""

    name = "manhattan"

    def __init__(self, board: Board):
        self.board = board
        self.md = board.manhattan_table()

    def value(self, state: Sequence[int] | np.ndarray) -> int:
        tiles = as_tiles(state)
        return int(self.md[tiles, np.arange(self.board.n)].sum())

    def levels(self, tiles: np.ndarray, capacity: int) -> tuple[int, np.ndarray]:
        """(h0, hlev): h of ``tiles`` and the h of each level of a stack of ``capacity`` levels, level 0 set."""
        h0 = self.value(tiles)
        hlev = np.zeros(capacity, dtype=np.int64)
        hlev[0] = h0
        return h0, hlev

    def setup(self, tiles: np.ndarray, capacity: int):
        """(h0, search state) of a search from ``tiles`` with a stack of ``capacity`` levels."""
        h0, hlev = self.levels(tiles, capacity)
        return h0, ManhattanState(hlev, self.md)


hooks.evaluated_alone(True, ManhattanState)


@overload(hooks.child_h, jit_options={"forceinline": True})
def _child_h(hs, d, m, t, to_cell, from_cell, bound, next_bound):
    if is_state(hs, ManhattanState):
        def impl(hs, d, m, t, to_cell, from_cell, bound, next_bound):
            return hs.hlev[d] + hs.md[t, to_cell] - hs.md[t, from_cell]
        return impl


@overload(hooks.enter, jit_options={"forceinline": True})
def _enter(hs, d, m, t, to_cell, from_cell, h):
    if is_state(hs, ManhattanState):
        def impl(hs, d, m, t, to_cell, from_cell, h):
            hs.hlev[d + 1] = h
        return impl


@overload(hooks.leave, jit_options={"forceinline": True})
def _leave(hs, d, t, to_cell, from_cell):
    if is_state(hs, ManhattanState):
        return lambda hs, d, t, to_cell, from_cell: None


__all__ = ["Manhattan", "ManhattanState"]
