"""`pdbtool solve --ray`: a local Ray cluster (2 CPUs, no dashboard, a 100 MB object store, a temporary
directory) started once for the module; its results compared with the serial search's."""

from __future__ import annotations

import atexit
import contextlib
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
from conftest import korf100, korf100_file, korf100_line

from pdbtool.cli.main import cli
from pdbtool.puzzle.board import Board
from pdbtool.puzzle.instances import load_instances
from pdbtool.search.solver import SolveOptions, replay, solve_batch
from test_large_boards import random_walk

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TIMINGS = ("seconds", "cpu_seconds", "wall_seconds", "total_seconds", "nodes_per_second")

try:
    import ray
except ImportError:
    ray = None
# Under CI a missing Ray fails these tests (an error at setup), so that a CI without Ray is not green
CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
if ray is None and CI:
    needs_ray = pytest.mark.usefixtures("ray_is_installed")
else:
    needs_ray = pytest.mark.skipif(ray is None, reason="Ray is not installed (pip install 'pdbtool[ray]'; "
                                                        "make test installs it)")


@pytest.fixture
def ray_is_installed():
    pytest.fail("CI is set and Ray is not installed: pip install 'pdbtool[ray]'", pytrace=False)


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
        if CI:
            pytest.fail("CI is set and Ray is not installed: pip install 'pdbtool[ray]'", pytrace=False)
        pytest.skip("Ray is not installed")
    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=100 * 2**20,
             _temp_dir=str(tmp_path_factory.mktemp("ray")), logging_level="warning")
    yield ray
    ray.shutdown()


@pytest.fixture
def cache_dir(shared_cache_dir):
    """The run's shared cache (tests/conftest.py): these tests only read its tables (a damaged copy is
    made in a directory of the test's own)."""
    return shared_cache_dir


@pytest.fixture(scope="module")
def korf10(tmp_path_factory):
    return korf100_file(tmp_path_factory.mktemp("korf") / "korf10.txt", range(1, 11))


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
    """(tiles, optimal length) of each of Korf's instances ``ids``."""
    return [korf100()[i] for i in ids]


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
    return RaySolver(board, options, **{"serial_below": 0, "units_per_worker": 4, **kwargs})


@needs_ray
def test_korf_1_to_10_like_serial(cluster, cache_dir):
    solver = ray_solver(Board(4, 4), SolveOptions(partition="15-5-5-5", cache_dir=str(cache_dir)))
    cut = on_cluster = 0
    for state, optimal in korf(range(1, 11)):
        check_like_serial(solver, state, optimal)
        cut += sum(solver.outcome.subtrees)
        on_cluster += solver.executor.iterations
    assert cut > 100 and on_cluster > 10  # the iterations were cut into units, which ran as tasks


@needs_ray
def test_three_by_four_and_five_by_five_like_serial(cluster, cache_dir):
    small = ray_solver(Board(4, 3), SolveOptions(heuristic="linear-conflict", cache_dir=str(cache_dir)))
    for seed in range(4):
        check_like_serial(small, random_walk(Board(4, 3), 80, seed))
    # an automaton deep enough to be kept in the cache, which the workers read (5x5's default is deeper,
    # slower to build)
    large = ray_solver(Board(5, 5), SolveOptions(heuristic="linear-conflict", cache_dir=str(cache_dir),
                                                 fsm_depth=14))
    check_like_serial(large, random_walk(Board(5, 5), 30, 7))


@needs_ray
def test_max_with_a_catalogue_of_zero_aware_tables_like_serial(cluster, cache_dir, tmp_path):
    # the workers resolve the catalogue file and read its zero-aware tables and the ddb look-ups
    catalogue = tmp_path / "cat.txt"
    catalogue.write_text("board 4x3\npartition\n1 2 3 5 6 7\n4 8 9 10 11\npartition\n1 2 3 4\n5 6 7 8\n9 10 11\n")
    solver = ray_solver(Board(4, 3), SolveOptions(heuristic="max", partition=str(catalogue), blank="zero-aware",
                                                  cache_dir=str(cache_dir)))
    for seed in range(2):
        check_like_serial(solver, random_walk(Board(4, 3), 80, seed))


