"""``pdbtool verify``: every check passes on sound tables and names the first failure on damaged ones."""

import json
from collections import deque

import numpy as np
import pytest
from click.testing import CliRunner

from pdbtool.tables import fileformat
from pdbtool.tables.build import build_table
from pdbtool.puzzle.board import Board
from pdbtool.tables.cache import TableCache
from pdbtool.cli.main import cli
from pdbtool.tables.ranking import TilePattern
from pdbtool.tables.table import PatternTable
from pdbtool.tables.verify import Expected, consistency_scan, verify_file
from pdbtool.tables.ranking import column_masks

SMALL = [("3x3", (1, 2, 3)), ("3x3", (1, 2, 3, 5, 7)), ("2x4", (1, 2, 3)), ("3x4", (1, 2, 3, 4))]


@pytest.fixture(scope="module")
def built():
    """Byte tables of small patterns, both blank rules: {(dims, tiles, blank): (pattern, values)}."""
    out = {}
    for dims, tiles in SMALL:
        pattern = TilePattern(Board.parse(dims), tiles)
        for blank in ("minimized", "ignored"):
            out[dims, tiles, blank] = pattern, build_table(pattern, blank, threads=2).table
    return out


def save(path, pattern, blank, values, **header):
    PatternTable(pattern, blank, np.asarray(values, dtype=np.uint8)).save(path, header or None)
    return path


def status(report):
    return {c.name: c.status for c in report.checks}


@pytest.mark.parametrize("dims,tiles", SMALL)
@pytest.mark.parametrize("blank", ["minimized", "ignored"])
def test_sound_tables_pass_every_check(tmp_path, built, dims, tiles, blank):
    pattern, values = built[dims, tiles, blank]
    path = save(tmp_path / "t.pdb", pattern, blank, values)
    report = verify_file(path, Expected(pattern, blank), full=True, rebuild=True, threads=2)
    assert report.ok, report.summary()
    assert all(s == "pass" for s in status(report).values()), report.checks
    sampled = verify_file(path, samples=50, seed=1)
    assert sampled.ok and sampled.seed == 1 and "51 placements" in sampled.checks[-2].detail


def _single_region(board, free):
    if not free:
        return True
    start = next(iter(free))
    seen, todo = {start}, deque([start])
    nb = board.neighbours()
    while todo:
        c = todo.popleft()
        for q in nb[c]:
            if q >= 0 and int(q) in free and int(q) not in seen:
                seen.add(int(q))
                todo.append(int(q))
    return seen == free


def python_violations(pattern, values, blank):
    """The ranks breaking the relations of check_placement, computed plainly (the kernel's oracle)."""
    board, inf = pattern.board, 10 ** 6
    nb = board.neighbours()
    h = [inf if v == 255 else int(v) for v in values]
    bad = set()
    for r in range(pattern.entries):
        cells = list(pattern.unrank(r))
        free = set(range(board.n)) - set(cells)
        m = pattern.manhattan(cells)
        if h[r] < inf and (h[r] < m or (h[r] - m) % 2 or (h[r] == 0 and r != pattern.goal_rank())):
            bad.add(r)
            continue
        one = blank == "ignored" or _single_region(board, free)
        least = inf
        for i, c in enumerate(cells):
            for q in nb[c]:
                if q < 0 or int(q) not in free:
                    continue
                child = cells.copy()
                child[i] = int(q)
                s = pattern.rank(child)
                w = h[s]
                child_one = blank == "ignored" or _single_region(board, free - {int(q)} | {c})
                if (one and h[r] < inf and w > h[r] + 1) or (child_one and w < inf and h[r] > w + 1):
                    bad.add(r)
                least = min(least, w)
        if 0 < h[r] < inf and least > h[r] - 1:
            bad.add(r)
        if not one and h[r] < inf and not any(_region_fits(pattern, h, cells, region, h[r])
                                              for region in _regions(board, free)):
            bad.add(r)
    return bad


def _regions(board, free):
    free, out = set(free), []
    while free:
        start = min(free)
        region = {start}
        todo = deque([start])
        while todo:
            c = todo.popleft()
            for q in board.neighbours()[c]:
                if q >= 0 and int(q) in free and int(q) not in region:
                    region.add(int(q))
                    todo.append(int(q))
        out.append(region)
        free -= region
    return out


