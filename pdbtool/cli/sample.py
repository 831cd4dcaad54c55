"""``pdbtool sample``: the distribution of a heuristic's values over random (or all) solvable states."""

from __future__ import annotations

import click

from .. import registry
from ._common import (board_option, cache_dir_option, format_option, goal_option, record_printer, seed_option,
                      threads_option_for, user_errors)

HEURISTIC_CHOICES = list(registry.HEURISTICS)


def heuristic_options(func):
    """The options that name a heuristic (shared by ``sample`` and ``predict``)."""
    options = [
        board_option,
        goal_option,
        click.option("--heuristic", type=click.Choice(HEURISTIC_CHOICES), default="pdb", show_default=True,
                     help="The heuristic (max and compact encodings are evaluated in Python: slow)."),
        click.option("--partition", default=None, metavar="NAME|FILE",
                     help="Partition of pdb and max (default: the board's, 15-7-8 on 4x4, 24-6-6-6-6 on 5x5)."),
        click.option("--dynamic", type=click.Choice(list(registry.DYNAMIC_SETS)), default=None,
                     help="Tables of ddb and max (default: pairs+triples)."),
        click.option("--no-reflect", is_flag=True, help="Do not take the max with the diagonal reflection."),
        click.option("--blank", type=click.Choice(list(registry.BLANK_RULES)), default=registry.DEFAULT_BLANK,
                     show_default=True, help="Blank rule of the pattern tables."),
        cache_dir_option,
        seed_option(0, "Seed of the random states (the same seed gives the same figures)."),
        threads_option_for("Threads of the sampler (default: all cores)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def instances_board(board_dims, goal, heuristic, partition):
    """The board to read instance files on, as ``solve`` reads them: --board, else the partition's (pdb and
    max), else None (each line's own, from its length)."""
    from ..puzzle.board import Board

    if board_dims:
        return Board.parse(board_dims, goal)
    if partition is not None and heuristic in ("pdb", "max"):
        from ..tables.resolve import resolve_partition

        return resolve_partition(partition, None, goal).board
    return None


def open_named(board_dims, goal, heuristic, partition, dynamic, no_reflect, blank, cache_dir, threads):
    """(heuristic object, label) from the options; sets the sampler's threads."""
    from ..errors import PdbtoolError
    from ..puzzle.board import Board
    from ..analysis.source import open_heuristic

    if heuristic not in ("pdb", "max") and partition is not None:
        raise PdbtoolError("--partition applies to --heuristic pdb and max only")
    if heuristic not in ("ddb", "max") and dynamic is not None:
        raise PdbtoolError("--dynamic applies to --heuristic ddb and max only")
    board = Board.parse(board_dims, goal) if board_dims else None
    if board is None and heuristic not in ("pdb", "max"):
        raise PdbtoolError(f"--heuristic {heuristic} needs --board WxH")
    if threads:
        import numba

        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    return open_heuristic(heuristic, board, partition, not no_reflect, cache_dir, dynamic, blank)


def _manhattan_by_formula(board_dims, goal, heuristic, exact, fmt="text"):
    """Manhattan with ``--exact`` on a board too big to count every state: its exact mean by formula.
    Returns whether it answered."""
    from ..puzzle.board import goal_from_spec, parse_dims
    from ..analysis.sampling import EXACT_MAX_CELLS, manhattan_mean

    if heuristic != "manhattan" or not exact:
        return False
    width, height = parse_dims(board_dims)
    if width * height <= EXACT_MAX_CELLS:
        return False
    mean = manhattan_mean(width, height, goal_from_spec(goal, width * height))
    with record_printer(fmt) as emit:
        emit({"board": f"{width}x{height}", "heuristic": "manhattan", "exact_mean_by_formula": float(mean),
              "exact_mean_fraction": str(mean)},
             f"manhattan on {width}x{height}: exact mean h over the uniformly random solvable states "
             f"{float(mean):.6f} (= {mean}, by formula; no states sampled)")
    return True


@click.command("sample")
@click.argument("instances", metavar="[INSTANCES]", required=False,
                type=click.Path(allow_dash=True, dir_okay=False))
@heuristic_options
@click.option("--samples", "-n", type=int, default=1_000_000, show_default=True,
              help="Uniformly random solvable states to evaluate.")
@click.option("--exact", is_flag=True,
              help="Count every solvable state instead (boards of at most 10 cells); for Manhattan on larger "
                   "boards, the exact mean by formula.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None, metavar="FILE.png",
              help="Draw the distribution (needs matplotlib: pip install 'pdbtool[bench]').")
@format_option("text: the summary and histogram; json: an object; csv: a row per heuristic value (h, states, "
               "share, at most h).")
@user_errors
def command(instances, board_dims, goal, heuristic, partition, dynamic, no_reflect, blank, cache_dir, seed, threads,
            samples, exact, plot, fmt):
    """The distribution of a heuristic's values over uniformly random solvable states (or, with --exact,
    over all of them; with INSTANCES, over the instances' start states, on their board): mean, histogram and
    optionally a plot.

    \b
    Examples:
      pdbtool sample --board 4x4 --heuristic manhattan --samples 10000000
      pdbtool sample --partition 24-6-6-6-6 --samples 10000000 --seed 2 --plot 24.png
      pdbtool sample --board 3x3 --heuristic linear-conflict --exact
      pdbtool sample --board 6x6 --heuristic manhattan --exact
      pdbtool sample examples/korf100.txt --heuristic manhattan
    """
    from ..errors import PdbtoolError

    if samples < 1:
        raise PdbtoolError(f"--samples {samples}: give at least 1")
    states = None
    if instances is not None:
        if exact:
            raise PdbtoolError("--exact counts every state: give it or INSTANCES, not both")
        from ..puzzle.instances import load_instances

        items = load_instances(instances, instances_board(board_dims, goal, heuristic, partition), goal)
        bad = next((i for i in items if i.error is not None), None)
        if bad is not None:
            raise PdbtoolError(f"{bad.where}: {bad.error}")
        if not items:
            raise PdbtoolError(f"{instances}: no instances")
        board_dims = board_dims or items[0].board.dims
        states = [tuple(i.tiles) for i in items]
    if board_dims and _manhattan_by_formula(board_dims, goal, heuristic, exact, fmt):
        return
    if plot is not None:
        from ..analysis.plot import check_plotting

        check_plotting()
    h, label = open_named(board_dims, goal, heuristic, partition, dynamic, no_reflect, blank, cache_dir, threads)
    from ..analysis.sampling import enumerate_all, manhattan_mean, over_states, sample

    if states is not None:
        where = instances if instances != "-" else "<stdin>"
        dist = over_states(h, states, f"instances of {where}", name=label)
    else:
        dist = enumerate_all(h, name=label) if exact else sample(h, samples, seed, name=label)
    board = dist.board
    formula = manhattan_mean(board.width, board.height, board.goal) if heuristic == "manhattan" else None
    if fmt == "csv":
        from ._common import write_csv

        write_csv(histogram_rows(dist))
    else:
        data = dist.to_dict()
        if formula is not None:
            data["exact_mean_by_formula"] = float(formula)
        with record_printer(fmt) as emit:
            emit(data, format_distribution(dist, formula))
    if plot is not None:
        from ..analysis.plot import plot_distributions

        plot_distributions([dist], plot)
        click.echo(f"plot written to {plot}", err=True)


def histogram_rows(dist) -> list[dict]:
    """The distribution's table: a row per heuristic value with states counted, their share and the share
    at most h."""
    rows, running = [], 0
    for h, k in enumerate(dist.histogram):
        running += int(k)
        if k:
            rows.append({"h": h, "states": int(k), "share": k / dist.states, "at_most_h": running / dist.states})
    return rows


def format_distribution(dist, formula=None) -> str:
    board = dist.board
    how = (dist.of if dist.of else "every solvable state" if dist.exact
           else f"uniformly random solvable states (seed {dist.seed})")
    rate = f", {dist.states / dist.seconds / 1e6:.2f} M states/s" if dist.seconds > 0 else ""
    lines = [f"{dist.heuristic} on {board.dims} goal {board.goal_name}: {dist.states:,} {how}, "
             f"{dist.seconds:.2f} s{rate}",
             f"mean h {dist.mean:.4f}" + (f"   (exact mean by formula: {float(formula):.4f})"
                                          if formula is not None else ""),
             "parity: h " + ("has the parity of the optimal length in every state counted: IDA*'s bounds grow by 2"
                             if dist.parity else "does not keep the parity of the optimal length: bounds grow by 1"),
             f"{'h':>4} {'states':>14} {'share':>9} {'at most h':>10}"]
    hist = dist.histogram
    running = 0
    for h, k in enumerate(hist):
        running += int(k)
        if k:
            lines.append(f"{h:>4} {int(k):>14,} {k / dist.states:>9.6f} {running / dist.states:>10.6f}")
    return "\n".join(lines)
