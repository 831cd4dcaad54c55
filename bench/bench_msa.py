"""Multiple sequence alignment beside PA-Star (issue 54): the same instances, the same cost model (PA-Star's
own, ``--cost pastar``), both solvers in the same run, each in a process of its own under the same limits.

    python bench/bench_msa.py [--part side,balibase,synthetic] [--names 1idy,3cyr] [--max-seqs K]
                              [--limit N] [--resume] [--time-limit 120] [--retry-limit 600] [--memory 16G]
                              [--balibase TARBALL] [--pastar-source TARBALL] [--peers DIR] [--quick]

Parts, each its own result file (``bench/results/msa_<part>.json``):

* ``side``: a few short BAliBASE instances (``--names`` for others), pdbtool (three-way heuristic) with one
  thread beside serial ``msa_astar`` and ``msa_pastar -t 1``, then with all cores beside ``msa_pastar -t
  CORES``.  Every instance that two solvers solve must have the same optimal cost: a difference is
  recorded, printed, scored with PA-Star's own matrix (``src/Cost.cpp``: whether it lies in the cost model
  or in the search) and makes the script exit with status 3.
* ``balibase``: reference 1, all 82 (the tarball's path: ``--balibase``), shortest lattice first: pdbtool's
  three-way heuristic and serial PA-Star within ``--time-limit`` CPU seconds and ``--memory`` each; the
  pairwise heuristics too on the instances of ``--pairwise-seqs`` sequences (their expanded nodes against the
  three-way ones): PA-Star's own (``--no-column-bound``) and with the bound on two-gap columns; then, with
  ``--retry-limit``, the instances neither solved at the first limit.
* ``synthetic``: the families of issue 54 (``--families``), generated with a fixed ``--seed``.

The limits are **CPU seconds** (``RLIMIT_CPU``; a shared machine inflates wall seconds) and an address-space
limit (``RLIMIT_AS``), the same for both solvers; a wall-clock limit of ``--wall-factor`` times the CPU limit
guards against a run starved by other work.  CPU seconds and peak resident memory are the child process's
own (``wait4``): pdbtool's include starting Python and loading its compiled kernels, PA-Star's its
pairwise set-up.  Records are written as they come; ``--resume`` keeps the records of the file and runs
only what is missing (without it the part starts afresh).  The peer is built from its source tarball into
``--peers`` (outside the repository; ``bench/peers/pastar.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _limited  # noqa: E402
import _msa_data  # noqa: E402
from _results import RESULTS, git_commit, load_average, metadata  # noqa: E402
from peers import pastar  # noqa: E402

ROOT = HERE.parent
SIDE_NAMES = ["1idy", "1fjlA", "3cyr", "1tgxA", "1r69", "1aab", "1hpi", "2fxb"]
QUICK_NAMES = ["3cyr", "1tgxA"]
DISAGREEMENT = 3
PYTHON_RESERVE = 1 << 30     # of the address-space limit, left to Python and Numba beside pdbtool's --memory


def parse_bytes(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    text = text.strip().upper().removesuffix("B").removesuffix("I")
    try:
        if text and text[-1] in units:
            return int(float(text[:-1]) * units[text[-1]])
        return int(text)
    except ValueError:
        raise SystemExit(f"--memory takes bytes such as 16G, not {text!r}") from None


# --- the solvers ------------------------------------------------------------------------------------------

def run_pdbtool(inst: _msa_data.Instance, heuristic: str, threads: int, limit: float, memory: int,
                wall_factor: float) -> dict:
    wall = limit * wall_factor + 60
    budget = max(memory - PYTHON_RESERVE, memory // 2)
    command = [sys.executable, str(HERE / "_msa_solve.py"), str(inst.path), "--heuristic", heuristic,
               "--threads", str(threads), "--time-limit", str(round(wall)), "--memory", str(budget)]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.setdefault("NUMBA_NUM_THREADS", str(threads))
    done = _limited.run(command, time_limit=wall + 30, memory_bytes=memory, cpu_limit=limit * threads, env=env)
    options = {"threeway": "--triangles auto", "pairwise-columns": "--triangles none",
               "pairwise": "--triangles none --no-column-bound"}[heuristic]
    record: dict = {"solver": "pdbtool", "heuristic": heuristic, "threads": threads,
                    "command": f"pdbtool solve --domain msa {inst.path.name} --cost pastar {options} --threads "
                               f"{threads} --memory {budget} --format json",
                    "process_cpu_seconds": done.cpu_seconds, "wall_seconds": done.wall_seconds,
                    "max_rss_bytes": done.peak_rss_bytes, "returncode": done.returncode}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if lines:
        own = json.loads(lines[-1])
        for key in ("cost", "solved", "expanded", "generated", "stored", "cpu_seconds", "peak_bytes",
                    "lower_bound", "upper_bound", "h_start", "heuristic", "search", "stopped", "table_bytes",
                    "table_seconds", "interface", "alignment", "error", "notes"):
            if key in own:
                record["pdbtool_heuristic" if key == "heuristic" else key] = own[key]
    record["solved"] = bool(record.get("solved")) and done.returncode == 0 and not done.timed_out
    if not record["solved"]:
        if done.timed_out:
            record["stopped_by"] = "time"
        elif record.get("stopped"):
            record["stopped_by"] = record["stopped"]
        elif "MemoryError" in done.stderr or "memory" in (record.get("error") or ""):
            record["stopped_by"] = "memory"
        else:
            record["stopped_by"] = "error"
        if not record.get("error") and not done.timed_out:
            record["error"] = done.tail() or f"exit status {done.returncode}"
    return record


def warm_up(scratch: Path, memory: int) -> None:
    """Solve a tiny instance with both heuristics, unmeasured, so that Numba's cache holds the compiled kernels
    before the first measured run (a first run after a change compiles them, tens of CPU seconds)."""
    path = scratch / "warm-up.fasta"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(">a\nMKVLAAGIW\n>b\nMKVLGAGW\n>c\nMRVLAAGIWC\n>d\nMKILAAW\n>e\nMKVAAGIW\n")
    inst = _msa_data.Instance("warm-up", "warm-up", path, _msa_data.fasta_lengths(path))
    for heuristic in ("pairwise", "pairwise-columns", "threeway"):
        for threads in (1, os.cpu_count() or 1):
            run_pdbtool(inst, heuristic, threads, 600, memory, 6.0)


def run_peer(binaries: Path, inst: _msa_data.Instance, threads: int | None, limit: float, memory: int,
             wall_factor: float) -> dict:
    cpu = limit * (threads or 1)
    return pastar.solve(binaries, inst.path, threads, time_limit=limit * wall_factor + 60, memory_bytes=memory,
                        cpu_limit=cpu)


# --- the result file --------------------------------------------------------------------------------------

class Results:
    """A part's result file: the runs that wrote it (their metadata) and its records, written after each."""

    def __init__(self, path: Path, resume: bool, settings: dict, command: list[str]):
        self.path = path
        data = {}
        if resume and path.exists():
            try:
                data = json.loads(path.read_text())
            except json.JSONDecodeError:
                raise SystemExit(f"{path} is not JSON: move it away or run without --resume") from None
        self.data = {"part": settings["part"], "settings": settings, "runs": data.get("runs", []),
                     "records": data.get("records", [])}
        self.started = time.time()
        self.data["runs"].append(metadata(command, self.started, load_average(), settings=settings))
        self.done = {self.key(r) for r in self.data["records"] if not no_verdict(r)}

    @staticmethod
    def key(r: dict) -> tuple:
        return (r["instance"], r["solver"], r.get("heuristic"), r["threads"], r["limit_cpu_seconds"])

    def has(self, **key) -> bool:
        return (key["instance"], key["solver"], key.get("heuristic"), key["threads"],
                key["limit_cpu_seconds"]) in self.done

    def add(self, record: dict) -> None:
        """Append ``record``, in place of a record of the same run that gave no verdict."""
        key = self.key(record)
        self.data["records"] = [r for r in self.data["records"] if self.key(r) != key]
        self.data["records"].append(record)
        self.done.add(self.key(record))
        self.save()

    def save(self) -> None:
        run = self.data["runs"][-1]
        run.update(metadata(run["command"], self.started, run["load_average_before"], settings=run["settings"]))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data, indent=1) + "\n")
        tmp.replace(self.path)


