"""The file a plan writes: a partition file (one partition) or a catalogue file (several), in the formats
of :mod:`pdbtool.tables.partitions`, with the plan's figures and the commands that build and use it as
comment lines; and the parsing of the budgets' sizes and durations."""

from __future__ import annotations

import re

from ..puzzle.board import Board
from .space import Candidate, PlanError

_SIZE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 10**3, "kib": 1 << 10, "m": 1 << 20, "mb": 10**6, "mib": 1 << 20,
               "g": 1 << 30, "gb": 10**9, "gib": 1 << 30, "t": 1 << 40, "tb": 10**12, "tib": 1 << 40}
_TIME_UNITS = {"": 1, "s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}


def parse_size(text: str) -> int:
    """Bytes of ``8G``, ``512MiB``, ``1.5GB``, ``1000000`` (K, M, G, T alone are powers of 1024)."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([a-zA-Z]*)\s*", text or "")
    unit = m.group(2).lower() if m else ""
    if m is None or unit not in _SIZE_UNITS:
        raise PlanError(f"memory {text!r}: give a size such as 8G, 512M or 2GiB")
    value = int(float(m.group(1)) * _SIZE_UNITS[unit])
    if value < 1:
        raise PlanError(f"memory {text!r}: give more than 0 bytes")
    return value


def parse_duration(text: str) -> float:
    """Seconds of ``90``, ``90s``, ``30m``, ``2h``, ``1.5d``."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([a-zA-Z]*)\s*", text or "")
    unit = m.group(2).lower() if m else ""
    if m is None or unit not in _TIME_UNITS:
        raise PlanError(f"duration {text!r}: give seconds or a number with s, m, h or d (90, 30m, 2h)")
    value = float(m.group(1)) * _TIME_UNITS[unit]
    if value <= 0:
        raise PlanError(f"duration {text!r}: give more than 0")
    return value


def goal_spec(board: Board) -> str:
    return board.goal_name


def plan_text(board: Board, cand: Candidate, comments: list[str]) -> str:
    """The partition or catalogue file of ``cand`` (groups largest first, as the built-ins list them)."""
    lines = [f"# {c}" if c else "#" for c in comments]
    lines += [f"board {board.width}x{board.height}", f"goal {goal_spec(board)}"]

    def groups(member):
        return [" ".join(str(t) for t in g) for g in sorted(member, key=lambda g: (-len(g), g))]

    if len(cand.members) == 1:
        lines += groups(cand.members[0])
    else:
        for member in cand.members:
            lines.append("partition")
            lines += groups(member)
    return "\n".join(lines) + "\n"


__all__ = ["parse_size", "parse_duration", "plan_text"]
