"""A batch's results file (``solve --output FILE``): written as each instance ends, resumable after a kill.

Each result is one line in the batch's format (text, JSON Lines or CSV, as on stdout), written, flushed and
synced to the disk before the next, so that a kill of the whole run at any moment loses at most the line
being written.  :meth:`ResultsFile.open` with ``resume`` reads the file back: the results it holds (by
instance id), checked against the instances and the configuration of this run (the board of each id and
the heuristic's label per board, which names the partition, the reflection and the tables' rule and
encoding; a text file states the labels on its first line, a comment), and the offset where they end.
What follows them is cut off: a line cut short by a kill, and the summary or the interrupted line of an
earlier run that ended.  The summary written at the end covers every result of the file.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from dataclasses import fields
from pathlib import Path

from ..errors import PdbtoolError
from ..puzzle.instances import CSV_COLUMNS, LEGACY_CSV_COLUMNS, ResultWriter, summarize
from .solver import SolveResult, result_check

TEXT_HEADER = "# pdbtool solve results: "
_ID = r"(?P<id>\S+) +"
_TEXT_SOLVED = re.compile(_ID + r"length +(?P<length>\d+)(?: \((?P<said>optimal|FILE SAYS) (?P<optimal>\d+)\))?"
                          r"  h0 +(?P<h0>\d+)  generated +(?P<gen>[\d,]+)  expanded +(?P<exp>[\d,]+)"
                          r" +(?P<seconds>[\d.]+) s  moves:(?P<moves>[\d ]*?)(?:  check (?P<check>[0-9a-f]{16}))?")
_TEXT_UNSOLVED = re.compile(_ID + r"unsolved: limit reached after (?P<seconds>[\d.]+) s  h0 (?P<h0>\S+)"
                            r"  generated (?P<gen>[\d,]+)  expanded (?P<exp>[\d,]+)")
_TEXT_ERROR = re.compile(_ID + r"error: (?P<error>.*)")
# the lines of a text summary and of an interrupted instance (a summary's first line starts "solved N of")
_TEXT_TRAILER = re.compile(r"solved \d+ of \d+|mean h\(start\)|nodes generated |search [\d.]+ s|interrupted "
                           r"during instance |\S+ +interrupted$")
_RESULT_FIELDS = {f.name for f in fields(SolveResult)}


class ResultsFileError(PdbtoolError):
    pass


def configuration(labels: dict[str, str]) -> str:
    """The text header's statement of the run's configuration: the heuristic's label per board."""
    return "; ".join(f"{board} {label}" for board, label in labels.items())


