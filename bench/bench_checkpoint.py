"""What ``solve --checkpoint`` costs: a checkpointed search against a plain one, and a search killed half way
and resumed against one that ran through.

Korf's instances whose Manhattan-distance search generates 50 to 65 million nodes (Korf's 1985 counts,
examples/korf100_md_nodes.txt), on one thread, taking turns: the plain search (``Solver.solve``); the same
with a checkpoint recorded every ``--every`` seconds (default units: iterations after one of four million
nodes cut into units of about 16 M nodes); and a checkpointed search stopped once it has generated half the
nodes (as a kill would, but with its last record written on the way out) and then resumed.  The node counts
of all three must be equal (the checkpointed search counts exactly as the plain one); the CPU seconds say
what the recording and the resumption cost.  Writes bench/results/checkpoint.json.

    python bench/bench_checkpoint.py [--ids 4,50,40] [--every 1] [--rounds 1]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import _results  # noqa: E402

from pdbtool.puzzle.board import Board  # noqa: E402
from pdbtool.puzzle.instances import load_instances  # noqa: E402
from pdbtool.search.solver import Solver  # noqa: E402


class Stop(Exception):
    pass


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ids", default="4,50,40", help="Korf instance ids")
    ap.add_argument("--heuristic", default="manhattan")
    ap.add_argument("--every", type=float, default=1.0, help="seconds between the checkpoint's records")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "checkpoint.json"))
    args = ap.parse_args(argv)
    started, load_before = time.time(), _results.load_average()
    korf = {i.id: i for i in load_instances(str(ROOT / "examples" / "korf100.txt"))}
    solver = Solver(Board(4, 4), heuristic=args.heuristic)
    solver.warm_up()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "ck.json")
        for _ in range(args.rounds):
            for ident in args.ids.split(","):
                inst = korf[ident]
                row = {"id": ident}
                cpu = time.process_time()
                plain = solver.solve(inst.tiles)
                row["plain"] = {"cpu_seconds": round(time.process_time() - cpu, 3), "nodes": plain.nodes_generated}
                cpu = time.process_time()
                recorded = solver.solve(inst.tiles, checkpoint=path, checkpoint_every=args.every)
                row["checkpointed"] = {"cpu_seconds": round(time.process_time() - cpu, 3),
                                       "nodes": recorded.nodes_generated}
                half = plain.nodes_generated // 2

                def stop_half(bound, generated, expanded):
                    if generated >= half:
                        raise Stop

                cpu = time.process_time()
                try:
                    solver.solve(inst.tiles, checkpoint=path, checkpoint_every=args.every, progress=stop_half)
                    raise SystemExit(f"instance {ident}: not stopped")
                except Stop:
                    pass
                killed = time.process_time() - cpu
                cpu = time.process_time()
                resumed = solver.solve(inst.tiles, checkpoint=path, checkpoint_every=args.every)
                row["stopped_and_resumed"] = {"cpu_seconds_first": round(killed, 3),
                                              "cpu_seconds_resumed": round(time.process_time() - cpu, 3),
                                              "nodes": resumed.nodes_generated}
                for name in ("checkpointed", "stopped_and_resumed"):
                    if row[name]["nodes"] != plain.nodes_generated:
                        raise SystemExit(f"instance {ident}: {name} counted {row[name]['nodes']:,} nodes, "
                                         f"the plain search {plain.nodes_generated:,}")
                print(row, flush=True)
                rows.append(row)
    total = {k: round(sum(r[k]["cpu_seconds"] for r in rows), 3) for k in ("plain", "checkpointed")}
    total["stopped_and_resumed"] = round(sum(r["stopped_and_resumed"]["cpu_seconds_first"]
                                             + r["stopped_and_resumed"]["cpu_seconds_resumed"] for r in rows), 3)
    data = {"heuristic": args.heuristic, "every_seconds": args.every, "runs": rows, "cpu_seconds_total": total,
            "checkpointed_over_plain": round(total["checkpointed"] / total["plain"], 3),
            "stopped_and_resumed_over_plain": round(total["stopped_and_resumed"] / total["plain"], 3)}
    print(data["cpu_seconds_total"], data["checkpointed_over_plain"], data["stopped_and_resumed_over_plain"])
    _results.write(args.out, data, started=started, load_before=load_before)


if __name__ == "__main__":
    main()
