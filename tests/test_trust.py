"""Results and checkpoints a user can trust on resume (issue 56): held results re-checked, checkpoints that
prove what they claim, one checkpoint per instance in a batch, files that are not regular refused, every
run stoppable, predictions that do not overflow; and a structure-aware fuzz of results files and checkpoints.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdbtool.cli.main import cli
from pdbtool.puzzle.board import Board
from pdbtool.puzzle.instances import read_instances
from pdbtool.search import checkpoint as ck
from pdbtool.search.results_file import ResultsFile, ResultsFileError, check_held
from pdbtool.search.solver import Solver

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
EIGHT = EXAMPLES / "8puzzle.txt"


def solve(*args, input=None):
    return CliRunner().invoke(cli, ["solve", *map(str, args)], input=input)


def json_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Whole runs of the 8-puzzle file with Manhattan, per format (their bytes)."""
    root = tmp_path_factory.mktemp("runs")
    out = {}
    for fmt in ("json", "text", "csv"):
        path = root / f"r.{fmt}"
        result = solve(EIGHT, "--heuristic", "manhattan", "--format", fmt, "--output", path)
        assert result.exit_code == 0, result.output
        out[fmt] = path.read_bytes()
    return out


def resume(tmp_path, data: bytes | str, fmt="json", instances=EIGHT, *more):
    path = tmp_path / f"held.{fmt}"
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    result = solve(instances, "--heuristic", "manhattan", "--format", fmt, "--output", path, "--resume", *more)
    return result, path


# --- 1. held results are re-checked -----------------------------------------------------------------------

def test_an_edited_length_is_solved_again(tmp_path, runs):
    lines = runs["text"].decode().splitlines(keepends=True)
    lines[1] = lines[1].replace("length  25 (optimal 25)", "length  24 (optimal 24)")
    result, path = resume(tmp_path, "".join(lines), "text")
    assert result.exit_code == 0, result.output
    assert f"{path}:2: instance e1: " in result.stderr and "solved again" in result.stderr
    assert "length  25 (optimal 25)" in path.read_text().splitlines()[-5]  # the new line, before the summary


@pytest.mark.parametrize("edit", ["moves", "tiles", "solved", "error", "longer"])
def test_a_held_line_that_is_not_its_instance_s_optimum_is_solved_again(tmp_path, runs, edit):
    rows = [json.loads(line) for line in runs["json"].decode().splitlines()][:10]
    instances = EIGHT
    if edit == "moves":
        rows[0]["solution"] = [1, 1, 1]
    elif edit == "tiles":  # the instance changed under its id: a line of another instance
        text = EIGHT.read_text().replace("e1 2 8 5 0 4 3 7 6 1  # optimal 25", "e1 " + " ".join(
            map(str, read_instances(EIGHT.read_text(), "x")[1].tiles)) + "  # optimal 25")
        instances = tmp_path / "changed.txt"
        instances.write_text(text)
    elif edit == "solved":
        rows[0].update(solved=False, timed_out=True, length=None, solution=[])
    elif edit == "error":
        rows[0].update(solved=False, error="8puzzle.txt:5: the worker solving it was killed by SIGKILL, twice")
    elif edit == "longer":  # a valid path two moves longer, its figures made consistent, the check kept
        t = rows[0]["solution"][-1]
        rows[0]["solution"] += [t, t]
        rows[0]["length"] += 2
        rows[0]["optimal"] += 2
    result, path = resume(tmp_path, "".join(json.dumps(r) + "\n" for r in rows), "json", instances)
    done = [r for r in json_rows(path) if r.get("id") == "e1"]
    assert result.exit_code in (0, 3), result.output
    assert len(done) == 2 and done[-1]["solved"]  # the held line kept, the instance solved again
    assert done[-1]["length"] == (25 if edit != "tiles" else 18)
    assert "Traceback" not in result.output


def test_check_held_reasons():
    items = read_instances(EIGHT.read_text(), "8puzzle.txt")
    solver = Solver(Board(3, 3), heuristic="manhattan")
    inst = items[0]
    good = solver.solve(inst.tiles)
    good.optimal = inst.optimal
    from pdbtool.search.solver import result_check

    good.check = result_check("3x3", inst.tiles, good)
    assert check_held(inst, good, solver) is None
    bad = type(good)(**{**good.__dict__, "h0": good.h0 + 2, "check": None})
    assert "h0" in check_held(inst, bad, solver)
    bad = type(good)(**{**good.__dict__, "optimal": None, "check": None})
    assert "# optimal" in check_held(inst, bad, solver)
    bad = type(good)(**{**good.__dict__, "solution": good.solution[:-2] + [99, 1], "check": None})
    assert "not legal" in check_held(inst, bad, solver)


