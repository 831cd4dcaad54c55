"""Disk-set pattern tables: the exact distance of every placement of k disks to a goal, built by a
parallel two-bit breadth-first search, stored in pdbtool's table file and cache.

One table serves every set of k disks: only the disks' order matters, so a set's placement, read off a
state with one bit extraction, indexes the table directly.  Goals:

* ``peg3``: every disk on peg 3 (any goal peg, by renaming the pegs);
* ``middle``: every disk on peg 1 or 2 (the goal of the search to the middle state);
* ``state:DIGITS``: one placement (an instance file's goal state), pegs of the smallest disk first.

The first two are symmetric under swapping pegs 1 and 2 and are stored as ``half`` tables (one entry for
each mirror pair, see :mod:`.kernels`); a placement goal is stored in full.  A table is stored in one of
the encodings of :mod:`.encodings` (byte, nibble, mod3).  The header's ``kind`` is ``hanoi4`` (with
``disks``, ``target``, ``layout``, ``encoding``), so that the tile commands and this domain's tell their
tables apart.
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
from ..processes import run_in_slices
from ..tables import fileformat
from ..tables.cache import TableCache
from ..tables.file_report import FileReport
from ..tables.resources import require_memory
from ..tables.table import byte_counts
from . import encodings as E
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
    workers = min(threads or numba.get_num_threads(), numba.config.NUMBA_NUM_THREADS)
    t0, c0 = time.perf_counter(), time.process_time()
    with E.numba_threads(workers):
        table = np.empty(entries_of(k, layout), dtype=np.uint8)
        K.fill_parallel(table, np.uint8(K.UNSEEN))
        bits = np.zeros(max(1, (4 ** k * 2 + 63) // 64), dtype=np.uint64)
        K.seed_bits(bits, seeds_of(k, goal))
        lay = 1 if layout == "half" else 0
        layers = []
        depth = 0
        nblocks = (bits.shape[0] + K._BLOCK_WORDS - 1) // K._BLOCK_WORDS
        size = [nblocks]
        while True:
            if depth > 254:
                raise PdbtoolError(f"the table of {k} disks has distances beyond a byte")
            counts: list[int] = []

            def expand(a: int, b: int, bits=bits, depth=depth, counts=counts) -> None:
                counts.append(int(K.bfs_layer(bits, table, depth, k, lay, workers, a, b)))

            # a slice of the layer's blocks per kernel call: a signal is seen between two
            run_in_slices(nblocks, expand, 0, None, size)
            count = sum(counts)
            if count == 0:
                break
            layers.append(count)
            if progress:
                progress(depth, count)
            depth += 1
        del bits
    return BuildResult(table, time.perf_counter() - t0, layers, time.process_time() - c0)


@dataclass
class DiskTable:
    """The distances of every placement of ``disks`` disks to ``goal``, stored in ``encoding``
    (``values``: the payload; for byte, ``values[index]`` is the distance)."""

    disks: int
    goal: str
    values: np.ndarray
    path: Path | None = None
    header: dict[str, Any] = field(default_factory=dict)
    encoding: str = "byte"

    @classmethod
    def from_values(cls, k: int, goal: str, values: np.ndarray, encoding: str = "byte",
                    threads: int | None = None) -> DiskTable:
        """The table of a byte array of distances, encoded; the header notes the distances' histogram over
        all placements (which a mod3 table cannot give without decoding)."""
        lay = 1 if layout_of(goal) == "half" else 0
        payload = E.encode(values, k, lay, encoding, threads)
        hist = _placements(values, k, layout_of(goal))
        return cls(k, goal, payload, None, {"max_value": max(hist) if hist else 0,
                                            "placements": [[v, c] for v, c in sorted(hist.items())]}, encoding)

    @property
    def layout(self) -> str:
        return layout_of(self.goal)

    @property
    def entries(self) -> int:
        return entries_of(self.disks, self.layout)

    def identity(self) -> dict[str, Any]:
        # "target", not "goal": the shared reader checks a "goal" as a tile board's list of cells
        return {"kind": KIND, "disks": self.disks, "target": self.goal, "layout": self.layout,
                "encoding": self.encoding, "entries": self.entries}

    def describe(self) -> str:
        return f"hanoi4 {self.disks} disks to {self.goal} ({self.layout}, {self.encoding})"

    def row(self) -> list[int]:
        """The table's row of a plan's table array (see ``kernels.T_*``)."""
        code, state = goal_kind(self.goal)
        return [self.values.ctypes.data, self.disks, 1 if self.layout == "half" else 0, E.CODES[self.encoding],
                code, state]

    def index(self, pegs) -> int:
        """The table index of a placement (the smallest disk first)."""
        s = sum(int(p) << (2 * d) for d, p in enumerate(pegs))
        return int(K.half_index(np.uint64(s), self.disks)) if self.layout == "half" else s

    def lookup(self, pegs) -> int:
        """The distance of a placement (the smallest disk first), whatever the encoding."""
        s = sum(int(p) << (2 * d) for d, p in enumerate(pegs))
        return int(K.table_value(np.array([self.row()], dtype=np.int64), 0, np.uint64(s)))

    def byte_values(self, threads: int | None = None) -> np.ndarray:
        """The distances as a byte array (decoded unless the table is a byte table)."""
        lay = 1 if self.layout == "half" else 0
        return E.decode(self.values, self.disks, lay, self.encoding, seeds_of(self.disks, self.goal), threads)

    def histogram(self) -> dict[int, int]:
        counts = byte_counts(self.byte_values())
        return {int(v): int(c) for v, c in enumerate(counts) if c and v != K.UNSEEN}

    def state_histogram(self) -> dict[int, int]:
        """How many of the 4**k placements are at each distance (for a mod3 table, as its header notes)."""
        if self.encoding == "mod3" and "placements" in self.header:
            return {int(v): int(c) for v, c in self.header["placements"]}
        return _placements(self.byte_values(), self.disks, self.layout)

    def mean(self) -> float:
        """The mean distance over all 4**k placements."""
        hist = self.state_histogram()
        return sum(v * c for v, c in hist.items()) / 4 ** self.disks

    def save(self, path: str | os.PathLike, extra: dict | None = None) -> int:
        fields = {key: self.header[key] for key in ("max_value", "placements") if key in self.header}
        if "max_value" not in fields:
            hist = self.histogram()
            fields["max_value"] = max(hist) if hist else 0
        header = fileformat.make_header(**self.identity(), **fields, **(extra or {}))
        return fileformat.save(path, header, np.asarray(self.values, dtype=np.uint8))

    @classmethod
    def load(cls, path: str | os.PathLike, verify_checksum: bool = True) -> DiskTable:
        f = fileformat.load(path, verify_checksum)
        h = f.header
        if h.get("kind") != KIND:
            raise fileformat.TableFileError(f"{path}: not a hanoi4 table")
        k, goal, encoding = h.get("disks"), h.get("target"), h.get("encoding")
        if not isinstance(k, int) or not isinstance(goal, str):
            raise fileformat.TableFileError(f"{path}: damaged header (disks or target)")
        try:
            check_goal(k, goal)
        except PdbtoolError as exc:
            raise fileformat.TableFileError(f"{path}: damaged header ({exc})") from None
        if h.get("layout") != layout_of(goal) or encoding not in E.HANOI_ENCODINGS:
            raise fileformat.TableFileError(f"{path}: damaged header (layout or encoding)")
        size = E.payload_size(encoding, k, 1 if layout_of(goal) == "half" else 0)
        if h["entries"] != entries_of(k, layout_of(goal)) or f.payload.dtype != np.uint8 \
                or f.payload.shape[0] != size:
            raise fileformat.TableFileError(f"{path}: damaged header (the payload is not {k} disks' table)")
        return cls(k, goal, f.payload, Path(path), h, encoding)


def _placements(values: np.ndarray, k: int, layout: str) -> dict[int, int]:
    """How many of the 4**k placements are at each distance, from a byte table (a half table's entries
    weigh two, except the placements with no disk on peg 1 or 2, which are their own mirror)."""
    values = np.asarray(values)
    counts = byte_counts(values)
    if layout == "half":
        counts = 2 * counts - byte_counts(values[: 2 ** k])
    return {int(v): int(c) for v, c in enumerate(counts) if c and v != K.UNSEEN}


def table_name(k: int, goal: str, encoding: str = "byte") -> str:
    return f"hanoi4-d{k}-{goal.replace(':', '-')}-{layout_of(goal)}-{encoding}.pdb"


def is_hanoi_table(path: str | os.PathLike) -> bool:
    """Whether a file's header says it is a hanoi4 table (False for anything unreadable)."""
    return fileformat.is_kind(path, KIND)


