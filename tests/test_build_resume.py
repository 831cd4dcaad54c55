"""Table builds that stop at a signal and resume after a kill (issue 56; issue 55's tables of hours): the
layers expanded a slice of blocks per kernel call, the build record, a build killed by SIGKILL or stopped
by SIGTERM and resumed to the same bytes as an uninterrupted build."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from pdbtool import processes
from pdbtool.puzzle.board import Board
from pdbtool.tables.build import BuildRecorder, build_table
from pdbtool.tables.ranking import TilePattern

REPO = Path(__file__).resolve().parent.parent
PATTERN = TilePattern(Board(4, 4), (1, 2, 3, 4))
IDENTITY = {"board": [4, 4], "tiles": [1, 2, 3, 4], "test": True}


@pytest.fixture(scope="module")
def single():
    """Each blank rule's table of PATTERN, built on one thread in one slice a layer."""
    return {blank: build_table(PATTERN, blank, threads=1) for blank in ("ignored", "minimized", "zero-aware")}


def _env():
    return dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))


@pytest.mark.parametrize("blank", ["ignored", "minimized", "zero-aware"])
def test_a_layer_expanded_a_block_per_call_gives_the_same_table(monkeypatch, single, blank):
    calls = []
    run = processes.run_in_slices

    def counting(units, step, first=0, stop=None, size=None):
        return run(units, lambda a, b: calls.append(b - a) or step(a, b), first, stop, size)

    monkeypatch.setattr(processes, "SLICE_SECONDS", 0.0)  # every slice "too long": one block a call
    monkeypatch.setattr("pdbtool.tables.build.driver.run_in_slices", counting)
    result = build_table(PATTERN, blank, threads=2)
    assert np.array_equal(result.table, single[blank].table)
    assert result.layers == single[blank].layers and result.moves == single[blank].moves
    assert calls.count(1) > 10 * len(result.layers)


def test_run_in_slices_covers_the_range_once_and_stops_between_slices():
    seen: list[tuple[int, int]] = []

    class Stop:
        requested = False

    stop = Stop()

    def step(a, b):
        seen.append((a, b))
        stop.requested = len(seen) == 3

    size = [7]
    end = processes.run_in_slices(100, step, 5, stop, size)  # type: ignore[arg-type]
    assert seen[0] == (5, 12) and len(seen) == 3 and end == seen[-1][1]
    assert all(a == b for (_, a), (b, _) in zip(seen, seen[1:]))
    seen.clear()
    stop.requested = False
    assert processes.run_in_slices(100, lambda a, b: seen.append((a, b)), end) == 100
    assert seen[0][0] == end and seen[-1][1] == 100


KILLED_BUILD = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from pdbtool import processes
    from pdbtool.puzzle.board import Board
    from pdbtool.tables.build import BuildRecorder, build_table
    from pdbtool.tables.ranking import TilePattern

    blank, path, identity = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    processes.SLICE_SECONDS = 0.0

    class Stalling(BuildRecorder):
        saves = 0

        def due(self):
            return True

        def save(self, state):
            super().save(state)
            Stalling.saves += 1
            if Stalling.saves == 40:  # the record of a build in the middle of a layer: killed here
                print(state.depth, state.next_block, flush=True)
                time.sleep(600)

    build_table(TilePattern(Board(4, 4), (1, 2, 3, 4)), blank, threads=2, recorder=Stalling(Path(path), identity))
    print("finished", flush=True)
