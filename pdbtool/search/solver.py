"""The Python API of the solver: ``Solver(board, heuristic=..., partition=...).solve(state)``.

The search runs in the IDA* driver (:mod:`pdbtool.search.driver`) in chunks of nodes; between chunks Python
checks the limits and reports progress.  ``solve_batch`` solves many instances, in parallel processes if asked,
which share the memory-mapped tables through the page cache.

Example::

    from pdbtool.puzzle.board import Board
    from pdbtool.search.solver import Solver

    solver = Solver(Board(4, 4), heuristic="pdb", partition="15-5-5-5")
    result = solver.solve([14, 13, 15, 7, 11, 12, 9, 5, 6, 0, 2, 1, 4, 8, 10, 3])
    print(result.length, result.nodes_generated, result.solution)
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Sequence

import numpy as np

from ..puzzle.board import Board
from ..errors import PdbtoolError
from ..heuristics import HEURISTICS, HeuristicError, make_heuristic
from .driver import FOUND, STOPPED, Search, Tally, run_chunks

CHUNK_NODES = 1 << 21  # nodes per driver call of a serial solve (between progress reports and limit checks)


@dataclass
class SolveResult:
    """The outcome of one instance.  ``solution`` lists the tiles moved, in order.  ``seconds`` is the wall
    time of the search, ``cpu_seconds`` the CPU time of the searching thread (the fairer figure on a busy
    machine).  ``solved`` is False when the time or node limit ran out
    (``length`` is then None) or when the instance could not be read (``error`` says why)."""

    id: str | None = None
    board: str = ""
    heuristic: str = ""
    length: int | None = None
    solution: list[int] = field(default_factory=list)
    nodes_generated: int = 0
    nodes_expanded: int = 0
    h0: int | None = None
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    solved: bool = False
    error: str | None = None
    optimal: int | None = None
    iterations: int = 0
    timed_out: bool = False
    line: int | None = None
    source: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


class SolverError(PdbtoolError):
    pass


class Solver:
    """An optimal solver for one board: IDA* with a heuristic chosen by name.

    * ``heuristic``: ``pdb`` (default), ``manhattan`` or ``linear-conflict``.
    * ``partition``: for ``pdb``, a built-in name or partition file path, a ``Partition``, or a list of
      ``TilePattern``; default: the board's default partition (15-7-8 on 4x4, 24-6-6-6-6 on 5x5).
    * ``reflect``: take the max with the diagonal reflection (when the board and goal allow it).
    * ``tables``: the tables of the patterns (uint8 arrays indexed by rank) instead of the cache.
    * ``cache`` / ``cache_dir``: a ``TableCache`` (tables are built on first use, then memory-mapped).
      With ``pdb`` and ``max``, a pattern that a board symmetry maps onto another is looked up in that
      one's table (:mod:`pdbtool.tables.sharing`: 24-6-6-6-6 needs two tables).
    * ``search_threads``: threads searching one instance (:mod:`pdbtool.search.parallel`; every heuristic).
    * ``ddb`` / ``max`` (:mod:`pdbtool.heuristics.dynamic`): the dynamic set ``dynamic`` (``pairs`` or
      ``pairs+triples``, the default); ``max`` also takes the static ``partition``.
    * ``blank``: the tables' blank rule, ``minimized`` (default) or ``ignored``.
    * ``encoding`` / ``group`` (pdb): search tables stored in a compact encoding (:mod:`pdbtool.tables.encodings`,
      kernel :mod:`pdbtool.heuristics.encoded`); ``mod3`` and ``parity`` need ``blank="ignored"``.  Lossless
      encodings give the byte encoding's node counts and solutions.
    """

    def __init__(self, board: Board | None = None, heuristic: str = "pdb", partition=None, reflect: bool = True,
                 cache=None, cache_dir=None, tables: Sequence[np.ndarray] | None = None,
                 threads: int | None = None, notify: Callable[[str], None] | None = None,
                 dynamic: str | None = None, search_threads: int = 1, encoding: str = "byte",
                 group: int | None = None, blank: str = "minimized"):
        from ..heuristics.dynamic import DYNAMIC_HEURISTICS

        if heuristic not in HEURISTICS + DYNAMIC_HEURISTICS:
            raise SolverError(f"unknown heuristic {heuristic!r}: choose one of "
                              f"{', '.join(HEURISTICS + DYNAMIC_HEURISTICS)}")
        patterns = None
        self.partition_name = None
        self.dynamic = (dynamic or "pairs+triples") if heuristic in DYNAMIC_HEURISTICS else None
        shared = None
        if blank not in ("minimized", "ignored", "zero-aware"):
            raise SolverError(f"blank rule {blank!r}: choose minimized, ignored or zero-aware")
        if encoding != "byte" or group is not None:
            if heuristic != "pdb":
                raise SolverError(f"--encoding applies to --heuristic pdb only, not {heuristic}")
            from ..heuristics.encoded import check_encoding

            enc_params = check_encoding(encoding, blank, group)
        else:
            enc_params = {}
        self.encoding, self.blank = encoding, blank
        if heuristic in ("pdb", "max"):
            from ..tables.resolve import resolve_partition

            part = resolve_partition(partition, board)
            patterns, self.partition_name, board = list(part.patterns), part.name, part.board
            # a catalogue, or zero-aware tables: the catalogue kernel (pdbtool.heuristics.catalogue)
            self._catalogue = hasattr(part, "partitions") or blank == "zero-aware"
            if self._catalogue and (heuristic != "pdb" or encoding != "byte"):
                raise SolverError("catalogues and zero-aware tables go with --heuristic pdb and byte tables")
            if tables is None:
                if cache is None:
                    from ..tables.cache import TableCache

                    cache = TableCache(cache_dir, notify=notify)
                # a pattern that a board symmetry maps onto another is looked up in that one's table
                from ..tables.operations import partition_plan, search_tables

                plan = partition_plan(part, blank)
                shared = list(plan.shared)
                self._keep = search_tables(cache, plan, encoding, enc_params, threads)
                tables = [t.values for t in self._keep]
            elif self._catalogue:
                from ..tables.operations import partition_plan

                plan = partition_plan(part, blank)
            reflect = bool(reflect) and board.reflection_valid()
        elif board is None:
            raise SolverError("a board is needed")
        self.board = board
        self.heuristic_name = heuristic
        self.reflect = reflect if heuristic in ("pdb", "max") else False
        if self.dynamic is not None:
            from ..heuristics.dynamic import make_dynamic_heuristic

            self.heuristic = make_dynamic_heuristic(heuristic, board, self.dynamic, patterns, tables, self.reflect,
                                                    cache=cache, cache_dir=cache_dir, threads=threads, notify=notify,
                                                    shared=shared)
        elif self._catalogue:
            from ..heuristics.catalogue import catalogue_heuristic

            self.heuristic = catalogue_heuristic(part, plan, tables, blank, self.reflect)
        elif encoding != "byte":
            from ..heuristics.encoded import EncodedPatternSum

            self.heuristic = EncodedPatternSum(patterns, tables, encoding, enc_params, self.reflect, shared)
        else:
            self.heuristic = make_heuristic(heuristic, board, patterns, tables, self.reflect, shared)
        self.nb = board.neighbours()
        self.goal_tiles = np.array(board.goal_tiles, dtype=np.int64)
        self.search_threads = _check_search_threads(search_threads)

    _warm = False
    _catalogue = False

    def warm_up(self) -> None:
        """Load (or compile) the kernel now, so that the first instance's seconds count search only."""
        self._warm = True
        goal = list(self.board.goal_tiles)
        blank = goal.index(0)
        q = next(int(c) for c in self.nb[blank] if c >= 0)
        goal[blank], goal[q] = goal[q], 0
        self.solve(goal, node_limit=100, threads=1)

    @property
    def label(self) -> str:
        if self.heuristic_name == "ddb":
            return f"ddb-{self.dynamic}"
        if self.heuristic_name == "max":
            return f"max({self.partition_name}{'+reflect' if self.reflect else ''}, ddb-{self.dynamic})"
        if self.heuristic_name != "pdb":
            return self.heuristic_name
        tables = ""
        if self.blank != "minimized" or self.encoding != "byte":
            group = getattr(self.heuristic, "params", {}).get("group")
            tables = f" {self.blank} {self.encoding}" + (f" group {group}" if group else "")
        return f"{self.partition_name}{'+reflect' if self.reflect else ''}{tables}"

    def h(self, state: Sequence[int]) -> int:
        """The heuristic value of a state."""
        return self.heuristic.value(self.board.check_state(state))

    def solve(self, state: Sequence[int], time_limit: float | None = None, node_limit: int | None = None,
              progress: Callable[[int, int, int], None] | None = None, chunk: int = CHUNK_NODES,
              threads: int | None = None) -> SolveResult:
        """Solve one state optimally.  ``progress(bound, generated, expanded)`` is called between chunks.

        With a time or node limit, an instance that runs out is returned with ``solved=False``.  With
        ``threads`` > 1 (default: the solver's ``search_threads``), each iteration's subtrees are searched
        by that many threads (:mod:`pdbtool.search.parallel`); ``cpu_seconds`` is then the CPU time of the whole
        process during the search."""
        state = self.board.check_state(state)
        if not self._warm:
            self.warm_up()
        start = time.perf_counter()
        cpu_start = time.thread_time()
        search = Search(self.heuristic, state)
        result = SolveResult(board=self.board.dims, heuristic=self.label, h0=search.h0)
        if search.h0 == 0 and tuple(state) == tuple(self.goal_tiles):
            return _finish(result, state, [], self.nb, search, start, time.thread_time() - cpu_start)
        threads = _check_search_threads(self.search_threads if threads is None else threads)
        if threads > 1:
            return self._solve_parallel(state, search.h0, result, threads, start, time_limit, node_limit, progress,
                                        chunk)
        tally = Tally(node_limit, None if time_limit is None else start + time_limit)
        report = None
        if progress is not None:
            def report():
                progress(search.bound, search.generated, search.expanded)
        status = run_chunks(search, chunk, tally, report)
        if status not in (FOUND, STOPPED):
            raise SolverError("the search space was exhausted without reaching the goal (a bug)")
        moves = search.moves() if status == FOUND else None
        return _finish(result, state, moves, self.nb, search, start, time.thread_time() - cpu_start)

    def _solve_parallel(self, state, h0, result, threads, start, time_limit, node_limit, progress, chunk):
        cpu_start = time.process_time()
        deadline = None if time_limit is None else start + time_limit
        out = self._parallel_outcome(state, h0, threads, deadline, node_limit, progress, chunk)
        return _finish(result, state, out.moves, self.nb, out, start, time.process_time() - cpu_start)

    def _parallel_outcome(self, state, h0, threads, deadline, node_limit, progress, chunk):
        """The parallel search of one instance, on threads here (``RaySolver`` in
        :mod:`pdbtool.search.ray_backend` overrides this to run it on a Ray cluster)."""
        from .parallel import parallel_search

        return parallel_search(self.heuristic, state, h0, threads, deadline=deadline, node_limit=node_limit,
                               progress=progress, chunk=chunk)


