"""``pdbtool predict``: Korf, Reid & Edelkamp's prediction of the nodes of IDA*'s iterations."""

from __future__ import annotations

import click

from ._common import format_option, record_printer, user_errors
from .sample import heuristic_options, instances_board, open_named


@click.command("predict")
@click.argument("instances", metavar="[INSTANCES]", required=False,
                type=click.Path(allow_dash=True, dir_okay=False))
@heuristic_options
@click.option("--depth", type=int, default=None, metavar="D",
              help="Bound of the last iteration (default: an instance's '# optimal N'); without INSTANCES, "
                   "the bound of one iteration from a random start.")
@click.option("--beyond", type=int, default=None, metavar="K",
              help="For instances without '# optimal N': the last bound is h(start) + K.")
@click.option("--samples", "-n", type=int, default=10_000_000, show_default=True,
              help="Random states sampled for the heuristic's distribution.")
@click.option("--iterations", "per_iteration", is_flag=True, help="A line per iteration (text format).")
@click.option("--stratified", "probes", type=click.IntRange(1, 10**7), default=None, metavar="PROBES",
              help="Predict each instance's own search by stratified sampling of its tree (PROBES probes per "
                   "iteration) instead of the expectation over random starts.")
@click.option("--locate", "locate", default=None, metavar="NAME|FILE",
              help="With --stratified: find each instance's first solution path in IDA*'s move order with this "
                   "partition's tables (built if missing) and count the last iteration up to it (default: 1 / (k "
                   "+ 1) of it, k the sampled solutions).")
@format_option("text: a line per instance (--iterations: per iteration) and the total; json: an object per "
               "instance, then a summary object; csv: a row per instance.")
@user_errors
def command(instances, board_dims, goal, heuristic, partition, dynamic, no_reflect, blank, cache_dir, seed, threads,
            depth, beyond, samples, per_iteration, probes, locate, fmt):
    """Predict the nodes IDA* generates with a heuristic, iteration by iteration (Korf, Reid & Edelkamp
    2001): sum over depths i and blank cells c of N_i(c) P_c(d - i), from the brute-force tree's exact
    level sizes and the heuristic's sampled distribution per blank cell.

    With INSTANCES, each instance's iterations run from h(start) to its '# optimal N' (or --depth, or
    h(start) + --beyond).  Without, --depth D gives the iteration of bound D from a uniformly random start.

    \b
    Examples:
      pdbtool predict examples/korf100.txt --heuristic manhattan
      pdbtool predict examples/korf24.txt --partition 24-6-6-6-6 --iterations
      pdbtool predict --board 4x4 --heuristic manhattan --depth 50
      pdbtool random --board 4x4 -n 5 | pdbtool predict - --partition 15-7-8 --beyond 10
      pdbtool predict examples/korf100.txt --heuristic manhattan --stratified 1000 --locate 15-6-6-3
    """
    from ..errors import PdbtoolError

    if samples < 1:
        raise PdbtoolError(f"--samples {samples}: give at least 1")
    if depth is not None and depth < 0:
        raise PdbtoolError(f"--depth {depth}: give 0 or more")
    if beyond is not None and beyond < 0:
        raise PdbtoolError(f"--beyond {beyond}: give 0 or more")
    if instances is None and depth is None:
        raise PdbtoolError("give an instance file or --depth D")
    items = []
    if instances is not None:
        from ..puzzle.instances import load_instances

        # the board as solve reads it: --board, else the partition's, else the instances' own
        items = load_instances(instances, instances_board(board_dims, goal, heuristic, partition), goal)
        if not items:
            raise PdbtoolError(f"{instances}: no instances")
        bad = next((i for i in items if i.error is not None), None)
        if bad is not None:
            raise PdbtoolError(f"{bad.where}: {bad.error}")
        board_dims = board_dims or items[0].board.dims
    h, label = open_named(board_dims, goal, heuristic, partition, dynamic, no_reflect, blank, cache_dir, threads)
    from ..analysis.prediction import Predictor, blank_cell
    from ..analysis.sampling import sample

    starts = []  # checked before the sampling, which takes a while
    for inst in items:
        h0 = int(h.value(inst.tiles))
        last = depth if depth is not None else inst.optimal
        if last is None:
            if beyond is None:
                raise PdbtoolError(f"{inst.where}: no '# optimal N' on the line: give --depth D or --beyond K")
            last = h0 + beyond
        if last < h0:
            raise PdbtoolError(f"{inst.where}: depth {last} is below h(start) = {h0}")
        starts.append((inst, h0, last))
    if probes is not None:
        if instances is None:
            raise PdbtoolError("--stratified predicts the instances given: give an instance file")
        from ..analysis.instance_prediction import InstancePredictor, first_solution_path

        parity = sample(h, min(samples, 20_000), seed, name=label).parity  # the bounds' step only
        ss = InstancePredictor(h, probes, seed)
        locator = None
        if locate is not None:
            from ..search.solver import Solver

            locator = Solver(h.board, heuristic="pdb", partition=locate, pruning="parent", cache_dir=cache_dir,
                             threads=threads)
        rows = []
        for inst, h0, last in starts:
            path = first_solution_path(locator, inst.tiles) if locator is not None else None
            if path is not None and len(path) != last:
                raise PdbtoolError(f"{inst.where}: the solution found has {len(path)} moves, the last bound is {last}")
            rows.append((inst, h0, last, ss.search(inst.tiles, h0, last, 2 if parity else 1, path)))
        _echo_stratified(rows, label, h.board.dims, probes, seed, fmt, per_iteration, locate)
        return
    if locate is not None:
        raise PdbtoolError("--locate applies to --stratified")
    dist = sample(h, samples, seed, name=label)
    predictor = Predictor(dist)
    note = (f"{label} on {h.board.dims}: distribution of {dist.states:,} random states (seed {seed}, mean h "
            f"{dist.mean:.3f}), bounds grow by {predictor.step}")
    if instances is None:
        it = predictor.iteration_any_start(depth)
        with record_printer(fmt) as emit:
            emit({"heuristic": label, "board": h.board.dims, "bound": depth, "expanded": _j(it.expanded),
                  "generated": _j(it.generated), "brute_force": _j(it.brute_force), "samples": dist.states,
                  "seed": seed},
                 f"{note}\niteration of bound {depth} from a uniformly random start: {_d(it.generated):.4g} nodes "
                 f"generated, {_d(it.expanded):.4g} expanded (brute-force tree at depth {depth}: "
                 f"{_d(it.brute_force):.4g} nodes)")
        return
    rows = [(inst, h0, last, predictor.search(blank_cell(inst.tiles), h0, last)) for inst, h0, last in starts]
    if fmt != "text":
        with record_printer(fmt) as emit:
            for inst, h0, last, its in rows:
                emit({"id": inst.id, "h0": h0, "last_bound": last,
                      "generated": _j(sum(_d(i.generated) for i in its)),
                      "expanded": _j(sum(_d(i.expanded) for i in its)),
                      "iterations": [{"bound": i.bound, "generated": _j(i.generated), "expanded": _j(i.expanded)}
                                     for i in its]})
            if fmt == "json":  # csv: the rows only
                emit({"summary": True, "heuristic": label, "board": h.board.dims, "instances": len(rows),
                      "samples": dist.states, "seed": seed, "mean_h": dist.mean,
                      "generated": _j(sum(_d(i.generated) for r in rows for i in r[3]))})
        return
    click.echo(note)
    total = _d(0)
    for inst, h0, last, its in rows:
        gen = sum(_d(i.generated) for i in its)
        total += gen
        click.echo(f"{str(inst.id).ljust(6)} h0 {h0:>3}  bounds {h0}..{last}  iterations {len(its):>3}  "
                   f"predicted generated {gen:>12.4g}  last iteration {_d(its[-1].generated):>12.4g}")
        if per_iteration:
            for i in its:
                click.echo(f"         bound {i.bound:>3}: generated {_d(i.generated):>12.4g}  "
                           f"expanded {_d(i.expanded):>12.4g}")
    click.echo(f"predicted nodes generated: {total:.4g} in all, {total / len(rows):.4g} mean over {len(rows)} "
               f"instances (every iteration complete, the last one included)")


