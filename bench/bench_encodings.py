"""Compact encodings (issue 4): bytes on disk, bits per entry, conversion, load and lookup times.

For 15-6-6-3 and 15-7-8 (``--quick``: 15-6-6-3 only), under both blank rules, every encoding that applies
(mod3 and parity need blank-ignored tables).  The byte tables are built once into a cache directory
(default /tmp/pdbtool-bench-encodings) and reused by later runs; each conversion is timed from the cached
byte table.  Writes bench/results/encodings.json and prints a table.

Targets: mod3 at 1.6 bits per entry (the 7-8 tables in at most 116 MB), parity at 1 bit (at most 73 MB).
Also measured: how often a tile move changes a blank-minimized table by 3 or more (why mod3 and parity
refuse those tables), and the nanoseconds of a random lookup through each encoding's decoder.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

from pdbtool.tables import encodings as enc
from pdbtool.tables.cache import TableCache
from pdbtool.tables.partitions import load_partition
from pdbtool.tables.ranking import manhattan_of_ranks
from pdbtool.tables.table import PatternTable, convert_table

RESULTS = Path(__file__).resolve().parent / "results"
TARGET_BYTES = {("15-7-8", "mod3"): 116e6, ("15-7-8", "parity"): 73e6}
ENCODINGS = [("byte", None), ("nibble", None), ("sparse", None), ("mod3", None), ("parity", None),
             ("min-nibble", {"group": 2}), ("min-nibble", {"group": 4}), ("min-nibble", {"group": 8})]


@njit(cache=True)
def _lookups(code, payload, ranks, manhattan, parents, shift):
    addr = payload.ctypes.data
    s = 0
    for j in range(ranks.shape[0]):
        s += enc.value_at(code, addr, ranks[j], manhattan[j], parents[j], shift)
    return s


def lookup_ns(table: PatternTable, byte_values: np.ndarray, samples: int = 2_000_000) -> float:
    """Nanoseconds per lookup of random ranks (CHILD-H for mod3/parity, given a parent one away)."""
    rng = np.random.default_rng(0)
    p = table.pattern
    ranks = rng.integers(0, p.entries, samples)
    m = manhattan_of_ranks(ranks, p.n, p.k, p.md_rows())
    truth = byte_values[ranks].astype(np.int64)
    parents = truth + np.where(rng.random(samples) < 0.5, 1, -1)
    code = enc.CODES[table.encoding]
    shift = int(table.encoding_params.get("group", 1)).bit_length() - 1
    payload = np.asarray(table.values).view(np.uint8)
    _lookups(code, payload, ranks[:10], m[:10], parents[:10], shift)
    start = time.perf_counter()
    _lookups(code, payload, ranks, m, parents, shift)
    return 1e9 * (time.perf_counter() - start) / samples


def warm_up() -> None:
    """Compile (or load from Numba's cache) every encoder and decoder before anything is timed."""
    from pdbtool.tables.build import build_table
    from pdbtool.puzzle.board import Board
    from pdbtool.tables.ranking import TilePattern

    p = TilePattern(Board(3, 3), (1, 2, 3))
    values = build_table(p, "ignored").table
    for encoding, params in ENCODINGS:
        payload = enc.encode(values, p, "ignored", encoding, params).payload
        enc.decode(payload, p, encoding, params)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="15-6-6-3 only (no 8-tile table)")
    parser.add_argument("--cache-dir", default=os.environ.get("PDBTOOL_BENCH_CACHE", "/tmp/pdbtool-bench-encodings"))
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--partitions", nargs="*", default=None)
    args = parser.parse_args(argv)
    names = args.partitions or (["15-6-6-3"] if args.quick else ["15-6-6-3", "15-7-8"])
    cache = TableCache(args.cache_dir, notify=lambda msg: print(f"  {msg}", file=sys.stderr))
    warm_up()
    rows, jumps = [], []
    for name in names:
        part = load_partition(name)
        for blank in ("minimized", "ignored"):
            bytes_tables = []
            for p in part.patterns:
                start = time.perf_counter()
                t = cache.get(p, blank, threads=args.threads)
                print(f"  byte {name} {{{p}}} {blank}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
                bytes_tables.append(t)
            if blank == "minimized":
                for t in bytes_tables:
                    p = t.pattern
                    if p.k > 7:          # every move of 519 M placements: minutes; the 7-tile table suffices
                        continue
                    hist = enc.tile_move_deltas(np.asarray(t.values), p.n, p.k, p.board.neighbours(), 4096)
                    total = int(hist.sum())
                    jumps.append({"partition": name, "tiles": list(p.tiles), "moves": total,
                                  "by_change": {str(d): int(c) for d, c in enumerate(hist) if c},
                                  "share_3_or_more": round(float(hist[3:].sum()) / total, 5)})
            for encoding, params in ENCODINGS:
                if encoding in enc.NEEDS_CONSISTENT and blank != "ignored":
                    continue
                row = {"partition": name, "blank": blank, "encoding": encoding, "params": params or {},
                       "entries": 0, "payload_bytes": 0, "file_bytes": 0, "convert_seconds": 0.0,
                       "load_seconds": 0.0, "saturated": 0, "tables": []}
                for byte in bytes_tables:
                    p = byte.pattern
                    start = time.perf_counter()
                    if encoding == "byte":
                        path = byte.path
                    else:
                        table, extra = convert_table(byte, encoding, params, args.threads)
                        path = cache.path_for(p, blank, encoding, table.encoding_params)
                        cache.store(table, path, extra)
                        del table
                    convert = time.perf_counter() - start
                    start = time.perf_counter()
                    loaded = PatternTable.load(path)        # header checks, xxhash of the file, memory map
                    load = time.perf_counter() - start
                    info = loaded.header.get("conversion") or {}
                    ns = lookup_ns(loaded, np.asarray(byte.values))
                    entry = {"tiles": list(p.tiles), "entries": p.entries, "payload_bytes": int(loaded.values.nbytes),
                             "file_bytes": path.stat().st_size, "convert_seconds": round(convert, 3),
                             "load_seconds": round(load, 4), "lookup_ns": round(ns, 1)}
                    for key in ("saturated", "nonzero", "mean_loss", "encode_seconds"):
                        if key in info:
                            entry[key] = info[key]
                    if encoding == "byte":
                        entry["mean_h"] = round(float(np.asarray(byte.values).mean(dtype=np.float64)), 4)
                    row["tables"].append(entry)
                    row["entries"] += p.entries
                    row["payload_bytes"] += entry["payload_bytes"]
                    row["file_bytes"] += entry["file_bytes"]
                    row["convert_seconds"] += convert
                    row["load_seconds"] += load
                    row["saturated"] += int(info.get("saturated", 0))
                    del loaded
                row["bits_per_entry"] = round(8 * row["payload_bytes"] / row["entries"], 4)
                row["convert_seconds"] = round(row["convert_seconds"], 3)
                row["encode_seconds"] = round(sum(t.get("encode_seconds", 0.0) for t in row["tables"]), 3)
                row["load_seconds"] = round(row["load_seconds"], 4)
                if encoding == "min-nibble":   # mean drop of h over all entries, weighted by table size
                    row["mean_loss"] = round(sum(t["mean_loss"] * t["entries"] for t in row["tables"])
                                             / row["entries"], 4)
                target = TARGET_BYTES.get((name, encoding))
                if target:
                    row["target_file_bytes"] = target
                    row["meets_target"] = row["file_bytes"] <= target
                rows.append(row)
                label = encoding + (f" C={params['group']}" if params else "")
                print(f"{name:9s} {blank:9s} {label:14s} {row['file_bytes'] / 1e6:10.2f} MB  "
                      f"{row['bits_per_entry']:6.3f} b/entry  encode {row['encode_seconds']:6.2f} s  "
                      f"(+ write {row['convert_seconds'] - row['encode_seconds']:5.2f} s)  "
                      f"load {row['load_seconds']:6.3f} s  lookup "
                      + "/".join(f"{t['lookup_ns']:.0f}" for t in row["tables"]) + " ns"
                      + (f"  saturated {row['saturated']:,}" if row["saturated"] else "")
                      + (f"  mean loss {row['mean_loss']:.3f}" if "mean_loss" in row else "")
                      + (f"  target {target / 1e6:g} MB {'met' if row['meets_target'] else 'MISSED'}"
                         if target else ""), flush=True)
    for j in jumps:
        print(f"{j['partition']} {{{','.join(map(str, j['tiles']))}}} minimized: {j['share_3_or_more']:.2%} of "
              f"{j['moves']:,} tile moves change h by 3 or more {j['by_change']}")
    RESULTS.mkdir(exist_ok=True)
    report = {"time": time.strftime("%Y-%m-%dT%H:%M:%S"), "threads": args.threads, "cpu_count": os.cpu_count(),
              "rows": rows, "minimized_tile_move_changes": jumps}
    (RESULTS / "encodings.json").write_text(json.dumps(report, indent=2))
    print(f"wrote {RESULTS / 'encodings.json'}")


if __name__ == "__main__":
    main()