def no_verdict(record: dict) -> bool:
    """A run stopped by the wall-clock guard before it used its CPU limit (a starved run on a loaded machine):
    no verdict at that limit, so ``--resume`` runs it again.  Records written before the guard was told apart
    say ``time``; their CPU seconds tell."""
    if record.get("solved"):
        return False
    if record.get("stopped_by") == "wall":
        return True
    cpu = record.get("process_cpu_seconds", record.get("cpu_seconds"))
    limit = record.get("limit_cpu_seconds")
    return (record.get("stopped_by") == "time" and cpu is not None and bool(limit)
            and cpu < 0.95 * limit * record.get("threads", 1))


def stamp(record: dict, inst: _msa_data.Instance, limit: float, memory: int, load_before) -> dict:
    record = {"instance": inst.name, "group": inst.group, "k": inst.k, "lengths": list(inst.lengths),
              "limit_cpu_seconds": limit, "limit_memory_bytes": memory, **record}
    record["date"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    record["load_before"] = load_before
    record["load_after"] = load_average()
    record["commit"] = git_commit()
    if no_verdict(record):
        record["stopped_by"] = "wall"
    return record


def say(record: dict) -> None:
    what = record["solver"] + (f" {record['heuristic']}" if record.get("heuristic") else "") + \
        f" t{record['threads']}"
    if record["solved"]:
        nodes = record.get("expanded", record.get("closed"))
        outcome = f"cost {record['cost']:,}" + (f", {nodes:,} expanded" if nodes is not None else "")
    else:
        outcome = f"unsolved ({record.get('stopped_by')}{': ' + record['error'] if record.get('error') else ''})"
    cpu = record.get("process_cpu_seconds", record.get("cpu_seconds"))
    peak = record.get("max_rss_bytes", record.get("peak_bytes")) or 0
    print(f"  {record['instance']:<24} {what:<26} {outcome}; {cpu:.2f} CPU s, {peak / 2**20:,.0f} MiB "
          f"(load {record['load_before'][0] if record['load_before'] else '?'})", flush=True)


def cost_check(records: list[dict], matrix: dict | None) -> list[dict]:
    """The instances where two solved records differ in cost: one entry each, with PA-Star's cost of
    pdbtool's alignment (its own matrix) to tell a cost-model difference from a search's."""
    by_instance: dict[str, list[dict]] = {}
    for r in records:
        if r["solved"] and r.get("cost") is not None:
            by_instance.setdefault(r["instance"], []).append(r)
    out = []
    for name, rs in by_instance.items():
        costs = {r["cost"] for r in rs}
        if len(costs) > 1:
            entry = {"instance": name, "costs": {f"{r['solver']} {r.get('heuristic') or ''} t{r['threads']}".replace(
                "  ", " "): r["cost"] for r in rs}}
            mine = next((r for r in rs if r["solver"] == "pdbtool" and r.get("alignment")), None)
            if mine and matrix:
                entry["pastar_cost_of_pdbtool_alignment"] = pastar.alignment_cost(mine["alignment"], matrix)
            out.append(entry)
    return out


# --- the parts --------------------------------------------------------------------------------------------

def select(instances, args) -> list:
    if args.names:
        wanted = args.names.split(",")
        unknown = sorted(set(wanted) - {i.name for i in instances})
        if unknown:
            raise SystemExit(f"unknown instance(s): {', '.join(unknown)}")
        instances = [i for i in instances if i.name in wanted]
    if args.max_seqs:
        instances = [i for i in instances if i.k <= args.max_seqs]
    return instances[:args.limit] if args.limit else instances


def part_side(args, binaries, matrix, results: Results, instances) -> list[dict]:
    cores = os.cpu_count() or 1
    limit = args.time_limit
    for inst in instances:
        print(f"{inst.name} ({inst.k} x {'/'.join(map(str, inst.lengths))})", flush=True)
        for threads in ([1, cores] if cores > 1 else [1]):
            runs = [("pdbtool", "threeway", threads)]
            if threads == 1:
                runs += [("msa_astar", None, 1), ("msa_pastar", None, 1)]
            else:
                runs += [("msa_pastar", None, threads)]
            for solver, heuristic, t in runs:
                if solver not in args.solvers:
                    continue
                if results.has(instance=inst.name, solver=solver, heuristic=heuristic, threads=t,
                               limit_cpu_seconds=limit):
                    continue
                load = load_average()
                if solver == "pdbtool":
                    rec = run_pdbtool(inst, heuristic, t, limit, args.memory_bytes, args.wall_factor)
                else:
                    rec = run_peer(binaries, inst, None if solver == "msa_astar" else t, limit, args.memory_bytes,
                                   args.wall_factor)
                    rec["heuristic"] = None
                rec = stamp(rec, inst, limit, args.memory_bytes, load)
                results.add(rec)
                say(rec)
    return cost_check(results.data["records"], matrix)


def part_balibase(args, binaries, matrix, results: Results, instances) -> list[dict]:
    instances = sorted(instances, key=lambda i: i.size)
    limits = [args.time_limit] + ([args.retry_limit] if args.retry_limit else [])
    for n, limit in enumerate(limits):
        for inst in instances:
            if n > 0:     # the longer limit: only where neither solved at the first
                first = [r for r in results.data["records"] if r["instance"] == inst.name and not no_verdict(r)
                         and r["limit_cpu_seconds"] == limits[0] and r.get("heuristic") in (None, "threeway")]
                if len(first) < 2 or any(r["solved"] for r in first):
                    continue
            runs = [("pdbtool", "threeway"), ("msa_astar", None)]
            if n == 0 and inst.k in args.pairwise_seqs:
                runs[1:1] = [("pdbtool", h) for h in args.pairwise_heuristics]
            for solver, heuristic in runs:
                if solver not in args.solvers:
                    continue
                if results.has(instance=inst.name, solver=solver, heuristic=heuristic, threads=1,
                               limit_cpu_seconds=limit):
                    continue
                load = load_average()
                if solver == "pdbtool":
                    rec = run_pdbtool(inst, heuristic, 1, limit, args.memory_bytes, args.wall_factor)
                else:
                    rec = run_peer(binaries, inst, None, limit, args.memory_bytes, args.wall_factor)
                    rec["heuristic"] = None
                rec = stamp(rec, inst, limit, args.memory_bytes, load)
                rec.pop("alignment", None) if solver != "pdbtool" else None
                results.add(rec)
                say(rec)
    return cost_check(results.data["records"], matrix)


def part_synthetic(args, binaries, matrix, results: Results, instances) -> list[dict]:
    return part_balibase(argparse.Namespace(**{**vars(args), "retry_limit": None}), binaries, matrix, results,
                         instances)


PARTS = {"side": part_side, "balibase": part_balibase, "synthetic": part_synthetic}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", default="side,balibase,synthetic", help="comma-separated: side, balibase, synthetic")
    ap.add_argument("--names", default=None, help="comma-separated instance names (e.g. 1idy,3cyr)")
    ap.add_argument("--max-seqs", type=int, default=None, help="only instances of at most this many sequences")
    ap.add_argument("--limit", type=int, default=None, help="at most this many instances (shortest first)")
    ap.add_argument("--resume", action="store_true", help="keep the records of the result file, run the rest")
    ap.add_argument("--time-limit", type=float, default=120.0, help="CPU seconds per run and thread")
    ap.add_argument("--retry-limit", type=float, default=600.0,
                    help="balibase: CPU seconds on the instances neither solved at --time-limit (0: none)")
    ap.add_argument("--wall-factor", type=float, default=6.0,
                    help="the wall-clock guard, this times the CPU limit (plus a minute)")
    ap.add_argument("--memory", default="16G", help="address-space limit per run")
    ap.add_argument("--solvers", default="pdbtool,msa_astar,msa_pastar",
                    help="which of pdbtool, msa_astar and msa_pastar to run (e.g. the peer alone, resumed later)")
    ap.add_argument("--pairwise-seqs", default="5,6", help="balibase: numbers of sequences also run pairwise")
    ap.add_argument("--pairwise-heuristics", default="pairwise,pairwise-columns",
                    help="balibase: the pairwise heuristics run there: pairwise (PA-Star's, no two-gap column "
                         "bound) and pairwise-columns (with it)")
    ap.add_argument("--balibase", type=Path, default=_msa_data.DEFAULT_BALIBASE, help="BAliBASE ref. 1 tarball")
    ap.add_argument("--families", default=",".join(_msa_data.FAMILIES), help="synthetic: e.g. 4x300,6x90")
    ap.add_argument("--seed", type=int, default=1, help="synthetic: the families' seed")
    ap.add_argument("--pastar-source", type=Path, default=pastar.DEFAULT_SOURCE)
    ap.add_argument("--peers", type=Path, default=pastar.DEFAULT_DEST, help="where PA-Star is built")
    ap.add_argument("--scratch", type=Path, default=Path(os.environ.get("PDBTOOL_PEERS", "/work/peers")) / "msa-data")
    ap.add_argument("--out-dir", type=Path, default=RESULTS)
    ap.add_argument("--quick", action="store_true", help="the side-by-side part on two short instances only")
    args = ap.parse_args(argv)
    args.memory_bytes = parse_bytes(args.memory)
    args.solvers = set(args.solvers.split(","))
    args.pairwise_seqs = {int(x) for x in args.pairwise_seqs.split(",") if x}
    args.pairwise_heuristics = [h for h in args.pairwise_heuristics.split(",") if h]
    if set(args.pairwise_heuristics) - {"pairwise", "pairwise-columns"}:
        raise SystemExit("--pairwise-heuristics takes pairwise and pairwise-columns")
    parts = ["side"] if args.quick else args.part.split(",")
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        raise SystemExit(f"unknown part(s) {', '.join(unknown)}: choose from {', '.join(PARTS)}")
    try:
        binaries = pastar.build(args.pastar_source, args.peers, quiet=False)
    except pastar.PeerError as e:
        raise SystemExit(f"bench_msa: {e}") from None
    matrix = pastar.cost_matrix(args.peers)
    peer = {"name": "PA-Star", "repository": pastar.REPOSITORY, "version": pastar.version(binaries),
            "source": str(args.pastar_source), "source_sha256": (args.peers / ".source-sha256").read_text().strip()}
    command = [Path(sys.executable).name, *sys.argv] if argv is None else ["python", "bench/bench_msa.py", *argv]
    disagreements = []
    if {"pdbtool"} & args.solvers:
        print("warming up pdbtool's compiled kernels", flush=True)
        warm_up(args.scratch, args.memory_bytes)
    for part in parts:
        if part == "synthetic":
            instances, source = _msa_data.synthetic(args.families.split(","), args.seed, args.scratch)
        else:
            instances = _msa_data.balibase(args.balibase, args.scratch)
            source = {"balibase": str(args.balibase), "instances": len(instances)}
            if part == "side" and not args.names:
                wanted = QUICK_NAMES if args.quick else SIDE_NAMES
                instances = [i for i in instances if i.name in wanted]
        instances = select(instances, args)
        settings = {"part": part, "time_limit_cpu_seconds": args.time_limit, "memory_bytes": args.memory_bytes,
                    "retry_limit_cpu_seconds": args.retry_limit if part == "balibase" else None,
                    "wall_factor": args.wall_factor, "peer": peer, "data": source,
                    "machine_memory_bytes": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"),
                    "platform": platform.platform()}
        results = Results(args.out_dir / f"msa_{part}.json", args.resume, settings, command)
        print(f"== {part}: {len(instances)} instances, {args.time_limit:g} CPU s and "
              f"{args.memory_bytes / 2**30:g} GiB each -> {results.path}", flush=True)
        found = PARTS[part](args, binaries, matrix, results, instances)
        results.data["cost_disagreements"] = found
        results.save()
        for d in found:
            print(f"DIFFERENT OPTIMAL COSTS on {d['instance']}: {d['costs']}"
                  + (f"; PA-Star's matrix scores pdbtool's alignment {d['pastar_cost_of_pdbtool_alignment']}"
                     if "pastar_cost_of_pdbtool_alignment" in d else ""), file=sys.stderr)
        disagreements += found
    if disagreements:
        sys.exit(DISAGREEMENT)


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as e:
        sys.exit(f"bench_msa: {e}")
