"""The longest BAliBASE instances (issue 54: 1bgl, 1taq, 1gpb), one at a time, with the search's progress kept:
what their tables cost, how the lower bound climbs, and what stops them (CPU or memory).

    python bench/bench_msa_longest.py FASTA... [--cpu-limit 300] [--memory 15] [--resume]

Each instance is solved in this process with PA-Star's cost model and the default three-way heuristic, one
thread, ``--memory`` GiB for pdbtool's budget (its search stops cleanly past it).  Every ``--every`` CPU
seconds the search's f (the lower bound), expansions, nodes stored and peak resident memory are recorded;
past ``--cpu-limit`` CPU seconds (tables and search together) the instance is stopped there, unsolved, its
last f the bound reached.  Records go to ``bench/results/msa_longest.json`` as each instance ends (``--resume``
keeps those already there); ``bench/report.py`` shows them on the MSA page.  Run it niced under an
address-space limit (``ulimit -v``) on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _results import RESULTS, git_commit, load_average, metadata  # noqa: E402


class CpuLimit(Exception):
    """The instance's CPU seconds ran out."""


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def solve(path: Path, cpu_limit: float, memory: int, every: float) -> dict:
    from pdbtool.msa import make_model
    from pdbtool.msa.heuristics import build, encode
    from pdbtool.msa.search import align
    from pdbtool.msa.sequences import read_fasta

    inst = read_fasta(str(path))
    model = make_model("pastar")
    record: dict = {"instance": inst.id, "k": inst.k, "lengths": list(inst.lengths), "threads": 1,
                    "cpu_limit_seconds": cpu_limit, "memory_bytes": memory, "load_before": load_average()}
    c0 = time.process_time()
    h = build(model, encode(model, inst.sequences), None, -1, memory=memory, threads=1)
    record.update(table_cpu_seconds=round(time.process_time() - c0, 1), table_bytes=h.nbytes(),
                  upper_bound=h.upper_bound, h_start=h.start_value(), heuristic=h.describe(),
                  rss_after_tables_bytes=peak_rss())
    trail: list[dict] = []
    last = [0.0]

    def progress(f, expanded, stored):
        spent = time.process_time() - c0
        if spent - last[0] >= every:
            last[0] = spent
            trail.append({"cpu_seconds": round(spent, 1), "f": f, "expanded": expanded, "stored": stored,
                          "max_rss_bytes": peak_rss()})
            print(json.dumps(trail[-1]), flush=True)
        if spent > cpu_limit:
            raise CpuLimit

    try:
        r = align(inst, model, heuristic=h, memory=memory, threads=1, progress=progress)
        record.update(solved=r.solved, cost=r.cost, lower_bound=r.lower_bound, stopped=r.stopped,
                      expanded=r.expanded, generated=r.generated, stored=r.stored, peak_bytes=r.peak_bytes,
                      notes=r.notes)
    except CpuLimit:
        last_seen = trail[-1] if trail else {}
        record.update(solved=False, cost=None, lower_bound=last_seen.get("f", record["h_start"]), stopped="cpu",
                      expanded=last_seen.get("expanded"), stored=last_seen.get("stored"))
    record.update(cpu_seconds=round(time.process_time() - c0, 1), max_rss_bytes=peak_rss(), progress=trail,
                  load_after=load_average(), commit=git_commit(),
                  date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    return record


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("fasta", nargs="+", type=Path)
    ap.add_argument("--cpu-limit", type=float, default=300.0, help="CPU seconds an instance, tables included")
    ap.add_argument("--memory", type=float, default=15.0, help="pdbtool's memory budget in GiB")
    ap.add_argument("--every", type=float, default=10.0, help="CPU seconds between progress records")
    ap.add_argument("--resume", action="store_true", help="keep the records already in the result file")
    ap.add_argument("--out", type=Path, default=RESULTS / "msa_longest.json")
    args = ap.parse_args(argv)
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    data = json.loads(args.out.read_text()) if args.resume and args.out.exists() else {"runs": [], "records": []}
    started = time.time()
    command = ["python", "bench/bench_msa_longest.py", *(argv if argv is not None else sys.argv[1:])]
    data["runs"].append(metadata(command, started, load_average(), settings={
        "time_limit_cpu_seconds": args.cpu_limit, "memory_bytes": int(args.memory * 2**30)}))
    done = {r["instance"] for r in data["records"]}
    for path in args.fasta:
        if path.stem in done:
            continue
        record = solve(path, args.cpu_limit, int(args.memory * 2**30), args.every)
        data["records"].append(record)
        data["runs"][-1].update(metadata(command, started, data["runs"][-1]["load_average_before"]))
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(data, indent=1) + "\n")
        print(f"{record['instance']}: " + (f"cost {record['cost']:,}" if record["solved"] else
                                           f"unsolved ({record['stopped']}), bound {record['lower_bound']:,} of "
                                           f"{record['upper_bound']:,}") + f"; {record['cpu_seconds']} CPU s",
              flush=True)


if __name__ == "__main__":
    main()