def test_units_wanted_follows_the_estimated_iteration():
    from pdbtool.search.parallel import MAX_UNITS, units_wanted

    assert units_wanted(2, 32, None, 10**9, 10**8) == 64
    assert units_wanted(2, 32, 1 << 24, 0, 0) == 64                          # no estimate yet
    assert units_wanted(2, 32, 1 << 24, 905_426_553, 85_828_369) == 569      # 24-puzzle #1, bound 95
    assert units_wanted(2, 32, 1 << 24, 85_828_369, 7_513_443) == 64         # bound 93: the floor
    assert units_wanted(2, 32, 1, 10**12, 10**9) == MAX_UNITS


@needs_ray
@pytest.mark.slow
def test_units_of_a_node_count_count_like_serial(cluster, cache_dir):
    """Iterations cut into units of about 20,000 nodes (hundreds, many more than 4 per worker): serial
    counts."""
    solver = ray_solver(Board(4, 4), SolveOptions(partition="15-5-5-5", cache_dir=str(cache_dir)),
                        unit_nodes=20_000)
    for state, optimal in korf([3, 10]):
        check_like_serial(solver, state, optimal)
        assert max(solver.outcome.subtrees) >= 100


@needs_ray
def test_the_executor_reports_each_unit_as_the_threads_do(cluster, cache_dir):
    """RayUnits called as parallel_search calls an executor: each unit's result (through ``on_result``, as
    the threads' executor reports them for a checkpoint) is the serial search's of that unit."""
    from pdbtool.search.driver import Tally
    from pdbtool.search.ray_backend import search_unit_task
    from pdbtool.search.ray_search import RayUnits
    from pdbtool.search.units import search_unit, split_iteration

    options = SolveOptions(partition="15-5-5-5", cache_dir=str(cache_dir))
    solver = ray_solver(Board(4, 4), options)
    (state, optimal), = korf([3])
    units, top = split_iteration(solver.heuristic, state, optimal - 2, 24)
    task = cluster.remote(num_cpus=1)(search_unit_task)
    executor = RayUnits(cluster, lambda unit, board, slot, seconds, nodes: task.remote(
        options, Board(4, 4), state, unit, board, slot, seconds, nodes))
    reported, tally = [], Tally()
    try:
        results = executor(solver.heuristic, state, units, 2, tally, 1 << 16, None, 0.5,
                           on_result=lambda i, r: reported.append((i, r)))
    finally:
        executor.close()
    assert sorted(reported) == sorted(results) and sorted(i for i, _ in results) == list(range(len(units)))
    assert dict(results) == {i: search_unit(solver.heuristic, state, u) for i, u in enumerate(units)}
    assert tally.generated == sum(r.generated for _, r in results) and executor.iterations == 1


def big_unit(heuristic_name="manhattan"):
    """A Manhattan-distance solver and a unit of hours: Korf's instance 60 from its root, the iteration
    below its optimal length."""
    from pdbtool.search.solver import Solver
    from pdbtool.search.units import WorkUnit

    solver = Solver(Board(4, 4), heuristic=heuristic_name)
    (state, optimal), = korf([60])
    return solver, state, WorkUnit((), optimal - 2)


class _Answer:
    def __init__(self, value):
        self.value, self.ready = value, False

    def done(self):
        return self.ready

    def result(self):
        if isinstance(self.value, Exception):
            raise self.value
        return self.value


class _FakeBoard:
    """A UnitBoard's handle as a task sees it: ``.wanted.remote(slot).future()``."""

    def __init__(self):
        self.asked, self.cancelled, self.answers, self.gone = [], set(), [], False
        outer = self

        class Method:
            def remote(self, slot):
                outer.asked.append(slot)
                answer = _Answer(RuntimeError("the actor died") if outer.gone else slot not in outer.cancelled)
                outer.answers.append(answer)
                return type("Ref", (), {"future": lambda _: answer})()

        self.wanted = Method()


