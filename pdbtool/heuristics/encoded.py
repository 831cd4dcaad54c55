"""Pattern sums read from compactly encoded tables (:mod:`pdbtool.tables.encodings`).

The search is the byte pattern sum's (:mod:`pdbtool.heuristics.pattern_sum`: same hooks, children evaluated
together, reflected lookups only where they can matter); only the lookup of a child's table value differs:
``encodings.value_at(code, addr, rank, manhattan, parent, shift)`` instead of a byte load.  For that the
state carries, per stack level and per table row (direct and reflected), the table's exact value (``hv``:
the *parent* that mod3/parity need for CHILD-H) and the Manhattan distance of the pattern's tiles in the
table's own cells (``mv``: what nibble, sparse and min-nibble add the stored excess to).  The start values
come from ``encodings.exact_at`` (EXACT) for mod3/parity.  Lossless encodings therefore give exactly the byte
tables' h at every node, hence their node counts and solution.  The byte state does none of the Manhattan
bookkeeping: the driver is compiled separately for each state class.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..tables import encodings
from ..tables.ranking import rank_cells
from .hooks import HeuristicError
from .pattern_sum import PatternSum, PatternSumState, rank_moved, serve_state


# the pattern-sum state plus, per level and table row, the Manhattan distance of the pattern's tiles in the
# table's own cells (mv), the moved row's Manhattan per child (child_m[d, m, 0/1]), the encoding's code and
# min-nibble shift, and mdt[p, s, c]: Manhattan of table p's tile s in its cell c
EncodedState = namedtuple("EncodedState", PatternSumState._fields + ("mv", "child_m", "code", "shift", "mdt"))  # type: ignore[misc]


def _encoded_value(hs, d, m, side, row, p, s, to_cell, from_cell):
    mc = hs.mv[d, row] + hs.mdt[p, s, to_cell] - hs.mdt[p, s, from_cell]
    r = rank_moved(hs.cells, row, s, hs.kk[p], to_cell, from_cell, hs.cellmap.shape[1])
    hs.child_m[d, m, side] = mc
    return encodings.value_at(hs.code, hs.addrs[p], r, mc, hs.hv[d, row], hs.shift)


def _encoded_copy(hs, d, width):
    for j in range(width):
        hs.hv[d + 1, j] = hs.hv[d, j]
        hs.mv[d + 1, j] = hs.mv[d, j]


def _encoded_carry(hs, d, m, side, row):
    hs.mv[d + 1, row] = hs.child_m[d, m, side]


serve_state(EncodedState, _encoded_value, _encoded_copy, _encoded_carry)


class EncodedPatternSum(PatternSum):
    """:class:`pdbtool.heuristics.pattern_sum.PatternSum` over payloads of one encoding (``tables[i]``: the
    payload of pattern i's table, or of ``shared[i].source``'s)."""

    def __init__(self, patterns, tables, encoding: str, params=None, reflect: bool = True, shared=None):
        self.encoding = encoding
        self.params = encodings.normalize_params(encoding, params)
        self.code = encodings.CODES[encoding]
        self.shift = int(self.params.get("group", 1)).bit_length() - 1
        super().__init__(patterns, tables, reflect, shared)
        # Manhattan rows and goal rank of the pattern each table was built for (the source when shared)
        self.sources = [p if via is None else via.source for p, via in zip(self.patterns, self.shared)]
        n = self.board.n
        self.mdt = np.zeros((self.npat, self.kmax, n), dtype=np.int64)
        for i, src in enumerate(self.sources):
            self.mdt[i, :src.k] = src.md_rows()
        self.goal_ranks = [src.goal_rank() for src in self.sources]

    def _checked_table(self, pattern, table) -> np.ndarray:
        arr = np.ascontiguousarray(np.asarray(table).reshape(-1).view(np.uint8))
        try:
            encodings.check_payload(arr, pattern.entries, self.encoding, self.params)
        except encodings.EncodingError as exc:
            raise HeuristicError(f"table of pattern {pattern}: {exc}") from None
        return arr

    def _row_value(self, i: int, row_cells: np.ndarray) -> int:
        """Exact value (mod3/parity: EXACT) or decoded value of table i at a placement in its own cells."""
        src = self.sources[i]
        cells = np.ascontiguousarray(row_cells[:src.k], dtype=np.int64)
        if self.encoding in encodings.NEEDS_CONSISTENT:
            v = int(encodings.exact_of(self.code, self.tables[i], cells, src.n, src.k, self.board.neighbours(),
                                       self.mdt[i, :src.k], self.goal_ranks[i]))
            if v < 0:
                raise HeuristicError(f"{self.encoding} table of pattern {src} is inconsistent (EXACT found no "
                                     f"descent): a damaged table")
            return v
        m = int(self.mdt[i, np.arange(src.k), cells].sum())
        return int(encodings.value_of(self.code, self.tables[i], rank_cells(cells, src.n), m, 0, self.shift))

    def _manhattans(self, cells: np.ndarray) -> np.ndarray:
        rows = cells.shape[0]
        out = np.zeros(rows, dtype=np.int64)
        for row in range(rows):
            i = row % self.npat
            k = self.sources[i].k
            out[row] = self.mdt[i, np.arange(k), cells[row, :k]].sum()
        return out

    def parts(self, state):
        cells = self._cells(np.ascontiguousarray(np.asarray(state, dtype=np.int64)))
        direct = [self._row_value(i, cells[i]) for i in range(self.npat)]
        mirrored = [self._row_value(i, cells[self.npat + i]) for i in range(self.npat)] if self.reflect else []
        return direct, mirrored

    def setup(self, tiles: np.ndarray, capacity: int):
        h0, sums = self.sum_state(tiles, capacity)
        mv = np.zeros_like(sums.hv)
        mv[0] = self._manhattans(sums.cells)
        return h0, EncodedState(*sums, mv, np.zeros_like(sums.child_v), self.code, self.shift, self.mdt)  # type: ignore[call-arg]


def check_encoding(encoding: str, blank: str, group: int | None = None) -> dict:
    """The parameters of ``encoding`` for a solver, or a one-line error (mod3/parity need ignored tables)."""
    params = encodings.normalize_params(encoding, None, group)
    encodings.check_blank(encoding, blank)
    return params


__all__ = ["EncodedPatternSum", "EncodedState", "check_encoding"]
