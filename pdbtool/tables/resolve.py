"""The one partition resolver: what a user or a caller names as a partition, turned into a ``Partition``.

The solver and every command resolve partitions here, so that a name, a file, a list of patterns and the
command line's ``--partition`` / ``--pattern`` / ``--board`` / ``--goal`` follow the same rules.
"""

from __future__ import annotations

from ..puzzle.board import Board
from .partitions import Catalogue, Partition, PartitionError, default_partition_name, load_partition
from .ranking import PatternError, TilePattern, check_disjoint, parse_tiles


def resolve_partition(partition=None, board: Board | None = None,
                      goal: str | None = None) -> Partition | Catalogue:
    """The partition (or catalogue of partitions) meant by ``partition``:

    * None: the board's default partition (15-7-8 on 4x4, 24-6-6-6-6 on 5x5, Korf's goal);
    * a built-in name or a partition or catalogue file path;
    * a ``Partition`` or ``Catalogue``;
    * a sequence of ``TilePattern`` or of tile lists (on ``board``), which must be disjoint.

    ``board``, if given, is the board the partition must be for.  ``goal`` (a goal spec, used when no
    board is given) is the goal the partition must have.
    """
    if partition is None:
        if board is None:
            raise PartitionError("a board is needed")
        name = default_partition_name(board)
        if name is None:
            raise PartitionError(f"no default partition for {board.dims} goal {board.goal_name}: "
                                 f"give --partition NAME|FILE or --heuristic manhattan")
        partition = name
    if isinstance(partition, str):
        part = load_partition(partition, board)
    elif isinstance(partition, (Partition, Catalogue)):
        part = partition
        if board is not None and part.board != board:
            raise PartitionError(f"partition {part.name} is for {part.board.dims} goal {part.board.goal_name}, "
                                 f"not {board.dims} goal {board.goal_name}")
    else:
        part = _from_patterns(list(partition), board)
    if goal is not None and board is None and Board.parse(part.board.dims, goal) != part.board:
        raise PartitionError(f"partition {part.name} is for goal {part.board.goal_name}, not {goal}")
    return part


def _from_patterns(patterns: list, board: Board | None) -> Partition:
    if not patterns:
        raise PartitionError("empty partition")
    if not isinstance(patterns[0], TilePattern):
        if board is None:
            raise PartitionError("a board is needed for a partition given as tile lists")
        try:
            patterns = [TilePattern(board, tuple(p)) for p in patterns]
        except PatternError as exc:
            raise PartitionError(str(exc)) from None
    pboard = patterns[0].board
    if board is not None and pboard != board:
        raise PartitionError(f"patterns for {pboard.dims} goal {pboard.goal_name}, "
                             f"not {board.dims} goal {board.goal_name}")
    try:
        check_disjoint(patterns)
    except PatternError as exc:
        raise PartitionError(str(exc)) from None
    name = "-".join([str(pboard.n - 1)] + [str(p.k) for p in patterns])
    return Partition(name, pboard, tuple(patterns))


def partition_from_options(partition: str | None, pattern: str | None, board_dims: str | None,
                           goal: str | None) -> Partition | Catalogue:
    """The partition named on the command line by ``--partition`` or ``--pattern`` (exactly one of them),
    with ``--board`` and ``--goal``."""
    if (partition is None) == (pattern is None):
        raise PartitionError("give exactly one of --partition NAME|FILE and --pattern LIST")
    if partition is not None:
        board = Board.parse(board_dims, goal) if board_dims else None
        return resolve_partition(partition, board, goal)
    if board_dims is None:
        raise PartitionError("--pattern needs --board WxH")
    return resolve_partition([parse_tiles(pattern)], Board.parse(board_dims, goal))