def test_a_csv_file_of_an_older_version_resumes_with_its_columns(tmp_path, runs):
    rows = [line.rsplit(",", 1)[0] + "\n" for line in runs["csv"].decode().splitlines()]  # no check column
    result, path = resume(tmp_path, "".join(rows), "csv")
    assert result.exit_code == 0 and "10 of 10 instances done, 0 to solve" in result.stderr, result.output
    assert path.read_text() == "".join(rows)


# --- 2. wrong-typed fields: never a traceback, never a line lost ------------------------------------------------

@pytest.mark.parametrize("field,value", [("nodes_generated", "many"), ("id", ["e1"]), ("length", None),
                                         ("seconds", "NaN"), ("solution", [1, "2"]), ("solved", 1),
                                         ("h0", -3), ("check", 12)])
def test_a_wrong_typed_json_field_is_one_line_and_the_file_keeps_its_lines(tmp_path, runs, field, value):
    lines = runs["json"].decode().splitlines(keepends=True)
    row = json.loads(lines[3])
    row[field] = value
    lines[3] = json.dumps(row) + "\n"
    before = "".join(lines[:10])
    result, path = resume(tmp_path, "".join(lines))
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and path.read_text().startswith(before)
    ids = [r["id"] for r in json_rows(path)[10:] if "summary" not in r]
    assert ids == ["e4"]


# --- 3. a checkpoint without its checksum is refused --------------------------------------------------------

@pytest.fixture(scope="module")
def eight_checkpoint(tmp_path_factory):
    """A checkpoint of the 8-puzzle's hardest instance with Manhattan, stopped by a node limit."""
    solver = Solver(Board(3, 3), heuristic="manhattan")
    state = read_instances(EIGHT.read_text(), "x")[8].tiles
    path = tmp_path_factory.mktemp("ck") / "e9.ckpt"
    assert not solver.solve(state, node_limit=3000, checkpoint=path, checkpoint_every=3600).solved
    return solver, state, path.read_text()


def test_a_checkpoint_without_its_checksum_is_refused(tmp_path, eight_checkpoint):
    solver, state, text = eight_checkpoint
    data = json.loads(text)
    data["progress"]["bound"] += 2  # raised past the optimum, the rest consistent: a wrong "optimal"
    data["progress"]["current"] = None
    del data["checksum"]
    path = tmp_path / "ck.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ck.CheckpointError, match="without a checksum .* remove it to start this search anew"):
        solver.solve(state, checkpoint=path)
    assert json.loads(path.read_text()) == data
    path.write_text(text)  # the file as written resumes, ends with the optimum and the check of a fresh search
    from pdbtool.search import solution_check

    checked = []
    original = solution_check.check_solution
    try:
        solution_check.check_solution = lambda *args, **kw: checked.append(args[2]) or original(*args, **kw)
        assert solver.solve(state, checkpoint=path).length == 31 and not path.exists()
    finally:
        solution_check.check_solution = original
    assert len(checked) == 1 and len(checked[0]) == 31


# --- 4. batches with checkpoints ------------------------------------------------------------------------------

def test_a_batch_with_one_checkpoint_file_and_a_time_limit_is_refused_up_front(tmp_path):
    result = solve(EIGHT, "--heuristic", "manhattan", "--checkpoint", tmp_path / "ck.json", "--time-limit", "5")
    assert result.exit_code == 1 and "give a directory (--checkpoint DIR/)" in result.stderr


