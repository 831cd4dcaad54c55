"""Fuzzing the CLI with random and mutated table files and instance files (hypothesis).

Whatever the input: never a traceback, a one-line error on stderr, and the right exit status (1 for a bad
file, 0 for a sound one).  ``pytest tests/test_fuzz.py --hypothesis-show-statistics`` shows how many cases
ran.
"""

import atexit
import functools
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest
import xxhash
import numpy as np
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdbtool.tables import fileformat
from pdbtool.puzzle.board import Board
from pdbtool.tables.cache import TableCache
from pdbtool.cli.main import cli
from pdbtool.tables.ranking import TilePattern

REPO = Path(__file__).resolve().parents[1]


def fuzz(examples: int):
    return settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


WORK = Path(tempfile.mkdtemp(prefix="pdbtool-fuzz-"))
atexit.register(shutil.rmtree, WORK, True)


@pytest.fixture(scope="module")
def sound_files():
    """Sound table files to mutate: byte tables of both blank rules, a nibble one and a move automaton."""
    cache = TableCache(WORK / "cache")
    files = [cache.get(TilePattern(Board(3, 3), (1, 2)), "minimized").path,
             cache.get(TilePattern(Board(2, 3), (1, 2, 3)), "ignored").path]
    try:
        files.append(cache.get(TilePattern(Board(3, 3), (1, 2)), "ignored", encoding="nibble").path)
    except TypeError:  # this cache makes byte tables only
        pass
    from pdbtool.search.automata import CACHED_FROM_DEPTH, file_name, stored_automaton

    stored_automaton(cache, Board(3, 3), CACHED_FROM_DEPTH)   # a move automaton's file
    files.append(cache.dir / file_name(Board(3, 3), CACHED_FROM_DEPTH))
    return [(p, p.read_bytes()) for p in files]


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def assert_clean(result, allowed=(0, 1)):
    if 1 in allowed:  # verify exits 3 where a file that is there fails (the others 1)
        allowed = (*allowed, 3)
    """No traceback, an allowed exit status, and on failure exactly one line on stderr."""
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    assert result.exit_code in allowed, (result.exit_code, result.output)
    if result.exit_code:
        assert result.stderr.count("\n") == 1 and result.stderr.startswith("pdbtool: "), result.stderr


def write(name: str, data: bytes) -> Path:
    path = WORK / name
    path.write_bytes(data)
    return path


# --- table files ----------------------------------------------------------------------------------------

@fuzz(300)
@given(st.one_of(st.binary(max_size=300),
                 st.binary(max_size=300).map(lambda b: fileformat.MAGIC + b),
                 st.binary(max_size=300).map(lambda b: fileformat.MAGIC + b"\x01\x00" + b)))
def test_random_files(data):
    path = write("random.pdb", data)
    assert_clean(invoke("inspect", path), allowed=(1,))
    assert_clean(invoke("verify", path, "--samples", "20"), allowed=(1,))


mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 10 ** 6), st.integers(0, 7)),
    st.tuples(st.just("set"), st.integers(0, 10 ** 6), st.integers(0, 255)),
    st.tuples(st.just("truncate"), st.integers(0, 10 ** 6)),
    st.tuples(st.just("insert"), st.integers(0, 10 ** 6), st.binary(min_size=1, max_size=16)),
    st.tuples(st.just("delete"), st.integers(0, 10 ** 6), st.integers(1, 64)),
)


def mutate(data: bytes, ops) -> bytes:
    out = bytearray(data)
    for op in ops:
        at = op[1] % (len(out) + 1)
        if op[0] == "flip" and at < len(out):
            out[at] ^= 1 << op[2]
        elif op[0] == "set" and at < len(out):
            out[at] = op[2]
        elif op[0] == "truncate":
            del out[at:]
        elif op[0] == "insert":
            out[at:at] = op[2]
        elif op[0] == "delete":
            del out[at:at + op[2]]
    return bytes(out)


@fuzz(1000)
@given(st.data(), st.lists(mutation, min_size=1, max_size=4))
def test_mutated_table_files(sound_files, data, ops):
    source, original = data.draw(st.sampled_from(sound_files))
    damaged = mutate(original, ops)
    path = write("mutated.pdb", damaged)
    assert_clean(invoke("inspect", path))
    result = invoke("verify", path, "--samples", "50")
    # any change is caught (by the checksum if by nothing else); an unchanged file passes
    assert_clean(result, allowed=(0,) if damaged == original else (1,))


