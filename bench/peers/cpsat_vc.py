"""Minimum vertex cover by CP-SAT (OR-Tools), a peer of bench/bench_vcover.py: a boolean per vertex,
x_u + x_v >= 1 per edge, the sum minimised.  Prints one JSON line: status, size of the best cover, the
proven bound, the cover (1-based), CPU and wall seconds, and the number of workers CP-SAT chose.

    python bench/peers/cpsat_vc.py GRAPH [--time-limit S] [--workers N]

``--workers`` left out keeps CP-SAT's default (``num_workers = 0``: as many as the machine has cores).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _vcover_peers import read_graph  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graph")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args(argv)
    import ortools
    from ortools.sat.python import cp_model

    graph = read_graph(args.graph)
    model = cp_model.CpModel()
    x = [model.NewBoolVar(f"x{v}") for v in range(graph.vertices)]
    for u, v in graph.edges:
        model.AddBoolOr([x[u], x[v]])
    model.Minimize(sum(x))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = args.time_limit
    if args.workers:
        solver.parameters.num_workers = args.workers
    log: list[str] = []
    solver.parameters.log_search_progress = True      # read for the number of workers, not printed
    solver.parameters.log_to_stdout = False
    solver.log_callback = log.append
    cpu = time.process_time()
    status = solver.Solve(model)
    cpu = time.process_time() - cpu
    workers = next((int(m.group(1)) for line in log if (m := re.search(r"with (\d+) workers", line))), None)
    found = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    cover = [v + 1 for v in range(graph.vertices) if solver.Value(x[v])] if found else None
    print(json.dumps({"status": solver.StatusName(status), "size": round(solver.ObjectiveValue()) if found else None,
                      "bound": math.ceil(solver.BestObjectiveBound() - 1e-6) if found else None, "cover": cover,
                      "solve_cpu_seconds": round(cpu, 3), "wall_seconds": round(solver.WallTime(), 3),
                      "workers": workers, "version": ortools.__version__}))


if __name__ == "__main__":
    main()