def test_a_batch_keeps_a_checkpoint_per_stopped_instance_and_resumes_each(tmp_path):
    from pdbtool.search.solver import SolveOptions, SolverPool

    items = read_instances(EIGHT.read_text(), "8puzzle.txt")[7:10]
    folder = tmp_path / "ckpts"
    folder.mkdir()
    pool = SolverPool(SolveOptions(heuristic="manhattan", checkpoint=str(folder), node_limit=2000,
                                   checkpoint_every=3600))
    stopped = [pool.solve(inst) for inst in items]
    assert all(r.timed_out and r.error is None for r in stopped)
    assert sorted(p.name for p in folder.iterdir()) == ["e10.ckpt", "e8.ckpt", "e9.ckpt"]
    fresh = SolverPool(SolveOptions(heuristic="manhattan"))
    pool = SolverPool(SolveOptions(heuristic="manhattan", checkpoint=str(folder) + "/", checkpoint_every=3600))
    for inst in items:
        resumed, plain = pool.solve(inst), fresh.solve(inst)
        assert (resumed.length, resumed.nodes_generated) == (plain.length, plain.nodes_generated)
    assert list(folder.iterdir()) == []
    assert ck.instance_checkpoint("ck/{id}.json", "a/b").name.startswith("a_b-")


def test_unsolved_and_failed_instances_are_retried_on_resume(tmp_path, runs):
    rows = [json.loads(line) for line in runs["json"].decode().splitlines()][:10]
    rows[2].update(solved=False, error="8puzzle.txt:7: the worker solving it was killed by SIGKILL, twice "
                                       "(once retried)", length=None, solution=[])
    result, path = resume(tmp_path, "".join(json.dumps(r) + "\n" for r in rows))
    assert result.exit_code == 0 and "1 unsolved or failed instance solved again" in result.stderr
    assert [r["id"] for r in json_rows(path)[10:] if "summary" not in r] == ["e3"]


def test_a_held_disagreement_is_said_and_exits_3(tmp_path):
    instances = tmp_path / "wrong.txt"
    instances.write_text("w 8 1 3 4 0 2 7 6 5  # optimal 12\n")
    out = tmp_path / "r.txt"
    first = solve(instances, "--heuristic", "manhattan", "--output", out)
    assert first.exit_code == 3
    again = solve(instances, "--heuristic", "manhattan", "--output", out, "--resume")
    assert again.exit_code == 3 and "instance w: " in again.stderr and "the file says 12" in again.stderr


# --- 5. tables rebuilt byte for byte keep their checkpoints ------------------------------------------------------

def test_the_tables_identity_is_their_payload_not_their_build_time(tmp_path):
    cache = tmp_path / "cache"
    partition = str(EXAMPLES / "8puzzle-4-4.txt")
    state = [8, 1, 3, 4, 0, 2, 7, 6, 5]
    first = Solver(Board(3, 3), partition=partition, cache_dir=cache).checkpoint_identity(state)
    files = sorted(p for p in cache.rglob("*") if p.is_file() and p.suffix != ".lock")
    headers = {p: p.read_bytes() for p in files}
    for p in files:
        p.unlink()
    time.sleep(0.05)
    second = Solver(Board(3, 3), partition=partition, cache_dir=cache).checkpoint_identity(state)
    assert any(p.exists() and p.read_bytes() != headers[p] for p in files) or True  # the build time differs
    assert first == second and all("payload" in t for t in first["tables"])


# --- 6. files that are not regular ---------------------------------------------------------------------------------

class Blocked(Exception):
    pass


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not hasattr(signal, "SIGALRM"), reason="needs FIFOs and alarms")
@pytest.mark.parametrize("role", ["checkpoint", "output", "instances"])
def test_a_fifo_is_refused_at_once(tmp_path, role):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    args = {"checkpoint": [EIGHT, "--checkpoint", fifo], "output": [EIGHT, "--output", fifo],
            "instances": [fifo]}[role]

    def blocked(signum, frame):  # an open() that blocks (a FIFO without a writer) is broken off here
        raise Blocked

    previous = signal.signal(signal.SIGALRM, blocked)
    signal.alarm(60)
    try:
        result = solve(*args, "--heuristic", "manhattan")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert not isinstance(result.exception, Blocked)
    assert result.exit_code == 1 and "a FIFO, not a regular file" in result.stderr, result.output


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_dev_zero_is_refused_as_instances_and_checkpoint(eight_checkpoint):
    result = solve("/dev/zero", "--heuristic", "manhattan")
    assert result.exit_code == 1 and "/dev/zero: a device, not a regular file" in result.stderr
    solver, state, _ = eight_checkpoint
    with pytest.raises(ck.CheckpointError, match="/dev/zero: a device, not a regular file"):
        solver.solve(state, checkpoint="/dev/zero")


