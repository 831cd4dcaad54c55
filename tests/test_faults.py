"""Fault tolerance: damaged files, killed and concurrent builds, a full disk, too little memory.

The process tests run ``python -m pdbtool build`` in real subprocesses on a table that takes a second or
two (15-puzzle, 5 tiles) and signal or kill them mid-build.
"""

import errno
import fcntl
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import korf100

import pdbtool.tables.resources as resources_module
from pdbtool.tables import fileformat
from pdbtool.puzzle.board import Board
from pdbtool.tables.cache import TableCache
from pdbtool.cli.main import cli
from pdbtool.errors import PdbtoolError
from pdbtool.tables.ranking import TilePattern
from pdbtool.tables.table import PatternTable
from pdbtool.tables.fileformat import TableFileError

REPO = Path(__file__).resolve().parents[1]
SLOW_PATTERN = ["--pattern", "1,2,3,4,5", "--board", "4x4"]   # a build of a second or two
SLOW_NAME = "4x4-korf-t1.2.3.4.5-minimized-byte.pdb"


def env():
    return dict(os.environ, NUMBA_NUM_THREADS="2", PYTHONPATH=str(REPO))


def start_build(cache_dir, *extra):
    return subprocess.Popen([sys.executable, "-m", "pdbtool", "build", *SLOW_PATTERN, "--cache-dir", str(cache_dir),
                             *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(),
                            cwd=REPO)


def wait_for(path: Path, proc, timeout=120.0, until=Path.exists):
    """Wait until ``until(path)`` (by default: ``path`` exists) while ``proc`` runs; each look is cheap,
    the timeout only a bound on a hang."""
    end = time.monotonic() + timeout
    while not until(path):
        assert proc.poll() is None, f"the build ended early: {proc.communicate()}"
        assert time.monotonic() < end, f"{path.name}: not reached within {timeout} s"
        time.sleep(0.01)


PROC_LOCKS = Path("/proc/locks")


def locked(lock_path: Path) -> bool:
    """A process holds the flock on ``lock_path`` (a build is past taking its lock, inside its cleanup's
    reach), as the kernel's table of locks says: looking never takes the lock, so the build never waits
    for the test.  Without that table, the lock file's existence has to do."""
    try:
        inode = os.stat(lock_path).st_ino
    except FileNotFoundError:
        return False
    if not PROC_LOCKS.exists():
        return True
    for line in PROC_LOCKS.read_text().splitlines():
        fields = line.split()  # "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; "->" marks a waiter
        if "FLOCK" in fields and "->" not in fields:
            at = fields.index("FLOCK")
            if len(fields) > at + 4 and fields[at + 4].rsplit(":", 1)[-1] == str(inode):
                return True
    return False


def wait_locked(cache_dir: Path, proc, timeout=120.0):
    """Wait until the slow build of ``proc`` holds its lock."""
    wait_for(cache_dir / (SLOW_NAME + ".lock"), proc, timeout, until=locked)


def leftovers(cache_dir: Path):
    return sorted(p.name for p in cache_dir.iterdir() if not p.name.endswith(".pdb")) if cache_dir.exists() else []


@pytest.fixture
def tiny():
    return TilePattern(Board(3, 3), (1, 2))


@pytest.fixture
def small():
    return TilePattern(Board(3, 4), (1, 2, 3, 4))


# --- damaged files: every one refused with one line -----------------------------------------------------

def test_every_flipped_bit_and_every_truncation_is_refused(tmp_path, tiny):
    path = TableCache(tmp_path).get(tiny, "minimized").path
    data = path.read_bytes()
    bad = tmp_path / "bad.pdb"
    flips = 0
    for byte in range(len(data)):
        for bit in range(8):
            damaged = bytearray(data)
            damaged[byte] ^= 1 << bit
            bad.write_bytes(bytes(damaged))
            with pytest.raises(TableFileError) as info:
                PatternTable.load(bad)
            assert "\n" not in str(info.value) and str(bad) in str(info.value)
            flips += 1
    assert flips == 8 * len(data) > 3000
    for length in range(len(data)):
        bad.write_bytes(data[:length])
        with pytest.raises(TableFileError, match="empty|magic|truncated"):
            PatternTable.load(bad)


def rewrite(path, payload=None, **changes):
    """Rewrite a table file with header changes and a valid checksum (a header that lies, not a damaged one)."""
    header, offset = fileformat.read_header(path)
    header.pop("_file_bytes")
    header.update(changes)
    if payload is None:
        payload = np.frombuffer(path.read_bytes()[offset:-8], dtype=np.uint8)
    body = fileformat.encode_prefix(dict(header, payload_bytes=payload.nbytes, payload_dtype=payload.dtype.str))
    import xxhash

    raw = body + payload.tobytes()
    path.write_bytes(raw + xxhash.xxh64(raw).intdigest().to_bytes(8, "little"))


def test_headers_that_lie_and_future_versions(tmp_path, small):
    path = TableCache(tmp_path).get(small, "ignored").path
    good = path.read_bytes()
    cases = [
        (dict(entries=11879), "the header says 11879 entries"),
        (dict(entries="11880"), "entries is '11880', not a count"),
        (dict(tiles=[1, 2, 3]), "the header says 11880 entries, but 3 tiles on 3x4 \\(ignored\\) have 1320"),
        (dict(tiles=[1, 2, 3], entries=1320), "the payload holds 11880 entries, the pattern has 1320"),
        (dict(width=5), "goal is not a permutation of the 20 cells"),
        (dict(goal="korf"), "goal is 'korf', not a list"),
        (dict(blank="sideways"), "blank rule 'sideways'"),
        (dict(encoding=["byte"]), "encoding is ['byte'], not text"),
        (dict(tiles=[1, 1, 2, 3]), "appears twice"),
    ]
    for changes, message in cases:
        path.write_bytes(good)
        rewrite(path, **changes)
        with pytest.raises(TableFileError, match=message.replace("[", r"\[").replace("]", r"\]")):
            PatternTable.load(path)
    path.write_bytes(good)
    rewrite(path, payload=np.frombuffer(good[fileformat.read_header(path)[1]:-8], dtype="<u2"))
    with pytest.raises(TableFileError, match="a byte table of uint16"):
        PatternTable.load(path)
    future = bytearray(good)
    future[8:10] = (2).to_bytes(2, "little")
    path.write_bytes(bytes(future))
    with pytest.raises(TableFileError, match=r"version 2\.0 is not supported"):
        PatternTable.load(path)
    # a newer minor version only adds what an older reader may ignore: read, but its checksum must hold
    newer = bytearray(good)
    newer[10:12] = (7).to_bytes(2, "little")
    path.write_bytes(bytes(newer))
    with pytest.raises(TableFileError, match="checksum"):
        PatternTable.load(path)


def test_a_table_of_another_board_goal_or_pattern_is_moved_aside_and_rebuilt(tmp_path, small):
    notes = []
    cache = TableCache(tmp_path, notify=notes.append)
    wanted = cache.path_for(small, "minimized")
    others = [TilePattern(Board(4, 3), (1, 2, 3, 4)), TilePattern(Board.parse("3x4", "blank-last"), (1, 2, 3, 4)),
              TilePattern(small.board, (1, 2, 3, 5))]
    for other in others:
        source = cache.get(other, "minimized").path
        wanted.write_bytes(source.read_bytes())
        table = cache.get(small, "minimized")
        assert table.pattern == small and table.values[small.goal_rank()] == 0
        assert "table of another" in notes[-1] and "moved aside" in notes[-1]
    assert len(list(tmp_path.glob("*.corrupt-*"))) == 3


def test_cache_get_never_uses_a_damaged_table(tmp_path, tiny):
    notes = []
    cache = TableCache(tmp_path, notify=notes.append)
    path = cache.get(tiny, "ignored").path
    data = path.read_bytes()
    reference = PatternTable.load(path).values.copy()
    for position in range(0, len(data), 7):
        damaged = bytearray(data)
        damaged[position] ^= 0x40
        path.write_bytes(bytes(damaged))
        table = cache.get(tiny, "ignored")
        assert np.array_equal(table.values, reference)
    assert len(notes) == len(range(0, len(data), 7))
    assert all("damaged table moved aside and rebuilt" in n for n in notes)


def test_build_cli_meets_a_damaged_cached_table(tmp_path):
    args = ["build", "--pattern", "1,2,3", "--board", "3x3", "--cache-dir", str(tmp_path)]
    assert CliRunner().invoke(cli, args).exit_code == 0
    path = next(tmp_path.glob("*.pdb"))
    path.write_bytes(path.read_bytes()[:-5])
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "damaged table moved aside and rebuilt" in result.stderr and "truncated" in result.stderr
    assert "built in" in result.stdout
    PatternTable.load(path)
    assert len(list(tmp_path.glob("*.corrupt-*"))) == 1


def test_solve_cli_meets_a_damaged_cached_table(tmp_path):
    part = tmp_path / "halves.txt"
    part.write_text("board 3x3\n1 2 3 4\n5 6 7 8\n")
    instance = tmp_path / "one.txt"
    instance.write_text("1 2 0 3 4 5 6 7 8  # optimal 2\n")
    args = ["solve", str(instance), "--partition", str(part), "--cache-dir", str(tmp_path / "c")]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    for table in (tmp_path / "c").glob("*.pdb"):
        data = bytearray(table.read_bytes())
        data[len(data) // 2] ^= 1
        table.write_bytes(bytes(data))
    second = CliRunner().invoke(cli, args)
    assert second.exit_code == 0, second.output
    assert second.stderr.count("damaged table moved aside and rebuilt") == 2
    assert "length   2" in second.stdout or "length 2" in second.stdout


# --- killed and concurrent builds -----------------------------------------------------------------------

@pytest.mark.parametrize("signum,word", [(signal.SIGINT, "interrupted"), (signal.SIGTERM, "terminated")])
def test_interrupted_build_exits_cleanly(tmp_path, signum, word):
    proc = start_build(tmp_path)
    wait_locked(tmp_path, proc)  # mid-build: the table takes seconds, the lock is held from its start
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum, (out, err)
    assert err.strip() == f"pdbtool: {word}; no partial table was kept"
    assert list(tmp_path.iterdir()) == []  # no table, no temporary, no lock file


def test_a_signal_swallowed_by_a_ctypes_callback_still_sets_the_exit_status():
    """llvmlite calls back into Python while Numba compiles or loads a kernel; an exception raised there
    is dropped (sys.unraisablehook), so the command runs on: the entry point keeps it quiet and still exits
    as signalled."""
    script = textwrap.dedent("""
        import ctypes, os, signal, sys, time, types
        import click
        import pdbtool.cli.main
        entry = sys.modules["pdbtool.cli.main"]  # the package's name main is the function

        @click.command("probe")
        def probe():
            def callback():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.2)  # the handler runs here, inside the callback
            ctypes.CFUNCTYPE(None)(callback)()
            click.echo("finished")

        sys.modules["probe_domain"] = types.SimpleNamespace(NAME="probe", HELP="", COMMANDS={"probe": probe},
                                                            TABLE_KINDS=(), INSTANCE_SUFFIXES=())
        import pdbtool.domains
        pdbtool.domains.DOMAINS["probe"] = "probe_domain"
        entry.COMMANDS["probe"] = ""
        entry.main(["probe", "--domain", "probe"])
    """)
    proc = subprocess.run([sys.executable, "-c", script], env=env(), cwd=REPO, capture_output=True, text=True)
    assert proc.stdout.strip() == "finished"  # the exception was dropped: the command ran to its end
    assert proc.returncode == 128 + signal.SIGINT, proc.stderr
    assert proc.stderr.strip() == "pdbtool: interrupted"


def test_a_signal_inside_a_constructor_leaves_only_the_one_line():
    """A signal that stops an object half way through its constructor (llvmlite's, while Numba compiles a
    kernel) leaves an object whose destructor fails: the interrupted command still prints its one line and
    nothing else."""
    script = textwrap.dedent("""
        import os, signal, sys, time, types
        import click
        import pdbtool.cli.main
        entry = sys.modules["pdbtool.cli.main"]  # the package's name main is the function

        class HalfBuilt:
            def __init__(self):
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.2)  # the handler raises here, before the attribute exists
                self.owned = True

            def __del__(self):
                if self.owned:  # AttributeError, as llvmlite's OutputString
                    pass

        @click.command("probe")
        def probe():
            HalfBuilt()

        sys.modules["probe_domain"] = types.SimpleNamespace(NAME="probe", HELP="", COMMANDS={"probe": probe},
                                                            TABLE_KINDS=(), INSTANCE_SUFFIXES=())
        import pdbtool.domains
        pdbtool.domains.DOMAINS["probe"] = "probe_domain"
        entry.COMMANDS["probe"] = ""
        entry.main(["probe", "--domain", "probe"])
    """)
    proc = subprocess.run([sys.executable, "-c", script], env=env(), cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 128 + signal.SIGTERM, proc.stderr
    assert proc.stderr.strip() == "pdbtool: terminated; no partial table was kept"


def test_a_dropped_signal_is_raised_again_at_the_next_layer(monkeypatch):
    """A build's per-layer progress callback raises a dropped signal, so the build stops there (and its
    temporary and lock go, as for any Interrupted)."""
    from pdbtool.cli._common import Interrupted, progress_bar

    monkeypatch.setattr(Interrupted, "dropped", [int(signal.SIGTERM)])
    bar, update = progress_bar("probe")
    try:
        with pytest.raises(Interrupted) as raised:
            update(1, 10)
        update(2, 20)  # raised once only
    finally:
        bar.close()
    assert raised.value.signum == signal.SIGTERM and Interrupted.dropped == []


def saving_or_done(cache_dir: Path, proc, timeout=120.0):
    """Wait until the build has begun to write its temporary, or has ended (it may write and rename it
    between two looks): a kill then lands in the save or right after it."""
    end = time.monotonic() + timeout
    while proc.poll() is None and not any(cache_dir.glob(SLOW_NAME + ".tmp-*")):
        assert time.monotonic() < end, "the build never began its save"
        time.sleep(0.001)


def test_killed_builds_leave_nothing_taken_for_a_table(tmp_path, small):
    reference = None
    for wait in (wait_locked, saving_or_done):  # killed mid-build, then in (or right after) the save
        proc = start_build(tmp_path)
        wait(tmp_path, proc)
        proc.kill()
        proc.communicate(timeout=60)
        for table in tmp_path.glob("*.pdb"):  # a table there is a whole one
            values = PatternTable.load(table).values
            reference = values.copy() if reference is None else reference
            assert np.array_equal(values, reference)
    # the next run cleans what the killed ones left, and builds or reuses the table
    pattern = TilePattern(Board(4, 4), (1, 2, 3, 4, 5))
    table = TableCache(tmp_path).get(pattern, "minimized", threads=2)
    assert table.values[pattern.goal_rank()] == 0
    assert leftovers(tmp_path) == []


def test_a_save_killed_half_way_leaves_only_a_temporary(tmp_path, small):
    cache = TableCache(tmp_path)
    previous = cache.get(small, "minimized").path.read_bytes()
    script = textwrap.dedent(f"""
        import os, signal
        import pdbtool.tables.fileformat as tf
        from pdbtool.puzzle.board import Board
        from pdbtool.tables.cache import TableCache
        from pdbtool.tables.ranking import TilePattern
        real_open = open
        class Dying:
            def __init__(self, f): self.f, self.written = f, 0
            def __enter__(self): return self
            def __exit__(self, *a): self.f.close()
            def write(self, b):
                self.f.write(b[:100]); self.f.flush(); self.written += 100
                if self.written >= 200: os.kill(os.getpid(), signal.SIGKILL)
            def __getattr__(self, name): return getattr(self.f, name)
        tf.open = lambda path, mode="r": Dying(real_open(path, mode)) if "w" in mode else real_open(path, mode)
        TableCache({str(tmp_path)!r}).get(TilePattern(Board(3, 4), (1, 2, 3, 4)), "minimized", force=True)
    """)
    proc = subprocess.run([sys.executable, "-c", script], env=env(), cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    temporaries = list(tmp_path.glob("*.tmp-*"))
    assert len(temporaries) == 1 and temporaries[0].stat().st_size == 200
    assert (tmp_path / cache.path_for(small, "minimized").name).read_bytes() == previous  # untouched
    assert TableCache(tmp_path).get(small, "minimized").path.read_bytes() == previous  # the next run reuses it
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_saving_removes_the_temporary(tmp_path, small, signum):
    """The console entry point (signal handlers and all), signalled half-way through writing the file."""
    cache = TableCache(tmp_path)
    previous = cache.get(small, "minimized").path.read_bytes()
    script = textwrap.dedent(f"""
        import os
        import pdbtool.tables.fileformat as tf
        from pdbtool.cli.main import main
        real_open = open
        class Signalled:
            def __init__(self, f): self.f, self.writes = f, 0
            def __enter__(self): return self
            def __exit__(self, *a): self.f.close()
            def write(self, b):
                self.f.write(b); self.f.flush(); self.writes += 1
                if self.writes == 2: os.kill(os.getpid(), {int(signum)})
            def __getattr__(self, name): return getattr(self.f, name)
        tf.open = lambda path, mode="r": Signalled(real_open(path, mode)) if "w" in mode else real_open(path, mode)
        main(["build", "--pattern", "1,2,3,4", "--board", "3x4", "--force", "--cache-dir", {str(tmp_path)!r}])
    """)
    proc = subprocess.run([sys.executable, "-c", script], env=env(), cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 128 + signum, proc.stderr
    assert proc.stderr.count("\n") == 1 and "no partial table was kept" in proc.stderr
    assert leftovers(tmp_path) == []
    assert cache.path_for(small, "minimized").read_bytes() == previous


def dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_temporaries_and_locks_are_swept_unless_their_table_is_being_written(tmp_path, small):
    cache = TableCache(tmp_path)
    name = cache.path_for(small, "minimized").name
    dead = dead_pid()
    files = {
        f"{name}.tmp-{dead}": True,                # this table's, of a killed process: removed
        f"{name}.lock": True,                      # left by a killed builder: reused, then removed
        f"other.pdb.tmp-{dead}": True,             # another table's, nobody writing it: removed
        f"other.pdb.tmp-{os.getppid()}": True,     # of a live process, but it is not writing: removed
        "idle.pdb.lock": True,                     # nobody holds it: removed
        f"busy.pdb.tmp-{os.getppid()}": False,     # its table's lock is held: a write in progress, kept
        "busy.pdb.lock": False,
    }
    for file in files:
        (tmp_path / file).write_bytes(b"partial")
    holder = os.open(tmp_path / "busy.pdb.lock", os.O_RDWR)
    fcntl.flock(holder, fcntl.LOCK_EX)  # another open file: conflicts like another process would
    try:
        cache.get(small, "minimized")
        assert set(leftovers(tmp_path)) == {f for f, removed in files.items() if not removed}
    finally:
        os.close(holder)
    # a later run that only reads sweeps too
    TableCache(tmp_path).get(small, "minimized")
    assert leftovers(tmp_path) == []


def start_ready_build(flags, name):
    """A build process that imports everything, says it is ready, and starts only when told to go."""
    script = textwrap.dedent(f"""
        import pathlib, sys, time
        import pdbtool.tables.build, pdbtool.tables.cache, pdbtool.cli.build
        from pdbtool.cli.main import main
        pathlib.Path({str(flags)!r}, "{name}.ready").touch()
        while not pathlib.Path({str(flags)!r}, "{name}.go").exists():
            time.sleep(0.01)
        main(["build", *{SLOW_PATTERN!r}, "--cache-dir", {str(flags / "cache")!r}])
    """)
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env(), cwd=REPO)


def test_two_builds_of_one_table_build_it_once(tmp_path):
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    first, second = start_ready_build(tmp_path, "first"), start_ready_build(tmp_path, "second")
    for name, proc in (("first", first), ("second", second)):
        wait_for(tmp_path / f"{name}.ready", proc)
    (tmp_path / "first.go").touch()
    wait_locked(cache_dir, first)                       # the first builds, holding the lock ...
    (tmp_path / "second.go").touch()                    # ... when the second, imports done, asks for it
    out1, err1 = first.communicate(timeout=120)
    out2, err2 = second.communicate(timeout=120)
    assert first.returncode == 0 and second.returncode == 0, (err1, err2)
    assert "built in" in out1 and "cached in" in out2, (out1, out2)
    assert "waiting for another process building" in err2
    assert leftovers(cache_dir) == []


def test_a_reader_never_sees_a_half_written_table(tmp_path):
    pattern = TilePattern(Board(3, 4), (1, 2, 3, 4, 5))
    cache = TableCache(tmp_path)
    path = cache.get(pattern, "ignored").path
    base = PatternTable.load(path).values.copy()
    script = textwrap.dedent(f"""
        import numpy as np
        from pdbtool.puzzle.board import Board
        from pdbtool.tables.cache import TableCache
        from pdbtool.tables.ranking import TilePattern
        from pdbtool.tables.table import PatternTable
        cache = TableCache({str(tmp_path)!r})
        pattern = TilePattern(Board(3, 4), (1, 2, 3, 4, 5))
        path = cache.path_for(pattern, "ignored")
        base = PatternTable.load(path).values.copy()
        for i in range(40):
            values = base.copy()
            values[i] = 250   # every version differs from the last
            with cache.lock(path):
                cache.store(PatternTable(pattern, "ignored", values), path)
    """)
    writer = subprocess.Popen([sys.executable, "-c", script], env=env(), cwd=REPO)
    loads = 0
    while writer.poll() is None or loads == 0:
        values = PatternTable.load(path).values  # raises on any half-written file
        changed = np.flatnonzero(values != base)
        assert changed.size <= 1 and (changed.size == 0 or values[changed[0]] == 250)
        loads += 1
    assert writer.wait() == 0 and loads > 10
    assert leftovers(tmp_path) == []


# --- a full disk, too little memory ---------------------------------------------------------------------

class FullDisk:
    """A file whose writes fail with ENOSPC once ``room`` bytes are written."""

    def __init__(self, f, room):
        self.f, self.room = f, room

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()

    def write(self, data):
        if len(data) > self.room:
            self.f.write(bytes(data[: self.room]))
            self.room = 0
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= len(data)
        return self.f.write(data)

    def __getattr__(self, name):
        return getattr(self.f, name)


def fill_disk(monkeypatch, room=1000):
    real_open = open
    monkeypatch.setattr(fileformat, "open", lambda path, mode="r", *a, **k: FullDisk(real_open(path, mode, *a, **k),
                        room) if "w" in mode else real_open(path, mode, *a, **k), raising=False)


def test_a_full_disk_keeps_the_previous_table(tmp_path, small, monkeypatch):
    cache = TableCache(tmp_path)
    path = cache.get(small, "minimized").path
    previous = path.read_bytes()
    fill_disk(monkeypatch)
    with pytest.raises(TableFileError) as info:
        cache.get(small, "minimized", force=True)
    message = str(info.value)
    assert message.startswith(f"{path}: the disk is full") and "unchanged" in message and "\n" not in message
    assert path.read_bytes() == previous and leftovers(tmp_path) == []
    result = CliRunner().invoke(cli, ["build", "--pattern", "1,2,3,4", "--board", "3x4", "--force",
                                      "--cache-dir", str(tmp_path)])
    assert result.exit_code == 1 and "the disk is full" in result.stderr and result.stderr.count("\n") == 1
    assert path.read_bytes() == previous and leftovers(tmp_path) == []


def test_a_real_full_filesystem(tmp_path):
    """The same on a tiny tmpfs, where the kernel itself says ENOSPC (needs root to mount)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    pattern = TilePattern(Board(3, 4), (1, 2, 3, 4, 5))  # a 95 kB table: one fits, two do not
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=150k", "tmpfs", str(mount)],
                                           capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        cache = TableCache(mount)
        path = cache.get(pattern, "ignored").path
        previous = path.read_bytes()
        # the room left is checked before the build; a write that finds the disk full is refused the same way
        with pytest.raises(PdbtoolError, match="the disk is full|MiB is free"):
            cache.get(pattern, "ignored", force=True)
        assert path.read_bytes() == previous and leftovers(mount) == []
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_too_little_memory_is_refused_before_the_build(tmp_path, monkeypatch):
    monkeypatch.setattr(resources_module, "available_memory", lambda: 50 << 20)
    pattern = TilePattern(Board(4, 4), (1, 2, 3, 4, 5, 6))
    with pytest.raises(PdbtoolError, match=r"needs about 0\.08 GiB, but only 0\.05 GiB is available"):
        TableCache(tmp_path).get(pattern, "minimized")
    assert leftovers(tmp_path) == [] and not list(tmp_path.glob("*.pdb"))
    result = CliRunner().invoke(cli, ["build", "--pattern", "1,2,3,4,5,6", "--board", "4x4",
                                      "--cache-dir", str(tmp_path)])
    assert result.exit_code == 1 and "needs about" in result.stderr and result.stderr.count("\n") == 1


@pytest.mark.parametrize("tiles", [range(1, 41), range(1, 11)])
def test_a_zero_aware_build_far_beyond_memory_is_refused_before_its_layout(tmp_path, monkeypatch, tiles):
    # the layout alone is C(64, k) x 64 bytes: beyond int64 for 40 tiles, so it must be sized, not made
    from pdbtool.tables import zero_aware

    monkeypatch.setattr(resources_module, "available_memory", lambda: 8 << 30)
    made = []
    monkeypatch.setattr(zero_aware, "_layout_arrays", lambda *a: made.append(a))
    pattern = ",".join(map(str, tiles))
    result = CliRunner().invoke(cli, ["build", "--pattern", pattern, "--board", "8x8", "--blank", "zero-aware",
                                      "--cache-dir", str(tmp_path)])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1, result.stderr
    assert re.search(r"needs about [0-9.,e+]+ GiB, but only 8\.00 GiB is available", result.stderr)
    assert made == [] and not list(tmp_path.glob("*.pdb"))
    zero_aware.layout.cache_clear()
    with pytest.raises(PdbtoolError, match=r"zero-aware layout of 40 tiles on 8x8 needs about 1\.7e\+10 GiB"):
        zero_aware.layout(8, 8, 40)
    assert made == []


# --- an interrupted solve ------------------------------------------------------------------------------------

@pytest.mark.parametrize("signum,word,fmt", [(signal.SIGINT, "interrupted", "text"),
                                             (signal.SIGTERM, "terminated", "json")])
def test_interrupted_solve_reports_what_was_solved(tmp_path, signum, word, fmt):
    """A signal during a long search: the finished instances, the stopped one marked as interrupted, the
    summary of what was solved, one line on stderr, and the exit status 128 + signal."""
    hard = korf100()[1][0]  # minutes with Manhattan distance alone
    one = [1, 0] + list(range(2, 16))
    two = [1, 2, 0] + list(range(3, 16))
    path = tmp_path / "mixed.txt"
    path.write_text(f"a {' '.join(map(str, one))}  # optimal 1\nb {' '.join(map(str, two))}  # optimal 2\n"
                    f"hard {' '.join(map(str, hard))}\nlast {' '.join(map(str, one))}\n")
    proc = subprocess.Popen([sys.executable, "-m", "pdbtool", "solve", str(path), "--heuristic", "manhattan",
                             "--format", fmt], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env(), cwd=REPO)
    # two results written: whenever the signal lands from here on, "hard" is the instance it stops (its
    # search, or the step into it), so the report below does not depend on how far the search got
    first = [proc.stdout.readline() for _ in range(2)]
    assert proc.poll() is None
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum, (out, err)
    assert err.strip().splitlines()[-1] == f"pdbtool: {word}"
    assert "no partial table" not in err
    lines = first + out.splitlines(keepends=True)
    if fmt == "json":
        rows = [json.loads(line) for line in lines]
        assert [r["id"] for r in rows[:3]] == ["a", "b", "hard"]
        assert rows[0]["length"] == 1 and rows[1]["length"] == 2
        assert rows[2]["interrupted"] is True and rows[2]["solved"] is False
        summary = rows[3]
        assert summary["summary"] is True and len(rows) == 4
        assert (summary["instances"], summary["solved"], summary["interrupted"], summary["not_reached"]) == \
            (2, 2, "hard", 1)
    else:
        assert lines[0].startswith("a ") and "length   1" in lines[0]
        assert lines[1].startswith("b ") and "length   2" in lines[1]
        assert lines[2].split() == ["hard", "interrupted"]
        assert "solved 2 of 2" in out and "interrupted during instance hard; 1 more not reached" in out


# --- crafted files: a valid checksum on a file made to break a kernel or the search (issue: tables from
# anywhere).  Each is refused at load with one line; in the cache it is moved aside and rebuilt.  The
# commands run in subprocesses, where a kernel reading out of bounds would die of a signal. ---------------

EIGHT = REPO / "examples" / "8puzzle-4-4.txt"
EIGHT_INSTANCES = "e1 2 8 5 0 4 3 7 6 1  # optimal 25\ne2 4 7 3 6 1 8 0 5 2  # optimal 18\n"


BATCH = """
import json, sys
from click.testing import CliRunner
from pdbtool.cli.main import cli
out = []
for args in json.loads(sys.argv[1]):
    r = CliRunner().invoke(cli, args)
    crash = None if r.exception is None or isinstance(r.exception, SystemExit) else repr(r.exception)
    out.append([r.exit_code, r.stdout, r.stderr, crash])
print(json.dumps(out))
"""


def run_commands(*commands, timeout=900):
    """Several pdbtool commands in ONE subprocess (each through Click's runner, as the entry point runs
    it), where a kernel reading out of bounds would end the process by a signal, not the test run.
    Returns [(exit status, stdout, stderr)] in order."""
    proc = subprocess.run([sys.executable, "-c", BATCH, json.dumps([[str(a) for a in c] for c in commands])],
                          capture_output=True, text=True, env=env(), cwd=REPO, timeout=timeout)
    assert proc.returncode == 0, f"status {proc.returncode} (a negative one is a signal): {proc.stderr[-2000:]}"
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    for (_code, _out, err, crash), command in zip(results, commands):
        assert crash is None and "Traceback" not in err, (command, crash, err)
    return [(code, out, err) for code, out, err, _ in results]


def resign(path: Path, payload: bytes | None = None, header_text: bytes | None = None, **changes) -> None:
    """Rewrite ``path`` with header changes (or raw header text), a new payload, and a valid checksum."""
    import xxhash

    header, offset = fileformat.read_header(path)
    data = path.read_bytes()
    header.pop("_file_bytes")
    header.update(changes)
    body = data[offset:-8] if payload is None else payload
    header["payload_bytes"] = len(body)
    if header_text is None:
        raw = fileformat.encode_prefix(header) + body
    else:
        raw = fileformat.MAGIC + (1).to_bytes(2, "little") + (0).to_bytes(2, "little") + \
            len(header_text).to_bytes(4, "little") + header_text + body
    path.write_bytes(raw + xxhash.xxh64(raw).intdigest().to_bytes(8, "little"))


def payload_of(path: Path) -> np.ndarray:
    _, offset = fileformat.read_header(path)
    return np.frombuffer(path.read_bytes()[offset:-8], dtype=np.uint8).copy()


@pytest.fixture(scope="module")
def eight_cache(tmp_path_factory):
    """A cache with the 8-puzzle's 4-4 tables in every encoding (the originals, copied per test)."""
    root = tmp_path_factory.mktemp("eight")
    for blank, encodings in (("minimized", ("byte", "nibble", "sparse")), ("ignored", ("byte", "mod3", "parity"))):
        for encoding in encodings:
            result = CliRunner().invoke(cli, ["build", "--partition", str(EIGHT), "--blank", blank, "--encoding",
                                              encoding, "--cache-dir", str(root)])
            assert result.exit_code == 0, result.output
    return root


def crafted_cache(tmp_path, eight_cache, only: str = "*") -> Path:
    """A copy of the 8-puzzle cache (of the files matching ``only``) to craft files in."""
    import shutil

    target = tmp_path / "cache"
    target.mkdir()
    for source in eight_cache.glob(only):
        shutil.copy2(source, target / source.name)
    return target


def solve_args(cache_dir: Path, tmp_path: Path, *options) -> list:
    instances = tmp_path / "eight.txt"
    instances.write_text(EIGHT_INSTANCES)
    return ["solve", instances, "--partition", EIGHT, "--cache-dir", cache_dir, *options]


def assert_solved_after_rebuild(result, cache_dir: Path, crafted: int = 1):
    """solve met the crafted table(s): one line each moving it aside, a rebuild, and the right answers."""
    rc, out, err = result
    assert rc == 0, err
    assert err.count("damaged table moved aside and rebuilt") == crafted, err
    assert all(line.startswith("pdbtool: ") for line in err.splitlines()), err
    assert re.search(r"^e1\s+length\s+25 ", out, re.M) and re.search(r"^e2\s+length\s+18 ", out, re.M), out
    assert "solved 2 of 2" in out
    assert len(list(cache_dir.glob("*.corrupt-*"))) >= crafted


def check_commands(path: Path) -> list:
    return [["verify", path, "--samples", "100"], ["inspect", path]]


def assert_refused(results, path: Path, pattern: str):
    """verify fails in one line; inspect fails in one line, or shows the file and why a load refuses it;
    a load through the library raises TableFileError."""
    (rc, _, err), (irc, iout, ierr) = results
    assert rc == 3 and err.count("\n") == 1 and err.startswith("pdbtool: "), err  # a FAIL of a file that is there
    if irc == 0:
        assert "refused at load" in iout and ierr == "", (iout, ierr)
    else:
        assert irc == 1 and ierr.count("\n") == 1 and ierr.startswith("pdbtool: "), ierr
    from pdbtool.tables.integrity import load_checked

    with pytest.raises(TableFileError, match=pattern):
        load_checked(path)


def crafted_run(cache_dir: Path, tmp_path: Path, crafted_copies: list[Path], *solve_options):
    """verify and inspect of each crafted copy, then solve on the cache: one subprocess."""
    commands = [c for path in crafted_copies for c in check_commands(path)]
    results = run_commands(*commands, solve_args(cache_dir, tmp_path, *solve_options))
    return [results[i:i + 2] for i in range(0, len(commands), 2)], results[-1]


def table_file(cache_dir: Path, blank: str, encoding: str, tiles="1.2.3.4") -> Path:
    return cache_dir / f"3x3-korf-t{tiles}-{blank}-{encoding}.pdb"


def test_crafted_sparse_values_offset_is_refused(tmp_path, eight_cache):
    cache_dir = crafted_cache(tmp_path, eight_cache)
    path = table_file(cache_dir, "minimized", "sparse")
    payload = payload_of(path)
    words = payload.view(np.uint64)
    words[2] = 1 << 40   # the values offset: far past the payload
    resign(path, payload.tobytes())
    copy = tmp_path / "sparse-offset.pdb"
    copy.write_bytes(path.read_bytes())
    (checks,), solved = crafted_run(cache_dir, tmp_path, [copy], "--encoding", "sparse")
    assert_refused(checks, copy, "preamble")
    assert_solved_after_rebuild(solved, cache_dir)


@pytest.mark.parametrize("damage", ["extra bits", "directory", "nonzero"])
def test_crafted_sparse_bitmap_and_directory_are_refused(tmp_path, eight_cache, damage):
    cache_dir = crafted_cache(tmp_path, eight_cache)
    path = table_file(cache_dir, "minimized", "sparse")
    payload = payload_of(path)
    words = payload.view(np.uint64)
    nwords = (int(words[0]) + 63) // 64
    dir_off = int(words[1])
    if damage == "extra bits":      # more set bits than stored values: a look-up would read past them
        words[4: 4 + nwords] = np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(1)
    elif damage == "directory":
        words[dir_off + 1] += np.uint64(1000)
    else:
        words[3] = words[3] - np.uint64(1)
    resign(path, payload.tobytes())
    copy = tmp_path / "sparse.pdb"
    copy.write_bytes(path.read_bytes())
    (checks,), solved = crafted_run(cache_dir, tmp_path, [copy], "--encoding", "sparse")
    assert_refused(checks, copy, "sparse")
    assert_solved_after_rebuild(solved, cache_dir)


def ring_cycle(pattern):
    """Placements of tiles (1, 2) on 3x3 with tile 2 in cell 8 and tile 1 going round the 2x3 block of
    rows 0-1: six placements, each one tile move from the next, the last next to the first."""
    ring = [0, 1, 2, 5, 4, 3]
    return [pattern.rank((c, 8)) for c in ring]


@pytest.mark.parametrize("encoding", ["mod3", "parity"])
def test_crafted_residues_that_step_down_around_a_cycle_are_refused(tmp_path, encoding):
    """CHILD-H would walk below zero around the cycle; the full decode at load refuses the table."""
    from pdbtool.tables import encodings as enc

    pattern = TilePattern(Board(3, 3), (1, 2))
    cache = TableCache(tmp_path / "cache")
    table = cache.get(pattern, "ignored", encoding=encoding)
    payload = np.asarray(table.values).copy()
    del table
    true = np.asarray(cache.get(pattern, "ignored").values)
    ranks = ring_cycle(pattern)
    start = int(true[ranks[0]])
    for i, r in enumerate(ranks):   # value "one less" at each step around the ring, for ever
        value = start - i
        if encoding == "mod3":
            q, d = divmod(r, 5)
            digits = [(payload[q] // 3 ** j) % 3 for j in range(5)]
            digits[d] = value % 3
            payload[q] = sum(v * 3 ** j for j, v in enumerate(digits))
        else:
            q, d = divmod(r, 8)
            payload[q] = (int(payload[q]) & ~(1 << d) & 255) | (((value % 4) >> 1) << d)
    # the cycle really steps down under CHILD-H from the first placement's true value, below zero
    code = enc.CODES[encoding]
    h = start
    walk = []
    for i in range(1, 13):
        r = ranks[i % 6]
        cells = pattern.unrank(r)
        h = int(enc.value_of(code, payload, r, pattern.manhattan(cells), h, 0))
        walk.append(h)
    assert walk[:start + 1] == list(range(start - 1, -2, -1)), walk
    path = cache.path_for(pattern, "ignored", encoding)
    resign(path, payload.tobytes())
    with pytest.raises(TableFileError, match="inconsistent"):
        from pdbtool.tables.integrity import load_checked
        load_checked(path)
    notes = []
    rebuilt = TableCache(tmp_path / "cache", notify=notes.append).get(pattern, "ignored", encoding=encoding)
    assert len(notes) == 1 and "moved aside" in notes[0] and "inconsistent" in notes[0]
    assert rebuilt.lookup(pattern.goal_cells()) == 0


def test_crafted_goal_and_doubled_values_are_refused(tmp_path, eight_cache):
    cache_dir = crafted_cache(tmp_path, eight_cache)
    first = table_file(cache_dir, "minimized", "byte")
    payload = payload_of(first)
    pattern = TilePattern(Board(3, 3), (1, 2, 3, 4))
    payload[pattern.goal_rank()] = 2           # the goal is not 0: a search would never stop
    resign(first, payload.tobytes())
    goal_copy = tmp_path / "goal.pdb"
    goal_copy.write_bytes(first.read_bytes())
    second = table_file(cache_dir, "minimized", "byte", "5.6.7.8")
    payload = payload_of(second)
    reached = payload != 255
    payload[reached] *= 2                      # every value doubled, max_value too: an inadmissible table
    header, _ = fileformat.read_header(second)
    resign(second, payload.tobytes(), max_value=2 * header["max_value"])
    doubled_copy = tmp_path / "doubled.pdb"
    doubled_copy.write_bytes(second.read_bytes())
    (goal_checks, doubled_checks), solved = crafted_run(cache_dir, tmp_path, [goal_copy, doubled_copy])
    assert_refused(goal_checks, goal_copy, "goal placement has value 2")
    assert_refused(doubled_checks, doubled_copy, "not a pattern database's")
    assert_solved_after_rebuild(solved, cache_dir, crafted=2)


def test_crafted_values_above_max_are_refused(tmp_path, eight_cache):
    cache_dir = crafted_cache(tmp_path, eight_cache)
    path = table_file(cache_dir, "minimized", "byte")
    header, _ = fileformat.read_header(path)
    resign(path, max_value=header["max_value"] - 2)
    with pytest.raises(TableFileError, match="above the header's max_value"):
        from pdbtool.tables.integrity import load_checked
        load_checked(path)
    solved = CliRunner().invoke(cli, [str(a) for a in solve_args(cache_dir, tmp_path)])
    assert_solved_after_rebuild((solved.exit_code, solved.stdout, solved.stderr), cache_dir)


HEADER_ATTACKS = {
    "a 5,000-digit integer": lambda h: h.replace(b'"max_value":', b'"max_value":' + b"9" * 5000 + b',"x":'),
    "NaN": lambda h: h.replace(b'"build_seconds":', b'"build_seconds":NaN,"y":'),
    "a huge float": lambda h: h.replace(b'"build_seconds":', b'"build_seconds":1e999,"y":'),
    "deep nesting": lambda h: h.replace(b'"layers":', b'"deep":' + b"[" * 20000 + b"]" * 20000 + b',"layers":'),
    "a header past the cap": lambda h: h.rstrip() + b" " * (fileformat.MAX_HEADER_BYTES + 64),
}
FIELD_ATTACKS = {
    "conversion a list": {"conversion": [1, 2]},
    "conversion saturated a string": {"conversion": {"saturated": "many"}},
    "conversion mean_loss a list": {"conversion": {"mean_loss": [1]}},
    "max_value a string": {"max_value": "33"},
    "max_value huge": {"max_value": 10 ** 20},
    "max_value a float": {"max_value": 1e300},
    "encoding_params a float": {"encoding_params": {"group": 1e300}},
    "width a bool": {"width": True},
    "goal of strings": {"goal": ["a"] * 9},
    "tiles too many": {"tiles": list(range(1000))},
    "a big-endian payload": {"payload_dtype": ">u8"},
    "a signed payload": {"payload_dtype": "<i8"},
    "build_seconds a string": {"build_seconds": "fast"},
    "kind a number": {"kind": 7},
}


def invoke_clean(*args):
    """A command in this process (a header never reaches a kernel): (exit status, stdout, stderr)."""
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.stdout, result.stderr


def test_crafted_headers_are_one_line_and_quarantined(tmp_path, eight_cache):
    """Every header the parser or a reader could choke on is a TableFileError: one line from inspect,
    verify and convert, and in the cache the file is moved aside, so that later builds and searches work."""
    from pdbtool.tables.integrity import load_checked

    for attack in sorted(HEADER_ATTACKS) + sorted(FIELD_ATTACKS):
        work = tmp_path / attack.replace(" ", "-").replace(",", "")
        work.mkdir()
        cache_dir = crafted_cache(work, eight_cache, "*-minimized-byte.pdb")
        path = table_file(cache_dir, "minimized", "byte")
        if attack in HEADER_ATTACKS:
            _, offset = fileformat.read_header(path)
            text = path.read_bytes()[16:offset]
            resign(path, header_text=HEADER_ATTACKS[attack](text))
        else:
            resign(path, **FIELD_ATTACKS[attack])
        with pytest.raises(TableFileError):
            load_checked(path)
        copy = work / "crafted.pdb"
        copy.write_bytes(path.read_bytes())
        for command in (["inspect", copy], ["verify", copy, "--samples", "50"],
                        ["convert", copy, "--encoding", "nibble", "-o", work / "out.pdb"]):
            rc, _, err = invoke_clean(*command)
            want = 3 if command[0] == "verify" else 1  # verify: the file is there and fails
            assert rc == want and err.count("\n") == 1 and err.startswith("pdbtool: "), (attack, command, err)
        if attack == "a 5,000-digit integer":   # the whole path once: build moves it aside, solve works
            rc, _, err = invoke_clean("build", "--partition", EIGHT, "--cache-dir", cache_dir)
            assert rc == 0 and err.count("damaged table moved aside and rebuilt") == 1, (attack, err)
            solved = invoke_clean(*solve_args(cache_dir, work))
            assert_solved_after_rebuild(solved, cache_dir, crafted=0)
        else:                                   # the cache moves it aside and rebuilds it
            notes = []
            rebuilt = TableCache(cache_dir, notify=notes.append).get(TilePattern(Board(3, 3), (1, 2, 3, 4)),
                                                                     "minimized")
            assert len(notes) == 1 and "moved aside" in notes[0] and "\n" not in notes[0], (attack, notes)
            assert rebuilt.lookup(rebuilt.pattern.goal_cells()) == 0


def test_a_fifo_planted_as_a_table_name_never_blocks(tmp_path, eight_cache):
    cache_dir = crafted_cache(tmp_path, eight_cache)
    path = table_file(cache_dir, "minimized", "byte")
    path.unlink()
    os.mkfifo(path)
    (rc, _, err), (irc, _, ierr), solved = run_commands(
        ["verify", "--cache", "--cache-dir", cache_dir, "--samples", "10"], ["inspect", path],
        solve_args(cache_dir, tmp_path), timeout=120)
    assert rc == 1 and "not a regular file" in err and err.count("\n") == 1, err
    assert irc == 1 and "not a regular file" in ierr and ierr.count("\n") == 1, ierr
    assert_solved_after_rebuild(solved, cache_dir)
    assert path.is_file()


@pytest.fixture(scope="module")
def regions_source(tmp_path_factory):
    cache_dir = tmp_path_factory.mktemp("regions")
    rc, _, err = invoke_clean("build", "--dynamic", "pairs+triples-region", "--board", "3x3", "--cache-dir",
                              cache_dir)
    assert rc == 0, err
    return cache_dir


def regions_cache(tmp_path, regions_source) -> Path:
    import shutil

    return Path(shutil.copytree(regions_source, tmp_path / "cache"))


@pytest.mark.parametrize("damage,fault", [("group", "group index"), ("rank", "rank out of range"),
                                          ("mask", "region mask"), ("order", "not sorted"),
                                          ("odd", "odd or negative"), ("goal", "goal")])
def test_crafted_region_rows_are_refused(tmp_path, regions_source, damage, fault):
    """Region rows index the look-up builder's arrays: each kind of bad row is refused at load."""
    cache_dir = regions_cache(tmp_path, regions_source)
    path = cache_dir / "3x3-korf-dynamic-pairs-regions-excess.ddb"
    _, offset = fileformat.read_header(path)
    rows = np.frombuffer(path.read_bytes()[offset:-8], dtype=np.int64).reshape(-1, 4).copy()
    assert len(rows) > 2
    if damage == "group":
        rows[1, 0] = 10 ** 12
    elif damage == "rank":
        rows[-1, 1] = -5
    elif damage == "mask":
        rows[0, 2] = (1 << 9) - 1                 # every cell: not a region of any placement
    elif damage == "order":
        rows[[0, -1]] = rows[[-1, 0]]
    elif damage == "odd":
        rows[0, 3] = 3
    else:
        pattern = TilePattern(Board(3, 3), (1, 2))
        goal = pattern.goal_rank()
        at = int(np.searchsorted(rows[:, 0] * 10 ** 6 + rows[:, 1], goal, side="right"))
        rows = np.insert(rows, at, [0, goal, 0b111111111 & ~((1 << 1) | (1 << 2)), 2], axis=0)
    resign(path, rows.tobytes(), rows=len(rows), entries=len(rows))
    from pdbtool.tables.pairs_triples import load_regions
    with pytest.raises(TableFileError, match=fault):
        load_regions(path, Board(3, 3), 2)
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    instances = tmp_path / "eight.txt"
    instances.write_text(EIGHT_INSTANCES)
    (rc, _, err), (irc, iout, ierr), (src, out, serr) = run_commands(
        ["verify", copy], ["inspect", copy],
        ["solve", instances, "--heuristic", "ddb", "--dynamic", "pairs+triples-region", "--board", "3x3",
         "--cache-dir", cache_dir])
    assert rc == 3 and err.count("\n") == 1, err
    assert (irc == 0 and "damaged" in iout) or (irc == 1 and ierr.count("\n") == 1), (iout, ierr)
    assert src == 0 and serr.count("damaged table moved aside and rebuilt") == 1, serr
    assert re.search(r"^e1\s+length\s+25 ", out, re.M) and re.search(r"^e2\s+length\s+18 ", out, re.M), out


def test_crafted_pair_excess_is_refused(tmp_path, regions_source):
    cache_dir = regions_cache(tmp_path, regions_source)
    path = cache_dir / "3x3-korf-dynamic-pairs-minimized-excess.ddb"
    payload = payload_of(path)
    from pdbtool.tables.pairs_triples import load_set
    pattern = TilePattern(Board(3, 3), (1, 2))
    payload[pattern.goal_rank()] = 2     # group (1, 2) is group 0: its goal placement is worth 2 moves
    resign(path, payload.tobytes())
    with pytest.raises(TableFileError, match="goal placement"):
        load_set(path, Board(3, 3), 2)
    payload[pattern.goal_rank()] = 0
    payload[5] = 7
    resign(path, payload.tobytes())
    with pytest.raises(TableFileError, match="odd"):
        load_set(path, Board(3, 3), 2)


# --- a cache this user cannot write: used read-only ------------------------------------------------------

def read_only_mount(source: Path, mount: Path) -> bool:
    """A read-only bind mount of ``source`` at ``mount`` (root only): the kernel itself says EROFS."""
    mount.mkdir()
    if os.geteuid() != 0:
        return False
    if subprocess.run(["mount", "--bind", str(source), str(mount)], capture_output=True).returncode != 0:
        return False
    if subprocess.run(["mount", "-o", "remount,bind,ro", str(mount)], capture_output=True).returncode != 0:
        subprocess.run(["umount", str(mount)], capture_output=True)
        return False
    return True


def test_a_read_only_cache_with_stale_locks_is_used_read_only(tmp_path, eight_cache):
    """A read-only mount holding sound tables and stale lock and temporary files: solve, verify and inspect
    work; a missing table is a clear one-line error, and so is a damaged one (it cannot be moved aside)."""
    import shutil

    source = tmp_path / "site"
    shutil.copytree(eight_cache, source)
    for name in ("3x3-korf-t1.2.3.4-minimized-byte.pdb.lock", "3x3-korf-t5.6.7.8-minimized-byte.pdb.lock",
                 f"3x3-korf-t1.2.3.4-minimized-byte.pdb.tmp-{dead_pid()}"):
        (source / name).write_bytes(b"")
    mount = tmp_path / "ro"
    if not read_only_mount(source, mount):
        pytest.skip("cannot make a read-only bind mount here (needs root)")
    try:
        with pytest.raises(OSError):
            (mount / "probe").write_bytes(b"")
        instances = tmp_path / "eight.txt"
        instances.write_text(EIGHT_INSTANCES)
        solved = CliRunner().invoke(cli, ["solve", str(instances), "--partition", str(EIGHT),
                                          "--cache-dir", str(mount)])
        assert solved.exit_code == 0, solved.output
        assert "25" in solved.stdout and "18" in solved.stdout and solved.stderr == ""
        verified = CliRunner().invoke(cli, ["verify", "--cache", "--cache-dir", str(mount), "--samples", "50"])
        assert verified.exit_code == 0, verified.output
        assert verified.stdout.count("PASS") == len(list(mount.glob("*.pdb")))
        # a table that is not there: one line, naming the cache and what to do
        missing = CliRunner().invoke(cli, ["solve", str(instances), "--partition", str(EIGHT), "--blank",
                                           "ignored", "--encoding", "nibble", "--cache-dir", str(mount)])
        # (solve reports it on each instance's line, as it does every per-instance error)
        assert missing.exit_code == 1 and missing.stderr.count("\n") == 2, missing.output
        for line in missing.stderr.splitlines():
            assert "cannot be written (Read-only file system)" in line and "nibble.pdb is not in it" in line
            assert "--cache-dir" in line
        # the stale files are still there (nothing could be removed), and nothing was added
        assert sorted(p.name for p in mount.iterdir()) == sorted(p.name for p in source.iterdir())
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)
    # a damaged table in a read-only cache: it cannot be moved aside, so the error says so in one line
    data = bytearray((source / "3x3-korf-t1.2.3.4-minimized-byte.pdb").read_bytes())
    data[-20] ^= 1
    (source / "3x3-korf-t1.2.3.4-minimized-byte.pdb").write_bytes(bytes(data))
    mount2 = tmp_path / "ro2"
    assert read_only_mount(source, mount2)
    try:
        damaged = CliRunner().invoke(cli, ["solve", str(instances), "--partition", str(EIGHT),
                                           "--cache-dir", str(mount2)])
        assert damaged.exit_code == 1 and damaged.stderr.count("\n") == 2, damaged.output
        for line in damaged.stderr.splitlines():
            assert "checksum mismatch" in line and "cannot be moved aside (Read-only file system)" in line
    finally:
        subprocess.run(["umount", "-l", str(mount2)], check=True)   # lazily: this process maps its tables


NOBODY = 65534


@pytest.mark.slow
def test_another_users_cache_is_used_read_only(tmp_path, eight_cache):
    """The cache of another user (root's, mode 755, with a stale lock) read by ``nobody`` in a subprocess
    (os.setuid): solve works and the stale lock stays; a missing table is a one-line error."""
    import shutil
    import tempfile

    if os.geteuid() != 0:
        pytest.skip("needs root to run a subprocess as another user")
    base = Path(tempfile.mkdtemp(prefix="pdbtool-shared-"))   # pytest's own directories are private to root
    request_cleanup = base
    base.chmod(0o755)
    site = base / "site"
    shutil.copytree(eight_cache, site)
    (site / "3x3-korf-t1.2.3.4-minimized-byte.pdb.lock").write_bytes(b"")
    for path in [site, *site.iterdir()]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    home = base / "home"
    home.mkdir()
    os.chown(home, NOBODY, NOBODY)
    instances = base / "eight.txt"
    instances.write_text(EIGHT_INSTANCES)
    instances.chmod(0o644)

    def as_nobody():
        os.setgid(NOBODY)
        os.setuid(NOBODY)

    try:
        subprocess.run([sys.executable, "-c", "import pdbtool"], preexec_fn=as_nobody, check=True, cwd=REPO,
                       env=env(), capture_output=True, timeout=120)
    except (OSError, subprocess.CalledProcessError):
        shutil.rmtree(base)
        pytest.skip("this Python cannot run as nobody (its installation is private to root)")

    def run(*args):
        return subprocess.run([sys.executable, "-m", "pdbtool", *map(str, args)], capture_output=True, text=True,
                              cwd=REPO, preexec_fn=as_nobody, timeout=600,
                              env=dict(env(), HOME=str(home), NUMBA_CACHE_DIR=str(home / "numba")))

    solved = run("solve", instances, "--partition", EIGHT, "--cache-dir", site)
    assert solved.returncode == 0 and solved.stderr == "", solved.stderr
    assert "25" in solved.stdout and "18" in solved.stdout
    missing = run("solve", instances, "--partition", EIGHT, "--blank", "ignored", "--encoding", "nibble",
                  "--cache-dir", site)
    assert missing.returncode == 1 and missing.stderr, missing.stderr
    assert all("cannot be written (Permission denied)" in line for line in missing.stderr.splitlines())
    assert (site / "3x3-korf-t1.2.3.4-minimized-byte.pdb.lock").exists()
    shutil.rmtree(request_cleanup)


@pytest.mark.parametrize("value", ["", "   "])
def test_an_empty_cache_dir_is_refused(tmp_path, value):
    result = CliRunner().invoke(cli, ["build", "--partition", str(EIGHT), "--cache-dir", value])
    assert result.exit_code == 1 and "empty path" in result.stderr and result.stderr.count("\n") == 1


def test_a_cache_dir_that_is_a_file_is_refused(tmp_path):
    plain = tmp_path / "plain"
    plain.write_text("x")
    with pytest.raises(PdbtoolError, match="is not a directory"):
        TableCache(plain)
    result = CliRunner().invoke(cli, ["verify", "--cache", "--cache-dir", str(plain)])
    assert result.exit_code == 2 and "is a file" in result.stderr   # Click's usage error


def test_temporaries_are_created_exclusively_and_never_through_a_link(tmp_path, small):
    """A link planted where a temporary or a table goes is never written through."""
    cache = TableCache(tmp_path / "c")
    victim = tmp_path / "victim"
    victim.write_text("keep")
    path = cache.path_for(small, "ignored")
    path.parent.mkdir()
    lock = path.with_name(path.name + ".lock")
    lock.symlink_to(victim)
    with pytest.raises(OSError):
        cache.get(small, "ignored")
    lock.unlink()
    calls = []
    real_open = os.open

    def spy(name, flags, *rest):
        calls.append((str(name), flags))
        return real_open(name, flags, *rest)

    import unittest.mock

    with unittest.mock.patch.object(os, "open", spy):
        cache.get(small, "ignored")
    created = [flags for name, flags in calls if ".tmp-" in name and flags & os.O_CREAT]
    assert created and created[0] & os.O_EXCL and created[0] & os.O_NOFOLLOW  # the temporary is made first
    assert all(flags & os.O_NOFOLLOW for flags in created)
    link = tmp_path / "link.pdb"
    link.symlink_to(victim)
    with pytest.raises(TableFileError):
        fileformat.save(link, {}, np.zeros(3, np.uint8))
    assert victim.read_text() == "keep"


# --- the limits a build checks first ---------------------------------------------------------------------

def test_memory_limits_of_cgroups_and_rlimits(tmp_path, monkeypatch):
    import resource

    proc = tmp_path / "proc"
    (proc / "self").mkdir(parents=True)
    root = tmp_path / "cgroup"
    (proc / "self" / "cgroup").write_text("0::/user.slice/job\n")
    job = root / "user.slice" / "job"
    job.mkdir(parents=True)
    (job / "memory.max").write_text("max\n")
    (root / "user.slice" / "memory.max").write_text(f"{3 << 30}\n")
    (root / "user.slice" / "memory.current").write_text(f"{1 << 30}\n")
    assert resources_module.cgroup_available(proc, root) == 2 << 30
    (job / "memory.max").write_text(f"{1 << 30}\n")
    (job / "memory.current").write_text(f"{256 << 20}\n")
    assert resources_module.cgroup_available(proc, root) == 768 << 20
    (proc / "self" / "cgroup").write_text("4:cpu:/x\n7:memory:/jobs/7\n")
    v1 = root / "memory" / "jobs" / "7"
    v1.mkdir(parents=True)
    (v1 / "memory.limit_in_bytes").write_text(f"{9223372036854771712}\n")   # v1's "no limit"
    assert resources_module.cgroup_available(proc, root) is None
    (v1 / "memory.limit_in_bytes").write_text(f"{512 << 20}\n")
    (v1 / "memory.usage_in_bytes").write_text(f"{100 << 20}\n")
    assert resources_module.cgroup_available(proc, root) == 412 << 20
    # an address-space limit counts what the process already maps
    status = "VmSize:\t  1048576 kB\nVmData:\t   524288 kB\n"
    (proc / "self" / "status").write_text(status)
    monkeypatch.setattr(resource, "getrlimit",
                        lambda which: (3 << 30, resource.RLIM_INFINITY) if which == resource.RLIMIT_AS
                        else (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    assert resources_module.rlimit_available(proc) == 2 << 30
    monkeypatch.setattr(resources_module, "cgroup_available", lambda: 40 << 20)
    pattern = TilePattern(Board(4, 4), (1, 2, 3, 4, 5, 6))
    with pytest.raises(PdbtoolError, match=r"needs about 0\.08 GiB, but only 0\.04 GiB is available"):
        TableCache(tmp_path / "c").get(pattern, "minimized")


def test_too_little_disk_is_refused_before_the_build(tmp_path, monkeypatch, small):
    monkeypatch.setattr(resources_module, "free_disk", lambda directory: 1000)
    with pytest.raises(PdbtoolError, match="MiB is free"):
        TableCache(tmp_path).get(small, "minimized")
    assert leftovers(tmp_path) == [] and not list(tmp_path.glob("*.pdb"))
