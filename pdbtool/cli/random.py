"""``pdbtool random``: instance files of random states."""

from __future__ import annotations

import click

from ._common import Interrupted, board_option, goal_option, output_option, seed_option, user_errors


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
    from ..analysis.states import CHUNK, random_states
    from ..errors import PdbtoolError
    from ..puzzle.board import Board

    if board_dims is None:
        raise PdbtoolError("give the board: --board WxH (for example 4x4)")
    if count < 1:
        raise PdbtoolError(f"--count {count}: give at least 1")
    if count > MAX_COUNT:
        raise PdbtoolError(f"--count {count}: too many, give at most {MAX_COUNT:,} (another --seed gives "
                           f"other states)")
    if walk is not None and walk < 0:
        raise PdbtoolError(f"--walk {walk}: give 0 or more moves")
    board = Board.parse(board_dims, goal)
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
    out = _Output(output)
    written = 0
    try:
        out.write("".join(f"# {h}\n" for h in header))
        width = len(str(count))
        piece = PIECE_CHUNKS * CHUNK  # states drawn, formatted and written at a time: memory stays small
        for first in range(0, count, piece):
            states = random_states(board, min(piece, count - first), seed, walk, first_chunk=first // CHUNK)
            out.write("".join(f"{str(first + i + 1).ljust(width)} {' '.join(map(str, row))}\n"
                              for i, row in enumerate(states.tolist())))
            written = first + len(states)
    except Interrupted as stop:
        stop.note = (f"{written:,} of {count:,} instances written to {output or 'stdout'}, the output is "
                     "incomplete")
        raise
    finally:
        out.close()


MAX_COUNT = 10**9      # instances a run writes (a 4x4 file of that many is about 45 GB)
PIECE_CHUNKS = 16      # generator chunks per piece written


class _Output:
    """Stdout, or the file ``--output`` (refused unless a regular file or new; a write error names it)."""

    def __init__(self, path):
        self.path = path
        self.file = None
        if path is not None:
            import os

            from ..files import open_regular

            self.file = os.fdopen(open_regular(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "w", encoding="utf-8")

    def write(self, text: str) -> None:
        if self.file is None:
            click.echo(text, nl=False)
            return
        try:
            self.file.write(text)
        except OSError as exc:
            from ..errors import PdbtoolError

            raise PdbtoolError(f"{self.path}: cannot write: {exc.strerror or exc}") from None

    def close(self) -> None:
        if self.file is not None:
            try:
                self.file.close()
            except OSError as exc:
                from ..errors import PdbtoolError

                raise PdbtoolError(f"{self.path}: cannot write: {exc.strerror or exc}") from None