def test_a_task_asks_the_board_without_waiting_and_stops_on_a_no():
    from pdbtool.search.driver import Tally
    from pdbtool.search.ray_search import board_poll

    board, tally = _FakeBoard(), Tally()
    poll = board_poll(board, 7, tally, every=0.0)
    poll()
    assert board.asked == [7]          # asked at once (the unit is taken)
    poll()
    assert board.asked == [7]          # the answer has not come: no second question, no wait
    board.answers[-1].ready = True
    board.cancelled.add(7)             # cancelled after the first question was answered "wanted"
    poll()
    assert board.asked == [7, 7] and not tally.stop.is_set()
    board.answers[-1].ready = True
    poll()
    assert tally.stop.is_set()         # "no": the search stops at this chunk
    board, tally = _FakeBoard(), Tally()
    board.gone = True
    poll = board_poll(board, 1, tally, every=3600.0)
    poll()
    board.answers[-1].ready = True
    poll()
    assert tally.stop.is_set() and board.asked == [1]  # the board gone with its driver: stop


def test_a_task_says_it_is_alive_while_it_does_not_search():
    """While a task loads its tables or compiles (no chunk of nodes, no poll), a thread tells the board
    that its unit is taken, at once and then every ``every`` seconds, until the task ends."""
    from pdbtool.search.ray_search import heartbeat

    board = _FakeBoard()
    before = set(threading.enumerate())
    with heartbeat(board, 3, every=0.01):
        beating = [t for t in threading.enumerate() if t not in before]
        assert wait_for(lambda: len(board.asked) >= 3, 30)
    for thread in beating:
        thread.join(30)
    assert beating and not any(t.is_alive() for t in beating)  # it stopped with the block
    assert set(board.asked) == {3}


@needs_ray
def test_a_unit_task_stops_when_the_driver_no_longer_wants_it(cluster):
    """A unit of hours searched by a worker, given up by the driver through the board: it stops and
    returns what it searched; a task of a unit given up before it starts searches one chunk at most."""
    from pdbtool.search.ray_backend import search_unit_task
    from pdbtool.search.ray_search import new_board
    from pdbtool.search.units import UNIT_CHUNK_NODES

    solver, state, unit = big_unit()
    board = new_board(cluster)
    try:
        task = cluster.remote(num_cpus=1, max_retries=0)(search_unit_task)
        # a deadline far beyond the wait below: a stopped result within the wait is the board's doing
        ref = task.remote(SolveOptions(heuristic="manhattan"), Board(4, 4), state, unit, board, 0, 3600.0, None)
        assert wait_for(lambda: unit_workers(), 120), "the unit did not start"
        assert wait_for(lambda: cluster.get(board.quiet.remote(), timeout=60) < 1.0, 120)  # it has asked
        board.cancel.remote([0, 1])
        ready, _ = cluster.wait([ref], timeout=300)
        assert ready
        result = cluster.get(ref)
        assert result.stopped and result.solution is None
        assert result.generated > result.expanded > 0  # what it searched before it stopped
        late = task.remote(SolveOptions(heuristic="manhattan"), Board(4, 4), state, unit, board, 1, 3600.0, None)
        late = cluster.get(late, timeout=300)
        assert late.stopped and late.generated <= 8 * UNIT_CHUNK_NODES  # the answer comes within chunks
    finally:
        cluster.kill(board)


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


@needs_ray
@pytest.mark.slow
def test_ctrl_c_prints_what_was_solved_and_stops_the_work():
    import psutil

    # instance 9 takes a moment with Manhattan distance, instance 60 hours
    proc, out = start_solve([korf100_line(i, optimal=False) for i in (9, 60)], "--heuristic", "manhattan")
    try:
        assert wait_for(lambda: out, 120), "instance 9 was not solved"
        family = []

        def searching():  # instance 60's worker (on a loaded machine it may start after 9 is solved)
            family[:] = psutil.Process(proc.pid).children(recursive=True)
            return any("search" in " ".join(p.cmdline()) or "solve_instance" in " ".join(p.cmdline())
                       for p in alive(family))

        assert wait_for(searching, 60), [p.cmdline() for p in alive(family)]
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
    for line in reversed(done.stdout.splitlines()):  # the last line of JSON: Ray's own lines may follow
        try:
            return json.loads(line)
        except ValueError:
            continue
    raise AssertionError(f"no JSON in the output: {done.stdout[-2000:]}")


