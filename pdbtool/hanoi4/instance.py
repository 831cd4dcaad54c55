"""Instances of the four-peg Towers of Hanoi: a placement of n disks and a goal (a peg, or a placement).

A placement lists each disk's peg (0 to 3), the smallest disk first; the order of the disks on a peg is
implied (larger below), so every list is a legal state.  Instance files hold one instance a line::

    # id: pegs of disks 1..n (smallest first) -> goal peg, or goal pegs of disks 1..n
    standard10: 0000000000 -> 3
    mixed: 0 1 2 3 0 1 -> 0 0 0 0 0 3

The id and its colon are optional; the pegs are digits, with or without spaces; '#' starts a comment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import PdbtoolError

PEGS = 4
MAX_DISKS = 32  # two bits a disk in a 64-bit word


class InstanceError(PdbtoolError):
    """An instance that cannot be read or is not a legal problem."""


def pack(pegs) -> int:
    """The state word of a placement (two bits a disk, the smallest disk lowest)."""
    s = 0
    for d, p in enumerate(pegs):
        s |= int(p) << (2 * d)
    return s


def unpack(state: int, n: int) -> tuple[int, ...]:
    return tuple((int(state) >> (2 * d)) & 3 for d in range(n))


def relabel(state: int, n: int, perm) -> int:
    """The state with peg p renamed perm[p] for every disk."""
    return pack(perm[p] for p in unpack(state, n))


@dataclass(frozen=True)
class Instance:
    """A start placement and a goal: ``goal_peg`` (every disk on it) or ``goal_pegs`` (a placement)."""

    pegs: tuple[int, ...]
    goal_peg: int | None = 3
    goal_pegs: tuple[int, ...] | None = None
    name: str = ""

    def __post_init__(self):
        n = len(self.pegs)
        if not 1 <= n <= MAX_DISKS:
            raise InstanceError(f"an instance has 1 to {MAX_DISKS} disks, not {n}")
        if any(p not in range(PEGS) for p in self.pegs):
            raise InstanceError("pegs are 0, 1, 2 or 3")
        if (self.goal_peg is None) == (self.goal_pegs is None):
            raise InstanceError("an instance has a goal peg or a goal placement (one of them)")
        if self.goal_peg is not None and self.goal_peg not in range(PEGS):
            raise InstanceError(f"the goal peg is 0, 1, 2 or 3, not {self.goal_peg}")
        if self.goal_pegs is not None:
            if len(self.goal_pegs) != n:
                raise InstanceError(f"the goal places {len(self.goal_pegs)} disks, the start {n}")
            if any(p not in range(PEGS) for p in self.goal_pegs):
                raise InstanceError("goal pegs are 0, 1, 2 or 3")

    @property
    def disks(self) -> int:
        return len(self.pegs)

    @property
    def start(self) -> int:
        return pack(self.pegs)

    @property
    def goal_placement(self) -> tuple[int, ...]:
        return tuple(self.goal_pegs) if self.goal_pegs is not None else (self.goal_peg,) * self.disks  # type: ignore[return-value]

    @property
    def goal(self) -> int:
        return pack(self.goal_placement)

    @property
    def is_standard(self) -> bool:
        """All disks on one peg, to be moved to another: the middle-state trick applies."""
        return self.goal_peg is not None and len(set(self.pegs)) == 1 and self.pegs[0] != self.goal_peg

    def describe(self) -> str:
        goal = str(self.goal_peg) if self.goal_peg is not None else "".join(map(str, self.goal_pegs))  # type: ignore[arg-type]
        return f"{''.join(map(str, self.pegs))} -> {goal}"


def standard(disks: int, source: int = 0, target: int = 3) -> Instance:
    """The standard problem: every disk from peg ``source`` to peg ``target``."""
    if not 1 <= disks <= MAX_DISKS:
        raise InstanceError(f"--disks is 1 to {MAX_DISKS}, not {disks}")
    return Instance((source,) * disks, goal_peg=target, name=f"standard-{disks}")


_LINE = re.compile(r"^\s*(?:(?P<id>[^:#]+?)\s*:)?\s*(?P<start>[0-9 ]+?)\s*->\s*(?P<goal>[0-9 ]+?)\s*$")


def parse_line(text: str, name: str = "") -> Instance:
    m = _LINE.match(text)
    if not m:
        raise InstanceError(f"expected 'PEGS -> GOAL' (pegs 0-3, the smallest disk first), got {text.strip()!r}")
    start = tuple(int(c) for c in m["start"] if not c.isspace())
    goal = tuple(int(c) for c in m["goal"] if not c.isspace())
    if any(p > 3 for p in start + goal):
        raise InstanceError(f"pegs are 0, 1, 2 or 3: {text.strip()!r}")
    ident = (m["id"] or name).strip()
    if len(goal) == 1 and len(start) != 1:
        return Instance(start, goal_peg=goal[0], name=ident)
    if len(goal) != len(start):
        raise InstanceError(f"the goal places {len(goal)} disks, the start {len(start)}: {text.strip()!r}")
    return Instance(start, goal_peg=None, goal_pegs=goal, name=ident)


def load_instances(path: str | Path, max_disks: int = MAX_DISKS) -> list[Instance]:
    """The instances of a file, with a one-line error naming the file and line of the first bad one."""
    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise InstanceError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        body = line.split("#", 1)[0]
        if not body.strip():
            continue
        try:
            inst = parse_line(body, name=f"{path.name}:{number}")
        except InstanceError as exc:
            raise InstanceError(f"{path}:{number}: {exc}") from None
        if inst.disks > max_disks:
            raise InstanceError(f"{path}:{number}: {inst.disks} disks, at most {max_disks} here")
        out.append(inst)
    if not out:
        raise InstanceError(f"{path}: no instances in the file")
    return out


def apply_moves(inst: Instance, moves) -> tuple[int, ...]:
    """The placement after ``moves`` ((disk, from peg, to peg), disks counted from 0 = the smallest),
    refusing any illegal move: the check of a solution."""
    pegs = list(inst.pegs)
    for i, (disk, a, b) in enumerate(moves):
        if pegs[disk] != a or a == b:
            raise InstanceError(f"move {i + 1}: disk {disk + 1} is not on peg {a}")
        if any(pegs[d] in (a, b) for d in range(disk)):
            raise InstanceError(f"move {i + 1}: disk {disk + 1} is covered or would cover a smaller disk")
        pegs[disk] = b
    return tuple(pegs)