def _finish(result: SolveResult, state, moves, nb, counts, start: float, cpu_seconds: float) -> SolveResult:
    """Fill in ``result``: the solution from the blank's ``moves`` (None: the limits stopped the search), the
    counts (``generated``, ``expanded``, ``iterations`` of ``counts``) and the times."""
    if moves is not None:
        result.solution = _tiles_moved(state, moves, nb)
        result.length = len(moves)
        result.solved = True
    else:
        result.timed_out = True
    result.nodes_generated = counts.generated
    result.nodes_expanded = counts.expanded
    result.iterations = counts.iterations
    result.seconds = time.perf_counter() - start
    result.cpu_seconds = cpu_seconds
    return result


def _check_search_threads(threads) -> int:
    threads = 1 if threads is None else int(threads)
    if threads < 1:
        raise SolverError(f"search threads must be at least 1, not {threads}")
    return threads


@dataclass
class SolveOptions:
    """What a batch is solved with (picklable, so that worker processes can rebuild the solvers)."""

    heuristic: str = "pdb"
    partition: str | None = None
    reflect: bool = True
    cache_dir: str | None = None
    time_limit: float | None = None
    node_limit: int | None = None
    threads: int | None = None
    dynamic: str | None = None
    search_threads: int = 1
    encoding: str = "byte"
    group: int | None = None
    blank: str = "minimized"


