"""The heuristics of the search: additive pattern databases over the sequences' pairs and triangles.

* **pairwise**: for every pair (i, j), ``D_ij[x_i, x_j]``, the least cost of aligning the two suffixes; the
  sum over all pairs is admissible and consistent, because every pair's columns are counted once.
* **three-way**: for a triangle (a, b, c), the least cost of aligning its three suffixes.  A partition is a
  set of triangles sharing no pair, the pairs no triangle covers taken from their pairwise tables; the sum
  stays additive.  Several partitions give the max of their sums.

A three-way table is kept only over the region of cells an alignment costing at most the upper bound ``U``
can pass (a progressive alignment's cost): a cell is in it when its three pairs' prefix-plus-suffix bounds,
plus the other pairs' optimal costs, stay within ``U`` (the hull of such cells along ``x_c`` is kept for each
``(x_a, x_b)``).  Moves leaving the region count as unreachable, so the table's values are the least costs
of suffixes that stay in the region: at least the true three-way costs, yet never above the cost of an
optimal alignment's own suffix (whose cells all lie in the region), and consistent on the region.  When two gaps cost
``gg`` (PA-Star's model), every table also bounds the columns where none of its sequences advances: a
pair's cost in an alignment of L columns is the sum over its own columns of (cost - gg) plus gg L, and L is
at least the longest remaining suffix R, so ``D'(x) + gg R`` (``D'``: the same program with each column
``gg`` cheaper) is admissible and consistent too; a pair takes the larger of the two, a triangle the largest
of its plain table, its table with ``3 gg`` cheaper columns plus ``3 gg R`` (both kept over the same region:
neither dominates) and its three pairs' sum.  A node whose projection falls
outside the region cannot be on an alignment of cost at most ``U`` and is pruned.
"""

from __future__ import annotations

import itertools
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numba
import numpy as np

from ..errors import PdbtoolError
from ..tables.resources import gib
from . import dp
from .costs import CostModel, alignment_cost


ALL_PACKINGS_UP_TO = 40   # the packings of 6 sequences; 7 have 450, each node would look up all 35 triangles


class HeuristicError(PdbtoolError):
    """A heuristic that cannot be built: a malformed partition, or tables past the memory allowed."""


class TablesStopped(HeuristicError):
    """The deadline passed while the three-way tables were built; ``pairwise`` is the pairwise heuristic,
    whose value at the start is the lower bound reached."""

    def __init__(self, pairwise: Heuristic):
        super().__init__("the time limit passed while the three-way tables were built")
        self.pairwise = pairwise


def encode(model: CostModel, sequences) -> list[np.ndarray]:
    """Each sequence as an array of letter indices into the model's matrix (the letters are checked first)."""
    index = {c: i for i, c in enumerate(model.letters)}
    out = []
    for s in sequences:
        bad = sorted(set(s) - set(index))
        if bad:
            raise HeuristicError(f"letters the {model.name} costs do not score: {', '.join(bad)}")
        out.append(np.array([index[c] for c in s], dtype=np.int8))
    return out


def parse_partitions(specs: list[str] | None, k: int) -> list[list[tuple[int, int, int]]] | None:
    """``--triangles`` values: ``auto`` (None), ``none`` (no partition: pairwise only), or partitions such as
    ``0-1-2,3-4-5`` (sequence numbers from 0), several for the max of their sums."""
    if not specs or specs == ["auto"]:
        return None
    if specs == ["none"]:
        return []
    out = []
    for spec in specs:
        if spec in ("auto", "none"):
            raise HeuristicError("--triangles auto or none stands alone")
        tris = []
        for part in spec.split(","):
            bits = part.strip().split("-")
            try:
                tri = tuple(sorted(int(b) for b in bits))
            except ValueError:
                raise HeuristicError(f"a triangle is three sequence numbers such as 0-1-2, not {part!r}") from None
            if len(tri) != 3 or len(set(tri)) != 3 or not all(0 <= v < k for v in tri):
                raise HeuristicError(f"a triangle is three different sequence numbers from 0 to {k - 1}, "
                                     f"not {part!r}")
            tris.append(tri)
        edges = [e for t in tris for e in itertools.combinations(t, 2)]
        if len(edges) != len(set(edges)):
            raise HeuristicError(f"the triangles of {spec!r} share a pair of sequences (they must not, for "
                                 f"the sum to stay admissible)")
        out.append(tris)
    return out