@needs_ray
@pytest.mark.slow
def test_a_lost_driver_leaves_no_work_running():
    """The driver killed outright while the units of one instance run: the workers stop with it."""
    import psutil

    proc, out = start_solve([korf100_line(60, optimal=False)], "--heuristic", "manhattan")
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


@needs_ray
@pytest.mark.slow
def test_a_worker_killed_in_a_local_instance_changes_nothing():
    """The local instance that pdbtool starts (ray_session) notices a worker killed while it searches a
    unit and runs the unit again: the length is the optimal one.  In a process of its own, as ``--ray``
    runs it."""
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


def test_under_ci_a_missing_ray_is_an_error_not_a_skip(tmp_path):
    """This module run with CI=1 and ``import ray`` failing: the Ray tests error, none is skipped."""
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "ray.py").write_text("raise ImportError('hidden for the test')\n")
    tests = Path(__file__).resolve().parent
    env = dict(os.environ, CI="1", PYTHONPATH=os.pathsep.join([str(hide), str(tests)]))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--no-header", "-rA",
                           f"{Path(__file__)}::test_batch_reports_bad_lines_in_place",
                           f"{Path(__file__)}::test_korf_1_to_10_like_serial",
                           f"{Path(__file__)}::test_ray_missing_is_one_line"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode != 0, done.stdout
    assert "2 errors" in done.stdout and "1 passed" in done.stdout and "skipped" not in done.stdout, done.stdout
    assert "CI is set and Ray is not installed" in done.stdout


# --- deadlines: every wait of the driver ends, with one line -------------------------------------------

@contextlib.contextmanager
def every_cpu_held(cluster):
    """For the block, an actor holds both CPUs of the module's cluster (it has started when the block
    begins), so that no task can be scheduled."""
    class Hog:  # local: Ray ships it by value (the workers cannot import this test module)
        def ready(self):
            return True

    hog = cluster.remote(num_cpus=2)(Hog).remote()
    try:
        cluster.get(hog.ready.remote(), timeout=120)
        yield
    finally:
        cluster.kill(hog)

@needs_ray
@pytest.mark.slow
def test_no_free_cpu_ends_in_one_line_after_the_deadline(cluster, cache_dir):
    """Every CPU of the cluster held by other work: no worker takes a unit, and the solve ends with one
    line after ``stall_seconds`` instead of waiting for ever; the CPUs free again, it solves."""
    from pdbtool.search.ray_backend import solve_batch

    (state, optimal), = korf([3])
    src = Path(tempfile.mkdtemp()) / "one.txt"
    src.write_text(" ".join(map(str, state)) + "\n")
    items = load_instances(str(src))
    options = SolveOptions(partition="15-5-5-5", cache_dir=str(cache_dir))
    with every_cpu_held(cluster):
        start = time.monotonic()
        result, = solve_batch(items, options, stall_seconds=4.0, split_options=dict(serial_below=0))
        waited = time.monotonic() - start
    assert not result.solved and result.error is not None
    said = re.fullmatch(r".*one\.txt:1: no worker has taken a unit for (\d+) s \(2 CPUs in the cluster\): .*",
                        result.error)
    assert said and 4 <= int(said.group(1)) < 60 and waited >= 4.0, result.error
    result, = solve_batch(items, options, stall_seconds=60.0, split_options=dict(serial_below=0))
    assert result.length == optimal


@needs_ray
def test_a_batch_without_free_cpus_reports_each_instance(cluster, cache_dir, korf10):
    from pdbtool.search.ray_backend import solve_batch

    with every_cpu_held(cluster):
        results = list(solve_batch(load_instances(str(korf10))[:3],
                                   SolveOptions(partition="15-5-5-5", cache_dir=str(cache_dir)),
                                   stall_seconds=3.0, split=False))
    assert [r.id for r in results] == ["1", "2", "3"]
    assert all(not r.solved and "no worker has taken a unit for" in r.error for r in results)


