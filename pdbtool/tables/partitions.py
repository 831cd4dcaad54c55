"""Named partitions, catalogues and their files.

A partition file is plain text: ``board WxH``, ``goal korf|blank-last|<the goal's tiles cell by cell>``,
then one pattern a line (tiles separated by spaces or commas); ``#`` starts a comment.  The built-in
partitions are such files in ``partitions/``, to copy and edit.

A catalogue file (the max over several partitions, each an additive sum) has the same ``board`` and
``goal`` lines, then one section per partition, opened by a ``partition`` line: either ``partition`` alone,
followed by that partition's patterns one a line, or ``partition NAME|FILE`` naming a built-in partition or
a partition file (a relative path is taken from the catalogue's folder).  A file with a ``partition`` line
is a catalogue; the names of both kinds share one namespace (``pdbtool build --partition NAME``).
"""

from __future__ import annotations

import importlib.resources
from dataclasses import dataclass
from pathlib import Path

from ..puzzle.board import Board, BoardError, goal_from_spec, parse_dims
from ..errors import PdbtoolError
from .ranking import PatternError, TilePattern, check_disjoint, parse_tiles

# the data package pdbtool.partitions: the top-level partitions/ of the source tree (pyproject.toml)
PARTITIONS_DIR = Path(importlib.resources.files("pdbtool.partitions"))  # type: ignore[arg-type]
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


@dataclass(frozen=True)
class Catalogue:
    """The max over several partitions of one board.  ``patterns`` lists each distinct pattern once (the
    tables to build); the search reads each partition's patterns from them."""

    name: str
    board: Board
    partitions: tuple[Partition, ...]

    @property
    def patterns(self) -> tuple[TilePattern, ...]:
        seen: dict[tuple[int, ...], TilePattern] = {}
        for part in self.partitions:
            for p in part.patterns:
                seen.setdefault(p.tiles, p)
        return tuple(seen.values())


def builtin_names() -> list[str]:
    return sorted(p.stem for p in PARTITIONS_DIR.glob("*.txt"))


def default_partition_name(board: Board) -> str | None:
    """The default partition of a board: 15-7-8 on 4x4, 24-6-6-6-6 on 5x5 (Korf's goal only)."""
    if board.goal_name != "korf":
        return None
    return DEFAULTS.get((board.width, board.height))


def load_partition(spec: str, board: Board | None = None, catalogue: bool = True) -> Partition | Catalogue:
    """A partition or catalogue by built-in name or file path; ``board`` (if given) must match the file's
    board.  With ``catalogue`` false a catalogue is refused before it is parsed (a catalogue's sections may
    name partitions, not catalogues, so a file naming itself stops there).

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
    name = path.stem if spec not in builtin_names() else spec
    if is_catalogue_text(text):
        if not catalogue:
            raise PartitionError(f"{spec} is a catalogue, not a partition")
        return parse_catalogue(text, name, str(path), board, path.parent)
    return parse_partition(text, name, str(path), board)


def _keyword(raw: str) -> tuple[str, str]:
    line = raw.split("#", 1)[0].strip()
    key, _, rest = line.partition(" ")
    return key.lower(), rest.strip()


def is_catalogue_text(text: str) -> bool:
    return any(_keyword(raw)[0] == "partition" for raw in text.splitlines())


def parse_catalogue(text: str, name: str, source: str = "<catalogue>", board: Board | None = None,
                    folder: Path | None = None) -> Catalogue:
    """A catalogue file's partitions (see the module docstring), each checked like a partition file."""
    head: list[str] = []
    sections: list[tuple[int, str, list[str]]] = []  # (line number, the partition line's argument, its lines)
    for number, raw in enumerate(text.splitlines(), 1):
        key, rest = _keyword(raw)
        if key == "partition":
            sections.append((number, rest, []))
        elif not sections:
            head.append(raw)
        elif key:
            sections[-1][2].append(raw)
    dims, goal_spec = None, None
    for number, raw in enumerate(head, 1):
        key, rest = _keyword(raw)
        try:
            if key == "board":
                dims = parse_dims(rest)
            elif key == "goal":
                goal_spec = rest
            elif key:
                raise PartitionError(f"{source}:{number}: patterns before the first 'partition' line")
        except BoardError as exc:
            raise PartitionError(f"{source}:{number}: {exc}") from None
    file_board = _file_board(dims, goal_spec, board, source) if dims is not None else board
    parts = []  # type: ignore[var-annotated]
    for number, ref, lines in sections:
        where = f"{source}:{number}"
        if ref and lines:
            raise PartitionError(f"{where}: 'partition {ref}' names a partition, so no patterns may follow it")
        if ref:
            spec = ref
            if ref not in builtin_names() and folder is not None and not Path(ref).is_absolute():
                spec = str(folder / ref)
            try:
                part = load_partition(spec, file_board, catalogue=False)
            except PartitionError as exc:
                raise PartitionError(f"{where}: {exc}") from None
        else:
            if not lines:
                raise PartitionError(f"{where}: a partition without patterns")
            if file_board is None:
                raise PartitionError(f"{source}: no 'board WxH' line")
            part = parse_partition("\n".join(lines), f"{name}[{len(parts)}]", where, file_board)
        if file_board is None:
            file_board = part.board
        elif part.board != file_board:
            raise PartitionError(f"{where}: partition for {part.board.dims} goal {part.board.goal_name}, but the "
                                 f"catalogue is for {file_board.dims} goal {file_board.goal_name}")
        parts.append(part)
    if not parts:
        raise PartitionError(f"{source}: no partitions")
    return Catalogue(name, file_board, tuple(parts))  # type: ignore[arg-type]


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
    file_board = _file_board(dims, goal_spec, board, source)
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


def _file_board(dims: tuple[int, int], goal_spec: str | None, board: Board | None, source: str) -> Board:
    """The board a file's ``board`` and ``goal`` lines name (the given board's goal, or Korf's, when the file
    has no ``goal``); refused unless it is ``board`` (if given)."""
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
    return file_board
