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

The *blank-region* sets (``-region``) also use the distance from the blank's own region: a group's tiles
can cut the free cells into regions (two tiles around a corner cell), and the distance from a placement
then depends on the region the blank is in; the minimized table keeps the least.  A second file per size
(``kind`` = ``"dynamic-regions"``, uint64 rows ``group, rank, region mask, excess``) lists every region of
the placements whose regions differ.  A move changes the blank's region for a group only if it moves one
of the group's tiles (the blank steps into the cell the moved tile left, next to its old cell), so the
incremental update of :mod:`pdbtool.heuristics.vertex_cover` stays exact.

At search time only the placements with an excess matter.  :class:`DynamicTables` turns the files into
compact look-ups keyed by ``(t, cell of t, u, cell of u)`` (``n**4`` keys): the pair's excess in units of
two moves, and a list of rows ``(v, cell of v, units, blank mask)``: the triples ``(t, u, v)`` with
``v > u`` kept by the set's rule, valid while the blank is in the mask, and (``v`` = 0) the region values
of a pair whose unit byte is :data:`PAIR_BY_REGION`.

Which triples are kept: ``pairs+triples`` and ``pairs+triples-region`` keep those whose excess exceeds
what their three pairs already force (the least cover of the triangle: the only triples that can raise the
vertex cover); ``pairs+triples-fkh`` keeps, as Felner, Korf & Hanan (2004) do, only those whose excess
exceeds the sum of their three pairs' excesses.

