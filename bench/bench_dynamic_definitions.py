"""Mean h(start) of candidate definitions of the dynamic pair/triple heuristic (no search).

Felner, Korf & Hanan (2004) publish, on Korf's 100, mean h(start) 40.43 with pairs and 42.79 with pairs and
triples (Felner's talk, docs/literature.md).  This measures, on the same instances, what each
candidate difference in the definition gives:

* blank rule of the group tables: ``ignored`` (tiles move into any free neighbour), ``minimized`` (the
  least over the blank's regions; pdbtool's default) or ``region`` (the blank's own region);
* which triples enter the cover: every triple (``cover``: those beyond their pairs' least cover are the
  ones that matter) or only those whose excess exceeds the sum of their pairs' (``sum``, Felner et al.);
* the cover's granularity: whole units of two moves per tile (pdbtool), single moves per tile
  (``moves``: a triangle of 2-move conflicts then costs 3), or single moves rounded up to the parity of
  Manhattan (``moves+parity``); and a maximum matching of the pairs instead of the cover (``matching``).

Every figure is computed from the group tables and an exact cover here, independently of the search's
incremental graph.  Writes bench/results/dynamic_definitions.json.

    python bench/bench_dynamic_definitions.py                     # Korf's 100
    python bench/bench_dynamic_definitions.py --board 5x5         # Korf & Felner's first ten 24-puzzles
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_dynamic import default_instances, read_instances, run_facts  # noqa: E402

from pdbtool.tables.build import build_table  # noqa: E402
from pdbtool.puzzle.board import Board  # noqa: E402
from pdbtool.tables.cache import TableCache  # noqa: E402
from pdbtool.tables.pairs_triples import get_regions, get_set, groups_of  # noqa: E402
from pdbtool.tables.ranking import TilePattern, manhattan_of_ranks  # noqa: E402
from pdbtool.heuristics.vertex_cover.exact_cover import min_cover  # noqa: E402


def ignored_excess(board: Board, k: int) -> np.ndarray:
    """(groups x entries) excess of the blank-ignored tables."""
    out = []
    for tiles in groups_of(board, k):
        pattern = TilePattern(board, tiles)
        table = build_table(pattern, "ignored", threads=1).table.astype(np.int64)
        md = manhattan_of_ranks(np.arange(pattern.entries, dtype=np.int64), pattern.n, k, pattern.md_rows())
        out.append(np.where(table == 255, 0, table - md))
    return np.array(out)


def group_values(board, k, excess, regions, state):
    """{tiles: excess in moves} of every group with an excess in ``state`` (tile in each cell)."""
    pos = {t: c for c, t in enumerate(state)}
    blank = pos[0]
    by_region = {}
    if regions is not None:
        for g, r, mask, e in regions:
            by_region.setdefault((int(g), int(r)), []).append((int(mask), int(e)))
    out = {}
    for gi, tiles in enumerate(groups_of(board, k)):
        r = TilePattern(board, tiles).rank([pos[t] for t in tiles])
        value = int(excess[gi, r])
        for mask, e in by_region.get((gi, r), ()):
            if mask >> blank & 1:
                value = e
        if value:
            out[tiles] = value
    return out


def max_matching(edges):
    """Largest total weight of vertex-disjoint pairs (exhaustive; conflict graphs are small)."""
    edges = sorted(edges)
    best = 0

    def extend(i, used, total):
        nonlocal best
        if total + sum(w for _, w in edges[i:]) <= best:
            return
        if i == len(edges):
            best = total
            return
        tiles, w = edges[i]
        if not used & set(tiles):
            extend(i + 1, used | set(tiles), total + w)
        extend(i + 1, used, total)

    extend(0, set(), 0)
    return best


def pair_cover(p, q, r):
    return min_cover([e for e in (((0, 1), p), ((0, 2), q), ((1, 2), r)) if e[1]], 3)


def heuristic(n, md, pairs, triples, triple_rule, granularity):
    """Manhattan plus the extra moves of one definition (excesses in moves)."""
    if granularity == "matching":
        return md + max_matching(list(pairs.items()))
    div = 2 if granularity == "units" else 1
    edges = [(g, v // div) for g, v in pairs.items()]
    for (a, b, c), v in (triples or {}).items():
        p = [pairs.get(x, 0) for x in ((a, b), (a, c), (b, c))]
        if triple_rule == "sum" and v <= sum(p):
            continue
        if triple_rule == "cover" and div == 2 and v // 2 <= pair_cover(*(x // 2 for x in p)):
            continue  # implied by its pairs in whole units: no change to the cover
        edges.append(((a, b, c), v // div))
    extra = min_cover(edges, n) * div
    if granularity == "moves+parity":
        extra += extra & 1
    return md + extra


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--board", default="4x4")
    ap.add_argument("--out", default=str(HERE / "results" / "dynamic_definitions.json"))
    args = ap.parse_args()
    board = Board.parse(args.board)
    path = default_instances(board)
    states = [s for _, s, _ in read_instances(path, board.n)]
    facts = run_facts()
    cache = TableCache(None)
    mdt = board.manhattan_table()
    md = [int(sum(mdt[t, c] for c, t in enumerate(s) if t)) for s in states]
    rules = ["minimized", "region"] + (["ignored"] if board.n <= 16 else [])
    values = {}
    for k in (2, 3):
        minimized = np.asarray(get_set(cache, board, k))
        for rule in rules:
            excess = ignored_excess(board, k) if rule == "ignored" else minimized
            regions = np.asarray(get_regions(cache, board, k)) if rule == "region" else None
            values[k, rule] = [group_values(board, k, excess, regions, s) for s in states]
            print(f"{['pairs', 'triples'][k - 2]} {rule}: done", file=sys.stderr, flush=True)
    rows = []

    def add(name, pair_rule, triple_rule_blank, triple_rule, granularity):
        hs = [heuristic(board.n, md[i], values[2, pair_rule][i],
                        values[3, triple_rule_blank][i] if triple_rule_blank else None, triple_rule, granularity)
              for i in range(len(states))]
        rows.append({"definition": name, "pairs": pair_rule, "triples": triple_rule_blank,
                     "triple_rule": triple_rule, "granularity": granularity, "mean_h": round(float(np.mean(hs)), 3),
                     "h": hs})
        print(f"{name}: mean h {np.mean(hs):.2f}  (first: {hs[0]})", flush=True)

    print(f"{board.dims}, {len(states)} instances: mean Manhattan {np.mean(md):.2f}")
    for rule in rules:
        add(f"pairs, blank {rule}", rule, None, None, "units")
    add("pairs, blank minimized, single moves", "minimized", None, None, "moves")
    add("pairs, blank minimized, maximum matching", "minimized", None, None, "matching")
    for rule in rules:
        add(f"pairs+triples, blank {rule}", rule, rule, "cover", "units")
    add("pairs+triples, blank minimized, triples beyond the sum of their pairs (FKH)", "minimized", "minimized", "sum",
        "units")
    add("pairs+triples, blank minimized, single moves", "minimized", "minimized", "cover", "moves")
    add("pairs+triples, blank minimized, single moves + parity", "minimized", "minimized", "cover", "moves+parity")
    add("pairs+triples, pairs by region, triples minimized", "region", "minimized", "cover", "units")
    if "ignored" in rules:
        add("pairs+triples, pairs minimized, triples ignored", "minimized", "ignored", "cover", "units")
    out = Path(args.out)
    results = json.loads(out.read_text()) if out.exists() else {}
    results[board.dims] = {"run": facts, "instances_file": path.name, "mean_manhattan": float(np.mean(md)),
                           "definitions": rows}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
