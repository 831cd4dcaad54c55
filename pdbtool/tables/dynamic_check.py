"""``verify`` and ``inspect`` of the dynamic sets' files (``*.ddb``): the pair and triple excess tables and
their region rows.

The checks have the names of a pattern table's (:mod:`pdbtool.tables.verify`) and run in the same order,
stopping at the first failure:

* ``format``, ``sizes``, ``checksum``, ``identity``: the envelope, the header's fields against the board
  and group size it names, the payload's shape (and, for region rows, that every row's group, rank and
  mask can be indexed and the rows are sorted), the xxhash64, and the cache's name for the file;
* ``goal``: every group's goal placement has excess 0 (for region rows: the goal blank's region);
* ``max value``: every excess is even and the largest is the header's ``max_excess``;
* ``consistency``: the excesses (or region rows) of a sample of groups equal those recomputed from a
  breadth-first search of that group alone; ``--full`` recomputes every group;
* ``rebuild``: every group recomputed and compared (what ``--full`` does; ``--rebuild`` asks for it).
"""

from __future__ import annotations

import math
from math import comb, perm
from pathlib import Path
from typing import Any
from collections.abc import Callable

import numpy as np

from . import fileformat
from . import pairs_triples as pt
from .pairs_triples.files import _check_fields, _excess_errors, _region_row_errors
from .fileformat import TableFileError
from .verify import (CHECKS, DEFAULT_SAMPLES, FAIL, PASS, SKIP, Report, _checksum_holds, checked_file,
                     _rest_not_run, _seed, _strip_path)

KINDS = ("dynamic", "dynamic-regions")
MIN_GROUPS = 8   # a sampled check recomputes at least this many groups (or all of them)


def _open(path: Path, verify_checksum: bool):
    """(header, payload as the loaders read it, board, k, regions), after the structural checks."""
    loaded = fileformat.load(path, verify_checksum=verify_checksum)
    header = loaded.header
    kind = header.get("kind")
    if kind not in KINDS:
        raise TableFileError(f"{path}: a {fileformat.clip(kind)} file, not a dynamic table")
    board, k = pt.board_of(path, header)
    regions = kind == "dynamic-regions"
    if regions:
        rows = header.get("rows")
        _check_fields(path, header, {"blank": "regions", "encoding": pt.ENCODING, "groups": comb(board.n - 1, k)})
        if header.get("payload_dtype") != np.dtype(np.uint64).str or not isinstance(rows, int) or \
                loaded.payload.size != 4 * rows or "max_excess" not in header:
            raise TableFileError(f"{path}: damaged header (payload type {header.get('payload_dtype')}, "
                                 f"{fileformat.clip(rows)} rows)")
        payload = loaded.payload.view(np.int64).reshape(rows, 4)
    else:
        pt.check_header(path, header, board, k)
        if "max_excess" not in header:
            raise TableFileError(f"{path}: damaged header (no max_excess)")
        payload = loaded.payload.reshape(comb(board.n - 1, k), perm(board.n, k))
    return header, payload, board, k, regions


def describe_kind(board, k: int, regions: bool) -> str:
    return f"dynamic {pt.set_name(k)}{' region rows' if regions else ''} of {board.dims} goal {board.goal_name}"


def verify_dynamic_file(path: str | Path, cache_name: bool = False, samples: int = DEFAULT_SAMPLES,
                        full: bool = False, rebuild: bool = False, seed: int | None = None,
                        progress: Callable[[int, int], None] | None = None) -> Report:
    """Verify one file of a dynamic set; ``cache_name`` also requires its name to be the cache's name for it."""
    return checked_file(path, lambda path, report: _verify_set_file(path, report, cache_name, samples, full, rebuild,
                                                                    seed, progress))


