"""Table files, the cache, and the build / inspect commands."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from pdbtool.puzzle.board import Board
from pdbtool.tables.cache import TableCache, table_name
from pdbtool.cli.main import cli
from pdbtool.tables.ranking import TilePattern
from pdbtool.tables.table import PatternTable
from pdbtool.tables.fileformat import TableFileError


@pytest.fixture
def pattern():
    return TilePattern(Board(3, 4), (1, 2, 3, 4))


def test_save_load_round_trip_is_memory_mapped(tmp_path, pattern):
    cache = TableCache(tmp_path)
    table = cache.get(pattern, "minimized")
    loaded = PatternTable.load(table.path)
    assert loaded.pattern == pattern and loaded.blank == "minimized" and loaded.encoding == "byte"
    assert not loaded.values.flags.writeable  # a read-only view of the mapped file, not a copy
    assert loaded.values.tobytes() == table.values.tobytes()
    assert loaded.header["max_value"] == int(table.values.max())
    assert loaded.lookup(pattern.goal_cells()) == 0


def test_flipped_byte_is_refused(tmp_path, pattern):
    path = TableCache(tmp_path).get(pattern, "ignored").path
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x10
    path.write_bytes(bytes(data))
    with pytest.raises(TableFileError, match="checksum mismatch"):
        PatternTable.load(path)


def test_truncated_and_foreign_files_are_refused(tmp_path, pattern):
    path = TableCache(tmp_path).get(pattern, "ignored").path
    data = path.read_bytes()
    bad = tmp_path / "short.pdb"
    bad.write_bytes(data[:-100])
    with pytest.raises(TableFileError, match="truncated"):
        PatternTable.load(bad)
    bad.write_bytes(b"")
    with pytest.raises(TableFileError, match="empty"):
        PatternTable.load(bad)
    bad.write_bytes(b"hello world, this is not a table at all")
    with pytest.raises(TableFileError, match="magic"):
        PatternTable.load(bad)
    future = bytearray(data)
    future[8] = 9
    bad.write_bytes(bytes(future))
    with pytest.raises(TableFileError, match="version 9"):
        PatternTable.load(bad)


def test_cache_reuses_and_names_by_identity(tmp_path, pattern):
    built = []
    cache = TableCache(tmp_path)
    first = cache.get(pattern, "minimized", on_build=lambda t, r: built.append(r))
    second = cache.get(pattern, "minimized", on_build=lambda t, r: built.append(r))
    assert len(built) == 1 and first.path == second.path
    assert first.path.name == table_name(pattern, "minimized") == "3x4-korf-t1.2.3.4-minimized-byte.pdb"
    other_goal = TilePattern(Board.parse("3x4", "blank-last"), (1, 2, 3, 4))
    assert "blank-last" in table_name(other_goal, "minimized")
    assert not list(tmp_path.glob("*.tmp-*"))


def test_damaged_cached_table_is_moved_aside_and_rebuilt(tmp_path, pattern):
    notes = []
    cache = TableCache(tmp_path, notify=notes.append)
    path = cache.get(pattern, "minimized").path
    good = PatternTable.load(path).values.tobytes()
    data = bytearray(path.read_bytes())
    data[-20] ^= 1
    path.write_bytes(bytes(data))
    table = cache.get(pattern, "minimized")
    assert PatternTable.load(path).values.tobytes() == good
    assert table.values[pattern.goal_rank()] == 0
    assert any("checksum" in n for n in notes)
    assert list(tmp_path.glob("*.corrupt-*"))


def test_build_and_inspect_cli(tmp_path):
    runner = CliRunner()
    result = runner.invoke(cli, ["build", "--pattern", "1,2,3", "--board", "3x3", "--cache-dir", str(tmp_path),
                                 "--format", "json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["entries"] == 504 and record["built"] and record["max"] == 11
    # the build's cost: CPU seconds and the process's peak memory (a Python with NumPy: well over 10 MB)
    assert record["cpu_seconds"] >= 0 and record["peak_rss_bytes"] > 10 << 20
    result = runner.invoke(cli, ["inspect", "--pattern", "1,2,3", "--board", "3x3", "--cache-dir", str(tmp_path),
                                 "--format", "json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    for key in ("tiles", "board", "blank", "encoding", "entries", "bits_per_entry", "checksum_ok", "histogram",
                "mean", "max"):
        assert key in info
    assert info["tiles"] == [1, 2, 3] and info["checksum_ok"] and info["bits_per_entry"] == 8
    assert sum(info["histogram"].values()) == 504 and info["histogram"]["0"] == 1
    text = runner.invoke(cli, ["inspect", record["file"]])
    assert text.exit_code == 0 and "checksum ok" in text.output


def test_build_a_partition_file(tmp_path):
    part = tmp_path / "p.txt"
    part.write_text("# two halves\nboard 3x3\ngoal korf\n1 2 3 4\n5,6,7,8\n")
    result = CliRunner().invoke(cli, ["build", "--partition", str(part), "--cache-dir", str(tmp_path / "c"),
                                      "--blank", "ignored"])
    assert result.exit_code == 0, result.output
    assert result.output.count("built in") == 2


@pytest.mark.parametrize("args,message", [
    (["build", "--pattern", "1,1", "--board", "3x3"], "appears twice"),
    (["build", "--pattern", "1,2", "--board", "3x3", "--goal", "1 2 3"], "permutation"),
    (["build", "--pattern", "0,2", "--board", "3x3"], "outside"),
    (["build", "--pattern", "1,2"], "--board"),
    (["build", "--partition", "no-such"], "unknown partition"),
    (["build", "--pattern", "1,2", "--board", "9x9"], "at most 64"),
    (["inspect", "--pattern", "1,2", "--board", "3x3"], "not in the cache"),
    # zero-aware tables are byte tables: said before a build, a conversion or a look in the cache
    (["build", "--pattern", "1,2", "--board", "3x3", "--blank", "zero-aware", "--encoding", "nibble"],
     "zero-aware tables are byte tables only"),
    (["build", "--pattern", "1,2", "--board", "3x3", "--blank", "zero-aware", "--encoding", "min-nibble"],
     "zero-aware tables are byte tables only"),
    (["convert", "--pattern", "1,2", "--board", "3x3", "--blank", "zero-aware", "--encoding", "sparse"],
     "zero-aware tables are byte tables only"),
    (["inspect", "--pattern", "1,2", "--board", "3x3", "--blank", "zero-aware", "--encoding", "nibble"],
     "zero-aware tables are byte tables only"),
    # a name of 5000 characters is quoted by its ends
    (["build", "--partition", "a" * 5000], "a" * 60 + "..." + "a" * 19),
])
def test_bad_input_is_one_line(tmp_path, args, message):
    result = CliRunner().invoke(cli, args + ["--cache-dir", str(tmp_path)])
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_long_input_is_shortened_in_the_error_line(tmp_path):
    result = CliRunner().invoke(cli, ["build", "--partition", "a" * 5000, "--cache-dir", str(tmp_path)])
    assert result.exit_code == 1 and len(result.output) < 200, result.output
    binary = tmp_path / "part.txt"
    binary.write_bytes(b"board 3x3\npartition\n" + b"x\x00" * 3000 + b"\n")
    result = CliRunner().invoke(cli, ["build", "--partition", str(binary), "--cache-dir", str(tmp_path)])
    assert result.exit_code == 1 and "tiles must be whole numbers" in result.output
    assert len(result.output) < 400 and len(result.output.strip().splitlines()) == 1, result.output


def test_convert_refuses_to_write_over_its_source(tmp_path):
    cache = tmp_path / "cache"
    result = CliRunner().invoke(cli, ["build", "--pattern", "1,2,3", "--board", "3x3", "--cache-dir", str(cache)])
    assert result.exit_code == 0
    source = next(cache.glob("*.pdb"))
    before = source.read_bytes()
    for output in (source, tmp_path / "cache" / ".." / "cache" / source.name):
        result = CliRunner().invoke(cli, ["convert", str(source), "--encoding", "nibble", "-o", str(output),
                                          "--cache-dir", str(cache)])
        assert result.exit_code == 1 and "the table being converted" in result.output
    assert source.read_bytes() == before
    other = tmp_path / "nibble.pdb"
    result = CliRunner().invoke(cli, ["convert", str(source), "--encoding", "nibble", "-o", str(other),
                                      "--cache-dir", str(cache)])
    assert result.exit_code == 0 and other.stat().st_size < len(before)


def test_overlapping_partition_file_is_refused(tmp_path):
    part = tmp_path / "bad.txt"
    part.write_text("board 3x3\n1 2 3\n3 4\n")
    result = CliRunner().invoke(cli, ["build", "--partition", str(part), "--cache-dir", str(tmp_path)])
    assert result.exit_code != 0 and "overlap on tile 3" in result.output


def test_memory_estimate_refuses_big_builds(tmp_path, monkeypatch):
    import pdbtool.tables.resources as resources_module

    monkeypatch.setattr(resources_module, "available_memory", lambda: 10 << 20)
    result = CliRunner().invoke(cli, ["build", "--pattern", "1,2,3,4,5", "--board", "4x4",
                                      "--cache-dir", str(tmp_path)])
    assert result.exit_code != 0 and "needs about" in result.output


def test_python_api_example(tmp_path):
    # the README's example
    from pdbtool import Board, TableCache, TilePattern

    board = Board(4, 4)
    pattern = TilePattern(board, (1, 2, 4, 5, 8))
    table = TableCache(tmp_path).get(pattern)  # blank minimized, built once, then loaded from the cache
    assert table.lookup((1, 2, 4, 5, 8)) == 0
    assert table.lookup((2, 1, 4, 5, 8)) >= 2
    assert np.asarray(table.values).shape == (524_160,)


def test_build_progress_shows_states_per_second_and_time_left(monkeypatch):
    from pdbtool.cli import _common

    clock = iter([100.0, 102.0])  # the bar starts at 100 s; the first layer ends at 102 s, a quarter done
    monkeypatch.setattr("time.perf_counter", lambda: next(clock))
    bar, update = _common.progress_bar("probe")
    try:
        update(3, 1000, 0.25)
        assert bar.postfix == "depth 3: 1,000 states, 500 states/s, ~6 s left"
    finally:
        bar.close()


def test_a_resumed_builds_time_left_counts_only_the_work_since_it_resumed(monkeypatch):
    from pdbtool.cli import _common

    clock = iter([100.0, 101.0, 103.0])  # resumed at 101 s half done; three quarters done at 103 s
    monkeypatch.setattr("time.perf_counter", lambda: next(clock))
    bar, update = _common.progress_bar("probe")
    try:
        update(5, 0, 0.5)
        update(5, 600, 0.75)
        assert bar.postfix == "depth 5: 600 states, 200 states/s, ~2 s left"
    finally:
        bar.close()