def get_table(k: int, goal: str = "peg3", cache: TableCache | None = None, threads: int | None = None,
              force: bool = False, progress: Callable[[int, int], None] | None = None,
              on_build: Callable[[BuildResult], None] | None = None, encoding: str = "byte") -> DiskTable:
    """The table of k disks to ``goal`` in ``encoding`` from the cache, stored there first if absent or
    damaged: encoded from the cached byte table when there is one, else built (the byte table is then not
    kept)."""
    check_goal(k, goal)
    E.check_encoding(encoding)
    cache = cache or TableCache()
    path = cache.dir / table_name(k, goal, encoding)

    def load(p: Path) -> DiskTable:
        table = DiskTable.load(p)
        if table.disks != k or table.goal != goal or table.encoding != encoding:
            raise fileformat.TableFileError(f"{p}: holds {table.describe()}, not {k} disks to {goal} ({encoding})")
        return table

    def write(tmp: Path) -> None:
        byte_path = cache.dir / table_name(k, goal)
        if encoding != "byte" and not force and byte_path.exists():
            try:
                source = DiskTable.load(byte_path)
            except PdbtoolError:
                source = None
            if source is not None and (source.disks, source.goal, source.encoding) == (k, goal, "byte"):
                DiskTable.from_values(k, goal, source.values, encoding, threads).save(
                    tmp, {"converted_from": byte_path.name})
                return
        require_memory(estimate_peak_bytes(k, goal), f"building the hanoi4 table of {k} disks")
        result = build_values(k, goal, threads, progress)
        DiskTable.from_values(k, goal, result.values, encoding, threads).save(
            tmp, {"build_seconds": round(result.seconds, 3), "build_cpu_seconds": round(result.cpu_seconds, 3),
                  "layers": result.layers})
        if on_build:
            on_build(result)

    return cache.get_or_build(path, load, write, force=force)


