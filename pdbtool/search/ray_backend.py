"""Solving on a Ray cluster: a task per instance for a batch, a task per unit of work for one instance.

Ray is an optional dependency (``pip install 'pdbtool[ray]'``); this module imports it only when a
session opens (:func:`ray_session`), and without it fails with one line saying how to install it.

* :func:`ray_session` connects to a cluster by address (``auto``, ``ray://host:10001``, ``host:6379``)
  or starts a local Ray instance for the block and stops it after.
* The tables reach each node's cache once (:mod:`pdbtool.search.ray_tables`); the workers load them
  through the cache, which memory-maps them, so the workers of a node share one copy.
* :class:`RaySolver` solves one instance with the one parallel search
  (:func:`pdbtool.search.parallel.parallel_search`), its units as tasks (:mod:`pdbtool.search.ray_search`).
* :func:`solve_batch` yields one ``SolveResult`` per instance, in input order, each as soon as it and the
  instances before it are done (the same results as :func:`pdbtool.search.solver.solve_batch`).

Tasks are owned by the driver: when the driver's process ends, Ray cancels them and stops the workers
running them, so a lost driver leaves no work behind.  A task whose worker or node dies is run again
elsewhere (Ray's task retries); a search is a pure function of its arguments, so a retry gives the same
result.
"""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from dataclasses import asdict, replace
from pathlib import Path
from collections.abc import Callable, Iterable, Iterator
from typing import cast

from ..errors import PdbtoolError
from ..tables.cache import TableCache
from .driver import INF, Tally
from .parallel import SERIAL_BELOW, parallel_search
from .ray_search import (STALL_SECONDS, TASK_RETRIES, UNIT_NODES, UNITS_PER_WORKER, WAIT_SECONDS, ClusterError,
                         RayUnits, Watch, board_poll, get, heartbeat, new_board, one_line, wait)
from .ray_tables import StageReport, stage_tables
from .solver import CHUNK_NODES, SolveOptions, SolveResult, Solver, SolverPool
from .units import UnitResult, search_unit

INSTALL_HINT = "pip install 'pdbtool[ray]'"
LOCAL = "local"        # the address that starts a local Ray instance for the run