def packings(k: int) -> list[list[tuple[int, int, int]]]:
    """Every maximal set of triangles of k sequences sharing no pair."""
    tris = list(itertools.combinations(range(k), 3))
    found: list[list[tuple[int, int, int]]] = []

    def grow(chosen, used, start):
        extended = False
        for t in range(start, len(tris)):
            edges = set(itertools.combinations(tris[t], 2))
            if edges & used:
                continue
            extended = True
            grow(chosen + [tris[t]], used | edges, t + 1)
        if not extended:
            # maximal: no triangle at all can be added (not only from start on)
            if all(set(itertools.combinations(t, 2)) & used for t in tris if t not in chosen):
                found.append(chosen)

    grow([], set(), 0)
    return found


@dataclass
class Heuristic:
    """The tables of one instance under one cost model, and the partitions summed (max over them)."""

    lengths: tuple[int, ...]
    pairs: list[tuple[int, int]]
    pair_tables: list[np.ndarray]
    triangles: list[tuple[int, int, int]] = field(default_factory=list)
    tri_lo: list[np.ndarray] = field(default_factory=list)
    tri_cnt: list[np.ndarray] = field(default_factory=list)
    tri_cells: list[np.ndarray] = field(default_factory=list)
    partitions: list[list[int]] = field(default_factory=list)   # triangle indices; [] = pairwise only
    upper_bound: int = 0
    seconds: float = 0.0
    gap_gap: int = 0                                    # > 0: the pair tables with columns gap_gap cheaper
    column_tables: list[np.ndarray] = field(default_factory=list)
    tri_plain: list[np.ndarray] = field(default_factory=list)   # gap_gap > 0: the triangles' unshifted cells

    @property
    def k(self) -> int:
        return len(self.lengths)

    def nbytes(self) -> int:
        return sum(int(t.nbytes) for t in self.pair_tables + self.column_tables) + sum(
            int(a.nbytes) for arrays in (self.tri_lo, self.tri_cnt, self.tri_cells, self.tri_plain)
            for a in arrays) \
            + sum(8 * int(lo.shape[0]) for lo in self.tri_lo)

    def describe(self) -> str:
        columns = " with two-gap columns" if self.gap_gap else ""
        if not self.triangles or not any(self.partitions):
            return "pairwise" + columns
        parts = [",".join("-".join(map(str, self.triangles[t])) for t in part) or "pairwise"
                 for part in self.partitions]
        average = " | the triangles' average" if self.share() else ""
        return "three-way " + " | ".join(parts) + average + columns

    def arrays(self):
        """The flat arrays the kernels read (see :func:`kernels.heuristic_at`)."""
        k = self.k
        ptab = joined([t.reshape(-1) for t in self.pair_tables])
        sizes = [t.size for t in self.pair_tables]
        poff = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        pi = np.array([i for i, _ in self.pairs], dtype=np.int64)
        pj = np.array([j for _, j in self.pairs], dtype=np.int64)
        pw = np.array([self.lengths[j] + 1 for _, j in self.pairs], dtype=np.int64)
        nt = len(self.triangles)
        if nt:
            tcells = joined(self.tri_cells) if sum(c.size for c in self.tri_cells) else np.zeros(1, dtype=np.int32)
            if self.gap_gap > 0:
                if [c.size for c in self.tri_plain] != [c.size for c in self.tri_cells]:
                    raise HeuristicError("the triangles' unshifted tables do not match their regions")
                tplain = joined(self.tri_plain) if sum(c.size for c in self.tri_plain) \
                    else np.zeros(1, dtype=np.int32)
            else:
                tplain = np.zeros(1, dtype=np.int32)
            trows = np.concatenate([[0], np.cumsum([lo.shape[0] for lo in self.tri_lo])[:-1]]).astype(np.int64)
            cell_base = np.concatenate([[0], np.cumsum([c.size for c in self.tri_cells])[:-1]]).astype(np.int64)
            # A row's data side by side, one cache line: where its cells start less its least x_c (so that x_c
            # indexes the cells directly), and its x_c range, lo in the low half and lo + cnt in the high.
            trow = np.empty((int(trows[-1]) + self.tri_lo[-1].shape[0], 2), dtype=np.int64)
            for t in range(nt):
                lo = self.tri_lo[t].astype(np.int64)
                cnt = self.tri_cnt[t].astype(np.int64)
                starts = np.concatenate([[0], np.cumsum(cnt)[:-1]]) + cell_base[t]
                trow[trows[t]:trows[t] + cnt.shape[0], 0] = starts - lo
                trow[trows[t]:trows[t] + cnt.shape[0], 1] = lo | ((lo + cnt) << 32)
            trow = trow.reshape(-1)
        else:
            tcells = tplain = np.zeros(1, dtype=np.int32)
            trows = np.zeros(0, dtype=np.int64)
            trow = np.zeros(2, dtype=np.int64)
        ta = np.array([t[0] for t in self.triangles], dtype=np.int64)
        tb = np.array([t[1] for t in self.triangles], dtype=np.int64)
        tc = np.array([t[2] for t in self.triangles], dtype=np.int64)
        tw = np.array([self.lengths[t[1]] + 1 for t in self.triangles], dtype=np.int64)
        parts = self.partitions or [[]]
        part_pairs, pp_off, part_tris, pt_off = [], [0], [], [0]
        pair_index = {p: n for n, p in enumerate(self.pairs)}
        for part in parts:
            covered = {e for t in part for e in itertools.combinations(self.triangles[t], 2)}
            part_pairs.extend(pair_index[p] for p in itertools.combinations(range(k), 2) if p not in covered)
            pp_off.append(len(part_pairs))
            part_tris.extend(part)
            pt_off.append(len(part_tris))
        ptab2 = joined([t.reshape(-1) for t in self.column_tables]) \
            if self.gap_gap > 0 else np.zeros(1, dtype=np.int32)
        return (ptab, poff, pi, pj, pw, trows, trow, tcells, tplain, ta, tb, tc, tw,
                np.array(part_pairs, dtype=np.int64), np.array(pp_off, dtype=np.int64),
                np.array(part_tris, dtype=np.int64), np.array(pt_off, dtype=np.int64),
                ptab2, np.int64(self.gap_gap), np.array(self.lengths, dtype=np.int64), np.int64(self.share()))

    def share(self) -> int:
        """With every triangle held (k >= 4), how many of them hold each pair (k - 2): the kernels then also
        take the triangles' average; else 0."""
        k = self.k
        return k - 2 if k >= 4 and len(self.triangles) == k * (k - 1) * (k - 2) // 6 else 0

    def start_value(self) -> int:
        from .kernels import node_heuristics

        # the lattice of one node, the start: the kernel that the tests run on every node, not one more
        one = np.ones(self.k, dtype=np.int64)
        return int(node_heuristics(self.k, one - 1, one, *self.arrays())[0])