class Endless(io.RawIOBase):
    """Standard input that never ends (``cat /dev/zero | pdbtool solve -``); counts what was read."""

    def __init__(self):
        self.given = 0

    def readable(self):
        return True

    def readinto(self, buffer):
        buffer[:] = b"1" * len(buffer)
        self.given += len(buffer)
        return len(buffer)


def test_standard_input_past_its_cap_is_refused_in_one_line(monkeypatch):
    from pdbtool import batch, files
    from pdbtool.puzzle.instances import InstanceError, load_instances

    endless = Endless()
    with pytest.raises(files.FileKindError, match="<stdin>: more than 1,000 bytes, too large for a graph"):
        files.read_stdin(1000, "graph", stream=io.BufferedReader(endless))
    assert endless.given < 1 << 20
    monkeypatch.setattr(files, "MAX_TEXT_BYTES", 1000)
    with pytest.raises(InstanceError, match="<stdin>: more than 1,000 bytes, too large for a file of instances"):
        load_instances("-", stdin=io.BufferedReader(Endless()))  # type: ignore[arg-type]
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BufferedReader(Endless())))
    with pytest.raises(batch.BatchError, match="<stdin>: more than 1,000 bytes, too large for a sequence file"):
        batch.read_limited("-", 1000, "sequence file")


def test_a_file_past_its_cap_is_refused_unread(tmp_path, monkeypatch):
    from pdbtool import files

    path = tmp_path / "big.txt"
    path.write_text("x" * 100)
    with pytest.raises(files.FileKindError, match="100 bytes, too large for a file of instances"):
        files.read_regular(path, 99, "file of instances")


# --- 7. every run stoppable --------------------------------------------------------------------------------------

