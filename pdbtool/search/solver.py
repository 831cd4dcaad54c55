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

import functools
import time
from dataclasses import asdict, dataclass, field
from collections.abc import Callable, Sequence

import numpy as np

from ..puzzle.board import Board
from ..errors import PdbtoolError
from .. import processes, registry
from ..heuristics import HeuristicError, make_heuristic
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
    signal: int | None = None  # the signal that killed the worker process solving it (twice)
    check: str | None = None   # result_check: ties a results file's line to its instance and its figures


    def to_dict(self) -> dict:
        return asdict(self)


class SolverError(PdbtoolError):
    pass


def result_check(board_dims: str, tiles, result) -> str:
    """A hash of an instance's board and cells and of its result's length, moves, ``# optimal`` and h0,
    written in each line of a results file: on resume, a held line is matched to the very instance it
    solved (not to another one under the same id), and a line edited by hand is known as such."""
    import xxhash

    text = (f"{board_dims}:{' '.join(map(str, tiles))}:{result.length}:{result.optimal}:{result.h0}:"
            f"{' '.join(map(str, result.solution))}")
    return xxhash.xxh64(text.encode()).hexdigest()


class Solver:
    """An optimal solver for one board: IDA* with a heuristic chosen by name.

    * ``heuristic``: a name of :data:`pdbtool.registry.HEURISTICS`: ``pdb`` (default), ``manhattan``,
      ``linear-conflict``, ``ddb`` or ``max``.
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
    * ``blank``: the tables' blank rule, ``minimized`` (default), ``ignored`` or ``zero-aware``.
    * ``encoding`` / ``group`` (pdb): search tables stored in a compact encoding (:mod:`pdbtool.tables.encodings`,
      kernel :mod:`pdbtool.heuristics.encoded`); ``mod3`` and ``parity`` need ``blank="ignored"``.  Lossless
      encodings give the byte encoding's node counts and solutions.
    * ``pruning``: ``parent`` or ``fsm`` (:mod:`pdbtool.search.move_automaton`); default: the board's
      (:func:`pdbtool.registry.default_pruning`: ``fsm`` on 5x5, ``parent`` elsewhere).  ``fsm_depth``: the
      longest duplicates the automaton prunes (default :func:`pdbtool.search.move_automaton.default_depth`).
    """

    def __init__(self, board: Board | None = None, heuristic: str = "pdb", partition=None, reflect: bool = True,
                 cache=None, cache_dir=None, tables: Sequence[np.ndarray] | None = None,
                 threads: int | None = None, notify: Callable[[str], None] | None = None,
                 dynamic: str | None = None, search_threads: int = 1, encoding: str = "byte",
                 group: int | None = None, blank: str = "minimized", pruning: str | None = None,
                 fsm_depth: int | None = None):
        from .automata import with_pruning
        from .move_automaton import check_depth, check_pruning, default_depth

        self.pruning = check_pruning(pruning) if pruning is not None else None
        if fsm_depth is not None:
            check_depth(fsm_depth)
        try:
            entry = registry.heuristic(heuristic)
            registry.choose("blank rule", registry.BLANK_RULES, blank)
        except registry.RegistryError as exc:
            raise SolverError(str(exc)) from None
        part = plan = None
        self._catalogue = False
        patterns = None
        self.partition_name = None
        self.dynamic = (dynamic or registry.DEFAULT_DYNAMIC_SET) if entry.dynamic else None
        shared = None
        if encoding != "byte" or group is not None:
            if not entry.encodings:
                raise SolverError(f"--encoding applies to --heuristic pdb only, not {heuristic}")
            from ..heuristics.encoded import check_encoding

            enc_params = check_encoding(encoding, blank, group)
        else:
            enc_params = {}
        self.encoding, self.blank = encoding, blank
        if entry.partition:
            from ..tables.resolve import resolve_partition

            part = resolve_partition(partition, board)
            patterns, self.partition_name, board = list(part.patterns), part.name, part.board
            # a catalogue: the catalogue kernel (pdbtool.heuristics.catalogue)
            self._catalogue = hasattr(part, "partitions")
            if (self._catalogue or blank == "zero-aware") and (heuristic not in ("pdb", "max") or encoding != "byte"):
                raise SolverError("catalogues and zero-aware tables go with --heuristic pdb or max and byte tables")
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
        if self.pruning is None:
            self.pruning = registry.default_pruning(board.dims)
        self.heuristic_name = heuristic
        self.reflect = reflect if entry.partition else False
        heuristic_object = make_heuristic(heuristic, board=board, patterns=patterns, tables=tables,
                                          reflect=self.reflect, shared=shared, encoding=encoding,
                                          encoding_params=enc_params, partition=part, plan=plan, blank=blank,
                                          dynamic=self.dynamic, cache=cache, cache_dir=cache_dir, threads=threads,
                                          notify=notify)
        if fsm_depth is not None and self.pruning != "fsm":
            raise SolverError(f"an automaton's depth applies to --pruning fsm, and {board.dims} searches with "
                              f"{self.pruning} by default")
        self.fsm_depth = (int(fsm_depth) if fsm_depth is not None else default_depth(board)) \
            if self.pruning == "fsm" else None
        if self.pruning == "fsm" and cache is None:  # where a deep automaton is kept
            from ..tables.cache import TableCache

            cache = TableCache(cache_dir, notify=notify)
        # the parent rule: the heuristic itself
        self.heuristic = with_pruning(heuristic_object, self.pruning, self.fsm_depth, cache)
        self.nb = board.neighbours()
        self.goal_tiles = np.array(board.goal_tiles, dtype=np.int64)
        self.search_threads = _check_search_threads(search_threads)

    _warm = False
    _catalogue = False
    fsm_depth: int | None = None

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
        if self.pruning != "fsm":
            return self._label()
        from .checkpoint import LEGACY_FSM_DEPTH

        # the automaton's depth where it is not the one "fsm" has always meant (results files carry labels)
        return self._label() + (" fsm" if self.fsm_depth == LEGACY_FSM_DEPTH else f" fsm{self.fsm_depth}")

    def _label(self) -> str:
        if self.heuristic_name == "ddb":
            return f"ddb-{self.dynamic}"
        if self.heuristic_name == "max":
            blank = f" {self.blank}" if self.blank != "minimized" else ""
            return f"max({self.partition_name}{'+reflect' if self.reflect else ''}{blank}, ddb-{self.dynamic})"
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

    def solve(self, state: Sequence[int], *args, **kwargs) -> SolveResult:
        """Solve one state optimally (:meth:`_solve`); the heuristic's faults and a solution that contradicts
        it (:mod:`pdbtool.search.solution_check`) are an error naming the tables."""
        from .solution_check import check_solution, guarded, is_consistent

        with guarded(self):
            result = self._solve(state, *args, **kwargs)
            if result.solved:
                check_solution(self.heuristic, self.board.check_state(state), result.solution, self.label,
                               is_consistent(self))
        return result

    def _solve(self, state: Sequence[int], time_limit: float | None = None, node_limit: int | None = None,
               progress: Callable[[int, int, int], None] | None = None, chunk: int = CHUNK_NODES,
               threads: int | None = None, checkpoint=None, checkpoint_every: float = 60.0) -> SolveResult:
        """Solve one state optimally.  ``progress(bound, generated, expanded)`` is called between chunks.

        With a time or node limit, an instance that runs out is returned with ``solved=False``.  With
        ``threads`` > 1 (default: the solver's ``search_threads``), each iteration's subtrees are searched
        by that many threads (:mod:`pdbtool.search.parallel`); ``cpu_seconds`` is then the CPU time of the whole
        process during the search.  ``checkpoint``: a file path; the search records its progress there every
        ``checkpoint_every`` seconds and resumes from it (:mod:`pdbtool.search.checkpoint`; the counts and
        ``seconds`` then include the earlier runs'); the file is removed when the goal is found."""
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
        if checkpoint is not None:
            return self._solve_checkpointed(state, search.h0, result, threads, start, checkpoint, checkpoint_every,
                                            time_limit, node_limit, progress)
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

    def checkpoint_identity(self, state: Sequence[int], legacy: bool = False) -> dict:
        """What a checkpoint of the search of ``state`` is written for (:func:`checkpoint.search_identity`):
        the board, goal and state, the heuristic's label, the options that change the counts, and the tables'
        identities (checksums of their payloads; ``legacy``: of their files, as older versions wrote)."""
        from .checkpoint import LEGACY_FSM_DEPTH, search_identity, tables_identity

        options = {"pruning": getattr(self, "pruning", None)}
        # another depth prunes another tree, so splits other units; a checkpoint without one is of the legacy depth
        if self.fsm_depth is not None and self.fsm_depth != LEGACY_FSM_DEPTH:
            options["fsm_depth"] = self.fsm_depth
        cache = self.__dict__.setdefault("_tables_identity", {})
        if legacy not in cache:  # a pass over every table: once per solver
            cache[legacy] = tables_identity(getattr(self, "_keep", None), self.heuristic, legacy)
        return search_identity(self.board, state, self.label, options, cache[legacy])

    def _solve_checkpointed(self, state, h0, result, threads, start, path, every, time_limit, node_limit,
                            progress) -> SolveResult:
        from .checkpoint import Recorder, checkpointed_search

        cpu_start = time.process_time()
        recorder = Recorder(path, self.checkpoint_identity(state), every,
                            legacy=lambda: self.checkpoint_identity(state, legacy=True))
        out = checkpointed_search(self.heuristic, state, h0, recorder, threads,
                                  deadline=None if time_limit is None else start + time_limit,
                                  node_limit=node_limit, progress=progress, **self._executor_options())
        _finish(result, state, out.moves, self.nb, out, start, time.process_time() - cpu_start)
        result.seconds = recorder.seconds
        return result

    def _executor_options(self) -> dict:
        """How a checkpointed search shares out its units: threads here (``RaySolver`` gives its executor)."""
        return {}

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
    pruning: str | None = None         # None: the board's default (registry.default_pruning)
    fsm_depth: int | None = None       # None: the board's default (move_automaton.default_depth)
    checkpoint: str | None = None      # a file recording the search (pdbtool.search.checkpoint), or one per
    #                                    instance: a directory or a name with {id} (checkpoint.per_instance)
    checkpoint_every: float = 60.0     # seconds between its records


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

    def labels(self, instances) -> dict[str, str]:
        """The heuristic's label (:attr:`Solver.label`) per board of ``instances``, for those that have a
        solver (a board whose set-up fails has none)."""
        out = {}
        for inst in instances:
            if inst.error is None and inst.board.dims not in out:
                try:
                    out[inst.board.dims] = self.get(inst.board).label
                except PdbtoolError:
                    pass
        return out

    def make(self, board: Board) -> Solver:
        """A new solver of ``board`` with the pool's options (``RaySolver``'s pool makes those)."""
        o = self.options
        return Solver(board, heuristic=o.heuristic, partition=o.partition, reflect=o.reflect,
                      cache_dir=o.cache_dir, threads=o.threads, notify=self.notify, dynamic=o.dynamic,
                      search_threads=o.search_threads, encoding=o.encoding, group=o.group, blank=o.blank,
                      pruning=o.pruning, fsm_depth=o.fsm_depth)

    def solve(self, inst, progress: Callable[[int, int, int], None] | None = None) -> SolveResult:
        """Solve one ``instances.Instance``; input and setup errors come back in ``result.error``."""
        result = SolveResult(id=inst.id, optimal=inst.optimal, line=inst.line, source=inst.source,
                             board=inst.board.dims if inst.board is not None else "",
                             heuristic=self.options.heuristic)
        if inst.error is None:
            try:
                solver = self.get(inst.board)
                extra = {}
                if self.options.checkpoint is not None:
                    from .checkpoint import instance_checkpoint

                    extra = {"checkpoint": instance_checkpoint(self.options.checkpoint, inst.id),
                             "checkpoint_every": self.options.checkpoint_every}
                solved = solver.solve(inst.tiles, time_limit=self.options.time_limit,
                                      node_limit=self.options.node_limit, progress=progress, **extra)
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
        if inst.error is None:
            result.check = result_check(inst.board.dims, inst.tiles, result)
        return result


