"""The clique pattern database: every clique of 2, 3 and 4 vertices of a graph, found once before the
search, and its table file in the cache.

A clique of k free vertices needs k - 1 of them in any cover; vertex-disjoint cliques add.  The search
packs them (:mod:`.kernels`): once at the root (static) or at every node (dynamic).

The table file has the header, checksum and checks of every pdbtool table (:mod:`pdbtool.tables.fileformat`),
``kind`` ``"vertex-cover"``, and is named by the graph's hash.  Its payload is one ``<u4`` array: the
edges (2 vertices each, u < v, sorted), then the triangles (3 each), then the 4-cliques (4 each), every
clique's vertices increasing and the cliques of one size in lexicographic order; the header's ``cliques``
gives the three counts and ``graph_hash`` the hash of the graph whose cliques they are (its vertex count
and edges: the edges are the payload's first part, so ``verify`` recomputes everything from the file).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from .._native import numba_cache  # noqa: F401  (the package-wide cache stamp)

from ..errors import PdbtoolError
from ..tables import fileformat
from ..tables.file_report import FileReport
from .graph import Graph, csr_of, graph_digest

KIND = "vertex-cover"
MAX_SIZE = 4
BYTES_PER_CLIQUE = 40  # the table's arrays while building (four int64 columns and the payload's words)


@njit(cache=True)
def _count_or_fill(indptr, indices, tri, quad, fill):
    """Triangles and 4-cliques u < v < w < x from sorted adjacency lists (their counts; with ``fill``
    also their vertices)."""
    n = indptr.shape[0] - 1
    mark = np.zeros(n, dtype=np.int64)
    t = 0
    q = 0
    for u in range(n):
        for k in range(indptr[u], indptr[u + 1]):
            mark[indices[k]] = u + 1
        for k in range(indptr[u], indptr[u + 1]):
            v = indices[k]
            if v <= u:
                continue
            for j in range(indptr[v], indptr[v + 1]):
                w = indices[j]
                if w <= v or mark[w] != u + 1:
                    continue
                if fill:
                    tri[t, 0] = u
                    tri[t, 1] = v
                    tri[t, 2] = w
                t += 1
                # x > w adjacent to u, v and w: walk w's list, test u's mark and v's list
                for i in range(indptr[w], indptr[w + 1]):
                    x = indices[i]
                    if x <= w or mark[x] != u + 1:
                        continue
                    lo = indptr[v]
                    hi = indptr[v + 1]
                    while lo < hi:
                        mid = (lo + hi) >> 1
                        if indices[mid] < x:
                            lo = mid + 1
                        else:
                            hi = mid
                    if lo < indptr[v + 1] and indices[lo] == x:
                        if fill:
                            quad[q, 0] = u
                            quad[q, 1] = v
                            quad[q, 2] = w
                            quad[q, 3] = x
                        q += 1
    return t, q


@dataclass
class CliqueTable:
    """The cliques of 2 to 4 vertices of a graph of ``vertices`` vertices (arrays of int64 rows)."""

    vertices: int
    edges: np.ndarray
    triangles: np.ndarray
    quads: np.ndarray
    graph_hash: str
    path: Path | None = None
    header: dict[str, Any] = field(default_factory=dict)

    @property
    def counts(self) -> list[int]:
        return [int(self.edges.shape[0]), int(self.triangles.shape[0]), int(self.quads.shape[0])]

    @property
    def entries(self) -> int:
        return sum(self.counts)

    def describe(self) -> str:
        c2, c3, c4 = self.counts
        return (f"vertex-cover cliques of graph {self.graph_hash} ({self.vertices:,} vertices): {c2:,} edges, "
                f"{c3:,} triangles, {c4:,} 4-cliques")

    def rows(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The cliques of sizes 2..k as rows of four (padded with -1), larger first, and their sizes."""
        parts = [(self.quads, 4), (self.triangles, 3), (self.edges, 2)]
        blocks, sizes = [], []
        for arr, size in parts:
            if size > k or arr.shape[0] == 0:
                continue
            block = -np.ones((arr.shape[0], 4), dtype=np.int64)
            block[:, :size] = arr
            blocks.append(block)
            sizes.append(np.full(arr.shape[0], size, dtype=np.int64))
        if not blocks:
            return -np.ones((0, 4), dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate(blocks), np.concatenate(sizes)

    def payload(self) -> np.ndarray:
        return np.concatenate([self.edges.reshape(-1), self.triangles.reshape(-1),
                               self.quads.reshape(-1)]).astype("<u4")

    def identity(self) -> dict[str, Any]:
        return {"kind": KIND, "graph_hash": self.graph_hash, "vertices": self.vertices, "edges": self.counts[0],
                "cliques": self.counts, "max_clique_size": MAX_SIZE, "entries": self.entries}

    def save(self, path: str | os.PathLike, extra: dict | None = None) -> int:
        header = fileformat.make_header(**self.identity(), **(extra or {}))
        return fileformat.save(path, header, self.payload())

    @classmethod
    def load(cls, path: str | os.PathLike, verify_checksum: bool = True) -> CliqueTable:
        f = fileformat.load(path, verify_checksum)
        return cls.from_file(Path(path), f.header, f.payload)

    @classmethod
    def from_file(cls, path: Path, h: dict, payload: np.ndarray) -> CliqueTable:
        def bad(why: str) -> PdbtoolError:
            return fileformat.TableFileError(f"{path}: damaged header ({why})")

        if h.get("kind") != KIND:
            raise fileformat.TableFileError(f"{path}: not a vertex-cover clique table")
        n, counts, digest = h.get("vertices"), h.get("cliques"), h.get("graph_hash")
        if not (isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 1 << 32):
            raise bad("vertices")
        if not (isinstance(counts, list) and len(counts) == 3
                and all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts)):
            raise bad("cliques is not three counts")
        if not (isinstance(digest, str) and len(digest) == 16):
            raise bad("graph_hash")
        if h["entries"] != sum(counts) or h.get("edges") != counts[0]:
            raise bad("entries or edges disagree with the clique counts")
        words = 2 * counts[0] + 3 * counts[1] + 4 * counts[2]
        if payload.dtype != np.dtype("<u4") or payload.shape[0] != words:
            raise bad(f"the payload is not {words:,} vertex numbers")
        values = np.asarray(payload, dtype=np.int64)
        if values.size and int(values.max()) >= n:
            raise fileformat.TableFileError(f"{path}: a clique names a vertex beyond the graph's {n:,}")
        a, b = 2 * counts[0], 2 * counts[0] + 3 * counts[1]
        return cls(n, values[:a].reshape(-1, 2), values[a:b].reshape(-1, 3), values[b:].reshape(-1, 4),
                   digest, path, h)


