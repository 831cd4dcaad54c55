"""Solving on a Ray cluster: a task per instance for a batch, a task per unit of work for one instance.

Ray is an optional dependency (``pip install 'pdbtool[ray]'``); this module imports it only when a
session opens (:func:`ray_session`), and without it fails with one line saying how to install it.

* :func:`ray_session` connects to a cluster by address (``auto``, ``ray://host:10001``, ``host:6379``)
  or starts a local Ray instance for the block and stops it after; :func:`ray_session_started` starts a
  local one on a thread of its own, so that one instance's first iterations run here meanwhile.
* The tables reach each node's cache once (:mod:`pdbtool.search.ray_tables`); the workers load them
  through the cache, which memory-maps them, so the workers of a node share one copy.
* :func:`solve_batch` yields one ``SolveResult`` per instance, in input order, each as soon as it and the
  instances before it are done (the same results as :func:`pdbtool.search.solver.solve_batch`).

Tasks are owned by the driver: when the driver's process ends, Ray cancels them and stops the workers
running them, so a lost driver leaves no work behind.  A task whose worker or node dies is run again
elsewhere (Ray's task retries); a search is a pure function of its arguments, so a retry gives the same
result.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, replace
from pathlib import Path
from typing import Callable, Iterable, Iterator

from ..errors import PdbtoolError
from ..tables.cache import TableCache
from .driver import INF, Tally
from .parallel import SERIAL_BELOW, parallel_search
from .ray_search import (RESPLIT_AFTER, UNIT_NODES, UNITS_PER_WORKER, WAIT_SECONDS, ClusterError, RayUnits, stop_check,
                         wait)
from .ray_tables import StageReport, stage_tables
from .solver import CHUNK_NODES, SolveOptions, SolveResult, Solver, SolverPool
from .units import UnitResult, search_unit

INSTALL_HINT = "pip install 'pdbtool[ray]'"
LOCAL = "local"        # the address that starts a local Ray instance for the run
TASK_RETRIES = 3       # runs of a task after the first when its worker or node dies


def import_ray():
    """The ``ray`` module, or a one-line ``ClusterError`` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ClusterError(f"--ray needs Ray, which is not installed: {INSTALL_HINT}") from None
    return ray


# Ray's settings for a local instance started for one run (a cluster given by address keeps its own).
# Its workers run at the priority of the command, as --threads does (Ray's default, 15, gives any other
# work on the machine precedence over the search).  The rest lengthens or turns off Ray's periodic
# bookkeeping, whose wake-ups take CPU from the search on the node's cores: task events and metrics
# (kept for the dashboard, which a local instance does not run), event-loop statistics, the raylet's
# resource reports (one node: nobody schedules on them) and its memory monitor (still on, 1 s instead of
# 0.25 s).  Health checks and worker-failure detection keep Ray's defaults.  docs/cluster.md says why
# each.
LOCAL_SYSTEM_CONFIG = {"worker_niceness": 0,
                       "task_events_report_interval_ms": 0,       # 0: no task events recorded or sent
                       "enable_timeline": False,
                       "enable_metrics_collection": False,
                       "event_stats": False,
                       "raylet_report_resources_period_milliseconds": 1000,  # Ray's default 100
                       "memory_monitor_refresh_ms": 1000}                   # Ray's default 250
# Processes a local instance started for one run does without (RayParams' fields; see _local_params)
LEAN_LOCAL = {"no_monitor": True,              # the autoscaler's monitor: no nodes to add to a local instance
              "include_log_monitor": False}    # forwards workers' output, which log_to_driver=False drops


