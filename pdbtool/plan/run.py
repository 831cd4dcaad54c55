"""A whole plan: the sample, the reference, the search with its state file, and what the command reports."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..puzzle.board import Board
from ..tables.resources import gib
from .check import CHECK_SEED_OFFSET, Check, check_choice
from .files import plan_text
from .search import Planner, PlanResult, StateFile
from .space import BUILD_MARGIN, PLAN_ENCODINGS, Budget, Candidate, CostModel, PlanError

STATE_CONFIG_VERSION = 1


@dataclass(frozen=True)
class PlanOptions:
    board: Board
    memory: int
    build_seconds: float | None = None
    plan_seconds: float | None = None
    blank: str = "minimized"
    encodings: tuple[str, ...] | None = None
    reflect: bool = True
    reference: str = "manhattan"
    samples: int = 100_000
    seed: int = 0
    strategy: str = "auto"
    max_members: int = 4
    cache_dir: str | None = None
    threads: int | None = None
    builtins: bool = True
    build_memory: int | None = None   # bytes one build may make (None: what the machine has free at the start)
    check_samples: int | None = None  # fresh states the finalists are checked on (None: as many as samples; 0: none)
    finalists: int = 8

    def config(self) -> dict:
        """What a state file must have been made with to be resumed."""
        b = self.board
        return {"version": STATE_CONFIG_VERSION, "board": b.dims, "goal": list(b.goal), "blank": self.blank,
                "memory": self.memory, "build_seconds": self.build_seconds, "reflect": self.reflect,
                "encodings": list(self.encodings or PLAN_ENCODINGS.get(self.blank, ())),
                "reference": self.reference, "samples": self.samples, "seed": self.seed, "strategy": self.strategy,
                "max_members": self.max_members, "builtins": self.builtins,
                "build_memory": self.build_memory}


@dataclass
class PlanOutcome:
    options: PlanOptions
    result: PlanResult
    reference: str
    bound: int
    threads: int
    memory: int
    tables: int
    build_peak: int
    build_wall: float
    build_memory: int = 0
    check: Check | None = None

    @property
    def best(self) -> Candidate:
        return self.result.best

    def commands(self, path: str) -> tuple[str, str]:
        o = self.options
        flags = f" --blank {o.blank}" + (f" --encoding {self.best.encoding}" if self.best.encoding != "byte" else "")
        solve = f"pdbtool solve INSTANCES --partition {path}{flags}" + ("" if o.reflect else " --no-reflect")
        return f"pdbtool build --partition {path}{flags}", solve

    def comments(self, path: str) -> list[str]:
        o, r = self.options, self.result
        s = r.score
        build, solve = self.commands(path)
        lines = [f"made by pdbtool plan: board {o.board.dims} goal {o.board.goal_name}, memory {o.memory:,} bytes "
                 f"({gib(o.memory)}), each build's arrays at most {self.build_memory:,} bytes "
                 f"({gib(self.build_memory)})"
                 + (f", build time {o.build_seconds:,.0f} s" if o.build_seconds else ""),
                 f"plan: {self.best.describe()}, predicted nodes {s.relative:.6g} times {self.reference}'s, mean h "
                 f"{s.mean_h:.4f}, least h {s.min_h}",
                 f"score: Korf, Reid & Edelkamp's predicted nodes of the iteration of bound {self.bound} from a random "
                 f"start, {o.samples:,} random states (seed {o.seed})" + (", with the reflection" if o.reflect else ""),
                 f"tables: {self.tables} stored, {self.memory:,} bytes ({gib(self.memory)}); largest build "
                 f"{gib(self.build_peak)}; estimated build {self.build_wall / 60:,.1f} min on {self.threads} threads",
                 f"search: {r.strategy}, {r.scored:,} candidates scored, "
                 + ("finished" if r.finished else "stopped by --plan-time (rerun with more to go on)"),
                 f"build: {build}", f"solve: {solve}"]
        if self.check is not None:
            c = self.check
            lines.insert(3, f"checked: the search's best {c.finalists} (the best built-in among them) scored again on "
                            f"{c.samples:,} fresh random states (seed {c.seed}); the figures above are theirs; this "
                            f"plan's on the search's sample: predicted nodes {c.search_score.relative:.6g} times, "
                            f"mean h {c.search_score.mean_h:.4f}")
        if r.builtin is not None:
            name, bcand, bs = r.builtin
            lines.insert(2, f"best built-in within the budget: {name} ({bcand.encoding}), predicted nodes "
                            f"{bs.relative:.6g} times {self.reference}'s, mean h {bs.mean_h:.4f}")
        return lines

    def file_text(self, path: str) -> str:
        return plan_text(self.options.board, self.best, self.comments(path))

    def to_dict(self, path: str | None) -> dict:
        o, r = self.options, self.result
        build, solve = self.commands(path or "FILE")
        out = {"board": o.board.dims, "goal": o.board.goal_name, "memory_budget": o.memory,
               "build_time_budget": o.build_seconds, "blank": o.blank, "reflect": o.reflect,
               "encoding": self.best.encoding,
               "partitions": [[list(g) for g in m] for m in self.best.members], "kind": self.best.describe(),
               "relative_nodes": r.score.relative, "reference": self.reference, "mean_h": r.score.mean_h,
               "min_h": r.score.min_h, "bound": self.bound, "samples": o.samples, "seed": o.seed,
               "memory": self.memory, "tables": self.tables, "build_peak_bytes": self.build_peak,
               "build_memory": self.build_memory,
               "build_seconds_estimate": round(self.build_wall, 1), "strategy": r.strategy, "scored": r.scored,
               "computed": r.computed, "finished": r.finished, "plan_seconds": round(r.seconds, 2),
               "output": path, "build": build, "solve": solve}
        if r.builtin is not None:
            name, cand, s = r.builtin
            out["best_builtin"] = {"name": name, "encoding": cand.encoding, "relative_nodes": s.relative,
                                   "mean_h": s.mean_h}
        if self.check is not None:
            c = self.check
            out["check"] = {"samples": c.samples, "seed": c.seed, "finalists": c.finalists,
                            "search_relative_nodes": c.search_score.relative, "search_mean_h": c.search_score.mean_h,
                            "ranked": [{"kind": cand.describe(), "relative_nodes": sc.relative, "mean_h": sc.mean_h}
                                       for cand, sc in c.ranked]}
        return out

    def summary_lines(self, path: str | None) -> list[str]:
        return [line for line in self.comments(path or "FILE")] + ([f"written to {path}"] if path else [])

    def progress_text(self) -> str:
        r = self.result
        return (f"{r.scored:,} scored, best {self.best.describe()} at {r.score.relative:.4g} of "
                f"{self.reference}'s nodes, mean h {r.score.mean_h:.3f}, {gib(self.memory)}, {r.seconds:,.0f} s")


def reference_h(options: PlanOptions, scorer, samples):
    """(label, h on the sample) of the reference heuristic."""
    ref = options.reference
    board = options.board
    if ref == "manhattan":
        return "manhattan", samples.manhattan(range(1, board.n))
    if ref in ("ddb", "pairs+triples"):
        from ..analysis.source import open_heuristic
        from .scoring import heuristic_h

        h, label = open_heuristic("ddb", board, None, False, options.cache_dir)
        return label, heuristic_h(h, samples)
    from ..tables.partitions import Catalogue, load_partition

    part = load_partition(ref, board)
    parts = part.partitions if isinstance(part, Catalogue) else (part,)
    cand = Candidate.make([[p.tiles for p in q.patterns] for q in parts], "byte")
    return part.name + ("+reflect" if scorer.reflect else ""), scorer.h(cand)


def plan(options: PlanOptions, state_path: Path | None, progress=None, stop_after: int | None = None) -> PlanOutcome:
    """Plan for ``options``; ``progress(text)`` is called as candidates are scored; the search's scores go
    to (and resume from) ``state_path``."""
    import os

    from ..tables.cache import TableCache
    from .scoring import SampleSet, Scorer

    if options.blank not in PLAN_ENCODINGS:
        raise PlanError(f"--blank {options.blank}: a plan uses minimized or ignored tables")
    state = StateFile(state_path, options.config())  # refused before the sample, if it is another plan's
    threads = options.threads or os.cpu_count() or 1
    build_memory = resolve_build_memory(options, state)
    cache = TableCache(options.cache_dir)
    samples = SampleSet(options.board, options.samples, options.seed)
    scorer = Scorer(options.board, options.blank, options.reflect, samples, cache, options.threads)
    label, h = reference_h(options, scorer, samples)
    scorer.set_reference(label, h)
    budget = Budget(options.memory, options.build_seconds, threads, build_memory)

    def report(planner: Planner) -> None:
        if progress is not None and planner.best is not None:
            cand, s = planner.best
            progress(f"{len(planner.state.scores):,} scored, best {cand.describe()} at {s.relative:.4g} of {label}'s "
                     f"nodes, mean h {s.mean_h:.3f}, {planner.elapsed():,.0f} s")

    planner = Planner(options.board, scorer, budget, options.blank, state, options.encodings, options.seed,
                      options.strategy, options.max_members, options.plan_seconds, report, stop_after,
                      options.builtins)
    result = planner.run()
    check = None
    count = options.samples if options.check_samples is None else options.check_samples
    if count > 0:
        if progress is not None:
            progress(f"checking the search's {options.finalists} best on {count:,} fresh states")
        fresh = SampleSet(options.board, count, options.seed + CHECK_SEED_OFFSET)
        checker = Scorer(options.board, options.blank, options.reflect, fresh, cache, options.threads)
        checker.set_reference(*reference_h(options, checker, fresh))
        check = check_choice(planner, result, checker, options.finalists)
        scorer = checker
    costs = CostModel(options.board, options.blank)
    best = result.best
    got = costs.costs(best)
    exact = costs.exact_stored(best)
    if len(exact) != got.tables:  # the file is built as build plans it: the budget must hold for that plan
        raise PlanError(f"the plan's tables were counted as {got.tables}, build stores {len(exact)} (a bug)")
    assert budget.fits(got), "the plan exceeds its budget (a bug)"
    assert scorer.weights is not None
    return PlanOutcome(options, result, label, scorer.weights.bound, threads, got.memory, got.tables, got.build_peak,
                       budget.build_wall(got), build_memory, check)


def default_build_memory() -> int | None:
    """The arrays one build may make on this machine: the memory available now (the machine's, the cgroup's,
    the process's limits) less the builder's fixed allowance; None where that cannot be read."""
    from ..tables.resources import available_memory

    have = available_memory()
    return None if have is None else max(0, have - BUILD_MARGIN)


def resolve_build_memory(options: PlanOptions, state: StateFile) -> int:
    """The build memory of this plan: the option, else what the state file's first run used, else what
    this machine has free; an option above what the machine has free is refused before anything is built."""
    free = default_build_memory()
    if options.build_memory is not None:
        if free is not None and options.build_memory > free:
            raise PlanError(f"--build-memory {options.build_memory:,} bytes: only {free:,} bytes ({gib(free)}) are "
                            f"free for a build here (the plan's scoring builds its tables on this machine)")
        chosen = options.build_memory
    elif state.build_memory is not None:
        chosen = state.build_memory
    else:
        chosen = free if free is not None else options.memory
    state.build_memory = chosen
    return chosen

__all__ = ["PlanOptions", "PlanOutcome", "plan", "reference_h", "default_build_memory", "resolve_build_memory"]
