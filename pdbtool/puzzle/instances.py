"""Instance files and result formats.

An instance file holds one instance a line: the tile in each cell, row by row (0 = the blank), optionally
preceded by an id.  ``#`` starts a comment and blank lines are skipped; a trailing comment ``# optimal N``
states the known optimal length, which ``solve`` then checks.  The board comes from ``--board WxH`` or, when
absent, from the count of numbers when it is a square (9, 16, 25, ...); with an id, the count is one more.
An id is the first token when it is not a number, or the first number when the count is one too many.

Results are written as text (a line per instance and a summary), JSON Lines (an object per instance, then
an object with ``"summary": true``) or CSV (the same columns; the summary goes to stderr).
"""

from __future__ import annotations

import csv
import json
import math
import re
import sys
from dataclasses import dataclass
from typing import TextIO
from collections.abc import Iterable

from .board import Board, BoardError
from ..errors import PdbtoolError

OPTIMAL_RE = re.compile(r"\boptimal\s*[:=]?\s*(\d+)", re.IGNORECASE)

MAX_DIGITS = 18  # a longer number is no tile, id or length (and int() refuses past 4300 digits)

CSV_COLUMNS = ("id", "board", "heuristic", "length", "optimal", "solved", "nodes_generated", "nodes_expanded",
               "h0", "seconds", "cpu_seconds", "iterations", "solution", "error", "check")
LEGACY_CSV_COLUMNS = CSV_COLUMNS[:-1]  # results files of pdbtool before the lines' check (still resumed)


class InstanceError(PdbtoolError):
    pass


@dataclass
class Instance:
    """One line of an instance file: its id, where it came from, and either a state or an error."""

    id: str
    source: str
    line: int
    board: Board | None = None
    tiles: tuple[int, ...] | None = None
    optimal: int | None = None
    error: str | None = None

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}"


def _square_side(count: int) -> int | None:
    side = math.isqrt(count)
    return side if side >= 2 and side * side == count else None


def parse_line(text: str, line: int, source: str, ordinal: int, board: Board | None = None,
               goal: str | None = None) -> Instance | None:
    """Parse one line; None for blank and comment-only lines.  Errors are kept in ``Instance.error``."""
    body, _, comment = text.partition("#")
    tokens = body.replace(",", " ").split()
    if not tokens:
        return None
    inst = Instance(id=str(ordinal), source=source, line=line)
    ident = None
    if not _is_int(tokens[0]):
        ident = tokens[0].rstrip(":")
        tokens = tokens[1:]
    if ident is not None:
        inst.id = ident
    match = OPTIMAL_RE.search(comment)
    if match:
        if len(match.group(1)) > MAX_DIGITS:
            inst.error = f"'# optimal {_short(match.group(1))}' is not a length ({len(match.group(1))} digits)"
            return inst
        inst.optimal = int(match.group(1))
    bad = next((t for t in tokens if not _is_int(t)), None)
    if bad is not None:
        inst.error = f"{_short(bad)!r} is not a whole number"
        return inst
    huge = next((t for t in tokens if len(t.lstrip("+-")) > MAX_DIGITS), None)
    if huge is not None:
        inst.error = f"{_short(huge)} ({len(huge.lstrip('+-'))} digits) is out of range for a tile or an id"
        return inst
    numbers = [int(t) for t in tokens]
    count = len(numbers)
    if board is not None:
        n = board.n
        if ident is None and count == n + 1:
            ident, numbers = str(numbers[0]), numbers[1:]
        elif count != n:
            inst.error = f"expected {n} numbers for a {board.dims} board, got {count}"
    else:
        side = _square_side(count)
        if side is None and ident is None and _square_side(count - 1):
            side = _square_side(count - 1)
            ident, numbers = str(numbers[0]), numbers[1:]
        if side is None:
            inst.error = (f"{count} numbers do not make a square board (9, 16, 25, ...): "
                          f"give --board WxH for other shapes")
        else:
            try:
                board = Board.parse(f"{side}x{side}", goal)
            except BoardError as exc:
                inst.error = str(exc)
    if ident is not None:
        inst.id = ident
    if inst.error is not None or board is None:  # no board only when the line's error says why
        return inst
    inst.board = board
    try:
        inst.tiles = check_tiles(board, numbers)
    except BoardError as exc:
        inst.error = str(exc)
    return inst


