"""Named partitions and partition files.

A partition file is plain text: ``board WxH``, ``goal korf|blank-last|<the goal's tiles cell by cell>``,
then one pattern a line (tiles separated by spaces or commas); ``#`` starts a comment.  The built-in
partitions are such files in ``partitions/``, to copy and edit.
"""

from __future__ import annotations

import importlib.resources
from dataclasses import dataclass
from pathlib import Path

from ..puzzle.board import Board, BoardError, goal_from_spec, parse_dims
from ..errors import PdbtoolError
from .ranking import PatternError, TilePattern, check_disjoint, parse_tiles

# the data package pdbtool.partitions: the top-level partitions/ of the source tree (pyproject.toml)
PARTITIONS_DIR = Path(importlib.resources.files("pdbtool.partitions"))
DEFAULTS = {(3, 3): "8-4-4", (4, 4): "15-7-8", (5, 5): "24-6-6-6-6"}


class PartitionError(PdbtoolError):
    pass


@dataclass(frozen=True)
class Partition:
    name: str
    board: Board
    patterns: tuple[TilePattern, ...]

    @property
    def tiles(self) -> tuple[int, ...]:
        return tuple(sorted(t for p in self.patterns for t in p.tiles))


def builtin_names() -> list[str]:
    return sorted(p.stem for p in PARTITIONS_DIR.glob("*.txt"))


def default_partition_name(board: Board) -> str | None:
    """The default partition of a board: 15-7-8 on 4x4, 24-6-6-6-6 on 5x5 (Korf's goal only)."""
    if board.goal_name != "korf":
        return None
    return DEFAULTS.get((board.width, board.height))


def load_partition(spec: str, board: Board | None = None) -> Partition:
    """A partition by built-in name or file path; ``board`` (if given) must match the file's board.

    A file may omit ``goal`` (then the given board's goal, or Korf's, is used).
    """
    path = Path(spec)
    if spec in builtin_names():
        path = PARTITIONS_DIR / f"{spec}.txt"
    elif not path.is_file():
        names = ", ".join(builtin_names())
        raise PartitionError(f"unknown partition {spec!r}: not a file, nor one of {names}")
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise PartitionError(f"{path}: cannot read partition file ({exc})") from None
    return parse_partition(text, path.stem if spec not in builtin_names() else spec, str(path), board)


def parse_partition(text: str, name: str, source: str = "<partition>", board: Board | None = None) -> Partition:
    dims = None
    goal_spec = None
    rows: list[tuple[int, tuple[int, ...]]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, _, rest = line.partition(" ")
        try:
            if key.lower() == "board":
                dims = parse_dims(rest.strip())
            elif key.lower() == "goal":
                goal_spec = rest.strip()
            else:
                rows.append((number, parse_tiles(line)))
        except (BoardError, PatternError) as exc:
            raise PartitionError(f"{source}:{number}: {exc}") from None
    if dims is None:
        if board is None:
            raise PartitionError(f"{source}: no 'board WxH' line")
        dims = (board.width, board.height)
    if not rows:
        raise PartitionError(f"{source}: no patterns")
    try:
        n = dims[0] * dims[1]
        if goal_spec is not None:
            file_board = Board(dims[0], dims[1], goal_from_spec(goal_spec, n))
        elif board is not None and (board.width, board.height) == dims:
            file_board = board
        else:
            file_board = Board(dims[0], dims[1])
    except BoardError as exc:
        raise PartitionError(f"{source}: {exc}") from None
    if board is not None and board != file_board:
        raise PartitionError(f"{source}: partition for {file_board.dims} goal {file_board.goal_name}, "
                             f"but the board is {board.dims} goal {board.goal_name}")
    patterns = []
    for number, tiles in rows:
        try:
            patterns.append(TilePattern(file_board, tiles))
        except PatternError as exc:
            raise PartitionError(f"{source}:{number}: {exc}") from None
    try:
        check_disjoint(patterns)
    except PatternError as exc:
        raise PartitionError(f"{source}: {exc}") from None
    return Partition(name, file_board, tuple(patterns))