class SolverPool:
    """Solvers per board for one set of options, created on first use; a failure is remembered per board."""

    def __init__(self, options: SolveOptions, notify: Callable[[str], None] | None = None):
        self.options = options
        self.notify = notify
        self._solvers: dict[Board, Solver | Exception] = {}

    def get(self, board: Board) -> Solver:
        if board not in self._solvers:
            try:
                self._solvers[board] = self.make(board)
            except PdbtoolError as exc:
                self._solvers[board] = exc
        solver = self._solvers[board]
        if isinstance(solver, Exception):
            raise solver
        return solver

    def make(self, board: Board) -> Solver:
        """A new solver of ``board`` with the pool's options (``RaySolver``'s pool makes those)."""
        o = self.options
        return Solver(board, heuristic=o.heuristic, partition=o.partition, reflect=o.reflect,
                      cache_dir=o.cache_dir, threads=o.threads, notify=self.notify, dynamic=o.dynamic,
                      search_threads=o.search_threads, encoding=o.encoding, group=o.group, blank=o.blank)

    def solve(self, inst, progress: Callable[[int, int, int], None] | None = None) -> SolveResult:
        """Solve one ``instances.Instance``; input and setup errors come back in ``result.error``."""
        result = SolveResult(id=inst.id, optimal=inst.optimal, line=inst.line, source=inst.source,
                             board=inst.board.dims if inst.board is not None else "",
                             heuristic=self.options.heuristic)
        if inst.error is None:
            try:
                solver = self.get(inst.board)
                solved = solver.solve(inst.tiles, time_limit=self.options.time_limit,
                                      node_limit=self.options.node_limit, progress=progress)
            except PdbtoolError as exc:
                result.error = f"{inst.where}: {exc}"
                return result
            solved.id, solved.optimal, solved.line, solved.source = inst.id, inst.optimal, inst.line, inst.source
            result = solved
            if result.solved and result.optimal is not None and result.length != result.optimal:
                result.error = (f"{inst.where}: found an optimal length of {result.length}, "
                                f"but the file says {result.optimal}")
        else:
            result.error = f"{inst.where}: {inst.error}"
        return result


