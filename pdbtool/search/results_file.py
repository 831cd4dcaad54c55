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
from ..puzzle.instances import CSV_COLUMNS, ResultWriter, summarize
from .solver import SolveResult

TEXT_HEADER = "# pdbtool solve results: "
_ID = r"(?P<id>\S+) +"
_TEXT_SOLVED = re.compile(_ID + r"length +(?P<length>\d+)(?: \((?P<said>optimal|FILE SAYS) (?P<optimal>\d+)\))?"
                          r"  h0 +(?P<h0>\d+)  generated +(?P<gen>[\d,]+)  expanded +(?P<exp>[\d,]+)"
                          r" +(?P<seconds>[\d.]+) s  moves:(?P<moves>[\d ]*)")
_TEXT_UNSOLVED = re.compile(_ID + r"unsolved: limit reached after (?P<seconds>[\d.]+) s  h0 (?P<h0>\S+)"
                            r"  generated (?P<gen>[\d,]+)  expanded (?P<exp>[\d,]+)")
_TEXT_ERROR = re.compile(_ID + r"error: (?P<error>.*)")
_RESULT_FIELDS = {f.name for f in fields(SolveResult)}


class ResultsFileError(PdbtoolError):
    pass


def configuration(labels: dict[str, str]) -> str:
    """The text header's statement of the run's configuration: the heuristic's label per board."""
    return "; ".join(f"{board} {label}" for board, label in labels.items())


class ResultsFile:
    """The results file of a batch: :meth:`open` it, then :meth:`write` each result as its instance ends
    and :meth:`write_summary` at the end.  ``held`` lists the results it held when opened (with resume)."""

    def __init__(self, path: Path, fmt: str, handle, held: list[SolveResult]):
        self.path = path
        self.fmt = fmt
        self.held = held
        self._held_ids = {r.id for r in held}
        self.written: list[SolveResult] = []
        self._file = handle
        self._buffer = io.StringIO()
        self._formatter = ResultWriter(self._buffer, fmt)  # the stdout formats, line for line
        self._take()  # the CSV header row: written once, with the first line of a new file

    @classmethod
    def open(cls, path, fmt: str, instances, labels: dict[str, str], resume: bool = False) -> ResultsFile:
        """Open ``path`` for the results of ``instances`` (each with a distinct id).  Without ``resume`` the
        file must be new or empty; with it, the results it holds are read (and checked against the boards
        of the instances and ``labels``, the heuristic's label per board) and the rest is cut off."""
        path = Path(path)
        seen: dict[str, int] = {}
        for inst in instances:
            if inst.id in seen:
                raise ResultsFileError(f"--output needs a distinct id per instance: {inst.id} is on lines "
                                       f"{seen[inst.id]} and {inst.line}")
            seen[inst.id] = inst.line
        try:  # opened without truncating, and locked before it is read or cut
            handle = os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT, 0o666), "r+b")
        except OSError as exc:
            raise ResultsFileError(f"{path}: cannot write: {exc.strerror or exc}") from None
        try:
            _lock(handle, path)
            size = os.fstat(handle.fileno()).st_size
            if size and not resume:
                raise ResultsFileError(f"{path} exists: add --resume to go on with it, or remove it")
            held: list = []
            end = 0
            if size:
                held, end = read_results(path, fmt, {inst.id: inst for inst in instances}, labels)
            handle.truncate(end)
            handle.seek(end)
        except OSError as exc:
            handle.close()
            raise ResultsFileError(f"{path}: cannot write: {exc.strerror or exc}") from None
        except BaseException:
            handle.close()
            raise
        out = cls(path, fmt, handle, held)
        if end == 0:
            out._append((TEXT_HEADER + configuration(labels) + "\n" if fmt == "text" else "") + out._header)
        return out

    def holds(self, inst) -> bool:
        return inst.id in self._held_ids

    def _take(self) -> None:
        self._header = self._buffer.getvalue()
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


