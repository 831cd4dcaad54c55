"""The domains' batch runner (pdbtool/batch.py) on a toy domain (tests/batch_toy.py): formats, worker
processes, exit statuses, the results file and what --resume trusts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import batch_toy
from pdbtool.batch import BatchError, read_limited

HERE = Path(__file__).resolve().parent


def run(*args):
    return CliRunner().invoke(batch_toy.command, [str(a) for a in args])


def records(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def test_records_in_input_order_the_same_with_processes():
    names = [f"n{i}={i}" for i in range(6)]
    one = run(*names, "--format", "json")
    two = run(*names, "--format", "json", "--jobs", "2")
    assert one.exit_code == two.exit_code == 0, one.output + two.output
    assert [r["square"] for r in records(one.output)] == [i * i for i in range(6)]
    assert records(one.output) == records(two.output)


def test_exit_statuses_and_failures_do_not_stop_the_batch():
    result = run("a=2", "fail1=3", "bug1=4", "b=5", "--format", "json")
    assert result.exit_code == 1
    got = {r["id"]: r for r in records(result.output)}
    assert got["a"]["square"] == 4 and got["b"]["square"] == 25
    assert got["fail1"]["error"] == "cannot square this one"
    assert got["bug1"]["error"].startswith("internal error: ValueError")
    assert run("a=2", "wrong1=3").exit_code == 3
    assert run("a=2", "limit1=3").exit_code == 0          # stopped by the time limit: unsolved, not failed
    assert run("a=x").exit_code == 1                      # an instance that did not parse
    assert run("a=1", "a=2").exit_code == 1               # duplicate names


def test_text_summary_and_csv():
    text = run("a=2", "limit1=3", "fail1=1")
    assert "3 numbers: 1 solved, 1 stopped by the time limit, 1 failed" in text.output
    csv_out = run("a=2", "b=3", "--format", "csv").output.splitlines()
    assert csv_out[0] == "id,solved,square,error,disagreement" and csv_out[1] == "a,true,4,,"


def test_a_worker_killed_twice_fails_its_instance_only():
    result = run("a=2", "die1=3", "b=4", "--jobs", "2", "--format", "json")
    assert result.exit_code == 4, result.output
    got = {r["id"]: r for r in records(result.output)}
    assert "killed by SIGKILL, twice" in got["die1"]["error"]
    assert got["b"]["square"] == 16


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0", "many"])
def test_time_limit_must_be_finite_and_positive(value):
    result = run("a=1", "--time-limit", value)
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_resume_rechecks_held_records(tmp_path):
    out = tmp_path / "r.jsonl"
    first = run("a=2", "b=3", "limit1=4", "fail1=5", "--output", out, "--format", "json")
    assert first.exit_code == 1
    assert run("a=2", "--output", out).exit_code == 1                      # no --resume: nothing overwritten
    lines = out.read_text().splitlines()
    assert len(lines) == 4
    edited = json.loads(lines[1])
    edited["square"] = 10                                                 # b's square edited
    lines[1] = json.dumps(edited)
    out.write_text("\n".join(lines) + "\n" + '{"id": ["x"], "solved": 1}\nnot json\n{"id": "a", "sol')
    again = run("a=2", "b=3", "limit1=4", "fail1=5", "--output", out, "--resume", "--format", "json")
    assert f"{out}:2: b: the square is not the value's square; solving it again" in again.output
    assert f"{out}:5: no instance id; ignored" in again.output
    assert f"{out}:6: not JSON" in again.output
    # a kept, b re-solved, the unsolved and the failed retried
    assert [r["id"] for r in records(again.output)] == ["b", "limit1", "fail1"]
    assert "1 of 4 held results checked and kept, 3 to solve" in again.output
    # nothing lost: the cut line was ended before the new records
    tail = out.read_text().splitlines()[-3:]
    assert [json.loads(line)["id"] for line in tail] == ["b", "limit1", "fail1"]
    third = run("a=2", "b=3", "--output", out, "--resume", "--format", "json")
    assert third.exit_code == 0 and records(third.output) == []


def test_resume_csv(tmp_path):
    out = tmp_path / "r.csv"
    assert run("a=2", "b=3", "--output", out, "--format", "csv").exit_code == 0
    again = run("a=2", "b=3", "c=4", "--output", out, "--resume", "--format", "csv")
    assert again.exit_code == 0
    assert again.output.splitlines()[-1] == "c,true,16,,"
    assert out.read_text().splitlines()[0] == "id,solved,square,error,disagreement"
    assert len(out.read_text().splitlines()) == 4


def test_files_that_are_not_regular_are_refused_at_once(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    result = run("a=1", "--output", fifo)
    assert result.exit_code == 1 and "not a regular file" in result.output
    with pytest.raises(BatchError, match="not a regular file"):
        read_limited(fifo, 100)
    with pytest.raises(BatchError, match="not a regular file"):
        read_limited("/dev/zero", 100)
    big = tmp_path / "big"
    big.write_bytes(b"x" * 101)
    with pytest.raises(BatchError, match="too large"):
        read_limited(big, 100)
    assert read_limited(big, 101) == b"x" * 101


def test_workers_die_with_their_parent(tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    env = dict(os.environ, BATCH_TOY_PIDS=str(pids), PYTHONPATH=os.pathsep.join([str(HERE), *sys.path]))
    parent = subprocess.Popen([sys.executable, str(HERE / "batch_toy.py"), "slow1=1", "slow2=2", "--jobs", "2"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(list(pids.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        workers = [int(p.name) for p in pids.iterdir()]
        assert len(workers) == 2
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in workers)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def test_interrupt_names_what_is_kept(tmp_path):
    """SIGTERM to a batch with --output: the records of the finished instances are in the file, and the
    process ends with 128+15 within two seconds."""
    pids = tmp_path / "pids"
    pids.mkdir()
    out = tmp_path / "r.jsonl"
    env = dict(os.environ, BATCH_TOY_PIDS=str(pids), PYTHONPATH=os.pathsep.join([str(HERE), *sys.path]))
    code = ("import sys, batch_toy; from pdbtool.cli.main import main, cli; "
            "cli.get_command = lambda ctx, name: batch_toy.command; sys.exit(main(['toy', *sys.argv[1:]]))")
    parent = subprocess.Popen([sys.executable, "-c", code, "a=3", "slow1=1", "--output", str(out)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not list(pids.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.1)
    parent.send_signal(signal.SIGTERM)
    try:
        _, err = parent.communicate(timeout=5)
    finally:
        parent.kill()
    assert parent.returncode == 128 + signal.SIGTERM, err
    assert "1 of 2 numbers finished, kept in" in err
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["a"]