def _verify_set_file(path: Path, report: Report, cache_name, samples, full, rebuild, seed, progress) -> Report:
    """:func:`verify_dynamic_file` after the format's check."""
    try:
        header, payload, board, k, regions = _open(path, verify_checksum=False)
        if regions:
            code, row = _region_faults(header, payload, board, k)
            if code in (1, 2, 3, 4):
                raise TableFileError(f"region row {row:,} has {pt.REGION_FAULTS[code]}")
    except TableFileError as exc:
        report.add("sizes", FAIL, _strip_path(str(exc), path))
        return _rest_not_run(report)
    groups = comb(board.n - 1, k)
    report.table = describe_kind(board, k, regions)
    shape = f"{payload.shape[0]:,} region rows" if regions else \
        f"{groups:,} groups of {perm(board.n, k):,} placements"
    report.add("sizes", PASS, f"{shape}, payload {int(header['payload_bytes']):,} bytes, file "
                              f"{header['_file_bytes']:,} bytes")
    if not _checksum_holds(report, path):
        return _rest_not_run(report)
    if cache_name:
        want = pt.file_name(board, k, regions)
        ok = path.name == want
        report.add("identity", PASS if ok else FAIL,
                   "matches its cache name" if ok
                   else f"the header describes {report.table}, whose cache name is {want}")
        if not ok:
            return _rest_not_run(report)
    else:
        report.add("identity", SKIP, "no table asked for")
    for step in (_check_goal, _check_max):
        if not report.add(*step(header, payload, board, k, regions)):
            return _rest_not_run(report)
    report.seed = None if full else _seed(seed)
    chosen = _sample_groups(groups, perm(board.n, k), samples, full, report.seed)
    if not report.add(*_recompute(payload, board, k, regions, chosen, "consistency", progress)):
        return _rest_not_run(report)
    if rebuild:
        report.add(*_recompute(payload, board, k, regions, np.arange(groups), "rebuild", progress))
    else:
        report.add("rebuild", SKIP, "not asked")
    return report


def _region_faults(header, rows, board, k) -> tuple[int, int]:
    from .ranking import column_masks

    not_first, not_last = column_masks(board)
    code, row = _region_row_errors(rows, comb(board.n - 1, k), pt.goal_ranks(board, k), board.n, k,
                                   perm(board.n, k), np.uint64(not_first), np.uint64(not_last), board.width,
                                   board.goal[0], 254)
    return int(code), int(row)


def _check_goal(header, payload, board, k, regions) -> tuple[str, str, str]:
    if regions:
        code, row = _region_faults(header, payload, board, k)
        if code == 7:
            return "goal", FAIL, f"region row {row:,} has {pt.REGION_FAULTS[code]}"
        return "goal", PASS, "every group's goal region has excess 0"
    _, _, bad_goal = _excess_errors(payload, pt.goal_ranks(board, k), 255)
    if bad_goal >= 0:
        tiles = pt.groups_of(board, k)[bad_goal]
        return "goal", FAIL, f"the goal placement of tiles {' '.join(map(str, tiles))} has an excess, not 0"
    return "goal", PASS, "every group's goal placement has excess 0"


def _check_max(header, payload, board, k, regions) -> tuple[str, str, str]:
    claimed = int(header["max_excess"])
    excess = payload[:, 3] if regions else payload
    if regions:
        code, row = _region_faults(header, payload, board, k)
        if code in (5, 6):
            return "max value", FAIL, f"region row {row:,} has {pt.REGION_FAULTS[code]}"
        odd = 0
    else:
        odd, _, _ = _excess_errors(payload, pt.goal_ranks(board, k), 255)
    if odd:
        return "max value", FAIL, f"{int(odd):,} odd excesses (an excess over Manhattan is even)"
    largest = int(excess.max()) if excess.size else 0
    if largest != claimed:
        return "max value", FAIL, f"the largest excess is {largest}, the header's max_excess {claimed}"
    return "max value", PASS, f"max excess {largest}"


def _sample_groups(groups: int, per: int, samples: int, full: bool, seed: int | None) -> np.ndarray:
    want = groups if full else min(groups, max(MIN_GROUPS, math.ceil(samples / per)))
    if want >= groups:
        return np.arange(groups)
    return np.sort(np.random.default_rng(seed).choice(groups, size=want, replace=False))


