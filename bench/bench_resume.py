"""Resume's cost: re-checking the held results of a results file of 10,000 15-puzzle instances.

Each held line is checked before it is trusted (``pdbtool.search.results_file.check_held``: its check hash,
its moves replayed to the goal, its length, ``# optimal`` and h(start)).  The results are made without a
search: the instances are random walks from the goal and each "solution" is its walk undone, a path to the
goal of the walk's length, written as ``pdbtool solve`` writes a line, with its check.  The figure is the
time of ``ResultsFile.open(..., resume=True)`` on the file, the way ``solve --output F --resume`` opens it
(CPU seconds too, the machine being shared); the target is at most 2 s for 10,000 lines.

    python bench/bench_resume.py [--count 10000] [--format json] [--heuristic manhattan]
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _results  # noqa: E402


def held_file(path: Path, fmt: str, count: int, solver, walk: int, seed: int):
    """Instances (random walks) and a results file that holds a line of each."""
    import numpy as np

    from pdbtool.puzzle.instances import Instance, ResultWriter
    from pdbtool.search.results_file import TEXT_HEADER, configuration
    from pdbtool.search.solver import SolveResult, result_check

    board = solver.board
    rng = np.random.default_rng(seed)
    nb = board.neighbours()
    goal = list(board.goal_tiles)
    items, lines = [], io.StringIO()
    writer = ResultWriter(lines, fmt)
    for k in range(count):
        tiles, blank, prev, moved = goal[:], goal.index(0), -1, []
        for _ in range(walk):
            moves = [m for m in range(4) if nb[blank, m] >= 0 and m + prev != 3]
            m = moves[rng.integers(len(moves))]
            q = int(nb[blank, m])
            moved.append(tiles[q])
            tiles[blank], tiles[q] = tiles[q], 0
            blank, prev = q, m
        inst = Instance(id=str(k + 1), source="walks.txt", line=k + 1, board=board, tiles=tuple(tiles))
        result = SolveResult(id=inst.id, board=board.dims, heuristic=solver.label, length=len(moved),
                             solution=moved[::-1], h0=int(solver.h(tiles)), solved=True, nodes_generated=1000,
                             nodes_expanded=600, seconds=0.01, iterations=5)
        result.check = result_check(board.dims, tiles, result)
        items.append(inst)
        writer.write(result)
    header = TEXT_HEADER + configuration({board.dims: solver.label}) + "\n" if fmt == "text" else ""
    path.write_text(header + lines.getvalue())
    return items


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--format", default="json", choices=["json", "text", "csv"])
    ap.add_argument("--heuristic", default="manhattan")
    ap.add_argument("--partition", default=None)
    ap.add_argument("--walk", type=int, default=60, help="moves of each instance's walk (its line's length)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=str(_results.RESULTS / "resume.json"))
    args = ap.parse_args(argv)
    started, load_before = time.time(), _results.load_average()

    from pdbtool.puzzle.board import Board
    from pdbtool.search.results_file import ResultsFile, check_held
    from pdbtool.search.solver import Solver

    extra = {"partition": args.partition} if args.partition else {}
    solver = Solver(Board(4, 4), heuristic=args.heuristic, **extra)
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"held.{args.format}"
        items = held_file(path, args.format, args.count, solver, args.walk, 1)
        solver.h(items[0].tiles)  # the kernel loaded before the clock starts
        size = path.stat().st_size
        for _ in range(args.rounds):
            os.sync()
            wall, cpu = time.perf_counter(), time.process_time()
            results = ResultsFile.open(path, args.format, items, {"4x4": solver.label}, resume=True,
                                       check=lambda inst, r: check_held(inst, r, solver))
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            held = len(results.held)
            results.close()
            assert held == args.count, held
            rounds.append({"wall_seconds": round(wall, 4), "cpu_seconds": round(cpu, 4)})
            print(f"{args.count} held lines ({size:,} bytes, {args.format}, {solver.label}): "
                  f"{wall:.3f} s wall, {cpu:.3f} s CPU", flush=True)
    best = min(r["cpu_seconds"] for r in rounds)
    data = {"benchmark": "resume", "count": args.count, "format": args.format, "heuristic": solver.label,
            "walk": args.walk, "file_bytes": size, "rounds": rounds, "best_cpu_seconds": best,
            "cpu_microseconds_per_line": round(best / args.count * 1e6, 2), "target_seconds": 2.0}
    print(f"best {best:.3f} CPU s: {best / args.count * 1e6:.1f} us a line")
    _results.write(args.out, data, started=started, load_before=load_before)


if __name__ == "__main__":
    main()