""")


@pytest.mark.parametrize("blank", ["ignored", "zero-aware"])
def test_a_build_killed_by_sigkill_resumes_to_the_same_bytes(tmp_path, single, blank):
    path = tmp_path / "t.pdb.build"
    import json

    child = subprocess.Popen([sys.executable, "-c", KILLED_BUILD, blank, str(path), json.dumps(IDENTITY)],
                             stdout=subprocess.PIPE, text=True, env=_env())
    try:
        depth, next_block = (int(x) for x in child.stdout.readline().split())  # type: ignore[union-attr]
    finally:
        child.kill()
        child.wait()
    assert child.returncode == -signal.SIGKILL and next_block > 0 and path.exists()
    notes: list[str] = []
    result = build_table(PATTERN, blank, threads=2, recorder=BuildRecorder(path, IDENTITY, notify=notes.append))
    assert notes == [f"{path}: resuming the build at depth {depth} ({notes[0].split('(')[1]}"]
    assert np.array_equal(result.table, single[blank].table)
    assert result.layers == single[blank].layers and result.moves == single[blank].moves


def _record_of_a_stopped_build(path: Path, blank: str = "minimized") -> None:
    """A record of PATTERN's build stopped at a layer's end (the state a kill at that moment leaves)."""
    from pdbtool.tables.build import driver

    class Stop(Exception):
        pass

    rec = BuildRecorder(path, IDENTITY)
    bfs = driver._LayeredBfs(PATTERN, blank, 2, rec)

    def progress(depth, states, done):
        if depth == 6:
            bfs.record()
            raise Stop

    with pytest.raises(Stop):
        bfs.run(processes.StopSignals(), progress)


@pytest.mark.parametrize("damage", ["flip", "cut", "identity", "shape"])
def test_a_record_that_proves_nothing_is_said_in_one_line_and_the_build_starts_anew(tmp_path, single, damage):
    path = tmp_path / "t.pdb.build"
    _record_of_a_stopped_build(path)
    identity = IDENTITY
    pattern = PATTERN
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 1
        path.write_bytes(bytes(data))
    elif damage == "cut":
        path.write_bytes(bytes(data[:-100]))
    elif damage == "identity":
        identity = dict(IDENTITY, tiles=[1, 2, 3, 5])
    notes: list[str] = []
    if damage == "shape":  # the record of the same identity for another pattern: its arrays are not this build's
        pattern = TilePattern(Board(4, 4), (1, 2, 3))
    result = build_table(pattern, "minimized", threads=2, recorder=BuildRecorder(path, identity, notify=notes.append))
    reason = {"flip": "checksum does not match", "cut": "length is not what its header says",
              "identity": "the record of another build (its tiles differs)", "shape": "arrays are not this build's"}
    assert len(notes) == 1 and reason[damage] in notes[0] and notes[0].endswith("the build starts anew")
    if damage != "shape":
        assert np.array_equal(result.table, single["minimized"].table)


def test_a_record_of_other_code_is_not_resumed(tmp_path, monkeypatch):
    from pdbtool.tables.build import record

    path = tmp_path / "t.pdb.build"
    _record_of_a_stopped_build(path, "ignored")
    monkeypatch.setattr(record, "code_version", lambda: "0.0+other")
    notes: list[str] = []
    BuildRecorder(path, IDENTITY, notify=notes.append).load(
        __import__("pdbtool.tables.build", fromlist=["record_shapes"]).record_shapes(PATTERN, "ignored"))
    assert len(notes) == 1 and "its code differs" in notes[0] and not path.exists()


TERMINATED_BUILD = textwrap.dedent("""
    import os, signal, sys
    from pdbtool.tables.build import driver

    layer_end = driver._LayeredBfs._layer_end

    def ending(self, progress):  # SIGTERM in the middle of the build, as `kill PID` sends it
        if self.state.depth == 5:
            os.kill(os.getpid(), signal.SIGTERM)
        return layer_end(self, progress)

    driver._LayeredBfs._layer_end = ending
    from pdbtool.cli.main import main
    main(sys.argv[1:])
""")


def test_a_build_stopped_by_sigterm_keeps_its_record_and_the_same_command_resumes_it(tmp_path, single):
    args = ["build", "--pattern", "1,2,3,4", "--board", "4x4", "--cache-dir", str(tmp_path), "--format", "json"]
    stopped = subprocess.run([sys.executable, "-c", TERMINATED_BUILD, *args], capture_output=True, text=True,
                             env=_env())
    assert stopped.returncode == 128 + signal.SIGTERM, stopped.stderr
    lines = stopped.stderr.strip().splitlines()
    assert "the build's progress is recorded" in lines[-2] and lines[-1].startswith("pdbtool: terminated")
    assert not list(tmp_path.glob("*.pdb")) and len(list(tmp_path.glob("*.pdb.build"))) == 1
    resumed = subprocess.run([sys.executable, "-m", "pdbtool", *args], capture_output=True, text=True, env=_env())
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming the build at depth" in resumed.stderr
    assert not list(tmp_path.glob("*.build")) and not list(tmp_path.glob("*.tmp-*"))
    from pdbtool.tables.fileformat import load

    (table,) = tmp_path.glob("*.pdb")
    assert np.array_equal(np.asarray(load(table).payload), single["minimized"].table)


def test_a_hanoi_layer_expanded_a_block_per_call_gives_the_same_table(monkeypatch):
    from pdbtool.hanoi4 import kernels, tables

    whole = tables.build_values(10, "peg3", threads=1)
    calls = []
    layer = kernels.bfs_layer
    monkeypatch.setattr(processes, "SLICE_SECONDS", 0.0)
    monkeypatch.setattr(kernels, "bfs_layer", lambda *a: calls.append(a[-1] - a[-2]) or layer(*a))
    sliced = tables.build_values(10, "peg3", threads=2)
    assert np.array_equal(sliced.values, whole.values) and sliced.layers == whole.layers
    assert calls.count(1) > len(whole.layers)
