"""Tables of the dynamically partitioned pattern databases: every pair and every triple of tiles.

For each group of k tiles (k = 2 or 3) a blank-minimized table is built with :func:`pdbtool.tables.build.build_table`;
what is kept is its *excess*: the table value less the Manhattan distances of the group's tiles (an even
number, usually 0).  All groups of one size live in one cached file (a ``fileformat`` with the header
below), so that the 2,024 triples of the 24-puzzle are one file, not thousands:

* header: ``kind`` = ``"dynamic"``, ``group_size`` k, ``groups`` (their count), ``entries_per_group``
  (n!/(n-k)!), ``entries`` (the product), ``blank`` = ``"minimized"``, ``encoding`` = ``"excess"``, ``tiles``
  (all tiles), ``max_excess``, ``unreachable`` and a sentence in ``description``;
* payload: uint8, group after group in the order of ``itertools.combinations(tiles, k)``, each group's
  excesses in the rank order of :mod:`pdbtool.tables.ranking` (255 never occurs: an unreachable placement, which no
  solvable state contains, is stored as 0).

At search time only the placements with an excess matter.  :class:`DynamicTables` turns the two files into
compact look-ups keyed by ``(t, cell of t, u, cell of u)`` (``n**4`` keys): the pair's excess in units of
two moves, and the list of triples ``(t, u, v)`` with ``v > u`` whose excess exceeds what their three pairs
already force (the only triples that can raise the vertex cover).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from itertools import combinations
from math import comb, perm
from pathlib import Path
from typing import Callable

import numpy as np
from numba import njit

from . import fileformat
from ..puzzle.board import Board
from ..errors import PdbtoolError
from .ranking import TilePattern, manhattan_of_ranks, unrank_cells

DYNAMIC_SETS = ("pairs", "pairs+triples")
ENCODING = "excess"


class DynamicError(PdbtoolError):
    pass


def check_set(name: str) -> tuple[int, ...]:
    """Group sizes of a dynamic set name: ``pairs`` -> (2,), ``pairs+triples`` -> (2, 3)."""
    if name == "pairs":
        return (2,)
    if name == "pairs+triples":
        return (2, 3)
    raise DynamicError(f"unknown dynamic set {name!r}: choose one of {', '.join(DYNAMIC_SETS)}")


def groups_of(board: Board, k: int) -> list[tuple[int, ...]]:
    return list(combinations(range(1, board.n), k))


# --- building --------------------------------------------------------------------------------------------

def group_excess(board: Board, tiles: tuple[int, ...]) -> tuple[np.ndarray, int]:
    """(excess per rank as uint8, unreachable count) of one group, from its blank-minimized table."""
    from .build import build_table

    pattern = TilePattern(board, tiles)
    table = build_table(pattern, "minimized", threads=1).table
    md = manhattan_of_ranks(np.arange(pattern.entries, dtype=np.int64), pattern.n, pattern.k, pattern.md_rows())
    unreached = table == 255
    excess = table.astype(np.int64) - md
    excess[unreached] = 0
    if excess.min() < 0 or excess.max() >= 255 or (excess & 1).any():
        raise AssertionError(f"group {tiles}: excess over Manhattan is negative or odd (a builder bug)")
    return excess.astype(np.uint8), int(unreached.sum())


def _build_chunk(args):
    """Worker: the excess arrays of some groups (a process-pool task)."""
    width, height, goal, groups = args
    board = Board(width, height, tuple(goal))
    return [group_excess(board, g) for g in groups]


def build_set(board: Board, k: int, jobs: int | None = None,
              progress: Callable[[int], None] | None = None) -> tuple[np.ndarray, int]:
    """Excess of every group of k tiles, stacked (groups x entries), and the unreachable count.

    Each table is tiny, so the builder runs single-threaded per group and ``jobs`` processes share the
    groups; ``progress(done)`` is called with the number of groups finished so far."""
    groups = groups_of(board, k)
    per = perm(board.n, k)
    out = np.zeros((len(groups), per), dtype=np.uint8)
    jobs = jobs or os.cpu_count() or 1
    unreachable = 0
    # small sets are quicker in this process than a pool is to start
    if jobs <= 1 or len(groups) * per < 200_000:
        for i, g in enumerate(groups):
            out[i], u = group_excess(board, g)
            unreachable += u
            if progress:
                progress(i + 1)
        return out, unreachable
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    size = max(1, min(64, len(groups) // (4 * jobs)))
    chunks = [(i, groups[i:i + size]) for i in range(0, len(groups), size)]
    done = 0
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_build_chunk, (board.width, board.height, list(board.goal), gs)): i
                   for i, gs in chunks}
        from concurrent.futures import as_completed

        for fut in as_completed(futures):
            i = futures[fut]
            for j, (ex, u) in enumerate(fut.result()):
                out[i + j] = ex
                unreachable += u
            done += len(fut.result())
            if progress:
                progress(done)
    return out, unreachable


# --- the cached files ---------------------------------------------------------------------------------------

def set_name(k: int) -> str:
    return {2: "pairs", 3: "triples"}[k]


def file_name(board: Board, k: int) -> str:
    from .cache import goal_slug

    return f"{board.dims}-{goal_slug(TilePattern(board, (1,)))}-dynamic-{set_name(k)}-minimized-{ENCODING}.ddb"


def header_for(board: Board, k: int, payload: np.ndarray, unreachable: int, seconds: float) -> dict:
    groups = comb(board.n - 1, k)
    per = perm(board.n, k)
    return fileformat.make_header(
        kind="dynamic", board=board.dims, width=board.width, height=board.height, goal=list(board.goal),
        tiles=list(range(1, board.n)), blank="minimized", encoding=ENCODING, encoding_params={},
        group_size=k, groups=groups, entries_per_group=per, entries=groups * per,
        max_excess=int(payload.max()) if payload.size else 0, unreachable=unreachable,
        build_seconds=round(seconds, 3),
        description=(f"excess over Manhattan distance (blank minimized) of every {set_name(k)[:-1]} of tiles: "
                     f"groups in itertools.combinations order, each {per} placements in rank order"))


def check_header(path: Path, header: dict, board: Board, k: int) -> None:
    want = {"kind": "dynamic", "width": board.width, "height": board.height, "goal": list(board.goal),
            "blank": "minimized", "encoding": ENCODING, "group_size": k, "groups": comb(board.n - 1, k),
            "entries_per_group": perm(board.n, k), "entries": comb(board.n - 1, k) * perm(board.n, k)}
    for key, value in want.items():
        if header.get(key) != value:
            raise fileformat.TableFileError(f"{path}: a dynamic table of another {key.replace('_', ' ')} "
                                           f"({fileformat.clip(header.get(key))}, wanted {fileformat.clip(value)})")
    if header.get("payload_dtype") != np.dtype(np.uint8).str:
        raise fileformat.TableFileError(f"{path}: damaged header (payload type {header.get('payload_dtype')})")


def load_set(path: Path, board: Board, k: int) -> np.ndarray:
    """The (groups x entries) excess array of a cached file (memory-mapped), after every check."""
    loaded = fileformat.load(path)
    check_header(path, loaded.header, board, k)
    return loaded.payload.reshape(comb(board.n - 1, k), perm(board.n, k))


def get_set(cache, board: Board, k: int, jobs: int | None = None, force: bool = False,
            progress: Callable[[int], None] | None = None, on_build: Callable[[dict], None] | None = None
            ) -> np.ndarray:
    """The excess of every k-tile group on ``board``: from the cache if sound, otherwise built and stored
    by the cache's get-or-build (:meth:`pdbtool.tables.cache.TableCache.get_or_build`)."""

    def write(tmp: Path) -> None:
        start = time.perf_counter()
        payload, unreachable = build_set(board, k, jobs, progress)
        header = header_for(board, k, payload, unreachable, time.perf_counter() - start)
        fileformat.save(tmp, header, payload.reshape(-1))
        if on_build:
            on_build(header)

    return cache.get_or_build(cache.dir / file_name(board, k), lambda path: load_set(path, board, k), write,
                              force=force)


