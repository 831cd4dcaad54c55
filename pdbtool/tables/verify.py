"""Verifying a table file: its structure, checksum and identity, and the consistency of its values.

The checks run in order and stop at the first failure (later checks need what earlier ones establish):

* ``format``: the magic string and a format major version this pdbtool reads;
* ``sizes``: the header parses, its fields agree with one another (entries of the pattern, payload bytes
  and type) and with the file's length;
* ``checksum``: the xxhash64 of the whole file;
* ``identity``: the table is the one asked for (board, goal, tiles, blank rule, encoding), or, for a file
  in the cache, the one its name says;
* ``goal``: the goal placement's value is 0;
* ``max value``: the largest reached value is the header's ``max_value``;
* ``consistency``: over N random placements (or, with ``full``, every placement, in parallel) the
  guaranteed relations of a pattern database hold (see ``check_placement``);
* ``rebuild``: the table built afresh equals the file's, byte for byte.

Value checks need the distance of each placement: they run on byte tables, and on other encodings only
when ``pdbtool.tables.encodings`` offers a decoder; otherwise they are reported as skipped.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable

import numba
import numpy as np
from numba import njit, prange

from .._native import numba_cache  # noqa: F401  (the package-wide cache stamp)
from .._native.arrays import read_only
from . import fileformat
from ..errors import PdbtoolError
from ..processes import run_in_slices
from ..registry import LOSSY_ENCODINGS
from .ranking import TilePattern, cells_mask, column_masks, flood_region, rank_cells, unrank_cells
from .table import UNREACHABLE, PatternTable

PASS, FAIL, SKIP = "pass", "fail", "skip"
CHECKS = ("format", "sizes", "checksum", "identity", "goal", "max value", "consistency", "rebuild")
DEFAULT_SAMPLES = 10_000

# failure codes of check_placement
(OK, BELOW_MANHATTAN, WRONG_PARITY, ZERO_OFF_GOAL, NEIGHBOUR_ABOVE, NEIGHBOUR_BELOW, NO_DESCENT,
 NO_REGION) = range(8)


# --- kernels ------------------------------------------------------------------------------------------

@njit(cache=True, inline="always")
def _one_region(free, not_first_col, not_last_col, width):
    """Whether the free cells form a single connected region (a blank anywhere reaches everywhere)."""
    if free == 0:
        return True
    lowest = free & (~free + numba.uint64(1))
    return flood_region(lowest, free, not_first_col, not_last_col, width) == free


@njit(cache=True)
def check_placement(table, r, n, k, nb, md_rows, minimized, goal_rank, not_first_col, not_last_col, width,
                    cells, neighbours):
    """Check the relations a pattern database guarantees at placement ``r``; return (code, other rank).

    With h the stored value (255 = unreachable, taken as infinite) and m the Manhattan distance:
    h >= m with h - m even (each tile move changes m by one); h = 0 only at the goal; and between
    placements p, p' one tile move apart (a pattern tile slides into an adjacent cell free of pattern
    tiles):

    * blank ignored: |h(p) - h(p')| <= 1, for every such pair (the abstract graph is undirected).
    * blank minimized: h(p) = min over p's blank regions R of d(p, R), and the move p -> p' is open only
      from the region holding the target cell.  If p's free cells form ONE region, that region is the
      minimizing one and the move is open from it, so h(p') <= h(p) + 1.  Hence: h(p') <= h(p) + 1 when
      p has one region, h(p) <= h(p') + 1 when p' has one region.  (Between placements with several
      regions the values can differ by more: the plain |dh| <= 1 test would reject sound tables.)
    * both: a reachable p with h > 0 has a neighbour with h(p') <= h(p) - 1 (the first move of a
      shortest path).
    * blank minimized, p with several regions: its minimizing region R* satisfies both of the above for
      the moves into R*, so SOME region R must: every move into R leads to h <= h(p) + 1, and (if h(p) > 0)
      one leads to h <= h(p) - 1.
    """
    v = np.int64(table[r])
    reached = v != UNREACHABLE
    occupied = unrank_cells(r, n, k, cells)
    if reached:
        m = 0
        for i in range(k):
            m += md_rows[i, cells[i]]
        if v < m:
            return BELOW_MANHATTAN, -1
        if (v - m) & 1:
            return WRONG_PARITY, -1
        if v == 0 and r != goal_rank:
            return ZERO_OFF_GOAL, -1
    if not neighbours:  # a lossy table: its values only bound the distances from below
        return OK, -1
    full = cells_mask(n)
    free = full & ~occupied
    one_region = (not minimized) or _one_region(free, not_first_col, not_last_col, width)
    best = np.int64(1 << 30)
    best_rank = -1
    for i in range(k):
        c = cells[i]
        cbit = numba.uint64(1) << numba.uint64(c)
        for mv in range(4):
            q = nb[c, mv]
            if q < 0:
                continue
            qbit = numba.uint64(1) << numba.uint64(q)
            if occupied & qbit:
                continue
            cells[i] = q
            child = rank_cells(cells, n)
            cells[i] = c
            w = np.int64(table[child])
            w_reached = w != UNREACHABLE
            if one_region and reached and (not w_reached or w > v + 1):
                return NEIGHBOUR_ABOVE, child
            if w_reached and (not reached or v > w + 1):
                if (not minimized) or _one_region(free ^ cbit ^ qbit, not_first_col, not_last_col, width):
                    return NEIGHBOUR_BELOW, child
            if w_reached and w < best:
                best = w
                best_rank = child
    if reached and v > 0 and best > v - 1:
        return NO_DESCENT, best_rank
    if reached and not one_region and not _some_region_fits(table, v, cells, occupied, free, n, k, nb,
                                                            not_first_col, not_last_col, width):
        return NO_REGION, -1
    return OK, -1


@njit(cache=True)
def _some_region_fits(table, v, cells, occupied, free, n, k, nb, not_first_col, not_last_col, width):
    """Whether some blank region R of the placement could be its minimizing one: every move into R leads
    to a value <= v + 1, and (unless v = 0) some move into R to a value <= v - 1."""
    remaining = free
    while remaining:
        region = flood_region(remaining & (~remaining + numba.uint64(1)), free, not_first_col, not_last_col,
                              width)
        remaining &= ~region
        most = np.int64(-1)
        least = np.int64(1 << 30)
        for i in range(k):
            c = cells[i]
            for mv in range(4):
                q = nb[c, mv]
                if q < 0 or not (region >> numba.uint64(q)) & numba.uint64(1):
                    continue
                cells[i] = q
                w = np.int64(table[rank_cells(cells, n)])
                cells[i] = c
                if w == UNREACHABLE:
                    w = np.int64(1 << 30)
                most = max(most, w)
                least = min(least, w)
        if most <= v + 1 and (v == 0 or least <= v - 1):
            return True
    return False


@njit(parallel=True, cache=True)
def consistency_scan(table, ranks, count, n, k, nb, md_rows, minimized, goal_rank, not_first_col, not_last_col,
                     width, block, neighbours, first_block, end_block):
    """Run check_placement on ``ranks`` (or on every rank 0..count-1 when ``ranks`` is empty), in parallel,
    the items of blocks ``first_block..end_block-1`` of ``block`` items (a slice per call: a signal is seen
    between two).

    Returns (violations, index of the first failing item, its code, the neighbour it concerns).
    """
    sampled = ranks.shape[0] > 0
    nblocks = end_block - first_block
    bad = np.zeros(nblocks, dtype=np.int64)
    first = np.full(nblocks, -1, dtype=np.int64)
    codes = np.zeros(nblocks, dtype=np.int64)
    others = np.full(nblocks, -1, dtype=np.int64)
    for j in prange(nblocks):
        b = first_block + j
        cells = np.empty(k, dtype=np.int64)
        for i in range(b * block, min(count, (b + 1) * block)):
            r = ranks[i] if sampled else np.int64(i)
            code, other = check_placement(table, r, n, k, nb, md_rows, minimized, goal_rank, not_first_col,
                                          not_last_col, width, cells, neighbours)
            if code != OK:
                if first[j] < 0:
                    first[j] = i
                    codes[j] = code
                    others[j] = other
                bad[j] += 1
    for j in range(nblocks):
        if first[j] >= 0:
            return bad.sum(), first[j], codes[j], others[j]
    return 0, -1, 0, -1


# --- results --------------------------------------------------------------------------------------------

@dataclass
class Check:
    name: str
    status: str          # "pass", "fail" or "skip"
    detail: str = ""


@dataclass
class Report:
    """The outcome of verifying one table file."""

    file: str
    table: str = ""                      # what the header says the table is, once it can be read
    checks: list[Check] = field(default_factory=list)
    seed: int | None = None

    @property
    def ok(self) -> bool:
        return all(c.status != FAIL for c in self.checks)

    @property
    def first_failure(self) -> Check | None:
        return next((c for c in self.checks if c.status == FAIL), None)

    def add(self, name: str, status: str, detail: str = "") -> bool:
        self.checks.append(Check(name, status, detail))
        return status != FAIL

    def summary(self) -> str:
        """One line: PASS or FAIL, the file, the first failure (or what passed and what was skipped)."""
        failure = self.first_failure
        what = f" ({self.table})" if self.table else ""
        if failure:
            return f"FAIL {self.file}{what}: {failure.name}: {failure.detail}"
        passed = ", ".join(c.name for c in self.checks if c.status == PASS)
        skipped = [f"{c.name} ({c.detail})" for c in self.checks if c.status == SKIP]
        return f"PASS {self.file}{what}: {passed}" + (f"; skipped: {', '.join(skipped)}" if skipped else "")

    def as_dict(self) -> dict[str, Any]:
        failure = self.first_failure
        return {"file": self.file, "table": self.table, "ok": self.ok,
                "first_failure": {"check": failure.name, "detail": failure.detail} if failure else None,
                "checks": [{"check": c.name, "status": c.status, "detail": c.detail} for c in self.checks],
                "seed": self.seed}


@dataclass(frozen=True)
class Expected:
    """The table a file must be: a pattern, a blank rule and an encoding."""

    pattern: TilePattern
    blank: str
    encoding: str = "byte"
    params: dict | None = None


def missing_report(path: str | Path, detail: str) -> Report:
    """The report of a table that is not there at all."""
    report = Report(str(path))
    report.add("format", FAIL, detail)
    return _rest_not_run(report)


def _plain(value: Any) -> str:
    """Header text as it is when short and printable, else escaped (a line break must not split a report line)."""
    text = str(value)
    return text if text.isprintable() and len(text) <= 40 else fileformat.clip(value)


def describe_table(table: PatternTable) -> str:
    enc = _plain(table.encoding) + "".join(f" {_plain(k)}={_plain(v)}"
                                           for k, v in sorted(table.encoding_params.items()))
    return f"{{{table.pattern}}} on {table.board.dims} goal {table.board.goal_name}, {table.blank}, {enc}"


# --- the checks -----------------------------------------------------------------------------------------

def checked_file(path: str | Path, checks: Callable[[Path, Report], Report]) -> Report:
    """The report of the file ``path``: the check of its format, then, if it holds, ``checks(path, report)``
    (the other checks read the file)."""
    path = Path(path)
    report = Report(str(path))
    if not report.add(*_check_format(path)):
        return _rest_not_run(report)
    return checks(path, report)


def _checksum_holds(report: Report, path: Path) -> bool:
    """Add the checksum's line to ``report``: whether the file's xxhash64 is the one its header stores (the
    other checks read the payload, so they run only then)."""
    stored, actual = _checksums(path)
    if stored != actual:
        report.add("checksum", FAIL, f"the stored xxhash64 {stored:016x} does not match the file's {actual:016x} "
                                     f"(the file is damaged)")
        return False
    report.add("checksum", PASS, f"xxhash64 {actual:016x}")
    return True


def verify_file(path: str | Path, expected: Expected | None = None, cache_name: bool = False,
                samples: int = DEFAULT_SAMPLES, full: bool = False, rebuild: bool = False,
                threads: int | None = None, seed: int | None = None,
                progress: Callable[[int, int], None] | None = None) -> Report:
    """Verify one table file; ``cache_name`` also requires the file's name to be the cache's name for it."""
    return checked_file(path, lambda path, report: _verify_table(path, report, expected, cache_name, samples, full,
                                                                 rebuild, threads, seed, progress))


def _verify_table(path: Path, report: Report, expected, cache_name, samples, full, rebuild, threads, seed,
                  progress) -> Report:
    """:func:`verify_file` after the format's check."""
    try:
        table = PatternTable.from_file(fileformat.load(path, verify_checksum=False))
    except PdbtoolError as exc:
        report.add("sizes", FAIL, _strip_path(str(exc), path))
        return _rest_not_run(report)
    report.table = describe_table(table)
    header = table.header
    report.add("sizes", PASS, f"{table.entries:,} entries, payload {int(header['payload_bytes']):,} bytes "
                              f"of {header['payload_dtype']}, file {table.header['_file_bytes']:,} bytes")
    if not _checksum_holds(report, path):
        return _rest_not_run(report)
    if not report.add(*_check_identity(table, path, expected, cache_name)):
        return _rest_not_run(report)

    try:
        values, why_not = _distances(table, threads)
    except PdbtoolError as exc:  # a mod3 / parity payload whose residues contradict one another
        report.add("goal", FAIL, f"the {table.encoding} payload does not decode: {exc}")
        return _rest_not_run(report)
    if values is None:
        for name in CHECKS[CHECKS.index("goal"):]:
            report.add(name, SKIP, why_not)
        return report
    lossy = _lossy(table)
    report.seed = None if full else _seed(seed)
    steps = [lambda: _check_goal(table, values), lambda: _check_max(table, values, lossy),
             lambda: _check_consistency(table, values, samples, full, report.seed, threads, lossy)]
    for step in steps:
        if not report.add(*step()):
            return _rest_not_run(report)
    if rebuild:
        report.add(*_check_rebuild(table, values, threads, progress))
    else:
        report.add("rebuild", SKIP, "not asked")
    return report


def _rest_not_run(report: Report) -> Report:
    done = {c.name for c in report.checks}
    for name in CHECKS:
        if name not in done:
            report.add(name, SKIP, "not run after the failure")
    return report


def _strip_path(message: str, path: Path) -> str:
    prefix = f"{path}: "
    return message[len(prefix):] if message.startswith(prefix) else message


def _check_format(path: Path) -> tuple[str, str, str]:
    import os

    prefix_struct = struct.Struct("<8sHH")
    try:
        with os.fdopen(fileformat.open_regular(path), "rb") as f:   # a FIFO is refused, not waited on
            head = f.read(prefix_struct.size)
    except fileformat.TableFileError as exc:
        return "format", FAIL, _strip_path(str(exc), path)
    except OSError as exc:
        return "format", FAIL, f"cannot read: {exc.strerror or exc}"
    if not head:
        return "format", FAIL, "the file is empty"
    if len(head) < prefix_struct.size or head[:8] != fileformat.MAGIC:
        return "format", FAIL, "not a pdbtool table (bad magic string)"
    _, major, minor = prefix_struct.unpack(head)
    if major != fileformat.FORMAT_MAJOR:
        return "format", FAIL, (f"table format version {major}.{minor} is not supported "
                                f"(this pdbtool reads {fileformat.FORMAT_MAJOR}.x)")
    return "format", PASS, f"format {major}.{minor}"


def _checksums(path: Path) -> tuple[int, int]:
    import mmap

    import xxhash

    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        size = len(mapped)
        stored = struct.unpack_from("<Q", mapped, size - 8)[0]
        with memoryview(mapped) as view:
            actual = xxhash.xxh64(view[: size - 8]).intdigest()
    return stored, actual


def _check_identity(table: PatternTable, path: Path, expected: Expected | None,
                    cache_name: bool) -> tuple[str, str, str]:
    if expected is not None:
        try:
            table.check_identity(expected.pattern, expected.blank, expected.encoding, expected.params)
        except PdbtoolError as exc:
            return "identity", FAIL, _strip_path(str(exc), path)
        return "identity", PASS, "the table asked for"
    if cache_name:
        from .names import table_name

        want = table_name(table.pattern, table.blank, table.encoding, table.encoding_params)
        if path.name != want:
            return "identity", FAIL, f"the header describes {describe_table(table)}, whose cache name is {want}"
        return "identity", PASS, "matches its cache name"
    return "identity", SKIP, "no table asked for"


def _distances(table: PatternTable, threads: int | None) -> tuple[np.ndarray | None, str]:
    """The value of every placement (a uint8 array), or None and why the values cannot be checked."""
    if table.encoding == "byte":
        return np.asarray(table.values), ""
    try:
        from .encodings import decode
    except ImportError:
        return None, f"values not checked: this pdbtool has no decoder for the {table.encoding} encoding"
    return np.ascontiguousarray(decode(table.values, table.pattern, table.encoding, table.encoding_params,
                                       threads=threads), dtype=np.uint8), ""


def _lossy(table: PatternTable) -> str:
    """Why the decoded values may lie below the distances ('' when they are the distances themselves)."""
    if table.encoding in LOSSY_ENCODINGS:
        return f"{table.encoding} keeps the least value of each group"
    saturated = (table.header.get("conversion") or {}).get("saturated")
    if table.encoding in ("nibble", "sparse") and saturated:
        return f"{saturated} entries saturate at an excess of 15"
    return ""


def _check_goal(table: PatternTable, values: np.ndarray) -> tuple[str, str, str]:
    goal = table.pattern.goal_rank()
    if table.blank == "zero-aware":
        from .zero_aware import layout_of

        goal = layout_of(table.pattern).index(table.pattern.goal_cells(), table.board.goal[0])
    if values[goal] != 0:
        return "goal", FAIL, f"the goal placement (rank {goal:,}) has value {int(values[goal])}, not 0"
    return "goal", PASS, f"rank {goal:,} is 0"


def _check_max(table: PatternTable, values: np.ndarray, lossy: str = "") -> tuple[str, str, str]:
    claimed = table.header.get("max_value")
    if not isinstance(claimed, int) or isinstance(claimed, bool):
        return "max value", FAIL, f"the header's max_value is {claimed!r}, not a whole number"
    reached = values[values != UNREACHABLE]
    largest = int(reached.max()) if reached.size else 0
    if largest > claimed:
        rank = int(np.flatnonzero((values > claimed) & (values != UNREACHABLE))[0])
        return "max value", FAIL, (f"rank {rank:,} has value {int(values[rank])}, above the header's "
                                   f"max_value {claimed}")
    if largest < claimed and not lossy:  # a lossy encoding may lower the largest value
        return "max value", FAIL, f"the header's max_value {claimed} is never reached (the largest value is {largest})"
    return "max value", PASS, f"max {largest}"


_PROBLEMS = {
    BELOW_MANHATTAN: "is below its Manhattan distance {m}",
    WRONG_PARITY: "differs from its Manhattan distance {m} by an odd amount",
    ZERO_OFF_GOAL: "is 0 but it is not the goal placement",
    NEIGHBOUR_ABOVE: "but its neighbour {other} (one tile move away) has {w}: more than one above, "
                     "though this placement's free cells form one region",
    NEIGHBOUR_BELOW: "but its neighbour {other} (one tile move away, free cells in one region) has {w}: "
                     "this value is more than one above it",
    NO_DESCENT: "but no neighbour has a smaller value (the least is {w})",
    NO_REGION: "but none of its blank regions fits it: from each, some move leads more than one above, or "
               "none leads below",
}


def _show_value(v: int) -> str:
    return "unreachable" if v == UNREACHABLE else str(v)


def _check_consistency(table: PatternTable, values: np.ndarray, samples: int, full: bool, seed: int | None,
                       threads: int | None, lossy: str = "") -> tuple[str, str, str]:
    pattern = table.pattern
    board = pattern.board
    if table.blank == "zero-aware":
        from .zero_aware import check_values

        ok, message = check_values(pattern, values, samples, full, seed, threads)
        return "consistency", PASS if ok else FAIL, message
    ranks, count, what = pattern.sample_ranks(samples, full, seed)
    if count == 0:
        return "consistency", SKIP, "no placements asked for (--samples 0)"
    nf, nl = column_masks(board)
    threads = max(1, min(threads or numba.config.NUMBA_NUM_THREADS, numba.config.NUMBA_NUM_THREADS))
    block = max(64, min(1 << 14, count // (threads * 64) or 64))
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    found = [0, -1, 0, -1]  # violations, and the first failing item's index, code and neighbour
    args = (read_only(values), ranks, count, board.n, pattern.k, board.neighbours(), pattern.md_rows(),
            table.blank == "minimized", pattern.goal_rank(), np.uint64(nf), np.uint64(nl), board.width, block,
            not lossy)

    def scan(a: int, b: int) -> None:
        bad, index, code, other = consistency_scan(*args, a, b)
        if found[1] < 0 and index >= 0:
            found[1:] = [int(index), int(code), int(other)]
        found[0] += int(bad)

    try:
        run_in_slices((count + block - 1) // block, scan, 0, None, [1])
        bad, index, code, other = found
    finally:
        numba.set_num_threads(previous)
    if lossy:
        what += f"; neighbour relations not checked: {lossy}"
    if bad == 0:
        return "consistency", PASS, what
    rank = int(ranks[index]) if ranks.shape[0] else int(index)
    cells = pattern.unrank(rank)
    v = int(values[rank])
    problem = _PROBLEMS[int(code)].format(
        m=pattern.manhattan(cells), other=f"rank {int(other):,}" if other >= 0 else "",
        w=_show_value(int(values[other])) if other >= 0 else "none reachable")
    return "consistency", FAIL, (f"{bad:,} of {what} fail; the first: rank {rank:,} (cells "
                                 f"{' '.join(map(str, cells))}) has {_show_value(v)} {problem}")


def _check_rebuild(table: PatternTable, values: np.ndarray, threads: int | None, progress) -> tuple[str, str, str]:
    from .build import build_table
    from .build import check_memory

    check_memory(table.pattern, table.blank)
    built = build_table(table.pattern, table.blank, threads=threads, progress=progress).table
    if table.encoding != "byte":  # compare the payloads: the fresh table encoded as the file's is
        from .encodings import encode

        payload = encode(built, table.pattern, table.blank, table.encoding, table.encoding_params, threads).payload
        ours = np.asarray(table.values).reshape(-1).view(np.uint8)
        theirs = np.asarray(payload).reshape(-1).view(np.uint8)
        if ours.shape != theirs.shape:
            return "rebuild", FAIL, f"the payload has {ours.size:,} bytes, a fresh encoding {theirs.size:,}"
        differ = np.flatnonzero(ours != theirs)
        if differ.size:
            return "rebuild", FAIL, (f"{differ.size:,} payload bytes differ from a fresh build encoded as "
                                     f"{table.encoding}; the first at byte {int(differ[0]):,}")
        return "rebuild", PASS, f"equal to a fresh build encoded as {table.encoding}, byte for byte"
    differ = np.flatnonzero(built != values)
    if differ.size:
        rank = int(differ[0])
        return "rebuild", FAIL, (f"{differ.size:,} entries differ from a fresh build; the first: rank {rank:,} "
                                 f"has {_show_value(int(values[rank]))}, the fresh build "
                                 f"{_show_value(int(built[rank]))}")
    return "rebuild", PASS, "equal to a fresh build, byte for byte"


def _seed(seed: int | None) -> int:
    if seed is not None:
        return int(seed)
    return int(np.random.SeedSequence().entropy % (1 << 32))  # type: ignore[operator]