def _recompute(payload, board, k, regions, chosen, name, progress) -> tuple[str, str, str]:
    """Compare the chosen groups with a fresh breadth-first search of each."""
    groups = pt.groups_of(board, k)
    if regions:
        starts = np.searchsorted(payload[:, 0], np.arange(len(groups) + 1))
    for done, g in enumerate(chosen):
        tiles = groups[int(g)]
        if regions:
            fresh = pt.group_regions(board, tiles)
            have = payload[starts[g]:starts[g + 1], 1:]
            if fresh.shape != have.shape or not np.array_equal(fresh, have):
                return name, FAIL, (f"the region rows of tiles {' '.join(map(str, tiles))} differ from a fresh "
                                    f"search ({have.shape[0]} rows, the search gives {fresh.shape[0]})")
        else:
            fresh, _ = pt.group_excess(board, tiles)
            differ = np.flatnonzero(fresh != payload[g])
            if differ.size:
                r = int(differ[0])
                return name, FAIL, (f"tiles {' '.join(map(str, tiles))}: {differ.size:,} placements differ from a "
                                    f"fresh search; the first: rank {r:,} has excess {int(payload[g, r])}, the "
                                    f"search gives {int(fresh[r])}")
        if progress:
            progress(done, 0)
    what = "every group" if len(chosen) == len(groups) else f"{len(chosen):,} of {len(groups):,} groups"
    return name, PASS, f"{what} equal to a fresh search of the group"


def describe_dynamic(path: str | Path) -> dict[str, Any]:
    """What ``inspect`` shows of a dynamic file (TableFileError when its header or structure is unusable)."""
    path = Path(path)
    ok = fileformat.checksum_ok(path)
    header, payload, board, k, regions = _open(path, verify_checksum=False)
    info: dict[str, Any] = {
        "file": str(path), "kind": header["kind"], "format": header.get("format"),
        "pdbtool_version": header.get("pdbtool_version"), "board": board.dims, "goal": board.goal_name,
        "group_size": k, "groups": comb(board.n - 1, k), "max_excess": header["max_excess"],
        "payload_bytes": int(header["payload_bytes"]), "file_bytes": int(header["_file_bytes"]),
        "checksum_ok": ok, "build_seconds": header.get("build_seconds"),
    }
    if regions:
        code, row = _region_faults(header, payload, board, k)
        info["rows"] = int(payload.shape[0])
        if code:
            info["histogram"] = {}
            info["decode_error"] = f"region row {row:,} has {pt.REGION_FAULTS[code]}"
            return info
        excess = payload[:, 3]
    else:
        info["entries_per_group"] = perm(board.n, k)
        info["entries"] = int(payload.size)
        excess = payload.reshape(-1)
        info["placements_with_excess"] = int(np.count_nonzero(excess))
    counts = np.bincount(excess, minlength=1) if excess.size else np.zeros(1, dtype=np.int64)
    info["histogram"] = {str(v): int(c) for v, c in enumerate(counts) if c}
    return info


def format_dynamic(info: dict[str, Any]) -> str:
    rows = info.get("rows")
    what = f"{rows:,} region rows" if rows is not None else \
        f"{info['entries']:,} entries ({info['groups']:,} groups of {info['entries_per_group']:,})"
    lines = [
        info["file"],
        f"  {info['kind']} table of every {pt.set_name(info['group_size'])[:-1]} of tiles, board {info['board']}, "
        f"goal {info['goal']}, format {info['format']} (pdbtool {info['pdbtool_version']})",
        f"  {what}, payload {info['payload_bytes']:,} bytes, file {info['file_bytes']:,} bytes",
        f"  checksum {'ok' if info['checksum_ok'] else 'MISMATCH (the file is damaged)'}",
        f"  max excess {info['max_excess']}" + (f", placements with an excess {info['placements_with_excess']:,}"
                                                 if "placements_with_excess" in info else ""),
    ]
    if info.get("decode_error"):
        lines.append(f"  damaged: {info['decode_error']}")
    lines.append("  histogram (excess over Manhattan: " + ("region rows" if rows is not None else "placements") + "):")
    total = sum(info["histogram"].values()) or 1
    for value, count in info["histogram"].items():
        lines.append(f"    {int(value):3d}: {count:>13,}  {'#' * max(1, round(40 * count / total))}")
    return "\n".join(lines)


__all__ = ["KINDS", "verify_dynamic_file", "describe_dynamic", "format_dynamic", "CHECKS"]
