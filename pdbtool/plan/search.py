"""The search for the best candidate within a budget, and its state file.

Strategy: on a board whose partitions within the budget are few (``EXHAUSTIVE_MAX``), every one of them is
scored.  Otherwise a first-improvement hill climb: it starts from the best of the starting points (the
built-in partitions and catalogues of the board, and the tiles cut in row or column order into groups of
the largest size that fits the budget, in every encoding the blank rule allows), then tries the neighbours of
the current candidate in a seeded random order and moves to the first that scores better:

* a tile moved to another group or to a group of its own, two tiles of two groups swapped, two groups
  merged (a larger table, often affordable only in a compact encoding), in any partition of a catalogue;
* the encoding changed;
* a partition added to the catalogue (a starting point, or an image of a partition of the candidate
  under a board symmetry other than the diagonal reflection, which the reflection already covers), or
  one removed.

It stops at a candidate that no neighbour improves, or when the planning time is spent.

The state file keeps every score computed (with the configuration that made it).  A search that resumes
from it replays the same seeded trajectory, taking the scores it holds instead of computing them, so it
reaches exactly the candidate an uninterrupted search reaches; the tables its scores needed are in the
cache, each tile set built once.
"""

from __future__ import annotations

import json
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import registry
from ..errors import PdbtoolError
from ..puzzle.board import Board
from ..tables.partitions import Catalogue, builtin_names, load_partition
from ..tables.sharing import board_symmetries
from .scoring import Score, Scorer
from .space import (CATALOGUE_ENCODINGS, PLAN_ENCODINGS, Budget, Candidate, CostModel, Costs, Group, Member,
                    PlanError, row_chunks, set_partitions)

ENCODING_ORDER = tuple(registry.ENCODINGS)
STATE_FORMAT = "pdbtool-plan-state"
STATE_VERSION = 1
EXHAUSTIVE_MAX = 20_000
SAVE_EVERY = 1.0  # seconds between writes of the state file (and at every stop)


class PlanInterrupted(PlanError):
    """Raised by ``stop_after`` (tests): the state file holds what was scored."""


@dataclass
class PlanResult:
    best: Candidate
    score: Score
    costs: Costs
    best_start: tuple[Candidate, Score] | None   # the best starting point (built-ins among them)
    builtin: tuple[str, Candidate, Score] | None  # the best built-in partition or catalogue that fits
    scored: int                 # candidates scored in all (this run and earlier ones)
    computed: int               # of them, scored by this run
    finished: bool              # False when the planning time ran out
    strategy: str
    seconds: float              # planning time in all runs
    steps: int = 0
    history: list[tuple[str, float]] = field(default_factory=list)  # (candidate key, relative) of each move


class StateFile:
    """The scores computed so far, for one configuration; written atomically."""

    def __init__(self, path: Path | None, config: dict):
        self.path = path
        self.config = config
        self.scores: dict[str, Score] = {}
        self.elapsed = 0.0
        self.build_memory: int | None = None  # the build memory the plan was started with (kept on resume)
        self._saved = time.monotonic()
        if path is not None and path.exists():
            try:
                data = json.loads(path.read_text())
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise PlanError(f"{path}: not a plan state file ({exc}); delete it or give another --state") from None
            if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
                raise PlanError(f"{path}: not a plan state file; delete it or give another --state")
            if data.get("config") != config:
                raise PlanError(f"{path}: the state of another plan (board, budget, sample or options differ); "
                                f"delete it or give another --state")
            try:
                self.scores = {str(k): Score.from_list(v) for k, v in data["scores"].items()}
                self.elapsed = float(data.get("elapsed", 0.0))
                held = data.get("build_memory")
                self.build_memory = None if held is None else int(held)
            except (KeyError, TypeError, ValueError, IndexError):
                raise PlanError(f"{path}: a damaged plan state file; delete it") from None

    def save(self, elapsed: float, force: bool = False) -> None:
        if self.path is None:
            return
        now = time.monotonic()
        if not force and now - self._saved < SAVE_EVERY:
            return
        data = {"format": STATE_FORMAT, "version": STATE_VERSION, "config": self.config, "elapsed": round(elapsed, 3),
                "build_memory": self.build_memory, "scores": {k: s.to_list() for k, s in self.scores.items()}}
        tmp = self.path.with_name(self.path.name + f".tmp{os.getpid()}")
        try:
            tmp.write_text(json.dumps(data))
            os.replace(tmp, self.path)
        except OSError as exc:
            raise PlanError(f"{self.path}: cannot write the plan state ({exc})") from None
        self._saved = now


