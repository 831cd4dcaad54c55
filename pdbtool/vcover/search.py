"""The vertex cover solver: reductions, components, a greedy first cover, then branch and bound.

Heuristics (``--heuristic``, terms joined by commas take the max):

* ``none``: no bound beyond "an uncovered edge needs one more vertex";
* ``matching``: a maximal matching of the free graph;
* ``static:K`` (K = 2, 3, 4): vertex-disjoint cliques of at most K vertices chosen once at the root (from the
  clique table, larger first); at a node a clique with f free vertices adds f - 1;
* ``dynamic:K``: a maximal packing of the free cliques of at most K vertices chosen anew at every node,
  larger first (the talk's dynamic database);
* ``cliques`` (also ``dynamic:all``): a greedy partition of all free vertices into cliques of any size;
* ``lp``: the half-integral LP relaxation's optimum (a maximum matching of the bipartite double cover).

The search is :func:`pdbtool.vcover.kernels.search`; this module prepares each component for it, runs it in
slices of nodes (to honour the time limit and to let signals in), and lifts the covers back.
"""

from __future__ import annotations

import heapq
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..errors import PdbtoolError
from . import cover_search as CS
from . import kernels as K
from .cliques import CliqueTable, cliques_of
from .graph import Graph
from .local_search import numvc
from .reductions import Reduced, parse_rules, reduce_graph
from .root_bound import iterated_clique_cover

DEFAULT_HEURISTIC = "cliques"
HEURISTIC_TERMS = ("none", "matching", "static:K", "dynamic:K", "cliques", "dynamic:all", "lp", "default")
DENSE_BYTES = 256 << 20   # a component gets an adjacency bit matrix when it and the clique rows fit in this
BRANCH_BUFFER_PER_VERTEX = 8  # the branching lists' first buffer, doubled when the open nodes' lists need more
SLICE_SECONDS = 0.1       # a kernel call's length, aimed at: the time limit and signals are looked at between
SLICE_NODES = (500, 2_000, 1_000_000)  # nodes a kernel call explores: least, first, most
LOCAL_STEPS_PER_VERTEX = 200
LOCAL_STEPS_MAX = 4_000_000  # a component's local search: at most this many steps
LOCAL_SEED = 1
ROOT_ROUNDS = 256         # iterated-greedy rounds of the root's clique partition (with the cliques bound)
ROOT_SPARSE = 16          # ... on components whose average degree is under 1/ROOT_SPARSE of their vertices


class SearchError(PdbtoolError):
    """A heuristic this solver does not know, or a cover that fails its check."""


@dataclass(frozen=True)
class Heuristic:
    spec: str
    flags: int
    static_k: int = 0
    dynamic_k: int = 0

    @property
    def uses_clique_cover(self) -> bool:
        return bool(self.flags & K.F_CLIQUES)

    @property
    def needs_cliques(self) -> bool:
        return bool(self.flags & (K.F_STATIC | K.F_DYNAMIC))


def parse_heuristic(text: str | None) -> Heuristic:
    """A ``--heuristic`` value (see the module's docstring)."""
    text = DEFAULT_HEURISTIC if text in (None, "default") else text
    flags = static_k = dynamic_k = 0
    terms = [t.strip() for t in text.split(",") if t.strip()]
    if not terms:
        raise SearchError("an empty --heuristic")
    for term in terms:
        name, _, arg = term.partition(":")
        if term == "none":
            continue
        if term == "matching":
            flags |= K.F_MATCH
        elif term in ("cliques", "dynamic:all"):
            flags |= K.F_CLIQUES
        elif term == "lp":
            flags |= K.F_LP
        elif name in ("static", "dynamic") and arg in ("2", "3", "4"):
            if name == "static":
                if static_k and static_k != int(arg):
                    raise SearchError(f"--heuristic: one static:K at a time ({text!r})")
                static_k, flags = int(arg), flags | K.F_STATIC
            else:
                if dynamic_k and dynamic_k != int(arg):
                    raise SearchError(f"--heuristic: one dynamic:K at a time ({text!r})")
                dynamic_k, flags = int(arg), flags | K.F_DYNAMIC
        else:
            raise SearchError(f"unknown vertex-cover heuristic {term!r}: use none, matching, static:K or dynamic:K "
                              f"(K = 2, 3, 4), cliques (dynamic:all), lp, or several joined by commas")
    return Heuristic(text, flags, static_k, dynamic_k)