def joined(parts: list[np.ndarray]) -> np.ndarray:
    """The int32 arrays ``parts`` end to end: the buffer they already lie in, in order, when they do (tables
    filled in place, so that the search's flat arrays cost no second copy of them), else a copy."""
    base = parts[0].base if parts else None
    if isinstance(base, np.ndarray) and base.dtype == np.int32 and base.ndim == 1 and base.flags.c_contiguous \
            and all(p.base is base and p.dtype == np.int32 and p.flags.c_contiguous for p in parts):
        origin = base.__array_interface__["data"][0]
        first = (parts[0].__array_interface__["data"][0] - origin) // 4
        at = first
        for p in parts:
            if p.__array_interface__["data"][0] != origin + 4 * at:
                break
            at += p.size
        else:
            return base[first:at]
    return np.concatenate(parts).astype(np.int32, copy=False)


def pair_bytes(lengths) -> int:
    return sum(4 * (a + 1) * (b + 1) for a, b in itertools.combinations(lengths, 2))


def upper_bound(model: CostModel, codes: list[np.ndarray], suffix: dict) -> tuple[int, np.ndarray]:
    """A progressive alignment (the closest pair first, then the sequence closest to those aligned), refined by
    realigning each sequence to the others (:func:`dp.refine`), and its sum-of-pairs cost: an upper bound on
    the optimum, and the tighter it is, the smaller the three-way regions."""
    k = len(codes)
    opt = {p: int(t[0, 0]) for p, t in suffix.items()}
    dist = lambda i, j: opt[(min(i, j), max(i, j))]  # noqa: E731
    first = min(itertools.combinations(range(k), 2), key=lambda p: opt[p])
    order = list(first)
    while len(order) < k:
        order.append(min((i for i in range(k) if i not in order), key=lambda i: sum(dist(i, j) for j in order)))
    rows = dp.progressive(codes, order, model.sub, model.gap, model.gap_gap)
    _, rows = dp.refine(codes, rows, model.sub, model.gap, model.gap_gap)
    text = ["".join("-" if v < 0 else model.letters[v] for v in row) for row in rows]
    return alignment_cost(model, text), rows


