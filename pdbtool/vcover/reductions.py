"""Reductions applied before the search (each keeps a minimum cover of the reduced graph, lifted back, a
minimum cover of the input; the tests check each against brute force):

* ``degree1``: a vertex of degree 0 is left out; the neighbour of a vertex of degree 1 goes in.
* ``fold`` (degree 2): a vertex v with neighbours a, b: if a and b are adjacent, both go in; otherwise v,
  a and b become one new vertex w adjacent to N(a) | N(b) - {v}, and the cover grows by one: lifted, w in
  the cover means a and b, w out means v.
* ``domination``: a vertex u adjacent to v with N[v] inside N[u] goes in (some minimum cover holds it).
* ``funnel``: a vertex v of degree 3 to FUNNEL_MAX_DEGREE with a neighbour y such that the other neighbours
  W form a clique that y has no edge to: v and y go, each neighbour of y but v is joined to every vertex of
  W, and the cover grows by one (some minimum cover holds all of W, then y covers the rest, or all of N(y)
  but v, then v does).  Lifted: all of W in the cover puts y in, else v.  (A degree-2 vertex's funnel is
  the fold.)
* ``lp`` (Nemhauser-Trotter, the crown rule): an optimal half-integral solution of the LP relaxation, from a
  maximum matching of the bipartite double cover and Konig's theorem; its vertices at 1 go in, at 0 stay
  out (some minimum cover agrees with it there).  Its count is of the vertices it decides.
* ``components``: the connected components left are solved one by one (in :mod:`.search`).

The rules run until none applies.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from ..errors import PdbtoolError

RULES = ("degree1", "fold", "domination", "funnel", "lp", "components")
DEFAULT_RULES = RULES
FUNNEL_MAX_DEGREE = 16


def parse_rules(text: str | None) -> tuple[str, ...]:
    """``--reductions``: ``default``, ``all``, ``none``, or a comma-separated list of :data:`RULES`."""
    if text is None or text == "default":
        return DEFAULT_RULES
    if text == "none":
        return ()
    if text == "all":
        return RULES
    names = tuple(t.strip() for t in text.split(",") if t.strip())
    for t in names:
        if t not in RULES:
            raise PdbtoolError(f"unknown reduction {t!r}: choose from {', '.join(RULES)}, all, none, default")
    return names


@dataclass
class Reduced:
    """A reduced graph: the vertices left (``adj`` of every id, empty for the removed), the vertices put
    in the cover, and the folds and funnels to undo in reverse order: ``("fold", v, a, b, w)``,
    ``("funnel", v, y, W)``."""

    n: int
    adj: list[set[int]]
    alive: list[bool]
    taken: list[int] = field(default_factory=list)
    undo: list[tuple] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def offset(self) -> int:
        """What the removed part adds to a cover of the graph left."""
        return len(self.taken) + len(self.undo)

    def vertices(self) -> list[int]:
        return [v for v in range(len(self.adj)) if self.alive[v] and self.adj[v]]

    def lift(self, cover) -> set[int]:
        """A cover of the input graph from a cover of the graph left."""
        out = set(int(v) for v in cover) | set(self.taken)
        for step in reversed(self.undo):
            if step[0] == "fold":
                _, v, a, b, w = step
                if w in out:
                    out.discard(w)
                    out.update((a, b))
                else:
                    out.add(v)
            else:
                _, v, y, ww = step
                out.add(y if all(x in out for x in ww) else v)
        return out

    def components(self) -> list[list[int]]:
        seen: set[int] = set()
        comps = []
        for s in self.vertices():
            if s in seen:
                continue
            seen.add(s)
            comp = [s]
            todo = [s]
            while todo:
                x = todo.pop()
                for y in self.adj[x]:
                    if y not in seen:
                        seen.add(y)
                        comp.append(y)
                        todo.append(y)
            comps.append(sorted(comp))
        return comps


def reduce_graph(n: int, edges: np.ndarray, rules=DEFAULT_RULES) -> Reduced:
    """Apply ``rules`` to the graph of ``n`` vertices and ``edges`` until none applies."""
    adj: list[set[int]] = [set() for _ in range(n)]
    for u, v in np.asarray(edges, dtype=np.int64).reshape(-1, 2).tolist():
        adj[u].add(v)
        adj[v].add(u)
    red = Reduced(n, adj, [True] * n, counts={r: 0 for r in RULES if r != "components"})
    rules = set(rules)
    queue = deque(range(n))
    queued = [True] * n

    def push(x: int) -> None:
        if x >= len(queued):
            queued.extend([False] * (x + 1 - len(queued)))
        if not queued[x]:
            queued[x] = True
            queue.append(x)

    def remove(x: int) -> None:
        for y in adj[x]:
            adj[y].discard(x)
            push(y)
        adj[x] = set()
        red.alive[x] = False

    def take(x: int, rule: str) -> None:
        red.taken.append(x)
        red.counts[rule] += 1
        remove(x)

    while True:
        while queue:
            v = queue.popleft()
            queued[v] = False
            if not red.alive[v]:
                continue
            d = len(adj[v])
            if d == 0:
                red.alive[v] = False
                continue
            if d == 1 and "degree1" in rules:
                take(next(iter(adj[v])), "degree1")
                continue
            if d == 2 and "fold" in rules:
                a, b = sorted(adj[v])
                if b in adj[a]:
                    take(a, "fold")
                    take(b, "fold")
                    continue
                w = len(adj)
                nb = (adj[a] | adj[b]) - {v}
                for x in (v, a, b):
                    remove(x)
                adj.append(set(nb))
                red.alive.append(True)
                for y in nb:
                    adj[y].add(w)
                push(w)
                red.undo.append(("fold", v, a, b, w))
                red.counts["fold"] += 1
                continue
            if "domination" in rules:
                closed = adj[v]
                dominated = False
                for u in sorted(closed):
                    if len(adj[u]) >= d and all(x == u or x in adj[u] for x in closed):
                        take(u, "domination")
                        dominated = True
                        break
                if dominated:
                    continue
            if "funnel" in rules and 3 <= d <= FUNNEL_MAX_DEGREE:
                y = _funnel_of(adj, v)
                if y >= 0:
                    ww = sorted(adj[v] - {y})
                    far = sorted(adj[y] - {v})
                    remove(v)
                    remove(y)
                    for u in far:
                        for w in ww:
                            adj[u].add(w)
                            adj[w].add(u)
                        push(u)
                    red.undo.append(("funnel", v, y, tuple(ww)))
                    red.counts["funnel"] += 1
        if "lp" not in rules:
            break
        ones, zeros = lp_split(adj, red.alive)
        if not ones and not zeros:
            break
        for x in ones:
            if red.alive[x]:
                take(x, "lp")
        for x in zeros:
            if red.alive[x]:
                remove(x)
                red.counts["lp"] += 1
    return red


def _funnel_of(adj: list[set[int]], v: int) -> int:
    """A neighbour y of ``v`` such that v's other neighbours form a clique with no edge to y, or -1."""
    nb = adj[v]
    d = len(nb)
    inner = {u: len(adj[u] & nb) for u in nb}
    if sum(inner.values()) != (d - 1) * (d - 2):   # twice the edges of a clique of d - 1 and a lone vertex
        return -1
    for y in sorted(nb):
        if inner[y] == 0:
            return y
    return -1


