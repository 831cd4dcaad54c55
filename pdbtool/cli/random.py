"""``pdbtool random``: instance files of random states."""

from __future__ import annotations

import click

from ._common import board_option, goal_option, output_option, seed_option, user_errors


@click.command("random")
@board_option
@goal_option
@click.option("--count", "-n", type=int, default=10, show_default=True, help="Instances to write.")
@seed_option(0, "Seed of the generator (the same seed gives the same file).")
@click.option("--walk", type=int, default=None, metavar="LENGTH",
              help="Random walks of LENGTH moves from the goal (the previous move never undone) instead of "
                   "uniformly random solvable states.")
@output_option("Write to this file (default: stdout).")
@user_errors
def command(board_dims, goal, count, seed, walk, output):
    """Write an instance file of uniformly random solvable states (or random walks from the goal), one a
    line with an id, in the format that ``pdbtool solve`` reads.

    \b
    Examples:
      pdbtool random --board 4x4 --count 100 --seed 1 > random15.txt
      pdbtool random --board 5x5 --walk 60 --count 10 -o walks24.txt
      pdbtool random --board 3x4 --goal blank-last --count 5
    """
    from ..errors import PdbtoolError
    from ..puzzle.board import Board
    from ..analysis.states import format_instances, random_states

    if board_dims is None:
        raise PdbtoolError("give the board: --board WxH (for example 4x4)")
    if count < 1:
        raise PdbtoolError(f"--count {count}: give at least 1")
    if walk is not None and walk < 0:
        raise PdbtoolError(f"--walk {walk}: give 0 or more moves")
    board = Board.parse(board_dims, goal)
    states = random_states(board, count, seed, walk)
    what = (f"random walks of {walk} moves from the goal (the previous move never undone)" if walk is not None
            else "uniformly random solvable states")
    command_line = f"pdbtool random --board {board.dims}" + (f" --goal '{goal}'" if goal else "") + \
        f" --count {count} --seed {seed}" + (f" --walk {walk}" if walk is not None else "")
    header = [f"{command_line}: {what}.",
              f"Goal: {board.goal_name} ({' '.join(str(t) for t in board.goal_tiles)}).  One a line: id, then "
              f"the {board.n} cells row by row (0 = blank)."]
    if board.goal_name != "korf":
        header.append(f"Solve with: pdbtool solve FILE --board {board.dims} --goal '{goal}'")
    elif board.width != board.height:
        header.append(f"Solve with: pdbtool solve FILE --board {board.dims}")
    text = format_instances(board, states, header)
    if output is None:
        click.echo(text, nl=False)
    else:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