@needs_ray
def test_staging_that_fails_or_takes_too_long_is_one_line(cluster, cache_dir, tmp_path, monkeypatch):
    from pdbtool.search import ray_tables
    from pdbtool.search.ray_backend import RaySolver
    from pdbtool.search.ray_search import ClusterError

    files = RaySolver(Board(4, 4), SolveOptions(partition="15-5-5-5", cache_dir=str(cache_dir))).files
    with pytest.raises(ClusterError, match=r"^staging the tables: 1 of 1 node\(s\) did not check their caches "
                                           r"within 0 s \(node [0-9a-f]{12}\)$"):
        ray_tables.stage_tables(cluster, files, str(tmp_path / "a"), timeout=0.0)
    monkeypatch.setattr(ray_tables, "cluster_nodes", lambda ray: ["ab" * 28])  # a node that is not there
    with pytest.raises(ClusterError) as error:
        ray_tables.stage_tables(cluster, files, str(tmp_path / "b"), timeout=120.0)
    assert str(error.value).startswith("staging the tables: ") and "\n" not in str(error.value)


MULTI_NODE = """
import json, sys, threading, time
import ray
import psutil  # Ray's copy
from ray.cluster_utils import Cluster
from pdbtool.puzzle.board import Board
from pdbtool.search.ray_backend import RaySolver
from pdbtool.search.ray_search import ClusterError
from pdbtool.search.solver import SolveOptions, Solver

state, optimal = json.loads(sys.argv[1])
# health checks every half second: a removed node is known dead in seconds, not Ray's default tens
cluster = Cluster(initialize_head=True, head_node_args=dict(
    num_cpus=0, _system_config={"health_check_period_ms": 500, "health_check_failure_threshold": 3,
                                "health_check_initial_delay_ms": 0}))
stay = cluster.add_node(num_cpus=1)
leave = cluster.add_node(num_cpus=1)
ray.init(address=cluster.address)
cluster.wait_for_nodes()

def units_on(node):
    raylet = psutil.Process(node.all_processes["raylet"][0].process.pid)
    return [p for p in raylet.children(recursive=True) if " ".join(p.cmdline()).startswith("ray::search_unit_task")]

removed = []
def remover():  # the node goes as soon as a worker of it is seen searching a unit
    end = time.monotonic() + 300
    while time.monotonic() < end:
        holding = len(units_on(leave))
        if holding:
            cluster.remove_node(leave, allow_graceful=False)
            removed.append(holding)
            return
        time.sleep(0.01)

options = SolveOptions(heuristic="manhattan")
serial = Solver(Board(4, 4), heuristic="manhattan").solve(state, threads=1)
solver = RaySolver(Board(4, 4), options, serial_below=0, units_per_worker=8, stall_seconds=60)
thread = threading.Thread(target=remover)
thread.start()
result = solver.solve(state)
thread.join()
finished = solver.outcome.finished
cluster.remove_node(stay, allow_graceful=False)  # no CPU left: a unit can never be scheduled
start = time.monotonic()
try:
    RaySolver(Board(4, 4), options, serial_below=0, stall_seconds=3).solve(state)
    stalled = None
except ClusterError as exc:
    stalled = [str(exc), time.monotonic() - start]
print(json.dumps(dict(length=result.length, serial=serial.length, optimal=optimal, removed=removed,
                      serial_iterations=serial.iterations, finished=len(finished), stalled=stalled)))
ray.shutdown()
cluster.shutdown()
"""


@needs_ray
@pytest.mark.slow
def test_a_node_removed_while_it_holds_units_changes_nothing():
    """Three raylets on this machine (a head without CPUs, two nodes of one CPU): one node is removed
    while its worker searches a unit; its units run again on the other, and the length is the optimal
    one.  Then the last node is removed too: the next solve ends with one line at its deadline."""
    (state, optimal), = korf([9])
    out = run_python(MULTI_NODE.replace("sys.argv[1]", repr(json.dumps([list(state), optimal]))), 600)
    assert out["removed"] and out["removed"][0] >= 1, out       # the node held a unit when it went
    assert out["length"] == out["serial"] == out["optimal"], out
    assert out["finished"] == out["serial_iterations"] - 1, out
    message, seconds = out["stalled"]
    assert message.startswith("no worker has taken a unit for ") and "(0 CPUs in the cluster)" in message
    assert 3 <= seconds < 120


