"""The library services the commands share: one get-or-build in the cache, one partition resolver, one
plan of the tables shared through board symmetries."""

from __future__ import annotations

import os
import stat
import threading

import numpy as np
import pytest
from click.testing import CliRunner

from pdbtool.cli.main import cli
from pdbtool.puzzle.board import Board
from pdbtool.tables import fileformat, operations
from pdbtool.tables.cache import TableCache
from pdbtool.tables.pairs_triples import file_name, get_set
from pdbtool.tables.partitions import PartitionError, load_partition
from pdbtool.tables.ranking import TilePattern
from pdbtool.tables.resolve import partition_from_options, resolve_partition
from pdbtool.tables.sharing import plan_tables
from pdbtool.tables.table import PatternTable

SYMMETRIC = "board 4x4\n2 3 6 7\n8 9 12 13\n"   # {8,9,12,13} is {2,3,6,7} turned by 180 degrees


def damage(path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def together(run, count):
    """``run(i)`` for i < count, each in its own thread, all at once."""
    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


# --- one get-or-build ------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["byte", "nibble", "pairs"])
def test_a_damaged_file_of_each_kind_is_moved_aside_and_rebuilt(tmp_path, kind):
    notes = []
    cache = TableCache(tmp_path, notify=notes.append)
    board = Board(3, 3)
    pattern = TilePattern(board, (1, 2, 3))
    if kind == "pairs":
        def get():
            return np.array(get_set(cache, board, 2, jobs=1))
        path = tmp_path / file_name(board, 2)
    else:
        def get():
            return np.array(cache.get(pattern, "minimized", encoding=kind).values)
        path = cache.path_for(pattern, "minimized", kind)
    good = get()
    damage(path)
    assert np.array_equal(get(), good)
    aside = list(tmp_path.glob(path.name + ".corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes() != path.read_bytes()
    assert any("damaged table moved aside and rebuilt" in n for n in notes)
    assert not list(tmp_path.glob("*.tmp-*")) and not list(tmp_path.glob("*.lock"))


def test_every_kind_syncs_the_file_and_then_the_directory(tmp_path, monkeypatch):
    """fileformat.save syncs the temporary; after the rename the cache syncs the directory, for the dynamic
    tables as for the pattern tables."""
    real = os.fsync
    synced = []

    def fsync(fd):
        mode = os.fstat(fd).st_mode
        synced.append(("dir" if stat.S_ISDIR(mode) else "file", os.fstat(fd).st_ino))
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    cache = TableCache(tmp_path)
    board = Board(3, 3)
    directory = os.stat(tmp_path).st_ino
    makers = [lambda: get_set(cache, board, 2, jobs=1),
              lambda: cache.get(TilePattern(board, (1, 2)), "minimized"),
              lambda: cache.get(TilePattern(board, (3, 4)), "minimized", encoding="nibble")]
    for make in makers:
        synced.clear()
        make()
        kinds = [k for k, _ in synced]
        assert "file" in kinds and ("dir", directory) in synced, synced
        assert kinds.index("file") < len(kinds) - 1 - kinds[::-1].index("dir")  # the file before the directory


def test_concurrent_builders_build_once(tmp_path):
    """Two caches (two lock descriptors, as two processes have) ask for one name at once: one builds, the
    other waits for the lock, then reuses the file."""
    path = tmp_path / "x.pdb"
    pattern = TilePattern(Board(3, 3), (1, 2))
    writes, results = [], {}
    waiting = threading.Event()  # the cache says "waiting for another process" before it blocks on the lock

    def write(tmp):
        writes.append(tmp)
        assert waiting.wait(60), "the other builder never waited for the lock"
        PatternTable(pattern, "minimized", np.arange(pattern.entries, dtype=np.uint8) % 7).save(tmp)

    def load(p):
        return PatternTable.load(p).values

    def run(i):
        cache = TableCache(tmp_path, notify=lambda message: waiting.set())
        results[i] = np.array(cache.get_or_build(path, load, write))

    together(run, 2)
    assert waiting.is_set() and len(writes) == 1
    assert np.array_equal(results[0], results[1])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.pdb"]


def test_concurrent_dynamic_builds_build_once(tmp_path):
    built = []
    arrays = {}

    def run(i):
        arrays[i] = np.array(get_set(TableCache(tmp_path), Board(3, 3), 2, jobs=1, on_build=built.append))

    together(run, 3)
    assert len(built) == 1
    assert all(np.array_equal(arrays[0], a) for a in arrays.values())


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    cache = TableCache(tmp_path)
    path = tmp_path / "y.pdb"
    path.write_bytes(b"old")

    def write(tmp):
        tmp.write_bytes(b"half")
        raise fileformat.TableFileError(f"{tmp}: the disk is full")

    with pytest.raises(fileformat.TableFileError, match=r"y\.pdb: the disk is full; the cached table"):
        cache.get_or_build(path, lambda p: fileformat.load(p), write, force=True)
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["y.pdb"]


# --- one partition resolver -------------------------------------------------------------------------------

def test_the_resolver_takes_every_form(tmp_path):
    board = Board(4, 4)
    named = resolve_partition("15-7-8")
    assert named.name == "15-7-8" and named.board == board
    assert resolve_partition(None, board) == named                  # the board's default
    assert resolve_partition(named, board) is named
    listed = resolve_partition([[1, 2, 3], [4, 5]], board)
    assert listed.name == "15-3-2" and [p.tiles for p in listed.patterns] == [(1, 2, 3), (4, 5)]
    assert resolve_partition(list(listed.patterns)).patterns == listed.patterns
    path = tmp_path / "p.txt"
    path.write_text(SYMMETRIC)
    assert resolve_partition(str(path)).name == "p"
    assert partition_from_options(str(path), None, None, None) == resolve_partition(str(path))
    single = partition_from_options(None, "1,2,3", "4x4", None)
    assert [p.tiles for p in single.patterns] == [(1, 2, 3)]


@pytest.mark.parametrize("call,message", [
    (lambda: resolve_partition(None, Board(3, 4)), "no default partition for 3x4"),
    (lambda: resolve_partition(None), "a board is needed"),
    (lambda: resolve_partition([]), "empty partition"),
    (lambda: resolve_partition([[1, 2]]), "a board is needed for a partition given as tile lists"),
    (lambda: resolve_partition([[1, 2], [2, 3]], Board(3, 3)), "overlap on tile 2"),
    (lambda: resolve_partition("15-7-8", Board(3, 3)), "but the board is 3x3"),
    (lambda: resolve_partition(load_partition("15-7-8"), Board(5, 5)), "is for 4x4"),
    (lambda: resolve_partition("15-7-8", None, "blank-last"), "is for goal korf, not blank-last"),
    (lambda: partition_from_options("15-7-8", "1,2", None, None), "exactly one of"),
    (lambda: partition_from_options(None, "1,2", None, None), "--pattern needs --board"),
])
def test_the_resolver_refuses_with_one_line(call, message):
    with pytest.raises(PartitionError, match=message):
        call()


# --- one sharing plan -------------------------------------------------------------------------------------

def test_the_24_puzzle_plan_is_the_same_for_every_command():
    """build makes the tables of plan.stored; convert asks for exactly those byte tables; the solver and
    inspect/verify read the same files (checked with a recording cache: 5x5 tables take minutes)."""
    plan = plan_tables(load_partition("24-6-6-6-6").patterns, "minimized")
    assert [str(p) for p in plan.stored] == ["1,2,5,6,7,12", "3,4,8,9,13,14"]

    class Recording:
        dir = "nowhere"

        def __init__(self):
            self.asked = []

        def load_valid(self, pattern, blank, encoding="byte", params=None):
            self.asked.append(pattern)
            return None

    cache = Recording()
    with pytest.raises(Exception, match=r"byte table \{1,2,5,6,7,12\}"):
        list(operations.convert_tables(cache, plan, "nibble", {}))
    assert cache.asked == [plan.stored[0]]   # a missing table stops it, before any conversion
    cache.load_valid = lambda pattern, blank, *a: cache.asked.append(pattern) or "a byte table"
    cache.asked = []
    converted = []
    original = operations._convert
    operations._convert = lambda c, table, *a: converted.append(table) or operations.Outcome(None, None, {})
    try:
        outcomes = list(operations.convert_tables(cache, plan, "nibble", {}))
    finally:
        operations._convert = original
    assert cache.asked == plan.stored and len(converted) == 2
    assert [o.shared is not None for o in outcomes] == [False, False, True, True]


def test_convert_after_build_of_a_symmetric_partition(tmp_path):
    """build shares {8,9,12,13}'s table and never writes it; convert, inspect, verify and solve of the same
    partition in a compact encoding follow the same plan, so none of them asks for that table."""
    path = tmp_path / "sym.txt"
    path.write_text(SYMMETRIC)
    cache_dir = tmp_path / "c"
    base = ["--partition", str(path), "--cache-dir", str(cache_dir)]

    def run(*args):
        result = CliRunner().invoke(cli, list(args))
        assert result.exit_code == 0, result.output
        return result

    run("build", *base)
    assert len(list(cache_dir.glob("*-byte.pdb"))) == 1
    r = run("convert", *base, "--encoding", "nibble")
    assert "not converted" in r.output and "180-degree rotation" in r.output
    assert [p.name for p in cache_dir.glob("*-nibble.pdb")] == ["4x4-korf-t2.3.6.7-minimized-nibble.pdb"]
    r = run("inspect", *base, "--encoding", "nibble")
    assert "not built" in r.output and "8,9,12,13" in r.output
    run("verify", *base)
    instance = tmp_path / "i.txt"
    instance.write_text("1 2 3 0 4 5 6 7 8 9 10 11 12 13 14 15  # optimal 3\n")
    r = run("solve", str(instance), *base, "--encoding", "nibble")
    assert "length   3" in r.output
    # build in a compact encoding follows the same plan: no table of the shared pattern, in any encoding
    run("build", *base, "--encoding", "mod3", "--blank", "ignored")
    assert not list(cache_dir.glob("*t8.9.12.13*"))