@contextmanager
def _local_params() -> Iterator[bool]:
    """While ``ray.init`` starts a local instance: the instance without the processes of ``LEAN_LOCAL``.

    ``ray.init`` does not take these options (``ray start`` has ``--no-monitor``); they are fields of the
    ``RayParams`` it builds, set here as defaults for the block.  On a Ray whose ``RayParams`` lacks them
    nothing changes (the block's value is False).  Their cost on this machine: 2.2 CPU s of the 211 of
    the 24-puzzle's instance 1 (log monitor 1.9, autoscaler's monitor 0.3; docs/cluster.md), and the
    autoscaler's monitor ignores SIGTERM, which added 1 s to ``ray.shutdown``."""
    try:
        import inspect

        from ray._private import parameter
        fields = inspect.signature(parameter.RayParams.__init__).parameters
    except (ImportError, AttributeError, TypeError, ValueError):
        yield False
        return
    if not all(name in fields for name in LEAN_LOCAL):
        yield False
        return
    original = parameter.RayParams.__init__

    def lean(self, *args, **kwargs):
        for name, value in LEAN_LOCAL.items():
            kwargs.setdefault(name, value)
        original(self, *args, **kwargs)

    parameter.RayParams.__init__ = lean
    try:
        yield True
    finally:
        parameter.RayParams.__init__ = original


def _init(ray, address: str | None, num_cpus: int | None, notify: Callable[[str], None] | None) -> None:
    """``ray.init`` for :func:`ray_session`; failures as one-line ``ClusterError``."""
    start = time.perf_counter()
    try:
        # workers' output stays in the cluster's logs: stdout carries the results (JSON Lines, CSV)
        if address in (None, LOCAL):
            with _local_params():
                ray.init(num_cpus=num_cpus, include_dashboard=False, logging_level=logging.WARNING,
                         log_to_driver=False, _system_config=LOCAL_SYSTEM_CONFIG)
        elif address.startswith("ray://"):
            ray.init(address=address, logging_level=logging.WARNING)
        else:
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
        where = "start a local Ray instance" if address in (None, LOCAL) else f"connect to Ray at {address}"
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ClusterError(f"cannot {where}: {reason}") from None
    if notify is not None:
        cpus = int(ray.cluster_resources().get("CPU", 0))
        what = "started a local Ray instance" if address in (None, LOCAL) else f"connected to Ray at {address}"
        notify(f"ray: {what} ({cpus} CPUs) in {time.perf_counter() - start:.1f} s")


@contextmanager
def ray_session(address: str | None = None, num_cpus: int | None = None,
                notify: Callable[[str], None] | None = None) -> Iterator:
    """Ray, connected for the block: to the cluster at ``address``, or (``None`` or ``"local"``) to a local
    instance started for the block with ``num_cpus`` CPUs (default: all) and stopped after.  ``notify``
    is told how long the start or the connection took (Ray's start-up, apart from the search).

    A connection this process already has (``ray.init`` called by the caller) is used as it is and left
    open."""
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    _init(ray, address, num_cpus, notify)
    try:
        yield ray
    finally:
        ray.shutdown()


class RaySession:
    """A Ray connection that may still be coming up: :meth:`ready` is the ``ray`` module once it is up
    (None before; raises the start's error if it failed); ``cpus`` is the number of workers (a local
    instance's CPUs are known before it is up).  ``local``: a local instance started for the session,
    whose CPUs are this machine's, so that work can run here on as many threads while it starts."""

    def __init__(self, ray, cpus: int, up: bool, local: bool = False):
        self.ray, self.cpus, self.local = ray, cpus, local
        self.error: BaseException | None = None
        self.up = threading.Event()
        if up:
            self.up.set()

    def ready(self):
        if not self.up.is_set():
            return None
        if self.error is not None:
            raise self.error
        return self.ray


class _SigtermWarning(logging.Filter):
    """Drops Ray's warning that ``ray.init`` off the main thread leaves SIGTERM's handler alone (wanted)."""

    def filter(self, record):
        return "SIGTERM handler is not set" not in record.getMessage()


