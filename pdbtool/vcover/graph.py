"""Graphs for the vertex cover domain: reading PACE ``.gr``, DIMACS and plain edge lists, checking them, and
drawing the talk's random graphs.

Formats (one graph a file; the format is told by the file's ``p`` line):

* PACE 2019 (``.gr``): ``c`` comment lines, ``p td N M``, then ``M`` lines ``u v`` with vertices 1..N.
* DIMACS (``.dimacs``, ``.col``, ``.clq``): ``c`` comment lines, ``p edge N M`` (or ``p col N M``), then
  ``e u v`` lines with vertices 1..N.
* A plain edge list (``.edges``, ``.txt``, any file without a ``p`` line): ``u v`` lines of non-negative
  integers; the vertices are the numbers that appear (an isolated vertex cannot be written).

Lines starting with ``#`` are comments in every format, and blank lines are skipped.  A comment
``# optimal K`` (or ``c optimal K``) states the size of a minimum cover, which ``solve`` checks, as does a
PACE solution file ``NAME.out`` (``s vc N K``) beside ``NAME.gr``.

Refused (a :class:`GraphError`, one line): a malformed or repeated ``p`` line, a ``p`` line after the edges,
an edge line that is not two vertex numbers (``e u v`` in DIMACS), a vertex outside 1..N, a self-loop
(``u u``: no cover of a simple graph can hold it), more or fewer edge lines than the ``p`` line promises,
and a graph whose arrays would not fit in memory (checked from the ``p`` line, or the file's size, before
anything is allocated).  Merged, and counted in :attr:`Graph.merged`: an edge given twice (``u v`` twice,
or ``u v`` and ``v u``), which a cover covers once.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import PdbtoolError

INSTANCE_SUFFIXES = (".gr", ".dimacs", ".col", ".clq", ".edges")
# bytes of memory per vertex and per edge of a graph held by the solver (adjacency both ways, the search's
# arrays, the edge list, Python's copies while parsing)
BYTES_PER_VERTEX = 200
BYTES_PER_EDGE = 160
MAX_VERTICES = 1 << 31
_OPTIMAL = re.compile(r"^(?:#|c)\s*optimal\s*[:=]?\s*(\S+)\s*$", re.IGNORECASE)


class GraphError(PdbtoolError):
    """A graph file that cannot be read (its name and what is wrong, one line)."""


@dataclass
class Graph:
    """A simple undirected graph on vertices ``0..n-1``: ``edges`` is an (m, 2) int64 array with u < v,
    sorted and distinct.  ``labels[i]`` is vertex i's number in the file (i + 1 for PACE and DIMACS)."""

    n: int
    edges: np.ndarray
    name: str = "graph"
    labels: np.ndarray | None = None
    optimal: int | None = None       # a size stated in the file or its .out
    optimal_source: str | None = None
    merged: int = 0                  # repeated edges merged
    fmt: str = "pace"
    notes: list[str] = field(default_factory=list)

    @property
    def m(self) -> int:
        return int(self.edges.shape[0])

    def label(self, v: int) -> int:
        return int(self.labels[v]) if self.labels is not None else v + 1

    def labels_of(self, vertices) -> list[int]:
        vs = np.asarray(vertices, dtype=np.int64)
        if self.labels is not None:
            return [int(x) for x in self.labels[vs]]
        return [int(x) + 1 for x in vs]

    def degrees(self) -> np.ndarray:
        return np.bincount(self.edges.reshape(-1), minlength=self.n).astype(np.int64)

    def csr(self) -> tuple[np.ndarray, np.ndarray]:
        """The adjacency lists (both directions, each sorted): ``indices[indptr[v]:indptr[v+1]]``."""
        return csr_of(self.n, self.edges)

    def digest(self) -> str:
        """A hash of the graph itself (vertex count and edges, not the file's comments or numbering)."""
        return graph_digest(self.n, self.edges)


