"""The command line of ``--domain msa``: solve, build, inspect, verify and random (library: :mod:`pdbtool.msa`).

A module of the command-line layer: it parses, calls the library and prints.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from dataclasses import dataclass, field
from typing import Any

import click

from ..cli._common import (EXIT_DISAGREES, EXIT_FAILED, EXIT_OK, EXIT_USAGE, cache_dir_option, say, seed_option,
                           user_errors)

NAME = "msa"
HELP = "multiple sequence alignment: optimal sum-of-pairs alignments of FASTA files"
TABLE_KINDS = ("msa",)
INSTANCE_SUFFIXES = (".fasta", ".fa", ".faa", ".fas")
CSV_COLUMNS = ["id", "solved", "cost", "lower_bound", "upper_bound", "k", "lengths", "cost_model", "heuristic",
               "search", "expanded", "generated", "stored", "cpu_seconds", "seconds", "table_seconds",
               "peak_bytes", "max_rss_bytes", "stopped", "error"]
UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


FORMAT_CHOICE = click.Choice(["text", "json", "csv"])


class _Rows:
    """Records printed as they come: JSON Lines, or CSV rows under one header (``columns``)."""

    def __init__(self, fmt: str, columns: list[str]):
        self.fmt, self.columns, self.started = fmt, columns, False

    def __call__(self, record: dict, text: str) -> None:
        if self.fmt == "json":
            click.echo(json.dumps(record))
        elif self.fmt == "csv":
            import csv
            import io

            out = io.StringIO()
            writer = csv.writer(out, lineterminator="\n")
            if not self.started:
                writer.writerow(self.columns)
                self.started = True
            writer.writerow([json.dumps(record.get(c)) if isinstance(record.get(c), (list, dict))
                             else record.get(c) for c in self.columns])
            click.echo(out.getvalue(), nl=False)
        else:
            click.echo(text)


def parse_size(text: str | None) -> int | None:
    """``--memory``: bytes, or a number with K, M, G or T (powers of 1024)."""
    if text is None:
        return None
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = t[-1:] if t[-1:] in UNITS and t[-1:] else ""
    number = t[:-1] if unit else t
    try:
        value = float(number)
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a size such as 4G or 500M", param_hint="--memory") from None
    if not 0 < value < 1e18 or value != value:
        raise click.BadParameter(f"{text!r} is not a size above 0", param_hint="--memory")
    return int(value * UNITS[unit])


@dataclass(frozen=True)
class Settings:
    """What the options asked for, carried with each instance to the worker that solves it."""

    cost: str | None = None
    gaps: str = "linear"
    gap: int | None = None
    gap_open: int | None = None
    triangles: tuple[str, ...] = ("auto",)
    partitions: int = -1
    search: str = "astar"
    slack: int = 0
    memory: int | None = None
    threads: int | None = None
    cache_dir: str | None = None
    save_tables: bool = False
    show: str = "clustal"
    column_bound: bool = True


@dataclass(frozen=True)
class Job:
    """One instance of a batch (``error``: why its file could not be read)."""

    id: str
    instance: Any = None
    settings: Settings = field(default_factory=Settings)
    error: str | None = None


def model_for(instance, settings: Settings):
    from .costs import make_model

    cost = settings.cost or ("dna" if instance.alphabet == "dna" else "pastar")
    return make_model(cost, instance.alphabet, settings.gap, settings.gap_open, settings.gaps)


def solve_one(job: Job, time_limit: float | None) -> dict:
    """Align one instance (run in worker processes with --jobs): its record."""
    from .heuristics import encode, parse_partitions
    from .search import align, max_rss_bytes

    inst, s = job.instance, job.settings
    if s.threads:
        import numba

        numba.set_num_threads(min(s.threads, numba.config.NUMBA_NUM_THREADS))
    model = model_for(inst, s)
    partitions = parse_partitions(list(s.triangles), inst.k)
    heur = None
    result = None
    if s.cache_dir is not None or s.save_tables:
        if not model.affine:
            import time

            from ..tables.cache import TableCache
            from .heuristics import TablesStopped
            from .search import stopped_in_tables
            from .tables import get_tables

            t0, c0 = time.perf_counter(), time.process_time()
            try:
                heur, _ = get_tables(TableCache(s.cache_dir), model, encode(model, inst.sequences),
                                     inst.sequence_hash(), partitions, s.partitions, s.memory, s.threads,
                                     reuse_only=not s.save_tables, column_bound=s.column_bound,
                                     deadline=None if time_limit is None else t0 + time_limit)
            except TablesStopped as stop:
                result = stopped_in_tables(stop, s.search, t0, c0)
            if time_limit is not None and result is None:
                time_limit = max(0.0, time_limit - (time.perf_counter() - t0))
    if result is None:
        result = align(inst, model, partitions, s.partitions, s.search, s.slack, s.memory, time_limit, s.threads,
                       heuristic=heur, column_bound=s.column_bound)
    return {"id": job.id, "solved": result.solved, "optimal": result.solved, "cost": result.cost,
            "lower_bound": result.lower_bound, "upper_bound": result.upper_bound, "h_start": result.h_start,
            "alignment": result.rows, "names": list(inst.names), "k": inst.k, "lengths": list(inst.lengths),
            "alphabet": inst.alphabet, "cost_model": model.describe(), "heuristic": result.heuristic,
            "search": result.search, "expanded": result.expanded, "generated": result.generated,
            "pruned": result.pruned, "stored": result.stored, "cpu_seconds": round(result.cpu_seconds, 4),
            "seconds": round(result.seconds, 4), "table_seconds": round(result.table_seconds, 4),
            "peak_bytes": result.peak_bytes, "table_bytes": result.table_bytes, "max_rss_bytes": max_rss_bytes(),
            "stopped": result.stopped, "notes": result.notes, "file": inst.source, "file_hash": inst.digest,
            "error": None, "disagreement": None}


def check_held(job: Job, record: dict) -> str | None:
    """A held result is trusted only if its file is unchanged, its rows spell the sequences and its cost,
    recomputed under the same model, is the one recorded."""
    from .costs import alignment_cost

    inst = job.instance
    if inst is None:
        return "the instance cannot be read"
    if record.get("file_hash") != inst.digest:
        return "the FASTA file changed since"
    model = model_for(inst, job.settings)
    if record.get("cost_model") != model.describe():
        return f"solved under another cost model ({record.get('cost_model')})"
    rows = record.get("alignment")
    if not record.get("solved"):
        return "unsolved"
    if record.get("optimal") is not True:
        return "not marked optimal"
    if not isinstance(rows, list) or len(rows) != inst.k or not all(isinstance(r, str) for r in rows) \
            or len({len(r) for r in rows}) != 1:
        return "no alignment of these sequences"
    if any(r.replace("-", "") != seq for r, seq in zip(rows, inst.sequences)):
        return "its rows do not spell the sequences"
    try:
        cost = alignment_cost(model, rows)
    except Exception:
        return "its rows hold letters the cost model does not score"
    if cost != record.get("cost"):
        return f"its alignment costs {cost}, not the {record.get('cost')} recorded"
    return None


def text_line(record: dict, show: str = "clustal") -> str:
    from .sequences import format_clustal, format_fasta

    if record.get("error"):
        return f"{record['id']}: error: {record['error']}"
    head = (f"{record['id']}: {record['k']} sequences ({', '.join(map(str, record['lengths']))}), "
            f"{record['cost_model']}, {record['heuristic']}")
    stats = (f"{record['expanded']:,} expanded, {record['generated']:,} generated, {record['cpu_seconds']:.2f} s "
             f"CPU, peak {record['peak_bytes'] / 2**20:,.1f} MiB")
    if not record["solved"]:
        return (f"{head}: stopped ({record.get('stopped')}), cost between {record['lower_bound']} and "
                f"{record['upper_bound']}; {stats}")
    line = f"{head}: optimal cost {record['cost']}; {stats}"
    if show == "none" or not record.get("alignment"):
        return line
    body = (format_fasta if show == "fasta" else format_clustal)(record["names"], record["alignment"])
    return line + "\n" + body.rstrip("\n") + "\n"


def read_jobs(files: tuple[str, ...], alphabet: str, settings: Settings) -> tuple[list[Job], int]:
    """The jobs of the files named (a file that cannot be read becomes a job with its error); how many bad."""
    from .sequences import InstanceError, expand_paths, read_fasta

    jobs, bad = [], 0
    paths = expand_paths(list(files))
    stems = [os.path.splitext(os.path.basename(p))[0] if p != "-" else "stdin" for p in paths]
    for path, stem in zip(paths, stems):
        ident = stem if stems.count(stem) == 1 else path
        try:
            inst = read_fasta(path, alphabet, name=ident)
            model_for(inst, settings)
        except InstanceError as exc:
            jobs.append(Job(ident, None, settings, str(exc)))
            bad += 1
            continue
        except Exception as exc:
            from ..errors import PdbtoolError

            if not isinstance(exc, PdbtoolError):
                raise
            jobs.append(Job(ident, None, settings, f"{path}: {exc}"))
            bad += 1
            continue
        jobs.append(Job(ident, inst, settings))
    return jobs, bad


def cost_options(func):
    options = [
        click.option("--cost", type=click.Choice(["pastar", "pam250", "blosum62", "dna"]), default=None,
                     help="Cost model: pastar (PA-Star's PAM250 costs, gap 30, two gaps 30; default for "
                          "protein), pam250 or blosum62 (max score - score, two gaps free), dna (mismatch 1, "
                          "gap 2; default for DNA)."),
        click.option("--alphabet", type=click.Choice(["auto", "protein", "dna"]), default="auto", show_default=True,
                     help="Letters of the sequences (auto: DNA when every letter is one of ACGTN)."),
        click.option("--gaps", type=click.Choice(["linear", "affine"]), default="linear", show_default=True,
                     help="Gap costs: linear (per residue) or affine (an opening cost per gap run; exact for "
                          "two sequences only)."),
        click.option("--gap", type=click.IntRange(0, 10_000), default=None,
                     help="Cost of a residue against a gap (default: 30 pastar and pam250, 20 blosum62, 2 dna)."),
        click.option("--gap-open", type=click.IntRange(0, 10_000), default=None,
                     help="With --gaps affine: the cost added once per gap run."),
        click.option("--triangles", multiple=True, default=("auto",), show_default=True, metavar="auto|none|A-B-C,...",
                     help="Three-way tables: auto (the triangles that gain most at the start), none (pairwise "
                          "only), or a partition of triangles sharing no pair, e.g. 0-1-2,3-4-5 (repeat for "
                          "the max over several)."),
        click.option("--partitions", type=PartitionCount(), default="auto", show_default=True,
                     metavar="auto|all|N",
                     help="With --triangles auto: the max over the N best partitions, or all (every packing of "
                          "triangles: the best one at each node, and the triangles' average); auto: all up to "
                          "6 sequences, else 3."),
        click.option("--column-bound/--no-column-bound", default=True, show_default=True,
                     help="When two gaps cost something (pastar): also bound the columns where a pair has two "
                          "gaps (--no-column-bound: the plain pairwise tables of PA-Star, for comparison)."),
        click.option("--memory", default=None, metavar="SIZE",
                     help="Memory budget of an instance's tables and search, e.g. 4G (default: 80%% of the "
                          "memory available at the start)."),
        click.option("--threads", type=click.IntRange(1, 1024), default=None, metavar="N",
                     help="Threads of the table builds (default: all cores)."),
        cache_dir_option,
    ]
    for option in reversed(options):
        func = option(func)
    return func


class PartitionCount(click.ParamType):
    """``--partitions``: a count from 1 to 1000, ``all`` (0) or ``auto`` (-1)."""

    name = "auto|all|N"

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        word = str(value).strip().lower()
        if word in ("all", "auto"):
            return 0 if word == "all" else -1
        try:
            n = int(word)
        except ValueError:
            n = -1
        if not 1 <= n <= 1000:
            self.fail(f"{value!r} is neither auto, all, nor a count from 1 to 1000", param, ctx)
        return n


def _settings(cost, gaps, gap, gap_open, triangles, partitions, column_bound, memory, threads, cache_dir,
              **extra) -> Settings:
    return Settings(cost=cost, gaps=gaps, gap=gap, gap_open=gap_open, triangles=tuple(triangles),
                    partitions=partitions, column_bound=column_bound, memory=parse_size(memory), threads=threads,
                    cache_dir=cache_dir, **extra)


def _batch():
    from ..batch import batch_options

    return batch_options


@click.command("solve")
@click.argument("files", nargs=-1, required=True, metavar="FASTA...")
@cost_options
@click.option("--search", type=click.Choice(["astar", "pea"]), default="astar", show_default=True,
              help="astar: A* with duplicate detection; pea: partial-expansion A* (stores only the children "
                   "within --slack of their parent's f: far fewer nodes, more heuristic evaluations).")
@click.option("--slack", type=click.IntRange(0, 1 << 20), default=0, show_default=True,
              help="With --search pea: the children within this much of their parent's f are stored.")
@click.option("--show", type=click.Choice(["clustal", "fasta", "none"]), default="clustal", show_default=True,
              help="With --format text: the alignment as Clustal-like blocks, as FASTA, or not at all.")
@click.option("--save-tables", is_flag=True,
              help="Store each instance's tables in the cache (a cached table is reused whenever --cache-dir "
                   "or this option is given).")
@_batch()
@user_errors
def solve(files, cost, alphabet, gaps, gap, gap_open, triangles, partitions, column_bound, memory, threads, cache_dir,
          search, slack, show, save_tables, batch):
    """Optimal sum-of-pairs alignments of FASTA files (one instance a file; files, directories, -).

    \b
    Examples:
      pdbtool solve --domain msa family.fasta
      pdbtool solve --domain msa Ref1/ --triangles none --format json -o results.jsonl
      pdbtool solve --domain msa seqs.fa --cost blosum62 --gap 12 --show fasta
    """
    from ..batch import run_batch
    from .heuristics import parse_partitions

    settings = _settings(cost, gaps, gap, gap_open, triangles, partitions, column_bound, memory, threads, cache_dir,
                         search=search, slack=slack, save_tables=save_tables, show=show)
    jobs, bad = read_jobs(files, alphabet, settings)
    for job in jobs:
        if job.instance is not None:
            parse_partitions(list(triangles), job.instance.k)   # a malformed --triangles: one line, before any work
    status = run_batch(jobs, solve_one, batch, check_held=check_held, text_line=functools.partial(text_line, show=show),
                       csv_columns=CSV_COLUMNS, what="alignments")
    if bad and status in (EXIT_OK, EXIT_FAILED):
        status = EXIT_USAGE
    sys.exit(status)


@click.command("build")
@click.argument("files", nargs=-1, required=True, metavar="FASTA...")
@cost_options
@click.option("--force", is_flag=True, help="Build again even if the cache holds the tables.")
@click.option("--format", "fmt", type=FORMAT_CHOICE, default="text", show_default=True)
@user_errors
def build(files, cost, alphabet, gaps, gap, gap_open, triangles, partitions, column_bound, memory, threads, cache_dir,
          force, fmt):
    """Build and store the tables of FASTA instances (pairwise and three-way) in the cache."""
    from ..tables.cache import TableCache
    from .heuristics import encode, parse_partitions
    from .search import default_budget
    from .tables import get_tables

    settings = _settings(cost, gaps, gap, gap_open, triangles, partitions, column_bound, memory, threads, cache_dir)
    jobs, bad = read_jobs(files, alphabet, settings)
    cache = TableCache(cache_dir, notify=say)
    failed = 0
    emit = _Rows(fmt, ["id", "path", "heuristic", "upper_bound", "h_start", "bytes", "cost_model"])
    for job in jobs:
        if job.error:
            say(job.error)
            continue
        inst = job.instance
        model = model_for(inst, settings)
        if model.affine:
            say(f"{job.id}: affine gaps have no tables (two sequences are aligned by Gotoh's recurrence)")
            failed += 1
            continue
        heur, path = get_tables(cache, model, encode(model, inst.sequences), inst.sequence_hash(),
                                parse_partitions(list(triangles), inst.k), partitions,
                                settings.memory or default_budget(), threads, force=force,
                                column_bound=column_bound)
        record = {"id": job.id, "path": str(path), "heuristic": heur.describe(), "upper_bound": heur.upper_bound,
                  "h_start": heur.start_value(), "bytes": os.path.getsize(path), "cost_model": model.describe()}
        emit(record, f"{job.id}: {record['heuristic']}, start value {record['h_start']}, upper bound "
                     f"{record['upper_bound']}, {record['bytes'] / 2**20:,.1f} MiB: {path}")
    sys.exit(EXIT_USAGE if bad else (EXIT_FAILED if failed else EXIT_OK))


@click.command("inspect")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False), metavar="TABLE...")
@click.option("--format", "fmt", type=FORMAT_CHOICE, default="text", show_default=True)
@user_errors
def inspect(files, fmt):
    """What an alignment table file holds: its sequences, cost model, tables and start values."""
    from .tables import load

    emit = _Rows(fmt, ["path", "lengths", "cost", "gap", "gap_gap", "heuristic", "triangles", "cells",
                       "full_cells", "upper_bound", "h_start", "sequences_hash", "bytes"])
    for path in files:
        heur, _, header = load(path, verify_checksum=True)
        record = {"path": path, "lengths": list(heur.lengths), "cost": header["cost"]["cost"],
                  "gap": header["cost"]["gap"], "gap_gap": header["cost"]["gap_gap"],
                  "heuristic": heur.describe(), "triangles": [list(t) for t in heur.triangles],
                  "cells": [int(c.size) for c in heur.tri_cells],
                  "full_cells": [(heur.lengths[a] + 1) * (heur.lengths[b] + 1) * (heur.lengths[c] + 1)
                                 for a, b, c in heur.triangles],
                  "upper_bound": heur.upper_bound, "h_start": heur.start_value(),
                  "sequences_hash": header["sequences_hash"], "bytes": header["_file_bytes"]}
        if fmt != "text":
            emit(record, "")
            continue
        click.echo(f"{path}: {len(heur.lengths)} sequences ({', '.join(map(str, heur.lengths))}), cost "
                   f"{record['cost']} (gap {record['gap']}), {record['heuristic']}")
        for tri, n, full in zip(record["triangles"], record["cells"], record["full_cells"]):
            click.echo(f"  triangle {'-'.join(map(str, tri))}: {n:,} of {full:,} cells "
                       f"({100 * n / max(full, 1):.2f}%) within the upper bound")
        click.echo(f"  start value {record['h_start']}, upper bound {record['upper_bound']}, "
                   f"{record['bytes'] / 2**20:,.2f} MiB, sequences {record['sequences_hash']}")


@click.command("verify")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False), metavar="TABLE...")
@click.option("--threads", type=click.IntRange(1, 1024), default=None, metavar="N")
@click.option("--format", "fmt", type=FORMAT_CHOICE, default="text", show_default=True)
@user_errors
def verify(files, threads, fmt):
    """Check alignment table files: the checksum, the header, and every value against a rebuild from the
    sequences the file holds (exit 3 when one fails)."""
    from .tables import verify_file

    status = EXIT_OK
    emit = _Rows(fmt, ["path", "ok", "problems"])
    for path in files:
        problems = verify_file(path, threads)
        if problems:
            status = EXIT_DISAGREES
        emit({"path": path, "ok": not problems, "problems": problems},
             f"{path}: FAIL: {'; '.join(problems)}" if problems else f"{path}: ok (every value equals a rebuild)")
    sys.exit(status)


@click.command("random")
@click.option("--sequences", "-k", type=click.IntRange(2, 12), default=5, show_default=True,
              help="Sequences of a family.")
@click.option("--length", type=click.IntRange(1, 100_000), default=100, show_default=True,
              help="Residues of the ancestor.")
@click.option("--substitution", type=click.FloatRange(0, 1), default=0.2, show_default=True,
              help="Probability that a descendant's residue is replaced.")
@click.option("--indel", type=click.FloatRange(0, 1), default=0.05, show_default=True,
              help="Probability of a deletion or an insertion at each residue (half each).")
@click.option("--alphabet", type=click.Choice(["protein", "dna"]), default="protein", show_default=True)
@click.option("--count", "-n", type=click.IntRange(1, 100_000), default=1, show_default=True,
              help="Families to write (more than one needs --output-dir DIR).")
@seed_option(0, "Seed of the first family; family i is seed + i.")
@click.option("--output-dir", "output", type=click.Path(), default=None, metavar="DIR",
              help="Write family-K-LENGTH-SEED.fasta files into DIR (default: one family to stdout).")
@user_errors
def random(sequences, length, substitution, indel, alphabet, count, seed, output):
    """Synthetic families: a random ancestor mutated into related sequences (seeded substitutions and
    indels), as FASTA, for benchmarks and tests."""
    from ..errors import PdbtoolError
    from .families import family
    from .sequences import format_fasta

    if count > 1 and output is None:
        raise PdbtoolError("more than one family needs --output-dir DIR (one FASTA file a family)")
    for n in range(count):
        s = seed + n
        seqs = family(sequences, length, s, substitution, indel, alphabet)
        names = [f"f{s}_{i}" for i in range(sequences)]
        text = (f";pdbtool random --domain msa -k {sequences} --length {length} --substitution {substitution} "
                f"--indel {indel} --alphabet {alphabet} --seed {s}\n") + format_fasta(names, seqs)
        if output is None:
            click.echo(text, nl=False)
            continue
        os.makedirs(output, exist_ok=True)
        path = os.path.join(output, f"family-{sequences}-{length}-{s}.fasta")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        click.echo(path)


COMMANDS = {"solve": solve, "build": build, "inspect": inspect, "verify": verify, "random": random}