@dataclass
class CoverResult:
    """A solved (or time-limited) graph.  ``cover``: vertex indices of the input graph (0-based)."""

    cover: list[int]
    size: int
    optimal: bool
    lower_bound: int
    nodes: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    peak_rss_bytes: int = 0
    heuristic: str = DEFAULT_HEURISTIC
    reductions: dict[str, int] = field(default_factory=dict)
    kernel_vertices: int = 0
    components: int = 0
    greedy_size: int = 0
    first_size: int = 0
    root_bound: int = 0
    clique_table: str = "none"


def check_cover(graph: Graph, cover, size: int | None = None) -> None:
    """Refuse a cover that leaves an edge uncovered, names a vertex twice or outside the graph, or whose
    size is not ``size``."""
    arr = np.asarray(sorted(int(v) for v in cover), dtype=np.int64)
    if arr.size and (arr[0] < 0 or arr[-1] >= graph.n or np.any(np.diff(arr) == 0)):
        raise SearchError(f"{graph.name}: the cover names a vertex twice or outside the graph")
    if size is not None and arr.size != size:
        raise SearchError(f"{graph.name}: the cover has {arr.size} vertices, not the {size} reported")
    inside = np.zeros(graph.n, dtype=bool)
    inside[arr] = True
    bad = ~(inside[graph.edges[:, 0]] | inside[graph.edges[:, 1]]) if graph.m else np.zeros(0, dtype=bool)
    if bad.any():
        u, v = graph.edges[int(np.flatnonzero(bad)[0])]
        raise SearchError(f"{graph.name}: the cover leaves edge {graph.label(u)}-{graph.label(v)} uncovered")


@dataclass
class _Component:
    """One component prepared for the kernel, its vertices renumbered by increasing degree."""

    ids: np.ndarray            # local index -> id in the reduced graph
    indptr: np.ndarray
    indices: np.ndarray
    edges: np.ndarray


def clique_row_sets(renumber: bool, maxsat: bool) -> int:
    """Sets of n bit rows the clique-branching search keeps beside the adjacency matrix: the cliques for
    Re-NUMBER, and two more for the MaxSAT test."""
    return (3 if maxsat else 1) if renumber else 0