class ResultsFile:
    """The results file of a batch: :meth:`open` it, then :meth:`write` each result as its instance ends
    and :meth:`write_summary` at the end.  ``held`` lists the results it held when opened (with resume)."""

    def __init__(self, path: Path, fmt: str, handle, held: list[SolveResult], columns=CSV_COLUMNS):
        self.path = path
        self.fmt = fmt
        self.held = held
        self._held_ids = {r.id for r in held}
        self.written: list[SolveResult] = []
        self._file = handle
        self._buffer = io.StringIO()
        self._formatter = ResultWriter(self._buffer, fmt, columns)  # the stdout formats, line for line
        self._take()  # the CSV header row: written once, with the first line of a new file

    @classmethod
    def open(cls, path, fmt: str, instances, labels: dict[str, str], resume: bool = False, check=None,
             notes=None) -> ResultsFile:
        """Open ``path`` for the results of ``instances`` (each with a distinct id).  Without ``resume`` the
        file must be new or empty; with it, the results it holds are read (and checked against the boards
        of the instances and ``labels``, the heuristic's label per board, and each by ``check(inst, result)``:
        see :func:`read_results`; ``notes(text)`` hears of each line not trusted) and the rest is cut off."""
        from ..files import FileKindError, open_regular

        path = Path(path)
        seen: dict[str, int] = {}
        for inst in instances:
            if inst.id in seen:
                raise ResultsFileError(f"--output needs a distinct id per instance: {inst.id} is on lines "
                                       f"{seen[inst.id]} and {inst.line}")
            seen[inst.id] = inst.line
        try:  # opened without truncating (nor blocking: a FIFO is refused), and locked before it is read or cut
            handle = os.fdopen(open_regular(path, os.O_RDWR | os.O_CREAT), "r+b")
        except FileKindError as exc:
            raise ResultsFileError(str(exc)) from None
        try:
            _lock(handle, path)
            size = os.fstat(handle.fileno()).st_size
            if size and not resume:
                raise ResultsFileError(f"{path} exists: add --resume to go on with it, or remove it")
            held: list = []
            end = 0
            columns: tuple[str, ...] = CSV_COLUMNS
            if size:
                held, end, columns = read_results(path, fmt, {inst.id: inst for inst in instances}, labels,
                                                  handle, check, notes)
            handle.truncate(end)
            handle.seek(end)
        except OSError as exc:
            handle.close()
            raise ResultsFileError(f"{path}: cannot write: {exc.strerror or exc}") from None
        except BaseException:
            handle.close()
            raise
        out = cls(path, fmt, handle, held, columns)
        if end == 0:
            out._append((TEXT_HEADER + configuration(labels) + "\n" if fmt == "text" else "") + out._header)
        return out

    def holds(self, inst) -> bool:
        return inst.id in self._held_ids

    def _take(self) -> None:
        self._header = self._buffer.getvalue()  # empty but for CSV
        self._buffer.seek(0)
        self._buffer.truncate()

    def _append(self, text: str) -> None:
        if text:
            try:
                self._file.write(text.encode("utf-8"))
                self._file.flush()
                os.fsync(self._file.fileno())
            except OSError as exc:
                raise ResultsFileError(f"{self.path}: cannot write: {exc.strerror or exc}") from None

    def write(self, result: SolveResult) -> None:
        """Append one result's line, synced to the disk."""
        self._formatter.write(result)
        line = self._buffer.getvalue()
        self._buffer.seek(0)
        self._buffer.truncate()
        self._append(line)
        self.written.append(result)

    @property
    def results(self) -> list[SolveResult]:
        """Every result of the file: those it held, then those written since."""
        return self.held + self.written

    def write_summary(self, wall_seconds: float, interrupted=None, not_reached: int = 0, err=None) -> dict:
        """Append the summary of every result of the file (CSV: to ``err``); returns it."""
        summary = summarize(self.results, wall_seconds, interrupted, not_reached)
        self._formatter.write_summary(summary, err)
        text = self._buffer.getvalue()
        self._buffer.seek(0)
        self._buffer.truncate()
        self._append(text)
        return summary

    def close(self) -> None:
        self._file.close()


def _lock(handle, path: Path) -> None:
    """Hold the file for this run: two runs appending to one file would mix their lines."""
    try:
        import fcntl
    except ImportError:  # not on POSIX: no lock
        return
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise ResultsFileError(f"{path}: in use by another run of pdbtool solve") from None