@contextmanager
def ray_session_started(address: str | None = None, num_cpus: int | None = None,
                        notify: Callable[[str], None] | None = None) -> Iterator[RaySession]:
    """A :class:`RaySession` for the block, as :func:`ray_session` opens it, except that a local instance
    is started on a thread of its own: ``ray.init`` spends most of its seconds (8 s on this machine, of
    which 0.2 s of CPU here and 2.5 s in Ray's processes) waiting for Ray's processes to come up, and the
    caller can search meanwhile.  The block's end waits for the start to finish, then stops the instance;
    a start that failed raises its ``ClusterError`` there if nothing in the block did."""
    ray = import_ray()
    if ray.is_initialized() or address not in (None, LOCAL):
        with ray_session(address, num_cpus, notify) as ray:
            yield RaySession(ray, max(1, int(ray.cluster_resources().get("CPU", 1))), up=True)
        return
    session = RaySession(ray, num_cpus or os.cpu_count() or 1, up=False, local=True)
    quiet = _SigtermWarning()
    done = threading.Event()

    def start():
        try:
            _init(ray, address, num_cpus, notify)
        except BaseException as exc:  # raised by ready() and wait()
            session.error = exc
        finally:
            session.up.set()
        # Ray's processes die with the thread that started them (their parent-death signal is the
        # thread's, not the process's): this thread lives until the instance is stopped
        done.wait()

    logging.getLogger("ray").addFilter(quiet)
    logging.getLogger("ray._private.worker").addFilter(quiet)
    thread = threading.Thread(target=start, name="ray.init", daemon=True)
    thread.start()
    def close():
        try:
            session.up.wait()
            if session.error is None:
                ray.shutdown()
        finally:
            done.set()
            thread.join()
            logging.getLogger("ray").removeFilter(quiet)
            logging.getLogger("ray._private.worker").removeFilter(quiet)

    try:
        yield session
    except BaseException:
        close()
        raise
    close()
    if session.error is not None:  # a start that failed while all the work ran here is still an error
        raise session.error


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
    """A :class:`Solver` whose searches run on a Ray cluster: each large IDA* iteration's units of work
    as Ray tasks (:mod:`pdbtool.search.ray_search`), the tables in each node's cache.

    Built from a :class:`SolveOptions` (a partition by name or file, so that workers can rebuild the
    heuristic); missing tables are built here.  ``address`` / ``num_cpus`` as :func:`ray_session` takes
    them (each :meth:`solve` opens a session unless the solver was given one, ``session``, or this process
    already has a connection); ``node_cache_dir``: the nodes' table cache (default ``options.cache_dir``, a
    path on each node; None: each node's default).  An iteration is cut into ``units_per_worker`` units per
    worker, or into units of about ``unit_nodes`` nodes when it is estimated larger (None: never), so that
    few nodes are in flight when the goal is found (:func:`pdbtool.search.parallel.units_wanted`).

    Example::

        solver = RaySolver(Board(5, 5), SolveOptions(partition="24-6-6-6-6"), address="auto")
        result = solver.solve(state)
    """

    def __init__(self, board=None, options: SolveOptions | None = None, address: str | None = None,
                 notify: Callable[[str], None] | None = None, node_cache_dir=_SAME, num_cpus: int | None = None,
                 units_per_worker: int = UNITS_PER_WORKER, serial_below: int = SERIAL_BELOW,
                 resplit_after: float = RESPLIT_AFTER, session: RaySession | None = None,
                 unit_nodes: int | None = UNIT_NODES):
        options = options or SolveOptions()
        cache = _RecordingCache(options.cache_dir, notify)
        super().__init__(board, heuristic=options.heuristic, partition=options.partition, reflect=options.reflect,
                         cache=cache, cache_dir=options.cache_dir, threads=options.threads, notify=notify,
                         dynamic=options.dynamic, encoding=options.encoding, group=options.group,
                         blank=options.blank, pruning=options.pruning)
        self.files = cache.files  # the table files the workers need
        self.address, self.num_cpus, self.notify = address, num_cpus, notify
        node_dir = options.cache_dir if node_cache_dir is _SAME else node_cache_dir
        self.node_cache_dir = None if node_dir is None else str(node_dir)
        self.worker_options = replace(options, cache_dir=self.node_cache_dir, threads=None, search_threads=1)
        self.units_per_worker, self.serial_below, self.resplit_after = units_per_worker, serial_below, resplit_after
        self.unit_nodes = unit_nodes
        self.workers = 0          # the cluster's CPUs during the last solve
        self.outcome = None       # the ParallelOutcome of the last solve
        self.executor = None      # the RayUnits of the last solve
        self.stage: StageReport | None = None  # the tables' staging of the last solve (None: not on the cluster)
        self.session = session
        self._staging: tuple = (None, [])  # (session, [thread, report or error]) of connect() in solve

    def solve(self, state, time_limit: float | None = None, node_limit: int | None = None,
              progress: Callable[[int, int, int], None] | None = None, chunk: int = CHUNK_NODES,
              threads: int | None = None) -> SolveResult:
        """Solve one state optimally on the cluster (``threads=1``: here, on one thread, as ``Solver``), in
        the solver's ``session`` or, without one, in a session opened for this call by
        :func:`ray_session_started`.  While a local instance is still starting, the units run on threads
        here (as many as it will have CPUs); once it is up (and its tables checked), on the cluster.
        ``cpu_seconds`` is the driver's CPU time (the workers' is not gathered)."""
        if threads == 1:
            return super().solve(state, time_limit, node_limit, progress, chunk, threads=1)
        state = self.board.check_state(state)
        if self.session is None:
            with ray_session_started(self.address, self.num_cpus, self.notify) as session:
                self.session = session
                try:
                    return self.solve(state, time_limit, node_limit, progress, chunk, threads)
                finally:
                    self.session = None
        session = self.session
        self.stage = None
        options, board, start = self.worker_options, self.board, tuple(state)
        if self._staging[0] is not session:  # the tables are staged once per session
            self._staging = (session, [])
        staging = self._staging[1]  # the thread staging the tables, then its report or error

        def stage(ray):
            try:
                staging.append(stage_tables(ray, self.files, self.node_cache_dir, checked_here=True))
            except BaseException as exc:  # raised by connect()
                staging.append(exc)

        def connect():
            """(ray, submit) once the cluster is up and holds the tables; None before.  In a local session
            the tables are staged on a thread of their own (a check on the node, seconds), so that the
            iterations meanwhile run here; on another cluster, now."""
            ray = session.ready()
            if ray is None:
                return None
            if not staging:
                staging.append(threading.Thread(target=stage, args=(ray,), name="stage tables", daemon=True))
                staging[0].start()
            if session.local and staging[0].is_alive():
                return None
            staging[0].join()
            if isinstance(staging[1], BaseException):
                raise staging[1]
            self.stage = staging[1]
            if self.notify is not None:
                self.notify(self.stage.describe())
                if self.executor.local_iterations:
                    self.notify(f"ray: {self.executor.local_iterations} iteration(s) began here while the cluster "
                                f"started; the units not taken yet and the next iterations run on the cluster")
            task = ray.remote(num_cpus=1, max_retries=TASK_RETRIES)(search_unit_task)

            def submit(unit, stop, seconds_left, nodes_left):
                return task.remote(options, board, start, unit, stop, seconds_left, nodes_left)

            return ray, submit

        # a local instance started for the session has this node only: its workers read the stop file
        self.executor = RayUnits(connect, self.resplit_after, other_nodes=not session.local)
        self.workers = session.cpus
        try:
            # any count above one takes Solver.solve's parallel path, which _parallel_outcome runs here
            return super().solve(state, time_limit, node_limit, progress, chunk, threads=max(2, self.workers))
        finally:
            self.executor.close()

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


