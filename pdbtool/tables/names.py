"""The cache's names of table files, derived from a table's identity."""

from __future__ import annotations

import xxhash

from .ranking import TilePattern


def goal_slug(pattern: TilePattern) -> str:
    name = pattern.board.goal_name
    if name in ("korf", "blank-last"):
        return name
    return "goal" + xxhash.xxh64(",".join(map(str, pattern.board.goal)).encode()).hexdigest()[:12]


def table_name(pattern: TilePattern, blank: str, encoding: str = "byte", params: dict | None = None) -> str:
    enc = encoding + "".join(f"-{k}{v}" for k, v in sorted((params or {}).items()))
    tiles = ".".join(str(t) for t in pattern.tiles)
    return f"{pattern.board.dims}-{goal_slug(pattern)}-t{tiles}-{blank}-{enc}.pdb"