def import_ray():
    """The ``ray`` module, or a one-line ``ClusterError`` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ClusterError(f"--ray needs Ray, which is not installed: {INSTALL_HINT}") from None
    return ray


@contextmanager
def ray_session(address: str | None = None, num_cpus: int | None = None,
                notify: Callable[[str], None] | None = None) -> Iterator:
    """Ray, connected for the block: to the cluster at ``address``, or (``None`` or ``"local"``) to a local
    instance started for the block with ``num_cpus`` CPUs (default: all) and stopped after.  ``notify`` is
    told how long the start or the connection took.  A connection this process already has (``ray.init``
    called by the caller) is used as it is and left open.  Failures are one-line ``ClusterError``."""
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    local = address in (None, LOCAL)
    start = time.perf_counter()
    try:  # workers' output stays in the cluster's logs: stdout carries the results (JSON Lines, CSV)
        if address is None or address == LOCAL:
            ray.init(num_cpus=num_cpus, include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False)
        elif address.startswith("ray://"):
            ray.init(address=address, logging_level=logging.WARNING)
        else:
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
        where = "start a local Ray instance" if local else f"connect to Ray at {address}"
        raise ClusterError(f"cannot {where}: {one_line(exc)}") from None
    try:
        if notify is not None:
            cpus = int(ray.cluster_resources().get("CPU", 0))
            what = "started a local Ray instance" if local else f"connected to Ray at {address}"
            notify(f"ray: {what} ({cpus} CPUs) in {time.perf_counter() - start:.1f} s")
        yield ray
    finally:
        ray.shutdown()


class _RecordingCache(TableCache):
    """A table cache that notes the files of the tables it hands out (those a solver memory-maps)."""

    def __init__(self, cache_dir=None, notify=None):
        super().__init__(cache_dir, notify)
        self.files: list[Path] = []
        self._depth = 0

    def get(self, *args, **kwargs):
        self._depth += 1  # an encoded table's get calls get for the byte table: note the outer one only
        try:
            table = super().get(*args, **kwargs)
        finally:
            self._depth -= 1
        if self._depth == 0 and table.path is not None:
            self.files.append(Path(table.path))
        return table


_SAME = object()


class RaySolver(Solver):
    """A :class:`Solver` whose searches run on a Ray cluster: each large IDA* iteration's units of work as
    Ray tasks (:class:`pdbtool.search.ray_search.RayUnits`), the tables in each node's cache.

    Built from a :class:`SolveOptions` (a partition by name or file, so that workers can rebuild the
    heuristic); missing tables are built here.  ``address`` / ``num_cpus`` as :func:`ray_session` takes
    them: each :meth:`solve` opens a session unless this process has a connection already (``ray.init``
    by the caller, or a :func:`ray_session` around the calls).  ``node_cache_dir``: the nodes' table cache
    (default ``options.cache_dir``, a path on each node; None: each node's default).  An iteration is cut
    into ``units_per_worker`` units per worker, or into units of about ``unit_nodes`` nodes when it is
    estimated larger (:func:`pdbtool.search.parallel.units_wanted`); one after an iteration of fewer than
    ``serial_below`` nodes runs here.  ``stall_seconds``: the deadline of :class:`ray_search.Watch`.

    Example::

        solver = RaySolver(Board(5, 5), SolveOptions(partition="24-6-6-6-6"), address="auto")
        result = solver.solve(state)
    """

    def __init__(self, board=None, options: SolveOptions | None = None, address: str | None = None,
                 notify: Callable[[str], None] | None = None, node_cache_dir=_SAME, num_cpus: int | None = None,
                 units_per_worker: int = UNITS_PER_WORKER, serial_below: int = SERIAL_BELOW,
                 unit_nodes: int | None = UNIT_NODES, stall_seconds: float = STALL_SECONDS):
        options = options or SolveOptions()
        cache = _RecordingCache(options.cache_dir, notify)
        super().__init__(board, heuristic=options.heuristic, partition=options.partition, reflect=options.reflect,
                         cache=cache, cache_dir=options.cache_dir, threads=options.threads, notify=notify,
                         dynamic=options.dynamic, encoding=options.encoding, group=options.group,
                         blank=options.blank, pruning=options.pruning, fsm_depth=options.fsm_depth)
        self.files = cache.files  # the table files the workers need
        self.address, self.num_cpus, self.notify = address, num_cpus, notify
        node_dir = options.cache_dir if node_cache_dir is _SAME else node_cache_dir
        self.node_cache_dir = None if node_dir is None else str(node_dir)
        self.worker_options = replace(options, cache_dir=self.node_cache_dir, threads=None, search_threads=1,
                                      checkpoint=None)
        self.units_per_worker, self.serial_below, self.unit_nodes = units_per_worker, serial_below, unit_nodes
        self.stall_seconds = stall_seconds
        self.workers = 0          # the cluster's CPUs during the last solve
        self.outcome = None       # the ParallelOutcome of the last solve
        self.executor: RayUnits | None = None  # the RayUnits of the last solve
        self.stage: StageReport | None = None  # the tables' staging in this session
        self._staged_in = None    # the session (Ray job) the tables were staged in

    def solve(self, state, time_limit: float | None = None, node_limit: int | None = None,
              progress: Callable[[int, int, int], None] | None = None, chunk: int = CHUNK_NODES,
              threads: int | None = None, checkpoint=None, checkpoint_every: float = 60.0) -> SolveResult:
        """Solve one state optimally on the cluster (``threads=1``: here, on one thread, as ``Solver``).
        ``cpu_seconds`` is the driver's CPU time (the workers' is not gathered).  ``checkpoint`` as
        :meth:`Solver.solve` takes it: the units done are recorded as they come back from the cluster."""
        more = dict(checkpoint=checkpoint, checkpoint_every=checkpoint_every)
        if threads == 1:
            return super().solve(state, time_limit, node_limit, progress, chunk, threads=1, **more)
        state = self.board.check_state(state)
        ray = import_ray()
        if not ray.is_initialized():
            with ray_session(self.address, self.num_cpus, self.notify):
                return self.solve(state, time_limit, node_limit, progress, chunk, threads, **more)
        session = ray.get_runtime_context().get_job_id()
        if self._staged_in != session:  # the tables are staged once per session
            self.stage = stage_tables(ray, self.files, self.node_cache_dir, checked_here=True)
            self._staged_in = session
            if self.notify is not None:
                self.notify(self.stage.describe())
        options, board, start = self.worker_options, self.board, tuple(state)
        task = ray.remote(num_cpus=1, max_retries=TASK_RETRIES)(search_unit_task)

        def submit(unit, units_board, slot, seconds_left, nodes_left):
            return task.remote(options, board, start, unit, units_board, slot, seconds_left, nodes_left)

        self.executor = executor = RayUnits(ray, submit, self.stall_seconds)
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        try:  # any count above one takes Solver.solve's parallel path, which _parallel_outcome runs here
            return super().solve(state, time_limit, node_limit, progress, chunk, threads=max(2, self.workers),
                                 **more)
        finally:
            executor.close()

    def _executor_options(self) -> dict:
        options = dict(search_units=self.executor, serial_below=self.serial_below, report_every=WAIT_SECONDS,
                       frontier_per_thread=self.units_per_worker)
        return options if self.unit_nodes is None else dict(options, unit_nodes=self.unit_nodes)

    def _parallel_outcome(self, state, h0, threads, deadline, node_limit, progress, chunk):
        self.outcome = parallel_search(self.heuristic, state, h0, self.workers, deadline=deadline,
                                       node_limit=node_limit, progress=progress, chunk=chunk,
                                       frontier_per_thread=self.units_per_worker, serial_below=self.serial_below,
                                       report_every=WAIT_SECONDS, search_units=self.executor,
                                       unit_nodes=self.unit_nodes)
        return self.outcome


_WORKER_POOLS: dict[tuple, SolverPool] = {}


def worker_pool(options: SolveOptions) -> SolverPool:
    """This worker process's solvers for ``options`` (kept between tasks: tables mapped, kernels loaded)."""
    key = tuple(sorted(asdict(options).items()))
    if key not in _WORKER_POOLS:
        _WORKER_POOLS[key] = SolverPool(options)
    return _WORKER_POOLS[key]


