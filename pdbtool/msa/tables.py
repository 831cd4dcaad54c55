"""The heuristic's tables in pdbtool's table file (``kind`` ``msa``) and cache.

One file holds one instance's tables under one cost model: the sequences' letter codes (so that ``verify``
can rebuild every value from the file alone), every pairwise table, and the region-limited three-way
tables of the partitions (with two-gap columns priced, each triangle's column-shifted table and its plain one
over the same region), all as little-endian 32-bit words.  The header names the sequences' hash, the
cost model, the lengths, the triangles, the partitions and the upper bound the regions were cut with.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from ..tables import fileformat
from ..tables.cache import TableCache
from ..tables.resources import check_disk
from .costs import COSTS, CostModel, make_model
from .heuristics import Heuristic, build

KIND = "msa"
LAYOUT = "triangles with plain and column-shifted cells"


def model_hash(model: CostModel) -> str:
    return xxhash.xxh64(repr(sorted(model.identity().items())).encode()).hexdigest()[:12]


def table_name(sequence_hash: str, model: CostModel, spec: str) -> str:
    tag = xxhash.xxh64(spec.encode()).hexdigest()[:8]
    return f"msa-{sequence_hash}-{model.name}-{model_hash(model)}-{tag}.pdb"


def _segments(h: Heuristic, codes: list[np.ndarray]) -> list[np.ndarray]:
    parts = [np.concatenate(codes).astype(np.uint32)]
    parts += [t.reshape(-1).view(np.uint32) for t in h.pair_tables + h.column_tables]
    for t, (lo, cnt, cells) in enumerate(zip(h.tri_lo, h.tri_cnt, h.tri_cells)):
        parts += [lo.view(np.uint32), cnt.view(np.uint32), cells.view(np.uint32)]
        if h.gap_gap:
            parts.append(h.tri_plain[t].view(np.uint32))
    return parts


def save(path: str | os.PathLike, h: Heuristic, model: CostModel, codes: list[np.ndarray],
         sequence_hash: str, spec: str) -> int:
    parts = _segments(h, codes)
    payload = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint32)
    header = fileformat.make_header(
        kind=KIND, sequences_hash=sequence_hash, cost={k: v for k, v in model.identity().items() if k != "matrix"},
        cost_hash=model_hash(model), lengths=list(h.lengths), triangles=[list(t) for t in h.triangles],
        partitions=h.partitions, upper_bound=h.upper_bound, spec=spec, entries=int(payload.shape[0]),
        cells=[int(c.size) for c in h.tri_cells], column_tables=h.gap_gap, plain_triangles=bool(h.gap_gap),
        build_seconds=round(h.seconds, 3),
        description=f"{len(h.lengths)} sequences, {h.describe()}")
    return fileformat.save(path, header, payload)


def _damaged(path, why: str) -> fileformat.TableFileError:
    return fileformat.TableFileError(f"{path}: damaged header ({why})")


def model_of(header: dict[str, Any], path="") -> CostModel:
    cost = header.get("cost")
    if not isinstance(cost, dict) or cost.get("cost") not in COSTS:
        raise _damaged(path, "cost model")
    alphabet = "dna" if cost["cost"] == "dna" else "protein"
    try:
        model = make_model(cost["cost"], alphabet, gap=cost.get("gap"), gap_open=cost.get("gap_open") or None,
                           gaps="affine" if cost.get("gap_open") else "linear")
    except Exception:
        raise _damaged(path, "cost model") from None
    if model_hash(model) != header.get("cost_hash"):
        raise _damaged(path, "its cost model is not one this pdbtool builds")
    return model


def load(path: str | os.PathLike, verify_checksum: bool = True) -> tuple[Heuristic, list[np.ndarray], dict]:
    """The tables of a file, the sequences' codes, and the header (every size checked against the payload)."""
    f = fileformat.load(path, verify_checksum)
    h = f.header
    if h.get("kind") != KIND:
        raise fileformat.TableFileError(f"{path}: not a multiple sequence alignment table")
    lengths, triangles, partitions = h.get("lengths"), h.get("triangles"), h.get("partitions")
    cells = h.get("cells")
    if not (isinstance(lengths, list) and 2 <= len(lengths) <= 12 and all(fileformat._whole(v, 1, 100_000)
                                                                         for v in lengths)):
        raise _damaged(path, "lengths")
    k = len(lengths)
    if not (isinstance(triangles, list) and all(isinstance(t, list) and len(t) == 3 and
                                                all(fileformat._whole(v, 0, k - 1) for v in t) and t[0] < t[1] < t[2]
                                                for t in triangles)):
        raise _damaged(path, "triangles")
    if not (isinstance(partitions, list) and all(isinstance(p, list) and all(fileformat._whole(v, 0, len(triangles) - 1)
                                                                            for v in p) for p in partitions)):
        raise _damaged(path, "partitions")
    if not (isinstance(cells, list) and len(cells) == len(triangles) and all(fileformat._whole(c) for c in cells)):
        raise _damaged(path, "cells")
    if not fileformat._whole(h.get("upper_bound"), 0, (1 << 30) - 1):
        raise _damaged(path, "upper_bound")
    model = model_of(h, path)
    columns = h.get("column_tables", 0)
    if columns not in (0, model.gap_gap):
        raise _damaged(path, "column_tables")
    if columns and triangles and h.get("plain_triangles") is not True:
        raise fileformat.TableFileError(f"{path}: tables of an earlier layout (each triangle's column-shifted "
                                        f"cells only): build them again")
    pairs = list(itertools.combinations(range(k), 2))
    sizes = [sum(lengths)] + [(lengths[i] + 1) * (lengths[j] + 1) for i, j in pairs] * (2 if columns else 1)
    for (a, b, _c), n in zip(triangles, cells):
        rows = (lengths[a] + 1) * (lengths[b] + 1)
        sizes += [rows, rows, n] + ([n] if columns else [])
    payload = f.payload
    if payload.dtype != np.uint32 or payload.shape[0] != sum(sizes) or h["entries"] != sum(sizes):
        raise fileformat.TableFileError(f"{path}: damaged header (the payload is not these tables' size)")
    parts = np.split(payload, np.cumsum(sizes)[:-1])
    flat = parts[0].astype(np.int64)
    if flat.size and flat.max() >= len(model.letters):
        raise fileformat.TableFileError(f"{path}: damaged table (a letter code past the cost model's alphabet)")
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    codes = [flat[offsets[i]:offsets[i + 1]].astype(np.int8) for i in range(k)]
    pair_tables = [parts[1 + n].view(np.int32).reshape(lengths[i] + 1, lengths[j] + 1)
                   for n, (i, j) in enumerate(pairs)]
    heur = Heuristic(tuple(lengths), pairs, pair_tables, [tuple(t) for t in triangles], upper_bound=h["upper_bound"],
                     partitions=[list(p) for p in partitions])
    base = 1 + len(pairs)
    if columns:
        heur.gap_gap = columns
        heur.column_tables = [parts[base + n].view(np.int32).reshape(lengths[i] + 1, lengths[j] + 1)
                              for n, (i, j) in enumerate(pairs)]
        base += len(pairs)
    per = 4 if columns else 3
    for t, n in enumerate(cells):
        lo, cnt, cell = (parts[base + per * t + i].view(np.int32) for i in range(3))
        a, b, c = triangles[t]
        if cnt.size and (cnt.min() < 0 or lo.min() < 0 or (lo.astype(np.int64) + cnt).max() > lengths[c] + 1
                         or int(cnt.sum(dtype=np.int64)) != n):
            raise fileformat.TableFileError(f"{path}: damaged table (a three-way region past its sequence)")
        heur.tri_lo.append(lo)
        heur.tri_cnt.append(cnt)
        heur.tri_cells.append(cell)
        if columns:
            heur.tri_plain.append(parts[base + per * t + 3].view(np.int32))
    return heur, codes, h