def solve_instance_task(options: SolveOptions, inst) -> SolveResult:
    """A batch's task: one instance, solved on one worker."""
    return worker_pool(options).solve(inst)


def search_unit_task(options: SolveOptions, board, state, unit, stop, seconds_left: float | None,
                     nodes_left: int | None):
    """One instance's task: one unit of work (its ``UnitResult``; when a limit or the driver, through the
    ``StopSignal`` ``stop``, stopped it, a result ``stopped`` with the nodes searched until then)."""
    import ray

    solver = worker_pool(options).get(board)
    tally = Tally(nodes_left, None if seconds_left is None else time.perf_counter() + seconds_left)
    check = stop_check(stop, tally, ray.get_runtime_context().get_node_id())
    if check is not None:  # a unit stopped while it waited for a worker (the goal found meanwhile): none of it
        check()
        if tally.stop.is_set():
            return UnitResult(0, 0, INF, None, stopped=True)
    result = search_unit(solver.heuristic, state, unit, tally=tally, progress=check)
    if result is None:
        return UnitResult(tally.generated, tally.expanded, INF, None, stopped=True)
    return result


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

    def __init__(self, options: SolveOptions, notify, kwargs: dict, session: RaySession):
        super().__init__(options, notify)
        self.kwargs, self.session = kwargs, session

    def make(self, board) -> Solver:
        return RaySolver(board, self.options, notify=self.notify, session=self.session, **self.kwargs)



