"""The brute-force search tree of the sliding-tile puzzles, with parent pruning, level by level and by the
blank's cell.

A node of the tree is known, as far as its subtree's shape goes, by its blank's cell and the move that led
to it (the inverse move is not generated).  So the nodes at depth i + 1 with the blank in cell c' after
move m are the nodes at depth i, with the blank in the cell c that m leaves, whose last move was not the
inverse of m: an exact recurrence over (cell, last move), computed with Python's integers (the counts
pass 2**63 within a hundred levels).
"""

from __future__ import annotations

import numpy as np

from ..puzzle.board import Board

NO_MOVE = 4  # the start node: no move led to it


def level_sizes(board: Board, start_cell: int, depth: int) -> list[list[list[int]]]:
    """``sizes[i][c][m]``: the nodes at depth i (0..depth) with the blank in cell c, reached by move m
    (0..3: up, left, right, down; 4: the start node)."""
    if not 0 <= start_cell < board.n:
        raise ValueError(f"cell {start_cell} is not on a {board.dims} board")
    nb = board.neighbours()
    n = board.n
    level = [[0] * 5 for _ in range(n)]
    level[start_cell][NO_MOVE] = 1
    sizes = [level]
    for _ in range(depth):
        nxt = [[0] * 5 for _ in range(n)]
        for c in range(n):
            row = level[c]
            for m in range(4):
                q = int(nb[c, m])
                if q < 0:
                    continue
                # every node at c except those that came by the inverse move (3 - m)
                count = sum(row) - row[3 - m]
                if count:
                    nxt[q][m] += count
        level = nxt
        sizes.append(level)
    return sizes


def branching(board: Board) -> np.ndarray:
    """``b[c, m]``: the children of a node with the blank in cell c reached by move m (m = 4: the start)."""
    nb = board.neighbours()
    b = np.zeros((board.n, 5), dtype=np.int64)
    for c in range(board.n):
        for m in range(5):
            b[c, m] = sum(1 for k in range(4) if nb[c, k] >= 0 and k + m != 3)
    return b


def nodes_per_level(board: Board, start_cell: int, depth: int) -> list[int]:
    """N_i: the nodes at each depth 0..depth of the brute-force tree from a blank in ``start_cell``."""
    return [sum(sum(row) for row in level) for level in level_sizes(board, start_cell, depth)]


__all__ = ["level_sizes", "branching", "nodes_per_level", "NO_MOVE"]