def _d(x):
    """A prediction as a Decimal: sums and formats a float and an integer past a float's range alike."""
    from decimal import Decimal

    return Decimal(x)


def _j(x):
    """A prediction for JSON: a float, or an integer past a float's range."""
    return float(x) if abs(x) < 1e300 else int(x)


def _echo_stratified(rows, label, dims, probes, seed, fmt, per_iteration, locate):
    total = sum(p.generated for *_, p in rows)
    if fmt != "text":
        with record_printer(fmt) as emit:
            for inst, h0, last, p in rows:
                emit({"id": inst.id, "h0": h0, "last_bound": last, "generated": p.generated, "expanded": p.expanded,
                      "last_iteration_share": p.last_share,
                      "iterations": [{"bound": i.bound, "generated": i.generated, "expanded": i.expanded,
                                      "solutions": i.solutions} for i in p.iterations]})
            if fmt == "json":  # csv: the rows only
                emit({"summary": True, "method": "stratified", "heuristic": label, "board": dims,
                      "instances": len(rows), "probes": probes, "seed": seed, "located_by": locate,
                      "generated": total})
        return
    last = (f"up to the first solution path found with {locate}" if locate else "to its expected first solution")
    click.echo(f"{label} on {dims}: stratified sampling of each instance's own tree, {probes:,} probes per "
               f"iteration (seed {seed}); the last iteration counted {last}")
    for inst, h0, last, p in rows:
        click.echo(f"{str(inst.id).ljust(6)} h0 {h0:>3}  bounds {h0}..{last}  iterations {len(p.iterations):>3}  "
                   f"predicted generated {p.generated:>12.4g}  last iteration {p.iterations[-1].generated:>12.4g} "
                   f"(share {p.last_share:.2f})")
        if per_iteration:
            for i in p.iterations:
                click.echo(f"         bound {i.bound:>3}: generated {i.generated:>12.4g}  expanded {i.expanded:>12.4g}")
    click.echo(f"predicted nodes generated: {total:.4g} in all, {total / len(rows):.4g} mean over {len(rows)} "
               f"instances")
