"""Dynamic-programming kernels over sequence codes: pairwise suffix tables (prefix ones are those of the reversed
sequences), Needleman-Wunsch and Gotoh alignments of two sequences, three-way tables over a region of cells,
and a progressive alignment, refined, whose cost bounds the optimum from above.

Sequences are arrays of letter indices (int8) into the cost model's ``sub`` matrix; callers validate them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._native import numba_cache  # noqa: F401  (the package-wide cache stamp)

INF = 1 << 30           # an unreachable cell of a table (a lower bound past any alignment's cost)


@njit(cache=True, nogil=True)
def pair_suffix(a, b, sub, gap, column):
    """``D[i, j]``: the least cost of aligning ``a[i:]`` with ``b[j:]`` (linear gaps), each column's cost
    lowered by ``column`` (see :func:`pdbtool.msa.heuristics.build`: a bound that counts two-gap columns)."""
    n, m = a.shape[0], b.shape[0]
    D = np.empty((n + 1, m + 1), dtype=np.int32)
    D[n, m] = 0
    g = gap - column
    for j in range(m - 1, -1, -1):
        D[n, j] = D[n, j + 1] + g
    for i in range(n - 1, -1, -1):
        D[i, m] = D[i + 1, m] + g
        ai = a[i]
        for j in range(m - 1, -1, -1):
            best = D[i + 1, j + 1] + sub[ai, b[j]] - column
            v = D[i + 1, j] + g
            if v < best:
                best = v
            v = D[i, j + 1] + g
            if v < best:
                best = v
            D[i, j] = best
    return D


@njit(cache=True)
def gotoh(a, b, sub, gap, gap_open):
    """The least cost of aligning ``a`` and ``b`` with affine gaps (a run of L gaps costs ``gap_open + L * gap``)
    and one optimal alignment as two rows of codes (-1 a gap)."""
    n, m = a.shape[0], b.shape[0]
    big = INF
    M = np.full((n + 1, m + 1), big, dtype=np.int64)   # last column a pair of residues (or the start)
    X = np.full((n + 1, m + 1), big, dtype=np.int64)   # last column a residue of a against a gap
    Y = np.full((n + 1, m + 1), big, dtype=np.int64)   # last column a gap against a residue of b
    M[0, 0] = 0
    for i in range(n + 1):
        for j in range(m + 1):
            if i > 0 and j > 0:
                M[i, j] = min(M[i - 1, j - 1], X[i - 1, j - 1], Y[i - 1, j - 1]) + sub[a[i - 1], b[j - 1]]
            if i > 0:
                X[i, j] = min(M[i - 1, j] + gap_open, X[i - 1, j], Y[i - 1, j] + gap_open) + gap
            if j > 0:
                Y[i, j] = min(M[i, j - 1] + gap_open, X[i, j - 1] + gap_open, Y[i, j - 1]) + gap
    best = min(M[n, m], X[n, m], Y[n, m])
    state = 0 if M[n, m] == best else (1 if X[n, m] == best else 2)
    ra = np.empty(n + m, dtype=np.int32)
    rb = np.empty(n + m, dtype=np.int32)
    length = 0
    i, j = n, m
    while i > 0 or j > 0:
        if state == 0:
            ra[length] = a[i - 1]
            rb[length] = b[j - 1]
            v = M[i, j] - sub[a[i - 1], b[j - 1]]
            i -= 1
            j -= 1
            state = 0 if M[i, j] == v else (1 if X[i, j] == v else 2)
        elif state == 1:
            ra[length] = a[i - 1]
            rb[length] = -1
            v = X[i, j] - gap
            i -= 1
            state = 1 if X[i, j] == v else (0 if M[i, j] + gap_open == v else 2)
        else:
            ra[length] = -1
            rb[length] = b[j - 1]
            v = Y[i, j] - gap
            j -= 1
            state = 2 if Y[i, j] == v else (0 if M[i, j] + gap_open == v else 1)
        length += 1
    return best, ra[:length][::-1].copy(), rb[:length][::-1].copy()


# --- three-way tables over a region ----------------------------------------------------------------------

@njit(cache=True, nogil=True)
def triangle_rows(Fab, Bab, Fac, Bac, Fbc, Bbc, limit, lo, cnt, xa_first, xa_end):
    """For each (x_a, x_b) with ``xa_first <= x_a < xa_end``, the range of x_c whose three pairwise bounds
    (prefix + suffix) sum to at most ``limit``: ``lo`` and ``cnt`` per row (``cnt`` 0: no cell; both arrays
    zeroed by the caller).  The cells of an alignment of cost at most the upper bound all lie in these
    ranges.  The caller runs it over slices of x_a, so that a stop request is seen between them."""
    nb, nc = Fab.shape[1], Fac.shape[1]
    for xa in range(xa_first, xa_end):
        for xb in range(nb):
            base = Fab[xa, xb] + Bab[xa, xb]
            if base > limit:
                continue
            first, last = -1, -1
            for xc in range(nc):
                s = base + Fac[xa, xc] + Bac[xa, xc] + Fbc[xb, xc] + Bbc[xb, xc]
                if s <= limit:
                    if first < 0:
                        first = xc
                    last = xc
            if first >= 0:
                lo[xa * nb + xb] = first
                cnt[xa * nb + xb] = last - first + 1


@njit(cache=True, inline="always")
def pair_column(sub, gap, gap_gap, s, xs, ds, t, xt, dt):
    """One pair's cost in a column: ``s[xs]`` against ``t[xt]`` when both advance (``ds``, ``dt``), a gap when
    one does, two gaps when neither does (the letters are read only when they are aligned)."""
    if ds and dt:
        return sub[s[xs], t[xt]]
    if ds or dt:
        return gap
    return gap_gap


@njit(cache=True, nogil=True)
def triangle_fill(a, b, c, sub, gap, gap_gap, lo, cnt, start, cells, column, xa_last, xa_first):
    """The three-way suffix costs of the region's cells (``cells[start[r] + x_c - lo[r]]`` for row
    ``r = x_a * (n_b + 1) + x_b``) with ``xa_first <= x_a <= xa_last``, moves leaving the region counting as
    unreachable (``INF``), each column's cost lowered by ``column``.  The cells of x_a above ``xa_last`` must
    be filled already: the caller runs it from x_a = n_a down in slices, seeing a stop request between them."""
    na, nb, nc = a.shape[0], b.shape[0], c.shape[0]
    wb = nb + 1
    for xa in range(xa_last, xa_first - 1, -1):
        for xb in range(nb, -1, -1):
            r = xa * wb + xb
            n = cnt[r]
            for t in range(n - 1, -1, -1):
                xc = lo[r] + t
                if xa == na and xb == nb and xc == nc:
                    cells[start[r] + t] = 0
                    continue
                best = INF
                for mv in range(1, 8):
                    da, db, dc = mv & 1, (mv >> 1) & 1, (mv >> 2) & 1
                    ya, yb, yc = xa + da, xb + db, xc + dc
                    if ya > na or yb > nb or yc > nc:
                        continue
                    r2 = ya * wb + yb
                    off = yc - lo[r2]
                    if off < 0 or off >= cnt[r2]:
                        continue
                    v = cells[start[r2] + off]
                    if v >= INF:
                        continue
                    cost = (pair_column(sub, gap, gap_gap, a, xa, da, b, xb, db)
                            + pair_column(sub, gap, gap_gap, a, xa, da, c, xc, dc)
                            + pair_column(sub, gap, gap_gap, b, xb, db, c, xc, dc) - column)
                    if v + cost < best:
                        best = v + cost
                cells[start[r] + t] = best


# --- an upper bound: progressive alignment ----------------------------------------------------------------

@njit(cache=True)
def add_to_profile(rows, s, sub, gap, gap_gap):
    """Align the sequence ``s`` to the alignment ``rows`` (m x L, -1 a gap) at least sum-of-pairs cost
    (the columns' own costs are fixed), and return the new (m + 1) x L' alignment."""
    m, L = rows.shape[0], rows.shape[1]
    n = s.shape[0]
    # cost of the column c against a residue x, against a gap, and of a new column (s's residue alone)
    gap_col = np.zeros(L, dtype=np.int64)
    for col in range(L):
        for r in range(m):
            gap_col[col] += gap_gap if rows[r, col] < 0 else gap
    new_col = m * gap + gap_gap * (m * (m - 1) // 2)
    D = np.empty((L + 1, n + 1), dtype=np.int64)
    D[0, 0] = 0
    for j in range(1, n + 1):
        D[0, j] = D[0, j - 1] + new_col
    for col in range(1, L + 1):
        D[col, 0] = D[col - 1, 0] + gap_col[col - 1]
        for j in range(1, n + 1):
            cost = 0
            x = s[j - 1]
            for r in range(m):
                y = rows[r, col - 1]
                cost += gap if y < 0 else sub[y, x]
            best = D[col - 1, j - 1] + cost
            v = D[col - 1, j] + gap_col[col - 1]
            if v < best:
                best = v
            v = D[col, j - 1] + new_col
            if v < best:
                best = v
            D[col, j] = best
    out = np.full((m + 1, L + n), -1, dtype=np.int32)
    length = 0
    col, j = L, n
    while col > 0 or j > 0:
        if col > 0 and j > 0:
            cost = 0
            x = s[j - 1]
            for r in range(m):
                y = rows[r, col - 1]
                cost += gap if y < 0 else sub[y, x]
            if D[col, j] == D[col - 1, j - 1] + cost:
                for r in range(m):
                    out[r, length] = rows[r, col - 1]
                out[m, length] = x
                col -= 1
                j -= 1
                length += 1
                continue
        if col > 0 and D[col, j] == D[col - 1, j] + gap_col[col - 1]:
            for r in range(m):
                out[r, length] = rows[r, col - 1]
            col -= 1
        else:
            out[m, length] = s[j - 1]
            j -= 1
        length += 1
    return out[:, :length][:, ::-1].copy()


def progressive(codes: list[np.ndarray], order: list[int], sub: np.ndarray, gap: int, gap_gap: int) -> np.ndarray:
    """An alignment of every sequence (rows in input order, -1 a gap), built by adding the sequences one at a
    time in ``order``."""
    first = order[0]
    rows = np.asarray(codes[first], dtype=np.int32).reshape(1, -1)
    for i in order[1:]:
        rows = add_to_profile(rows, np.asarray(codes[i], dtype=np.int32), sub, gap, gap_gap)
    out = np.empty_like(rows)
    for r, i in enumerate(order):
        out[i] = rows[r]
    return out


def rows_cost(rows: np.ndarray, sub: np.ndarray, gap: int, gap_gap: int) -> int:
    """The sum-of-pairs cost of an alignment of codes (rows, -1 a gap), linear gaps."""
    total = 0
    for i in range(rows.shape[0]):
        for j in range(i + 1, rows.shape[0]):
            a, b = rows[i], rows[j]
            both = (a >= 0) & (b >= 0)
            one = (a >= 0) ^ (b >= 0)
            total += int(sub[a[both], b[both]].sum(dtype=np.int64)) + gap * int(one.sum()) \
                + gap_gap * int((~both & ~one).sum())
    return total


def refine(codes: list[np.ndarray], rows: np.ndarray, sub: np.ndarray, gap: int, gap_gap: int,
           rounds: int = 4) -> tuple[int, np.ndarray]:
    """Leave-one-out refinement: each sequence in turn taken out of the alignment (the columns left with gaps
    only dropped) and added back at least cost to the others' fixed columns, kept when that lowers the
    sum-of-pairs cost; up to ``rounds`` passes over the sequences, until none improves.  Its current place is
    one of the ways to add it back, so the cost never rises."""
    k = rows.shape[0]
    best = rows_cost(rows, sub, gap, gap_gap)
    for _ in range(rounds):
        improved = False
        for i in range(k):
            others = np.delete(rows, i, axis=0)
            others = np.ascontiguousarray(others[:, (others >= 0).any(axis=0)])
            grown = add_to_profile(others, np.asarray(codes[i], dtype=np.int32), sub, gap, gap_gap)
            candidate = np.insert(grown[:-1], i, grown[-1], axis=0)
            cost = rows_cost(candidate, sub, gap, gap_gap)
            if cost < best:
                best, rows, improved = cost, candidate, True
        if not improved:
            break
    return best, rows

