"""Compact encodings: every rank decodes to the byte value, EXACT and CHILD-H track the byte table along real
walks, min-nibble stays below it, sparse rank/select agree with plain counts, files and CLI round trips."""

import json
from functools import cache

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st
from numba import njit

from pdbtool.tables import encodings as enc
from pdbtool.tables.build import build_table
from pdbtool.puzzle.board import Board
from pdbtool.tables.cache import TableCache
from pdbtool.cli.main import cli
from pdbtool.cli._common import encoding_option
from pdbtool.tables.ranking import TilePattern, manhattan_of_ranks
from pdbtool.tables.table import PatternTable
from pdbtool.tables.fileformat import TableFileError

TABLES = [((3, 3), (1, 2, 3, 4)), ((3, 4), (1, 2, 3, 4, 5)), ((4, 4), (1, 2, 3, 4, 5)),
          ((4, 4), (1, 2, 4, 5, 8, 9))]
BLANKS = ("minimized", "ignored")


@cache
def byte_table(dims, tiles, blank):
    pattern = TilePattern(Board(*dims), tiles)
    values = build_table(pattern, blank).table
    values.setflags(write=False)
    return pattern, values


@cache
def encoded(dims, tiles, blank, encoding, group=None):
    pattern, values = byte_table(dims, tiles, blank)
    return enc.encode(values, pattern, blank, encoding, {"group": group} if group else None)


def excess(pattern, values):
    m = manhattan_of_ranks(np.arange(pattern.entries), pattern.n, pattern.k, pattern.md_rows())
    return m, (values.astype(np.int64) - m) // 2


# --- every rank of lossless encodings ---------------------------------------------------------------------

@pytest.mark.parametrize("dims,tiles", TABLES)
@pytest.mark.parametrize("blank", BLANKS)
@pytest.mark.parametrize("encoding", ["byte", "nibble", "sparse", "mod3", "parity"])
def test_lossless_encodings_decode_every_rank_to_the_byte_value(dims, tiles, blank, encoding):
    if encoding in enc.NEEDS_CONSISTENT and blank == "minimized":
        pytest.skip("refused for blank-minimized tables (see test_mod3_and_parity_refuse_minimized_tables)")
    pattern, values = byte_table(dims, tiles, blank)
    result = encoded(dims, tiles, blank, encoding)
    assert result.info.get("saturated", 0) == 0      # these tables never exceed an excess of 15
    assert result.payload.nbytes == enc.payload_bytes(encoding, pattern.entries, nonzero=result.info.get("nonzero", 0))
    decoded = enc.decode(result.payload, pattern, encoding)
    np.testing.assert_array_equal(decoded, values)


@pytest.mark.parametrize("encoding,bits", [("byte", 8), ("nibble", 4), ("mod3", 1.6), ("parity", 1)])
def test_bits_per_entry(encoding, bits):
    dims, tiles = TABLES[2]
    assert encoded(dims, tiles, "ignored", encoding).info["bits_per_entry"] == pytest.approx(bits, abs=1e-4)


