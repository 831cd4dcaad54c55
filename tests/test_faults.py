"""Fault tolerance: damaged files, killed and concurrent builds, a full disk, too little memory.

The process tests run ``python -m pdbtool build`` in real subprocesses on a table that takes a second or
two (15-puzzle, 5 tiles) and signal or kill them mid-build.
"""

import errno
import fcntl
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import pdbtool.tables.cache as cache_module
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


def wait_for(path: Path, proc, timeout=120.0):
    """Wait until ``path`` exists (the build holds its lock) while ``proc`` runs."""
    end = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, f"the build ended early: {proc.communicate()}"
        assert time.monotonic() < end, "the build never took its lock"
        time.sleep(0.01)


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
        (dict(tiles=[1, 2, 3]), "the header says 11880 entries, but 3 tiles on 3x4 have 1320"),
        (dict(tiles=[1, 2, 3], entries=1320), "the payload holds 11880 entries, the pattern has 1320"),
        (dict(width=5), "goal is not a permutation of the 20 cells"),
        (dict(goal="korf"), "not a list"),
        (dict(blank="sideways"), "blank rule 'sideways'"),
        (dict(encoding=["byte"]), "encoding ['byte']"),
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
    wait_for(tmp_path / (SLOW_NAME + ".lock"), proc)
    time.sleep(0.2)
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

        sys.modules["pdbtool.cli.probe"] = types.SimpleNamespace(command=probe)
        entry.COMMANDS["probe"] = ("probe", "")
        entry.main(["probe"])
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

        sys.modules["pdbtool.cli.probe"] = types.SimpleNamespace(command=probe)
        entry.COMMANDS["probe"] = ("probe", "")
        entry.main(["probe"])
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


def test_killed_builds_leave_nothing_taken_for_a_table(tmp_path, small):
    reference = None
    for delay in (0.0, 0.5, 1.5):
        proc = start_build(tmp_path)
        wait_for(tmp_path / (SLOW_NAME + ".lock"), proc)
        time.sleep(delay)
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
    wait_for(cache_dir / (SLOW_NAME + ".lock"), first)  # the first builds, holding the lock ...
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
        with pytest.raises(TableFileError, match="the disk is full"):
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


# --- an interrupted solve ------------------------------------------------------------------------------------

@pytest.mark.parametrize("signum,word,fmt", [(signal.SIGINT, "interrupted", "text"),
                                             (signal.SIGTERM, "terminated", "json")])
def test_interrupted_solve_reports_what_was_solved(tmp_path, signum, word, fmt):
    """A signal during a long search: the finished instances, the stopped one marked as interrupted, the
    summary of what was solved, one line on stderr, and the exit status 128 + signal."""
    hard = next(line for line in (REPO / "examples" / "korf100.txt").read_text().splitlines()
                if line.strip() and not line.startswith("#")).split("#")[0].split()[1:]
    one = [1, 0] + list(range(2, 16))
    two = [1, 2, 0] + list(range(3, 16))
    path = tmp_path / "mixed.txt"
    path.write_text(f"a {' '.join(map(str, one))}  # optimal 1\nb {' '.join(map(str, two))}  # optimal 2\n"
                    f"hard {' '.join(hard)}\nlast {' '.join(map(str, one))}\n")
    proc = subprocess.Popen([sys.executable, "-m", "pdbtool", "solve", str(path), "--heuristic", "manhattan",
                             "--format", fmt], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env(), cwd=REPO)
    first = [proc.stdout.readline() for _ in range(2)]
    time.sleep(0.5)  # into the search of "hard" (minutes with Manhattan distance alone)
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
