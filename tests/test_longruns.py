"""Long runs: a dead worker never stalls a batch, --output/--resume survives a kill of the whole run, a
checkpointed search resumes with the counts of an uninterrupted one, and a batch shows its progress."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import korf100

from pdbtool.cli.main import cli
from pdbtool.puzzle.board import Board
from pdbtool.puzzle.instances import read_instances
from pdbtool.search import checkpoint as ck
from pdbtool.search import solver as solver_module
from pdbtool.search.driver import Search
from pdbtool.search.solver import SolveOptions, Solver, solve_batch

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
EIGHT = EXAMPLES / "8puzzle.txt"
KORF = {str(i): list(tiles) for i, (tiles, _) in korf100().items()}
VOLATILE = ("seconds", "cpu_seconds")


def run(*args, input=None):
    return CliRunner().invoke(cli, ["solve", *map(str, args)], input=input)


def korf_file(tmp_path, *ids) -> Path:
    path = tmp_path / "korf.txt"
    path.write_text("".join(f"{i} {' '.join(map(str, KORF[i]))}\n" for i in ids))
    return path


def stable(row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in VOLATILE}


def json_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# --- a dead worker --------------------------------------------------------------------------------------------

def killer(target: str, times: int, items):
    """A ``started`` callback that SIGKILLs the worker that starts instance ``target``, ``times`` times."""
    killed = []

    def started(index, pid):
        if items[index].id == target and len(killed) < times:
            killed.append(pid)
            os.kill(pid, signal.SIGKILL)

    return started, killed


@pytest.mark.slow
def test_a_killed_worker_s_instance_is_retried_and_the_batch_goes_on():
    # Korf's 2 takes a second or more with Manhattan: the kill lands while its worker searches
    items = read_instances("\n".join(f"{i} {' '.join(map(str, KORF[i]))}" for i in ("12", "2", "42", "55")), "k.txt")
    options = SolveOptions(heuristic="manhattan")
    started, killed = killer("2", 1, items)
    ends = []
    results = list(solve_batch(items, options, jobs=2, started=started, done=lambda i, r: ends.append(i)))
    assert len(killed) == 1
    assert [r.id for r in results] == ["12", "2", "42", "55"]
    assert sorted(ends) == [0, 1, 2, 3]
    serial = list(solve_batch(items, options))
    assert [(r.length, r.nodes_generated, r.error) for r in results] == \
           [(r.length, r.nodes_generated, None) for r in serial]


@pytest.mark.slow
def test_a_worker_killed_twice_fails_its_instance_alone(tmp_path, monkeypatch):
    path = korf_file(tmp_path, "12", "2", "42")
    real = solver_module.solve_batch
    kills = []

    def batch(items, *args, **kwargs):
        started, killed = killer("2", 2, items)
        kills.append(killed)
        return real(items, *args, started=started, **kwargs)

    monkeypatch.setattr(solver_module, "solve_batch", batch)
    result = run(path, "--heuristic", "manhattan", "--jobs", "2", "--format", "json")
    assert len(kills[0]) == 2 and len(set(kills[0])) == 2   # two workers, each killed on instance 2
    assert result.exit_code == 4, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["id"] for r in rows[:-1]] == ["12", "2", "42"]
    assert rows[0]["solved"] and rows[2]["solved"] and rows[0]["length"] == 45 and rows[2]["length"] == 42
    assert not rows[1]["solved"] and "killed by SIGKILL" in rows[1]["error"]
    lines = [ln for ln in result.stderr.splitlines() if "SIGKILL" in ln]
    assert lines == [f"pdbtool: {path}:2: the worker solving it was killed by SIGKILL, twice (once retried)"]
    assert rows[-1]["failed"] == 1 and rows[-1]["solved"] == 2


def test_results_come_in_input_order_as_soon_as_those_before_are_done():
    items = read_instances(EIGHT.read_text(), "8.txt")
    ends, seen = [], []
    for result in solve_batch(items, SolveOptions(heuristic="manhattan"), jobs=2,
                              done=lambda i, r: ends.append(i)):
        seen.append(result.id)
        # a result is yielded once it and all before it have ended, not later than that
        assert set(range(len(seen))) <= set(ends)
    assert seen == [inst.id for inst in items] and sorted(ends) == list(range(len(items)))


# --- --output and --resume ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def full_runs(tmp_path_factory):
    """Uninterrupted runs of the 8-puzzle examples into a file, per format."""
    out = {}
    for fmt in ("json", "text", "csv"):
        path = tmp_path_factory.mktemp("full") / f"full.{fmt}"
        result = run(EIGHT, "--heuristic", "manhattan", "--format", fmt, "--output", path)
        assert result.exit_code == 0, result.output
        assert result.stdout == ""
        out[fmt] = path.read_bytes()
    return out


def result_rows(data: bytes, fmt: str) -> list:
    """The results of a file without their times (and without the summary), in a comparable form."""
    lines = data.decode().splitlines()
    if fmt == "json":
        return [stable(row) for row in map(json.loads, lines) if not row.get("summary")]
    if fmt == "csv":
        import csv
        import io

        return [stable(row) for row in csv.DictReader(io.StringIO(data.decode()))]
    return [" ".join(ln.split()[:11]) + ln.partition("moves:")[2] for ln in lines if " length " in ln]


@pytest.mark.parametrize("fmt", ["json", "text", "csv"])
def test_resume_after_a_kill_at_any_point_gives_the_uninterrupted_file(tmp_path, full_runs, fmt):
    full = full_runs[fmt]
    # what a SIGKILL leaves is a prefix of the file (lines are appended in order): cut it at the end of the
    # header, within lines, at their ends, within the summary
    newlines = [i for i, b in enumerate(full) if b == ord("\n")]
    cuts = sorted({0, newlines[0] + 1, newlines[1] - 7, newlines[2] + 1, newlines[5], newlines[5] + 1,
                   newlines[9] + 3, newlines[10] + 1, len(full) - 5, len(full)})
    for cut in cuts:
        path = tmp_path / f"cut{cut}.{fmt}"
        path.write_bytes(full[:cut])
        result = run(EIGHT, "--heuristic", "manhattan", "--format", fmt, "--output", path, "--resume")
        assert result.exit_code == 0, (cut, result.output)
        data = path.read_bytes()
        assert result_rows(data, fmt) == result_rows(full, fmt), cut
        if fmt == "text":  # the summary covers the whole file, once
            assert data.decode().count("solved 10 of 10 (unsolved 0, failed 0)") == 1
            assert data.decode().splitlines()[-4].startswith("solved 10 of 10")
        if fmt == "json":
            summary = json_lines(path)[-1]
            assert summary["summary"] and summary["instances"] == 10 and summary["solved"] == 10


def test_resume_skips_the_instances_done(tmp_path, full_runs):
    path = tmp_path / "out.json"
    lines = full_runs["json"].decode().splitlines(keepends=True)
    path.write_text("".join(lines[:4]))
    result = run(EIGHT, "--heuristic", "manhattan", "--format", "json", "--output", path, "--resume")
    assert result.exit_code == 0, result.output
    assert f"{path}: 4 of 10 instances done, 6 to solve" in result.stderr
    rows = json_lines(path)
    assert rows[:4] == [json.loads(ln) for ln in lines[:4]]   # the results held are kept as they were
    assert [r["id"] for r in rows[:-1]] == [f"e{i}" for i in range(1, 11)]


def test_a_killed_run_resumes(tmp_path):
    """A real SIGKILL of the whole run once the file holds two results, then --resume."""
    path = tmp_path / "out.json"
    inputs = korf_file(tmp_path, "12", "42", "2", "55")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    proc = subprocess.Popen([sys.executable, "-m", "pdbtool", "solve", str(inputs), "--heuristic", "manhattan",
                             "--format", "json", "--output", str(path)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while proc.poll() is None and (not path.exists() or path.read_text().count("\n") < 2):
            time.sleep(0.02)
    finally:
        proc.kill()
        proc.wait()
    assert path.read_text().count("\n") >= 2
    result = run(inputs, "--heuristic", "manhattan", "--format", "json", "--output", path, "--resume")
    assert result.exit_code == 0, result.output
    whole = tmp_path / "whole.json"
    assert run(inputs, "--heuristic", "manhattan", "--format", "json", "--output", whole).exit_code == 0
    rows = json_lines(path)
    assert [stable(r) for r in rows[:-1]] == [stable(r) for r in json_lines(whole)[:-1]]
    assert [r["id"] for r in rows[:-1]] == ["12", "42", "2", "55"] and rows[-1]["solved"] == 4


def test_output_refusals(tmp_path, full_runs):
    path = tmp_path / "out.json"
    path.write_bytes(full_runs["json"])
    before = path.read_bytes()
    # an existing file without --resume
    result = run(EIGHT, "--heuristic", "manhattan", "--format", "json", "--output", path)
    assert result.exit_code == 1 and "exists: add --resume" in result.stderr
    # another heuristic
    result = run(EIGHT, "--heuristic", "linear-conflict", "--format", "json", "--output", path, "--resume")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f"pdbtool: {path}:1: results of another configuration (manhattan, not linear-conflict)"]
    # another board for the same ids
    other = tmp_path / "4x2.txt"
    other.write_text("e1 1 0 2 3 4 5 6 7\n")
    result = run(other, "--board", "4x2", "--heuristic", "manhattan", "--format", "json", "--output", path,
                 "--resume")
    assert result.exit_code == 1 and "solved on 3x3, not 4x2" in result.stderr
    # ids of another batch
    result = run("-", "--heuristic", "manhattan", "--format", "json", "--output", path, "--resume",
                 input="x1 1 0 2 3 4 5 6 7 8\n")
    assert result.exit_code == 1 and "instance e1, which the instances do not hold" in result.stderr
    assert path.read_bytes() == before
    # text: the header names the configuration
    text = tmp_path / "out.txt"
    text.write_bytes(full_runs["text"])
    result = run(EIGHT, "--heuristic", "linear-conflict", "--output", text, "--resume")
    assert result.exit_code == 1 and "results of another configuration" in result.stderr
    assert text.read_bytes() == full_runs["text"]
    # a format mismatch
    result = run(EIGHT, "--heuristic", "manhattan", "--format", "csv", "--output", text, "--resume")
    assert result.exit_code == 1 and "results of another format" in result.stderr
    # ids must be distinct
    result = run("-", "--heuristic", "manhattan", "--output", tmp_path / "new.txt",
                 input="a 1 0 2 3 4 5 6 7 8\na 3 1 2 0 4 5 6 7 8\n")
    assert result.exit_code == 1 and "a distinct id per instance: a is on lines 1 and 2" in result.stderr
    assert run(EIGHT, "--resume").exit_code == 2
    # a file that takes no writes: the error names it
    if os.path.exists("/dev/full"):
        result = run(EIGHT, "--heuristic", "manhattan", "--output", "/dev/full")
        assert result.exit_code == 1
        lines = result.stderr.strip().splitlines()
        assert lines == ["pdbtool: /dev/full: a device, not a regular file"], lines


def test_a_results_file_in_use_is_refused(tmp_path):
    import fcntl

    path = tmp_path / "out.json"
    with open(path, "w") as other:
        fcntl.flock(other.fileno(), fcntl.LOCK_EX)
        result = run(EIGHT, "--heuristic", "manhattan", "--format", "json", "--output", path, "--resume")
    assert result.exit_code == 1 and f"{path}: in use by another run of pdbtool solve" in result.stderr


def test_a_damaged_line_inside_the_file_is_said_kept_and_its_instance_solved_again(tmp_path, full_runs):
    path = tmp_path / "out.json"
    lines = full_runs["json"].decode().splitlines(keepends=True)
    damaged = "".join(lines[:3]) + '{"id": "e4", "sol\n' + "".join(lines[4:6])
    path.write_text(damaged)
    result = run(EIGHT, "--heuristic", "manhattan", "--format", "json", "--output", path, "--resume")
    assert result.exit_code == 0 and f"{path}:4: not a result line" in result.stderr
    assert path.read_text().startswith(damaged)  # no line lost
    rows = [json.loads(ln) for ln in path.read_text().splitlines() if not ln.startswith('{"id": "e4", "sol')]
    assert sorted(r["id"] for r in rows if "summary" not in r) == sorted(f"e{i}" for i in range(1, 11))


# --- checkpoints ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fifteen():
    return {name: Solver(Board(4, 4), heuristic=name) for name in ("manhattan", "linear-conflict")}


class Stop(Exception):
    pass


def stop_after(n: int):
    calls = [0]

    def progress(bound, generated, expanded):
        calls[0] += 1
        if calls[0] >= n:
            raise Stop

    return progress


def search(solver, state, path, threads=1, progress=None, unit_nodes=1 << 12, every=3600.0, **kwargs):
    """A checkpointed search with small units (recorded when it stops, and every ``every`` seconds)."""
    recorder = ck.Recorder(path, solver.checkpoint_identity(state), every=every)
    h0 = Search(solver.heuristic, state).h0
    return ck.checkpointed_search(solver.heuristic, state, h0, recorder, threads, progress=progress,
                                  unit_nodes=unit_nodes, serial_below=1 << 10, chunk=min(unit_nodes, 1 << 14),
                                  report_every=0.01, **kwargs)


@pytest.mark.parametrize("heuristic, ident", [("manhattan", "12"), ("linear-conflict", "42")])
def test_a_resumed_serial_search_counts_exactly_the_nodes_of_an_uninterrupted_one(tmp_path, fifteen, heuristic,
                                                                                    ident):
    solver = fifteen[heuristic]
    state = KORF[ident]
    plain = solver.solve(state)
    path = tmp_path / "ck.json"
    whole = search(solver, state, path)
    assert (whole.generated, whole.expanded, len(whole.moves)) == \
           (plain.nodes_generated, plain.nodes_expanded, plain.length)
    assert not path.exists()  # removed once solved
    stops = 0
    records = []
    for n in (1, 4, 9, 17, 33, 65):
        try:
            search(solver, state, path, progress=stop_after(n))
        except Stop:
            stops += 1
            saved = json.loads(path.read_text())["progress"]
            records.append(saved)
            out = search(solver, state, path)
            assert (out.generated, out.expanded, out.iterations) == \
                   (plain.nodes_generated, plain.nodes_expanded, plain.iterations), (n, saved)
            assert out.moves == whole.moves
            assert not path.exists()
    assert stops >= 4
    assert any(saved["current"] and saved["current"]["done"] for saved in records)  # within an iteration


@pytest.mark.slow
def test_a_checkpoint_survives_sigkill(tmp_path, fifteen):
    path = tmp_path / "ck.json"
    script = textwrap.dedent(f"""
        from pdbtool.puzzle.board import Board
        from pdbtool.search.solver import Solver
        from pdbtool.search import checkpoint as ck
        from pdbtool.search.driver import Search
        solver = Solver(Board(4, 4), heuristic="manhattan")
        state = {KORF["2"]}
        recorder = ck.Recorder({str(path)!r}, solver.checkpoint_identity(state), every=0)
        ck.checkpointed_search(solver.heuristic, state, Search(solver.heuristic, state).h0, recorder,
                               unit_nodes=1 << 16, serial_below=1 << 12, chunk=1 << 14)
    """)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    proc = subprocess.Popen([sys.executable, "-c", script], env=env)
    try:
        # wait for an event: a record of the last iteration with units done
        while proc.poll() is None:
            try:
                saved = json.loads(path.read_text())["progress"]
            except (FileNotFoundError, ValueError):
                saved = None
            if saved and saved["bound"] == 55 and saved["current"] and saved["current"]["done"]:
                break
            time.sleep(0.01)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the search ended before the kill"
    solver = fifteen["manhattan"]
    out = search(solver, KORF["2"], path)
    plain_counts = (15300441, 7855093)  # the serial count of Korf's 2 with Manhattan (test_solve_cli)
    assert (out.generated, out.expanded) == plain_counts and len(out.moves) == 55


def stop_at(nodes: int):
    def progress(bound, generated, expanded):
        if generated >= nodes:
            raise Stop

    return progress


@pytest.mark.slow
def test_a_checkpoint_resumes_on_threads(tmp_path, fifteen):
    solver = fifteen["manhattan"]
    state = KORF["2"]
    plain = (15300441, 7855093)  # the serial count of Korf's 2 with Manhattan
    path = tmp_path / "ck.json"
    big = 1 << 16
    with pytest.raises(Stop):
        search(solver, state, path, threads=2, progress=stop_at(4_000_000), unit_nodes=big)
    saved = json.loads(path.read_text())["progress"]
    assert saved["iterations"] >= 1 and saved["current"]["done"]
    out = search(solver, state, path, threads=2, unit_nodes=big)
    assert len(out.moves) == 55 and not path.exists()
    serial = search(solver, state, path, unit_nodes=big)
    assert (serial.generated, serial.expanded) == plain
    # every iteration but the last counts exactly as serially (cumulative counts, earlier runs included)
    assert out.finished and out.finished == serial.finished[-len(out.finished):]
    # a checkpoint written on threads resumes on one thread with the serial counts
    with pytest.raises(Stop):
        search(solver, state, path, threads=2, progress=stop_at(4_000_000), unit_nodes=big)
    out = search(solver, state, path, unit_nodes=big)
    assert (out.generated, out.expanded) == plain


def test_a_time_limit_keeps_the_checkpoint_and_the_rerun_goes_on(tmp_path, fifteen):
    solver = fifteen["manhattan"]
    state = KORF["12"]
    plain = solver.solve(state)
    path = tmp_path / "ck.json"
    out = search(solver, state, path, node_limit=100_000)
    assert out.timed_out and out.moves is None and path.exists()
    out = search(solver, state, path)
    assert (out.generated, out.expanded) == (plain.nodes_generated, plain.nodes_expanded)


def test_a_checkpoint_of_another_search_is_refused(tmp_path, fifteen):
    path = tmp_path / "ck.json"
    manhattan = fifteen["manhattan"]
    with pytest.raises(Stop):
        search(manhattan, KORF["12"], path, progress=stop_after(3))
    before = path.read_bytes()
    with pytest.raises(ck.CheckpointError, match="a checkpoint of another instance"):
        search(manhattan, KORF["42"], path)
    with pytest.raises(ck.CheckpointError, match=r"another heuristic \(manhattan, not linear-conflict\)"):
        search(fifteen["linear-conflict"], KORF["12"], path)
    assert path.read_bytes() == before
    # tables: the same pattern with other values
    import numpy as np

    from pdbtool.tables.resolve import resolve_partition

    part = resolve_partition(str(EXAMPLES / "8puzzle-4-4.txt"), None)
    state = [8, 1, 3, 4, 0, 2, 7, 6, 5]
    tables = [np.zeros(p.entries, dtype=np.uint8) for p in part.patterns]
    one = Solver(part.board, partition=part, tables=tables)
    tables2 = [t.copy() for t in tables]
    tables2[0][5] = 1
    two = Solver(part.board, partition=part, tables=tables2)
    ck.Recorder(path, one.checkpoint_identity(state)).flush()
    with pytest.raises(ck.CheckpointError, match="other tables"):
        ck.Recorder(path, two.checkpoint_identity(state)).load()
    # the automaton's depth: another depth prunes another tree (a checkpoint that names none is of depth 12)
    board = Board(3, 3)
    fsm = {d: Solver(board, heuristic="manhattan", pruning="fsm", fsm_depth=d, cache_dir=tmp_path / "cache")
           for d in (12, 14)}
    assert "fsm_depth" not in fsm[12].checkpoint_identity(state)["options"]
    ck.Recorder(path, fsm[12].checkpoint_identity(state)).flush()
    ck.Recorder(path, Solver(board, heuristic="manhattan", pruning="fsm").checkpoint_identity(state)).load()
    with pytest.raises(ck.CheckpointError, match=r"a checkpoint of the pruning automaton of 12 moves: resume it "
                                                 r"with --fsm-depth 12"):
        ck.Recorder(path, fsm[14].checkpoint_identity(state)).load()
    ck.Recorder(path, fsm[14].checkpoint_identity(state)).flush()
    with pytest.raises(ck.CheckpointError, match="automaton of 14 moves: resume it with --fsm-depth 14"):
        ck.Recorder(path, fsm[12].checkpoint_identity(state)).load()
    with pytest.raises(ck.CheckpointError, match=r"another heuristic \(manhattan fsm14, not linear-conflict fsm\)"):
        ck.Recorder(path, Solver(board, heuristic="linear-conflict", pruning="fsm").checkpoint_identity(state)).load()
    path.write_text("not json")
    with pytest.raises(ck.CheckpointError, match="not a checkpoint"):
        ck.Recorder(path, one.checkpoint_identity(state)).load()
    with pytest.raises(ck.CheckpointError, match="cannot write a checkpoint in"):
        ck.Recorder(tmp_path / "no-such-folder" / "ck.json", one.checkpoint_identity(state)).load()


DAMAGE = [("bound", 10**30, r"bound 1000"), ("bound", -1, r"bound -1"), ("bound", "30", r"bound '30'"),
          ("bound", True, r"bound True"), ("bound", 1, r"bound 1 after \d+ iterations from h\(start\) \d+"),
          ("iterations", 500, r"after 500 iterations"), ("generated", 10**40, r"generated 1000"),
          ("seconds", float("nan"), r"seconds nan"), ("seconds", float("inf"), r"seconds inf"),
          ("current.target", 10**12, r"target 1000000000000"), ("current.target", 0, r"target 0"),
          ("current.done", [7, -1], r"done range 7"), ("current.done", [[0, 1], [0, 2]], r"done range \[0, 2\]"),
          ("current.done", [{"a": 1}], r"done range \{'a': 1\}"), ("current.done", "x", r"done 'x'"),
          ("current.next_bound", -1, r"next_bound -1"), ("current", [1], r"current is not an object")]


@pytest.mark.parametrize("signed", [True, False], ids=["resigned", "unsigned"])
@pytest.mark.parametrize("key,value,message", DAMAGE, ids=[f"{k}={v!r}"[:30] for k, v, _ in DAMAGE])
def test_a_damaged_checkpoint_is_refused_in_one_line(tmp_path, fifteen, key, value, message, signed):
    # values no search writes are refused even when the file's checksum was recomputed; a huge bound or target
    # would overflow the kernel or never return; a file without its checksum is refused whatever it holds
    path = tmp_path / "ck.json"
    manhattan = fifteen["manhattan"]
    with pytest.raises(Stop):
        search(manhattan, KORF["12"], path, progress=stop_after(9))
    data = json.loads(path.read_text())
    progress = data["progress"]
    if progress["current"] is None:
        progress["current"] = {"target": 1, "done": [], "generated": 0, "expanded": 0, "next_bound": ck.INF}
    if key.startswith("current."):
        progress["current"][key.split(".")[1]] = value
    else:
        progress[key] = value
    data.pop("checksum")
    if signed:
        data["checksum"] = ck._checksum(data)
    path.write_text(json.dumps(data))
    before = path.read_bytes()
    want = "damaged checkpoint .*" + message if signed else "without a checksum .* remove it to start this search anew"
    with pytest.raises(ck.CheckpointError, match=want) as err:
        search(manhattan, KORF["12"], path)
    assert "\n" not in str(err.value) and path.read_bytes() == before


def test_an_edited_checkpoint_fails_its_checksum(tmp_path, fifteen):
    # a bound raised past the optimum would return a longer path as optimal: the checksum refuses it
    path = tmp_path / "ck.json"
    manhattan = fifteen["manhattan"]
    with pytest.raises(Stop):
        search(manhattan, KORF["12"], path, progress=stop_after(9))
    data = json.loads(path.read_text())
    assert len(data["checksum"]) == 16
    data["progress"]["bound"] += 20
    path.write_text(json.dumps(data))
    with pytest.raises(ck.CheckpointError, match=r"damaged checkpoint \(its checksum does not match"):
        search(manhattan, KORF["12"], path)
    data["progress"]["bound"] -= 20  # the same contents, reformatted: the checksum is of the values
    path.write_text(json.dumps(data, indent=4, sort_keys=True))
    assert len(search(manhattan, KORF["12"], path).moves) == manhattan.solve(KORF["12"]).length


def test_the_checkpoint_names_the_table_files(tmp_path):
    solver = Solver(Board(3, 3), partition=str(EXAMPLES / "8puzzle-4-4.txt"), cache_dir=tmp_path / "cache")
    tables = solver.checkpoint_identity([8, 1, 3, 4, 0, 2, 7, 6, 5])["tables"]
    assert len(tables) == 2 and all(len(t["payload"]) == 16 for t in tables)
    assert sorted(len(t["tiles"]) for t in tables) == [4, 4]


def test_solve_checkpoint_cli(tmp_path):
    path = korf_file(tmp_path, "12", "42")
    ckpt = tmp_path / "ck.json"
    result = run(path, "--heuristic", "manhattan", "--checkpoint", ckpt, "--jobs", "2")
    assert result.exit_code == 2 and "--checkpoint FILE follows one search" in result.output
    # a checkpoint of the second instance: the batch would overwrite it, so it is refused
    manhattan = Solver(Board(4, 4), heuristic="manhattan")
    with pytest.raises(Stop):
        search(manhattan, KORF["42"], ckpt, progress=stop_after(3))
    result = run(path, "--heuristic", "manhattan", "--checkpoint", ckpt)
    assert result.exit_code == 1
    assert "a checkpoint of instance 42" in result.stderr and "the first instance to solve is 12" in result.stderr
    # the batch resumes from it when that instance comes first: --output and --resume skip 12
    out = tmp_path / "out.json"
    twelve = manhattan.solve(KORF["12"])  # a held result is re-checked: it must be the instance's solution
    out.write_text(json.dumps({"id": "12", "board": "4x4", "heuristic": "manhattan", "length": twelve.length,
                               "solution": twelve.solution, "h0": twelve.h0, "solved": True,
                               "nodes_generated": 1, "nodes_expanded": 1}) + "\n")
    result = run(path, "--heuristic", "manhattan", "--checkpoint", ckpt, "--format", "json", "--output", out,
                 "--resume")
    assert result.exit_code == 0, result.output
    rows = json_lines(out)
    assert rows[1]["id"] == "42" and rows[1]["nodes_generated"] == 877822 and not ckpt.exists()


# --- batch progress ---------------------------------------------------------------------------------------------

def test_batch_progress_when_asked():
    result = run(EIGHT, "--heuristic", "manhattan", "--progress")
    assert result.exit_code == 0
    lines = [ln for ln in result.stderr.splitlines() if "instances done" in ln]
    assert lines and lines[-1].startswith("pdbtool: 10 of 10 instances done, 0 failed")
    quiet = run(EIGHT, "--heuristic", "manhattan")
    assert "instances done" not in quiet.stderr


def test_batch_progress_text():
    from pdbtool.cli.solve import BatchProgress

    progress = BatchProgress(10, 2, None, True, every=0)
    progress.start -= 8.0  # 8 s for the first 4 of this run
    for failed in (False, True, False, False):
        progress(solver_module.SolveResult(error="x" if failed else None))
    text = progress.text(progress.start + 8.0)
    assert text == "6 of 10 instances done, 1 failed, 8 s, ~8 s left"


def test_output_with_ray_writes_each_result(tmp_path, monkeypatch):
    """With --ray the results file is written from the Ray backend's stream (here a stand-in for it)."""
    from pdbtool.search import ray_backend

    def batch(items, options, address=None, notify=None, progress=None):
        yield from solver_module.solve_batch(items, options, jobs=1)

    monkeypatch.setattr(ray_backend, "solve_batch", batch)
    path = tmp_path / "out.json"
    result = run(EIGHT, "--heuristic", "manhattan", "--format", "json", "--ray", "--output", path)
    assert result.exit_code == 0, result.output
    rows = json_lines(path)
    assert [r["id"] for r in rows[:-1]] == [f"e{i}" for i in range(1, 11)] and rows[-1]["solved"] == 10
