"""Benchmark of ``pdbtool plan``'s plans on the 35-puzzle at the talk's memory (issue 55, target 1).

Each partition or catalogue file given (e.g. the built-in 35-5-5-5-5-5-5-5) is scored on one sample of random
solvable 6x6 states, with its diagonal reflection (as ``solve`` takes it by default): the mean h, the least h
and Korf, Reid & Edelkamp's predicted nodes of an iteration from a random start relative to Manhattan's on
the same states (the plan's own score, ``pdbtool.plan.scoring``, over more states).  Relative to dynamic
pairs + triples, that ratio is multiplied by Manhattan's predicted nodes over pairs + triples' from
``bench/results/p35.json`` (10^8 states each, the bound-independent ratio), so that the dynamic tables
need not be built and sampled again.  The talk's static fives: mean h 139.82, 11.5 times pairs + triples'
nodes (docs/literature.md); the built-in fives with the reflection over 10^8 states, from p35.json, stand
beside them.  Writes ``bench/results/plan_35.json``.

    nice -n 5 .venv/bin/python bench/bench_plan.py --plans partitions/35-317MB.txt:nibble [--samples 1e6] [--seed 36]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _results import RESULTS, load_average, write  # noqa: E402

BUILTIN = "35-5-5-5-5-5-5-5"
TALK = {"mean_h": 139.82, "relative_to_pairs_triples": 11.5}


def p35_rows(path: Path = RESULTS / "p35.json") -> dict:
    """bench_35's rows by heuristic (its relative nodes are over dynamic pairs + triples', bound-independent)."""
    return {r["heuristic"]: r for r in json.loads(path.read_text())["rows"]}


def first_value(d: dict) -> float:
    return float(next(iter(d.values())))


def candidate_of(spec: str, board):
    """(name, candidate) of ``FILE`` or ``FILE:ENCODING`` (the tables' encoding, byte by default)."""
    from pdbtool.plan.space import Candidate
    from pdbtool.tables.partitions import Catalogue, load_partition

    path, _, encoding = spec.partition(":")
    part = load_partition(path, board)
    parts = part.partitions if isinstance(part, Catalogue) else (part,)
    return part.name, Candidate.make([[p.tiles for p in q.patterns] for q in parts], encoding or "byte")


def add_scoring_options(ap: argparse.ArgumentParser, seed: int, out: str) -> None:
    """The options of the sample the plans are scored on, and of the result file."""
    ap.add_argument("--samples", type=float, default=1e6)
    ap.add_argument("--seed", type=int, default=seed)
    ap.add_argument("--threads", type=int, default=2, help="threads of the builds of missing tables")
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--out", default=str(RESULTS / out))


def manhattan_scorer(board, args):
    """(scorer, cost model) of blank-minimized tables with the reflection, relative to Manhattan, on
    ``args.samples`` random states of ``board`` (seed ``args.seed``): the planner's own score."""
    from pdbtool.plan.scoring import SampleSet, Scorer
    from pdbtool.plan.space import CostModel
    from pdbtool.tables.cache import TableCache

    samples = SampleSet(board, int(args.samples), args.seed)
    scorer = Scorer(board, "minimized", True, samples, TableCache(args.cache_dir), args.threads)
    scorer.set_reference("manhattan", samples.manhattan(range(1, board.n)))
    return scorer, CostModel(board, "minimized")


def write_result(path: str, out: dict, started: float, load_before, cpu: float) -> int:
    """Write ``out`` with its provenance (this command, the load, the process's CPU seconds since ``cpu``)."""
    write(Path(path), out, command=" ".join(sys.argv), started=started, load_before=load_before,
          cpu_seconds=round(time.process_time() - cpu, 1))
    print(f"written {path}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plans", nargs="+",
                    help="partition or catalogue files (or built-in names) to score, each as FILE or FILE:ENCODING")
    add_scoring_options(ap, 35, "plan_35.json")
    args = ap.parse_args(argv)
    from pdbtool.plan.scoring import score_of
    from pdbtool.puzzle.board import Board

    started, load_before, cpu = time.time(), load_average(), time.process_time()
    board = Board.parse("6x6")
    scorer, costs = manhattan_scorer(board, args)
    samples = scorer.samples
    p35 = p35_rows()
    md_over_dynamic = first_value(p35["manhattan"]["relative_nodes"])
    fives = p35["static fives + reflection"]
    rows = []
    for spec in args.plans:
        name, cand = candidate_of(spec, board)
        s = score_of(scorer, scorer.h(cand))
        c = costs.costs(cand)
        rows.append({"plan": name, "file": spec, "structure": cand.describe(), "encoding": cand.encoding,
                     "mean_h": round(s.mean_h, 4), "least_h": s.min_h, "relative_to_manhattan": s.relative,
                     "relative_to_pairs_triples": round(s.relative * md_over_dynamic, 3),
                     "tables": c.tables, "memory_bytes": c.memory,
                     "partitions": [[list(g) for g in m] for m in cand.members]})
        print(f"{name:>28} {cand.describe():>40}: mean h {s.mean_h:.3f}, least {s.min_h}, predicted nodes "
              f"{s.relative * md_over_dynamic:.3g} x pairs + triples', {c.tables} tables, {c.memory:,} bytes",
              flush=True)
    out = {"benchmark": "plan_35", "board": "6x6", "goal": "korf", "samples": samples.count, "seed": args.seed,
           "reflection": True, "bound": scorer.weights.bound if scorer.weights else None,
           "manhattan_over_pairs_triples": md_over_dynamic, "talk": TALK, "rows": rows,
           "builtin_fives": {"plan": BUILTIN, "mean_h": fives["mean"], "states": fives["states"],
                             "relative_to_pairs_triples": first_value(fives["relative_nodes"]),
                             "memory_bytes": fives["memory_bytes"], "from": "bench/results/p35.json"}}
    return write_result(args.out, out, started, load_before, cpu)


if __name__ == "__main__":
    sys.exit(main())