def build(model: CostModel, codes: list[np.ndarray], partitions=None, max_partitions: int = -1,
          memory: int | None = None, threads: int | None = None, bound: int | None = None,
          column_bound: bool = True, deadline: float | None = None) -> Heuristic:
    """The heuristic of one instance: every pairwise table, and the three-way tables of ``partitions``
    (None: chosen, see :func:`choose`; []: pairwise only), their regions cut at ``bound`` (default: the cost
    of a progressive alignment; any bound at least the optimum keeps the search exact).  ``column_bound``
    False leaves out the bound on two-gap columns (the plain pairwise heuristic of PA-Star, for comparison)."""
    gap_gap = model.gap_gap if column_bound else 0

    t0 = time.perf_counter()
    k = len(codes)
    lengths = tuple(int(c.shape[0]) for c in codes)
    need = pair_bytes(lengths)
    if memory is not None and need > memory:
        raise HeuristicError(f"the pairwise tables need {gib(need)}, more than the {gib(memory)} allowed")
    pairs = list(itertools.combinations(range(k), 2))
    codes8 = [np.ascontiguousarray(c, dtype=np.int8) for c in codes]
    sizes = [(lengths[i] + 1) * (lengths[j] + 1) for i, j in pairs]
    out_off = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    if gap_gap > 0:
        need *= 2
        if memory is not None and need > memory:
            raise HeuristicError(f"the pairwise tables need {gib(need)}, more than the {gib(memory)} allowed")

    def pair_tables_of(column):
        out = np.empty(int(sum(sizes)), dtype=np.int32)
        views = {p: out[o:o + s].reshape(lengths[p[0]] + 1, lengths[p[1]] + 1)
                 for p, o, s in zip(pairs, out_off, sizes)}

        def fill(p):
            views[p][...] = dp.pair_suffix(codes8[p[0]], codes8[p[1]], model.sub, model.gap, column)

        # one pair a thread (the kernel releases the GIL): a parallel kernel would be one more to compile
        workers = min(len(pairs), max(1, threads or numba.get_num_threads()))
        if workers == 1:
            for p in pairs:
                fill(p)
        else:
            with ThreadPoolExecutor(workers) as pool:
                list(pool.map(fill, pairs))
        return views

    suffix = pair_tables_of(0)
    if bound is None:
        bound, _ = upper_bound(model, codes, suffix)
    h = Heuristic(lengths, pairs, [suffix[p] for p in pairs], upper_bound=bound)
    if gap_gap > 0:
        # Two gaps cost gap_gap: a pair's cost in an alignment of L columns is the sum over its own columns
        # of (cost - gap_gap), plus gap_gap * L, and L is at least the longest remaining suffix.
        cheaper = pair_tables_of(gap_gap)
        h.gap_gap = gap_gap
        h.column_tables = [cheaper[p] for p in pairs]
    if k < 3 or partitions == []:
        h.seconds = time.perf_counter() - t0
        return h
    wanted = sorted({t for part in partitions for t in part}) if partitions is not None \
        else list(itertools.combinations(range(k), 3))
    try:
        tables = triangle_tables(model, codes, suffix, wanted, bound, memory, need, threads, gap_gap, deadline)
    except _Stopped:
        h.seconds = time.perf_counter() - t0
        raise TablesStopped(h) from None
    if partitions is None:
        start = {p: int(suffix[p][0, 0]) for p in pairs}
        if gap_gap > 0:
            start = {p: max(v, int(cheaper[p][0, 0]) + gap_gap * max(lengths)) for p, v in start.items()}
        partitions = choose(k, tables, start, max_partitions, gap_gap, max(lengths))
    used = sorted({t for part in partitions for t in part})
    h.triangles = used
    for t in used:
        lo, cnt, cells, plain = tables[t]
        h.tri_lo.append(lo)
        h.tri_cnt.append(cnt)
        h.tri_cells.append(cells)
        if gap_gap > 0:
            h.tri_plain.append(plain)
    h.partitions = [[used.index(t) for t in part] for part in partitions]
    h.seconds = time.perf_counter() - t0
    return h