# --- the compact look-ups of the search -----------------------------------------------------------------------

@njit(cache=True)
def _pair_units(excess, groups, n):
    """``units[((t*n + c)*n + u)*n + cu]`` = excess / 2 of tiles t, u in cells c, cu (both orders)."""
    units = np.zeros(n * n * n * n, dtype=np.uint8)
    cells = np.empty(2, dtype=np.int64)
    for g in range(groups.shape[0]):
        a, b = groups[g, 0], groups[g, 1]
        for r in range(excess.shape[1]):
            e = excess[g, r]
            if e == 0:
                continue
            unrank_cells(r, n, 2, cells)
            ca, cb = cells[0], cells[1]
            units[((a * n + ca) * n + b) * n + cb] = e // 2
            units[((b * n + cb) * n + a) * n + ca] = e // 2
    return units


@njit(cache=True)
def pair_bound(p, q, r):
    """Least y_a + y_b + y_c over non-negative integers with y_a+y_b >= p, y_a+y_c >= q, y_b+y_c >= r."""
    best = 1 << 30
    top = max(p, max(q, r))
    for ya in range(top + 1):
        for yb in range(top + 1):
            yc = max(0, max(q - ya, r - yb))
            if ya + yb >= p and ya + yb + yc < best:
                best = ya + yb + yc
    return best