def dense_bytes(n: int, row_sets: int = 3) -> int:
    """Bytes of a component's bit rows: its adjacency matrix and ``row_sets`` sets of clique rows."""
    return (1 + row_sets) * n * ((n + 63) // 64) * 8


def _smallest_last(red: Reduced, comp: list[int]) -> list[int]:
    """The vertices with one of largest degree in the graph left last, repeatedly (the complement's
    smallest-last order, which maximum clique solvers colour in), ties to the lowest id; one heap of ids a
    degree, entries left stale when a vertex's degree drops, so the time is (n + m) log n."""
    deg = {v: len(red.adj[v]) for v in comp}
    top = max(deg.values(), default=0)
    buckets: list[list[int]] = [[] for _ in range(top + 1)]
    for v in sorted(comp):
        buckets[deg[v]].append(v)          # sorted: a heap already
    out: list[int] = []
    while len(out) < len(comp):
        heap = buckets[top]
        while heap and deg[heap[0]] != top:
            heapq.heappop(heap)
        if not heap:
            top -= 1
            continue
        v = heapq.heappop(heap)
        out.append(v)
        deg[v] = -1
        for u in red.adj[v]:
            d = deg.get(u, -1)
            if d > 0:
                deg[u] = d - 1
                heapq.heappush(buckets[d - 1], u)
    return out[::-1]


def _component(red: Reduced, comp: list[int]) -> _Component:
    order = _smallest_last(red, comp)
    local = {v: i for i, v in enumerate(order)}
    rows = [(local[v], local[u]) for v in order for u in red.adj[v] if local[v] < local[u]]
    edges = np.array(sorted(rows), dtype=np.int64).reshape(-1, 2)
    from .graph import csr_of

    indptr, indices = csr_of(len(order), edges)
    return _Component(np.array(order, dtype=np.int64), indptr, indices, edges)


def _component_cliques(comp: _Component, table: CliqueTable | None, induced: bool, k: int
                       ) -> tuple[np.ndarray, np.ndarray, str]:
    """The cliques of at most ``k`` vertices of a component, larger first: from the cached table when the
    component is an induced subgraph of the input graph, else found now."""
    n = comp.ids.shape[0]
    if table is not None and induced:
        rows, sizes = table.rows(k)
        to_local = -np.ones(table.vertices, dtype=np.int64)
        inside = comp.ids < table.vertices
        to_local[comp.ids[inside]] = np.flatnonzero(inside)
        mapped = np.where(rows >= 0, to_local[np.maximum(rows, 0)], -1)
        keep = np.all((mapped >= 0) | (rows < 0), axis=1) & (sizes > 0)
        mapped, sizes = mapped[keep], sizes[keep]
        mapped = np.where(np.arange(4)[None, :] < sizes[:, None], mapped, -1)
        return np.ascontiguousarray(mapped), np.ascontiguousarray(sizes), "cache"
    found = cliques_of(n, comp.edges)
    rows, sizes = found.rows(k)
    return rows, sizes, "computed"


def _static_packing(rows: np.ndarray, sizes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    used = np.zeros(n, dtype=bool)
    keep = []
    for r in range(rows.shape[0]):
        vs = rows[r, :sizes[r]]
        if not used[vs].any():
            used[vs] = True
            keep.append(r)
    return np.ascontiguousarray(rows[keep]), np.ascontiguousarray(sizes[keep])


def _max_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def solve(graph: Graph, heuristic: str | None = None, reductions: str | None = None,
          time_limit: float | None = None, cliques: CliqueTable | None = None, out_first: bool = False,
          progress: Callable[[int], None] | None = None, branching: str = "auto",
          renumber: bool = True, maxsat: bool = True, local_steps: int | None = None,
          clock: str = "wall") -> CoverResult:
    """A minimum vertex cover of ``graph`` (or, past ``time_limit`` seconds, the best cover found and a
    proven lower bound), checked before it is returned.

    ``branching``: ``binary`` (a vertex of largest degree in or out, the talk's), ``cliques`` (on the clique
    cover, :func:`cover_search.search_cover`; with the ``cliques`` bound only) or ``auto`` (``cliques`` when the
    bound is among the heuristics and the component fits an adjacency bit matrix).

    ``local_steps``: steps of the local search (:func:`local_search.numvc`) that improves each component's
    greedy cover before the search starts; None: :func:`local_steps_for` the component's size, 0: none.

    ``clock``: what ``time_limit`` counts, ``wall`` seconds or this process's ``cpu`` seconds (a benchmark's
    rule on a shared machine); either is looked at between the search's kernel calls."""
    if branching not in ("auto", "binary", "cliques"):
        raise SearchError(f"unknown branching {branching!r}: auto, binary or cliques")
    if clock not in ("wall", "cpu"):
        raise SearchError(f"unknown clock {clock!r}: wall or cpu")
    now = time.process_time if clock == "cpu" else time.perf_counter
    heur = parse_heuristic(heuristic)
    rules = parse_rules(reductions)
    t0, c0 = time.perf_counter(), time.process_time()
    deadline = None if time_limit is None else now() + time_limit
    red = reduce_graph(graph.n, graph.edges, rules)
    if "components" in rules:
        comps = red.components()
    else:
        left = red.vertices()
        comps = [left] if left else []
    induced = not red.undo
    flags = heur.flags | (K.F_OUT_FIRST if out_first else 0)
    kernel_cover: list[int] = []
    total_nodes = 0
    best_total = lower_total = greedy_total = first_total = root_total = 0
    optimal = True
    source = "none"
    for comp_ids in comps:
        comp = _component(red, comp_ids)
        n = comp.ids.shape[0]
        k = max(heur.static_k, heur.dynamic_k)
        if heur.needs_cliques:
            rows, sizes, source = _component_cliques(comp, cliques, induced, k)
        else:
            rows, sizes = -np.ones((0, 4), dtype=np.int64), np.zeros(0, dtype=np.int64)
        dyn_rows, dsizes = _filter(rows, sizes, heur.dynamic_k)
        packed, psizes = _static_packing(*_filter(rows, sizes, heur.static_k), n) if heur.static_k else \
            (np.zeros((0, 4), dtype=np.int64), np.zeros(0, dtype=np.int64))
        words = (n + 63) // 64
        dense = bool(flags & K.F_CLIQUES) and dense_bytes(n, clique_row_sets(renumber, maxsat)) <= DENSE_BYTES
        adjbits = K.adjacency_bits(comp.indptr, comp.indices, words) if dense \
            else np.zeros((0, max(words, 1)), dtype=np.uint64)
        status = np.zeros(n, dtype=np.int8)
        deg = np.zeros(n, dtype=np.int64)
        trail = np.zeros(n + 1, dtype=np.int64)
        queue = np.zeros(3 * n + 8, dtype=np.int64)
        fr_v, fr_child, fr_mark, fr_bound = (np.zeros(n + 1, dtype=np.int64) for _ in range(4))
        sc = np.zeros(K.N_SCALARS, dtype=np.int64)
        mark = np.zeros(n, dtype=np.int64)
        work = np.zeros(7 * n + 2 * words + 8, dtype=np.int64)
        K.init_state(status, deg, comp.indptr, comp.indices, trail, sc, queue)
        sc[K.S_STAMP] = 2
        root = int(sc[K.S_G]) + (int(K.lower_bound(status, deg, comp.indptr, comp.indices, adjbits, dyn_rows, dsizes,
                                                   dyn_rows.shape[0], packed, psizes, flags, sc, mark, work))
                                 if sc[K.S_MFREE] else 0)
        edges = comp.edges.shape[0]
        if flags & K.F_CLIQUES and sc[K.S_MFREE] and 2 * edges * ROOT_SPARSE < n * n:
            # a better partition into cliques for the root alone: on sparse components, where the search's
            # cover of the free vertices falls short
            root = max(root, int(sc[K.S_G]) + int(iterated_clique_cover(comp.indptr, comp.indices, status, deg,
                                                                        ROOT_ROUNDS, LOCAL_SEED)))
        root_total += root
        best = np.zeros(n, dtype=np.int8)
        ub = int(K.greedy_cover(comp.indptr, comp.indices, best))
        greedy_total += ub
        steps = local_steps_for(n) if local_steps is None else local_steps
        if steps > 0 and ub > root:  # a cover of the root's bound is optimal: the local search stops there
            indexed = 2 * edges * max(1, n.bit_length()) < n * n   # the heap's cost under a scan's
            ub = int(numvc(comp.indptr, comp.indices, best, steps, LOCAL_SEED, root, indexed))
        first_total += ub
        sc[K.S_BEST] = ub
        by_cliques = bool(flags & K.F_CLIQUES) and adjbits.shape[0] == n and branching != "binary"
        if by_cliques:
            fr_len, fr_pos = np.zeros(n + 1, dtype=np.int64), np.zeros(n + 1, dtype=np.int64)
            buf_v = np.zeros(BRANCH_BUFFER_PER_VERTEX * n + 2, dtype=np.int64)
            buf_k = np.zeros_like(buf_v)
            cbit_rows = clique_row_sets(renumber, maxsat) * n
            cbits = np.zeros((cbit_rows, words), dtype=np.uint64)
            if maxsat:
                work = np.zeros(11 * n + 2 * words + 16, dtype=np.int64)
        elif branching == "cliques":
            raise SearchError("branching on cliques needs the cliques bound and a component whose bit rows fit in "
                              f"{DENSE_BYTES >> 20} MiB")
        slice_nodes = SLICE_NODES[1]
        if ub <= root:              # the first cover meets the root's bound: minimum without a node
            sc[K.S_PHASE] = K.PHASE_DONE
        while sc[K.S_PHASE] != K.PHASE_DONE:
            if deadline is not None and now() >= deadline:
                break
            started = time.perf_counter()
            if by_cliques:
                CS.search_cover(comp.indptr, comp.indices, adjbits, dyn_rows, dsizes, dyn_rows.shape[0], packed, psizes,
                               flags, status, deg, trail, queue, fr_v, fr_len, fr_pos, fr_mark, fr_bound, buf_v, buf_k,
                               sc, best, mark, work, cbits, slice_nodes)
                if CS.branch_buffer_short(n, fr_v, fr_len, sc, buf_v.shape[0]):
                    buf_v = np.concatenate([buf_v, np.zeros_like(buf_v)])
                    buf_k = np.concatenate([buf_k, np.zeros_like(buf_k)])
            else:
                K.search(comp.indptr, comp.indices, adjbits, dyn_rows, dsizes, dyn_rows.shape[0], packed, psizes,
                         flags, status, deg, trail, queue, fr_v, fr_child, fr_mark, fr_bound, sc, best, mark, work,
                         slice_nodes)
            slice_nodes = _next_slice(slice_nodes, time.perf_counter() - started)
            if progress is not None:
                progress(total_nodes + int(sc[K.S_NODES]))
        total_nodes += int(sc[K.S_NODES])
        done = sc[K.S_PHASE] == K.PHASE_DONE
        optimal &= bool(done)
        best_total += int(sc[K.S_BEST])
        lower_total += max(root, int(K.open_bound(fr_bound, sc, root))) if not done else int(sc[K.S_BEST])
        kernel_cover.extend(int(x) for x in comp.ids[np.flatnonzero(best)])
    cover = sorted(red.lift(kernel_cover))
    size = best_total + red.offset
    check_cover(graph, cover, size)
    lower = size if optimal else lower_total + red.offset
    return CoverResult(cover, size, optimal, lower, total_nodes, time.perf_counter() - t0, time.process_time() - c0,
                       _max_rss(), heur.spec, dict(red.counts), sum(len(c) for c in comps), len(comps),
                       greedy_total + red.offset, first_total + red.offset, root_total + red.offset, source)


def _next_slice(nodes: int, seconds: float) -> int:
    """The nodes of the next kernel call, so that a call lasts about SLICE_SECONDS (a signal waits for the
    call to end)."""
    if seconds > SLICE_SECONDS:
        return max(SLICE_NODES[0], nodes // 2)
    if seconds < SLICE_SECONDS / 2:
        return min(SLICE_NODES[2], nodes * 2)
    return nodes


def local_steps_for(n: int) -> int:
    """The steps of the local search on a component of ``n`` vertices: LOCAL_STEPS_PER_VERTEX a vertex, at
    most LOCAL_STEPS_MAX."""
    return max(1000, min(LOCAL_STEPS_PER_VERTEX * n, LOCAL_STEPS_MAX))


def _filter(rows: np.ndarray, sizes: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    keep = (sizes <= k) & (sizes >= 2)
    return np.ascontiguousarray(rows[keep]), np.ascontiguousarray(sizes[keep])