def _worker_solver(options: SolveOptions) -> Callable:
    """A worker process's handler (:class:`pdbtool.processes.WorkerPool`): its own solver pool's ``solve``."""
    return SolverPool(options).solve


class WorkerPool(processes.WorkerPool):
    """Processes that solve instances, each worker one at a time; a dead worker is replaced, and the
    instance it held tried once more, then reported failed with the signal (:class:`pdbtool.processes.
    WorkerPool`)."""

    def __init__(self, options: SolveOptions, size: int):
        self.options = options
        self._instances: list = []
        super().__init__(size, functools.partial(_worker_solver, options), self._lost, SolverError)

    def __enter__(self) -> WorkerPool:
        return self

    def solve(self, instances, started: Callable[[int, int], None] | None = None):
        """Yield ``(index, result)`` for every instance, in the order they end."""
        self._instances = list(instances)
        return self.run(self._instances, started)

    def _lost(self, index: int, how: str, signum: int | None) -> SolveResult:
        inst = self._instances[index]
        result = SolveResult(id=inst.id, optimal=inst.optimal, line=inst.line, source=inst.source,
                             board=inst.board.dims if inst.board is not None else "", signal=signum)
        result.error = f"{inst.where}: the worker solving it was {how}, twice (once retried)"
        return result