def read_results(path: Path, fmt: str, instances: dict, labels: dict[str, str], handle=None,
                 check=None, notes=None) -> tuple[list[SolveResult], int, tuple[str, ...]]:
    """The results a file holds that are trusted, the offset where its lines end (what follows is cut off
    on resume: a line cut short by a kill, the summary of an earlier run) and its CSV columns.

    A line is trusted when it parses with the right types, is of an instance of ``instances`` on the same
    board and heuristic, is the last line of its instance, is solved without an error other than a
    disagreement with the file's ``# optimal``, and ``check(inst, result)`` (if given) returns None.  Every
    other line stays in the file: a malformed line or one that fails its check is said in ``notes`` (file
    and line number) and its instance is solved again, as is an unsolved or failed one."""
    data = _read(path, handle)
    say = notes if notes is not None else (lambda text: None)
    lines = data.split(b"\n")  # the last piece lacks its newline: empty, or a line cut short
    last: dict[str, tuple[int, SolveResult]] = {}
    columns: tuple[str, ...] = CSV_COLUMNS
    offset = end = 0
    for number, raw in enumerate(lines[:-1], 1):
        offset += len(raw) + 1
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            if number == 1:
                raise ResultsFileError(f"{path}:1: not text: not a results file of pdbtool solve") from None
            text = None
        if number == 1 and fmt in ("text", "csv") and text is not None:
            want = TEXT_HEADER + configuration(labels) if fmt == "text" else ",".join(CSV_COLUMNS)
            if fmt == "csv" and text == ",".join(LEGACY_CSV_COLUMNS):
                columns = LEGACY_CSV_COLUMNS
            elif text != want:
                what = "configuration" if fmt == "text" and text.startswith(TEXT_HEADER) else "format"
                raise ResultsFileError(f"{path}: results of another {what} ({_clip(text)}), not {_clip(want)}")
            end = offset
            continue
        result = _BAD if text is None else _parse(text, fmt, columns)
        if result is None:  # a summary or an interrupted instance: cut off when nothing follows it
            continue
        end = offset
        if not isinstance(result, SolveResult):  # _BAD
            say(f"{path}:{number}: not a result line of pdbtool solve --format {fmt}: left as it is, ignored")
            continue
        inst = instances.get(result.id)
        if inst is None:
            raise ResultsFileError(f"{path}:{number}: a result of instance {_clip(str(result.id))}, which the "
                                   f"instances do not hold: results of another batch")
        board = inst.board.dims if inst.board is not None else ""
        if fmt != "text" and result.board and result.board != board:
            raise ResultsFileError(f"{path}:{number}: instance {result.id} was solved on {result.board}, "
                                   f"not {board}: results of another configuration")
        if fmt != "text" and (result.solved or result.timed_out) and board in labels \
                and result.heuristic != labels[board]:
            raise ResultsFileError(f"{path}:{number}: results of another configuration ({result.heuristic}, "
                                   f"not {labels[board]})")
        last[str(result.id)] = (number, result)  # a later line of an instance (a retry) supersedes an earlier
    held: list[SolveResult] = []
    retried = 0
    for ident, (number, result) in last.items():
        inst = instances[ident]
        why = _untrusted(inst, result)
        if why is None and check is not None:
            why = check(inst, result)
        if why is None:
            held.append(result)
        elif why in ("unsolved", "failed"):
            retried += 1
        else:
            say(f"{path}:{number}: instance {ident}: {why}: solved again")
    if retried:
        say(f"{path}: {retried} unsolved or failed instance{'s' if retried > 1 else ''} solved again")
    if fmt == "csv" and end == 0 and len(lines) > 1:
        raise ResultsFileError(f"{path}: not a results file of pdbtool solve --format csv")
    return held, end, columns


def _read(path: Path, handle) -> bytes:
    """The file's bytes (from ``handle``, the descriptor opened and locked, when given), with a cap."""
    from ..files import MAX_TEXT_BYTES, FileKindError, read_regular

    if handle is None:
        try:
            return read_regular(path, what="results file")
        except FileKindError as exc:
            raise ResultsFileError(str(exc)) from None
        except OSError as exc:
            raise ResultsFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        size = os.fstat(handle.fileno()).st_size
        if size > MAX_TEXT_BYTES:
            raise ResultsFileError(f"{path}: {size:,} bytes, too large for a results file")
        handle.seek(0)
        return handle.read(MAX_TEXT_BYTES + 1)
    except OSError as exc:
        raise ResultsFileError(f"{path}: cannot read: {exc.strerror or exc}") from None