def find_cliques(graph: Graph, budget_bytes: int | None = None) -> CliqueTable:
    """Every clique of 2, 3 and 4 vertices of ``graph`` (counted first, so that a table too large for memory
    is refused before it is allocated)."""
    return cliques_of(graph.n, graph.edges, budget_bytes)


def cliques_of(n: int, edges: np.ndarray, budget_bytes: int | None = None) -> CliqueTable:
    from ..tables.resources import available_memory, gib

    indptr, indices = csr_of(n, edges)
    empty3 = np.zeros((0, 3), dtype=np.int64)
    empty4 = np.zeros((0, 4), dtype=np.int64)
    t, q = _count_or_fill(indptr, indices, empty3, empty4, False)
    need = BYTES_PER_CLIQUE * (t + q + edges.shape[0])
    have = budget_bytes if budget_bytes is not None else available_memory()
    if have is not None and need > have:
        raise PdbtoolError(f"the clique table ({t:,} triangles, {q:,} 4-cliques) needs about {gib(need)}, but "
                           f"only {gib(have)} is available")
    tri = np.zeros((t, 3), dtype=np.int64)
    quad = np.zeros((q, 4), dtype=np.int64)
    _count_or_fill(indptr, indices, tri, quad, True)
    return CliqueTable(n, np.asarray(edges, dtype=np.int64).reshape(-1, 2), tri, quad, graph_digest(n, edges))


def table_name(graph_hash: str) -> str:
    return f"vc-{graph_hash}-cliques{MAX_SIZE}.pdb"