def check_tiles(board: Board, numbers: list[int]) -> tuple[int, ...]:
    """Validate a state: count, range, repeated/missing tiles, solvability; raise BoardError with the reason."""
    n = board.n
    if len(numbers) != n:
        raise BoardError(f"expected {n} numbers for a {board.dims} board, got {len(numbers)}")
    out = [t for t in numbers if not 0 <= t < n]
    if out:
        raise BoardError(f"tile {out[0]} is out of range 0..{n - 1}")
    seen = set()
    repeated = []
    for t in numbers:
        if t in seen:
            repeated.append(t)
        seen.add(t)
    if repeated:
        missing = sorted(set(range(n)) - seen)
        raise BoardError(f"tile {repeated[0]} appears twice and tile {missing[0]} is missing")
    if not board.is_solvable(numbers):
        parity = "odd" if board.width % 2 else "even"
        raise BoardError(f"unsolvable: the permutation's parity does not match the blank's distance to its goal "
                         f"cell (width {board.width}, {parity})")
    return tuple(numbers)


def _short(text: str, keep: int = 20) -> str:
    """A token for a message: its first characters when it is long."""
    return text if len(text) <= keep else text[:keep] + "..."


def _is_int(token: str) -> bool:
    return re.fullmatch(r"[+-]?\d+", token) is not None  # exactly what int() accepts: not "²", not "+-5"


def read_instances(text: str, source: str, board: Board | None = None, goal: str | None = None) -> list[Instance]:
    """Every instance of a file's text (errors included, one per bad line)."""
    out: list[Instance] = []
    for number, raw in enumerate(text.splitlines(), 1):
        inst = parse_line(raw, number, source, len(out) + 1, board, goal)
        if inst is not None:
            out.append(inst)
    return out


def load_instances(path: str, board: Board | None = None, goal: str | None = None,
                   stdin: TextIO | None = None) -> list[Instance]:
    """Read a file (``-`` for stdin) of instances."""
    from .. import files
    from ..files import FileKindError, read_regular, read_stdin

    try:  # a FIFO or a device (/dev/zero) is refused at once, a file past the cap before it is read
        if path == "-":
            return read_instances(read_stdin(files.MAX_TEXT_BYTES, "file of instances", stdin).decode("utf-8"),
                                  "<stdin>", board, goal)
        text = read_regular(path, what="file of instances").decode("utf-8")
    except FileNotFoundError as exc:
        raise InstanceError(f"{path}: cannot read: {exc.strerror or 'no such file'}") from None
    except FileKindError as exc:
        raise InstanceError(str(exc)) from None
    except UnicodeDecodeError:
        raise InstanceError(f"{path}: not a text file") from None
    return read_instances(text, path, board, goal)


# --- results ---------------------------------------------------------------------------------------------

def record(result) -> dict:
    """The JSON object of one result (``SolveResult``)."""
    return {
        "id": result.id,
        "board": result.board,
        "heuristic": result.heuristic,
        "length": result.length,
        "optimal": result.optimal,
        "solution": list(result.solution),
        "nodes_generated": result.nodes_generated,
        "nodes_expanded": result.nodes_expanded,
        "h0": result.h0,
        "seconds": round(result.seconds, 6),
        "cpu_seconds": round(result.cpu_seconds, 6),
        "iterations": result.iterations,
        "solved": result.solved,
        "timed_out": result.timed_out,
        "error": result.error,
        "check": getattr(result, "check", None),
    }


def interrupted_record(inst: Instance) -> dict:
    """The JSON object of the instance a signal stopped: no figures, since its search did not finish."""
    return {"id": inst.id, "board": inst.board.dims if inst.board is not None else "", "line": inst.line,
            "solved": False, "interrupted": True}


def summarize(results: Iterable, wall_seconds: float | None = None, interrupted: Instance | None = None,
              not_reached: int = 0) -> dict:
    """What the papers' tables give: instances solved, mean h(start), mean length, nodes, seconds, rate.

    After a signal, ``interrupted`` is the instance whose search it stopped and ``not_reached`` the count
    of instances after it; the figures are those of the finished instances (``results``)."""
    results = list(results)
    solved = [r for r in results if r.solved]
    with_h = [r for r in results if r.h0 is not None]
    failed = [r for r in results if r.error is not None]
    gen = sum(r.nodes_generated for r in results)
    exp = sum(r.nodes_expanded for r in results)
    secs = sum(r.seconds for r in results)
    summary = {
        "summary": True,
        "instances": len(results),
        "solved": len(solved),
        "unsolved": sum(1 for r in results if r.timed_out),
        "failed": len(failed),
        "mean_h0": round(sum(r.h0 for r in with_h) / len(with_h), 3) if with_h else None,
        "mean_length": round(sum(r.length for r in solved) / len(solved), 3) if solved else None,
        "total_nodes_generated": gen,
        "mean_nodes_generated": round(gen / len(with_h), 1) if with_h else None,
        "total_nodes_expanded": exp,
        "total_seconds": round(secs, 6),
        "nodes_per_second": round(gen / secs) if secs > 0 else None,
    }
    if wall_seconds is not None:
        summary["wall_seconds"] = round(wall_seconds, 3)
    if interrupted is not None:
        summary["interrupted"] = interrupted.id
        summary["not_reached"] = not_reached
    return summary


