"""`pdbtool solve --ray`: a local Ray cluster (2 CPUs, no dashboard, a 100 MB object store, a temporary
directory) started once for the module; its results compared with the serial search's."""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdbtool.cli.main import cli
from pdbtool.puzzle.board import Board
from pdbtool.puzzle.instances import load_instances
from pdbtool.search.solver import SolveOptions, replay, solve_batch
from test_large_boards import random_walk

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
KORF100 = EXAMPLES / "korf100.txt"
TIMINGS = ("seconds", "cpu_seconds", "wall_seconds", "total_seconds", "nodes_per_second")

try:
    import ray
except ImportError:
    ray = None
needs_ray = pytest.mark.skipif(ray is None, reason="Ray is not installed (pip install 'pdbtool[ray]'; "
                                                    "make test installs it)")


def run(*args):
    return CliRunner().invoke(cli, ["solve", *map(str, args)])


def test_ray_missing_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    result = run(EXAMPLES / "8puzzle.txt", "--heuristic", "manhattan", "--ray")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == \
        ["pdbtool: --ray needs Ray, which is not installed: pip install 'pdbtool[ray]'"]


@needs_ray
@pytest.mark.parametrize("instances", [1, 2])
def test_a_local_start_that_fails_is_one_line(monkeypatch, tmp_path, instances):
    """One instance (the start on a thread of its own, the search here meanwhile) or a batch: the failed
    start is reported in one line, exit status 1."""
    def fail(*args, **kwargs):
        raise RuntimeError("no room for the object store\nthe rest of Ray's message")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", fail)
    lines = [ln for ln in (EXAMPLES / "8puzzle.txt").read_text().splitlines() if ln.strip() and ln[0] != "#"]
    src = tmp_path / "in.txt"
    src.write_text("\n".join(lines[:instances]) + "\n")
    result = run(src, "--heuristic", "manhattan", "--ray")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1] == \
        "pdbtool: cannot start a local Ray instance: no room for the object store"


def test_ray_messages_on_stdout_go_to_stderr(monkeypatch):
    """Ray's driver prints the cluster's errors ("A worker died ...") with print(), on whatever sys.stdout
    is, from a thread of its own: with --ray they land on stderr, and stdout holds only the JSON lines."""
    from pdbtool.search import ray_backend, solver

    def printing_batch(items, options, address=None, notify=None, progress=None):
        def ray_listener():
            print("A worker died or was killed while executing a task by an unexpected system error.")
        for result in solver.solve_batch(items, options, jobs=1):
            listener = threading.Thread(target=ray_listener)
            listener.start()
            listener.join()
            yield result

    monkeypatch.setattr(ray_backend, "solve_batch", printing_batch)
    result = run(EXAMPLES / "8puzzle.txt", "--heuristic", "manhattan", "--format", "json", "--ray")
    assert result.exit_code == 0, result.output
    count = len(load_instances(str(EXAMPLES / "8puzzle.txt")))
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(records) == count + 1 and records[-1]["summary"] and records[-1]["solved"] == count
    assert result.stderr.count("A worker died") == count


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    if ray is None:
        pytest.skip("Ray is not installed")
    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=100 * 2**20,
             _temp_dir=str(tmp_path_factory.mktemp("ray")), logging_level="warning")
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("ray-cache")