@needs_ray
@pytest.mark.slow
def test_a_checkpointed_search_resumes_on_the_cluster(cluster, cache_dir, tmp_path):
    """``checkpoint`` with RaySolver: the units that come back from the cluster are recorded; a search
    stopped within an iteration resumes on the cluster, and a checkpoint written there resumes on one
    thread with the serial counts."""
    from pdbtool.search.solver import Solver
    from pdbtool.search.units import search_unit, split_iteration

    (state, optimal), = korf([2])
    serial = Solver(Board(4, 4), heuristic="manhattan")
    plain = serial.solve(state)
    solver = ray_solver(Board(4, 4), SolveOptions(heuristic="manhattan", cache_dir=str(cache_dir)),
                        units_per_worker=16)
    path = tmp_path / "ck.json"
    # the sixth iteration (bound 53: 1.4 M nodes before it, 9.7 M in it) is cut into 54 units of at most
    # 1.8 M nodes, four in flight (two per worker); the limit leaves 5.0 M nodes for it.  Every unit started
    # while nothing has come back has that budget and finishes, so the first result back is a whole unit;
    # and the driver stops the iteration once the units back hold 5.0 M nodes, when the 4.7 M left cannot
    # all be in the four in flight (4.2 M at most), so the iteration never completes
    limit = 6_400_000
    stopped = solver.solve(state, node_limit=limit, checkpoint=path, checkpoint_every=3600.0)
    assert stopped.timed_out and path.exists()
    saved = json.loads(path.read_text())["progress"]
    # the premises above, of this split
    units, _ = split_iteration(solver.heuristic, state, saved["bound"], saved["current"]["target"])
    sizes = sorted(search_unit(solver.heuristic, state, unit).generated for unit in units)
    budget = limit - saved["generated"]
    assert sizes[-1] < budget and sum(sizes) - budget > sum(sizes[-4:]), (saved["bound"], budget, sizes[-4:])
    assert saved["iterations"] >= 1 and saved["current"]["done"]  # units of the iteration in progress
    resumed = solver.solve(state, checkpoint=path, checkpoint_every=3600.0)
    assert resumed.length == optimal == plain.length and not path.exists()
    assert replay(solver.board, state, resumed.solution) == tuple(solver.board.goal_tiles)
    assert resumed.nodes_generated >= saved["generated"] + saved["current"]["generated"]
    stopped = solver.solve(state, node_limit=limit, checkpoint=path, checkpoint_every=3600.0)
    assert stopped.timed_out and json.loads(path.read_text())["progress"]["current"]["done"]
    on_one = serial.solve(state, checkpoint=path, threads=1)
    assert (on_one.length, on_one.nodes_generated, on_one.nodes_expanded) == \
        (plain.length, plain.nodes_generated, plain.nodes_expanded)
    assert not path.exists()


@needs_ray
def test_solve_ray_with_a_checkpoint(cluster, cache_dir, tmp_path):
    """``pdbtool solve --ray --checkpoint``: solved, the checkpoint removed at the end."""
    (state, optimal), = korf([2])
    src = tmp_path / "two.txt"
    src.write_text("2 " + " ".join(map(str, state)) + f"  # optimal {optimal}\n")
    ck = tmp_path / "ck.json"
    result = run(src, "--heuristic", "manhattan", "--ray", "--checkpoint", ck, "--checkpoint-every", "0.1",
                 "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout.splitlines()[0])["length"] == optimal and not ck.exists()


def test_a_batch_with_a_checkpoint_runs_one_search_at_a_time(monkeypatch):
    """With a checkpoint, a Ray batch solves its instances one after the other, each split into units."""
    from pdbtool.search import ray_backend

    seen = []

    class Pool:
        def __init__(self, options, notify, kwargs):
            pass

        def solve(self, inst, report):
            seen.append(inst)
            return inst

    monkeypatch.setattr(ray_backend, "_RaySolverPool", Pool)
    monkeypatch.setattr(ray_backend, "ray_session", lambda *a: contextlib.nullcontext(None))
    items = ["a", "b"]
    assert list(ray_backend.solve_batch(items, SolveOptions(checkpoint="ck.json"))) == items and seen == items
