"""IDA* with pattern sums read from compactly encoded tables (:mod:`pdbtool.tables.encodings`).

``ida_pdb_encoded`` mirrors :func:`pdbtool.heuristics.kernels.ida_pdb` line for line -- same moves, registers, status codes,
node counting, reflected lookups only where they can matter -- and differs only in how a child's table value
is found: ``encodings.value_at(code, addr, rank, manhattan, parent, shift)`` instead of a byte load.  For that
it carries, per stack level and per table row (direct and reflected), the table's exact value (``hv``: the
*parent* that mod3/parity need for CHILD-H) and the Manhattan distance of the pattern's tiles in the table's
own cells (``mv``: what nibble, sparse and min-nibble add the stored excess to).  The start values come from
``encodings.exact_at`` (EXACT) for mod3/parity.  Lossless encodings therefore give exactly the byte kernel's
h at every node, hence its node counts and solution.

It is a separate kernel for now because ``ida_pdb`` is being reworked (threads, table sharing) and the byte
kernel must not pay for the extra per-level Manhattan bookkeeping; once both settle they can merge (with
``code == BYTE`` the branches here fold away to the byte kernel's work plus the Manhattan updates).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..tables import encodings
from .static import HeuristicError, PatternSum
from .kernels import (EXHAUSTED, FOUND, GROW, INF, ITERATION_DONE, R_BLANK, R_BOUND, R_DEPTH, R_EXP, R_GEN, R_ITER,
                  R_NEXT, R_ONE_ITERATION, R_ROOT_PREV, RUNNING, _is_goal, _rank_moved)
from ..tables.ranking import rank_cells


@njit(cache=True, inline="always")
def _enc_expand(d, blank, tiles, nb, prev_move, hv, mv, hsum, child_h, child_v, child_m, surv, nsurv, vmask, n,
                npat, reflect, pat, slot, rpat, rslot, cellmap, kk, cells, addrs, code, shift, mdt, bound,
                next_bound):
    """``ida._pdb_expand`` with encoded lookups; ``child_m[d, m, 0/1]`` = the moved pattern's Manhattan in
    the child (direct / reflected row), ``mdt[p, s, c]`` = Manhattan of table p's tile s in its cell c."""
    pm = prev_move[d]
    mask = 0
    for m in range(4):
        q = nb[blank, m]
        if q < 0 or m + pm == 3:
            continue
        mask |= 1 << m
        t = tiles[q]
        sn = hsum[d, 0]
        p = pat[t]
        v = 0
        if p >= 0:
            s = slot[t]
            to = cellmap[p, blank]
            fr = cellmap[p, q]
            mc = mv[d, p] + mdt[p, s, to] - mdt[p, s, fr]
            r = _rank_moved(cells, p, s, kk[p], to, fr, n)
            v = encodings.value_at(code, addrs[p], r, mc, hv[d, p], shift)
            child_m[d, m, 0] = mc
            sn += v - hv[d, p]
        child_v[d, m, 0] = v
        child_h[d, m] = sn
    if reflect:
        for m in range(4):
            if not (mask >> m) & 1:
                continue
            h = child_h[d, m]
            f = d + 1 + h
            if f > bound and f >= next_bound:
                continue
            q = nb[blank, m]
            t = tiles[q]
            sr = hsum[d, 1]
            p = rpat[t]
            v = 0
            if p >= 0:
                row = npat + p
                s = rslot[t]
                to = cellmap[row, blank]
                fr = cellmap[row, q]
                mc = mv[d, row] + mdt[p, s, to] - mdt[p, s, fr]
                r = _rank_moved(cells, row, s, kk[p], to, fr, n)
                v = encodings.value_at(code, addrs[p], r, mc, hv[d, row], shift)
                child_m[d, m, 1] = mc
                sr += v - hv[d, row]
            child_v[d, m, 1] = v
            if sr > h:
                child_h[d, m] = sr
    count = 0
    kept = 0
    for m in range(4):
        if not (mask >> m) & 1:
            continue
        count += 1
        f = d + 1 + child_h[d, m]
        if f > bound:
            if f < next_bound:
                next_bound = f
        else:
            surv[d, kept] = m
            kept += 1
    nsurv[d] = kept
    vmask[d] = mask
    return next_bound, count