def lp_split(adj: list[set[int]], alive: list[bool]) -> tuple[list[int], list[int]]:
    """The vertices at 1 and at 0 of an optimal half-integral LP solution (Nemhauser-Trotter): a maximum
    matching of the bipartite double cover (Hopcroft-Karp), then Konig's cover: left copies not reached by
    alternating paths from unmatched left copies, and right copies reached."""
    verts = [v for v in range(len(adj)) if alive[v] and adj[v]]
    if not verts:
        return [], []
    match_l: dict[int, int] = {}
    match_r: dict[int, int] = {}
    inf = len(verts) + 5
    while True:
        # BFS layers from the free left copies
        dist: dict[int, int] = {}
        q: deque[int] = deque()
        for v in verts:
            if v not in match_l:
                dist[v] = 0
                q.append(v)
        found = False
        while q:
            v = q.popleft()
            for u in adj[v]:
                w = match_r.get(u)
                if w is None:
                    found = True
                elif w not in dist:
                    dist[w] = dist[v] + 1
                    q.append(w)
        if not found:
            break
        # DFS augmentations along the layers (iterative)
        progress = False
        for root in verts:
            if root in match_l:
                continue
            stack = [(root, iter(adj[root]))]
            path: list[tuple[int, int]] = []
            while stack:
                v, it = stack[-1]
                advanced = False
                for u in it:
                    w = match_r.get(u)
                    if w is None:
                        path.append((v, u))
                        for a, b in path:
                            match_l[a] = b
                            match_r[b] = a
                        stack = []
                        progress = True
                        advanced = True
                        break
                    if dist.get(w, inf) == dist[v] + 1:
                        path.append((v, u))
                        stack.append((w, iter(adj[w])))
                        advanced = True
                        break
                if not advanced:
                    stack.pop()
                    dist[v] = inf
                    if path:
                        path.pop()
        if not progress:
            break
    # Konig: Z = reached from free left copies by alternating paths (left -> right by any edge, right ->
    # left by the matching)
    zl: set[int] = set(v for v in verts if v not in match_l)
    zr: set[int] = set()
    q = deque(zl)
    while q:
        v = q.popleft()
        for u in adj[v]:
            if u not in zr:
                zr.add(u)
                w = match_r.get(u)
                if w is not None and w not in zl:
                    zl.add(w)
                    q.append(w)
    ones, zeros = [], []
    for v in verts:
        x = (v not in zl) + (v in zr)
        if x == 2:
            ones.append(v)
        elif x == 0:
            zeros.append(v)
    return ones, zeros
