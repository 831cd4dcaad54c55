"""Optimal sum-of-pairs alignment: the driver of the search kernels.

The driver owns the arrays of :mod:`.kernels`, grows them between chunks of expansions within a memory
budget (checked against the memory the system still has before every growth), stops at a time limit, and
turns the goal's path into an alignment, whose residues and cost are checked before it is returned.
"""

from __future__ import annotations

import resource
import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import PdbtoolError
from ..tables.resources import available_memory, gib
from . import dp, kernels as K
from .costs import CostModel, alignment_cost
from .heuristics import Heuristic, TablesStopped, build, encode
from .sequences import Instance

SEARCHES = ("astar", "pea")
NODE_BYTES = 8 + 4 + 4 + 4 + 4          # key, g, parent, qf, fexp
INDEX_BYTES = 2 * 4                     # two index slots a node (load at most 1/2)
HEAP_BYTES = 8 + 4
FIRST_NODES = 1 << 14
INDEX_SLICE = 1 << 22                   # nodes entered into a grown index a kernel call
MAX_KEY = 1 << 62


class SearchError(PdbtoolError):
    """A search that cannot start (an instance past what the lattice can index, a model it does not take)."""


@dataclass
class Alignment:
    """A search's outcome: the alignment (rows in input order) when solved, else the bound reached."""

    solved: bool
    cost: int | None
    rows: list[str] | None
    lower_bound: int
    upper_bound: int
    h_start: int
    expanded: int = 0
    generated: int = 0
    pruned: int = 0
    stored: int = 0
    peak_bytes: int = 0
    table_bytes: int = 0
    table_seconds: float = 0.0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    stopped: str | None = None
    heuristic: str = "pairwise"
    search: str = "astar"
    notes: list[str] = field(default_factory=list)


def size_text(n: int) -> str:
    return gib(n) if n >= 1 << 30 else f"{n / 2**20:,.1f} MiB"


def default_budget() -> int:
    have = available_memory()
    return int(have * 0.8) if have is not None else 8 << 30


def strides_of(lengths) -> np.ndarray:
    strides, total = [], 1
    for n in lengths:
        strides.append(total)
        total *= n + 1
    if total >= MAX_KEY:
        raise SearchError(f"the lattice of these sequences has {float(total):.3g} nodes, more than a 62-bit key "
                          f"can number")
    return np.array(strides, dtype=np.int64)