def test_residues_are_stored_where_the_ranks_say():
    dims, tiles = TABLES[1]
    pattern, values = byte_table(dims, tiles, "ignored")
    mod3 = encoded(dims, tiles, "ignored", "mod3").payload
    parity = encoded(dims, tiles, "ignored", "parity").payload
    r = np.arange(pattern.entries)
    digits = (mod3[r // 5].astype(np.int64) // 3 ** (r % 5)) % 3
    np.testing.assert_array_equal(digits, values % 3)
    bits = (parity[r // 8] >> (r % 8)) & 1
    np.testing.assert_array_equal(bits, (values >> 1) & 1)


# --- consistency: why mod3/parity are for blank-ignored tables only ---------------------------------------

@pytest.mark.parametrize("dims,tiles", TABLES)
def test_ignored_tables_change_by_exactly_one_per_tile_move(dims, tiles):
    pattern, values = byte_table(dims, tiles, "ignored")
    hist = enc.tile_move_deltas(values, pattern.n, pattern.k, pattern.board.neighbours(), 4096)
    assert hist[1] > 0 and hist.sum() == hist[1]


@pytest.mark.parametrize("dims,tiles", TABLES)
def test_minimized_tables_jump_by_three_or_more_on_some_tile_moves(dims, tiles):
    # the least distance over blank regions: a tile that opens or closes the blank's best region changes it
    # by 3, 5, ...; the change is always odd, as h and the Manhattan distance share their parity
    pattern, values = byte_table(dims, tiles, "minimized")
    hist = enc.tile_move_deltas(values, pattern.n, pattern.k, pattern.board.neighbours(), 4096)
    assert hist[0] == hist[2] == hist[4] == hist[6] == 0
    assert hist[3] > 0


def test_mod3_and_parity_refuse_minimized_tables():
    dims, tiles = TABLES[0]
    pattern, values = byte_table(dims, tiles, "minimized")
    for encoding in ("mod3", "parity"):
        with pytest.raises(enc.EncodingError, match="--blank ignored"):
            enc.encode(values, pattern, "minimized", encoding)


def test_mod3_would_misdecode_a_minimized_table():
    # what the refusal prevents: CHILD-H from the parent's exact value goes wrong across a jump of 3
    dims, tiles = TABLES[0]
    pattern, values = byte_table(dims, tiles, "minimized")
    payload = np.empty(enc.payload_bytes("mod3", pattern.entries), dtype=np.uint8)
    enc.encode_mod3(values, payload)
    nb = pattern.board.neighbours()
    wrong = 0
    for r in range(pattern.entries):
        cells = list(pattern.unrank(r))
        for i, c in enumerate(cells):
            for q in nb[c]:
                if q < 0 or q in cells:
                    continue
                child = pattern.rank(cells[:i] + [int(q)] + cells[i + 1:])
                if enc.value_of(enc.MOD3, payload, child, 0, int(values[r]), 0) != values[child]:
                    wrong += 1
    assert wrong > 0


# --- EXACT and CHILD-H ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dims,tiles", TABLES)
@pytest.mark.parametrize("encoding", ["mod3", "parity"])
def test_exact_equals_the_byte_value_on_random_placements(dims, tiles, encoding):
    pattern, values = byte_table(dims, tiles, "ignored")
    payload = encoded(dims, tiles, "ignored", encoding).payload
    rng = np.random.default_rng(7)
    ranks = list(rng.integers(0, pattern.entries, 150)) + [pattern.goal_rank(), int(np.argmax(values))]
    for r in ranks:
        assert enc.exact_value(payload, pattern, encoding, pattern.unrank(int(r))) == values[r]


def test_exact_reports_a_damaged_payload():
    dims, tiles = TABLES[0]
    pattern, values = byte_table(dims, tiles, "ignored")
    payload = encoded(dims, tiles, "ignored", "parity").payload.copy()
    # (flipping every bit would not do: that encodes h + 2 everywhere, and EXACT only counts steps)
    payload ^= np.random.default_rng(1).integers(0, 256, payload.shape[0]).astype(np.uint8)
    ranks = np.argsort(values)[-20:]
    assert any(enc.exact_value(payload, pattern, "parity", pattern.unrank(int(r))) != values[r] for r in ranks)
    with pytest.raises(enc.EncodingError, match="inconsistent"):
        enc.decode(payload, pattern, "parity")


def _walk_and_track(board, patterns, tables, payloads, encoding, moves, rng_moves=True):
    """Walk the real puzzle; each pattern's value follows CHILD-H from its parent's.  Returns the checks."""
    code = enc.CODES[encoding]
    nb = board.neighbours()
    state = list(board.goal_tiles)
    blank = state.index(0)
    # scramble first, then take EXACT at the start of the tracked walk
    for m in moves[: len(moves) // 2]:
        q = nb[blank, m % 4]
        if q >= 0:
            state[blank], state[q] = state[q], 0
            blank = q
    values = []
    for p, table, payload in zip(patterns, tables, payloads):
        cells = p.placement_of(state)
        h = enc.exact_value(payload, p, encoding, cells)
        assert h == table[p.rank(cells)]
        values.append(h)
    checks = 0
    for m in moves[len(moves) // 2:]:
        q = nb[blank, m % 4]
        if q < 0:
            continue
        state[blank], state[q] = state[q], 0
        blank = q
        for j, (p, table, payload) in enumerate(zip(patterns, tables, payloads)):
            cells = p.placement_of(state)
            r = p.rank(cells)
            child = enc.value_of(code, payload, r, p.manhattan(cells), values[j], 0)
            assert child == table[r], (encoding, p.tiles, r)
            assert abs(child - values[j]) <= 1           # the bound: 1 for a tile move, 0 for a blank move
            values[j] = child
            checks += 1
    return checks


@pytest.mark.parametrize("encoding", ["mod3", "parity"])
def test_child_h_tracks_the_byte_value_along_random_walks_of_the_15_puzzle(encoding):
    board = Board(4, 4)
    part = [(1, 2, 3, 4, 5), (6, 7, 8, 9, 10), (11, 12, 13, 14, 15)]
    patterns, tables, payloads = [], [], []
    for tiles in part:
        p, values = byte_table((4, 4), tiles, "ignored")
        patterns.append(p)
        tables.append(values)
        payloads.append(encoded((4, 4), tiles, "ignored", encoding).payload)
    rng = np.random.default_rng(11)
    checks = _walk_and_track(board, patterns, tables, payloads, encoding, list(rng.integers(0, 4, 3000)))
    assert checks > 3000


@settings(max_examples=25, deadline=None)
@given(moves=st.lists(st.integers(0, 3), min_size=2, max_size=300))
def test_child_h_tracks_the_byte_value_along_any_walk_of_the_8_puzzle(moves):
    board = Board(3, 3)
    p, values = byte_table((3, 3), (1, 2, 3, 4), "ignored")
    q, others = byte_table((3, 3), (5, 6, 7, 8), "ignored")
    for encoding in ("mod3", "parity"):
        _walk_and_track(board, [p, q], [values, others],
                        [encoded((3, 3), (1, 2, 3, 4), "ignored", encoding).payload,
                         encoded((3, 3), (5, 6, 7, 8), "ignored", encoding).payload], encoding, moves)


# --- min-nibble, nibble saturation, sparse rank/select -----------------------------------------------------

@pytest.mark.parametrize("dims,tiles", TABLES[:3])
@pytest.mark.parametrize("blank", BLANKS)
@pytest.mark.parametrize("group", [1, 2, 4, 8])
def test_min_nibble_is_the_group_minimum_and_never_above_the_byte_value(dims, tiles, blank, group):
    pattern, values = byte_table(dims, tiles, blank)
    result = encoded(dims, tiles, blank, "min-nibble", group)
    assert result.info["bits_per_entry"] == pytest.approx(4 / group, rel=1e-3)
    decoded = enc.decode(result.payload, pattern, "min-nibble", {"group": group}).astype(np.int64)
    assert (decoded <= values).all()
    m, e = excess(pattern, values)
    e = np.minimum(e, 15)
    pad = (-len(e)) % group
    group_min = np.concatenate([e, np.full(pad, 15)]).reshape(-1, group).min(axis=1)
    np.testing.assert_array_equal((decoded - m) // 2, np.repeat(group_min, group)[: len(e)])
    if group == 1:
        np.testing.assert_array_equal(decoded, values)


def test_nibble_and_sparse_saturate_admissibly_and_count_it():
    dims, tiles = TABLES[1]
    pattern, values = byte_table(dims, tiles, "ignored")
    m, e = excess(pattern, values)
    big = values.astype(np.int64).copy()
    big[::7] += 2 * 20                       # excesses beyond 15 (synthetic: no small table has them)
    big = big.astype(np.uint8)
    expected_sat = int(((big.astype(np.int64) - m) // 2 > 15).sum())
    assert expected_sat > 0
    for encoding in ("nibble", "sparse", "min-nibble"):
        params = {"group": 2} if encoding == "min-nibble" else None
        result = enc.encode(big, pattern, "ignored", encoding, params)
        assert result.info["saturated"] == expected_sat
        decoded = enc.decode(result.payload, pattern, encoding, params).astype(np.int64)
        assert (decoded <= big).all()
        if encoding != "min-nibble":
            np.testing.assert_array_equal(decoded, m + 2 * np.minimum((big.astype(np.int64) - m) // 2, 15))


@pytest.mark.parametrize("dims,tiles", TABLES[:3])
@pytest.mark.parametrize("blank", BLANKS)
def test_sparse_rank_and_select_agree_with_a_plain_count(dims, tiles, blank):
    pattern, values = byte_table(dims, tiles, blank)
    payload = encoded(dims, tiles, blank, "sparse").payload
    _, e = excess(pattern, values)
    nonzero = e != 0
    before = np.concatenate(([0], np.cumsum(nonzero)))
    ranks = np.arange(pattern.entries + 1) if pattern.entries < 20000 else \
        np.unique(np.concatenate([np.random.default_rng(3).integers(0, pattern.entries, 3000),
                                  np.arange(0, pattern.entries, 511), [pattern.entries]]))
    for r in ranks:
        if r < pattern.entries:
            assert enc.sparse_rank1(payload, int(r)) == before[r]
    positions = np.flatnonzero(nonzero)
    picks = range(len(positions)) if len(positions) < 5000 else \
        np.random.default_rng(5).integers(0, len(positions), 3000)
    for j in picks:
        assert enc.sparse_select1(payload, int(j)) == positions[j]
    assert enc.sparse_select1(payload, len(positions)) == -1


def test_manhattan_runs_match_per_rank_manhattan():
    pattern, _ = byte_table((4, 4), (1, 2, 3, 4, 5), "ignored")
    md = pattern.md_rows()

    @njit
    def run(r0, count, n, k, md):
        out = np.empty(count, dtype=np.int64)
        cells = np.empty(k, dtype=np.int64)
        enc.manhattan_run(r0, count, n, k, md, cells, out)
        return out

    for r0, count in [(0, 5000), (7, 123), (pattern.entries - 100, 100)]:
        np.testing.assert_array_equal(run(r0, count, pattern.n, pattern.k, md),
                                      manhattan_of_ranks(np.arange(r0, r0 + count), pattern.n, pattern.k, md))


def test_lookups_inline_into_another_kernel():
    dims, tiles = TABLES[1]
    pattern, values = byte_table(dims, tiles, "ignored")
    m, _ = excess(pattern, values)

    @njit
    def total(code, payload, manhattan, shift):
        addr = payload.ctypes.data
        s = 0
        for r in range(manhattan.shape[0]):
            s += enc.value_at(code, addr, r, manhattan[r], 0, shift)
        return s

    for encoding in ("byte", "nibble", "sparse"):
        assert total(enc.CODES[encoding], encoded(dims, tiles, "ignored", encoding).payload, m, 0) == values.sum()


# --- files, cache, inspection -----------------------------------------------------------------------------

ALL = [("byte", None), ("nibble", None), ("mod3", None), ("parity", None), ("min-nibble", {"group": 4}),
       ("sparse", None)]


@pytest.mark.parametrize("encoding,params", ALL)
def test_save_load_round_trip_per_encoding(tmp_path, encoding, params):
    pattern = TilePattern(Board(3, 4), (1, 2, 3, 4))
    cache = TableCache(tmp_path)
    byte = cache.get(pattern, "ignored")
    converted = []
    table = cache.get(pattern, "ignored", encoding=encoding, params=params,
                      on_convert=lambda t, info: converted.append(info))
    assert table.path.name.endswith(f"-{encoding}" + (f"-group{params['group']}" if params else "") + ".pdb")
    assert bool(converted) == (encoding != "byte")
    loaded = PatternTable.load(table.path)
    assert (loaded.encoding, loaded.encoding_params) == (encoding, params or {})
    loaded.check_identity(pattern, "ignored", encoding, params)
    decoded = loaded.decoded()
    if encoding == "min-nibble":
        assert (decoded <= byte.values).all() and (decoded < byte.values).any()
    else:
        np.testing.assert_array_equal(decoded, byte.values)
    stats = loaded.stats()
    assert stats["bits_per_entry"] == pytest.approx(8 * enc.payload_bytes(
        encoding, pattern.entries, params, loaded.header.get("conversion", {}).get("nonzero", 0)) / pattern.entries)
    assert loaded.header["max_value"] == int(byte.values.max())
    for r in (0, pattern.goal_rank(), pattern.entries - 1, 4321):
        cells = pattern.unrank(r)
        assert loaded.lookup(cells) == decoded[r]
    # the second request reuses the file: no new conversion
    again = cache.get(pattern, "ignored", encoding=encoding, params=params,
                      on_convert=lambda t, info: converted.append(info))
    assert again.path == table.path and len(converted) == (encoding != "byte")


def test_a_payload_of_the_wrong_size_is_refused(tmp_path):
    pattern = TilePattern(Board(3, 3), (1, 2, 3, 4))
    bad = PatternTable(pattern, "ignored", np.zeros(10, dtype=np.uint8), "mod3")
    bad.save(tmp_path / "bad.pdb", {"max_value": 0})
    with pytest.raises(TableFileError, match="mod3 payload of 10 bytes"):
        PatternTable.load(tmp_path / "bad.pdb")


def test_group_sizes_are_checked():
    assert enc.normalize_params("min-nibble", None, 8) == {"group": 8}
    for bad in (3, 0, -2, 1 << 16):
        with pytest.raises(enc.EncodingError, match="power of two"):
            enc.normalize_params("min-nibble", {"group": bad})
    with pytest.raises(enc.EncodingError, match="needs a group"):
        enc.normalize_params("min-nibble", None)
    with pytest.raises(enc.EncodingError, match="takes no parameters"):
        enc.normalize_params("nibble", None, 2)
    with pytest.raises(enc.EncodingError, match="choose one of"):
        enc.normalize_params("zip")


# --- CLI ---------------------------------------------------------------------------------------------------

def test_cli_encoding_choices_are_the_library_encodings():
    choice = encoding_option(lambda **kw: None).__click_params__[0].type
    assert tuple(choice.choices) == enc.ENCODINGS


def test_cli_build_convert_inspect(tmp_path):
    runner = CliRunner()
    base = ["--pattern", "1,2,3,4", "--board", "3x4", "--cache-dir", str(tmp_path)]
    result = runner.invoke(cli, ["build", *base, "--blank", "ignored", "--encoding", "mod3", "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["encoding"] == "mod3" and record["bits_per_entry"] == pytest.approx(1.6, abs=1e-3)
    assert record["built"] and record["converted"]

    result = runner.invoke(cli, ["inspect", record["file"], "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert info["encoding"] == "mod3" and info["bits_per_entry"] == pytest.approx(1.6, abs=1e-3)
    assert info["histogram"]["0"] == 1

    # convert re-encodes the cached byte table: no new search
    result = runner.invoke(cli, ["convert", *base, "--blank", "ignored", "--encoding", "min-nibble", "--group", "2",
                                 "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["bits_per_entry"] == pytest.approx(2.0, abs=1e-3) and "mean_loss" in record
    byte_file = tmp_path / "3x4-korf-t1.2.3.4-ignored-byte.pdb"
    out = tmp_path / "elsewhere" / "t.pdb"
    out.parent.mkdir()
    result = runner.invoke(cli, ["convert", str(byte_file), "--encoding", "sparse", "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(runner.invoke(cli, ["inspect", str(out), "--json"]).output)
    assert info["encoding"] == "sparse" and info["saturated"] == 0
    assert info["bits_per_entry"] == pytest.approx(8 * info["payload_bytes"] / info["entries"], abs=1e-4)
    text = runner.invoke(cli, ["inspect", str(out)]).output
    assert "saturated entries 0" in text


@pytest.mark.parametrize("args,message", [
    (["build", "--encoding", "parity"], "--blank ignored"),
    (["build", "--encoding", "nibble", "--group", "2"], "takes no parameters"),
    (["build", "--encoding", "min-nibble", "--group", "3"], "power of two"),
    (["build", "--encoding", "min-nibble"], "needs a group size"),
    (["convert", "--encoding", "nibble"], "is not in the cache"),
    (["convert", "--encoding", "byte"], "choose --encoding other than byte"),
])
def test_cli_errors_are_one_line(tmp_path, args, message):
    result = CliRunner().invoke(cli, [*args, "--pattern", "1,2,3,4", "--board", "3x4", "--cache-dir", str(tmp_path)])
    assert result.exit_code == 1
    assert message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not list(tmp_path.glob("*.pdb"))          # refused before any search


def test_inspect_reports_a_damaged_compact_table_by_its_checksum(tmp_path):
    pattern = TilePattern(Board(3, 4), (1, 2, 3, 4))
    path = TableCache(tmp_path).get(pattern, "ignored", encoding="mod3").path
    data = bytearray(path.read_bytes())
    payload_at = len(data) - 8 - enc.payload_bytes("mod3", pattern.entries)
    for i in range(payload_at, len(data) - 8, 3):
        data[i] = (data[i] + 1) % 243           # other residues: the layers contradict each other
    path.write_bytes(bytes(data))
    result = CliRunner().invoke(cli, ["inspect", str(path), "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert info["checksum_ok"] is False and "inconsistent" in info["decode_error"]


def test_inspect_finds_cached_tables_by_encoding(tmp_path):
    runner = CliRunner()
    base = ["--pattern", "1,2,3,4", "--board", "3x4", "--blank", "ignored", "--cache-dir", str(tmp_path)]
    missing = runner.invoke(cli, ["inspect", *base, "--encoding", "parity"])
    assert missing.exit_code == 1 and "--encoding parity" in missing.output
    assert runner.invoke(cli, ["build", *base, "--encoding", "parity"]).exit_code == 0
    info = json.loads(runner.invoke(cli, ["inspect", *base, "--encoding", "parity", "--json"]).output)
    assert info["encoding"] == "parity" and info["bits_per_entry"] == pytest.approx(1.0, abs=1e-3)
