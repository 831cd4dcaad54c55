"""Disk-set pattern tables: the exact distance of every placement of k disks to a goal, built by a
parallel two-bit breadth-first search, stored in pdbtool's table file and cache.

One table serves every set of k disks: only the disks' order matters, so a set's placement, read off a
state with one bit extraction, indexes the table directly.  Goals:

* ``peg3``: every disk on peg 3 (any goal peg, by renaming the pegs);
* ``middle``: every disk on peg 1 or 2 (the goal of the search to the middle state);
* ``state:DIGITS``: one placement (an instance file's goal state), pegs of the smallest disk first.

The first two are symmetric under swapping pegs 1 and 2 and are stored as ``half`` tables (one entry for
each mirror pair, see :mod:`.kernels`); a placement goal is stored in full.  The header's ``kind`` is
``hanoi4`` (with ``disks``, ``target``, ``layout``), so that the tile commands and this domain's tell
their tables apart.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable

import numpy as np

from ..errors import PdbtoolError
from ..tables import fileformat
from ..tables.cache import TableCache, available_memory
from ..tables.table import byte_counts
from . import kernels as K

MAX_TABLE_DISKS = 15
KIND = "hanoi4"


def entries_of(k: int, layout: str) -> int:
    return (4 ** k + 2 ** k) // 2 if layout == "half" else 4 ** k


def layout_of(goal: str) -> str:
    return "full" if goal.startswith("state:") else "half"


def goal_kind(goal: str) -> tuple[int, int]:
    """The kernels' goal code and goal state of a goal name."""
    if goal == "peg3":
        return K.GOAL_PEG3, 0
    if goal == "middle":
        return K.GOAL_MIDDLE, 0
    digits = goal.removeprefix("state:")
    return K.GOAL_STATE, sum(int(c) << (2 * d) for d, c in enumerate(digits))


def check_goal(k: int, goal: str) -> None:
    if not 1 <= k <= MAX_TABLE_DISKS:
        raise PdbtoolError(f"a table holds 1 to {MAX_TABLE_DISKS} disks, not {k}")
    if goal in ("peg3", "middle"):
        return
    digits = goal.removeprefix("state:")
    if not goal.startswith("state:") or len(digits) != k or any(c not in "0123" for c in digits):
        raise PdbtoolError(f"a table's goal is peg3, middle or state:PEGS ({k} digits 0-3), not {goal!r}")


def seeds_of(k: int, goal: str) -> np.ndarray:
    code, state = goal_kind(goal)
    if code == K.GOAL_PEG3:
        return np.array([sum(3 << (2 * d) for d in range(k))], dtype=np.uint64)
    if code == K.GOAL_MIDDLE:  # every placement of the k disks on pegs 1 and 2
        return np.array([sum((1 + ((b >> d) & 1)) << (2 * d) for d in range(k)) for b in range(2 ** k)],
                        dtype=np.uint64)
    return np.array([state], dtype=np.uint64)


def estimate_peak_bytes(k: int, goal: str) -> int:
    return entries_of(k, layout_of(goal)) + 4 ** k // 4 + (64 << 20)


@dataclass
class BuildResult:
    values: np.ndarray
    seconds: float
    layers: list[int]
    cpu_seconds: float