@njit(cache=True)
def _triple_entries(excess, groups, n, punits, start, ent, fill):
    """Count (``fill`` False: into ``start[key + 1]``) or write the triples that exceed their pairs.

    A triple (a, b, c) in cells (ca, cb, cc) with excess 2w is stored under each of its tiles t as key
    ``(t, cell of t, u, cell of u)`` with u the smaller of the other two, and entry ``(v, cell of v, w)``."""
    cells = np.empty(3, dtype=np.int64)
    tiles = np.empty(3, dtype=np.int64)
    for g in range(groups.shape[0]):
        for i in range(3):
            tiles[i] = groups[g, i]
        for r in range(excess.shape[1]):
            e = excess[g, r]
            if e == 0:
                continue
            w = e // 2
            unrank_cells(r, n, 3, cells)
            a, b, c = tiles[0], tiles[1], tiles[2]
            ca, cb, cc = cells[0], cells[1], cells[2]
            pab = punits[((a * n + ca) * n + b) * n + cb]
            pac = punits[((a * n + ca) * n + c) * n + cc]
            pbc = punits[((b * n + cb) * n + c) * n + cc]
            if w <= pair_bound(pab, pac, pbc):
                continue
            for i in range(3):
                t, ct = tiles[i], cells[i]
                # the other two, in ascending tile order (groups are ascending)
                j0 = 1 if i == 0 else 0
                j1 = 1 if i == 2 else 2
                key = ((t * n + ct) * n + tiles[j0]) * n + cells[j0]
                if fill:
                    slot = start[key]
                    start[key] += 1
                    ent[slot, 0] = tiles[j1]
                    ent[slot, 1] = cells[j1]
                    ent[slot, 2] = w
                else:
                    start[key + 1] += 1


