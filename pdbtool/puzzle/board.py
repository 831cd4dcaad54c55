"""Boards of W x H cells: cells, neighbours, goals, parsing, solvability, the diagonal reflection.

Cell ``r * W + c`` is row r, column c.  Tile 0 is the blank.  A goal is a permutation: ``goal[t]`` is the
cell of tile t.  Korf's goal puts the blank in cell 0 and tile t in cell t.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from collections.abc import Sequence

import numpy as np

from ..errors import PdbtoolError

MAX_CELLS = 64
_DIM_RE = re.compile(r"[0-9]{1,4}")  # ASCII digits only: "³" passes str.isdigit() but not int()

# Move order used everywhere (BFS children, IDA* children): the blank goes up, left, right, down.
UP, LEFT, RIGHT, DOWN = 0, 1, 2, 3


class BoardError(PdbtoolError, ValueError):
    """A board, goal or state that cannot be used; the message is one line meant for the user."""


def parse_dims(text: str) -> tuple[int, int]:
    """Parse ``'4x4'`` (W x H) into (W, H)."""
    parts = text.lower().replace("\u00d7", "x").split("x")
    if len(parts) != 2 or not all(_DIM_RE.fullmatch(p.strip()) for p in parts):
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise BoardError(f"board {shown!r} is not of the form WxH (for example 4x4)")
    width, height = int(parts[0]), int(parts[1])
    check_dims(width, height)
    return width, height


def check_dims(width: int, height: int) -> None:
    if width < 2 or height < 2:
        raise BoardError(f"board {width}x{height}: both sides must be at least 2")
    if width * height > MAX_CELLS:
        raise BoardError(f"board {width}x{height} has {width * height} cells; at most {MAX_CELLS} are supported")


@dataclass(frozen=True)
class Board:
    """A W x H board with a goal permutation (``goal[t]`` = goal cell of tile t, tile 0 the blank)."""

    width: int
    height: int
    goal: tuple[int, ...] = field(default=())

    def __post_init__(self):
        check_dims(self.width, self.height)
        n = self.width * self.height
        if not self.goal:
            object.__setattr__(self, "goal", tuple(range(n)))
        goal = tuple(int(c) for c in self.goal)
        if sorted(goal) != list(range(n)):
            raise BoardError(f"goal is not a permutation of the {n} cells of a {self.width}x{self.height} board")
        object.__setattr__(self, "goal", goal)

    # --- construction -------------------------------------------------------------------------------
    @classmethod
    def parse(cls, dims: str, goal: str | Sequence[int] | None = None) -> Board:
        """Board from ``'WxH'`` and a goal: None/'korf', 'blank-last', or the tiles of the goal, cell by cell."""
        width, height = parse_dims(dims)
        return cls(width, height, goal_from_spec(goal, width * height))

    # --- basic facts ----------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return self.width * self.height

    @property
    def dims(self) -> str:
        return f"{self.width}x{self.height}"

    @property
    def goal_name(self) -> str:
        """'korf', 'blank-last' or the goal as tiles cell by cell."""
        if self.goal == tuple(range(self.n)):
            return "korf"
        if self.goal == blank_last_goal(self.n):
            return "blank-last"
        return " ".join(str(t) for t in self.goal_tiles)

    @property
    def goal_tiles(self) -> tuple[int, ...]:
        """The goal as a state: the tile in each cell."""
        tiles = [0] * self.n
        for t, c in enumerate(self.goal):
            tiles[c] = t
        return tuple(tiles)

    def neighbours(self) -> np.ndarray:
        """``nb[c, m]`` = the cell reached from c by move m (up, left, right, down), or -1 off the board."""
        w, h = self.width, self.height
        nb = np.full((self.n, 4), -1, dtype=np.int64)
        for c in range(self.n):
            r, col = divmod(c, w)
            if r > 0:
                nb[c, UP] = c - w
            if col > 0:
                nb[c, LEFT] = c - 1
            if col < w - 1:
                nb[c, RIGHT] = c + 1
            if r < h - 1:
                nb[c, DOWN] = c + w
        return nb

    def manhattan_table(self) -> np.ndarray:
        """``md[t, c]`` = Manhattan distance of tile t standing in cell c from its goal cell (0 for the blank)."""
        md = np.zeros((self.n, self.n), dtype=np.int64)
        for t in range(1, self.n):
            gr, gc = divmod(self.goal[t], self.width)
            for c in range(self.n):
                r, col = divmod(c, self.width)
                md[t, c] = abs(r - gr) + abs(col - gc)
        return md

    # --- states ------------------------------------------------------------------------------------------
    def check_state(self, tiles: Sequence[int]) -> tuple[int, ...]:
        """Validate a state (the tile in each cell) and return it as a tuple; raise BoardError otherwise."""
        n = self.n
        if len(tiles) != n:
            raise BoardError(f"expected {n} numbers for a {self.dims} board, got {len(tiles)}")
        seen = [False] * n
        for t in tiles:
            if not 0 <= t < n:
                raise BoardError(f"tile {t} is out of range 0..{n - 1}")
            if seen[t]:
                raise BoardError(f"tile {t} appears twice")
            seen[t] = True
        if not self.is_solvable(tiles):
            raise BoardError("unsolvable: the permutation has the wrong parity for this goal")
        return tuple(int(t) for t in tiles)

    def is_solvable(self, tiles: Sequence[int]) -> bool:
        """Parity rule: a state is reachable iff the permutation parity equals the blank's row/col distance parity.

        Every move swaps the blank with a tile (one transposition of the cell->tile map) and moves the blank
        one step, so parity(permutation relative to goal) == parity(Manhattan distance of the blank). This
        covers odd and even widths alike.
        """
        n = self.n
        # permutation sigma: cell -> cell where the tile in cell c should go
        sigma = [self.goal[tiles[c]] for c in range(n)]
        visited = [False] * n
        transpositions = 0
        for c in range(n):
            if not visited[c]:
                length = 0
                j = c
                while not visited[j]:
                    visited[j] = True
                    j = sigma[j]
                    length += 1
                transpositions += length - 1
        blank = list(tiles).index(0)
        br, bc = divmod(blank, self.width)
        gr, gc = divmod(self.goal[0], self.width)
        return (transpositions % 2) == ((abs(br - gr) + abs(bc - gc)) % 2)

    # --- the reflection about the main diagonal ---------------------------------------------------------
    def reflection_valid(self) -> bool:
        """The transpose maps the goal to itself (renaming tiles) iff the board is square and the blank's goal
        cell lies on the main diagonal."""
        if self.width != self.height:
            return False
        r, c = divmod(self.goal[0], self.width)
        return r == c

    def reflect_cell(self) -> np.ndarray:
        """``T[c]`` = the transposed cell of c (square boards only)."""
        w = self.width
        return np.array([(c % w) * w + c // w for c in range(self.n)], dtype=np.int64)

    def reflect_tile(self) -> np.ndarray:
        """``R[t]`` = the tile whose goal cell is the transpose of t's goal cell (an involution)."""
        cell = self.reflect_cell()
        tile_at = self.goal_tiles
        return np.array([tile_at[cell[self.goal[t]]] for t in range(self.n)], dtype=np.int64)


