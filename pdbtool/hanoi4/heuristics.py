"""Heuristics of the four-peg Towers of Hanoi: the infinite-peg bound, static and dynamic additive disk-set
pattern databases, and their max.

A specification is a comma-separated list of components, combined by taking the max:

* ``infinite``: the infinite-peg relaxation (each disk moves once, twice when it must step aside);
* ``static:A-B-...``: disjoint groups of A, B, ... disks (summing to the disks searched), the largest
  disks in the first group, each looked up in the table of its size; the sum is admissible because a
  move moves one disk;
* ``dynamic:A-B``: the max over every split of the disks into a set of A and the rest (B = n - A) of
  the two tables' sum (Felner, Korf & Hanan's dynamic partitioning: C(n, A) splits);
* ``zero``: no heuristic (breadth-first search).

Tables of a goal peg serve any goal peg (the search renames the pegs so that the goal peg is 3); the
search to the middle state uses tables of the goal "every disk on peg 1 or 2"; an instance whose goal is a
placement uses, for each group, the table of that group's goal placement (static groups only).

Tables may be stored compactly (:mod:`.encodings`): byte and nibble tables serve every heuristic; mod3
tables serve static splits only, in a search that carries each group's exact value from parent to child
(:attr:`Plan.carried`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import PdbtoolError
from . import kernels as K
from .tables import MAX_TABLE_DISKS, DiskTable, get_table

MAX_SPLITS = 100_000


class HeuristicError(PdbtoolError):
    """A heuristic specification that does not fit the problem."""


@dataclass(frozen=True)
class Component:
    kind: str  # infinite, static, dynamic, zero
    sizes: tuple[int, ...] = ()

    def __str__(self) -> str:
        return self.kind if not self.sizes else f"{self.kind}:{'-'.join(map(str, self.sizes))}"


def parse_spec(spec: str) -> list[Component]:
    comps = []
    for part in (p.strip() for p in spec.split(",")):
        if part in ("infinite", "infinite-peg", "zero"):
            comps.append(Component("infinite" if part.startswith("infinite") else "zero"))
            continue
        kind, _, sizes = part.partition(":")
        if kind not in ("static", "dynamic") or not sizes:
            raise HeuristicError(f"unknown heuristic {part!r}: use infinite, zero, static:A-B-... or dynamic:A-B "
                                 f"(several joined by commas take the max)")
        try:
            nums = tuple(int(x) for x in sizes.split("-"))
        except ValueError:
            raise HeuristicError(f"heuristic {part!r}: group sizes are numbers, e.g. static:14-2") from None
        if any(x < 1 for x in nums):
            raise HeuristicError(f"heuristic {part!r}: group sizes are at least 1")
        if kind == "dynamic" and len(nums) != 2:
            raise HeuristicError(f"heuristic {part!r}: a dynamic split has two groups, e.g. dynamic:14-2")
        comps.append(Component(kind, nums))
    return comps


@dataclass
class Plan:
    """A heuristic compiled for the kernels: arrays, and the tables (kept alive while it is used)."""

    spec: str
    disks: int
    goal_code: int
    goal_state: int
    bound: int  # 0 none, 1 infinite peg, 2 disks outside pegs 1 and 2
    split_start: np.ndarray
    group_mask: np.ndarray
    group_table: np.ndarray
    tables: list[DiskTable] = field(default_factory=list)
    tabs: np.ndarray = None  # type: ignore[assignment]  # a row per table: kernels.T_ADDR ... T_GOAL

    def args(self):
        return (np.array([self.bound], dtype=np.int64), np.uint64(self.goal_state), self.disks, self.split_start,
                self.group_mask, self.group_table, self.tabs)

    @property
    def carried(self) -> bool:
        """Whether a search must carry the groups' exact values from parent to child (a mod3 table)."""
        return any(t.encoding == "mod3" for t in self.tables)

    def group_values(self, state: int) -> np.ndarray:
        """The exact value of every group of a state (a mod3 table's by EXACT): what a carried search
        starts from."""
        return np.array([int(K.table_value(self.tabs, int(t), K.extract_bits(np.uint64(state), np.uint64(m))))
                         for m, t in zip(self.group_mask, self.group_table)], dtype=np.uint8)

    def __call__(self, pegs) -> int:
        """h of a placement (the smallest disk first)."""
        s = sum(int(p) << (2 * d) for d, p in enumerate(pegs))
        return int(K.heuristic(np.uint64(s), 1 << 30, *self.args()))

    def values(self, states: np.ndarray) -> np.ndarray:
        out = np.empty(states.shape[0], dtype=np.int64)
        K.evaluate(np.ascontiguousarray(states, dtype=np.uint64), 1 << 30, *self.args(), out)
        return out

    @property
    def splits(self) -> int:
        return self.split_start.shape[0] - 1


def _mask(disks) -> int:
    return sum(3 << (2 * d) for d in disks)


def table_sizes(spec: str, disks: int) -> list[int]:
    """The table sizes (disks) a specification needs for a search over ``disks`` disks."""
    sizes = set()  # type: ignore[var-annotated]
    for c in parse_spec(spec):
        _check(c, disks)
        sizes.update(c.sizes)
    return sorted(sizes)


def _check(c: Component, n: int) -> None:
    if c.kind in ("static", "dynamic"):
        if sum(c.sizes) != n:
            raise HeuristicError(f"{c}: the groups hold {sum(c.sizes)} disks, the search {n}")
        if max(c.sizes) > MAX_TABLE_DISKS:
            raise HeuristicError(f"{c}: tables hold at most {MAX_TABLE_DISKS} disks")
        if c.kind == "dynamic" and math.comb(n, c.sizes[0]) > MAX_SPLITS:
            raise HeuristicError(f"{c}: {math.comb(n, c.sizes[0]):,} splits, at most {MAX_SPLITS:,}")