def rows_of(inst: Instance, keys: np.ndarray, strides: np.ndarray) -> list[str]:
    lens = inst.lengths
    coords = [(keys // strides[i]) % (lens[i] + 1) for i in range(inst.k)]
    rows = []
    for i, s in enumerate(inst.sequences):
        steps = np.diff(coords[i])
        rows.append("".join(s[int(p)] if d else "-" for p, d in zip(coords[i][:-1], steps)))
    return rows


def check_alignment(inst: Instance, model: CostModel, rows: list[str], cost: int) -> None:
    """Refuse an alignment whose rows do not spell the input sequences or whose recomputed cost differs."""
    for name, seq, row in zip(inst.names, inst.sequences, rows):
        if row.replace("-", "") != seq:
            raise PdbtoolError(f"internal check failed: the aligned row of {name} does not spell its sequence")
    if any(all(r[c] == "-" for r in rows) for c in range(len(rows[0]))):
        raise PdbtoolError("internal check failed: the alignment has a column of gaps only")
    again = alignment_cost(model, rows)
    if again != cost:
        raise PdbtoolError(f"internal check failed: the alignment costs {again}, the search said {cost}")


def _pairwise_affine(inst: Instance, model: CostModel, codes) -> Alignment:
    t0, c0 = time.perf_counter(), time.process_time()
    cost, ra, rb = dp.gotoh(codes[0], codes[1], model.sub, model.gap, model.gap_open)
    rows = ["".join("-" if v < 0 else model.letters[v] for v in r) for r in (ra, rb)]
    check_alignment(inst, model, rows, int(cost))
    return Alignment(True, int(cost), rows, int(cost), int(cost), int(cost), seconds=time.perf_counter() - t0,
                     cpu_seconds=time.process_time() - c0, heuristic="none (Gotoh)", search="gotoh")


def align(inst: Instance, model: CostModel, partitions=None, max_partitions: int = -1, search: str = "astar",
          partial: int = 0, memory: int | None = None, time_limit: float | None = None,
          threads: int | None = None, heuristic: Heuristic | None = None, progress=None,
          column_bound: bool = True) -> Alignment:
    """An optimal alignment of ``inst`` under ``model`` (or, stopped by ``time_limit`` or ``memory``, the best
    lower bound reached).  ``search``: ``astar`` or ``pea`` (partial expansion, offering the children within
    ``partial`` of the node's f)."""
    if search not in SEARCHES:
        raise SearchError(f"unknown search {search!r} (astar or pea)")
    t0, c0 = time.perf_counter(), time.process_time()
    deadline = None if time_limit is None else t0 + time_limit
    budget = memory if memory is not None else default_budget()
    codes = encode(model, inst.sequences)
    if model.affine:
        if inst.k == 2:
            return _pairwise_affine(inst, model, codes)
        raise SearchError("affine gaps are aligned exactly for two sequences only (Gotoh); for three or more "
                          "the lattice search would need each pair's gap state, which this version does not "
                          "keep: use --gaps linear")
    strides = strides_of(inst.lengths)
    if heuristic is None:
        try:
            heuristic = build(model, codes, partitions, max_partitions, memory=budget, threads=threads,
                              column_bound=column_bound, deadline=deadline)
        except TablesStopped as stop:
            return stopped_in_tables(stop, search, t0, c0)
    table_bytes = heuristic.nbytes()
    arrays = heuristic.arrays()
    h0 = heuristic.start_value()
    bound = heuristic.upper_bound
    if bound >= K.G_MASK:
        raise SearchError(f"costs up to {bound:,} are past what the search's 30-bit costs can hold")
    out = Alignment(False, None, None, h0, bound, h0, table_bytes=table_bytes, table_seconds=heuristic.seconds,
                    heuristic=heuristic.describe(), search=search)
    k = inst.k
    nmoves = (1 << k) - 1
    cap = max(FIRST_NODES, 4 * nmoves)
    hcap = cap

    def bytes_of(c, hc):
        return c * NODE_BYTES + 2 * c * 4 + hc * HEAP_BYTES

    if table_bytes + bytes_of(cap, hcap) > budget:
        raise SearchError(f"the search needs at least {size_text(table_bytes + bytes_of(cap, hcap))}, more "
                          f"than the {size_text(budget)} allowed")
    keys = np.empty(cap, dtype=np.int64)
    g_of = np.empty(cap, dtype=np.int32)
    parent = np.empty(cap, dtype=np.int32)
    qf = np.empty(cap, dtype=np.int32)
    fexp = np.empty(cap, dtype=np.int32)
    index = np.full(2 * cap, -1, dtype=np.int32)
    hprio = np.empty(hcap, dtype=np.int64)
    hnode = np.empty(hcap, dtype=np.int32)
    st = np.zeros(K.ST_SIZE, dtype=np.int64)
    keys[0], g_of[0], parent[0], qf[0], fexp[0] = 0, 0, -1, h0, -1
    st[K.S_NODES] = 1
    slot = K.index_find(index, keys, np.int64(0))
    index[-1 - slot] = 0
    st[K.S_HEAP] = 1
    hprio[0] = K.priority(h0, 0)
    hnode[0] = 0
    peak = table_bytes + bytes_of(cap, hcap)
    chunk = 2000
    lens = np.array(inst.lengths, dtype=np.int64)
    seq_off = np.concatenate([[0], np.cumsum(inst.lengths)[:-1]]).astype(np.int64)
    flat = np.concatenate(codes).astype(np.int8)
    pea = partial if search == "pea" else -1
    while True:
        if h0 >= dp.INF:
            st[K.S_STATUS] = K.EXHAUSTED
            break
        c1 = time.perf_counter()
        K.search(flat, seq_off, lens, strides, model.sub, model.gap, model.gap_gap, bound, *arrays,
                 keys, g_of, parent, qf, fexp, index, hprio, hnode, st, pea, chunk)
        spent = time.perf_counter() - c1
        status = int(st[K.S_STATUS])
        if status in (K.FOUND, K.EXHAUSTED):
            break
        if progress is not None:
            progress(int(st[K.S_LAST_F]), int(st[K.S_EXPANDED]), int(st[K.S_NODES]))
        if deadline is not None and time.perf_counter() >= deadline:
            out.stopped = "time"
            break
        if status == K.RUNNING:
            chunk = int(min(max(chunk * (0.25 / max(spent, 1e-4)), 100), 2_000_000))
            continue
        # NEEDS_ROOM: grow the pool (with its index) or the heap, within the budget and what the system has
        grow_nodes = st[K.S_NODES] + nmoves > cap
        grow_heap = st[K.S_HEAP] + nmoves + 1 > hcap
        new_cap = 2 * cap if grow_nodes else cap
        new_hcap = 2 * hcap if grow_heap else hcap
        now = table_bytes + bytes_of(cap, hcap)
        after = table_bytes + bytes_of(new_cap, new_hcap)
        have = available_memory()
        extra = after - now + (bytes_of(cap, 0) if grow_nodes else 0)   # the old pool lives while copied
        if after > budget or (have is not None and extra > have):
            out.stopped = "memory"
            limit = budget if after > budget else now + have
            out.notes.append(f"the search's tables, nodes and open list need more than {size_text(limit)} "
                             f"({int(st[K.S_NODES]):,} nodes stored)")
            break
        if grow_nodes:
            keys = np.concatenate([keys, np.empty(new_cap - cap, dtype=np.int64)])
            g_of = np.concatenate([g_of, np.empty(new_cap - cap, dtype=np.int32)])
            parent = np.concatenate([parent, np.empty(new_cap - cap, dtype=np.int32)])
            qf = np.concatenate([qf, np.empty(new_cap - cap, dtype=np.int32)])
            fexp = np.concatenate([fexp, np.empty(new_cap - cap, dtype=np.int32)])
            index = np.full(2 * new_cap, -1, dtype=np.int32)
            stored = int(st[K.S_NODES])
            for first in range(0, stored, INDEX_SLICE):
                K.index_insert(index, keys, first, min(stored, first + INDEX_SLICE))
            cap = new_cap
        if grow_heap:
            hprio = np.concatenate([hprio, np.empty(new_hcap - hcap, dtype=np.int64)])
            hnode = np.concatenate([hnode, np.empty(new_hcap - hcap, dtype=np.int32)])
            hcap = new_hcap
        peak = max(peak, after + (bytes_of(cap // 2, 0) if grow_nodes else 0))
    out.expanded = int(st[K.S_EXPANDED])
    out.generated = int(st[K.S_GENERATED])
    out.pruned = int(st[K.S_PRUNED])
    out.stored = int(st[K.S_NODES])
    out.peak_bytes = peak
    status = int(st[K.S_STATUS])
    if status == K.FOUND:
        goal = int(st[K.S_GOAL])
        cost = int(g_of[goal])
        rows = rows_of(inst, K.path_keys(keys, parent, goal), strides)
        check_alignment(inst, model, rows, cost)
        out.solved, out.cost, out.rows, out.lower_bound = True, cost, rows, cost
    elif status == K.EXHAUSTED:
        raise PdbtoolError("internal check failed: the search found no alignment within the upper bound "
                           f"{bound} that a progressive alignment reached")
    else:
        top = int(hprio[0] >> K.G_BITS) if st[K.S_HEAP] > 0 else int(st[K.S_LAST_F])
        out.lower_bound = max(h0, min(top, bound), int(st[K.S_LAST_F]) if st[K.S_LAST_F] <= top else top)
    out.seconds = time.perf_counter() - t0
    out.cpu_seconds = time.process_time() - c0
    return out


def stopped_in_tables(stop: TablesStopped, search: str, t0: float, c0: float) -> Alignment:
    """The outcome of a search whose time limit passed while its three-way tables were built: unsolved, the
    pairwise heuristic's value at the start its lower bound (``t0``, ``c0``: the wall and CPU clocks at the
    start)."""
    h = stop.pairwise
    h0 = h.start_value()
    return Alignment(False, None, None, h0, h.upper_bound, h0, table_bytes=h.nbytes(), table_seconds=h.seconds,
                     seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0, stopped="time",
                     heuristic=h.describe(), search=search, notes=[str(stop)])


def max_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