def csr_of(n: int, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    src = np.concatenate([edges[:, 0], edges[:, 1]])
    dst = np.concatenate([edges[:, 1], edges[:, 0]])
    order = np.lexsort((dst, src))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    return indptr, np.ascontiguousarray(dst[order])


def graph_digest(n: int, edges: np.ndarray) -> str:
    import xxhash

    h = xxhash.xxh64()
    h.update(np.int64(n).tobytes())
    h.update(np.ascontiguousarray(edges, dtype="<i8").tobytes())
    return h.hexdigest()


def canonical_edges(n: int, pairs: np.ndarray, name: str) -> tuple[np.ndarray, int]:
    """Distinct edges with u < v, sorted, and how many repeats were merged; self-loops refused."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    loops = np.flatnonzero(pairs[:, 0] == pairs[:, 1])
    if loops.size:
        raise GraphError(f"{name}: a self-loop at vertex index {int(pairs[loops[0], 0])} (edge {int(loops[0]) + 1}): "
                         f"self-loops are refused")
    lo = np.minimum(pairs[:, 0], pairs[:, 1])
    hi = np.maximum(pairs[:, 0], pairs[:, 1])
    keys = np.unique(lo * n + hi) if n else np.zeros(0, dtype=np.int64)
    edges = np.stack([keys // max(n, 1), keys % max(n, 1)], axis=1).astype(np.int64) if keys.size \
        else np.zeros((0, 2), dtype=np.int64)
    return edges, int(pairs.shape[0] - edges.shape[0])


def graph_bytes(n: int, m: int) -> int:
    return BYTES_PER_VERTEX * n + BYTES_PER_EDGE * m


def check_size(n: int, m: int, what: str) -> None:
    """Refuse, before anything is allocated, a graph whose arrays would not fit in memory."""
    from ..tables.resources import available_memory, gib

    need = graph_bytes(n, m)
    have = available_memory()
    if have is not None and need > have:
        raise GraphError(f"{what}: a graph of {n:,} vertices and {m:,} edges needs about {gib(need)}, but only "
                         f"{gib(have)} is available")


def _int(token: str, name: str, lineno: int, what: str) -> int:
    if not token.isdigit() or len(token) > 18:
        raise GraphError(f"{name}: line {lineno}: {what} {token[:30]!r} is not a whole number")
    return int(token)


def parse_text(text: str, name: str = "graph") -> Graph:
    """A graph from the text of a file (see the module's docstring for the formats and what is refused)."""
    header: tuple[str, int, int] | None = None
    optimal = None
    rows: list[tuple[int, int]] = []
    fmt = None
    lineno = 0
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line[0] == "#" or line.split(None, 1)[0] == "c":
            found = _OPTIMAL.match(line)
            if found:
                optimal = _int(found.group(1), name, lineno, "the stated optimum")
            continue
        tokens = line.split()
        if tokens[0] == "p":
            if header is not None:
                raise GraphError(f"{name}: line {lineno}: a second 'p' line")
            if rows:
                raise GraphError(f"{name}: line {lineno}: the 'p' line comes after edges")
            if len(tokens) != 4 or tokens[1] not in ("td", "edge", "col"):
                raise GraphError(f"{name}: line {lineno}: malformed 'p' line {line[:40]!r} (expected "
                                 f"'p td N M' or 'p edge N M')")
            n = _int(tokens[2], name, lineno, "the vertex count")
            m = _int(tokens[3], name, lineno, "the edge count")
            if n >= MAX_VERTICES:
                raise GraphError(f"{name}: line {lineno}: {n:,} vertices, more than the {MAX_VERTICES - 1:,} "
                                 f"supported")
            check_size(n, m, name)
            header = (tokens[1], n, m)
            fmt = "pace" if tokens[1] == "td" else "dimacs"
            continue
        if fmt == "dimacs":
            if tokens[0] != "e" or len(tokens) != 3:
                raise GraphError(f"{name}: line {lineno}: expected an edge 'e u v', got {line[:40]!r}")
            tokens = tokens[1:]
        elif len(tokens) != 2:
            raise GraphError(f"{name}: line {lineno}: expected an edge 'u v', got {line[:40]!r}")
        u = _int(tokens[0], name, lineno, "vertex")
        v = _int(tokens[1], name, lineno, "vertex")
        if header is not None:
            n = header[1]
            for x in (u, v):
                if not 1 <= x <= n:
                    raise GraphError(f"{name}: line {lineno}: vertex {x} is out of range (1..{n})")
            if len(rows) >= header[2]:
                raise GraphError(f"{name}: line {lineno}: more edges than the {header[2]:,} of the 'p' line")
        if u == v:
            raise GraphError(f"{name}: line {lineno}: a self-loop at vertex {u} (self-loops are refused)")
        rows.append((u, v))
    if header is not None:
        _, n, m = header
        if len(rows) != m:
            raise GraphError(f"{name}: the 'p' line promises {m:,} edges, the file has {len(rows):,}")
        pairs = np.array(rows, dtype=np.int64).reshape(-1, 2) - 1
        labels = None
    else:
        fmt = "edges"
        pairs = np.array(rows, dtype=np.int64).reshape(-1, 2)
        labels, inverse = np.unique(pairs.reshape(-1), return_inverse=True)
        n = int(labels.shape[0])
        pairs = inverse.reshape(-1, 2).astype(np.int64)
    edges, merged = canonical_edges(n, pairs, name)
    return Graph(n, edges, name, labels, optimal, "file" if optimal is not None else None, merged, fmt or "edges")


def read_graph(path: str | os.PathLike, name: str | None = None) -> Graph:
    """A graph from a file (``-``: standard input), with the optimum of a PACE ``.out`` beside it."""
    if str(path) == "-":
        from ..files import MAX_TEXT_BYTES, FileKindError, read_stdin

        try:
            raw = read_stdin(MAX_TEXT_BYTES, "graph")
        except FileKindError as exc:
            raise GraphError(str(exc)) from None
        try:
            return parse_text(raw.decode(), name or "stdin")
        except UnicodeDecodeError:
            raise GraphError(f"{name or 'stdin'}: not a text file") from None
    path = Path(path)
    label = name or str(path)
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise GraphError(f"{label}: not a regular file")
        # every edge line takes at least 4 bytes ("1 2\n"): refuse a file whose edges could not fit
        check_size(size // 4, size // 4, label)
        raw = path.read_bytes()
    except OSError as exc:
        raise GraphError(f"{label}: cannot read: {exc.strerror or exc}") from None
    try:
        text = raw.decode()
    except UnicodeDecodeError:
        raise GraphError(f"{label}: not a text file") from None
    graph = parse_text(text, label)
    stated = read_pace_solution(path.with_suffix(".out"), label)
    if stated is not None:
        if graph.optimal is not None and graph.optimal != stated:
            raise GraphError(f"{label}: the file states an optimum of {graph.optimal}, its .out {stated}")
        graph.optimal, graph.optimal_source = stated, str(path.with_suffix(".out"))
    return graph


def read_pace_solution(path: Path, label: str) -> int | None:
    """The size in a PACE solution file's ``s vc N K`` line (None when there is no such file)."""
    if not path.is_file():
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                tokens = line.split()
                if tokens[:2] == ["s", "vc"]:
                    if len(tokens) != 4 or not tokens[3].isdigit():
                        raise GraphError(f"{label}: malformed 's vc' line in {path}")
                    return int(tokens[3])
                if tokens and tokens[0] != "c":
                    break
    except OSError as exc:
        raise GraphError(f"{path}: cannot read: {exc.strerror or exc}") from None
    raise GraphError(f"{label}: {path} has no 's vc N K' line")


def expand_paths(args) -> list[str]:
    """Files named, the graph files of directories named (sorted, by suffix), and ``-``."""
    out: list[str] = []
    for arg in args:
        p = Path(arg)
        if arg != "-" and p.is_dir():
            out.extend(str(q) for q in sorted(p.iterdir()) if q.suffix in INSTANCE_SUFFIXES and q.is_file())
        else:
            out.append(str(arg))
    return out


# --- writing ----------------------------------------------------------------------------------------------

def format_pace(graph: Graph, comments: list[str] = ()) -> str:  # type: ignore[assignment]
    """The graph as a PACE ``.gr`` text (vertices renumbered 1..n)."""
    lines = [f"c {c}" for c in comments]
    if graph.optimal is not None:
        lines.append(f"c optimal {graph.optimal}")
    lines.append(f"p td {graph.n} {graph.m}")
    lines.extend(f"{u + 1} {v + 1}" for u, v in graph.edges.tolist())
    return "\n".join(lines) + "\n"


def format_solution(graph: Graph, cover) -> str:
    """The PACE solution of a cover: ``s vc N K`` and one vertex (as numbered in the file) a line."""
    labels = sorted(graph.labels_of(cover))
    return "\n".join([f"s vc {graph.n} {len(labels)}"] + [str(v) for v in labels]) + "\n"


# --- random graphs ------------------------------------------------------------------------------------------

def random_graph(n: int, degree: float, seed: int, index: int = 0) -> Graph:
    """The talk's class: ``n`` vertices and ``round(n * degree / 2)`` distinct edges drawn uniformly at random
    (the G(n, m) model).  Graph ``index`` of ``seed`` is the same whatever the batch's size."""
    if n < 2:
        raise GraphError("a random graph needs at least 2 vertices")
    pairs = n * (n - 1) // 2
    m = int(round(n * degree / 2))
    if not 0 <= m <= pairs:
        raise GraphError(f"average degree {degree:g} on {n} vertices asks for {m:,} edges; at most {pairs:,} exist")
    check_size(n, m, "the random graph")
    rng = np.random.default_rng([seed, index])
    keys = np.sort(rng.choice(pairs, size=m, replace=False).astype(np.int64))
    # unrank pair index k (u < v, in row order) to (u, v)
    u = (n - 2 - np.floor(np.sqrt(-8.0 * keys + 4.0 * n * (n - 1) - 7) / 2.0 - 0.5)).astype(np.int64)
    start = u * (2 * n - u - 1) // 2
    fix = keys < start
    while fix.any():
        u[fix] -= 1
        start = u * (2 * n - u - 1) // 2
        fix = keys < start
    nxt = (u + 1) * (2 * n - u - 2) // 2
    fix = keys >= nxt
    while fix.any():
        u[fix] += 1
        start = u * (2 * n - u - 1) // 2
        nxt = (u + 1) * (2 * n - u - 2) // 2
        fix = keys >= nxt
    v = keys - start + u + 1
    edges = np.stack([u, v], axis=1)
    order = np.lexsort((edges[:, 1], edges[:, 0]))
    return Graph(n, edges[order], f"random-{n}-{degree:g}-s{seed}-{index}")
