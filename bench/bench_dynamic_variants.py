"""Node counts, iteration by iteration, of variants of the blank-region pair and triple heuristic on one
instance (default: 24-puzzle instance 1, whose published count with pairs and triples is 306,958,148 in
Felner's talk, docs/literature.md).

Each variant differs from ``pairs+triples-region`` in one point of the definition:

* ``goal-anywhere``: a group's abstract goal is its tiles at home with the blank anywhere, instead of in the
  goal blank's region (differs for the groups whose home cells cut off a cell, e.g. tiles 1 and 5 around
  cell 0, or 19 and 23 around cell 24);
* ``pairs-region-triples-minimized`` and ``pairs-minimized-triples-region``: only one group size follows
  the blank's region;
* ``region-fkh``: triples kept only beyond the sum of their pairs' values (Felner, Korf & Hanan 2004);
* ``region-keep-minimized``: triples kept beyond the least cover of their pairs' blank-minimized values
  (more triples, the same cover);
* ``region-w3-capped`` and ``region-w3-raised``: the triples worth three units (six moves, a few placements
  in which three tiles cut off cells) given two or four units: probes of how much those rare
  configurations weigh in the search (the second is not admissible);

and ``pairs+triples`` and ``pairs+triples-region`` themselves.  Every iteration is a search of its own
(``Search(..., one_iteration=True)``), so the counts add up to the whole search's.  With ``--states N``
the h of each variant is compared with ``pairs+triples-region``'s on N random states (walks from the goal).
Writes bench/results/dynamic_variants.json (merged by variant).

    python bench/bench_dynamic_variants.py --variants goal-anywhere,region-fkh
    nice -n 19 python bench/bench_dynamic_variants.py --states 6000 --max-bound 91   # quick: no last iterations
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_dynamic import default_instances, read_instances, run_facts  # noqa: E402

from pdbtool.heuristics.dynamic import DynamicHeuristic  # noqa: E402
from pdbtool.puzzle.board import Board  # noqa: E402
from pdbtool.search.driver import FOUND, R_NEXT, RUNNING, Search  # noqa: E402
from pdbtool.tables.cache import TableCache  # noqa: E402
from pdbtool.tables.pairs_triples import (DynamicTables, SetDefinition, get_regions, get_set, goal_splits,  # noqa: E402
                                          group_excess, group_regions, groups_of, load_dynamic, make_lookups)

REFERENCE = "pairs+triples-region"
VARIANTS = ("pairs+triples", REFERENCE, "goal-anywhere", "pairs-region-triples-minimized",
            "pairs-minimized-triples-region", "region-fkh", "region-keep-minimized", "region-w3-capped",
            "region-w3-raised")
NO_ROWS = np.zeros((0, 4), dtype=np.int64)


def anywhere_tables(board: Board, k: int, excess: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The excess array and region rows of size k with the goal 'blank anywhere': the groups whose home
    cells cut the free cells rebuilt, the others as they are."""
    excess = np.array(excess)
    changed = [i for i, g in enumerate(groups_of(board, k)) if goal_splits(board, g)]
    parts = [rows[~np.isin(rows[:, 0], changed)]]
    for i in changed:
        tiles = groups_of(board, k)[i]
        excess[i] = group_excess(board, tiles, goal="anywhere")[0]
        found = group_regions(board, tiles, goal="anywhere")
        parts.append(np.column_stack([np.full(len(found), i, dtype=np.int64), found]))
    out = np.concatenate(parts)
    return excess, out[np.lexsort((out[:, 2], out[:, 1], out[:, 0]))]


def with_w3(tables: DynamicTables, units: int) -> DynamicTables:
    """The look-ups with the triples worth 3 units given ``units`` instead."""
    ent = tables.tri_ent.copy()
    ent[(ent[:, 0] > 0) & (ent[:, 2] == 3), 2] = units
    return DynamicTables(tables.board, tables.name, tables.pair_units, tables.tri_start, ent)