Variants of these definitions, measured by ``bench/bench_dynamic_variants.py`` against the published node
counts: :func:`group_excess` and :func:`group_regions` take the abstract goal ``"anywhere"`` (the blank
anywhere, instead of in the goal blank's region), and :func:`make_lookups` takes a :class:`SetDefinition`
of its own (the sum rule with regions, triples kept against the blank-minimized pairs, or empty region
rows of one size).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from itertools import combinations
from math import comb, perm
from pathlib import Path
from collections.abc import Callable

import numba
import numpy as np
from numba import njit

from . import fileformat
from .._native.arrays import read_only
from .._native.intrinsics import trailing_zeros
from ..errors import PdbtoolError
from ..puzzle.board import MAX_CELLS, Board
from .dynamic_sets import DYNAMIC_SETS
from .ranking import TilePattern, cells_mask, column_masks, flood_region, manhattan_of_ranks, rank_cells, unrank_cells

ENCODING = "excess"
# a pair's unit byte when its value depends on the blank's region (rows with v = 0 give it per region)
PAIR_BY_REGION = 255


class DynamicError(PdbtoolError):
    pass


TRIPLE_RULES = ("cover", "sum")
KEEP_AGAINST = ("values", "minimized")
GOAL_RULES = ("region", "anywhere")


@dataclass(frozen=True)
class SetDefinition:
    """What a dynamic set name means: group sizes, whether values follow the blank's region, which triples
    are kept (``"cover"``: beyond their pairs' least cover; ``"sum"``: beyond the sum of their pairs) and
    against which pair values (``"values"``: those the set looks up, by region in a ``-region`` set;
    ``"minimized"``: the blank-minimized ones, which keeps more triples and gives the same cover).

    The named sets use the default ``keep_against``; :func:`make_lookups` also takes a definition of its
    own, so that variants of the published definition can be measured (``bench/bench_dynamic_variants.py``)."""

    sizes: tuple[int, ...]
    regions: bool
    triple_rule: str
    keep_against: str = "values"

    def __post_init__(self):
        if self.triple_rule not in TRIPLE_RULES or self.keep_against not in KEEP_AGAINST or \
                not set(self.sizes) <= {2, 3} or 2 not in self.sizes:
            raise DynamicError(f"bad dynamic set definition {self}")


def parse_set(name: str) -> SetDefinition:
    if name not in DYNAMIC_SETS:
        raise DynamicError(f"unknown dynamic set {name!r}: choose one of {', '.join(DYNAMIC_SETS)}")
    sizes = (2, 3) if name.startswith("pairs+triples") else (2,)
    return SetDefinition(sizes, name.endswith("-region"), "sum" if name.endswith("-fkh") else "cover")


def check_set(name: str) -> tuple[int, ...]:
    """Group sizes of a dynamic set name: ``pairs`` -> (2,), ``pairs+triples`` -> (2, 3), ..."""
    return parse_set(name).sizes


def groups_of(board: Board, k: int) -> list[tuple[int, ...]]:
    return list(combinations(range(1, board.n), k))


# --- building --------------------------------------------------------------------------------------------

def group_excess(board: Board, tiles: tuple[int, ...], goal: str = "region") -> tuple[np.ndarray, int]:
    """(excess per rank as uint8, unreachable count) of one group, from its blank-minimized table.

    ``goal``: the abstract goal is the group's tiles at home with the blank in the goal blank's region
    (``"region"``, what the builders do) or anywhere (``"anywhere"``: weaker where the home cells cut the
    free cells, e.g. tiles 1 and 5 around the corner of Korf's goal; computed from
    :func:`group_distances`)."""
    from .build import build_table

    if goal == "region":
        pattern = TilePattern(board, tiles)
        least = build_table(pattern, "minimized", threads=1).table.astype(np.int64)
    else:
        pattern, dist = group_distances(board, tiles, goal)
        least = dist.reshape(pattern.entries, pattern.n).min(axis=1).astype(np.int64)
    md = manhattan_of_ranks(np.arange(pattern.entries, dtype=np.int64), pattern.n, pattern.k, pattern.md_rows())
    unreached = least == 255
    excess = np.where(unreached, 0, least - md)
    if excess.min() < 0 or excess.max() >= 255 or (excess & 1).any():
        raise AssertionError(f"group {tiles}: excess over Manhattan is negative or odd (a builder bug)")
    return excess.astype(np.uint8), int(unreached.sum())


@njit(cache=True)
def _blank_distances(goal_cells, goal_blank, n, k, entries, nb):
    """Distance of every (placement, blank cell) to the goal (index ``rank * n + blank``; 255: none): a
    0-1 breadth-first search in which a move of a group tile costs 1 and a step of the blank through the
    free cells costs nothing.  ``goal_blank[b]``: whether the goal holds with the blank in cell b (an array, not
    a mask: a 64-cell mask does not fit the int64 a Python int is passed as)."""
    states = entries * n
    dist = np.full(states, 255, dtype=np.uint8)
    cur = np.empty(2 * states, dtype=np.int64)
    nxt = np.empty(2 * states, dtype=np.int64)
    cells = np.empty(k, dtype=np.int64)
    goal = rank_cells(goal_cells, n)
    ncur = 0
    for b in range(n):
        if goal_blank[b]:
            dist[goal * n + b] = 0
            cur[ncur] = goal * n + b
            ncur += 1
    d = 0
    while ncur > 0:
        nnext = 0
        i = 0
        while i < ncur:  # the zero-cost steps append to the layer being read
            s = cur[i]
            i += 1
            if dist[s] != d:
                continue
            r = s // n
            b = s - r * n
            unrank_cells(r, n, k, cells)
            for j in range(4):
                q = nb[b, j]
                if q < 0:
                    continue
                moved = -1
                for a in range(k):
                    if cells[a] == q:
                        moved = a
                if moved < 0:
                    t = r * n + q
                    if dist[t] > d:
                        dist[t] = d
                        cur[ncur] = t
                        ncur += 1
                else:
                    cells[moved] = b
                    t = rank_cells(cells, n) * n + q
                    cells[moved] = q
                    if dist[t] > d + 1:
                        dist[t] = d + 1
                        nxt[nnext] = t
                        nnext += 1
        cur, nxt = nxt, cur
        ncur = nnext
        d += 1
    return dist


@njit(cache=True)
def _region_rows(dist, n, k, entries, md_rows, not_first, not_last, width, out):
    """Rows ``(rank, region mask, excess)`` of every region of the placements whose free cells form regions
    of different distances (all of them, so that a look-up needs no other value); returns their count."""
    cells = np.empty(k, dtype=np.int64)
    masks = np.empty(n, dtype=np.int64)
    full = cells_mask(n)
    rows = 0
    for r in range(entries):
        used = unrank_cells(r, n, k, cells)
        free = full & ~used
        rem = free
        nreg = 0
        while rem:
            seed = rem & (~rem + numba.uint64(1))
            region = flood_region(seed, free, not_first, not_last, width)
            masks[nreg] = np.int64(region)
            rem &= ~region
            nreg += 1
        if nreg < 2:
            continue
        first = dist[r * n + trailing_zeros(masks[0])]
        differ = False
        for i in range(1, nreg):
            if dist[r * n + trailing_zeros(masks[i])] != first:
                differ = True
        if not differ:
            continue
        md = 0
        for i in range(k):
            md += md_rows[i, cells[i]]
        for i in range(nreg):
            v = dist[r * n + trailing_zeros(masks[i])]
            if v == 255:  # a region the goal is not reached from: no row, no constraint
                continue
            out[rows, 0] = r
            out[rows, 1] = masks[i]
            out[rows, 2] = np.int64(v) - md
            rows += 1
    return rows


def group_distances(board: Board, tiles: tuple[int, ...], goal: str = "region") -> tuple[TilePattern, np.ndarray]:
    """(pattern, distance of every (placement, blank cell), see :func:`_blank_distances`) of one group, to
    its tiles at home with the blank in the goal blank's region (``goal="region"``) or anywhere."""
    if goal not in GOAL_RULES:
        raise DynamicError(f"unknown goal rule {goal!r}: choose one of {', '.join(GOAL_RULES)}")
    pattern = TilePattern(board, tiles)
    goal_cells = np.asarray(pattern.goal_cells(), dtype=np.int64)
    goal_blank = np.zeros(pattern.n, dtype=np.uint8)
    if goal == "region":
        goal_blank[list(pattern.blank_region(goal_cells, board.goal[0]))] = 1
    else:
        goal_blank[:] = 1
        goal_blank[goal_cells] = 0
    nb = np.asarray(board.neighbours(), dtype=np.int64)
    return pattern, _blank_distances(goal_cells, goal_blank, pattern.n, pattern.k, pattern.entries, nb)


def goal_splits(board: Board, tiles: tuple[int, ...]) -> bool:
    """Whether the group's home cells cut the free cells into regions (then the goal rules differ)."""
    pattern = TilePattern(board, tiles)
    goal_cells = pattern.goal_cells()
    return len(pattern.blank_region(goal_cells, board.goal[0])) != pattern.free_cells


def group_regions(board: Board, tiles: tuple[int, ...], goal: str = "region") -> np.ndarray:
    """The region rows (rank, region mask, excess) of one group (see :func:`_region_rows`); ``goal`` as in
    :func:`group_distances`."""
    pattern, dist = group_distances(board, tiles, goal)
    n, k = pattern.n, pattern.k
    not_first, not_last = column_masks(board)
    out = np.empty((pattern.entries * (k + 2), 3), dtype=np.int64)
    rows = _region_rows(dist, n, k, pattern.entries, pattern.md_rows(), np.uint64(not_first), np.uint64(not_last),
                        board.width, out)
    found = out[:rows].copy()
    if rows and (found[:, 2].min() < 0 or (found[:, 2] & 1).any()):
        raise AssertionError(f"group {tiles}: a region's excess is negative or odd (a builder bug)")
    return found


def _build_chunk(args):
    """Worker: the excess arrays (or region rows) of some groups (a process-pool task)."""
    width, height, goal, groups, regions = args
    board = Board(width, height, tuple(goal))
    if regions:
        return [group_regions(board, g) for g in groups]
    return [group_excess(board, g) for g in groups]


def _map_groups(board: Board, groups: list, regions: bool, jobs: int | None, small: bool,
                progress: Callable[[int], None] | None):
    """Yield (index, result) of every group, in ``jobs`` processes unless the work is small."""
    jobs = jobs or os.cpu_count() or 1
    if jobs <= 1 or small:
        for i, g in enumerate(groups):
            yield i, (group_regions(board, g) if regions else group_excess(board, g))
            if progress:
                progress(i + 1)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    size = max(1, min(64, len(groups) // (4 * jobs)))
    chunks = [(i, groups[i:i + size]) for i in range(0, len(groups), size)]
    done = 0
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_build_chunk, (board.width, board.height, list(board.goal), gs, regions)): i
                   for i, gs in chunks}
        for fut in as_completed(futures):
            i = futures[fut]
            results = fut.result()
            for j, res in enumerate(results):
                yield i + j, res
            done += len(results)
            if progress:
                progress(done)


def build_set(board: Board, k: int, jobs: int | None = None,
              progress: Callable[[int], None] | None = None) -> tuple[np.ndarray, int]:
    """Excess of every group of k tiles, stacked (groups x entries), and the unreachable count.

    Each table is tiny, so the builder runs single-threaded per group and ``jobs`` processes share the
    groups; ``progress(done)`` is called with the number of groups finished so far."""
    groups = groups_of(board, k)
    per = perm(board.n, k)
    out = np.zeros((len(groups), per), dtype=np.uint8)
    unreachable = 0
    # small sets are quicker in this process than a pool is to start
    for i, (ex, u) in _map_groups(board, groups, False, jobs, len(groups) * per < 200_000, progress):
        out[i] = ex
        unreachable += u
    return out, unreachable


def build_regions(board: Board, k: int, jobs: int | None = None,
                  progress: Callable[[int], None] | None = None) -> np.ndarray:
    """The region rows of every group of k tiles: int64 ``(group, rank, region mask, excess)``, by group
    and rank."""
    groups = groups_of(board, k)
    parts: list = [None] * len(groups)
    for i, rows in _map_groups(board, groups, True, jobs, len(groups) * perm(board.n, k) < 50_000, progress):
        parts[i] = np.column_stack([np.full(len(rows), i, dtype=np.int64), rows]) if len(rows) else \
            np.zeros((0, 4), dtype=np.int64)
    return np.concatenate(parts) if parts else np.zeros((0, 4), dtype=np.int64)


# --- the cached files ---------------------------------------------------------------------------------------

def set_name(k: int) -> str:
    return {2: "pairs", 3: "triples"}[k]


def file_name(board: Board, k: int, regions: bool = False) -> str:
    from .names import goal_slug

    rule = "regions" if regions else "minimized"
    return f"{board.dims}-{goal_slug(TilePattern(board, (1,)))}-dynamic-{set_name(k)}-{rule}-{ENCODING}.ddb"


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


def regions_header_for(board: Board, k: int, rows: np.ndarray, seconds: float) -> dict:
    return fileformat.make_header(
        kind="dynamic-regions", board=board.dims, width=board.width, height=board.height, goal=list(board.goal),
        tiles=list(range(1, board.n)), blank="regions", encoding=ENCODING, encoding_params={},
        group_size=k, groups=comb(board.n - 1, k), columns=["group", "rank", "region_mask", "excess"],
        rows=int(rows.shape[0]), entries=int(rows.shape[0]), max_excess=int(rows[:, 3].max()) if rows.shape[0] else 0,
        build_seconds=round(seconds, 3),
        description=(f"excess over Manhattan distance of every {set_name(k)[:-1]} of tiles by the blank's region, "
                     "for the placements whose regions differ: rows (group, rank, region mask, excess)"))


def _check_fields(path: Path, header: dict, want: dict) -> None:
    for key, value in want.items():
        if header.get(key) != value:
            raise fileformat.TableFileError(f"{path}: a dynamic table of another {key.replace('_', ' ')} "
                                            f"({fileformat.clip(header.get(key))}, wanted {fileformat.clip(value)})")


def check_header(path: Path, header: dict, board: Board, k: int) -> None:
    _check_fields(path, header, {
        "kind": "dynamic", "width": board.width, "height": board.height, "goal": list(board.goal),
        "blank": "minimized", "encoding": ENCODING, "group_size": k, "groups": comb(board.n - 1, k),
        "entries_per_group": perm(board.n, k), "entries": comb(board.n - 1, k) * perm(board.n, k)})
    if header.get("payload_dtype") != np.dtype(np.uint8).str:
        raise fileformat.TableFileError(f"{path}: damaged header (payload type {header.get('payload_dtype')})")


# --- load-time validation: every value a look-up builder indexes with, before make_lookups sees it -----------

@njit(cache=True)
def _excess_errors(excess, goal_ranks, max_excess):
    """(odd entries, entries above ``max_excess``, first group whose goal placement is not 0, or -1)."""
    odd = 0
    above = 0
    for g in range(excess.shape[0]):
        for r in range(excess.shape[1]):
            e = np.int64(excess[g, r])
            odd += e & 1
            if e > max_excess:
                above += 1
    bad_goal = -1
    for g in range(excess.shape[0]):
        if excess[g, goal_ranks[g]] != 0:
            bad_goal = g
            break
    return odd, above, bad_goal


# region row faults (codes of _region_row_errors)
REGION_FAULTS = ("", "a group index out of range", "a rank out of range", "not sorted by group and rank",
                 "a region mask that is not a region of the placement's free cells", "an odd or negative excess",
                 "an excess above the header's max_excess",
                 "the goal placement's region of the goal blank has an excess other than 0")


@njit(cache=True)
def _region_row_errors(rows, groups, goal_ranks, n, k, per, not_first, not_last, width, goal_blank, max_excess):
    """(fault code, row) of the first bad region row, or (0, -1): every row's group and rank in range, the
    rows sorted by (group, rank), each mask one whole region of the placement's free cells, each excess
    even, non-negative and at most ``max_excess``, and 0 for the goal blank's region at a group's goal."""
    cells = np.empty(k, dtype=np.int64)
    full = cells_mask(n)
    for i in range(rows.shape[0]):
        g = rows[i, 0]
        r = rows[i, 1]
        if g < 0 or g >= groups:
            return 1, i
        if r < 0 or r >= per:
            return 2, i
        if i and (rows[i - 1, 0] > g or (rows[i - 1, 0] == g and rows[i - 1, 1] > r)):
            return 3, i
        mask = numba.uint64(rows[i, 2])
        used = unrank_cells(r, n, k, cells)
        free = full & ~used
        if mask == numba.uint64(0) or (mask & ~free) != numba.uint64(0):
            return 4, i
        if flood_region(mask & (~mask + numba.uint64(1)), free, not_first, not_last, width) != mask:
            return 4, i
        e = rows[i, 3]
        if e < 0 or e & 1:
            return 5, i
        if e > max_excess:
            return 6, i
        if r == goal_ranks[g] and (mask >> numba.uint64(goal_blank)) & numba.uint64(1) and e != 0:
            return 7, i
    return 0, -1


def goal_ranks(board: Board, k: int) -> np.ndarray:
    """The rank of each k-tile group's goal placement (in :func:`groups_of` order)."""
    groups = groups_of(board, k)
    out = np.empty(len(groups), dtype=np.int64)
    for i, g in enumerate(groups):
        out[i] = rank_cells(np.array([board.goal[t] for t in g], dtype=np.int64), board.n)
    return out


def board_of(path: Path, header: dict) -> tuple[Board, int]:
    """The board and group size a dynamic file's header names (TableFileError when they are not valid)."""
    try:
        board = Board(header["width"], header["height"], tuple(header["goal"]))
    except (ValueError, TypeError, PdbtoolError) as exc:
        raise fileformat.TableFileError(f"{path}: damaged header ({fileformat.clip(str(exc))})") from None
    k = header.get("group_size")
    if k not in (2, 3) or isinstance(k, bool) or board.n > MAX_CELLS or board.n - 1 < k:
        raise fileformat.TableFileError(f"{path}: damaged header (group size {fileformat.clip(k)} on "
                                        f"{board.dims})")
    return board, k


def check_set_values(path: Path, header: dict, excess: np.ndarray, board: Board, k: int) -> None:
    """Refuse excesses that are odd, above the header's ``max_excess`` or not 0 at a group's goal."""
    odd, above, bad_goal = _excess_errors(excess, goal_ranks(board, k), int(header["max_excess"]))
    if odd:
        raise fileformat.TableFileError(f"{path}: {odd} odd excesses (an excess over Manhattan is even)")
    if above:
        raise fileformat.TableFileError(f"{path}: {above} excesses above the header's max_excess "
                                        f"{header['max_excess']}")
    if bad_goal >= 0:
        raise fileformat.TableFileError(f"{path}: the goal placement of tiles {groups_of(board, k)[bad_goal]} "
                                        f"has an excess, not 0")


def check_region_rows(path: Path, header: dict, rows: np.ndarray, board: Board, k: int) -> None:
    """Refuse region rows that a look-up builder could not index safely or that contradict the goal."""
    not_first, not_last = column_masks(board)
    code, row = _region_row_errors(rows, comb(board.n - 1, k), goal_ranks(board, k), board.n, k, perm(board.n, k),
                                   np.uint64(not_first), np.uint64(not_last), board.width, board.goal[0],
                                   int(header["max_excess"]))
    if code:
        raise fileformat.TableFileError(f"{path}: region row {row:,} has {REGION_FAULTS[code]}")


def load_set(path: Path, board: Board, k: int, verify_checksum: bool = True) -> np.ndarray:
    """The (groups x entries) excess array of a cached file (memory-mapped), after every check."""
    loaded = fileformat.load(path, verify_checksum=verify_checksum)
    check_header(path, loaded.header, board, k)
    if "max_excess" not in loaded.header:
        raise fileformat.TableFileError(f"{path}: damaged header (no max_excess)")
    excess = loaded.payload.reshape(comb(board.n - 1, k), perm(board.n, k))
    check_set_values(path, loaded.header, excess, board, k)
    return excess


def load_regions(path: Path, board: Board, k: int, verify_checksum: bool = True) -> np.ndarray:
    """The region rows (rows x 4, int64) of a cached file, after every check."""
    loaded = fileformat.load(path, verify_checksum=verify_checksum)
    header = loaded.header
    _check_fields(path, header, {
        "kind": "dynamic-regions", "width": board.width, "height": board.height, "goal": list(board.goal),
        "blank": "regions", "encoding": ENCODING, "group_size": k, "groups": comb(board.n - 1, k)})
    rows = header.get("rows")
    if header.get("payload_dtype") != np.dtype(np.uint64).str or not isinstance(rows, int) or \
            loaded.payload.size != 4 * rows or "max_excess" not in header:
        raise fileformat.TableFileError(f"{path}: damaged header (payload type {header.get('payload_dtype')}, "
                                        f"{fileformat.clip(rows)} rows)")
    found = loaded.payload.view(np.int64).reshape(rows, 4)
    check_region_rows(path, header, found, board, k)
    return found


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


def get_regions(cache, board: Board, k: int, jobs: int | None = None, force: bool = False,
                progress: Callable[[int], None] | None = None, on_build: Callable[[dict], None] | None = None
                ) -> np.ndarray:
    """The region rows of every k-tile group on ``board``, from the cache or built, as :func:`get_set`."""

    def write(tmp: Path) -> None:
        start = time.perf_counter()
        rows = build_regions(board, k, jobs, progress)
        header = regions_header_for(board, k, rows, time.perf_counter() - start)
        fileformat.save(tmp, header, rows.view(np.uint64).reshape(-1))
        if on_build:
            on_build(header)

    return cache.get_or_build(cache.dir / file_name(board, k, regions=True),
                              lambda path: load_regions(path, board, k), write, force=force)


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
def _pair_region_rows(rows, groups, n, units, out):
    """Mark the pairs whose value follows the blank's region (unit byte :data:`PAIR_BY_REGION`) and write
    their rows ``(key, 0, -1, units, region mask)`` under both keys; return the count."""
    cells = np.empty(2, dtype=np.int64)
    m = 0
    for i in range(rows.shape[0]):
        g = rows[i, 0]
        a, b = groups[g, 0], groups[g, 1]
        unrank_cells(rows[i, 1], n, 2, cells)
        for key in (((a * n + cells[0]) * n + b) * n + cells[1], ((b * n + cells[1]) * n + a) * n + cells[0]):
            units[key] = PAIR_BY_REGION
            out[m, 0] = key
            out[m, 1] = 0
            out[m, 2] = -1
            out[m, 3] = rows[i, 3] // 2
            out[m, 4] = rows[i, 2]
            m += 1
    return m


@njit(cache=True, _nrt=False, forceinline=True)
def pair_units_at(units, start, ent, key, blank):
    """Units of the pair placement ``key`` with the blank in cell ``blank`` (rows as in :class:`DynamicTables`)."""
    w = np.int64(units[key])
    if w != PAIR_BY_REGION:
        return w
    for j in range(start[key], start[key + 1]):
        if ent[j, 0] == 0 and ent[j, 3] >> blank & 1:
            return ent[j, 2]
    return np.int64(0)


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
def _triple_rows(excess, groups, n, units, pstart, pent, regions, sum_rule, by_region, not_first, not_last, width,
                 out, fill):
    """Count (``fill`` False) or write the rows ``(key, v, cell of v, units, blank mask)`` of the kept triples.

    A triple (a, b, c) in cells (ca, cb, cc) worth w units while the blank is in a mask is kept if w exceeds
    what its pairs give with the blank there: their least cover (the triangle's), or with ``sum_rule`` their
    sum.  It is stored under each of its tiles t as key ``(t, cell of t, u, cell of u)`` with u the smaller of
    the other two.  With ``by_region``, ``regions`` (rows group, rank, mask, excess, by group and rank) give
    the placements whose value depends on the blank's region, and a triple whose pairs' values do is split
    into its regions too; otherwise every row's mask is the whole board."""
    cells = np.empty(3, dtype=np.int64)
    tiles = np.empty(3, dtype=np.int64)
    masks = np.empty(n, dtype=np.int64)
    worth = np.empty(n, dtype=np.int64)
    full = cells_mask(n)
    m = 0
    p = 0
    for g in range(groups.shape[0]):
        for i in range(3):
            tiles[i] = groups[g, i]
        a, b, c = tiles[0], tiles[1], tiles[2]
        for r in range(excess.shape[1]):
            nreg = 0
            if by_region:
                while p < regions.shape[0] and (regions[p, 0] < g or (regions[p, 0] == g and regions[p, 1] < r)):
                    p += 1
                while p < regions.shape[0] and regions[p, 0] == g and regions[p, 1] == r:
                    masks[nreg] = regions[p, 2]
                    worth[nreg] = regions[p, 3] // 2
                    nreg += 1
                    p += 1
            e = excess[g, r]
            if nreg == 0 and e == 0:
                continue
            used = unrank_cells(r, n, 3, cells)
            ca, cb, cc = cells[0], cells[1], cells[2]
            kab = ((a * n + ca) * n + b) * n + cb
            kac = ((a * n + ca) * n + c) * n + cc
            kbc = ((b * n + cb) * n + c) * n + cc
            if nreg == 0:
                split_pairs = by_region and (units[kab] == PAIR_BY_REGION or units[kac] == PAIR_BY_REGION
                                             or units[kbc] == PAIR_BY_REGION)
                if split_pairs:  # the triple is worth the same everywhere, its pairs are not
                    free = full & ~used
                    rem = free
                    while rem:
                        region = flood_region(rem & (~rem + numba.uint64(1)), free, not_first, not_last, width)
                        masks[nreg] = np.int64(region)
                        worth[nreg] = e // 2
                        nreg += 1
                        rem &= ~region
                else:
                    masks[0] = np.int64(full)
                    worth[0] = e // 2
                    nreg = 1
            for i in range(nreg):
                w = worth[i]
                if w == 0:
                    continue
                blank = trailing_zeros(masks[i])
                pab = pair_units_at(units, pstart, pent, kab, blank)
                pac = pair_units_at(units, pstart, pent, kac, blank)
                pbc = pair_units_at(units, pstart, pent, kbc, blank)
                bound = pab + pac + pbc if sum_rule else pair_bound(pab, pac, pbc)
                if w <= bound:
                    continue
                for s in range(3):
                    # the other two, in ascending tile order (groups are ascending)
                    j0 = 1 if s == 0 else 0
                    j1 = 1 if s == 2 else 2
                    if fill:
                        out[m, 0] = ((tiles[s] * n + cells[s]) * n + tiles[j0]) * n + cells[j0]
                        out[m, 1] = tiles[j1]
                        out[m, 2] = cells[j1]
                        out[m, 3] = w
                        out[m, 4] = masks[i]
                    m += 1
    return m


def _csr(rows: np.ndarray, keys: int) -> tuple[np.ndarray, np.ndarray]:
    """(starts, entries) of rows ``(key, ...)`` grouped by key, in their order within a key."""
    start = np.zeros(keys + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[:, 0], minlength=keys), out=start[1:])
    order = np.argsort(rows[:, 0], kind="stable")
    return start, np.ascontiguousarray(rows[order, 1:])


