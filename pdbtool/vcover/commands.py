"""``--domain vertex-cover``: the command line of the minimum vertex cover domain (library:
:mod:`pdbtool.vcover`).  A module of the command-line layer: it parses, calls the library and prints."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..batch import batch_options
from ..cli._common import (EXIT_FAILED, EXIT_OK, EXIT_USAGE, UserError, cache_dir_option, format_option,
                           record_printer, say, seed_option, user_errors)

if TYPE_CHECKING:
    from .graph import Graph

NAME = "vertex-cover"
HELP = "minimum vertex cover of graphs (PACE .gr, DIMACS, edge lists) with clique pattern databases"
TABLE_KINDS = ("vertex-cover",)
INSTANCE_SUFFIXES = (".gr", ".dimacs", ".col", ".clq", ".edges")
CSV_COLUMNS = ["id", "solved", "size", "lower_bound", "stated_optimum", "vertices", "edges", "nodes", "seconds",
               "cpu_seconds", "peak_rss_bytes", "heuristic", "error", "disagreement"]


class BadInput(UserError):
    """One line and exit status 2: input the command does not take."""

    exit_code = EXIT_USAGE


@dataclass
class GraphItem:
    """One graph of a batch (read and checked before the batch starts; ``error`` when it could not be)."""

    id: str
    graph: Graph | None = None
    heuristic: str | None = None
    reductions: str | None = None
    cache_dir: str | None = None
    pace_dir: str | None = None
    error: str | None = None
    branching: str = "auto"
    clock: str = "wall"


def _cache(cache_dir):
    from ..tables.cache import TableCache

    return TableCache(cache_dir, notify=say)


def _ids(paths: list[str]) -> list[str]:
    """Instance names: the file names, or the paths where two files share a name."""
    names = [("stdin" if p == "-" else Path(p).name) for p in paths]
    if len(set(names)) == len(names):
        return names
    return [("stdin" if p == "-" else p) for p in paths]


def solve_one(item: GraphItem, time_limit: float | None) -> dict:
    """Solve one graph; the record of :mod:`pdbtool.batch` with the cover (numbered as in the file)."""
    from ..errors import PdbtoolError
    from .cliques import cached_table
    from .graph import format_solution
    from .search import check_cover, solve

    graph = item.graph
    assert graph is not None  # the runner hands an item that failed to parse to no solver
    try:
        table = cached_table(graph, _cache(item.cache_dir))
    except (OSError, PdbtoolError):  # no cache to read: the cliques are found for the search
        table = None
    result = solve(graph, item.heuristic, item.reductions, time_limit, table, branching=item.branching,
                   clock=item.clock)
    check_cover(graph, result.cover, result.size)
    cover = sorted(graph.labels_of(result.cover))
    disagreement = None
    stated = graph.optimal
    if stated is not None:
        if result.optimal and result.size != stated:
            disagreement = f"a minimum cover has {result.size} vertices, the input states {stated}"
        elif not result.optimal and result.size < stated:
            disagreement = f"a cover of {result.size} vertices was found, the input states an optimum of {stated}"
        elif not result.optimal and result.lower_bound > stated:
            disagreement = f"every cover has at least {result.lower_bound} vertices, the input states {stated}"
    if item.pace_dir is not None:
        target = Path(item.pace_dir) / (Path(item.id).stem + ".out")
        tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
        tmp.write_text(format_solution(graph, result.cover))
        os.replace(tmp, target)
    return {"id": item.id, "solved": result.optimal, "error": None, "disagreement": disagreement,
            "size": result.size, "lower_bound": result.lower_bound, "stated_optimum": stated,
            "vertices": graph.n, "edges": graph.m, "merged_edges": graph.merged, "graph_hash": graph.digest(),
            "nodes": result.nodes, "seconds": round(result.seconds, 4), "cpu_seconds": round(result.cpu_seconds, 4),
            "peak_rss_bytes": result.peak_rss_bytes, "heuristic": result.heuristic,
            "reductions": result.reductions, "kernel_vertices": result.kernel_vertices,
            "components": result.components, "greedy_size": result.greedy_size, "first_size": result.first_size,
            "root_bound": result.root_bound,
            "clique_table": result.clique_table, "cover": cover}


def check_held(item: GraphItem, record: dict) -> str | None:
    """A held record is trusted when it is of this graph (its hash), its cover covers every edge with the
    stated size, and its size agrees with an optimum the input states."""
    from .search import check_cover

    graph = item.graph
    if graph is None:
        return "the graph could not be read"
    if record.get("graph_hash") != graph.digest():
        return "held for another graph (its hash differs)"
    cover = record.get("cover")
    size = record.get("size")
    if not isinstance(cover, list) or not isinstance(size, int) or not all(isinstance(v, int) for v in cover):
        return "no cover held"
    index = {int(lab): i for i, lab in enumerate(graph.labels_of(range(graph.n)))}
    if any(v not in index for v in cover):
        return "the held cover names a vertex the graph lacks"
    try:
        check_cover(graph, [index[v] for v in cover], size)
    except Exception as exc:
        return str(exc)
    if graph.optimal is not None and size != graph.optimal:
        return f"the held size {size} is not the stated optimum {graph.optimal}"
    low = record.get("lower_bound")
    if not isinstance(low, int) or low != size:
        return "the held record does not prove its cover optimal"
    return None


def text_line(record: dict) -> str:
    name = record["id"]
    if record.get("error"):
        return f"{name}: error: {record['error']}"
    what = "optimal" if record["solved"] else f"best found, lower bound {record['lower_bound']} (time limit)"
    line = (f"{name}: cover of {record['size']} ({what}), {record['vertices']:,} vertices, {record['edges']:,} edges, "
            f"{record['nodes']:,} nodes, {record['cpu_seconds']:.3f} CPU s, "
            f"{record['peak_rss_bytes'] / 2**20:,.0f} MiB peak")
    if record.get("merged_edges"):
        line += f" ({record['merged_edges']:,} repeated edges merged)"
    if record.get("disagreement"):
        line += f"  DISAGREES: {record['disagreement']}"
    return line


def _read_items(graphs, heuristic, reductions, cache_dir, pace_dir) -> list[GraphItem]:
    from ..batch import instance_paths
    from ..errors import PdbtoolError
    from .graph import read_graph

    try:
        paths = instance_paths(list(graphs), INSTANCE_SUFFIXES)
    except PdbtoolError as exc:
        raise BadInput(str(exc)) from None
    items = []
    for path, name in zip(paths, _ids(paths)):
        try:
            items.append(GraphItem(name, read_graph(path, name if path == "-" else path), heuristic, reductions,
                                   cache_dir, pace_dir))
        except PdbtoolError as exc:
            items.append(GraphItem(name, error=str(exc).replace(f"{path}: ", "", 1) if path != "-" else str(exc)))
    return items


@click.command("solve")
@click.argument("graphs", nargs=-1, required=True)
@click.option("--heuristic", "-H", default="default", show_default=True, metavar="SPEC",
              help="none, matching, static:K, dynamic:K (K = 2, 3, 4), cliques (dynamic:all), lp, or several joined "
                   "by commas (the max).  default: cliques.")
@click.option("--reductions", default="default", show_default=True, metavar="LIST",
              help="degree1, fold, domination, funnel, lp, components (comma-separated), all, none or default (all).")
@click.option("--branching", type=click.Choice(["auto", "binary", "cliques"]), default="auto", show_default=True,
              help="binary: a vertex of largest degree in or out (the talk's search); cliques: on the clique cover "
                   "of each node, as maximum clique solvers do (needs the cliques bound); auto: cliques when the "
                   "cliques bound is used.")
@click.option("--clock", type=click.Choice(["wall", "cpu"]), default="wall", show_default=True,
              help="What --time-limit counts: wall-clock seconds, or the CPU seconds of the process solving the "
                   "graph (a benchmark's rule on a shared machine).")
@click.option("--pace", "pace_dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Also write each cover as a PACE solution file DIR/NAME.out ('s vc N K', one vertex a line).")
@cache_dir_option
@batch_options
@user_errors
def solve_command(graphs, heuristic, reductions, branching, clock, pace_dir, cache_dir, batch):
    """Find minimum vertex covers of GRAPHS (files, directories of .gr/.dimacs/.col/.clq/.edges files, or -
    for standard input): branch and bound with clique pattern databases and the reductions of modern
    solvers.  Each cover is checked (every edge covered, its size as reported) before it is printed; an
    optimum stated in the file ('# optimal K') or a PACE .out beside it is checked too (exit 3 when it
    disagrees).  A graph that cannot be read is one line and exit status 2; the other graphs are solved.

    \b
    Examples:
      pdbtool solve --domain vertex-cover examples/vc-150-16/
      pdbtool solve --domain vertex-cover -H dynamic:3 --format json graph.gr
      pdbtool solve --domain vertex-cover --time-limit 60 --pace out/ pace/*.gr
    """
    from ..batch import run_batch
    from ..errors import PdbtoolError
    from .reductions import parse_rules
    from .search import parse_heuristic

    try:
        parse_heuristic(heuristic)
        parse_rules(reductions)
    except PdbtoolError as exc:
        raise BadInput(str(exc)) from None
    if pace_dir is not None:
        Path(pace_dir).mkdir(parents=True, exist_ok=True)
    if branching == "cliques" and not parse_heuristic(heuristic).uses_clique_cover:
        raise BadInput("--branching cliques needs the cliques bound in --heuristic")
    items = _read_items(graphs, heuristic, reductions, cache_dir, pace_dir)
    for item in items:
        item.branching, item.clock = branching, clock
    if pace_dir is not None:
        here = Path(pace_dir).resolve()
        for item in items:
            if item.graph is not None and item.id != "stdin" and Path(item.graph.name).resolve().parent == here:
                raise BadInput(f"--pace {pace_dir}: the directory of the graphs (their .out files state optima)")
    bad = sum(item.error is not None for item in items)
    status = run_batch(items, solve_one, batch, check_held=check_held, text_line=text_line, csv_columns=CSV_COLUMNS,
                       what="graphs")
    if bad and status in (EXIT_OK, EXIT_FAILED):
        status = EXIT_USAGE
    sys.exit(status)


@click.command("random")
@click.option("--vertices", type=click.IntRange(2, 10_000_000), required=True, help="Vertices of each graph.")
@click.option("--degree", type=click.FloatRange(0, None), required=True,
              help="Average degree: each graph has round(vertices * degree / 2) distinct edges, drawn uniformly.")
@seed_option(0, "Seed; graph i of a seed is the same whatever -n.")
@click.option("--count", "-n", "count", type=click.IntRange(1, 100_000), default=1, show_default=True,
              help="Graphs to draw.")
@click.option("--output-dir", "directory", type=click.Path(file_okay=False), default=None,
              help="Write each graph to DIR/vc-N-D-sSEED-I.gr (needed with -n above 1; default: standard output).")
@user_errors
def random_command(vertices, degree, seed, count, directory):
    """Draw random graphs of the talk's class (N vertices, N*D/2 distinct edges uniformly at random) as PACE
    .gr files.

    \b
    Examples:
      pdbtool random --domain vertex-cover --vertices 150 --degree 16 --seed 2003 -n 20 --output-dir examples/vc-150-16
      pdbtool random --domain vertex-cover --vertices 300 --degree 16 > graph.gr
    """
    from .graph import format_pace, random_graph

    if count > 1 and directory is None:
        raise BadInput("-n above 1 writes files: give --output-dir DIR")
    if directory is not None:
        Path(directory).mkdir(parents=True, exist_ok=True)
    for i in range(count):
        graph = random_graph(vertices, degree, seed, i)
        comments = [f"pdbtool random --domain vertex-cover --vertices {vertices} --degree {degree:g} --seed {seed}: "
                    f"graph {i}", f"{graph.n} vertices, {graph.m} edges drawn uniformly at random (G(n, m))"]
        text = format_pace(graph, comments)
        if directory is None:
            click.echo(text, nl=False)
        else:
            path = Path(directory) / f"vc-{vertices}-{degree:g}-s{seed}-{i:02d}.gr"
            path.write_text(text)
            click.echo(str(path))


def _graph_table_paths(graphs, cache_dir) -> list[str]:
    from .cliques import table_name
    from .graph import read_graph

    cache = _cache(cache_dir)
    return [str(cache.dir / table_name(read_graph(g).digest())) for g in graphs]


@click.command("build")
@click.argument("graphs", nargs=-1, required=True)
@cache_dir_option
@click.option("--force", is_flag=True, help="Rebuild even when a sound table is cached.")
@format_option()
@user_errors
def build_command(graphs, cache_dir, force, fmt):
    """Find every clique of 2, 3 and 4 vertices of each graph (the clique pattern database) and store it in
    the table cache, keyed by the graph's hash; solve then uses it."""
    import time

    from ..batch import instance_paths
    from .cliques import get_table
    from .graph import read_graph

    cache = _cache(cache_dir)
    with record_printer(fmt) as emit:
        for path in instance_paths(list(graphs), INSTANCE_SUFFIXES):
            t0 = time.perf_counter()
            graph = read_graph(path)
            table, built = get_table(graph, cache, force)
            c2, c3, c4 = table.counts
            rec = {"graph": path, "graph_hash": table.graph_hash, "vertices": graph.n, "edges": c2,
                   "triangles": c3, "quads": c4, "built": built, "seconds": round(time.perf_counter() - t0, 3),
                   "file": str(table.path)}
            emit(rec, f"{path}: {c2:,} edges, {c3:,} triangles, {c4:,} 4-cliques, "
                      f"{'built' if built else 'cached'} in {rec['seconds']:.2f} s  {table.path}")


@click.command("inspect")
@click.argument("files", nargs=-1)
@click.option("--graph", "graphs", multiple=True, metavar="GRAPH", help="The cached table of this graph.")
@cache_dir_option
@format_option()
@user_errors
def inspect_command(files, graphs, cache_dir, fmt):
    """Show a clique table's graph, clique counts, size and checksum status (FILES, or --graph GRAPH's
    cached table)."""
    from .cliques import describe_file, format_description

    paths = list(files) + _graph_table_paths(graphs, cache_dir)
    if not paths:
        raise BadInput("nothing to inspect: give table files or --graph GRAPH")
    with record_printer(fmt) as emit:
        for path in paths:
            info = describe_file(path)
            emit(info, format_description(info))


@click.command("verify")
@click.argument("files", nargs=-1)
@click.option("--graph", "graphs", multiple=True, metavar="GRAPH", help="The cached table of this graph.")
@cache_dir_option
@format_option()
@user_errors
def verify_command(files, graphs, cache_dir, fmt):
    """Check clique tables: format, checksum, identity, the graph's hash, and every clique recomputed from the
    graph's edges.  Exit status 3 when a table fails."""
    from ..cli._common import EXIT_DISAGREES
    from .cliques import verify_file

    paths = list(files) + _graph_table_paths(graphs, cache_dir)
    if not paths:
        raise BadInput("nothing to verify: give table files or --graph GRAPH")
    failed = 0
    with record_printer(fmt) as emit:
        for path in paths:
            report = verify_file(path)
            failed += not report.ok
            emit(report.as_dict(), report.summary())
    if failed:
        sys.exit(EXIT_DISAGREES)


COMMANDS: dict[str, click.Command] = {"solve": solve_command, "random": random_command, "build": build_command,
                                      "inspect": inspect_command, "verify": verify_command}