_WORKER_POOL: SolverPool | None = None


def _worker_init(options: SolveOptions) -> None:
    global _WORKER_POOL
    _WORKER_POOL = SolverPool(options)


def _worker_solve(inst):
    return _WORKER_POOL.solve(inst)


def solve_batch(instances, options: SolveOptions | None = None, jobs: int = 1,
                notify: Callable[[str], None] | None = None, progress=None):
    """Yield a ``SolveResult`` per instance, in input order; ``jobs > 1`` solves in spawned processes.

    ``progress(instance, bound, generated, expanded)`` is called between chunks of a long search (in this
    process only, that is with ``jobs`` 1).

    The tables are built (or checked) once in this process before the workers start; the workers
    memory-map the same files, so the page cache holds one copy."""
    options = options or SolveOptions()
    instances = list(instances)
    pool = SolverPool(options, notify)
    boards = []
    for inst in instances:
        if inst.error is None and inst.board not in boards:
            boards.append(inst.board)
    for board in boards:
        try:
            pool.get(board)
        except PdbtoolError:
            pass  # reported per instance
    if jobs <= 1 or len(instances) <= 1:
        for inst in instances:
            report = None
            if progress is not None:
                def report(bound, generated, expanded, inst=inst):
                    progress(inst, bound, generated, expanded)
            yield pool.solve(inst, report)
        return
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(processes=min(jobs, len(instances)), initializer=_worker_init, initargs=(options,)) as workers:
        yield from workers.imap(_worker_solve, instances, chunksize=1)


def _tiles_moved(state: Sequence[int], moves: Sequence[int], nb: np.ndarray) -> list[int]:
    tiles = list(state)
    blank = tiles.index(0)
    moved = []
    for m in moves:
        q = int(nb[blank, m])
        moved.append(tiles[q])
        tiles[blank], tiles[q] = tiles[q], 0
        blank = q
    return moved


def replay(board: Board, state: Sequence[int], solution: Sequence[int]) -> tuple[int, ...]:
    """Apply a solution (the tiles moved, in order) to a state; raise SolverError on an illegal move."""
    tiles = list(state)
    blank = tiles.index(0)
    nb = board.neighbours()
    for t in solution:
        q = tiles.index(t) if 0 < t < board.n else -1
        if q < 0 or q not in nb[blank]:
            raise SolverError(f"tile {t} is not next to the blank")
        tiles[blank], tiles[q] = t, 0
        blank = q
    return tuple(tiles)


__all__ = ["Solver", "SolveResult", "SolverError", "SolveOptions", "SolverPool", "solve_batch", "replay",
           "HeuristicError"]