def check_encoding(spec: str, encoding: str) -> None:
    """Refuse a heuristic that cannot read tables of ``encoding`` (dynamic splits and mod3)."""
    if encoding == "mod3":
        for c in parse_spec(spec):
            if c.kind == "dynamic":
                raise HeuristicError(f"{c} cannot read mod3 tables: a search carries the exact value of each "
                                     f"group from parent to child, and a dynamic split has C(n, A) groups; "
                                     f"use --encoding byte or nibble")


def compile_plan(spec: str, disks: int, goal: str = "peg3", goal_pegs: tuple[int, ...] | None = None,
                 table_for=None, encoding: str = "byte") -> Plan:
    """The plan of ``spec`` for a search of ``disks`` disks to ``goal`` (peg3, middle, or state with
    ``goal_pegs``).  ``table_for(k, goal)`` gives a table (default: from the user's cache, in
    ``encoding``)."""
    table_for = table_for or (lambda k, g: get_table(k, g, encoding=encoding))
    comps = parse_spec(spec)
    for c in comps:
        _check(c, disks)
    check_encoding(spec, encoding)
    if goal == "state" and goal_pegs is None:
        raise HeuristicError("a placement goal needs its pegs")
    tables: list[DiskTable] = []
    index: dict[tuple[int, str], int] = {}

    def table_id(group: tuple[int, ...]) -> int:
        g = goal if goal != "state" else "state:" + "".join(str(goal_pegs[d]) for d in group)  # type: ignore[index]
        key = (len(group), g)
        if key not in index:
            index[key] = len(tables)
            tables.append(table_for(len(group), g))
        return index[key]

    split_start, masks, tabs = [0], [], []
    bound = 0
    for c in comps:
        if c.kind == "zero":
            continue
        if c.kind == "infinite":
            bound = 2 if goal == "middle" else 1
            continue
        if c.kind == "static":
            splits = []
            top = disks
            groups = []
            for size in c.sizes:  # the largest disks in the first group
                groups.append(tuple(range(top - size, top)))
                top -= size
            splits.append(groups)
        else:
            if goal == "state":
                raise HeuristicError("dynamic splits need a goal peg (an instance with a goal placement takes "
                                     "static groups and the infinite-peg bound)")
            a = c.sizes[0]
            everyone = set(range(disks))
            # the static split first: its value is most often the max, which lets pruning stop early
            subsets = sorted(itertools.combinations(range(disks), a), key=lambda t: -sum(t))
            splits = [[t, tuple(sorted(everyone - set(t)))] for t in subsets]
        for groups in splits:
            for g in groups:
                masks.append(_mask(g))
                tabs.append(table_id(g))
            split_start.append(len(masks))
    if goal == "state":
        code, state = K.GOAL_STATE, sum(int(p) << (2 * d) for d, p in enumerate(goal_pegs))  # type: ignore[arg-type, misc]
    elif goal == "middle":
        code, state = K.GOAL_MIDDLE, 0
    else:
        code, state = K.GOAL_PEG3, sum(3 << (2 * d) for d in range(disks))
    plan = Plan(spec, disks, code, state, bound, np.array(split_start, dtype=np.int64),
                np.array(masks, dtype=np.uint64), np.array(tabs, dtype=np.int64), tables)
    plan.tabs = np.array([t.row() for t in tables] or [[0] * 6], dtype=np.int64)
    if plan.carried and any(c.kind == "dynamic" for c in comps):
        raise HeuristicError(f"{spec}: dynamic splits cannot read mod3 tables (use byte or nibble tables)")
    return plan


# --- the mean of a heuristic over all states -------------------------------------------------------------

def mean_infinite_peg(n: int) -> float:
    """The exact mean of the infinite-peg bound to peg 3 over all 4**n placements, by a recurrence over the
    disks from the largest down (the kernel's rule: a peg's stack is sound, a peg holds unsettled disks)."""
    # state: (peg 3 still sound, set of pegs holding an unsettled disk) -> (count, sum of h)
    states = {(True, 0): (1, 0)}
    for _ in range(n):
        nxt: dict = {}
        for (sound, held), (count, total) in states.items():
            for p in range(4):
                if p == 3 and sound:
                    key, dh = (True, held), 0
                else:
                    dh = 1 + (1 if p == 3 or (held >> p) & 1 else 0)
                    key = (False, held | (1 << p))
                c, t = nxt.get(key, (0, 0))
                nxt[key] = (c + count, t + total + dh * count)
        states = nxt
    return sum(t for _, t in states.values()) / 4 ** n


def mean_static(plan: Plan) -> float | None:
    """The exact mean over all placements of a single static split (the groups are independent and each
    group's placements uniform), or None when the plan is not one static split."""
    if plan.bound or plan.splits != 1:
        return None
    return sum(plan.tables[t].mean() for t in plan.group_table)


def mean_sampled(plan: Plan, samples: int = 1_000_000, seed: int = 1) -> tuple[float, float]:
    """The mean of h over uniformly random placements, and its standard error."""
    rng = np.random.default_rng(seed)
    bits = 2 * plan.disks
    states = rng.integers(0, 1 << bits, size=samples, dtype=np.uint64) if bits < 64 else \
        rng.integers(0, np.iinfo(np.uint64).max, size=samples, dtype=np.uint64, endpoint=True)
    h = plan.values(states).astype(np.float64)
    return float(h.mean()), float(h.std(ddof=1) / math.sqrt(samples))
