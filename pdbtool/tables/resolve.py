"""Small helpers that turn user-level choices (partition name, pattern list, board, goal) into objects."""

from __future__ import annotations

from ..puzzle.board import Board
from ..errors import PdbtoolError
from .partitions import load_partition
from .ranking import TilePattern, parse_tiles


def resolve_board(board_dims: str | None, goal: str | None, default: Board | None = None) -> Board | None:
    if board_dims is None:
        if goal is not None and default is not None:
            return Board.parse(default.dims, goal)
        return default
    return Board.parse(board_dims, goal)


def resolve_patterns(partition: str | None, pattern: str | None, board_dims: str | None,
                     goal: str | None) -> list[TilePattern]:
    """The patterns named by ``--partition`` or ``--pattern`` (exactly one of them)."""
    if (partition is None) == (pattern is None):
        raise PdbtoolError("give exactly one of --partition NAME|FILE and --pattern LIST")
    if partition is not None:
        board = resolve_board(board_dims, goal) if board_dims else None
        part = load_partition(partition, board)
        if goal is not None and board is None:
            wanted = Board.parse(part.board.dims, goal)
            if wanted != part.board:
                raise PdbtoolError(f"partition {part.name} is for goal {part.board.goal_name}, not {goal}")
        return list(part.patterns)
    if board_dims is None:
        raise PdbtoolError("--pattern needs --board WxH")
    board = Board.parse(board_dims, goal)
    return [TilePattern(board, parse_tiles(pattern))]
