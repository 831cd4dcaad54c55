"""The candidates of a plan and what they cost: memory, the peak of their builds, their build time.

A candidate is a max over one or more additive partitions of the board's tiles (one partition: a partition
file; several: a catalogue file), each group a pattern table, every table in one encoding under one blank
rule.  Its memory is what ``pdbtool build`` makes of it and ``pdbtool solve`` maps: the payload of every
table it stores, counted through :func:`pdbtool.tables.operations.partition_plan`, so that patterns that
repeat or that a board symmetry maps onto each other count once, as ``build`` stores them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache

from ..errors import PdbtoolError
from ..puzzle.board import Board
from ..tables.build import estimate_peak_bytes
from ..tables.encodings import payload_bytes
from ..tables.operations import partition_plan
from ..tables.partitions import Catalogue, Partition
from ..tables.ranking import TilePattern
from ..tables.sharing import board_symmetries, maps_onto

# CPU seconds per table entry of a blank-minimized build on one core: the builders' rate in
# bench/results/build.json (5- to 8-tile tables), rounded up; a blank-ignored build visits fewer states
BUILD_CPU_SECONDS_PER_ENTRY = {"minimized": 2.6e-7, "ignored": 1.5e-7}
# encodings a plan may choose: lossless ones whose value the score can compute from the byte table
PLAN_ENCODINGS = {"minimized": ("byte", "nibble"), "ignored": ("byte", "nibble", "mod3")}
NIBBLE_CAP = 15
# encodings of a candidate of several partitions: the catalogue kernel that solve runs a max with reads byte
# tables (pdbtool.search.solver refuses a catalogue in another)
CATALOGUE_ENCODINGS = ("byte",)
BUILD_MARGIN = estimate_peak_bytes(TilePattern(Board(2, 2), (1,)), "ignored") - 4  # the estimate's fixed part

Group = tuple[int, ...]
Member = tuple[Group, ...]


class PlanError(PdbtoolError):
    pass


@dataclass(frozen=True, order=True)
class Candidate:
    """``members``: the partitions, each a sorted tuple of sorted tile groups; ``encoding``: the tables'."""

    members: tuple[Member, ...]
    encoding: str

    @staticmethod
    def make(members, encoding: str) -> Candidate:
        canon = tuple(sorted({tuple(sorted(tuple(sorted(int(t) for t in g)) for g in m if g)) for m in members}))
        return Candidate(canon, encoding)

    @property
    def key(self) -> str:
        """A stable text key (the state file's)."""
        parts = ["|".join(",".join(map(str, g)) for g in m) for m in self.members]
        return f"{self.encoding}:" + "/".join(parts)

    @staticmethod
    def from_key(key: str) -> Candidate:
        encoding, _, rest = key.partition(":")
        members = [[tuple(int(t) for t in g.split(",")) for g in m.split("|")] for m in rest.split("/")]
        return Candidate.make(members, encoding)

    @property
    def groups(self) -> list[Group]:
        """Every distinct group, in the members' order."""
        seen: dict[Group, None] = {}
        for m in self.members:
            for g in m:
                seen.setdefault(g, None)
        return list(seen)

    def describe(self) -> str:
        sizes = ["-".join(str(len(g)) for g in sorted(m, key=lambda g: (-len(g), g))) for m in self.members]
        kind = sizes[0] if len(sizes) == 1 else "max(" + ", ".join(sizes) + ")"
        return f"{kind} {self.encoding}"


def partition_object(board: Board, member: Member, name: str = "plan") -> Partition:
    return Partition(name, board, tuple(TilePattern(board, g) for g in member))


def table_object(board: Board, cand: Candidate, name: str = "plan") -> Partition | Catalogue:
    """The partition (one member) or catalogue that the plan's file describes."""
    parts = tuple(partition_object(board, m, f"{name}[{i}]") for i, m in enumerate(cand.members))
    if len(parts) == 1:
        return Partition(name, board, parts[0].patterns)
    return Catalogue(name, board, parts)


@dataclass(frozen=True)
class Costs:
    memory: int            # bytes of the stored tables' payloads
    tables: int            # tables stored
    build_peak: int        # the largest build's arrays (builds run one at a time)
    build_cpu: float       # estimated CPU seconds to build every stored table from nothing
    stored: tuple[tuple[Group, float], ...]  # each stored table's group and its estimated build CPU seconds