@dataclass
class DynamicTables:
    """The search-time look-ups of one board's dynamic set (see the module docstring).

    ``pair_units``: uint8 over ``n**4`` keys.  Triples: CSR ``tri_start`` (``n**4 + 1``) into the rows
    ``(v, cell of v, units)`` of ``tri_ent`` (no rows for ``pairs``)."""

    board: Board
    name: str
    pair_units: np.ndarray
    tri_start: np.ndarray
    tri_ent: np.ndarray

    @property
    def n(self) -> int:
        return self.board.n

    @property
    def triples_stored(self) -> int:
        return int(self.tri_ent.shape[0]) // 3

    def stats(self) -> dict:
        return {"set": self.name, "pair_placements_with_excess": int(np.count_nonzero(self.pair_units)) // 2,
                "max_pair_units": int(self.pair_units.max()), "triple_placements_stored": self.triples_stored,
                "max_triple_units": int(self.tri_ent[:, 2].max()) if self.tri_ent.size else 0,
                "lookup_bytes": int(self.pair_units.nbytes + self.tri_start.nbytes + self.tri_ent.nbytes)}


def make_lookups(board: Board, name: str, pairs: np.ndarray, triples: np.ndarray | None) -> DynamicTables:
    n = board.n
    pgroups = np.array(groups_of(board, 2), dtype=np.int64).reshape(-1, 2)
    punits = _pair_units(np.ascontiguousarray(pairs), pgroups, n)
    keys = n ** 4
    start = np.zeros(keys + 1, dtype=np.int64)
    ent = np.zeros((0, 3), dtype=np.int64)
    if triples is not None:
        tgroups = np.array(groups_of(board, 3), dtype=np.int64).reshape(-1, 3)
        tri = np.ascontiguousarray(triples)
        _triple_entries(tri, tgroups, n, punits, start, ent, False)
        start = np.cumsum(start)
        total = int(start[-1])
        ent = np.zeros((total, 3), dtype=np.int64)
        cursor = start.copy()
        _triple_entries(tri, tgroups, n, punits, cursor, ent, True)
    return DynamicTables(board, name, punits, start, ent)


def load_dynamic(board: Board, name: str = "pairs+triples", cache=None, cache_dir=None, jobs: int | None = None,
                 notify: Callable[[str], None] | None = None) -> DynamicTables:
    """The look-ups of a dynamic set (``pairs`` or ``pairs+triples``), building its tables if needed."""
    sizes = check_set(name)
    if board.n > 32:
        raise DynamicError(f"dynamic tables support at most 32 cells, not {board.n}")
    if cache is None:
        from .cache import TableCache

        cache = TableCache(cache_dir, notify=notify)

    def built(header):
        if notify:
            notify(f"built the {header['groups']:,} dynamic {set_name(header['group_size'])} of {board.dims} "
                   f"in {header['build_seconds']:.1f} s")

    pairs = get_set(cache, board, 2, jobs=jobs, on_build=built)
    triples = get_set(cache, board, 3, jobs=jobs, on_build=built) if 3 in sizes else None
    return make_lookups(board, name, pairs, triples)


def build_dynamic(board: Board, name: str, cache, jobs: int | None = None, force: bool = False,
                  progress: Callable[[int], None] | None = None) -> list[dict]:
    """Build (or find cached) every table of a dynamic set; ``progress(groups)`` counts groups as they are
    done across the whole set.  Returns a record per file (what ``build --dynamic`` prints)."""
    records = []
    offset = 0
    for k in check_set(name):
        built = []
        start = time.perf_counter()
        base = offset
        payload = get_set(cache, board, k, jobs=jobs, force=force,
                          progress=(lambda done: progress(base + done)) if progress else None,
                          on_build=built.append)
        offset += comb(board.n - 1, k)
        if progress:
            progress(offset)
        path = cache.dir / file_name(board, k)
        header, _ = fileformat.read_header(path)
        records.append({"set": set_name(k), "board": board.dims, "groups": int(header["groups"]),
                        "entries": int(header["entries"]), "built": bool(built),
                        "seconds": round(built[0]["build_seconds"] if built else time.perf_counter() - start, 3),
                        "max_excess": int(header["max_excess"]),
                        "placements_with_excess": int(np.count_nonzero(payload)), "file": str(path)})
    return records


def total_groups(board: Board, name: str) -> int:
    return sum(comb(board.n - 1, k) for k in check_set(name))