def read_results(path: Path, fmt: str, instances: dict, labels: dict[str, str]) -> tuple[list[SolveResult], int]:
    """The results a file holds and the offset where they end (what follows is cut off on resume)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ResultsFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    lines = data.split(b"\n")  # the last piece lacks its newline: empty, or a line cut short
    held: list[SolveResult] = []
    ids = set()
    offset = end = 0
    trailer = None  # the line number of the first line after the results (a summary)
    for number, raw in enumerate(lines[:-1], 1):
        offset += len(raw) + 1
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ResultsFileError(f"{path}:{number}: not text: not a results file of pdbtool solve") from None
        if number == 1 and fmt in ("text", "csv"):
            want = TEXT_HEADER + configuration(labels) if fmt == "text" else ",".join(CSV_COLUMNS)
            if text != want:
                what = "configuration" if fmt == "text" and text.startswith(TEXT_HEADER) else "format"
                raise ResultsFileError(f"{path}: results of another {what} ({_clip(text)}), not {_clip(want)}")
            end = offset
            continue
        result = _parse(text, fmt)
        if result is None:
            if trailer is None:
                trailer = number
            continue
        if result is _BAD:
            raise ResultsFileError(f"{path}:{number}: not a result line of pdbtool solve --format {fmt}")
        if trailer is not None:
            raise ResultsFileError(f"{path}:{number}: a result after the summary on line {trailer}")
        inst = instances.get(result.id)
        if inst is None:
            raise ResultsFileError(f"{path}:{number}: a result of instance {result.id}, which the instances "
                                   f"do not hold: results of another batch")
        if result.id in ids:
            raise ResultsFileError(f"{path}:{number}: a second result of instance {result.id}")
        board = inst.board.dims if inst.board is not None else ""
        if fmt != "text" and result.board and result.board != board:
            raise ResultsFileError(f"{path}:{number}: instance {result.id} was solved on {result.board}, "
                                   f"not {board}: results of another configuration")
        if fmt != "text" and (result.solved or result.timed_out) and board in labels \
                and result.heuristic != labels[board]:
            raise ResultsFileError(f"{path}:{number}: results of another configuration ({result.heuristic}, "
                                   f"not {labels[board]})")
        ids.add(result.id)
        held.append(result)
        end = offset
    if fmt == "csv" and end == 0 and len(lines) > 1:
        raise ResultsFileError(f"{path}: not a results file of pdbtool solve --format csv")
    return held, end


_BAD = object()


def _parse(text: str, fmt: str):
    """The result of a line; None for a line that is none (a summary, an interrupted instance); _BAD."""
    if fmt == "json":
        try:
            row = json.loads(text)
        except ValueError:
            return _BAD
        if not isinstance(row, dict):
            return _BAD
        if row.get("summary") is True or row.get("interrupted") is True:
            return None
        if "id" not in row or "solved" not in row:
            return _BAD
        return SolveResult(**{k: v for k, v in row.items() if k in _RESULT_FIELDS})
    if fmt == "csv":
        try:
            row = next(csv.DictReader(io.StringIO(text), fieldnames=CSV_COLUMNS, strict=True))
        except (csv.Error, StopIteration):
            return _BAD
        if row.get(None) or row["solved"] not in ("True", "False"):
            return _BAD
        if row["error"] == "interrupted":
            return None
        try:
            return SolveResult(
                id=row["id"], board=row["board"], heuristic=row["heuristic"], length=_int(row["length"]),
                optimal=_int(row["optimal"]), solved=row["solved"] == "True", error=row["error"] or None,
                nodes_generated=int(row["nodes_generated"] or 0), nodes_expanded=int(row["nodes_expanded"] or 0),
                h0=_int(row["h0"]), seconds=float(row["seconds"] or 0), cpu_seconds=float(row["cpu_seconds"] or 0),
                iterations=int(row["iterations"] or 0), solution=[int(t) for t in row["solution"].split()],
                timed_out=row["solved"] == "False" and not row["error"])
        except (TypeError, ValueError):
            return _BAD
    match = _TEXT_SOLVED.fullmatch(text)
    if match:
        optimal = _int(match["optimal"])
        length = int(match["length"])
        return SolveResult(id=match["id"], length=length, optimal=optimal, solved=True, h0=int(match["h0"]),
                           nodes_generated=_count(match["gen"]), nodes_expanded=_count(match["exp"]),
                           seconds=float(match["seconds"]), solution=[int(t) for t in match["moves"].split()],
                           error=f"found an optimal length of {length}, but the file says {optimal}"
                           if match["said"] == "FILE SAYS" else None)
    match = _TEXT_UNSOLVED.fullmatch(text)
    if match:
        return SolveResult(id=match["id"], timed_out=True, h0=_int(match["h0"]), seconds=float(match["seconds"]),
                           nodes_generated=_count(match["gen"]), nodes_expanded=_count(match["exp"]))
    match = _TEXT_ERROR.fullmatch(text)
    if match:
        return SolveResult(id=match["id"], error=match["error"])
    return None


def _int(text) -> int | None:
    return None if text in (None, "", "None") else int(text)


def _count(text: str) -> int:
    return int(text.replace(",", ""))


def _clip(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


__all__ = ["ResultsFile", "ResultsFileError", "read_results", "configuration"]