def search_unit_task(options: SolveOptions, board, state, unit, units_board, slot: int,
                     seconds_left: float | None, nodes_left: int | None) -> UnitResult:
    """One instance's task: one unit of work (its ``UnitResult``; when a limit or the driver, through
    ``units_board``, stopped it, a result ``stopped`` with the nodes searched until then)."""
    tally = Tally(nodes_left, None if seconds_left is None else time.perf_counter() + seconds_left)
    poll = board_poll(units_board, slot, tally)
    poll()  # the unit is taken
    with heartbeat(units_board, slot):
        solver = worker_pool(options).get(board)
        result = search_unit(solver.heuristic, state, unit, tally=tally, progress=poll)
    if result is None:
        return UnitResult(tally.generated, tally.expanded, INF, None, stopped=True)
    return result


def solve_instance_task(options: SolveOptions, inst, units_board, slot: int) -> SolveResult:
    """A batch's task: one instance, solved on one worker (which tells the board it is alive)."""
    with heartbeat(units_board, slot):
        return worker_pool(options).solve(inst)


def prepare_nodes(ray, instances, options: SolveOptions, node_cache_dir: str | None,
                  notify: Callable[[str], None] | None = None) -> StageReport:
    """Build or check the tables of every board of ``instances`` here, then put them on every node."""
    files: list[Path] = []
    for board in dict.fromkeys(inst.board for inst in instances if inst.error is None):
        try:
            files += RaySolver(board, options, notify=notify).files
        except PdbtoolError:
            pass  # reported per instance by the workers
    report = stage_tables(ray, files, node_cache_dir, checked_here=True)
    if notify is not None:
        notify(report.describe())
    return report


class _RaySolverPool(SolverPool):
    """A :class:`SolverPool` of :class:`RaySolver` (``kwargs``: RaySolver's keyword arguments)."""

    def __init__(self, options: SolveOptions, notify, kwargs: dict):
        super().__init__(options, notify)
        self.kwargs = kwargs

    def make(self, board) -> Solver:
        return RaySolver(board, self.options, notify=self.notify, **self.kwargs)

    def get(self, board) -> RaySolver:
        return cast(RaySolver, super().get(board))  # every solver of this pool comes from make above