class Planner:
    def __init__(self, board: Board, scorer: Scorer, budget: Budget, blank: str, state: StateFile,
                 encodings: tuple[str, ...] | None = None, seed: int = 0, strategy: str = "auto",
                 max_members: int = 4, time_limit: float | None = None, progress=None,
                 stop_after: int | None = None, builtins: bool = True):
        self.board = board
        self.scorer = scorer
        self.budget = budget
        self.blank = blank
        self.costs = CostModel(board, blank)
        self.encodings = encodings or PLAN_ENCODINGS[blank]
        for e in self.encodings:
            if e not in PLAN_ENCODINGS[blank]:
                raise PlanError(f"encoding {e}: a plan of blank-{blank} tables takes "
                                f"{', '.join(PLAN_ENCODINGS[blank])}")
        self.seed = seed
        self.strategy = strategy
        self.max_members = max_members
        self.time_limit = time_limit
        self.progress = progress
        self.stop_after = stop_after
        self.use_builtins = builtins
        self.state = state
        self.tiles = sorted(t for t in range(1, board.n))
        self._start = time.monotonic()
        self.computed = 0
        self.best: tuple[Candidate, Score] | None = None
        self._adjacent = self._goal_adjacency()
        self._met: set[Group] = set()  # the groups of every candidate met so far, in the search's order

    # --- time and scores -------------------------------------------------------------------------------
    def elapsed(self) -> float:
        return self.state.elapsed + time.monotonic() - self._start

    def out_of_time(self) -> bool:
        return self.time_limit is not None and self.elapsed() >= self.time_limit

    def fits(self, cand: Candidate) -> bool:
        """Within the budget, and something ``solve`` takes (a catalogue only in byte tables)."""
        if len(cand.members) > 1 and cand.encoding not in CATALOGUE_ENCODINGS:
            return False
        return self.budget.fits(self.costs.costs(cand))

    def score(self, cand: Candidate) -> Score | None:
        """The candidate's score (None when the planning time is spent before it could be computed)."""
        key = cand.key
        got = self.state.scores.get(key)
        if got is None:
            if self.out_of_time():
                return None
            if self.stop_after is not None and self.computed >= self.stop_after:
                self.state.save(self.elapsed(), force=True)
                raise PlanInterrupted(f"stopped after {self.computed} scores")
            got = self.scorer.score(cand)
            self.computed += 1
            self.state.scores[key] = got
            self.state.save(self.elapsed())
        self._met.update(cand.groups)
        if self.best is None or _better(cand, got, *self.best, self.costs):
            self.best = (cand, got)
        if self.progress is not None:
            self.progress(self)
        return got

    # --- starting points ------------------------------------------------------------------------------
    def builtin_candidates(self) -> list[tuple[str, Candidate]]:
        out = []
        for name in builtin_names():
            try:
                part = load_partition(name)
            except PdbtoolError:
                continue
            if part.board != self.board:
                continue
            parts = part.partitions if isinstance(part, Catalogue) else (part,)
            if any(sorted(p.tiles) != self.tiles for p in parts):
                continue  # a partition that leaves tiles out is not one of the plan's candidates
            for e in self.encodings:
                out.append((name, Candidate.make([[q.tiles for q in p.patterns] for p in parts], e)))
        return out

    def starts(self) -> list[Candidate]:
        found: dict[Candidate, None] = {}
        if self.use_builtins:
            for _, c in self.builtin_candidates():
                found.setdefault(c, None)
        # the tiles in row or column order in groups of the largest size that fits (smaller groups are
        # their refinements, and a merge never lowers h)
        for order in ("rows", "columns"):
            for e in self.encodings:
                for k in range(len(self.tiles), 0, -1):
                    cand = Candidate.make([row_chunks(self.board, k, order)], e)
                    if self.fits(cand):
                        found.setdefault(cand, None)
                        break
        return [c for c in found if self.fits(c)]

    # --- strategies -----------------------------------------------------------------------------------
    def exhaustive_space(self, limit: int) -> list[Candidate] | None:
        """Every single partition within the budget, in every encoding; None when the partitions into groups
        that fit one at a time number more than ``limit``."""
        def alone(k: int) -> bool:
            group = tuple(self.tiles[:k])
            return any(self.fits(Candidate.make([[group]], e)) for e in self.encodings)

        largest = max((k for k in range(1, len(self.tiles) + 1) if alone(k)), default=0)
        if largest == 0:
            return []
        if partitions_count(len(self.tiles), largest) * len(self.encodings) > limit:
            return None
        out = []
        for groups in set_partitions(self.tiles, largest):
            for e in self.encodings:
                cand = Candidate.make([groups], e)
                if self.fits(cand):
                    out.append(cand)
        return out

    def run(self) -> PlanResult:
        try:
            return self._run()
        finally:  # whatever stops it (an interrupt included), the scores computed are kept
            self.state.save(self.elapsed(), force=True)

    def _run(self) -> PlanResult:
        starts = self.starts()
        if not starts:
            raise PlanError(f"no partition of the {self.board.dims} board fits the budget (memory "
                            f"{self.budget.memory:,} bytes, each build {self.budget.build_limit:,})")
        space = None
        if self.strategy in ("auto", "exhaustive"):
            space = self.exhaustive_space(EXHAUSTIVE_MAX if self.strategy == "auto" else 1 << 62)
        strategy = "exhaustive" if space is not None else "climb"
        finished = True
        best_start = None
        for cand in starts:
            s = self.score(cand)
            if s is None:
                finished = False
                break
            if best_start is None or _better(cand, s, *best_start, self.costs):
                best_start = (cand, s)
        history: list[tuple[str, float]] = []
        steps = 0
        if finished and space is not None:
            for cand in space:
                if self.score(cand) is None:
                    finished = False
                    break
        if finished and (space is None or self.max_members > 1):
            # the climb (after an exhaustive pass: from its best, to catalogues)
            assert self.best is not None
            current, cur = self.best
            history.append((current.key, cur.relative))
            while True:
                moved = False
                for nb in self.neighbours(current, steps):
                    s = self.score(nb)
                    if s is None:
                        finished = False
                        break
                    if s.relative < cur.relative:
                        current, cur, moved = nb, s, True
                        history.append((current.key, cur.relative))
                        break
                steps += 1
                if not moved or not finished:
                    break
        self.state.save(self.elapsed(), force=True)
        if self.best is None:
            raise PlanError("the planning time ran out before any candidate was scored: give more --plan-time")
        best, score = self.best
        builtin = None
        for name, cand in self.builtin_candidates() if self.use_builtins else []:
            s = self.state.scores.get(cand.key)
            if s is not None and self.fits(cand) and (builtin is None or _better(cand, s, builtin[1], builtin[2],
                                                                                    self.costs)):
                builtin = (name, cand, s)
        return PlanResult(best, score, self.costs.costs(best), best_start, builtin, len(self.state.scores),
                          self.computed, finished, strategy, self.elapsed(), steps, history)

    # --- neighbours -----------------------------------------------------------------------------------
    def _goal_adjacency(self) -> dict[int, set[int]]:
        nb = self.board.neighbours()
        at = self.board.goal_tiles
        out = {}
        for t in self.tiles:
            c = self.board.goal[t]
            out[t] = {at[int(q)] for q in nb[c] if q >= 0 and at[int(q)] != 0}
        return out

    def _touches(self, t: int, group) -> bool:
        # on boards beyond 4x4 only tiles whose goal cells touch the other group are moved or swapped
        return self.board.n <= 16 or any(u in self._adjacent[t] for u in group)

    def member_moves(self, member: Member) -> list[Member]:
        groups = [list(g) for g in member]
        out = []
        for a, ga in enumerate(groups):
            for t in ga:
                rest = [u for u in ga if u != t]
                for b, gb in enumerate(groups):
                    if b == a or not self._touches(t, gb):
                        continue
                    new = [list(g) for g in groups]
                    new[a] = rest
                    new[b] = gb + [t]
                    out.append(_member(new))
                    if b > a:
                        for u in gb:
                            swapped = [list(g) for g in groups]
                            swapped[a] = rest + [u]
                            swapped[b] = [x for x in gb if x != u] + [t]
                            out.append(_member(swapped))
                if rest:
                    new = [list(g) for g in groups]
                    new[a] = rest
                    new.append([t])
                    out.append(_member(new))
        for a in range(len(groups)):
            for b in range(a + 1, len(groups)):
                new = [g for i, g in enumerate(groups) if i not in (a, b)] + [groups[a] + groups[b]]
                out.append(_member(new))
        return out

    def neighbours(self, cand: Candidate, step: int) -> list[Candidate]:
        found: dict[Candidate, None] = {}
        members = list(cand.members)
        for i, m in enumerate(members):
            for new in self.member_moves(m):
                found.setdefault(Candidate.make(members[:i] + [new] + members[i + 1:], cand.encoding), None)
        for e in self.encodings:
            if e != cand.encoding:
                found.setdefault(Candidate.make(members, e), None)
        if len(members) < self.max_members:
            extra = [c.members[0] for c in self.starts() if len(c.members) == 1]
            transpose = tuple((c % self.board.width) * self.board.width + c // self.board.width
                              for c in range(self.board.n)) if self.board.width == self.board.height else None
            for g in board_symmetries(self.board)[1:]:
                if g.cell == transpose:
                    continue
                rename = g.rename(self.board)
                if rename[0] != 0:
                    continue  # the image's goal has the blank elsewhere: not a partition of this board
                for m in members:
                    extra.append(tuple(tuple(sorted(rename[t] for t in grp)) for grp in m))
            for m in extra:  # in any encoding that fits and solve takes for a catalogue
                for e in self.encodings:
                    found.setdefault(Candidate.make(members + [m], e), None)
        if len(members) > 1:
            for i in range(len(members)):
                found.setdefault(Candidate.make(members[:i] + members[i + 1:], cand.encoding), None)
        found.pop(cand, None)
        out = sorted(c for c in found if self.fits(c))
        random.Random(f"{self.seed}:{step}").shuffle(out)
        # the cheapest to score first: fewest entries of tables no candidate met so far needed (a table of the
        # cache is not counted off, so that a resumed search takes the same order as an uninterrupted one)
        out.sort(key=self.new_entries)
        return out

    def new_entries(self, cand: Candidate) -> int:
        """Entries of the tables that scoring ``cand`` needs (one per group: the scorer looks each group up in
        its own table) and no candidate met so far needed."""
        from math import perm

        return sum(perm(self.board.n, len(g)) for g in cand.groups if g not in self._met)


def partitions_count(items: int, largest: int) -> int:
    """The partitions of ``items`` things into groups of at most ``largest`` (the first thing's group has j
    members: choose the other j - 1, partition the rest)."""
    from math import comb

    count = [1] + [0] * items
    for m in range(1, items + 1):
        count[m] = sum(comb(m - 1, j - 1) * count[m - j] for j in range(1, min(largest, m) + 1))
    return count[items]


def _member(groups) -> Member:
    return tuple(sorted(tuple(sorted(g)) for g in groups if g))


def _better(a: Candidate, sa: Score, b: Candidate, sb: Score, costs: CostModel) -> bool:
    """Fewer predicted nodes; on a tie, the faster lookup (encodings in the registry's order, byte first),
    then less memory, then the smaller key (a fixed order)."""
    return ranking_key(a, sa, costs) < ranking_key(b, sb, costs)


def ranking_key(c: Candidate, s: Score, costs: CostModel) -> tuple:
    return (s.relative, ENCODING_ORDER.index(c.encoding), costs.costs(c).memory, c.key)


__all__ = ["ranking_key", "Planner", "PlanResult", "StateFile", "PlanInterrupted", "EXHAUSTIVE_MAX"]
