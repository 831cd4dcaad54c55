"""The cached files of a dynamic set: their names and headers, the checks of every value a look-up builder
indexes with (before :func:`.lookups.make_lookups` sees it), and the get-or-build through the cache."""

from __future__ import annotations

import time
from collections.abc import Callable
from math import comb, perm
from pathlib import Path

import numba
import numpy as np
from numba import njit

from .. import fileformat
from ...errors import PdbtoolError
from ...puzzle.board import MAX_CELLS, Board
from ..ranking import TilePattern, cells_mask, column_masks, flood_region, rank_cells, unrank_cells
from .builders import build_regions, build_set
from .sets import ENCODING, groups_of, set_name


def file_name(board: Board, k: int, regions: bool = False) -> str:
    from ..names import goal_slug

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