def solve_batch(instances: Iterable, options: SolveOptions | None = None, address: str | None = None,
                notify: Callable[[str], None] | None = None, node_cache_dir=_SAME, num_cpus: int | None = None,
                on_stage: Callable[[StageReport], None] | None = None, progress=None, split: bool | None = None,
                split_options: dict | None = None) -> Iterator[SolveResult]:
    """Yield a ``SolveResult`` per instance, in input order: each instance in its own Ray task, or with
    ``split`` (default: when there is one instance) each instance's iterations cut into units of work
    that run as tasks (:class:`RaySolver`; ``split_options``: its tuning keywords, and ``progress(instance,
    bound, generated, expanded, workers=N)`` is called while it runs).

    ``address`` and ``num_cpus`` as :func:`ray_session` takes them.  The nodes keep their tables in the
    cache at ``node_cache_dir`` (default: ``options.cache_dir``, a path taken on each node; ``None``: each
    node's default cache).  An instance the cluster loses for good (its task failed ``TASK_RETRIES`` + 1
    times) comes back with ``error`` set.  Closing the generator early (or an exception in it, Ctrl-C
    included) ends a session this call opened, and with it the tasks still running; in a session the
    caller opened they run to their end (``ray.cancel`` is not used: in Ray 2.60 it can crash the driver
    when it meets a task's completion, ray-project/ray#54846)."""
    options = options or SolveOptions()
    instances = list(instances)
    node_dir = options.cache_dir if node_cache_dir is _SAME else node_cache_dir
    if split is None:
        split = len(instances) == 1
    if split:
        with ray_session_started(address, num_cpus, notify) as session:
            pool = _RaySolverPool(options, notify, dict(node_cache_dir=node_dir, **(split_options or {})), session)
            for inst in instances:
                report = None
                if progress is not None:
                    def report(bound, generated, expanded, inst=inst):
                        solver = pool.get(inst.board)
                        progress(inst, bound, generated, expanded, workers=solver.workers)
                result = pool.solve(inst, report)
                stage = pool.get(inst.board).stage if inst.error is None and result.error is None else None
                if on_stage is not None and stage is not None:
                    on_stage(stage)
                yield result
        return
    with ray_session(address, num_cpus, notify) as ray:
        report = prepare_nodes(ray, instances, options, node_dir, notify)
        if on_stage is not None:
            on_stage(report)
        worker_options = replace(options, cache_dir=None if node_dir is None else str(node_dir),
                                 threads=None, search_threads=1)
        task = ray.remote(num_cpus=1, max_retries=TASK_RETRIES)(solve_instance_task)
        local = SolverPool(options)  # lines that could not be read are answered here
        refs = {i: task.remote(worker_options, inst) for i, inst in enumerate(instances) if inst.error is None}
        yield from _in_input_order(ray, instances, refs, local)


def _in_input_order(ray, instances, refs: dict, local: SolverPool) -> Iterator[SolveResult]:
    """The results of the tasks ``refs`` (index -> reference), each yielded once its predecessors were."""
    index = {ref: i for i, ref in refs.items()}
    pending = list(refs.values())
    done: dict[int, SolveResult] = {}
    for i, inst in enumerate(instances):
        if i not in refs:
            done[i] = local.solve(inst)
    next_i = 0
    while next_i < len(instances):
        while next_i not in done:
            ready, pending = wait(ray, pending)
            for ref in ready:
                i = index[ref]
                done[i] = _result_of(ray, ref, instances[i])
                del refs[i]
        yield done.pop(next_i)
        next_i += 1


def _result_of(ray, ref, inst) -> SolveResult:
    """A task's result, or the instance with ``error`` set when the cluster lost it."""
    from ray.exceptions import RayError

    try:
        return ray.get(ref)
    except RayError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return SolveResult(id=inst.id, optimal=inst.optimal, line=inst.line, source=inst.source,
                           board=inst.board.dims, error=f"{inst.where}: lost on the cluster: {reason}")


__all__ = ["ClusterError", "INSTALL_HINT", "RaySession", "RaySolver", "ray_session", "ray_session_started",
           "solve_batch", "prepare_nodes"]