class CostModel:
    """Costs of candidates on one board under one blank rule (memoized: the symmetry checks cost)."""

    def __init__(self, board: Board, blank: str):
        if blank not in PLAN_ENCODINGS:
            raise PlanError(f"--blank {blank}: a plan uses minimized or ignored tables")
        self.board = board
        self.blank = blank
        self._costs = lru_cache(maxsize=1 << 16)(self._compute)
        self._symmetries = board_symmetries(board)[1:]
        self._patterns: dict[Group, TilePattern] = {}
        self._groups: dict[tuple[Group, str], tuple[int, int, float]] = {}
        self._orbits: dict[Group, Group] = {}

    def costs(self, cand: Candidate) -> Costs:
        return self._costs(cand)

    def _pattern(self, g: Group) -> TilePattern:
        if g not in self._patterns:
            self._patterns[g] = TilePattern(self.board, g)
        return self._patterns[g]

    def stored(self, cand: Candidate) -> list[TilePattern]:
        """The patterns whose tables ``build`` stores: :func:`pdbtool.tables.sharing.share_tables`'s rule
        (a pattern is looked up in the first earlier stored one that a board symmetry maps onto it), on
        the patterns in the order the plan's file lists them, with each group's class memoized."""
        return [self._pattern(g) for g in self._stored_groups(cand)]

    def _stored_groups(self, cand: Candidate) -> list[Group]:
        seen: set[Group] = set()
        kept: list[Group] = []
        for g in cand.groups:
            orbit = self._orbits.get(g) or self._orbit(g)
            if orbit not in seen:
                seen.add(orbit)
                kept.append(g)
        return kept

    def _orbit(self, g: Group) -> Group:
        """The first group met that a board symmetry maps ``g`` onto (``g`` itself if none): the symmetries
        that map tables onto each other form a group, so "maps onto" is an equivalence, and the first stored
        pattern of each class is the one ``build`` keeps (``exact_stored`` checks the plan's choice).  A
        group's class is found from its images under the board's symmetries, not by trying every group met."""
        if g not in self._orbits:
            found = next((self._orbits[b] for b in self._images(g) if b in self._orbits), g)
            self._orbits[g] = found
        return self._orbits[g]

    def _images(self, g: Group) -> list[Group]:
        """The groups whose tables a symmetry other than the identity turns ``g``'s table into
        (:func:`pdbtool.tables.sharing.maps_onto`)."""
        board, a = self.board, self._pattern(g)
        at = board.goal_tiles
        out = []
        for s in self._symmetries:
            cells = [s.cell[board.goal[t]] for t in g]
            if board.goal[0] in cells:
                continue  # the image holds the blank's goal cell: no pattern of this board
            b = tuple(sorted(at[c] for c in cells))
            if maps_onto(s, a, self._pattern(b), self.blank):
                out.append(b)
        return out

    def exact_stored(self, cand: Candidate) -> list[TilePattern]:
        """The same, from the plan's partition or catalogue object through ``build``'s own plan."""
        return partition_plan(table_object(self.board, cand), self.blank).stored

    def _group(self, g: Group, encoding: str) -> tuple[int, int, float]:
        """(payload bytes, the build's arrays, build CPU seconds) of one group's table."""
        key = (g, encoding)
        if key not in self._groups:
            p = self._pattern(g)
            # the arrays a build makes: its estimate less the estimate's allowance for the interpreter
            build = estimate_peak_bytes(p, self.blank) - BUILD_MARGIN
            payload = payload_bytes(encoding, p.entries)
            if encoding != "byte":  # converted from the byte table: the mapped source and the payload
                build = max(build, p.entries + payload)
            self._groups[key] = (payload, build, BUILD_CPU_SECONDS_PER_ENTRY[self.blank] * p.entries)
        return self._groups[key]

    def _compute(self, cand: Candidate) -> Costs:
        each = [(g, self._groups.get((g, cand.encoding)) or self._group(g, cand.encoding))
                for g in self._stored_groups(cand)]
        return Costs(sum(c[0] for _, c in each), len(each), max((c[1] for _, c in each), default=0),
                     sum(c[2] for _, c in each), tuple((g, c[2]) for g, c in each))

    def group_cost(self, k: int, encoding: str) -> int:
        from math import perm

        return payload_bytes(encoding, perm(self.board.n, k))


@dataclass(frozen=True)
class Budget:
    memory: int                    # bytes the tables may take where the search runs
    build_seconds: float | None    # wall seconds the builds may take
    threads: int
    build_memory: int | None = None  # bytes any one build may make (None: the tables' budget)

    @property
    def build_limit(self) -> int:
        return self.memory if self.build_memory is None else self.build_memory

    def fits(self, costs: Costs) -> bool:
        if costs.memory > self.memory or costs.build_peak > self.build_limit:
            return False
        return self.build_seconds is None or self.build_wall(costs) <= self.build_seconds

    def build_wall(self, costs: Costs) -> float:
        """Estimated wall seconds to build every stored table from nothing (what is in the cache is not
        counted off, so that what fits does not change as the planning fills the cache)."""
        return costs.build_cpu / self.threads


def set_partitions(items: list[int], max_size: int):
    """Every partition of ``items`` into groups of at most ``max_size`` (each once, groups sorted)."""
    if not items:
        yield ()
        return
    first, rest = items[0], items[1:]
    for size in range(0, min(max_size, len(items)) - 0):
        for others in itertools.combinations(rest, size):
            group = (first,) + others
            left = [t for t in rest if t not in others]
            for tail in set_partitions(left, max_size):
                yield (group,) + tail


def row_chunks(board: Board, k: int, order: str = "rows") -> Member:
    """The tiles in row-major (or column-major) order of their goal cells, cut into groups of ``k``."""
    cells = sorted(range(board.n), key=(lambda c: (c // board.width, c % board.width)) if order == "rows"
                   else (lambda c: (c % board.width, c // board.width)))
    at = board.goal_tiles
    tiles = [at[c] for c in cells if at[c] != 0]
    return tuple(tuple(sorted(tiles[i:i + k])) for i in range(0, len(tiles), k))


__all__ = ["CATALOGUE_ENCODINGS", "Candidate", "CostModel", "Costs", "Budget", "PlanError", "set_partitions",
           "row_chunks", "table_object", "partition_object", "PLAN_ENCODINGS", "BUILD_CPU_SECONDS_PER_ENTRY"]
