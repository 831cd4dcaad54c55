"""One pdbtool sequence alignment in a process of its own, for ``bench/bench_msa.py``: prints pdbtool's JSON
record of the instance on its last line.

    python bench/_msa_solve.py FASTA [--heuristic pairwise|pairwise-columns|threeway] [--threads N]
                                     [--time-limit S] [--memory SIZE]

It runs ``pdbtool solve --domain msa FASTA --cost pastar --triangles none|auto --format json`` (``pairwise``
is ``--triangles none --no-column-bound``, PA-Star's own heuristic; ``pairwise-columns`` the same tables with
the bound on two-gap columns; ``threeway`` the automatic choice of triangles) when the command line has the
domain, else the domain's own command (``pdbtool.msa.commands.COMMANDS["solve"]``, before the registry is
merged), else the library (``pdbtool.msa.search.align``, before the commands exist), and says which in the
record's ``interface``.
"""

from __future__ import annotations

import argparse
import io
import json
import time
from contextlib import redirect_stdout


HEURISTICS = ["pairwise", "pairwise-columns", "threeway"]


def cli_arguments(args) -> list[str]:
    out = [args.fasta, "--cost", "pastar", "--triangles", "auto" if args.heuristic == "threeway" else "none",
           "--format", "json"]
    if args.heuristic == "pairwise":
        out.append("--no-column-bound")
    if args.memory:
        out += ["--memory", args.memory]
    if args.threads:
        out += ["--threads", str(args.threads)]
    if args.time_limit:
        out += ["--time-limit", str(args.time_limit)]
    return out


def through_registry(args) -> dict | None:
    try:
        from pdbtool import domains  # (the registry, once merged)
        from pdbtool.cli.main import cli
    except ImportError:
        return None
    if "msa" not in str(getattr(domains, "DOMAINS", "")):
        return None
    return _invoke(cli, ["solve", "--domain", "msa", *cli_arguments(args)], "cli")


def through_commands(args) -> dict | None:
    try:
        from pdbtool.msa.commands import COMMANDS
    except ImportError:
        return None
    return _invoke(COMMANDS["solve"], cli_arguments(args), "commands")


def _invoke(command, argv, interface) -> dict:
    buffer = io.StringIO()
    code = 0
    with redirect_stdout(buffer):
        try:
            command.main(argv, prog_name="pdbtool", standalone_mode=False)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    records = [json.loads(line) for line in buffer.getvalue().splitlines() if line.startswith("{")]
    records = [r for r in records if "id" in r]
    if not records:
        return {"solved": False, "error": f"no JSON record (exit status {code})", "interface": interface}
    record = records[-1]
    record["interface"] = interface
    record["exit_status"] = code
    return record


def through_library(args) -> dict:
    from pdbtool.errors import PdbtoolError
    from pdbtool.msa.costs import make_model
    from pdbtool.msa.search import align, max_rss_bytes
    from pdbtool.msa.sequences import read_fasta

    c0 = time.process_time()
    try:
        inst = read_fasta(args.fasta)
        model = make_model("pastar", inst.alphabet)
        memory = None
        if args.memory:
            from pdbtool.msa.commands import parse_size
            memory = parse_size(args.memory)
        result = align(inst, model, partitions=None if args.heuristic == "threeway" else [],
                       time_limit=args.time_limit, threads=args.threads, memory=memory,
                       column_bound=args.heuristic != "pairwise")
    except PdbtoolError as exc:
        return {"id": args.fasta, "solved": False, "error": str(exc), "interface": "library"}
    return {"id": inst.id, "solved": result.solved, "cost": result.cost, "alignment": result.rows,
            "lower_bound": result.lower_bound, "upper_bound": result.upper_bound, "h_start": result.h_start,
            "expanded": result.expanded, "generated": result.generated, "stored": result.stored,
            "heuristic": result.heuristic, "search": result.search, "stopped": result.stopped,
            "table_bytes": result.table_bytes, "table_seconds": round(result.table_seconds, 3),
            "seconds": round(result.seconds, 3), "cpu_seconds": round(result.cpu_seconds, 3),
            "process_cpu_seconds": round(time.process_time() - c0, 3),
            "peak_bytes": result.peak_bytes, "max_rss_bytes": max_rss_bytes(), "notes": result.notes,
            "error": None, "interface": "library"}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("fasta")
    ap.add_argument("--heuristic", choices=HEURISTICS, default="threeway")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--memory", default=None, help="pdbtool's memory budget (e.g. 15G)")
    args = ap.parse_args(argv)
    record = through_registry(args) or through_commands(args) or through_library(args)
    print(json.dumps(record))


if __name__ == "__main__":
    main()