meaningful = st.sampled_from(["byte", "nibble", "mod3", "parity", "min-nibble", "sparse", "minimized", "ignored",
                              "|u1", "<u8", {"group": 4}, {"group": 3}, [1, 2], [2, 1], list(range(9)), [0, 1, 2]])
json_value = st.recursive(st.none() | st.booleans() | st.integers(-10, 10 ** 7) | st.integers(0, 20)
                          | st.integers(-2 ** 80, 2 ** 80) | st.floats() | st.text(max_size=8) | meaningful
                          | st.dictionaries(st.sampled_from(["saturated", "mean_loss", "nonzero", "group"]),
                                            st.integers(-3, 2 ** 70) | st.floats() | st.text(max_size=3)),
                          lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                                     max_size=3),
                          max_leaves=8)
# every header key any reader uses (pattern tables, the dynamic sets' files, the move automata)
HEADER_KEYS = ["width", "height", "goal", "tiles", "blank", "encoding", "encoding_params", "entries", "max_value",
               "payload_dtype", "format", "pdbtool_version", "kind", "board", "conversion", "build_seconds",
               "layers", "description", "group_size", "groups", "entries_per_group", "rows", "max_excess",
               "unreachable", "columns", "depth", "states", "duplicates"]
header_key = st.sampled_from(HEADER_KEYS)


@fuzz(600)
@given(st.data(), st.dictionaries(header_key, json_value | st.just("<absent>"), min_size=1, max_size=3),
       st.sampled_from(["|u1", "<u2", "<u8", "<i4", "<f8"]), st.integers(-3, 3))
def test_headers_that_lie_with_a_valid_checksum(sound_files, data, changes, dtype, size_change):
    """Past the checksum: a well-formed file whose header says anything at all."""
    source, original = data.draw(st.sampled_from(sound_files))
    header, offset = fileformat.read_header(source)
    header.pop("_file_bytes")
    for key, value in changes.items():
        if value == "<absent>":
            header.pop(key, None)
        else:
            header[key] = value
    payload = original[offset:-8]
    payload = payload[: max(0, len(payload) + size_change)] if size_change < 0 else payload + b"\x07" * size_change
    header["payload_bytes"] = len(payload)
    header.setdefault("payload_dtype", dtype)
    raw = fileformat.encode_prefix(header) + payload
    path = write("lying.pdb", raw + xxhash.xxh64(raw).intdigest().to_bytes(8, "little"))
    assert_clean(invoke("inspect", path))
    assert_clean(invoke("verify", path, "--samples", "50"))


def test_header_text_with_a_line_break_stays_on_one_line(sound_files):
    """A header's text is shown escaped: a key or value with a line break cannot split a one-line error."""
    for source, original in sound_files:
        header, offset = fileformat.read_header(source)
        header.pop("_file_bytes")
        header["encoding_params"] = {"a\nb": "c\nd"}
        raw = fileformat.encode_prefix(header) + original[offset:-8]
        path = write("line-break.pdb", raw + xxhash.xxh64(raw).intdigest().to_bytes(8, "little"))
        for result in (invoke("inspect", path), invoke("verify", path, "--samples", "50")):
            assert_clean(result)
            assert "a\nb" not in result.output


# --- instance files -------------------------------------------------------------------------------------


token = st.one_of(st.integers(-2, 12).map(str), st.sampled_from(["#", "# optimal 5", "optimal=3", "x", "", "0x3",
                                                                 "1e3", "\t", "--", "٣"]))
line = st.one_of(st.lists(token, max_size=12).map(" ".join),
                 st.permutations(range(9)).map(lambda p: " ".join(map(str, p))),
                 st.permutations(range(6)).map(lambda p: "id7 " + " ".join(map(str, p))))


def check_solve(text: str, board: str):
    path = write("instances.txt", text.encode("utf-8", "surrogatepass"))
    result = invoke("solve", path, "--board", board, "--heuristic", "manhattan", "--time-limit", "5")
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output and result.exit_code in (0, 1, 3), result.output
    said = [e for e in result.stderr.splitlines() if e.startswith("pdbtool: ")]
    errors = [e for e in said if not e.endswith("instances.txt: no instances")]  # a note, not an error
    # a failed run says why: one line per failing instance, naming its line, or one line for the file
    assert (result.exit_code != 0) == bool(errors), result.output
    for error in errors:
        assert re.match(r"pdbtool: .*instances\.txt(:\d+)?: ", error), error