def get_table(graph: Graph, cache=None, force: bool = False) -> tuple[CliqueTable, bool]:
    """The graph's clique table from the cache, built and stored first if absent or damaged; and whether
    it was built now."""
    from ..tables.cache import TableCache

    cache = cache or TableCache()
    digest = graph.digest()
    path = cache.dir / table_name(digest)
    built = []

    def load(p: Path) -> CliqueTable:
        table = CliqueTable.load(p)
        if table.graph_hash != digest or table.vertices != graph.n or not np.array_equal(table.edges, graph.edges):
            raise fileformat.TableFileError(f"{p}: holds the cliques of another graph")
        return table

    def write(tmp: Path) -> None:
        t0 = time.perf_counter()
        table = find_cliques(graph)
        table.save(tmp, {"build_seconds": round(time.perf_counter() - t0, 3)})
        built.append(True)

    return cache.get_or_build(path, load, write, force=force), bool(built)


def cached_table(graph: Graph, cache) -> CliqueTable | None:
    """The graph's clique table if the cache holds a sound one (never builds; a damaged file is skipped)."""
    path = cache.dir / table_name(graph.digest())
    if not path.exists():
        return None
    try:
        table = CliqueTable.load(path)
    except PdbtoolError:
        return None
    if table.vertices != graph.n or not np.array_equal(table.edges, graph.edges):
        return None
    return table


def is_clique_table(path: str | os.PathLike) -> bool:
    return fileformat.is_kind(path, KIND)


# --- verify and inspect -------------------------------------------------------------------------------------

CliqueReport = FileReport


def verify_file(path: str | os.PathLike) -> CliqueReport:
    """Format, checksum and identity; the stored edges against the header's graph hash; every clique
    recomputed from the edges and compared."""
    path = Path(path)
    checks: list[tuple[str, str]] = []
    try:
        table = CliqueTable.load(path)
    except PdbtoolError as exc:
        return CliqueReport(path, False, checks, str(exc).removeprefix(f"{path}: "))
    checks.append(("format+checksum+identity", "ok"))
    what = table.describe()
    edges = table.edges
    if edges.size and (np.any(edges[:, 0] >= edges[:, 1])
                       or np.any(np.diff(edges[:, 0] * table.vertices + edges[:, 1]) <= 0)):
        return CliqueReport(path, False, checks, "edges: not distinct pairs u < v in order", what)
    if graph_digest(table.vertices, edges) != table.graph_hash:
        return CliqueReport(path, False, checks, "graph: the edges do not hash to the header's graph_hash", what)
    checks.append(("graph hash", "ok"))
    fresh = cliques_of(table.vertices, edges)
    for name, mine, theirs in (("triangles", table.triangles, fresh.triangles),
                               ("4-cliques", table.quads, fresh.quads)):
        if not np.array_equal(mine, theirs):
            return CliqueReport(path, False, checks, f"{name}: the file's {mine.shape[0]:,} are not the graph's "
                                                     f"{theirs.shape[0]:,} (recomputed)", what)
    checks.append(("cliques recomputed", f"{table.entries:,} identical"))
    return CliqueReport(path, True, checks, None, what)


def describe_file(path: str | os.PathLike) -> dict:
    path = Path(path)
    checksum = fileformat.checksum_ok(path)
    table = CliqueTable.load(path, verify_checksum=False)
    h = table.header
    c2, c3, c4 = table.counts
    return {"file": str(path), "kind": KIND, "table": table.describe(), "graph_hash": table.graph_hash,
            "vertices": table.vertices, "edges": c2, "triangles": c3, "quads": c4, "entries": table.entries,
            "payload_bytes": 4 * (2 * c2 + 3 * c3 + 4 * c4), "file_bytes": h.get("_file_bytes"),
            "checksum_ok": checksum, "build_seconds": h.get("build_seconds"),
            "pdbtool_version": h.get("pdbtool_version")}


def format_description(info: dict) -> str:
    lines = [f"{info['file']}: {info['table']}",
             f"  graph {info['graph_hash']}: {info['vertices']:,} vertices, {info['edges']:,} edges",
             f"  cliques: {info['edges']:,} of 2, {info['triangles']:,} of 3, {info['quads']:,} of 4 "
             f"({info['entries']:,} in all)",
             f"  payload {info['payload_bytes']:,} bytes, file {info['file_bytes']:,} bytes, checksum "
             f"{'ok' if info['checksum_ok'] else 'MISMATCH'}"]
    if info.get("build_seconds") is not None:
        lines.append(f"  built in {info['build_seconds']} s")
    return "\n".join(lines)