def triangle_tables(model, codes, suffix, wanted, bound, memory, used_bytes, threads, gap_gap=0, deadline=None):
    """The region-limited three-way tables of the triangles ``wanted``: ``{triangle: (lo, cnt, cells, plain)}``;
    with ``gap_gap`` > 0, ``cells`` has every column ``3 gap_gap`` cheaper and ``plain`` is the unshifted
    table over the same region (the search takes the larger of the two), else ``plain`` is ``cells``."""
    rev = [c[::-1].copy() for c in codes]
    prefix = {}
    for p in {e for t in wanted for e in itertools.combinations(t, 2)}:
        i, j = p
        prefix[p] = dp.pair_suffix(rev[i], rev[j], model.sub, model.gap, 0)[::-1, ::-1]
    opt = {p: int(t[0, 0]) for p, t in suffix.items()}
    total_opt = sum(opt.values())

    def rows(t):
        a, b, c = t
        limit = bound - (total_opt - opt[(a, b)] - opt[(a, c)] - opt[(b, c)])
        na, nb, nc = (codes[v].shape[0] + 1 for v in t)
        lo = np.zeros(na * nb, dtype=np.int32)
        cnt = np.zeros(na * nb, dtype=np.int32)
        step = max(1, SLICE_CELLS // (nb * nc))
        for first in range(0, na, step):
            stop.check()
            dp.triangle_rows(prefix[(a, b)], suffix[(a, b)], prefix[(a, c)], suffix[(a, c)],
                             prefix[(b, c)], suffix[(b, c)], limit, lo, cnt, first, min(na, first + step))
        return lo, cnt

    workers = max(1, threads or numba.get_num_threads())
    stop = _Stop(deadline)
    regions = stop.run_all(rows, wanted, workers)
    cells_total = sum(int(cnt.sum(dtype=np.int64)) for _, cnt in regions.values())
    tables_each = 2 if gap_gap > 0 else 1
    need = used_bytes + 4 * cells_total * tables_each + sum(16 * lo.shape[0] for lo, _ in regions.values())
    if memory is not None and need > memory:
        raise HeuristicError(f"the three-way tables of {len(wanted)} triangles need {gib(need)} "
                             f"({cells_total:,} cells within the upper bound), more than the {gib(memory)} "
                             f"allowed: name fewer triangles (--triangles) or use --triangles none")

    # every triangle's cells in one buffer (one for each kind of table), in the order of ``wanted``
    columns = (3 * gap_gap, 0) if gap_gap > 0 else (0,)
    buffers = [np.empty(cells_total, dtype=np.int32) for _ in columns]
    offset, at = {}, 0
    for t in wanted:
        offset[t] = at
        at += int(regions[t][1].sum(dtype=np.int64))

    def fill(t):
        lo, cnt = regions[t]
        start = np.concatenate([[0], np.cumsum(cnt, dtype=np.int64)[:-1]]).astype(np.int64)
        a, b, c = t
        na, nb = codes[a].shape[0], codes[b].shape[0]
        # slices of x_a holding about SLICE_CELLS cells each, the last x_a first
        per_xa = np.add.reduceat(cnt.astype(np.int64), np.arange(0, cnt.shape[0], nb + 1))
        out = []
        for column, buffer in zip(columns, buffers):
            cells = buffer[offset[t]:offset[t] + int(cnt.sum(dtype=np.int64))]
            last = na
            while last >= 0:
                stop.check()
                first, held = last, int(per_xa[last])
                while first > 0 and held + per_xa[first - 1] <= SLICE_CELLS:
                    first -= 1
                    held += int(per_xa[first])
                dp.triangle_fill(codes[a], codes[b], codes[c], model.sub, model.gap, model.gap_gap, lo, cnt, start,
                                 cells, column, last, first)
                last = first - 1
            out.append(cells)
        return lo, cnt, out[0], out[-1]

    return stop.run_all(fill, wanted, workers)


SLICE_CELLS = 1 << 21   # cells of a three-way table a kernel call fills (or bounds) between looks at a stop


class _Stopped(Exception):
    """A worker's table build given up: the main thread was interrupted."""


class _Stop:
    """Table builds in worker threads that the main thread can stop: a signal (SIGINT, SIGTERM) interrupts it
    as it waits; the builds not begun are cancelled and those running stop at their next slice, so the
    interruption is not held up until every table is done.  A ``deadline`` (``time.perf_counter()``) passed
    stops them the same way, and the main thread meets ``_Stopped``."""

    def __init__(self, deadline: float | None = None):
        import threading

        self.event = threading.Event()
        self.deadline = deadline

    def check(self) -> None:
        if self.event.is_set():
            raise _Stopped
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            self.event.set()
            raise _Stopped

    def run_all(self, func, items, workers) -> dict:
        with ThreadPoolExecutor(workers) as pool:
            futures = [pool.submit(func, item) for item in items]
            try:
                return {item: f.result() for item, f in zip(items, futures)}
            except BaseException:
                self.event.set()
                for f in futures:
                    f.cancel()
                raise


def triangle_start(table, gap_gap: int = 0, rest: int = 0) -> int:
    """A three-way table's value at the start node (``rest``: the longest sequence), as the search takes it."""
    lo, cnt, cells, plain = table
    if cnt[0] == 0 or lo[0] != 0 or cells[0] >= dp.INF:
        return dp.INF
    return max(int(cells[0]) + 3 * gap_gap * rest, int(plain[0])) if gap_gap else int(cells[0])


def choose(k, tables, pair_start, max_partitions, gap_gap=0, rest_start=0):
    """The packings of triangles whose tables add most at the start node (their gain over the pairs they
    replace, ``pair_start``: each pair's value there), the best ``max_partitions`` of them (0: every packing,
    so that the search's max over them is the best packing at each node, and every triangle is held for their
    average; -1: every packing up to ``ALL_PACKINGS_UP_TO`` of them, i.e. up to 6 sequences, else 3)."""
    gain = {}
    for t, table in tables.items():
        v = triangle_start(table, gap_gap, rest_start)
        pair_sum = sum(pair_start[e] for e in itertools.combinations(t, 2))
        gain[t] = max(0, v - pair_sum) if v < dp.INF else 0
    ranked = sorted(packings(k), key=lambda part: -sum(gain[t] for t in part))
    if max_partitions < 0:
        max_partitions = 0 if len(ranked) <= ALL_PACKINGS_UP_TO else 3
    return ranked if max_partitions == 0 else ranked[:max_partitions]