def convert_file(path: str | os.PathLike, encoding: str, output: str | os.PathLike | None = None,
                 cache: TableCache | None = None, threads: int | None = None) -> tuple[DiskTable, dict]:
    """Re-encode a hanoi4 table file (any encoding to any other, no breadth-first search): written to
    ``output``, or into the cache under its name.  Returns the new table and what the conversion did."""
    E.check_encoding(encoding)
    source = DiskTable.load(path)
    t0 = time.perf_counter()
    values = source.byte_values(threads)
    fresh = DiskTable.from_values(source.disks, source.goal, values, encoding, threads)
    del values
    if output is None:
        cache = cache or TableCache()
        target = cache.dir / table_name(source.disks, source.goal, encoding)
        table = cache.get_or_build(target, DiskTable.load,
                                   lambda tmp: fresh.save(tmp, {"converted_from": Path(path).name}), force=True)
    else:
        fresh.save(output, {"converted_from": Path(path).name})
        table = DiskTable.load(output)
    info = {"file": str(table.path), "from": source.encoding, "encoding": encoding, "disks": source.disks,
            "goal": source.goal, "payload_bytes": int(table.values.nbytes),
            "bits_per_placement": round(8 * table.values.nbytes / 4 ** source.disks, 4),
            "seconds": round(time.perf_counter() - t0, 3)}
    return table, info


# --- checks ----------------------------------------------------------------------------------------------

def check_values(table: DiskTable, samples: int = 10_000, full: bool = False, seed: int | None = None) -> dict:
    """Structural checks of a table's values: entries in range, the goal at 0 and nowhere else, and the
    BFS property at sampled (or all) entries (some neighbour one less, none more than one apart), read
    through the table's encoding (a mod3 table's values by EXACT)."""
    layout = 1 if table.layout == "half" else 0
    code, state = goal_kind(table.goal)
    tabs = np.array([table.row()], dtype=np.int64)
    if full:  # in slices: an index array of every entry would take eight bytes an entry
        step = 1 << 22
        chunks = (np.arange(a, min(a + step, table.entries), dtype=np.int64) for a in range(0, table.entries, step))
    else:
        rng = np.random.default_rng(seed)
        chunks = iter([rng.integers(0, table.entries, size=min(samples, table.entries), dtype=np.int64)])  # type: ignore[assignment]
    checked = bad = 0
    first_bad = None
    for idx in chunks:
        b, first = K.check_consistency(tabs, layout, code, np.uint64(state), idx)
        checked += int(idx.shape[0])
        bad += int(b)
        firsts = first[first >= 0]
        if first_bad is None and firsts.size:
            first_bad = int(firsts[0])
    return {"checked": checked, "bad": bad, "first_bad": first_bad}