@fuzz(300)
@given(st.lists(line, max_size=6).map("\n".join), st.sampled_from(["3x3", "2x3", "3x2"]))
def test_random_instance_files(text, board):
    check_solve(text, board)


@fuzz(200)
@given(st.lists(st.tuples(st.integers(0, 200), st.integers(0, 255)), min_size=1, max_size=4))
def test_mutated_instance_files(edits):
    data = bytearray(b"# a few 8-puzzles\n1 2 0 3 4 5 6 7 8  # optimal 2\nB 1 4 2 3 0 5 6 7 8\n"
                     b"8 6 7 2 5 4 3 0 1 # optimal 31\n")
    for at, value in edits:
        data[at % len(data)] = value
    check_solve(data.decode("latin-1"), "3x3")


def test_unreadable_instance_input_is_one_line():
    result = invoke("solve", WORK / "no-such-file.txt", "--board", "3x3")
    assert result.exit_code in (1, 2) and "Traceback" not in result.output
    assert result.stderr.strip().count("\n") <= 2  # click's usage hint may precede its one-line error


# --- structure-aware fuzzing: every encoding and file kind, mutated where a kernel looks, re-signed ---------
# Each mutated file has a valid checksum.  Whatever it holds, loading it either refuses it with a
# TableFileError, or every look-up built on it stays inside its arrays (a fault there would kill this
# process with a signal) and the commands answer with one line.

SCALE = int(os.environ.get("PDBTOOL_FUZZ_SCALE", "1"))   # the slow profile multiplies the examples


@pytest.fixture(scope="module")
def every_kind():
    """(kind, path, header, payload bytes) of a small file of every kind the cache holds."""
    from pdbtool.tables import pairs_triples

    cache = TableCache(WORK / "kinds")
    pattern = TilePattern(Board(3, 3), (1, 2, 3))
    files = []
    for blank, encoding, params in (("minimized", "byte", None), ("minimized", "nibble", None),
                                    ("minimized", "sparse", None), ("minimized", "min-nibble", {"group": 2}),
                                    ("ignored", "mod3", None), ("ignored", "parity", None),
                                    ("ignored", "sparse", None)):
        files.append((encoding, cache.get(pattern, blank, encoding=encoding, params=params).path))
    board = Board(3, 3)
    pairs_triples.load_dynamic(board, "pairs+triples-region", cache=cache)
    for k in (2, 3):
        files.append(("dynamic", cache.dir / pairs_triples.file_name(board, k)))
        files.append(("dynamic-regions", cache.dir / pairs_triples.file_name(board, k, regions=True)))
    out = []
    for kind, path in files:
        header, offset = fileformat.read_header(path)
        header.pop("_file_bytes")
        out.append((kind, path, header, path.read_bytes()[offset:-8]))
    return out


def resigned(name: str, header: dict, payload: bytes) -> Path:
    header = dict(header, payload_bytes=len(payload))
    raw = fileformat.encode_prefix(header) + payload
    return write(name, raw + xxhash.xxh64(raw).intdigest().to_bytes(8, "little"))


INTERESTING = st.one_of(st.integers(0, 2 ** 64 - 1), st.sampled_from([0, 1, 2, 3, 4, 5, 7, 8, 63, 64, 65, 255,
                                                                       504, 2 ** 31, 2 ** 32, 2 ** 63, 2 ** 64 - 1]))