@dataclass
class DynamicTables:
    """The search-time look-ups of one board's dynamic set (see the module docstring).

    ``pair_units``: uint8 over ``n**4`` keys (:data:`PAIR_BY_REGION`: see the rows).  CSR ``tri_start``
    (``n**4 + 1``) into the rows ``(v, cell of v, units, blank mask)`` of ``tri_ent``: triples (v > 0), valid
    while the blank is in the mask, and the region values of pairs (v = 0, cell -1)."""

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
        return int(np.count_nonzero(self.tri_ent[:, 0])) // 3

    def stats(self) -> dict:
        triple = self.tri_ent[:, 0] > 0
        return {"set": self.name,
                "pair_placements_with_excess": int(np.count_nonzero(self.pair_units)) // 2,
                "pair_placements_by_region": int(np.count_nonzero(self.pair_units == PAIR_BY_REGION)) // 2,
                "max_pair_units": int(self.pair_units[self.pair_units != PAIR_BY_REGION].max(initial=0)),
                "triple_placements_stored": self.triples_stored,
                "max_triple_units": int(self.tri_ent[triple, 2].max(initial=0)),
                "lookup_bytes": int(self.pair_units.nbytes + self.tri_start.nbytes + self.tri_ent.nbytes)}


def make_lookups(board: Board, name: str, pairs: np.ndarray, triples: np.ndarray | None,
                 pair_regions: np.ndarray | None = None, triple_regions: np.ndarray | None = None,
                 definition: SetDefinition | None = None) -> DynamicTables:
    """The look-ups of the set ``name`` from the excess arrays (and, for a ``-region`` set, the region rows).

    ``definition`` replaces the one the name stands for (a variant; ``name`` is then only its label).  Empty
    region rows of one size give that size its blank-minimized values in a ``-region`` definition."""
    if definition is None:
        definition = parse_set(name)
    if definition.regions and (pair_regions is None or (3 in definition.sizes and triple_regions is None)):
        raise DynamicError(f"the dynamic set {name} needs the region rows of its tables")
    n = board.n
    keys = n ** 4
    pgroups = np.array(groups_of(board, 2), dtype=np.int64).reshape(-1, 2)
    units = _pair_units(np.ascontiguousarray(pairs), pgroups, n)
    # the pair units a triple is kept against: with "minimized", a copy taken before region pairs are marked
    keep_units = units.copy() if definition.keep_against == "minimized" else units
    rows = np.zeros((0, 5), dtype=np.int64)
    if definition.regions and pair_regions is not None and len(pair_regions):
        rows = np.empty((2 * len(pair_regions), 5), dtype=np.int64)
        _pair_region_rows(np.ascontiguousarray(pair_regions, dtype=np.int64), pgroups, n, units, rows)
    if triples is not None and 3 in definition.sizes:
        pstart, pent = _csr(rows, keys)
        tgroups = np.array(groups_of(board, 3), dtype=np.int64).reshape(-1, 3)
        regions = (np.ascontiguousarray(triple_regions, dtype=np.int64) if definition.regions
                   else np.zeros((0, 4), dtype=np.int64))
        not_first, not_last = column_masks(board)
        if definition.keep_against == "minimized":
            # then no pair reads its rows, and a triple kept holds wherever the blank is
            pstart, pent = _csr(np.zeros((0, 5), dtype=np.int64), keys)
        args = (read_only(np.ascontiguousarray(triples)), tgroups, n, keep_units, pstart, pent, regions,
                definition.triple_rule == "sum", definition.regions, np.uint64(not_first), np.uint64(not_last),
                board.width)
        count = _triple_rows(*args, np.zeros((0, 5), dtype=np.int64), False)
        trows = np.empty((count, 5), dtype=np.int64)
        _triple_rows(*args, trows, True)
        rows = np.concatenate([rows, trows])
    start, ent = _csr(rows, keys)
    return DynamicTables(board, name, units, start, ent)


