"""The command at run time, in processes of its own: crafted input, a closed pipe, Ctrl-C on threads, and
the exit statuses."""

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

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
BIG = "9" * 5000
KORF60 = "11 14 13 1 2 3 12 4 15 7 9 5 10 6 8 0"  # hours with Manhattan distance


def pdbtool(*args, **kwargs):
    return subprocess.run([sys.executable, "-m", "pdbtool", *map(str, args)], capture_output=True, text=True,
                          cwd=REPO, timeout=300, **kwargs)


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def test_a_superscript_in_board_is_one_line(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("1 0 2 3 4 5 6 7 8\n")
    done = pdbtool("solve", src, "--board", "3x³", "--heuristic", "manhattan")
    assert done.returncode == 2
    assert one_line(done.stderr) == "pdbtool: board '3x³' is not of the form WxH (for example 4x4)"
    assert done.stdout == ""


def test_numbers_of_5000_digits_are_reported_and_the_rest_solved(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("\n".join(["a 1 0 2 3 4 5 6 7 8  # optimal 1",
                              f"b 1 0 2 3 4 5 6 7 {BIG}",
                              f"c 1 0 2 3 4 5 6 7 8  # optimal {BIG}",
                              f"{BIG} 3 1 2 0 4 5 6 7 8",
                              "e 3 1 2 0 4 5 6 7 8  # optimal 1"]) + "\n")
    done = pdbtool("solve", src, "--heuristic", "manhattan", "--format", "json")
    assert done.returncode == 1, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["id"], r["solved"]) for r in rows[:-1]] == [("a", True), ("b", False), ("c", False),
                                                           ("4", False), ("e", True)]
    assert rows[-1]["summary"] and rows[-1]["solved"] == 2 and rows[-1]["failed"] == 3
    errors = done.stderr.strip().splitlines()
    assert len(errors) == 3 and "Traceback" not in done.stderr
    assert all(e.startswith(f"pdbtool: {src}:") and len(e) < len(str(src)) + 120 for e in errors), errors


def test_exit_statuses_tell_a_disagreement_from_a_failure(tmp_path):
    cases = {"good": ("3 1 2 0 4 5 6 7 8  # optimal 1\n", 0),
             "bad": ("3 1 2 0 4 5 6 7\n", 1),
             "wrong": ("3 1 2 0 4 5 6 7 8  # optimal 3\n", 3),
             "both": ("3 1 2 0 4 5 6 7\n3 1 2 0 4 5 6 7 8  # optimal 3\n", 3)}
    from click.testing import CliRunner

    from pdbtool.cli.main import cli

    for name, (text, status) in cases.items():  # in this process: the statuses are Click's exit codes
        src = tmp_path / f"{name}.txt"
        src.write_text(text)
        done = CliRunner().invoke(cli, ["solve", str(src), "--heuristic", "manhattan"])
        assert done.exit_code == status, (name, done.output)
        assert done.exception is None or isinstance(done.exception, SystemExit)
    assert CliRunner().invoke(cli, ["solve", str(tmp_path / "absent.txt")]).exit_code == 1
    assert pdbtool("solve", tmp_path / "good.txt", "--no-such-option").returncode == 2
    helped = pdbtool("--help")
    assert helped.returncode == 0
    section = helped.stdout[helped.stdout.index("Exit status"):]
    for status in ("0", "1", "2", "3", "4", "130, 143", "141"):
        assert f"\n  {status} " in section, section