def check_held(inst, result: SolveResult, solver=None) -> str | None:
    """Why a held solved ``result`` is not that of instance ``inst`` solved optimally (None: it is, as far as
    a line can show): its check (:func:`result_check`: a hash of the instance's cells and of the line's
    figures), its moves replayed from those cells to the goal, its
    length equal to its moves, its ``optimal`` equal to the file's ``# optimal``, and with ``solver`` (the
    heuristic of the run) its h0 equal to h(start) and its length not below it."""
    board, tiles = inst.board, inst.tiles
    if result.check is not None and result.check != result_check(board.dims, tiles, result):
        return ("its check is not that of the instance's cells and its figures (the instance changed since it "
                "was solved, or the line was edited)")
    length = result.length
    if length is None or length != len(result.solution):
        return f"its length {length} is not its {len(result.solution)} moves"
    why = _replay(board, tiles, result.solution)
    if why is not None:
        return why
    if result.optimal != inst.optimal:
        return (f"it says '# optimal {result.optimal}', the file of instances "
                + ("says none" if inst.optimal is None else f"'# optimal {inst.optimal}'"))
    if _disagreement(inst, result) and result.error is None:
        return f"its length {length} differs from the file's '# optimal {inst.optimal}' and it does not say so"
    if solver is not None:
        h = int(solver.heuristic.value(tiles))  # the instance's tiles were checked when it was read
        if result.h0 is not None and result.h0 != h:
            return f"its h0 {result.h0} is not h(start) = {h} of this run's heuristic"
        if length < h:
            return f"its length {length} is below h(start) = {h}"
    return None


_BOARDS: dict = {}


def _replay(board, tiles, solution) -> str | None:
    """Why ``solution`` (the tiles moved, in order) is not a path from ``tiles`` to the goal, or None."""
    known = _BOARDS.get(board.dims, (None, None))
    if known[0] is not board:
        known = _BOARDS[board.dims] = (board, ([[int(q) for q in row if q >= 0] for row in board.neighbours()],
                                               tuple(int(t) for t in board.goal_tiles)))
    neighbours, goal = known[1]
    n = len(tiles)
    cells = [int(t) for t in tiles]
    where = [0] * n
    for c, t in enumerate(cells):
        where[t] = c
    blank = where[0]
    for i, t in enumerate(solution, 1):
        if not 0 < t < n or where[t] not in neighbours[blank]:
            return f"its move {i} (tile {t}) is not legal from the instance's cells"
        q = where[t]
        cells[blank], where[t] = t, blank
        cells[q] = 0
        blank = q
    if tuple(cells) != goal:
        return "its moves do not reach the goal from the instance's cells"
    return None


def _untrusted(inst, result: SolveResult) -> str | None:
    """Why a held result is not taken as it is: "unsolved" and "failed" (retried quietly), or a reason."""
    if inst.error is not None:
        return "failed"
    if result.timed_out or not result.solved:
        return "unsolved" if result.error is None else "failed"
    if result.error is not None and not _disagreement(inst, result):
        return "failed"
    return None


def _disagreement(inst, result: SolveResult) -> bool:
    return inst.optimal is not None and result.length is not None and result.length != inst.optimal


_BAD = object()


def _parse(text: str, fmt: str, columns: tuple[str, ...] = CSV_COLUMNS):
    """The result of a line; None for a line that is none (a summary, an interrupted instance); _BAD for a
    line that is not a result with every field of the right type."""
    try:
        if fmt == "json":
            return _parse_json(text)
        if fmt == "csv":
            return _parse_csv(text, columns)
        return _parse_text(text)
    except (TypeError, ValueError, OverflowError, RecursionError):
        return _BAD


def _parse_json(text: str):
    row = json.loads(text)
    if not isinstance(row, dict):
        return _BAD
    if row.get("summary") is True or row.get("interrupted") is True:
        return None
    if "id" not in row or "solved" not in row:
        return _BAD
    values = {}
    for name, kind in _JSON_TYPES.items():
        if name not in row:
            continue
        value = row[name]
        if not _typed(value, kind):
            return _BAD
        values[name] = value
    if values.get("solution") is not None and not all(type(t) is int for t in values["solution"]):
        return _BAD  # whole numbers, not bools (their range is the replay's to check)
    values["solution"] = list(values.get("solution") or [])
    return SolveResult(**values)