# the largest set of excess tables (bytes, one per placement) a board may have: 6x6's triples take 280 MB and
# 7x7's 1.9 GB; 8x8's would take 9.9 GB, and their look-ups (n**4 keys, several words each) more
MAX_SET_BYTES = 1 << 31


def check_size(board: Board, name: str) -> None:
    """Refuse a set whose tables would not fit (:data:`MAX_SET_BYTES`), before anything is built."""
    for k in parse_set(name).sizes:
        size = comb(board.n - 1, k) * perm(board.n, k)
        if size > MAX_SET_BYTES:
            raise DynamicError(f"the dynamic {set_name(k)} of {board.dims} would take {size / 1e9:.1f} GB "
                               f"({comb(board.n - 1, k):,} tables of {perm(board.n, k):,} placements); at most "
                               f"{MAX_SET_BYTES / 1e9:.1f} GB are supported: use a smaller board or --dynamic pairs")


def load_dynamic(board: Board, name: str = "pairs+triples", cache=None, cache_dir=None, jobs: int | None = None,
                 notify: Callable[[str], None] | None = None) -> DynamicTables:
    """The look-ups of a dynamic set (one of :data:`DYNAMIC_SETS`), building its tables if needed."""
    definition = parse_set(name)
    check_size(board, name)
    if cache is None:
        from .cache import TableCache

        cache = TableCache(cache_dir, notify=notify)

    def built(header):
        if notify:
            what = "region values" if header["kind"] == "dynamic-regions" else "tables"
            notify(f"built the {what} of the {header['groups']:,} dynamic {set_name(header['group_size'])} of "
                   f"{board.dims} in {header['build_seconds']:.1f} s")

    found: dict = {}
    for k in definition.sizes:
        found[k] = get_set(cache, board, k, jobs=jobs, on_build=built)
        if definition.regions:
            found[k, "regions"] = get_regions(cache, board, k, jobs=jobs, on_build=built)
    return make_lookups(board, name, found[2], found.get(3), found.get((2, "regions")), found.get((3, "regions")))


