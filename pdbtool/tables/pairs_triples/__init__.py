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

The modules: :mod:`.sets` (the definitions), :mod:`.builders` (the excess and region rows of the groups),
:mod:`.files` (the cached files and their checks), :mod:`.lookups` (the search's look-ups); this package
loads and builds whole sets.  Their public names are imported from this package.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from math import comb

import numpy as np

from .. import fileformat
from ...puzzle.board import Board
from .builders import build_regions, build_set, goal_splits, group_distances, group_excess, group_regions
from .files import (REGION_FAULTS, board_of, check_header, check_region_rows, check_set_values, file_name,
                    get_regions, get_set, goal_ranks, header_for, load_regions, load_set, regions_header_for)
from .lookups import DynamicTables, make_lookups, pair_bound, pair_units_at
from .sets import (ENCODING, GOAL_RULES, KEEP_AGAINST, MAX_SET_BYTES, PAIR_BY_REGION, TRIPLE_RULES,
                   DynamicError, SetDefinition, check_set, check_size, groups_of, parse_set, set_name)


def load_dynamic(board: Board, name: str = "pairs+triples", cache=None, cache_dir=None, jobs: int | None = None,
                 notify: Callable[[str], None] | None = None) -> DynamicTables:
    """The look-ups of a dynamic set (one of :data:`DYNAMIC_SETS`), building its tables if needed."""
    definition = parse_set(name)
    check_size(board, name)
    if cache is None:
        from ..cache import TableCache

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


__all__ = ["ENCODING", "PAIR_BY_REGION", "DynamicError", "TRIPLE_RULES", "KEEP_AGAINST", "GOAL_RULES", "SetDefinition",
           "parse_set", "check_set", "groups_of", "set_name", "MAX_SET_BYTES", "check_size",
           "group_excess", "group_distances", "goal_splits", "group_regions", "build_set", "build_regions",
           "file_name", "header_for", "regions_header_for", "check_header", "REGION_FAULTS", "goal_ranks", "board_of",
           "check_set_values", "check_region_rows", "load_set", "load_regions", "get_set", "get_regions",
           "pair_units_at", "pair_bound", "DynamicTables", "make_lookups",
           "load_dynamic", "build_dynamic", "total_groups"]
