"""Pattern sums read from zero-aware tables (:mod:`pdbtool.tables.zero_aware`).

The search is the byte pattern sum's (:mod:`pdbtool.heuristics.pattern_sum`: same hooks, children evaluated
together, reflected lookups only where they can matter); only the index of a child's table entry differs:
the zero-aware layout's (the map of the occupied cells, the region of the blank among the free ones, the
tiles' order) instead of the placement's rank.  The blank's cell in the child is the cell the moved tile
left, which the pattern-sum hooks pass as ``from_cell`` (in the table's cells, so a table shared through a
board symmetry sees the blank where it sees the tiles).  A move of a tile outside a pattern keeps the blank
in the same region of that pattern's free cells, so, as with the other rules, only the moved tile's pattern
changes value.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .._native.intrinsics import load_u8
from ..tables.zero_aware import colex_chunks, indexed, joined_layouts, layout_of
from .hooks import as_tiles
from .pattern_sum import PatternSum, PatternSumState, carry_nothing, copy_values, serve_state

# the pattern-sum state plus the zero-aware layouts of the patterns' sizes (joined_layouts: zbase, zregion,
# the offsets zb_off[p] / zr_off[p] of pattern p's layout in them, kfact[p] = k!) and colex_chunks
ZeroAwareSumState = namedtuple("ZeroAwareSumState", PatternSumState._fields  # type: ignore[misc]
                               + ("zbase", "zregion", "zb_off", "zr_off", "kfact", "colex"))


def _zero_aware_value(hs, d, m, side, row, p, s, to_cell, from_cell):
    k = hs.kk[p]
    hs.cells[row, s] = to_cell
    idx = indexed(hs.cells[row], k, hs.cellmap.shape[1], hs.colex, hs.zbase, hs.zb_off[p], hs.zregion, hs.zr_off[p],
                  hs.kfact[p], from_cell)
    hs.cells[row, s] = from_cell
    return load_u8(hs.addrs[p] + idx)


serve_state(ZeroAwareSumState, _zero_aware_value, copy_values, carry_nothing)


class ZeroAwareSum(PatternSum):
    """:class:`pdbtool.heuristics.pattern_sum.PatternSum` over zero-aware tables (``tables[i]``: the table of
    pattern i, or of ``shared[i].source``'s, in the zero-aware layout of its size)."""

    def __init__(self, patterns, tables, reflect: bool = True, shared=None):
        super().__init__(patterns, tables, reflect, shared)
        board = self.board
        self.zbase, self.zregion, self.zb_off, self.zr_off, self.kfact = joined_layouts(
            board.width, board.height, [p.k for p in self.patterns])
        self.colex = colex_chunks(board.n, self.kmax)

    def _table_entries(self, pattern) -> int:
        return layout_of(pattern).entries

    def parts(self, state):
        tiles = as_tiles(state)
        cells = self._cells(tiles)
        blank = int(np.flatnonzero(tiles == 0)[0])

        def value(row: int) -> int:
            i = row % self.npat
            lay = layout_of(self.patterns[i])
            k = self.patterns[i].k
            return int(self.tables[i][lay.index(cells[row, :k], int(self.cellmap[row, blank]))])

        direct = [value(i) for i in range(self.npat)]
        mirrored = [value(self.npat + i) for i in range(self.npat)] if self.reflect else []
        return direct, mirrored

    def setup(self, tiles: np.ndarray, capacity: int):
        h0, sums = self.sum_state(tiles, capacity)
        return h0, ZeroAwareSumState(*sums, self.zbase, self.zregion, self.zb_off, self.zr_off,  # type: ignore[call-arg]
                                     self.kfact, self.colex)


__all__ = ["ZeroAwareSum", "ZeroAwareSumState"]