def _files(name: str) -> list[tuple[int, bool]]:
    definition = parse_set(name)
    return [(k, regions) for k in definition.sizes for regions in ((False, True) if definition.regions else (False,))]


def build_dynamic(board: Board, name: str, cache, jobs: int | None = None, force: bool = False,
                  progress: Callable[[int], None] | None = None) -> list[dict]:
    """Build (or find cached) every file of a dynamic set; ``progress(groups)`` counts groups as they are
    done across the whole set (a group once per file).  Returns a record per file (what ``build --dynamic``
    prints)."""
    check_size(board, name)
    records = []
    offset = 0
    for k, regions in _files(name):
        built: list = []
        start = time.perf_counter()
        base = offset
        get = get_regions if regions else get_set
        payload = get(cache, board, k, jobs=jobs, force=force,
                      progress=(lambda done: progress(base + done)) if progress else None,  # noqa: B023
                      on_build=built.append)
        offset += comb(board.n - 1, k)
        if progress:
            progress(offset)
        path = cache.dir / file_name(board, k, regions)
        header, _ = fileformat.read_header(path)
        record = {"set": set_name(k) + ("-regions" if regions else ""), "board": board.dims,
                  "groups": int(header["groups"]), "built": bool(built),
                  "seconds": round(built[0]["build_seconds"] if built else time.perf_counter() - start, 3),
                  "max_excess": int(header["max_excess"]), "file": str(path)}
        if regions:
            record["rows"] = int(header["rows"])
        else:
            record["entries"] = int(header["entries"])
            record["placements_with_excess"] = int(np.count_nonzero(payload))
        records.append(record)
    return records


def total_groups(board: Board, name: str) -> int:
    return sum(comb(board.n - 1, k) for k, _ in _files(name))