def solve_batch(instances, options: SolveOptions | None = None, jobs: int = 1,
                notify: Callable[[str], None] | None = None, progress=None,
                done: Callable[[int, SolveResult], None] | None = None,
                started: Callable[[int, int], None] | None = None, pool: SolverPool | None = None):
    """Yield a ``SolveResult`` per instance, in input order; ``jobs > 1`` solves in spawned processes.

    ``progress(instance, bound, generated, expanded)`` is called between chunks of a long search (in this
    process only, that is with ``jobs`` 1).  ``done(index, result)`` is called as each instance ends, in the
    order they end (before its result is yielded, which waits for the instances before it);
    ``started(index, pid)`` when a worker process (``jobs > 1``) starts an instance.  ``pool``: the solvers
    of this process (default: a new :class:`SolverPool` of ``options``).

    The tables are built (or checked) once in this process before the workers start; the workers
    memory-map the same files, so the page cache holds one copy.  A worker that dies (a signal: the OOM
    killer's SIGKILL) is replaced; the instance it held is tried once more in the new worker, and if that
    dies too, it is reported failed with the signal in ``error`` and ``signal``."""
    options = options or SolveOptions()
    instances = list(instances)
    pool = pool or SolverPool(options, notify)
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
        for index, inst in enumerate(instances):
            report = None
            if progress is not None:
                def report(bound, generated, expanded, inst=inst):
                    progress(inst, bound, generated, expanded)
            result = pool.solve(inst, report)
            if done is not None:
                done(index, result)
            yield result
        return
    waiting: dict[int, SolveResult] = {}
    head = 0
    with WorkerPool(options, jobs) as workers:
        for index, result in workers.solve(instances, started):
            if done is not None:
                done(index, result)
            waiting[index] = result
            while head in waiting:
                yield waiting.pop(head)
                head += 1


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


__all__ = ["Solver", "SolveResult", "SolverError", "SolveOptions", "SolverPool", "WorkerPool", "solve_batch", "replay",
           "HeuristicError"]
