"""Exact oracles for tests: a plain breadth-first search over the real puzzle (small boards only)."""

from __future__ import annotations

import heapq
from collections import deque
from functools import cache

from pdbtool.puzzle.board import Board


@cache
def true_distances(width: int, height: int, goal: tuple[int, ...] | None = None) -> dict[tuple[int, ...], int]:
    """Distance to the goal of every reachable state (the tile in each cell), by plain BFS."""
    board = Board(width, height, goal or ())
    nb = board.neighbours().tolist()
    start = board.goal_tiles
    dist = {start: 0}
    queue = deque([(start, start.index(0))])
    while queue:
        state, blank = queue.popleft()
        d = dist[state] + 1
        for q in nb[blank]:
            if q < 0:
                continue
            s = list(state)
            s[blank], s[q] = s[q], 0
            t = tuple(s)
            if t not in dist:
                dist[t] = d
                queue.append((t, q))
    return dist


def abstract_distances(board: Board, tiles: tuple[int, ...], blank_rule: str) -> dict[tuple[int, ...], int]:
    """Distance of every placement of a pattern in its abstraction, by a plain search written independently
    of the builders: 0-1 BFS over (placement, blank cell) for the blank minimized (blank moves through
    non-pattern cells cost 0, the least over blank cells is kept), plain BFS over placements for the blank
    ignored."""
    nb = [[q for q in row if q >= 0] for row in board.neighbours().tolist()]
    start = tuple(board.goal[t] for t in sorted(tiles))
    best: dict[tuple[int, ...], int] = {}
    if blank_rule == "ignored":
        best[start] = 0
        queue = deque([start])
        while queue:
            cells = queue.popleft()
            d = best[cells] + 1
            occupied = set(cells)
            for i, c in enumerate(cells):
                for q in nb[c]:
                    if q not in occupied:
                        child = cells[:i] + (q,) + cells[i + 1:]
                        if child not in best:
                            best[child] = d
                            queue.append(child)
        return best
    dist = {(start, board.goal[0]): 0}
    queue = deque([(start, board.goal[0])])
    while queue:
        state = queue.popleft()
        cells, blank = state
        d = dist[state]
        if best.get(cells, 1 << 30) > d:
            best[cells] = d
        for q in nb[blank]:
            if q in cells:
                i = cells.index(q)
                child, cost = (cells[:i] + (blank,) + cells[i + 1:], q), 1
            else:
                child, cost = (cells, q), 0
            if dist.get(child, 1 << 30) > d + cost:
                dist[child] = d + cost
                if cost:
                    queue.append(child)
                else:
                    queue.appendleft(child)
    return best


def tile_blank_distances(board: Board, tiles: tuple[int, ...], goal_blanks) -> dict:
    """{(cells of the tiles, blank cell): least number of moves of the tiles to their home cells with the
    blank in one of ``goal_blanks``}, by a plain Dijkstra over the tiles and the blank (a blank step
    through the other cells is free)."""
    home = tuple(board.goal_tiles.index(t) for t in tiles)
    nb = board.neighbours()
    dist = {(home, b): 0 for b in goal_blanks}
    heap = [(0, home, b) for b in goal_blanks]
    while heap:
        d, cells, b = heapq.heappop(heap)
        if dist[cells, b] < d:
            continue
        for q in (int(x) for x in nb[b] if x >= 0):
            moved = tuple(b if c == q else c for c in cells)
            nd = d + (moved != cells)
            if nd < dist.get((moved, q), 1 << 30):
                dist[moved, q] = nd
                heapq.heappush(heap, (nd, moved, q))
    return dist


def reference_ida(board: Board, h, state):
    """A plain recursive IDA* that evaluates h from scratch at every node, counting as the kernels do.

    Returns (length, generated, expanded)."""
    nb = board.neighbours()
    goal = tuple(board.goal_tiles)
    counts = [0, 0]
    bound = h(state)
    if tuple(state) == goal:
        return 0, 0, 0

    def dfs(s, blank, g, prev, bound):
        counts[1] += 1
        best = None
        for m in range(4):
            q = nb[blank, m]
            if q < 0 or m + prev == 3:
                continue
            counts[0] += 1
            t = list(s)
            t[blank], t[q] = t[q], 0
            t = tuple(t)
            hc = h(t)
            f = g + 1 + hc
            if f > bound:
                best = f if best is None else min(best, f)
                continue
            if hc == 0 and t == goal:
                return True, None
            found, nxt = dfs(t, q, g + 1, m, bound)
            if found:
                return True, None
            if nxt is not None:
                best = nxt if best is None else min(best, nxt)
        return False, best

    while True:
        found, nxt = dfs(tuple(state), list(state).index(0), 0, -1, bound)
        if found:
            return bound, counts[0], counts[1]
        bound = nxt