def solve_batch(instances: Iterable, options: SolveOptions | None = None, address: str | None = None,
                notify: Callable[[str], None] | None = None, node_cache_dir=_SAME, num_cpus: int | None = None,
                on_stage: Callable[[StageReport], None] | None = None, progress=None, split: bool | None = None,
                split_options: dict | None = None, stall_seconds: float = STALL_SECONDS) -> Iterator[SolveResult]:
    """Yield a ``SolveResult`` per instance, in input order: each instance in its own Ray task, or with
    ``split`` (default: when there is one instance) each instance's iterations cut into units of work that
    run as tasks (:class:`RaySolver`; ``split_options``: its tuning keywords, and ``progress(instance,
    bound, generated, expanded, workers=N)`` is called while it runs); with ``options.checkpoint``, split
    is the default, one search at a time recording its units as they come back.

    ``address`` and ``num_cpus`` as :func:`ray_session` takes them.  The nodes keep their tables in the
    cache at ``node_cache_dir`` (default: ``options.cache_dir``, a path taken on each node; ``None``: each
    node's default cache).  An instance the cluster loses for good (its task failed ``TASK_RETRIES`` + 1
    times) comes back with ``error`` set; so does every instance not yet done when no worker has been heard
    from for ``stall_seconds``.  Closing the generator early (or an exception in it, Ctrl-C included) ends
    a session this call opened, and with it the tasks still running."""
    options = options or SolveOptions()
    instances = list(instances)
    node_dir = options.cache_dir if node_cache_dir is _SAME else node_cache_dir
    if split is None:  # a checkpoint follows one search at a time
        split = len(instances) == 1 or options.checkpoint is not None
    with ray_session(address, num_cpus, notify) as ray:
        if split:
            kwargs = dict(node_cache_dir=node_dir, stall_seconds=stall_seconds, **(split_options or {}))
            pool = _RaySolverPool(options, notify, kwargs)
            for inst in instances:
                report = None
                if progress is not None:
                    def report(bound, generated, expanded, inst=inst):
                        progress(inst, bound, generated, expanded, workers=pool.get(inst.board).workers)
                result = pool.solve(inst, report)
                if on_stage is not None and inst.error is None and result.error is None:
                    stage = pool.get(inst.board).stage
                    if stage is not None:  # staged by the solve that gave the result
                        on_stage(stage)
                yield result
            return
        staged = prepare_nodes(ray, instances, options, node_dir, notify)
        if on_stage is not None:
            on_stage(staged)
        worker_options = replace(options, cache_dir=None if node_dir is None else str(node_dir),
                                 threads=None, search_threads=1, checkpoint=None)
        task = ray.remote(num_cpus=1, max_retries=TASK_RETRIES)(solve_instance_task)
        board = new_board(ray)
        refs = {i: task.remote(worker_options, inst, board, i) for i, inst in enumerate(instances)
                if inst.error is None}
        yield from _in_input_order(ray, instances, refs, SolverPool(options), Watch(ray, board, stall_seconds))


def _in_input_order(ray, instances, refs: dict, local: SolverPool, watch: Watch) -> Iterator[SolveResult]:
    """The results of the tasks ``refs`` (index -> reference), each yielded once its predecessors were;
    the lines that could not be read are answered by ``local``."""
    index = {ref: i for i, ref in refs.items()}
    pending = list(refs.values())
    done: dict[int, SolveResult] = {i: local.solve(inst) for i, inst in enumerate(instances) if i not in refs}
    for next_i in range(len(instances)):
        while next_i not in done:
            ready, pending = wait(ray, pending)
            for ref in ready:
                i = index[ref]
                done[i] = _result_of(ray, ref, instances[i])
                watch.heard()
            if not ready:
                try:
                    watch.check()
                except ClusterError as exc:  # every instance still running fails with the one line
                    for i in index.values():
                        done.setdefault(i, _failed(instances[i], str(exc)))
                    pending = []
        yield done.pop(next_i)


def _failed(inst, reason: str) -> SolveResult:
    return SolveResult(id=inst.id, optimal=inst.optimal, line=inst.line, source=inst.source,
                       board=inst.board.dims, error=f"{inst.where}: {reason}")


def _result_of(ray, ref, inst) -> SolveResult:
    """A task's result, or the instance with ``error`` set when the cluster lost it."""
    try:
        return get(ray, ref, "the instance")
    except ClusterError as exc:
        return _failed(inst, str(exc))


__all__ = ["ClusterError", "INSTALL_HINT", "RaySolver", "ray_session", "solve_batch", "prepare_nodes",
           "worker_pool", "search_unit_task", "solve_instance_task"]