def text_line(result) -> str:
    ident = str(result.id).ljust(6)
    if result.solved:
        opt = ""
        if result.optimal is not None:
            same = result.optimal == result.length
            opt = f" (optimal {result.optimal})" if same else f" (FILE SAYS {result.optimal})"
        moves = " ".join(str(t) for t in result.solution)
        return (f"{ident} length {result.length:>3}{opt}  h0 {result.h0:>3}  generated {result.nodes_generated:>13,}"
                f"  expanded {result.nodes_expanded:>13,}  {result.seconds:8.3f} s  moves: {moves}"
                + (f"  check {result.check}" if getattr(result, "check", None) else ""))
    if result.timed_out:
        return (f"{ident} unsolved: limit reached after {result.seconds:.3f} s  h0 {result.h0}  generated "
                f"{result.nodes_generated:,}  expanded {result.nodes_expanded:,}")
    return f"{ident} error: {result.error}"


def text_summary(summary: dict) -> str:
    def fmt(value, spec):
        return "-" if value is None else format(value, spec)

    lines = [
        f"solved {summary['solved']} of {summary['instances']}"
        f" (unsolved {summary['unsolved']}, failed {summary['failed']})",
        f"mean h(start) {fmt(summary['mean_h0'], '.2f')}   mean length {fmt(summary['mean_length'], '.2f')}",
        f"nodes generated {summary['total_nodes_generated']:,} in all, {fmt(summary['mean_nodes_generated'], ',.0f')} "
        f"mean; expanded {summary['total_nodes_expanded']:,}",
        f"search {summary['total_seconds']:.3f} s, {fmt(summary['nodes_per_second'], ',.0f')} nodes generated/s"
        + (f"; wall {summary['wall_seconds']:.2f} s" if "wall_seconds" in summary else ""),
    ]
    if "interrupted" in summary:
        lines.append(f"interrupted during instance {summary['interrupted']}; "
                     f"{summary['not_reached']} more not reached")
    return "\n".join(lines)


class ResultWriter:
    """Writes results as they come in one of the formats ``text``, ``json`` or ``csv``."""

    def __init__(self, out: TextIO, fmt: str = "text", columns: tuple[str, ...] = CSV_COLUMNS):
        if fmt not in ("text", "json", "csv"):
            raise InstanceError(f"unknown format {fmt!r}: choose text, json or csv")
        self.out = out
        self.fmt = fmt
        self._csv: csv.DictWriter | None = None
        if fmt == "csv":
            self._columns = columns
            self._csv = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
            self._csv.writeheader()

    def write(self, result) -> None:
        if self.fmt == "json":
            self.out.write(json.dumps(record(result)) + "\n")
        elif self._csv is not None:
            row = record(result)
            row["solution"] = " ".join(str(t) for t in result.solution)
            self._csv.writerow({k: ("" if row[k] is None else row[k]) for k in self._columns})
        else:
            self.out.write(text_line(result) + "\n")
        self.out.flush()

    def write_interrupted(self, inst: Instance) -> None:
        """The line of the instance a signal stopped (its search did not finish)."""
        row = interrupted_record(inst)
        if self.fmt == "json":
            self.out.write(json.dumps(row) + "\n")
        elif self._csv is not None:
            self._csv.writerow({"id": row["id"], "board": row["board"], "solved": False, "error": "interrupted"})
        else:
            self.out.write(f"{str(inst.id).ljust(6)} interrupted\n")
        self.out.flush()

    def write_summary(self, summary: dict, err: TextIO | None = None) -> None:
        if self.fmt == "json":
            self.out.write(json.dumps(summary) + "\n")
        elif self.fmt == "csv":
            (err or sys.stderr).write(text_summary(summary) + "\n")
        else:
            self.out.write(text_summary(summary) + "\n")
        self.out.flush()