# the type of each field of a JSON result line: "count" a whole number >= 0 (not a bool), "count?" or None
_JSON_TYPES = {"id": "str", "board": "str", "heuristic": "str", "length": "count?", "optimal": "count?",
               "solution": "list?", "nodes_generated": "count", "nodes_expanded": "count", "h0": "count?",
               "seconds": "seconds", "cpu_seconds": "seconds", "iterations": "count", "solved": "bool",
               "timed_out": "bool", "error": "str?", "check": "hash?"}


def _typed(value, kind: str) -> bool:
    if kind.endswith("?"):
        if value is None:
            return True
        kind = kind[:-1]
    if kind == "str":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "count":
        return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 63
    if kind == "seconds":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < float("inf")
    if kind == "list":
        return isinstance(value, list)
    if kind == "hash":
        return isinstance(value, str) and re.fullmatch(r"[0-9a-f]{16}", value) is not None
    raise ValueError(kind)


def _parse_csv(text: str, columns: tuple[str, ...]):
    row = next(csv.DictReader(io.StringIO(text), fieldnames=columns, strict=True))
    if row.get(None) or any(row.get(c) is None for c in columns) or row["solved"] not in ("True", "False"):
        return _BAD
    if row["error"] == "interrupted":
        return None
    seconds = float(row["seconds"] or 0)
    cpu_seconds = float(row["cpu_seconds"] or 0)
    if not (0 <= seconds < float("inf") and 0 <= cpu_seconds < float("inf")):
        return _BAD
    check = row.get("check") or None
    if check is not None and not _typed(check, "hash"):
        return _BAD
    return SolveResult(
        id=row["id"], board=row["board"], heuristic=row["heuristic"], length=_int(row["length"]),
        optimal=_int(row["optimal"]), solved=row["solved"] == "True", error=row["error"] or None,
        nodes_generated=_int(row["nodes_generated"]) or 0, nodes_expanded=_int(row["nodes_expanded"]) or 0,
        h0=_int(row["h0"]), seconds=seconds, cpu_seconds=cpu_seconds, iterations=_int(row["iterations"]) or 0,
        solution=[_count(t) for t in row["solution"].split()], check=check,
        timed_out=row["solved"] == "False" and not row["error"])


def _parse_text(text: str):
    match = _TEXT_SOLVED.fullmatch(text)
    if match:
        optimal = _int(match["optimal"])
        length = _int(match["length"])
        return SolveResult(id=match["id"], length=length, optimal=optimal, solved=True, h0=_int(match["h0"]),
                           nodes_generated=_count(match["gen"]), nodes_expanded=_count(match["exp"]),
                           seconds=float(match["seconds"]), solution=[_count(t) for t in match["moves"].split()],
                           check=match["check"],
                           error=f"found an optimal length of {length}, but the file says {optimal}"
                           if match["said"] == "FILE SAYS" else None)
    match = _TEXT_UNSOLVED.fullmatch(text)
    if match:
        return SolveResult(id=match["id"], timed_out=True, h0=_int(match["h0"]), seconds=float(match["seconds"]),
                           nodes_generated=_count(match["gen"]), nodes_expanded=_count(match["exp"]))
    match = _TEXT_ERROR.fullmatch(text)
    if match:
        return SolveResult(id=match["id"], error=match["error"])
    if _TEXT_TRAILER.match(text):
        return None
    return _BAD


def _int(text) -> int | None:
    """A whole number >= 0 of a line (None for an empty cell); ValueError past 18 digits or below 0."""
    if text in (None, "", "None"):
        return None
    if len(text) > 18 or not text.isdigit() or not text.isascii():
        raise ValueError(f"not a count: {_clip(text)}")
    return int(text)


def _count(text: str) -> int:
    value = _int(text.replace(",", ""))
    return 0 if value is None else value


def _clip(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


__all__ = ["ResultsFile", "ResultsFileError", "read_results", "configuration", "check_held"]