@njit(cache=True, nogil=True)
def ida_pdb_encoded(tiles, nb, goal_tiles, reg, budget, next_move, prev_move, hv, mv, hsum, child_h, child_v,
                    child_m, surv, nsurv, vmask, npat, reflect, pat, slot, rpat, rslot, cellmap, kk, cells, addrs,
                    code, shift, mdt):
    """``ida.ida_pdb`` over tables of encoding ``code`` (``encodings.CODES``; ``shift`` = log2 of the
    min-nibble group).  ``hv[0]``, ``mv[0]``, ``hsum[0]`` and ``cells`` describe the start state."""
    n = tiles.shape[0]
    depth = reg[R_DEPTH]
    bound = reg[R_BOUND]
    next_bound = reg[R_NEXT]
    generated = reg[R_GEN]
    expanded = reg[R_EXP]
    blank = reg[R_BLANK]
    stop = generated + budget
    capacity = next_move.shape[0]
    width = 2 * npat if reflect else npat
    status = RUNNING
    while True:
        if depth < 0:
            if next_bound >= INF:
                status = EXHAUSTED
                break
            if next_bound + 2 > capacity:
                status = GROW
                break
            bound = next_bound
            next_bound = INF
            reg[R_ITER] += 1
            depth = 0
            next_move[0] = 0
            prev_move[0] = reg[R_ROOT_PREV]
            expanded += 1
            next_bound, count = _enc_expand(0, blank, tiles, nb, prev_move, hv, mv, hsum, child_h, child_v,
                                            child_m, surv, nsurv, vmask, n, npat, reflect, pat, slot, rpat, rslot,
                                            cellmap, kk, cells, addrs, code, shift, mdt, bound, next_bound)
            generated += count
            continue
        i = next_move[depth]
        if i == nsurv[depth]:
            if depth == 0:
                depth = -1
                if reg[R_ONE_ITERATION]:
                    status = ITERATION_DONE
                    break
                continue
            pb = nb[blank, 3 - prev_move[depth]]
            t = tiles[pb]
            p = pat[t]
            if p >= 0:
                cells[p, slot[t]] = cellmap[p, blank]
            if reflect:
                p = rpat[t]
                if p >= 0:
                    cells[npat + p, rslot[t]] = cellmap[npat + p, blank]
            tiles[blank] = t
            tiles[pb] = 0
            blank = pb
            depth -= 1
            continue
        next_move[depth] = i + 1
        m = surv[depth, i]
        q = nb[blank, m]
        h = child_h[depth, m]
        t = tiles[q]
        d1 = depth + 1
        for j in range(width):
            hv[d1, j] = hv[depth, j]
            mv[d1, j] = mv[depth, j]
        hsum[d1, 0] = hsum[depth, 0]
        hsum[d1, 1] = hsum[depth, 1]
        p = pat[t]
        if p >= 0:
            cells[p, slot[t]] = cellmap[p, blank]
            v = child_v[depth, m, 0]
            hsum[d1, 0] += v - hv[depth, p]
            hv[d1, p] = v
            mv[d1, p] = child_m[depth, m, 0]
        if reflect:
            p = rpat[t]
            if p >= 0:
                row = npat + p
                cells[row, rslot[t]] = cellmap[row, blank]
                v = child_v[depth, m, 1]
                hsum[d1, 1] += v - hv[depth, row]
                hv[d1, row] = v
                mv[d1, row] = child_m[depth, m, 1]
        tiles[blank] = t
        tiles[q] = 0
        blank = q
        depth = d1
        next_move[depth] = 0
        prev_move[depth] = m
        if h == 0 and _is_goal(tiles, goal_tiles):
            status = FOUND
            for a in range(depth):
                later = vmask[a] >> (prev_move[a + 1] + 1)
                while later:
                    generated -= later & 1
                    later >>= 1
            break
        expanded += 1
        next_bound, count = _enc_expand(depth, blank, tiles, nb, prev_move, hv, mv, hsum, child_h, child_v,
                                        child_m, surv, nsurv, vmask, n, npat, reflect, pat, slot, rpat, rslot,
                                        cellmap, kk, cells, addrs, code, shift, mdt, bound, next_bound)
        generated += count
        if generated >= stop:
            break
    reg[R_DEPTH] = depth
    reg[R_BOUND] = bound
    reg[R_NEXT] = next_bound
    reg[R_GEN] = generated
    reg[R_EXP] = expanded
    reg[R_BLANK] = blank
    return status


class EncodedPatternSum(PatternSum):
    """:class:`pdbtool.heuristics.static.PatternSum` over payloads of one encoding (``tables[i]``: the payload of
    pattern i's table, or of ``shared[i].source``'s), searched by :func:`ida_pdb_encoded`."""

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

    @property
    def kernel(self):
        return ida_pdb_encoded

    def setup(self, tiles: np.ndarray, capacity: int):
        h0, (hv, hsum, child_h, child_v, surv, nsurv, vmask), params = super().setup(tiles, capacity)
        cells = params[-2]
        mv = np.zeros_like(hv)
        mv[0] = self._manhattans(cells)
        child_m = np.zeros_like(child_v)
        return h0, (hv, mv, hsum, child_h, child_v, child_m, surv, nsurv, vmask), \
            params + (self.code, self.shift, self.mdt)


def check_encoding(encoding: str, blank: str, group: int | None = None) -> dict:
    """The parameters of ``encoding`` for a solver, or a one-line error (mod3/parity need ignored tables)."""
    params = encodings.normalize_params(encoding, None, group)
    encodings.check_blank(encoding, blank)
    return params


__all__ = ["ida_pdb_encoded", "EncodedPatternSum", "check_encoding"]