def _region_fits(pattern, h, cells, region, v):
    """Could ``region`` be the minimizing one: moves into it lead to <= v + 1, one (if v > 0) to <= v - 1."""
    values = []
    for i, c in enumerate(cells):
        for q in pattern.board.neighbours()[c]:
            if q >= 0 and int(q) in region:
                child = list(cells)
                child[i] = int(q)
                values.append(h[pattern.rank(child)])
    return all(w <= v + 1 for w in values) and (v == 0 or any(w <= v - 1 for w in values))


def kernel_violations(pattern, values, blank):
    board = pattern.board
    nf, nl = column_masks(board)
    bad, first, code, other = consistency_scan(np.asarray(values, dtype=np.uint8), np.empty(0, dtype=np.int64),
                                               pattern.entries, board.n, pattern.k, board.neighbours(),
                                               pattern.md_rows(), blank == "minimized", pattern.goal_rank(),
                                               np.uint64(nf), np.uint64(nl), board.width, 64, True, 0,
                                               (pattern.entries + 63) // 64)
    return int(bad), int(first)


@pytest.mark.parametrize("blank", ["minimized", "ignored"])
def test_consistency_kernel_agrees_with_a_plain_oracle_on_mutated_tables(built, blank):
    pattern, values = built["3x3", (1, 2, 3), blank]
    rng = np.random.default_rng(5)
    for trial in range(12):
        mutated = values.astype(np.int64)
        for r in rng.integers(0, pattern.entries, size=trial % 4):
            mutated[r] = max(0, min(254, mutated[r] + int(rng.choice([-4, -2, -1, 1, 2, 3, 6]))))
        expected = python_violations(pattern, mutated, blank)
        count, first = kernel_violations(pattern, mutated, blank)
        assert count == len(expected)
        assert first == (min(expected) if expected else -1)
    assert kernel_violations(pattern, values, blank) == (0, -1)


def test_minimized_tables_break_the_plain_neighbour_relation(built):
    """Why the check is refined for blank-minimized tables: one tile move can change them by more than one."""
    for blank, expect_jumps in (("minimized", True), ("ignored", False)):
        pattern, values = built["3x3", (1, 2, 3, 5, 7), blank]
        nb = pattern.board.neighbours()
        jumps = 0
        for r in range(0, pattern.entries, 7):
            cells = list(pattern.unrank(r))
            for i, c in enumerate(cells):
                for q in nb[c]:
                    if q >= 0 and int(q) not in cells:
                        child = cells.copy()
                        child[i] = int(q)
                        jumps += abs(int(values[r]) - int(values[pattern.rank(child)])) > 1
        assert (jumps > 0) == expect_jumps
        assert kernel_violations(pattern, values, blank) == (0, -1)


def first_failure(path, **kw):
    report = verify_file(path, **kw)
    assert not report.ok
    return report.first_failure


@pytest.mark.parametrize("blank", ["minimized", "ignored"])
def test_value_faults_are_named(tmp_path, built, blank):
    pattern, values = built["3x4", (1, 2, 3, 4), blank]
    md = np.array([pattern.manhattan(pattern.unrank(r)) for r in range(pattern.entries)])
    path = tmp_path / "t.pdb"
    goal = pattern.goal_rank()

    wrong = values.copy()
    r = int(np.flatnonzero((values > md) & (values < 200))[0])
    wrong[r] += 1
    failure = first_failure(save(path, pattern, blank, wrong), full=True)
    assert failure.name == "consistency" and f"rank {r:,}" in failure.detail and "odd" in failure.detail

    wrong = values.copy()
    r = int(np.flatnonzero(md >= 2)[0])
    wrong[r] = md[r] - 2
    failure = first_failure(save(path, pattern, blank, wrong), full=True)
    assert failure.name == "consistency" and "below its Manhattan" in failure.detail

    wrong = values.copy()
    wrong[goal] = 2
    assert first_failure(save(path, pattern, blank, wrong)).name == "goal"

    save(path, pattern, blank, values, max_value=int(values[values != 255].max()) - 1)
    failure = first_failure(path)
    assert failure.name == "max value" and "above the header's max_value" in failure.detail
    save(path, pattern, blank, values, max_value=200)
    assert "never reached" in first_failure(path).detail

    # two more on one placement: parity and Manhattan still hold, the neighbour relations do not
    wrong = values.astype(np.int64)
    r = int(np.flatnonzero(values == np.median(values[values != 255]))[0])
    wrong[r] += 2
    failure = first_failure(save(path, pattern, blank, wrong), full=True)
    assert failure.name == "consistency" and "neighbour" in failure.detail
    # the sampled check includes the goal, and finds a fault everywhere when it is everywhere
    failure = first_failure(save(path, pattern, blank, np.where(values == 255, 255, values + 2)), samples=5)
    assert failure.name == "goal"


def test_a_consistent_but_wrong_table_needs_the_rebuild(tmp_path, built):
    """The blank-ignored values pass every relation of a minimized table: only --rebuild tells them apart."""
    pattern, ignored = built["3x4", (1, 2, 3, 4), "ignored"]
    path = save(tmp_path / "t.pdb", pattern, "minimized", ignored)
    assert verify_file(path, full=True).ok
    failure = first_failure(path, full=True, rebuild=True)
    assert failure.name == "rebuild" and "differ from a fresh build" in failure.detail


def header_and_payload(path):
    header, offset = fileformat.read_header(path)
    data = path.read_bytes()
    header.pop("_file_bytes")
    return header, np.frombuffer(data[offset:-8], dtype=np.uint8)


def test_file_faults_are_named(tmp_path, built):
    pattern, values = built["3x3", (1, 2, 3), "minimized"]
    good = save(tmp_path / "good.pdb", pattern, "minimized", values)
    data = good.read_bytes()
    bad = tmp_path / "bad.pdb"
    header, payload = header_and_payload(good)
    at = fileformat.read_header(good)[1] + 10  # in the payload
    cases = [
        (b"", "format", "empty"),
        (data[:5], "format", "magic"),
        (b"x" + data[1:], "format", "magic"),
        (data[:8] + b"\x02" + data[9:], "format", "version 2.0 is not supported"),
        (data[:-1], "sizes", "truncated"),
        (data + b"\0", "sizes", "unexpected bytes"),
        (data[:-3] + bytes([data[-3] ^ 4]) + data[-2:], "checksum", "does not match"),
        (data[:at] + bytes([data[at] ^ 1]) + data[at + 1:], "checksum", "does not match"),
        (data[:90] + bytes([data[90] ^ 32]) + data[91:], "sizes", "damaged header"),
    ]
    for content, check, words in cases:
        bad.write_bytes(content)
        failure = first_failure(bad)
        assert failure.name == check and words in failure.detail, (check, failure)
    # a header that lies about its entries, with a valid checksum
    fileformat.save(bad, dict(header, entries=999), payload)
    failure = first_failure(bad)
    assert failure.name == "sizes" and "999 entries" in failure.detail
    # another table than the one asked for
    other = TilePattern(Board.parse("3x3", "blank-last"), (1, 2, 3))
    failure = first_failure(good, expected=Expected(other, "minimized"))
    assert failure.name == "identity" and "another goal" in failure.detail
    failure = first_failure(good, expected=Expected(pattern, "ignored"))
    assert failure.name == "identity" and "another blank" in failure.detail
    # in the cache, a file must be the table its name says
    cache = TableCache(tmp_path / "cache")
    misnamed = cache.path_for(TilePattern(pattern.board, (1, 2, 4)), "minimized")
    misnamed.parent.mkdir()
    misnamed.write_bytes(data)
    failure = first_failure(misnamed, cache_name=True)
    assert failure.name == "identity" and "4x4" not in failure.detail and "t1.2.3" in failure.detail


def test_compact_encodings_are_decoded_or_skipped_with_a_note(tmp_path):
    cache = TableCache(tmp_path)
    pattern = TilePattern(Board(3, 3), (1, 2, 3, 4))
    for encoding, params in (("nibble", None), ("mod3", None), ("min-nibble", {"group": 4})):
        table = cache.get(pattern, "ignored", encoding=encoding, params=params)
        report = verify_file(table.path, full=True, rebuild=True)
        assert report.ok, report.summary()
        assert ("neighbour relations not checked" in report.checks[-2].detail) == (encoding == "min-nibble")


def run(*args):
    result = CliRunner().invoke(cli, ["verify", *map(str, args)])
    assert "Traceback" not in result.output, result.output
    return result


def test_cli_exit_status_and_output(tmp_path, built):
    pattern, values = built["3x3", (1, 2, 3), "ignored"]
    good = save(tmp_path / "good.pdb", pattern, "ignored", values)
    bad = tmp_path / "bad.pdb"
    bad.write_bytes(good.read_bytes()[:-10])

    ok = run(good, "--samples", "100")
    assert ok.exit_code == 0 and ok.stdout.startswith("PASS ") and not ok.stderr
    failed = run(good, bad, "--full")
    assert failed.exit_code == 3  # a FAIL: the file disagrees
    assert failed.stdout.splitlines()[0].startswith("PASS") and failed.stdout.splitlines()[1].startswith("FAIL")
    assert failed.stderr.count("\n") == 1 and "1 of 2 tables failed" in failed.stderr and "bad.pdb" in failed.stderr
    assert "sizes: truncated" in failed.stderr

    records = [json.loads(line) for line in run(good, bad, "--json").stdout.splitlines()]
    assert [r["ok"] for r in records] == [True, False]
    assert records[1]["first_failure"]["check"] == "sizes"
    assert [c["check"] for c in records[0]["checks"]] == ["format", "sizes", "checksum", "identity", "goal",
                                                         "max value", "consistency", "rebuild"]

    missing = run(tmp_path / "nope.pdb")
    assert missing.exit_code == 1 and "cannot read" in missing.stderr
    for args in ([], [good, "--cache"], ["--partition", "15-7-8", "--cache"], [good, "--board", "3x3"],
                 [good, "--samples", "-1"]):
        usage = run(*args)
        assert usage.exit_code == 2, (args, usage.output)


def test_cli_partition_and_cache(tmp_path):
    cache_dir = tmp_path / "cache"
    part = tmp_path / "halves.txt"
    part.write_text("board 3x3\n1 2 3 4\n5 6 7 8\n")
    absent = run("--partition", part, "--cache-dir", cache_dir)
    assert absent.exit_code == 1 and "not in the cache: run 'pdbtool build" in absent.stderr
    built = CliRunner().invoke(cli, ["build", "--partition", str(part), "--cache-dir", str(cache_dir)])
    assert built.exit_code == 0, built.output
    result = run("--partition", part, "--cache-dir", cache_dir, "--full", "--rebuild")
    assert result.exit_code == 0, result.output
    assert result.stdout.count("PASS") == 2 and "identity" in result.stdout and "rebuild" in result.stdout
    # a table copied over another's name in the cache fails --cache
    first, second = sorted(cache_dir.glob("*.pdb"))
    second.write_bytes(first.read_bytes())
    result = run("--cache", "--cache-dir", cache_dir)
    assert result.exit_code == 3 and "identity" in result.stderr
    assert run("--cache", "--cache-dir", tmp_path / "empty").exit_code == 0


# --- the dynamic sets' files (*.ddb): verify and inspect know them ----------------------------------------

def _resign(path, payload: bytes, **changes):
    import xxhash

    header, _ = fileformat.read_header(path)
    header.pop("_file_bytes")
    header.update(changes, payload_bytes=len(payload))
    raw = fileformat.encode_prefix(header) + payload
    path.write_bytes(raw + xxhash.xxh64(raw).intdigest().to_bytes(8, "little"))


@pytest.fixture(scope="module")
def dynamic_cache(tmp_path_factory):
    from pdbtool.tables.pairs_triples import load_dynamic

    root = tmp_path_factory.mktemp("ddb")
    load_dynamic(Board(4, 4), "pairs-region", cache=TableCache(root))
    load_dynamic(Board(3, 3), "pairs+triples-region", cache=TableCache(root))
    return root


def test_sound_dynamic_files_pass_verify_and_inspect(dynamic_cache):
    """The false alarm of a sound 4x4 pairs file ("the header says 25200 entries, but 15 tiles...") is gone,
    and verify --cache lists and checks every .ddb file as well as the .pdb ones."""
    pairs = dynamic_cache / "4x4-korf-dynamic-pairs-minimized-excess.ddb"
    result = CliRunner().invoke(cli, ["verify", str(pairs), "--full"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("PASS") and "consistency" in result.stdout
    from pdbtool.tables.checks import verify_any

    report = verify_any(pairs, full=True)
    assert report.ok and {c.name: c.status for c in report.checks}["consistency"] == "pass"
    assert "every group" in report.checks[-2].detail
    files = sorted(p.name for p in dynamic_cache.glob("*.ddb"))
    assert len(files) == 6
    result = CliRunner().invoke(cli, ["verify", "--cache", "--cache-dir", str(dynamic_cache), "--samples", "500"])
    assert result.exit_code == 0, result.output
    assert sorted(line.split()[1].rsplit("/", 1)[1] for line in result.stdout.splitlines()) == files
    assert result.stdout.count("PASS") == 6
    for name in files:
        shown = CliRunner().invoke(cli, ["inspect", str(dynamic_cache / name)])
        assert shown.exit_code == 0 and "checksum ok" in shown.stdout, shown.output
        as_json = json.loads(CliRunner().invoke(cli, ["inspect", "--json", str(dynamic_cache / name)]).stdout)
        assert as_json["kind"].startswith("dynamic") and as_json["checksum_ok"]


def test_a_changed_pair_excess_fails_the_recomputed_groups(tmp_path, dynamic_cache):
    import shutil

    path = tmp_path / "4x4-korf-dynamic-pairs-minimized-excess.ddb"
    shutil.copy(dynamic_cache / path.name, path)
    _, offset = fileformat.read_header(path)
    payload = bytearray(path.read_bytes()[offset:-8])
    at = 240 * 7 + 100                      # group 7, a placement that is not its goal
    payload[at] = 2 if payload[at] == 0 else 0
    _resign(path, bytes(payload))
    report = verify_file_any(path, full=True)
    assert not report.ok and report.first_failure.name == "consistency", report.summary()
    assert "differ from a fresh search" in report.first_failure.detail
    result = CliRunner().invoke(cli, ["verify", str(path), "--full"])
    assert result.exit_code == 3 and result.stderr.count("\n") == 1 and "consistency" in result.stderr


def verify_file_any(path, **options):
    from pdbtool.tables.checks import verify_any

    return verify_any(path, **options)


@pytest.mark.parametrize("change,check", [("goal", "goal"), ("max", "max value"), ("name", "identity"),
                                          ("rows", "consistency")])
def test_dynamic_region_files_fail_the_right_check(tmp_path, dynamic_cache, change, check):
    import shutil

    source = dynamic_cache / "3x3-korf-dynamic-pairs-regions-excess.ddb"
    path = tmp_path / source.name
    shutil.copy(source, path)
    header, offset = fileformat.read_header(path)
    rows = np.frombuffer(path.read_bytes()[offset:-8], dtype=np.int64).reshape(-1, 4).copy()
    if change == "goal":
        pattern = TilePattern(Board(3, 3), (1, 2))
        free_region = 0b111111111 & ~(1 << 1) & ~(1 << 2)
        at = int(np.searchsorted(rows[:, 0] * 10 ** 6 + rows[:, 1], pattern.goal_rank(), side="right"))
        rows = np.insert(rows, at, [0, pattern.goal_rank(), free_region, 2], axis=0)
    elif change == "max":
        _resign(path, rows.tobytes(), max_excess=header["max_excess"] + 2)
    elif change == "name":
        path = path.rename(tmp_path / "3x3-korf-dynamic-triples-regions-excess.ddb")
    else:
        rows = rows[1:]                       # one region of a placement lost
    if change in ("goal", "rows"):
        _resign(path, rows.tobytes(), rows=len(rows), entries=len(rows))
    report = verify_file_any(path, full=True, cache_name=True)
    assert not report.ok and report.first_failure.name == check, report.summary()