def verify_file(path: str | os.PathLike, threads: int | None = None) -> list[str]:
    """Rebuild every table of a file from the sequences it holds and compare value by value; the problems
    found (none: the file is sound)."""
    heur, codes, header = load(path)
    model = model_of(header, path)
    parts = [[tuple(heur.triangles[t]) for t in part] for part in heur.partitions]
    again = build(model, codes, parts if heur.triangles else [], memory=None, threads=threads,
                  column_bound=heur.gap_gap > 0)
    problems = []
    if again.upper_bound != heur.upper_bound:
        problems.append(f"upper bound {heur.upper_bound}, rebuilt {again.upper_bound}")
    for (i, j), mine, theirs in zip(heur.pairs + heur.pairs, heur.pair_tables + heur.column_tables,
                                    again.pair_tables + again.column_tables):
        bad = int(np.count_nonzero(mine != theirs))
        if bad:
            problems.append(f"pair {i}-{j}: {bad:,} values differ from a rebuild")
    for t, tri in enumerate(heur.triangles):
        idx = again.triangles.index(tri) if tri in again.triangles else -1
        if idx < 0 or not (np.array_equal(heur.tri_lo[t], again.tri_lo[idx])
                           and np.array_equal(heur.tri_cnt[t], again.tri_cnt[idx])
                           and np.array_equal(heur.tri_cells[t], again.tri_cells[idx])
                           and (not heur.gap_gap or np.array_equal(heur.tri_plain[t], again.tri_plain[idx]))):
            problems.append(f"triangle {'-'.join(map(str, tri))}: its region or values differ from a rebuild")
    return problems


def get_tables(cache: TableCache, model: CostModel, codes, sequence_hash: str, partitions, max_partitions: int,
               memory: int | None, threads: int | None, force: bool = False, reuse_only: bool = False,
               column_bound: bool = True, deadline: float | None = None):
    """The heuristic from the cache when a sound file holds it, else built (and stored unless ``reuse_only``)."""
    # the layout's name in the spec: a file of an earlier layout is another file, not a damaged one
    spec = repr((partitions, max_partitions, column_bound, LAYOUT))
    path = cache.dir / table_name(sequence_hash, model, spec)

    def read(p: Path) -> Heuristic:
        heur, stored_codes, header = load(p)
        if header.get("sequences_hash") != sequence_hash or header.get("cost_hash") != model_hash(model) \
                or len(stored_codes) != len(codes) \
                or any(not np.array_equal(a, b) for a, b in zip(stored_codes, codes)):
            raise fileformat.TableFileError(f"{p}: the tables of other sequences or another cost model")
        return heur

    if reuse_only:
        found = cache.load_sound(path, read) if path.exists() else None
        return (found if found is not None else
                build(model, codes, partitions, max_partitions, memory=memory, threads=threads,
                      column_bound=column_bound, deadline=deadline)), None

    def write(tmp: Path) -> None:
        heur = build(model, codes, partitions, max_partitions, memory=memory, threads=threads,
                     column_bound=column_bound, deadline=deadline)
        check_disk(cache.dir, heur.nbytes() + 4096, "the alignment tables")
        save(tmp, heur, model, codes, sequence_hash, spec)

    return cache.get_or_build(path, read, write, force=force), path