def mutate_structure(kind: str, header: dict, payload: bytes, draw) -> bytes:
    """Change the payload where the kind's look-ups read: words, offsets, rows, residues."""
    data = bytearray(payload)
    if kind in ("sparse", "dynamic-regions") and len(data) >= 8:
        words = np.frombuffer(bytes(data), dtype=np.uint64).copy()
        for _ in range(draw(st.integers(1, 4))):
            if kind == "sparse":
                nwords = (int(words[0]) + 63) // 64 if int(words[0]) < 2 ** 40 else 1
                region = draw(st.sampled_from(["preamble", "bitmap", "directory", "values"]))
                low, high = {"preamble": (0, 4), "bitmap": (4, 4 + nwords),
                             "directory": (4 + nwords, int(min(words[2], len(words))) if words[2] < 2 ** 40 else 5),
                             "values": (int(min(words[2], len(words) - 1)) if words[2] < 2 ** 40 else 0,
                                        len(words))}[region]
            else:
                low, high = 0, len(words)
            high = min(high, len(words))  # an earlier mutation of the preamble may point past the payload
            if high <= low:
                low, high = 0, len(words)
            at = draw(st.integers(low, high - 1))
            value = draw(INTERESTING)
            if kind == "dynamic-regions" and draw(st.booleans()):
                value = int(words[at]) + draw(st.integers(-3, 3))
            words[at] = np.uint64(value % 2 ** 64)
        return words.tobytes()
    for _ in range(draw(st.integers(1, 6))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        data[at] = draw(st.integers(0, 255))
    return bytes(data)


@functools.cache
def excess_sets():
    from pdbtool.tables import pairs_triples

    board = Board(3, 3)
    return pairs_triples.build_set(board, 2, jobs=1)[0], pairs_triples.build_set(board, 3, jobs=1)[0]


def exercise(kind: str, path: Path) -> None:
    """Load ``path`` as the search would; when it is accepted, run the look-ups over it."""
    from pdbtool.tables import pairs_triples
    from pdbtool.tables.integrity import load_checked

    board = Board(3, 3)
    rng = np.random.default_rng(0)
    try:
        if kind == "dynamic":
            header, _ = fileformat.read_header(path)
            pairs_triples.load_set(path, board, header.get("group_size") if header.get("group_size") in (2, 3) else 2)
            return
        if kind == "dynamic-regions":
            header, _ = fileformat.read_header(path)
            k = header.get("group_size") if header.get("group_size") in (2, 3) else 2
            rows = pairs_triples.load_regions(path, board, k)
            pairs, triples = excess_sets()
            empty = np.zeros((0, 4), dtype=np.int64)
            pairs_triples.make_lookups(board, "pairs+triples-region", pairs, triples,
                                       rows if k == 2 else empty, rows if k == 3 else empty)
            return
        table = load_checked(path, record=False)
    except fileformat.TableFileError as exc:
        assert "\n" not in str(exc)
        return
    for rank in rng.integers(0, table.entries, 50):
        value = table.lookup(table.pattern.unrank(int(rank)))
        assert 0 <= value <= 255
    table.decoded()


@fuzz(150 * SCALE)
@given(st.data())
def test_structure_aware_mutations_of_every_kind(every_kind, data):
    kind, source, header, payload = data.draw(st.sampled_from(every_kind))
    encoding_kind = header.get("encoding") if kind not in ("dynamic", "dynamic-regions") else kind
    mutated = mutate_structure(encoding_kind, header, payload, data.draw)
    path = resigned(source.name, header, mutated)
    exercise(kind, path)
    assert_clean(invoke("inspect", path))
    assert_clean(invoke("verify", path, "--samples", "30"), allowed=(0,) if mutated == payload else (0, 1))


@fuzz(150 * SCALE)
@given(st.data(), st.dictionaries(header_key, json_value | st.just("<absent>"), min_size=1, max_size=3))
def test_every_header_key_of_every_kind(every_kind, data, changes):
    kind, source, header, payload = data.draw(st.sampled_from(every_kind))
    header = dict(header)
    for key, value in changes.items():
        if value == "<absent>":
            header.pop(key, None)
        else:
            header[key] = value
    try:
        path = resigned(source.name, header, payload)
    except (ValueError, TypeError):   # a value json.dumps cannot write
        return
    exercise(kind, path)
    assert_clean(invoke("inspect", path))
    assert_clean(invoke("verify", path, "--samples", "30"))


@pytest.mark.slow
@fuzz(600 * SCALE)
@given(st.data())
def test_structure_aware_mutations_long_profile(every_kind, data):
    """The structure-aware mutations with four times the examples (``-m slow``; ``PDBTOOL_FUZZ_SCALE=N``
    multiplies the examples of every profile, for a longer run than ``make test``'s)."""
    test_structure_aware_mutations_of_every_kind.hypothesis.inner_test(every_kind, data)