HanoiReport = FileReport  # the shape of the tile verifier's reports


def verify_file(path: str | os.PathLike, samples: int = 10_000, full: bool = False, rebuild: bool = False,
                threads: int | None = None, seed: int | None = None) -> HanoiReport:
    """Format, checksum and identity (loading); the payload's structure and, decoded, its values' range
    (a mod3 table is decoded with ``full`` or ``rebuild`` only: a breadth-first search that checks every
    residue); the goal and BFS consistency at sampled or all entries; with ``rebuild`` a comparison with a
    fresh build."""
    path = Path(path)
    checks: list[tuple[str, str]] = []
    try:
        table = DiskTable.load(path)
    except PdbtoolError as exc:
        return HanoiReport(path, False, checks, str(exc).removeprefix(f"{path}: "))
    checks.append(("format+checksum+identity", "ok"))

    def fail(why: str) -> HanoiReport:
        return HanoiReport(path, False, checks, why, table.describe())

    values = None
    if table.encoding != "mod3" or full or rebuild:
        try:
            values = table.byte_values(threads)
        except PdbtoolError as exc:
            return fail(f"decode: {exc}")
        if table.encoding != "byte":
            checks.append(("decode", "ok"))
        top = int(values.max()) if values.size else 0
        if top != int(table.header.get("max_value", -1)) or top == K.UNSEEN:
            return fail(f"values: max {top} is not the header's {table.header.get('max_value')} "
                        f"(or a placement is unreached)")
        noted = table.header.get("placements")
        if noted is not None and _placements(values, table.disks, table.layout) != {v: c for v, c in noted}:
            return fail("values: the distances' histogram is not the header's")
    if table.encoding == "mod3" and values is not None:
        checks.append(("consistency", f"{table.entries:,} entries (the decoding's breadth-first search)"))
    else:
        result = check_values(table, samples, full, seed)
        if result["bad"]:
            return fail(f"consistency: {result['bad']} of {result['checked']} entries fail (first at index "
                        f"{result['first_bad']})")
        checks.append(("consistency", f"{result['checked']:,} entries"))
    if rebuild and values is not None:  # decoded above whenever rebuild is asked
        fresh = build_values(table.disks, table.goal, threads)
        if not np.array_equal(fresh.values, values):
            diff = int(np.count_nonzero(fresh.values != values))
            return fail(f"rebuild: {diff} entries differ from a fresh build")
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
            "layout": table.layout, "encoding": table.encoding, "entries": table.entries,
            "placements": 4 ** table.disks, "payload_bytes": int(table.values.nbytes),
            "bits_per_placement": round(8 * table.values.nbytes / 4 ** table.disks, 4),
            "file_bytes": table.header.get("_file_bytes"), "checksum_ok": checksum, "max": h.get("max_value"),
            "mean_over_placements": sum(v * c for v, c in hist.items()) / 4 ** table.disks, "histogram": hist,
            "build_seconds": h.get("build_seconds"), "converted_from": h.get("converted_from"),
            "pdbtool_version": h.get("pdbtool_version")}


def format_description(info: dict) -> str:
    hist = info["histogram"]
    lines = [f"{info['file']}: {info['table']}",
             f"  entries {info['entries']:,} ({info['placements']:,} placements, mirror pairs stored once)"
             if info["layout"] == "half" else f"  entries {info['entries']:,}",
             f"  payload {info['payload_bytes']:,} bytes ({info['bits_per_placement']:g} bits a placement), "
             f"file {info['file_bytes']:,} bytes, checksum {'ok' if info['checksum_ok'] else 'MISMATCH'}",
             f"  max {info['max']}, mean over all placements {info['mean_over_placements']:.4f}"]
    if info.get("build_seconds") is not None:
        lines.append(f"  built in {info['build_seconds']} s")
    if info.get("converted_from"):
        lines.append(f"  converted from {info['converted_from']}")
    lines.append("  placements by distance: " + ", ".join(f"{v}:{c}" for v, c in sorted(hist.items()))
                 + (" (as the header notes)" if info["encoding"] == "mod3" else ""))
    return "\n".join(lines)