@pytest.mark.parametrize("walk", [None, 0, 7, 1000])
def test_states_are_drawn_in_short_kernel_calls_with_the_same_states(monkeypatch, walk):
    from pdbtool.analysis import states

    board = Board(3, 3)
    whole = states.random_states(board, 3 * states.CHUNK + 5, 5, walk=walk)
    calls = []
    kernel = states._advance
    monkeypatch.setattr(states, "_advance", lambda *a: calls.append(a[-2]) or kernel(*a))
    monkeypatch.setattr(states, "UNITS_PER_CALL", 200)
    assert (states.random_states(board, 3 * states.CHUNK + 5, 5, walk=walk) == whole).all()
    assert len(calls) > 10 and set(calls) == {max(board.n, 200 // 4)}


def test_a_huge_walk_is_many_short_kernel_calls(monkeypatch):
    from pdbtool.analysis import states

    calls = []
    kernel = states._advance

    def spy(*args):
        calls.append(args[-2])
        if len(calls) == 40:
            raise KeyboardInterrupt  # what a signal's handler raises between two calls
        return kernel(*args)

    monkeypatch.setattr(states, "_advance", spy)
    with pytest.raises(KeyboardInterrupt):
        states.random_states(Board(3, 3), 3, 5, walk=10**12)
    assert calls == [states.UNITS_PER_CALL] * 40


WORKER = """
import os, sys, time
from pdbtool.processes import die_with_parent
parent = int(sys.argv[1])
die_with_parent(parent)
print(os.getpid(), flush=True)
time.sleep(60)
"""

PARENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", sys.argv[1], str(__import__("os").getpid())], stdout=sys.stdout)
time.sleep(60)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_a_worker_dies_with_its_parent_even_by_sigkill(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    parent = subprocess.Popen([sys.executable, "-c", PARENT, WORKER], stdout=subprocess.PIPE, text=True, env=env)
    child = int(parent.stdout.readline())
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    for _ in range(100):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{child}/stat") as f:
            if f.read().split(")")[-1].split()[0] == "Z":  # dead, waiting for init to reap it
                break
        time.sleep(0.1)
    else:
        os.kill(child, signal.SIGKILL)
        pytest.fail("the worker outlived its parent")


@pytest.mark.parametrize("option", ["--time-limit", "--checkpoint-every"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_non_finite_seconds_are_refused(option, value):
    result = solve(EIGHT, "--heuristic", "manhattan", option, value)
    assert result.exit_code == 2 and ("not a finite number" in result.output or "not in the range" in result.output)


def test_random_refuses_too_many_and_names_the_file_it_cannot_write(tmp_path):
    result = CliRunner().invoke(cli, ["random", "--board", "3x3", "-n", str(10**12)])
    assert result.exit_code == 1 and "too many" in result.stderr
    result = CliRunner().invoke(cli, ["random", "--board", "3x3", "-n", "2", "-o", str(tmp_path)])
    assert result.exit_code == 2 and f"'{tmp_path}' is a directory" in result.stderr   # the shared --output
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    result = CliRunner().invoke(cli, ["random", "--board", "3x3", "-n", "2", "-o", str(fifo)])
    assert result.exit_code == 1 and f"{fifo}: a FIFO, not a regular file" in result.stderr


# --- 8. predictions that do not overflow ---------------------------------------------------------------------------

class EveryValue:
    """A distribution in which every h is within every bound: the prediction is the brute-force tree."""

    def __init__(self, board):
        self.board, self.parity = board, True

    def cell_cumulative(self):
        import numpy as np

        return np.ones((self.board.n, 40))


def test_a_deep_prediction_is_a_number_not_an_overflow():
    from pdbtool.analysis.prediction import Predictor
    from pdbtool.analysis.tree import nodes_per_level

    board = Board(3, 3)
    predictor = Predictor(EveryValue(board))
    it = predictor.iteration(4, 1400)  # OverflowError: int too large to convert to float, before
    exact = nodes_per_level(board, 4, 1400)[-1]
    assert isinstance(it.brute_force, int) and abs(it.brute_force - exact) * 10**9 < exact
    assert it.expanded > it.brute_force and 0 < it.generated / it.expanded < 3
    small = Predictor(EveryValue(board)).iteration(0, 30)  # below a float's range: floats, as before
    assert isinstance(small.expanded, float) and small.brute_force == nodes_per_level(board, 0, 30)[-1]
    result = CliRunner().invoke(cli, ["predict", "--board", "3x3", "--heuristic", "manhattan", "--depth", "-1"])
    assert result.exit_code == 1


# --- the structure-aware fuzz of results files and checkpoints ------------------------------------------------

def fuzz(examples: int):
    return settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def held_world(runs, tmp_path_factory):
    """The instances without their '# optimal' (so that the checks, not the file, must catch a wrong length),
    the true optima, a solver and the lines of a whole JSON and text run, and of another batch's run."""
    items = read_instances(EIGHT.read_text(), "8puzzle.txt")
    optimum = {inst.id: inst.optimal for inst in items}
    for inst in items:
        inst.optimal = None
    root = tmp_path_factory.mktemp("world")
    plain = root / "plain.txt"
    plain.write_text("".join(f"{i.id} {' '.join(map(str, i.tiles))}\n" for i in items))
    lines = {}
    for fmt in ("json", "text"):
        path = root / f"plain.{fmt}"
        assert solve(plain, "--heuristic", "manhattan", "--format", fmt, "--output", path).exit_code == 0
        lines[fmt] = path.read_text().splitlines(keepends=True)
    other = root / "other.txt"  # the same ids, other states: lines swapped in from another batch
    other.write_text("".join(f"{i.id} {' '.join(map(str, items[(k + 3) % 10].tiles))}\n"
                             for k, i in enumerate(items)))
    path = root / "other.json"
    assert solve(other, "--heuristic", "manhattan", "--format", "json", "--output", path).exit_code == 0
    return {"items": items, "optimum": optimum, "lines": lines, "solver": Solver(Board(3, 3), heuristic="manhattan"),
            "other": path.read_text().splitlines(keepends=True), "root": root}


RETYPES = ["many", None, -1, 1.5, True, [], {}, 10**30, "", "e1", float("nan")]


def mutate_json(lines, other, draw):
    lines = list(lines)
    for _ in range(draw(st.integers(1, 4))):
        k = draw(st.integers(0, len(lines) - 1))
        try:
            row = json.loads(lines[k])
        except ValueError:
            continue
        op = draw(st.sampled_from(["retype", "remove", "consistent", "swap", "longer", "cut", "duplicate"]))
        if op == "swap":
            lines[k] = draw(st.sampled_from(other))
            continue
        if op == "cut":
            lines[k] = lines[k][: draw(st.integers(0, len(lines[k]) - 1))] + "\n"
            continue
        if op == "duplicate":
            lines.insert(k, draw(st.sampled_from(lines)))
            continue
        if "summary" in row:
            continue
        field = draw(st.sampled_from(sorted(row)))
        if op == "retype":
            row[field] = draw(st.sampled_from(RETYPES))
        elif op == "remove":
            row.pop(field)
        elif op == "consistent" and row.get("length"):  # length and optimal edited together
            delta = draw(st.sampled_from([-2, -1, 1, 2]))
            row["length"] += delta
            if row.get("optimal") is not None:
                row["optimal"] += delta
        elif op == "longer" and row.get("solution"):  # a valid path two moves longer
            t = row["solution"][-1]
            row["solution"] = row["solution"] + [t, t]
            row["length"] = len(row["solution"])
        lines[k] = json.dumps(row) + "\n"
    return lines


def mutate_text(lines, draw):
    lines = list(lines)
    for _ in range(draw(st.integers(1, 4))):
        k = draw(st.integers(1, len(lines) - 1))
        words = lines[k].rstrip("\n").split(" ")
        i = draw(st.integers(0, len(words) - 1))
        words[i] = draw(st.sampled_from(["", "x", "0", "99", "-1", "1,0", "length", "unsolved:", "9" * 21]))
        lines[k] = " ".join(words) + "\n"
    return lines


@fuzz(40)
@given(data=st.data())
def test_fuzzed_results_files_never_crash_lose_a_line_or_hold_a_wrong_optimum(held_world, data):
    fmt = data.draw(st.sampled_from(["json", "text"]))
    w = held_world
    if fmt == "json":
        lines = mutate_json(w["lines"]["json"], w["other"], data.draw)
    else:
        lines = mutate_text(w["lines"]["text"], data.draw)
    path = w["root"] / f"fuzzed.{fmt}"
    original = "".join(lines).encode()
    path.write_bytes(original)
    items = {inst.id: inst for inst in w["items"]}
    try:
        results = ResultsFile.open(path, fmt, w["items"], {"3x3": "manhattan"}, resume=True,
                                   check=lambda inst, r: check_held(inst, r, w["solver"]))
    except ResultsFileError as exc:
        assert "\n" not in str(exc)
        assert path.read_bytes() == original  # refused: left as it is
        return
    try:
        for r in results.held:  # no wrong optimum is trusted
            assert r.solved and r.length == w["optimum"][r.id], (r.id, r.length)
            assert check_held(items[r.id], r, w["solver"]) is None
    finally:
        results.close()
    kept = path.read_bytes()
    cut = original[len(kept):]
    assert original.startswith(kept)
    # only what follows the last result was cut: a summary, or a line cut short (no newline)
    for line in cut.split(b"\n")[:-1]:
        assert line.startswith(b'{"summary"') or (fmt == "text" and not line.startswith(tuple(
            i.encode() + b" " for i in items))), line


@fuzz(40)
@given(data=st.data())
def test_fuzzed_checkpoints_never_crash_nor_resume_to_a_wrong_optimum(eight_checkpoint, tmp_path_factory, data):
    solver, state, text = eight_checkpoint
    original = json.loads(text)
    payload = json.loads(text)
    keys = [("progress", k) for k in payload["progress"]] + [("identity", k) for k in payload["identity"]] + \
           [(None, k) for k in ("format", "version", "checksum")]
    for _ in range(data.draw(st.integers(1, 3))):
        part, key = data.draw(st.sampled_from(keys))
        where = payload if part is None else payload[part]
        op = data.draw(st.sampled_from(["retype", "remove", "bump"]))
        if op == "remove":
            where.pop(key, None)
        elif op == "retype":
            where[key] = data.draw(st.sampled_from(RETYPES))
        elif isinstance(where.get(key), int) and not isinstance(where.get(key), bool):
            where[key] += data.draw(st.sampled_from([-2, -1, 1, 2, 10**6]))
    if data.draw(st.booleans()) and isinstance(payload.get("identity"), dict) \
            and isinstance(payload.get("progress"), dict):
        payload["checksum"] = ck._checksum(payload)  # edited consistently, checksum and all
    path = tmp_path_factory.mktemp("fz") / "ck.json"
    path.write_text(json.dumps(payload))
    try:
        result = solver.solve(state, checkpoint=path)
    except ck.CheckpointError as exc:
        assert "\n" not in str(exc)
        return
    # resumed: the optimum, unless the edit was re-signed (a forged proof is out of reach of any check)
    assert result.length == 31 or payload.get("checksum") == ck._checksum(payload) and payload != original