def variant_tables(board: Board, variant: str, cache: TableCache) -> DynamicTables:
    if variant in ("pairs+triples", REFERENCE):
        return load_dynamic(board, variant, cache=cache, jobs=1)
    pairs, triples = get_set(cache, board, 2, jobs=1), get_set(cache, board, 3, jobs=1)
    pair_rows, triple_rows = get_regions(cache, board, 2, jobs=1), get_regions(cache, board, 3, jobs=1)
    region = SetDefinition((2, 3), True, "cover")
    if variant == "goal-anywhere":
        pairs, pair_rows = anywhere_tables(board, 2, pairs, pair_rows)
        triples, triple_rows = anywhere_tables(board, 3, triples, triple_rows)
    elif variant == "pairs-region-triples-minimized":
        triple_rows = NO_ROWS
    elif variant == "pairs-minimized-triples-region":
        pair_rows = NO_ROWS
    elif variant == "region-fkh":
        region = SetDefinition((2, 3), True, "sum")
    elif variant == "region-keep-minimized":
        region = SetDefinition((2, 3), True, "cover", keep_against="minimized")
    elif variant in ("region-w3-capped", "region-w3-raised"):
        return with_w3(load_dynamic(board, REFERENCE, cache=cache, jobs=1), 2 if variant.endswith("capped") else 4)
    else:
        raise SystemExit(f"unknown variant {variant!r}: choose from {', '.join(VARIANTS)}")
    return make_lookups(board, variant, pairs, triples, pair_rows, triple_rows, definition=region)


def iterations(heuristic: DynamicHeuristic, tiles, max_bound: int, label: str) -> dict:
    """Generated and expanded nodes of every iteration up to ``max_bound`` (the last one to the goal)."""
    bound = h0 = heuristic.value(tiles)
    rows, found = [], False
    cpu = time.process_time()
    while bound <= max_bound:
        search = Search(heuristic, tiles, bound=bound, one_iteration=True)
        while (status := search.step(50_000_000)) == RUNNING:
            pass
        rows.append({"bound": bound, "generated": search.generated, "expanded": search.expanded})
        print(f"{label}: bound {bound} generated {search.generated:,} (CPU {time.process_time() - cpu:.0f} s)",
              flush=True)
        if status == FOUND:
            found = True
            break
        bound = int(search.reg[R_NEXT])
    return {"h0": int(h0), "iterations": rows, "complete": found,
            "generated": sum(r["generated"] for r in rows) if found else None,
            "cpu_seconds": round(time.process_time() - cpu, 1)}


def random_states(board: Board, count: int, seed: int = 7) -> list[tuple[int, ...]]:
    rng = random.Random(seed)
    nb = board.neighbours()
    out = []
    for i in range(count):
        tiles = list(board.goal_tiles)
        blank = tiles.index(0)
        for _ in range((20, 40, 60, 200)[i % 4]):
            q = rng.choice([int(c) for c in nb[blank] if c >= 0])
            tiles[blank], tiles[q] = tiles[q], 0
            blank = q
        out.append(tuple(tiles))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--board", default="5x5")
    ap.add_argument("--instance", type=int, default=1, help="id in examples/korf24.txt (korf100.txt on 4x4)")
    ap.add_argument("--variants", default=",".join(VARIANTS[1:]))
    ap.add_argument("--max-bound", type=int, default=10 ** 6, help="stop after the iteration of this bound")
    ap.add_argument("--states", type=int, default=0, help="compare h with the reference on this many states")
    ap.add_argument("--cache-dir")
    ap.add_argument("--out", default=str(HERE / "results" / "dynamic_variants.json"))
    args = ap.parse_args()
    width, height = (int(x) for x in args.board.split("x"))
    board = Board(width, height)
    cache = TableCache(args.cache_dir)
    picked = [x for x in read_instances(default_instances(board), board.n) if x[0] == args.instance]
    if not picked:
        raise SystemExit(f"no instance {args.instance}")
    ident, tiles, optimal = picked[0]
    states = random_states(board, args.states) if args.states else []
    reference = DynamicHeuristic(load_dynamic(board, REFERENCE, cache=cache, jobs=1)) if states else None
    out_path = Path(args.out)
    results = json.loads(out_path.read_text()) if out_path.exists() else {}
    entry = results.setdefault(f"{board.dims} #{ident}", {"optimal": optimal, "variants": {}})
    for variant in args.variants.split(","):
        heuristic = DynamicHeuristic(variant_tables(board, variant, cache))
        record = {"run": run_facts(), "lookups": heuristic.tables.stats()}
        if states:
            h = np.array([heuristic.value(s) for s in states])
            ref = np.array([reference.value(s) for s in states])
            record["states"] = {"count": len(states), "lower": int((h < ref).sum()), "higher": int((h > ref).sum())}
            print(f"{variant}: h against {REFERENCE} on {len(states)} states: {record['states']}", flush=True)
        record.update(iterations(heuristic, tiles, args.max_bound, variant))
        record["load_average_after"] = run_facts()["load_average"]
        entry["variants"][variant] = record
        out_path.write_text(json.dumps(results, indent=1) + "\n")
        print(f"{variant}: {record['generated'] if record['complete'] else 'incomplete'} nodes", flush=True)


if __name__ == "__main__":
    main()