def blank_last_goal(n: int) -> tuple[int, ...]:
    """Goal 1 2 ... n-1 0: tile t in cell t-1, the blank in the last cell."""
    return tuple([n - 1] + list(range(n - 1)))


def _shown(spec) -> str:
    """A goal as given, for a message: cut short (it may be as long as a file's line)."""
    text = spec if isinstance(spec, str) else " ".join(str(t) if abs(t) < 10**9 else "<huge>" for t in spec)
    return repr(text if len(text) <= 60 else text[:60] + "...")


def goal_from_spec(spec, n: int) -> tuple[int, ...]:
    """A goal from 'korf' / 'blank-last' / the goal state's tiles cell by cell (string or sequence)."""
    if spec is None:
        return tuple(range(n))
    if isinstance(spec, str):
        text = spec.strip().lower()
        if text in ("", "korf", "blank-first"):
            return tuple(range(n))
        if text == "blank-last":
            return blank_last_goal(n)
        words = text.replace(",", " ").split()
        if not all(_DIM_RE.fullmatch(w) for w in words):  # small whole numbers only (a tile is below 32)
            raise BoardError(f"goal {_shown(spec)}: expected 'korf', 'blank-last' or {n} numbers")
        tiles = [int(x) for x in words]
    else:
        tiles = [int(x) for x in spec]
    if len(tiles) != n or sorted(tiles) != list(range(n)):
        raise BoardError(f"goal {_shown(spec)} is not a permutation of 0..{n - 1}")
    goal = [0] * n
    for c, t in enumerate(tiles):
        goal[t] = c
    return tuple(goal)