@pytest.fixture(scope="module")
def korf10(tmp_path_factory):
    path = tmp_path_factory.mktemp("korf") / "korf10.txt"
    lines = [ln for ln in KORF100.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    path.write_text("\n".join(lines[:10]) + "\n")
    return path


def without_timings(rows):
    return [{k: v for k, v in row.items() if k not in TIMINGS} for row in rows]


@needs_ray
@pytest.mark.parametrize("fmt", ["json", "csv", "text"])
def test_batch_output_equals_one_job(cluster, cache_dir, korf10, fmt):
    args = [korf10, "--partition", "15-5-5-5", "--cache-dir", cache_dir, "--format", fmt]
    serial = run(*args, "--jobs", "1")
    assert serial.exit_code == 0, serial.output
    on_ray = run(*args, "--ray")
    assert on_ray.exit_code == 0, on_ray.output
    if fmt == "json":
        rows = [json.loads(line) for line in on_ray.stdout.splitlines()]
        assert [r.get("id") for r in rows] == [str(i) for i in range(1, 11)] + [None]
        assert without_timings(rows) == without_timings([json.loads(ln) for ln in serial.stdout.splitlines()])
    elif fmt == "csv":
        def table(text):
            head, *rows = [ln.split(",") for ln in text.splitlines()]
            keep = [i for i, k in enumerate(head) if k not in TIMINGS]
            return [[row[i] for i in keep] for row in rows]

        assert table(on_ray.stdout) == table(serial.stdout)
    else:
        def lines(text):  # the instance lines without their seconds, the summary without its timings
            out = []
            for ln in text.splitlines():
                ln = re.sub(r" +[0-9.]+ s  moves:", " moves:", ln)
                if ln.startswith("search "):
                    continue
                out.append(ln)
            return out

        assert lines(on_ray.stdout) == lines(serial.stdout)
        assert len(lines(on_ray.stdout)) == 13  # ten instances and three lines of summary
        assert "expanded        86,538 moves: 12 11 6" in lines(on_ray.stdout)[0]


@needs_ray
def test_batch_reports_bad_lines_in_place(cluster, cache_dir, tmp_path):
    src = tmp_path / "mixed.txt"
    src.write_text("a 1 2 3 4 0 5 6 7 8\nb 1 2 3 4 5\nc 1 2 3 4 5 6 0 7 8\n")
    items = load_instances(str(src), Board(3, 3))
    options = SolveOptions(heuristic="manhattan", cache_dir=str(cache_dir))
    from pdbtool.search import ray_backend

    got = list(ray_backend.solve_batch(items, options))
    want = list(solve_batch(items, options))
    assert [(r.id, r.length, r.error, r.nodes_generated) for r in got] == \
        [(r.id, r.length, r.error, r.nodes_generated) for r in want]
    assert got[1].error is not None and got[0].solved and got[2].solved


@needs_ray
def test_tables_are_shipped_once_and_checked(cluster, cache_dir, tmp_path):
    """A node whose cache lacks the tables gets them through the object store; a sound copy is kept;
    a damaged copy is replaced."""
    from pdbtool.search.ray_backend import RaySolver
    from pdbtool.search.ray_tables import describe, holds, stage_tables

    files = RaySolver(Board(4, 4), SolveOptions(partition="15-5-5-5", cache_dir=str(cache_dir))).files
    assert len(files) == 3  # 5-5-5 with reflection: three files
    node_dir = tmp_path / "node-cache"
    first = stage_tables(cluster, files, str(node_dir), checked_here=True)  # another directory: asked
    assert first.nodes == 1 and sum(len(v) for v in first.shipped.values()) == 3 and not first.here
    assert first.bytes_put == sum(f.stat().st_size for f in files)
    for f in files:
        assert (node_dir / f.name).read_bytes() == f.read_bytes()
        assert holds(str(node_dir), describe(f))
    again = stage_tables(cluster, files, str(node_dir))
    assert again.shipped == {} and again.bytes_put == 0
    damaged = node_dir / files[0].name
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    assert not holds(str(node_dir), describe(files[0]))
    third = stage_tables(cluster, files, str(node_dir))
    assert sum(len(v) for v in third.shipped.values()) == 1 and third.bytes_put == files[0].stat().st_size
    assert damaged.read_bytes() == files[0].read_bytes()
    assert not list(node_dir.glob("*.tmp-*")) and not list(node_dir.glob("*.lock"))
    # the driver's own cache, its files checked when the driver loaded them: the node is not asked again
    mine = stage_tables(cluster, files, str(cache_dir), checked_here=True)
    assert mine.here and mine.nodes == 1 and not mine.shipped and "checked when loaded here" in mine.describe()
    assert not stage_tables(cluster, files, str(cache_dir)).here


# --- one instance, its iterations cut into units of work ------------------------------------------------

def korf(ids):
    out = []
    for line in KORF100.read_text().splitlines():
        body, _, comment = line.partition("#")
        nums = body.split()
        if len(nums) == 17 and int(nums[0]) in ids:
            out.append((tuple(int(x) for x in nums[1:]), int(comment.split()[-1])))
    return out


def serial_iterations(heuristic, state, bounds):
    """(bound, generated, expanded) after each iteration of ``bounds``, counts cumulative: each iteration
    searched alone from the root by the serial driver."""
    from pdbtool.search.units import WorkUnit, search_unit

    out, generated, expanded = [], 0, 0
    for bound in bounds:
        r = search_unit(heuristic, state, WorkUnit((), bound))
        generated, expanded = generated + r.generated, expanded + r.expanded
        out.append((bound, generated, expanded))
    return out


def check_like_serial(solver, state, optimal=None, **solve_kwargs):
    """Solve on the cluster and compare with the serial search: length, a valid solution, the counts of
    every iteration but the last."""
    serial = solver.solve(state, threads=1)  # the serial search, here
    result = solver.solve(state, **solve_kwargs)
    assert result.solved and result.length == serial.length
    if optimal is not None:
        assert result.length == optimal
    assert replay(solver.board, state, result.solution) == tuple(solver.board.goal_tiles)
    finished = solver.outcome.finished
    assert [b for b, _, _ in finished] == list(range(serial.h0, serial.length, 2))[:len(finished)]
    assert finished == serial_iterations(solver.heuristic, state, [b for b, _, _ in finished])
    assert len(finished) == serial.iterations - 1
    return result


def ray_solver(board, options, **kwargs):
    from pdbtool.search.ray_backend import RaySolver

    # every iteration cut into units, few of them: the unit machinery is exercised even on small searches
    return RaySolver(board, options, serial_below=0, units_per_worker=4, **kwargs)


@needs_ray
def test_korf_1_to_10_like_serial(cluster, cache_dir):
    solver = ray_solver(Board(4, 4), SolveOptions(partition="15-5-5-5", cache_dir=str(cache_dir)))
    cut = tail_splits = 0
    for state, optimal in korf(range(1, 11)):
        check_like_serial(solver, state, optimal)
        cut += sum(solver.outcome.subtrees)
        tail_splits += solver.executor.tail_splits
    assert cut > 100  # the iterations were cut into units
    assert tail_splits > 0  # and the last units of iterations cut again before they ran


@needs_ray
def test_three_by_four_and_five_by_five_like_serial(cluster, cache_dir):
    small = ray_solver(Board(4, 3), SolveOptions(heuristic="linear-conflict", cache_dir=str(cache_dir)))
    for seed in range(4):
        check_like_serial(small, random_walk(Board(4, 3), 80, seed))
    large = ray_solver(Board(5, 5), SolveOptions(heuristic="linear-conflict", cache_dir=str(cache_dir)))
    check_like_serial(large, random_walk(Board(5, 5), 30, 7))


def test_units_wanted_follows_the_estimated_iteration():
    from pdbtool.search.parallel import MAX_UNITS, units_wanted

    assert units_wanted(2, 32, None, 10**9, 10**8) == 64
    assert units_wanted(2, 32, 1 << 24, 0, 0) == 64                          # no estimate yet
    assert units_wanted(2, 32, 1 << 24, 905_426_553, 85_828_369) == 569      # 24-puzzle #1, bound 95
    assert units_wanted(2, 32, 1 << 24, 85_828_369, 7_513_443) == 64         # bound 93: the floor
    assert units_wanted(2, 32, 1, 10**12, 10**9) == MAX_UNITS


@needs_ray
def test_units_of_a_node_count_count_like_serial(cluster, cache_dir):
    """Iterations cut into units of about 2,000 nodes (many more than 4 per worker): serial counts."""
    solver = ray_solver(Board(4, 4), SolveOptions(partition="15-5-5-5", cache_dir=str(cache_dir)),
                        unit_nodes=2000)
    for state, optimal in korf([3, 10]):
        check_like_serial(solver, state, optimal)
        assert max(solver.outcome.subtrees) > 3 * 4 * 2


@needs_ray
def test_units_cut_again_at_the_tail_count_like_serial(cluster, cache_dir, monkeypatch):
    """With every running unit cut again as soon as a worker is idle, counts and length stay serial."""
    from pdbtool.search import ray_search

    monkeypatch.setattr(ray_search, "RESPLIT_MEAN_FACTOR", 0.0)
    solver = ray_solver(Board(4, 4), SolveOptions(partition="15-5-5-5", cache_dir=str(cache_dir)),
                        resplit_after=0.0)
    resplits = 0
    for state, optimal in korf([3, 10]):
        check_like_serial(solver, state, optimal)
        resplits += solver.executor.resplits
    assert resplits > 0


@needs_ray
def test_iterations_before_the_cluster_is_up_run_here_and_count_like_serial(cluster, cache_dir):
    """While the session is not up, an iteration's units run on threads here, and once it is up the units
    not yet taken and the next iterations on the cluster; lengths and counts stay serial."""
    from pdbtool.search.ray_backend import RaySession

    class SlowStart(RaySession):
        """Not up for the first ``looks`` looks, then the test's cluster."""

        def __init__(self, looks):
            super().__init__(cluster, 2, up=True, local=True)
            self.looks = looks

        def ready(self):
            self.looks -= 1
            return None if self.looks >= 0 else super().ready()

    solver = ray_solver(Board(4, 4), SolveOptions(partition="15-5-5-5", cache_dir=str(cache_dir)),
                        session=SlowStart(2))
    local = on_cluster = 0
    for n, (state, optimal) in enumerate(korf([3, 10, 9])):
        check_like_serial(solver, state, optimal)
        executor = solver.executor
        if n == 0:  # the first looks find the cluster not up
            assert executor.local_iterations >= 1
        # every iteration is cut (serial_below=0): each one with units ran here, on the cluster, or began
        # here and ended there
        cut = sum(1 for n in solver.outcome.subtrees if n)
        assert cut <= executor.local_iterations + executor.iterations <= 2 * cut
        local, on_cluster = local + executor.local_iterations, on_cluster + executor.iterations
    assert local and on_cluster


@needs_ray
def test_split_unit_adds_up_to_the_unit(cluster, cache_dir):
    """A unit's top and sub-units count exactly what the unit counts, with the same next bound."""
    from pdbtool.search.ray_search import split_unit
    from pdbtool.search.units import search_unit, split_iteration

    solver = ray_solver(Board(4, 4), SolveOptions(partition="15-5-5-5", cache_dir=str(cache_dir)))
    (state, optimal), = korf([3])
    units, _ = split_iteration(solver.heuristic, state, optimal - 2, 16)
    checked = 0
    for unit in units[:6]:
        whole = search_unit(solver.heuristic, state, unit)
        subs, top = split_unit(solver.heuristic, state, unit, 5)
        if top.solution is not None:
            continue
        parts = [top] + [search_unit(solver.heuristic, state, u) for u in subs]
        assert (sum(p.generated for p in parts), sum(p.expanded for p in parts),
                min(p.next_bound for p in parts)) == (whole.generated, whole.expanded, whole.next_bound)
        assert all(u.path[:len(unit.path)] == unit.path and len(u.path) > len(unit.path) for u in subs)
        checked += len(subs) > 0
    assert checked >= 3


class _Board:
    """A StopBoard stand-in: slots, no file."""

    def __init__(self):
        self.slots, self.cancelled = 0, []

    def new_slot(self):
        self.slots += 1
        return self.slots - 1

    def signal(self, slot):
        return slot

    def cancel(self, slots):
        self.cancelled += slots


def test_a_unit_is_timed_from_when_a_worker_takes_it_not_from_its_submission(monkeypatch):
    """Tasks start in the order submitted as workers free up: the tail's resplit times a unit from its
    estimated start, so a unit that waited long in the queue but has only just started is not cut."""
    from pdbtool.search import ray_search
    from pdbtool.search.driver import Tally
    from pdbtool.search.units import UnitResult, WorkUnit

    clock = [100.0]
    monkeypatch.setattr(ray_search.time, "perf_counter", lambda: clock[0])
    submitted = []

    def submit(unit, stop):
        submitted.append(unit)
        return f"ref{len(submitted) - 1}"

    units = [WorkUnit((m,), 50) for m in range(5)]
    it = ray_search._Iteration(None, submit, units, Tally(), _Board(), resplit_after=1.0, workers=2)
    started = lambda: [it.items[i].started for i in it.roots]  # noqa: E731
    assert started() == [100.0, 100.0, None, None, None]
    for ref, now in (("ref0", 101.0), ("ref1", 102.0), ("ref2", 103.0), ("ref3", 104.0)):
        clock[0] = now
        it.receive(ref, UnitResult(10, 4, 52, None))
    assert started() == [100.0, 100.0, 101.0, 102.0, 103.0]
    assert it.finished_seconds == [1.0, 2.0, 2.0, 2.0]  # mean 1.75 s
    cut = []
    monkeypatch.setattr(ray_search, "split_unit",
                        lambda h, s, unit, target: cut.append(unit) or ([], UnitResult(3, 1, 60, None)))
    # one worker idle; unit 4 was submitted 4.5 s ago, over twice the mean task (3.5 s), but it started
    # 1.5 s ago: not cut yet
    clock[0] = 104.5
    it.resplit(None, None, 2)
    assert cut == []
    clock[0] = 106.6  # 3.6 s since its start
    it.resplit(None, None, 2)
    assert cut == [units[4]]


def test_the_last_units_of_an_iteration_are_cut_before_they_run(monkeypatch):
    """The last ``TAIL_UNITS_PER_WORKER`` units per worker are submitted as their sub-units, and the
    iteration's results add each one's top and sub-units up to the unit's."""
    from pdbtool.search import ray_search
    from pdbtool.search.driver import Tally
    from pdbtool.search.units import UnitResult, WorkUnit

    monkeypatch.setattr(ray_search, "TAIL_UNITS_PER_WORKER", 1)
    monkeypatch.setattr(ray_search, "TAIL_SUBUNITS", 3)

    def split_unit(heuristic, state, unit, target):
        return [WorkUnit(unit.path + (m,), unit.bound) for m in range(target)], UnitResult(1, 1, 70, None)

    monkeypatch.setattr(ray_search, "split_unit", split_unit)
    submitted = []

    def submit(unit, stop):
        submitted.append(unit)
        return len(submitted) - 1

    tally = Tally()
    units = [WorkUnit((m,), 50) for m in range(6)]
    it = ray_search._Iteration(None, submit, units, tally, _Board(), workers=2, heuristic="h", state="s")
    assert [u.path for u in submitted] == [(0,), (1,), (2,), (3,), (4, 0), (4, 1), (4, 2),
                                           (5, 0), (5, 1), (5, 2)]
    assert it.tail_splits == 2
    for ref, unit in enumerate(submitted):
        it.receive(ref, UnitResult(10, 5, 60 + len(unit.path), None))
    assert it.done()
    assert [(n, r.generated, r.expanded, r.next_bound) for n, r in it.results()] == [
        (0, 10, 5, 61), (1, 10, 5, 61), (2, 10, 5, 61), (3, 10, 5, 61), (4, 31, 16, 62), (5, 31, 16, 62)]
    assert (tally.generated, tally.expanded) == (4 * 10 + 2 * 31, 4 * 5 + 2 * 16)


@needs_ray
def test_a_goal_ends_the_iteration_with_the_partial_counts_of_the_started_tasks(monkeypatch):
    """When the goal is found, the tasks that had started are stopped and their partial counts added; a
    task still waiting for a worker counts nothing, and of a unit cut again only its own task counts."""
    from pdbtool.search import ray_search
    from pdbtool.search.driver import INF, Tally
    from pdbtool.search.units import UnitResult, WorkUnit

    monkeypatch.setattr(ray_search, "RESPLIT_MEAN_FACTOR", 0.0)
    monkeypatch.setattr(ray_search, "split_unit", lambda h, s, unit, target: (
        [WorkUnit(unit.path + (m,), unit.bound) for m in range(2)], UnitResult(2, 1, 70, None)))
    submitted = []

    def submit(unit, stop):
        submitted.append(unit)
        return len(submitted) - 1

    partial = {1: UnitResult(7, 3, INF, None, stopped=True),     # unit 1, stopped at the goal
               6: UnitResult(5, 2, INF, None, stopped=True)}     # a sub-unit of unit 1: its work repeats unit 1's

    class FakeRay:
        waited = set()

        def wait(self, refs, num_returns, timeout):
            FakeRay.waited |= set(refs)
            ready = [r for r in refs if r in partial]
            if not ready:
                time.sleep(timeout)
            return ready, [r for r in refs if r not in partial]

        def get(self, ref):
            return partial[ref]

    tally = Tally()
    units = [WorkUnit((m,), 50) for m in range(5)]
    it = ray_search._Iteration(FakeRay(), submit, units, tally, _Board(), resplit_after=0.0, workers=2)
    it.receive(0, UnitResult(10, 4, 52, None))  # unit 0 done; unit 2 starts
    it.receive(2, UnitResult(20, 9, 52, None))  # unit 2 done; unit 3 starts
    it.receive(3, UnitResult(30, 14, 52, None))  # unit 3 done; unit 4 starts
    it.receive(4, UnitResult(40, 19, 52, None))  # unit 4 done: unit 1 alone, a worker idle
    it.resplit(None, None, 2)  # unit 1 cut again: sub-units 5 and 6 submitted, unit 1's task goes on
    assert submitted[5:] == [WorkUnit((1, 0), 50), WorkUnit((1, 1), 50)]
    it.receive(5, UnitResult(4, 2, 52, (1, 0, 3)))  # the goal, in a sub-unit of unit 1
    assert it.done() and it.found == (1, 0, 3)
    counted = tally.generated
    assert counted == 10 + 20 + 30 + 40 + 4  # a goal below a unit cut again resolves the unit with its counts
    it.finish(seconds=1.0)
    assert tally.generated == counted and FakeRay.waited == set()  # unit 1 resolved: nothing more to count

    # six units, the goal found in unit 3 while unit 1 ran, unit 4 took the freed worker and unit 5 waited
    submitted.clear()
    FakeRay.waited = set()
    tally = Tally()
    units.append(WorkUnit((5,), 50))
    it = ray_search._Iteration(FakeRay(), submit, units, tally, _Board(), resplit_after=0.0, workers=2)
    it.receive(0, UnitResult(10, 4, 52, None))  # unit 2 starts
    it.receive(2, UnitResult(20, 9, 52, None))  # unit 3 starts
    it.receive(3, UnitResult(30, 14, 52, (3, 1)))  # the goal; unit 4 starts (on paper), unit 1 runs
    it.finish(seconds=1.0)
    assert FakeRay.waited == {1, 4}  # started: unit 1, and unit 4 (which gives nothing back in time)
    assert (tally.generated, tally.expanded) == (10 + 20 + 30 + 7, 4 + 9 + 14 + 3)


def big_unit(heuristic_name="manhattan"):
    """A Manhattan-distance solver and a unit of hours: Korf's instance 60 from its root, the iteration
    below its optimal length."""
    from pdbtool.search.solver import Solver
    from pdbtool.search.units import WorkUnit

    solver = Solver(Board(4, 4), heuristic=heuristic_name)
    (state, optimal), = korf([60])
    return solver, state, WorkUnit((), optimal - 2)


def test_the_stop_file_stops_a_unit_at_the_next_chunk(tmp_path):
    """A unit whose byte the driver sets stops at the end of the chunk it is in (read through a map of
    its own, as a worker on the driver's node reads it); a neighbour's byte does not stop it."""
    from pdbtool.search.driver import Tally
    from pdbtool.search.ray_search import StopBoard, stop_check
    from pdbtool.search.units import search_unit

    solver, state, unit = big_unit()
    board = StopBoard("this-node", directory=str(tmp_path))
    mine, neighbour = board.new_slot(), board.new_slot()
    chunk = 1 << 14
    try:
        tally = Tally()
        check = stop_check(board.signal(mine), tally, "this-node")
        assert check is not None
        calls = [0]

        def progress():
            calls[0] += 1
            if calls[0] == 3:
                board.cancel([neighbour])
            if calls[0] == 6:
                board.cancel([mine])
            check()

        assert search_unit(solver.heuristic, state, unit, chunk, tally, progress) is None
        assert calls[0] == 6 and tally.generated < 7 * chunk  # a chunk ends within a node of its budget
    finally:
        board.close()
    assert not Path(board.path).exists()


def test_without_the_stop_file_a_unit_asks_the_actor(tmp_path):
    """A worker on another node (another node id, or the file gone) polls the flags actor instead; with
    neither, nothing stops its unit but its limits."""
    from pdbtool.search.driver import Tally
    from pdbtool.search.ray_search import StopBoard, stop_check

    class Answer:
        def __init__(self, value):
            self.value = value

        def done(self):
            return True

        def result(self):
            return self.value

    class Flags:  # StopFlags as a task sees its handle: .cancelled.remote(slot).future()
        def __init__(self):
            self.asked, self.slots = [], set()
            outer = self

            class Method:
                def remote(self, slot):
                    outer.asked.append(slot)
                    return type("Ref", (), {"future": lambda _: Answer(slot in outer.slots)})()

            self.cancelled = Method()

    flags = Flags()
    board = StopBoard("driver-node", flags=None, directory=str(tmp_path))
    try:
        slot = board.new_slot()
        signal_ = board.signal(slot)
        assert stop_check(signal_, Tally(), "another-node") is None  # no file there, no actor
        remote = type(signal_)(signal_.node_id, signal_.path, slot, flags)
        tally = Tally()
        check = stop_check(remote, tally, "another-node")
        board.cancel([slot])  # the file says stop, but this worker cannot see it
        check()
        assert not tally.stop.is_set() and flags.asked == []  # the first question waits POLL_SECONDS
        from pdbtool.search import ray_search

        poll = ray_search.poll_stop(flags, slot, tally, every=0.0)
        poll()
        assert flags.asked == [slot] and not tally.stop.is_set()
        flags.slots.add(slot)
        poll()  # reads the answer to the question asked before the cancel, asks again
        assert flags.asked == [slot, slot] and not tally.stop.is_set()
        poll()
        assert tally.stop.is_set()
        gone = type(signal_)("driver-node", str(tmp_path / "gone"), slot, flags)  # the driver's node, no file
        assert stop_check(gone, Tally(), "driver-node").__qualname__.startswith("poll_stop.")
        assert stop_check(board.signal(slot), Tally(), "driver-node").__qualname__.startswith("stop_check.")
    finally:
        board.close()


@needs_ray
@pytest.mark.parametrize("node", ["driver", "another"])
def test_a_unit_task_stops_when_the_driver_no_longer_wants_it(cluster, node):
    """A unit of hours searched by a worker: stopped through the stop file on the driver's node, through
    the actor when the worker takes itself for one on another node."""
    from pdbtool.search.ray_backend import search_unit_task
    from pdbtool.search.ray_search import StopBoard, StopFlags

    solver, state, unit = big_unit()
    node_id = cluster.get_runtime_context().get_node_id() if node == "driver" else "another-node"
    board = StopBoard(node_id, flags=cluster.remote(num_cpus=0)(StopFlags).remote())
    try:
        slot = board.new_slot()
        task = cluster.remote(num_cpus=1, max_retries=0)(search_unit_task)
        # a deadline far beyond the wait below: a stopped result within the wait is the signal's doing (how
        # promptly the file stops a unit is checked without Ray, above; here the load decides the seconds)
        ref = task.remote(SolveOptions(heuristic="manhattan"), Board(4, 4), state, unit, board.signal(slot),
                          3600.0, None)
        assert wait_for(lambda: unit_workers(), 120), "the unit did not start"
        time.sleep(0.5)
        board.cancel([slot])
        ready, _ = cluster.wait([ref], timeout=300)
        assert ready
        result = cluster.get(ref)
        assert result.stopped and result.solution is None
        assert result.generated > result.expanded > 0  # what it searched before it stopped
        if node == "driver":  # a task that starts after its unit was stopped searches nothing
            late = task.remote(SolveOptions(heuristic="manhattan"), Board(4, 4), state, unit,
                               board.signal(slot), 3600.0, None)
            assert cluster.get(late, timeout=300) == type(result)(0, 0, result.next_bound, None, stopped=True)
    finally:
        board.close()


def unit_workers():
    """This test's worker processes running a unit of work now (those of the module's cluster, which this
    process started: not another Ray's on the machine)."""
    import psutil

    out = []
    for proc in psutil.Process().children(recursive=True):
        try:
            cmd = proc.cmdline()
        except psutil.Error:
            continue
        if cmd and cmd[0].startswith("ray::search_unit_task"):
            out.append(proc)
    return out


@needs_ray
def test_a_worker_killed_mid_solve_changes_nothing(cluster, cache_dir):
    """A worker process killed while it searches a unit: the unit runs again, the result is the serial."""
    solver = ray_solver(Board(4, 4), SolveOptions(heuristic="manhattan", cache_dir=str(cache_dir)))
    (state, optimal), = korf([9])
    killed = []
    done = threading.Event()

    def killer():
        while not done.is_set() and not killed:
            for proc in unit_workers():
                try:
                    os.kill(proc.pid, signal.SIGKILL)
                    killed.append(proc.pid)
                    break
                except ProcessLookupError:
                    pass
            time.sleep(0.005)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    try:
        check_like_serial(solver, state, optimal)
    finally:
        done.set()
        thread.join()
    assert killed, "no unit was seen running, so none was killed"


# --- the command in a process of its own: Ctrl-C, a lost driver ------------------------------------------

AGENTS = ("ray::DashboardAgent", "ray::RuntimeEnvAgent")  # idle helpers of a local instance


def start_solve(lines, *args):
    """``pdbtool solve FILE --ray ARGS`` in a process of its own (its own local Ray instance), stdout read
    line by line into a list."""
    work = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))  # short: Ray's socket paths live below it
    atexit.register(shutil.rmtree, work, True)
    src = work / "in.txt"
    src.write_text("\n".join(lines) + "\n")
    env = dict(os.environ, RAY_TMPDIR=str(work))
    proc = subprocess.Popen([sys.executable, "-m", "pdbtool", "solve", str(src), "--ray", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out: list[str] = []
    threading.Thread(target=lambda: out.extend(iter(proc.stdout.readline, "")), daemon=True).start()
    return proc, out


def wait_for(predicate, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def alive(procs, skip=()):
    import psutil

    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE and not any(
                    a in " ".join(p.cmdline()) for a in skip):
                out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out


def korf_line(ident):
    return next(ln.split("#")[0] for ln in KORF100.read_text().splitlines() if ln.split()[:1] == [str(ident)])


@needs_ray
def test_ctrl_c_prints_what_was_solved_and_stops_the_work():
    import psutil

    # instance 9 takes a moment with Manhattan distance, instance 60 hours
    proc, out = start_solve([korf_line(9), korf_line(60)], "--heuristic", "manhattan")
    try:
        assert wait_for(lambda: out, 120), "instance 9 was not solved"
        family = psutil.Process(proc.pid).children(recursive=True)
        assert any("search" in " ".join(p.cmdline()) or "solve_instance" in " ".join(p.cmdline())
                   for p in alive(family)), [p.cmdline() for p in alive(family)]
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
        stderr = proc.stderr.read()
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGINT, stderr
    assert out[0].startswith("9 ") and "length  46" in out[0]
    assert "solved 1 of " in "".join(out)  # the summary of what was solved
    assert stderr.strip().splitlines()[-1].startswith("pdbtool: interrupted")
    assert wait_for(lambda: not alive(family), 30), [p.cmdline() for p in alive(family)]


def run_python(code: str, timeout: float):
    """Run ``code`` in a Python process of its own (its Ray below a short temporary directory: Ray's
    socket paths live below it); the JSON of its last line of output."""
    work = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                              env=dict(os.environ, RAY_TMPDIR=str(work)))
    finally:
        shutil.rmtree(work, True)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


@needs_ray
def test_a_local_instance_runs_without_the_monitors():
    """A local instance started for the run has no autoscaler monitor and no log monitor, and works; its
    workers run at the command's priority (Ray's default adds 15 to it)."""
    code = """
import json, os, ray, psutil
from pdbtool.search.ray_backend import ray_session
with ray_session(num_cpus=1) as ray:
    answer = ray.get(ray.remote(num_cpus=1)(lambda: 6 * 7 + os.nice(0)).remote())
    family = [" ".join(p.cmdline()) for p in psutil.Process().children(recursive=True)]
print(json.dumps([answer - os.nice(0), family]))
"""
    answer, family = run_python(code, 300)
    assert answer == 42
    assert any("raylet" in cmd for cmd in family) and any("gcs_server" in cmd for cmd in family)
    assert not [cmd for cmd in family if "log_monitor.py" in cmd or "autoscaler/_private/monitor.py" in cmd]


@needs_ray
def test_a_lost_driver_leaves_no_work_running():
    """The driver killed outright while the units of one instance run: the workers stop with it."""
    import psutil

    stop_files = set(Path("/dev/shm").glob("pdbtool-stop-*"))
    proc, out = start_solve([korf_line(60)], "--heuristic", "manhattan")
    family = []
    try:
        def units_running():
            family[:] = psutil.Process(proc.pid).children(recursive=True)
            return any(" ".join(p.cmdline()).startswith("ray::search_unit_task") for p in alive(family))

        assert wait_for(units_running, 120), "no unit of work started"
        proc.kill()
        proc.wait(10)
        assert wait_for(lambda: not alive(family, skip=AGENTS), 30), \
            [p.cmdline() for p in alive(family, skip=AGENTS)]
    finally:
        proc.kill()
        for p in alive(family):  # Ray's idle agents exit on their own a minute or two later
            p.kill()
        for left in set(Path("/dev/shm").glob("pdbtool-stop-*")) - stop_files:  # the killed driver's
            left.unlink(missing_ok=True)


@needs_ray
def test_a_worker_killed_in_a_local_instance_changes_nothing():
    """The local instance that pdbtool starts (ray_session: LOCAL_SYSTEM_CONFIG's lengthened and disabled
    bookkeeping) still notices a worker killed while it searches a unit and runs the unit again: the
    length is the optimal one.  In a process of its own, as ``--ray`` runs it."""
    (state, optimal), = korf([9])
    code = f"""
import json, threading, time
from pdbtool.puzzle.board import Board
from pdbtool.search.ray_backend import RaySolver, ray_session
import ray, psutil  # Ray's copy of psutil
from pdbtool.search.solver import SolveOptions
killed, done = [], threading.Event()

def killer():
    while not done.is_set() and not killed:
        for proc in psutil.Process().children(recursive=True):
            try:
                if " ".join(proc.cmdline()).startswith("ray::search_unit_task"):
                    proc.kill()
                    killed.append(proc.pid)
                    break
            except psutil.Error:
                pass
        time.sleep(0.005)

with ray_session(num_cpus=2):
    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    solver = RaySolver(Board(4, 4), SolveOptions(heuristic="manhattan"), serial_below=0, units_per_worker=4)
    result = solver.solve({list(state)})
    done.set()
    thread.join()
print(json.dumps([result.length, result.solved, len(killed)]))
"""
    length, solved, killed = run_python(code, 600)
    assert killed == 1, "no unit was seen running, so none was killed"
    assert solved and length == optimal


@needs_ray
def test_one_instance_reports_progress_with_the_workers(cluster, cache_dir):
    from pdbtool.cli.solve import ProgressLine
    from pdbtool.search import ray_backend

    (state, optimal), = korf([3])
    src = Path(tempfile.mkdtemp()) / "one.txt"
    src.write_text(" ".join(map(str, state)) + "\n")
    items = load_instances(str(src))
    calls = []
    results = list(ray_backend.solve_batch(
        items, SolveOptions(partition="15-5-5-5", cache_dir=str(cache_dir)),
        progress=lambda *args, **kwargs: calls.append((args, kwargs)),
        split_options=dict(serial_below=0, units_per_worker=4)))
    assert results[0].length == optimal
    assert calls and all(kw == {"workers": 2} and args[0] is items[0] for args, kw in calls)
    generated = [args[2] for args, _ in calls]
    assert generated == sorted(generated) and generated[-1] <= results[0].nodes_generated
    assert ProgressLine(None).text(items[0], 57, 1000, 2.0, 2).endswith("0 M nodes/s, 2 s, 2 workers")