def test_a_closed_pipe_ends_quietly(tmp_path):
    """``pdbtool solve ... | head -1``: more output than a pipe holds, its reader gone after one line."""
    lines = [ln for ln in (EXAMPLES / "8puzzle.txt").read_text().splitlines() if ln and ln[0] != "#"]
    src = tmp_path / "many.txt"
    src.write_text("\n".join(lines * 200) + "\n")  # 2,000 lines of results, about 250 KB
    proc = subprocess.Popen([sys.executable, "-m", "pdbtool", "solve", str(src), "--heuristic", "manhattan"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    try:
        first = proc.stdout.readline()
        proc.stdout.close()
        stderr = proc.stderr.read().decode()
        proc.wait(120)
    finally:
        proc.kill()
    assert first.startswith(b"e1 ")
    assert proc.returncode == 128 + signal.SIGPIPE, stderr
    assert stderr == ""


def test_ctrl_c_stops_the_search_threads(tmp_path):
    """A real SIGINT while two threads search (through the library, in a process that goes on living):
    when the KeyboardInterrupt reaches the caller, the search threads have ended, and no CPU is used."""
    code = textwrap.dedent(f"""
        import json, os, signal, threading, time
        from pdbtool.puzzle.board import Board
        from pdbtool.search.solver import Solver

        # a parent that ignores SIGINT (a pytest-xdist worker) passes the ignoring on: restore Python's handler
        signal.signal(signal.SIGINT, signal.default_int_handler)
        solver = Solver(Board(4, 4), heuristic="manhattan")
        state = [{", ".join(KORF60.split())}]

        def progress(bound, generated, expanded):
            if threading.active_count() >= 2:  # a search thread is running (the other may have run dry)
                os.kill(os.getpid(), signal.SIGINT)

        try:
            solver.solve(state, threads=2, progress=progress)
            print(json.dumps("solved"))
        except KeyboardInterrupt:
            threads = threading.active_count()
            cpu = time.process_time()
            time.sleep(1.0)
            print(json.dumps([threads, time.process_time() - cpu]))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    threads, cpu = json.loads(done.stdout.splitlines()[-1])
    assert threads == 1  # the search threads were joined before the interrupt went on
    assert cpu < 0.5     # a search thread still running would use a whole second


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def threads_of(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(ln.split()[1] for ln in status.splitlines() if ln.startswith("Threads:")))


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.slow
def test_ctrl_c_on_a_threaded_solve_exits_at_once(tmp_path):
    """``pdbtool solve --threads 2``, a real SIGINT while both threads search: the summary, one line, 130."""
    src = tmp_path / "in.txt"
    src.write_text(f"60 {KORF60}\n")
    proc = subprocess.Popen([sys.executable, "-m", "pdbtool", "solve", str(src), "--heuristic", "manhattan",
                             "--threads", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        end = time.monotonic() + 120
        while time.monotonic() < end and cpu_seconds(proc.pid) < 4 and proc.poll() is None:
            time.sleep(0.2)  # imports, the kernel's load and the first small iterations on one thread
        end = time.monotonic() + 120
        while time.monotonic() < end and threads_of(proc.pid) < 3 and proc.poll() is None:
            time.sleep(0.1)
        assert proc.poll() is None and threads_of(proc.pid) >= 3, "the search threads did not start"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGINT, err
    assert err.strip().splitlines()[-1] == "pdbtool: interrupted"
    assert "60     interrupted" in out and "interrupted during instance 60" in out


def test_batch_status_orders_disagreement_then_dead_worker_then_failure():
    from types import SimpleNamespace as R

    from pdbtool.cli._common import batch_status

    ok = R(solved=True, optimal=5, length=5, error=None, signal=None)
    unsolved = R(solved=False, optimal=None, length=None, error=None, signal=None)  # a --time-limit
    failed = R(solved=False, optimal=None, length=None, error="f:2: bad", signal=None)
    killed = R(solved=False, optimal=None, length=None, error="f:3: killed", signal=9)
    wrong = R(solved=True, optimal=7, length=5, error="f:4: found 5, the file says 7", signal=None)
    assert batch_status([ok, unsolved]) == 0
    assert batch_status([ok, failed]) == 1
    assert batch_status([failed, killed]) == 4
    assert batch_status([killed, wrong, failed]) == 3
    assert batch_status([R(solved=True, optimal=None, length=5, error=None)]) == 0  # no 'signal' field