def build_values(k: int, goal: str, threads: int | None = None,
                 progress: Callable[[int, int], None] | None = None) -> BuildResult:
    """The distance table of k disks to ``goal`` by a two-bit breadth-first search over all 4**k states."""
    import numba

    check_goal(k, goal)
    layout = layout_of(goal)
    workers = threads or numba.get_num_threads()
    previous = numba.get_num_threads()
    numba.set_num_threads(min(workers, numba.config.NUMBA_NUM_THREADS))
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        table = np.empty(entries_of(k, layout), dtype=np.uint8)
        K.fill_parallel(table, np.uint8(K.UNSEEN))
        bits = np.zeros(max(1, (4 ** k * 2 + 63) // 64), dtype=np.uint64)
        K.seed_bits(bits, seeds_of(k, goal))
        lay = 1 if layout == "half" else 0
        layers = []
        depth = 0
        while True:
            if depth > 254:
                raise PdbtoolError(f"the table of {k} disks has distances beyond a byte")
            count = int(K.bfs_layer(bits, table, depth, k, lay, workers))
            if count == 0:
                break
            layers.append(count)
            if progress:
                progress(depth, count)
            depth += 1
        del bits
    finally:
        numba.set_num_threads(previous)
    return BuildResult(table, time.perf_counter() - t0, layers, time.process_time() - c0)


@dataclass
class DiskTable:
    """The distances of every placement of ``disks`` disks to ``goal`` (``values[index]``)."""

    disks: int
    goal: str
    values: np.ndarray
    path: Path | None = None
    header: dict[str, Any] = field(default_factory=dict)

    @property
    def layout(self) -> str:
        return layout_of(self.goal)

    @property
    def entries(self) -> int:
        return entries_of(self.disks, self.layout)

    def identity(self) -> dict[str, Any]:
        # "target", not "goal": the shared reader checks a "goal" as a tile board's list of cells
        return {"kind": KIND, "disks": self.disks, "target": self.goal, "layout": self.layout, "encoding": "byte",
                "entries": self.entries}

    def describe(self) -> str:
        return f"hanoi4 {self.disks} disks to {self.goal} ({self.layout}, byte)"

    def index(self, pegs) -> int:
        """The table index of a placement (the smallest disk first)."""
        s = sum(int(p) << (2 * d) for d, p in enumerate(pegs))
        return int(K.half_index(np.uint64(s), self.disks)) if self.layout == "half" else s

    def lookup(self, pegs) -> int:
        return int(self.values[self.index(pegs)])

    def histogram(self) -> dict[int, int]:
        counts = byte_counts(self.values)
        return {int(v): int(c) for v, c in enumerate(counts) if c and v != K.UNSEEN}

    def state_histogram(self) -> dict[int, int]:
        """How many of the 4**k placements are at each distance (a half table's entries weigh two, except
        the placements with no disk on peg 1 or 2, which are their own mirror)."""
        values = np.asarray(self.values)
        counts = byte_counts(values)
        if self.layout == "half":
            counts = 2 * counts - byte_counts(values[: 2 ** self.disks])
        return {int(v): int(c) for v, c in enumerate(counts) if c and v != K.UNSEEN}

    def mean(self) -> float:
        """The mean distance over all 4**k placements."""
        hist = self.state_histogram()
        return sum(v * c for v, c in hist.items()) / 4 ** self.disks

    def save(self, path: str | os.PathLike, extra: dict | None = None) -> int:
        hist = self.histogram()
        header = fileformat.make_header(**self.identity(), max_value=max(hist) if hist else 0, **(extra or {}))
        return fileformat.save(path, header, np.asarray(self.values, dtype=np.uint8))

    @classmethod
    def load(cls, path: str | os.PathLike, verify_checksum: bool = True) -> DiskTable:
        f = fileformat.load(path, verify_checksum)
        h = f.header
        if h.get("kind") != KIND:
            raise fileformat.TableFileError(f"{path}: not a hanoi4 table")
        k, goal = h.get("disks"), h.get("target")
        if not isinstance(k, int) or not isinstance(goal, str):
            raise fileformat.TableFileError(f"{path}: damaged header (disks or target)")
        try:
            check_goal(k, goal)
        except PdbtoolError as exc:
            raise fileformat.TableFileError(f"{path}: damaged header ({exc})") from None
        if h.get("layout") != layout_of(goal) or h.get("encoding") != "byte":
            raise fileformat.TableFileError(f"{path}: damaged header (layout or encoding)")
        if h["entries"] != entries_of(k, layout_of(goal)) or f.payload.dtype != np.uint8 \
                or f.payload.shape[0] != h["entries"]:
            raise fileformat.TableFileError(f"{path}: damaged header (the payload is not {k} disks' table)")
        return cls(k, goal, f.payload, Path(path), h)


def table_name(k: int, goal: str) -> str:
    return f"hanoi4-d{k}-{goal.replace(':', '-')}-{layout_of(goal)}-byte.pdb"


def is_hanoi_table(path: str | os.PathLike) -> bool:
    """Whether a file's header says it is a hanoi4 table (False for anything unreadable)."""
    try:
        header, _ = fileformat.read_header(path)
    except fileformat.TableFileError:
        return False
    return header.get("kind") == KIND


def get_table(k: int, goal: str = "peg3", cache: TableCache | None = None, threads: int | None = None,
              force: bool = False, progress: Callable[[int, int], None] | None = None,
              on_build: Callable[[BuildResult], None] | None = None) -> DiskTable:
    """The table of k disks to ``goal`` from the cache, built and stored there first if absent or damaged."""
    check_goal(k, goal)
    cache = cache or TableCache()
    path = cache.dir / table_name(k, goal)

    def load(p: Path) -> DiskTable:
        table = DiskTable.load(p)
        if table.disks != k or table.goal != goal:
            raise fileformat.TableFileError(f"{p}: holds {table.describe()}, not {k} disks to {goal}")
        return table

    def write(tmp: Path) -> None:
        need = estimate_peak_bytes(k, goal)
        have = available_memory()
        if have is not None and need > have:
            raise PdbtoolError(f"building the hanoi4 table of {k} disks needs about {need / 2**30:.2f} GiB, "
                               f"only {have / 2**30:.2f} GiB is available")
        result = build_values(k, goal, threads, progress)
        DiskTable(k, goal, result.values).save(tmp, {"build_seconds": round(result.seconds, 3),
                                                      "build_cpu_seconds": round(result.cpu_seconds, 3),
                                                      "layers": result.layers})
        if on_build:
            on_build(result)

    return cache.get_or_build(path, load, write, force=force)


# --- checks ----------------------------------------------------------------------------------------------

def check_values(table: DiskTable, samples: int = 10_000, full: bool = False, seed: int | None = None) -> dict:
    """Structural checks of a table's values: entries in range, the goal at 0 and nowhere else, and the
    BFS property at sampled (or all) entries (some neighbour one less, none more than one apart)."""
    values = np.asarray(table.values)
    layout = 1 if table.layout == "half" else 0
    code, state = goal_kind(table.goal)
    if full:  # in slices: an index array of every entry would take eight bytes an entry
        step = 1 << 22
        chunks = (np.arange(a, min(a + step, table.entries), dtype=np.int64) for a in range(0, table.entries, step))
    else:
        rng = np.random.default_rng(seed)
        chunks = iter([rng.integers(0, table.entries, size=min(samples, table.entries), dtype=np.int64)])  # type: ignore[assignment]
    checked = bad = 0
    first_bad = None
    for idx in chunks:
        b, first = K.check_consistency(values, table.disks, layout, code, np.uint64(state), idx)
        checked += int(idx.shape[0])
        bad += int(b)
        firsts = first[first >= 0]
        if first_bad is None and firsts.size:
            first_bad = int(firsts[0])
    return {"checked": checked, "bad": bad, "first_bad": first_bad, "unreached": int(byte_counts(values)[K.UNSEEN])}


@dataclass
class HanoiReport:
    """The outcome of verifying one hanoi4 table file (the shape of the tile verifier's reports)."""

    path: Path
    ok: bool
    checks: list[tuple[str, str]]
    failure: str | None = None
    what: str = ""

    @property
    def file(self) -> str:
        return str(self.path)

    def summary(self) -> str:
        if self.ok:
            return f"OK   {self.path}: {self.what}; " + ", ".join(f"{n} {d}" for n, d in self.checks)
        return f"FAIL {self.path}: {self.failure}"

    def as_dict(self) -> dict:
        return {"file": str(self.path), "ok": self.ok, "table": self.what, "checks": dict(self.checks),
                "failure": self.failure}


def verify_file(path: str | os.PathLike, samples: int = 10_000, full: bool = False, rebuild: bool = False,
                threads: int | None = None, seed: int | None = None) -> HanoiReport:
    """Format, checksum and identity (loading), then the values: range, goal, BFS consistency, and with
    ``rebuild`` a byte-for-byte comparison with a fresh build."""
    path = Path(path)
    checks: list[tuple[str, str]] = []
    try:
        table = DiskTable.load(path)
    except PdbtoolError as exc:
        return HanoiReport(path, False, checks, str(exc).removeprefix(f"{path}: "))
    checks.append(("format+checksum+identity", "ok"))
    values = np.asarray(table.values)
    top = int(values.max()) if values.size else 0
    if top != int(table.header.get("max_value", -1)) or top == K.UNSEEN:
        return HanoiReport(path, False, checks, f"values: max {top} is not the header's "
                                                f"{table.header.get('max_value')} (or a placement is unreached)",
                           table.describe())
    result = check_values(table, samples, full, seed)
    if result["bad"]:
        return HanoiReport(path, False, checks, f"consistency: {result['bad']} of {result['checked']} entries "
                                                f"fail (first at index {result['first_bad']})", table.describe())
    checks.append(("consistency", f"{result['checked']:,} entries"))
    if rebuild:
        fresh = build_values(table.disks, table.goal, threads)
        if not np.array_equal(fresh.values, values):
            diff = int(np.count_nonzero(fresh.values != values))
            return HanoiReport(path, False, checks, f"rebuild: {diff} entries differ from a fresh build",
                               table.describe())
        checks.append(("rebuild", "identical"))
    return HanoiReport(path, True, checks, None, table.describe())


def describe_file(path: str | os.PathLike) -> dict:
    """What ``pdbtool inspect`` shows of a hanoi4 table."""
    path = Path(path)
    checksum = fileformat.checksum_ok(path)
    table = DiskTable.load(path, verify_checksum=False)
    hist = table.state_histogram()
    h = table.header
    return {"file": str(path), "kind": KIND, "table": table.describe(), "disks": table.disks, "goal": table.goal,
            "layout": table.layout, "encoding": "byte", "entries": table.entries, "placements": 4 ** table.disks,
            "file_bytes": table.header.get("_file_bytes"), "checksum_ok": checksum, "max": h.get("max_value"),
            "mean_over_placements": table.mean(), "histogram": hist,
            "build_seconds": h.get("build_seconds"), "pdbtool_version": h.get("pdbtool_version")}


def format_description(info: dict) -> str:
    hist = info["histogram"]
    lines = [f"{info['file']}: {info['table']}",
             f"  entries {info['entries']:,} ({info['placements']:,} placements, mirror pairs stored once)"
             if info["layout"] == "half" else f"  entries {info['entries']:,}",
             f"  file {info['file_bytes']:,} bytes, checksum {'ok' if info['checksum_ok'] else 'MISMATCH'}",
             f"  max {info['max']}, mean over all placements {info['mean_over_placements']:.4f}"]
    if info.get("build_seconds") is not None:
        lines.append(f"  built in {info['build_seconds']} s")
    lines.append("  placements by distance: " + ", ".join(f"{v}:{c}" for v, c in sorted(hist.items())))
    return "\n".join(lines)
