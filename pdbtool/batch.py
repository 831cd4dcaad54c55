"""The batch runner of the domains' ``solve`` commands: one instance after another, or in worker
processes, with a results file that a killed run resumes from.

A domain gives the runner its instances (objects with a unique ``id``), a module-level
``solve_one(item, time_limit) -> dict`` and, for ``--resume``, a ``check_held(item, record)`` that
re-checks a held result against its instance.  Everything else is the same for every domain: the batch
options (:func:`batch_options`), the worker processes (a dead worker's instance is tried once more; workers
die with their parent), the results file (each record synced to the disk as its instance ends; a held
record is evidence that the domain re-checks, never a verdict), the output formats, the progress line and
the exit statuses.

A record is a JSON-able dict with at least ``id`` (str), ``solved`` (bool: False when the time limit
stopped the search), ``error`` (a one-line message, or None) and ``disagreement`` (a one-line message when
the result contradicts an optimum stated in the input, or None).  This module belongs to the command-line
layer: it prints.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import os
import stat
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from .cli._common import (EXIT_DISAGREES, EXIT_FAILED, EXIT_OK, EXIT_USAGE, EXIT_WORKER_KILLED, Interrupted,
                          format_option, jobs_option, output_option, progress_option, ray_option, resume_option, say,
                          time_limit_option)
from .errors import PdbtoolError
from .files import FileKindError, read_regular, read_stdin
from .processes import WorkerPool, die_with_parent

MAX_RESULTS_BYTES = 1 << 30   # a results file larger than this is not read back (it is not ours)
_KILLED_TWICE = "__killed_twice__"


class BatchError(PdbtoolError):
    pass


@dataclass(frozen=True)
class BatchOptions:
    """What the batch options of a command asked for."""

    jobs: int = 1
    time_limit: float | None = None
    output: str | None = None
    resume: bool = False
    progress: bool = False
    ray: str | None = None
    fmt: str = "text"


def batch_options(func):
    """Add the batch options (``--jobs``, ``--time-limit``, ``--output``, ``--resume``, ``--progress``,
    ``--ray``, ``--format``) to a command; it receives them as one ``batch`` argument."""

    @functools.wraps(func)
    def wrapper(*args, jobs, time_limit, output, resume, show_progress, ray_address, fmt, **kwargs):
        if resume and output is None:
            raise click.UsageError("--resume applies with --output FILE")
        if ray_address is not None and jobs > 1:
            raise click.UsageError("--jobs does not apply with --ray (the cluster's CPUs are the workers)")
        batch = BatchOptions(jobs=jobs, time_limit=time_limit, output=output, resume=resume,
                             progress=show_progress, ray=ray_address, fmt=fmt)
        return func(*args, batch=batch, **kwargs)

    options = [
        jobs_option,
        time_limit_option,
        output_option("Write the results to FILE as each instance ends, each synced to the disk (JSON Lines; "
                      "CSV with --format csv)."),
        resume_option,
        progress_option,
        ray_option,
        format_option("text: a line per instance and a summary; json: JSON Lines; csv: a row per instance."),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


# ---------------------------------------------------------------------------------------------------------
# records


def normalized(record: Any, item_id: str) -> dict:
    """A record as the runner keeps it: the four keys present and of their types (a domain's slip is an
    error of that instance, not a traceback)."""
    if not isinstance(record, dict):
        return {"id": item_id, "solved": False, "error": f"internal error: the solver returned "
                f"{type(record).__name__}, not a record", "disagreement": None}
    record = dict(record)
    record["id"] = item_id
    record["solved"] = bool(record.get("solved", False))
    for key in ("error", "disagreement"):
        value = record.get(key)
        record[key] = None if value is None else str(value)
    return record


def failed(item_id: str, message: str, **extra) -> dict:
    return {"id": item_id, "solved": False, "error": message, "disagreement": None, **extra}


def solve_safely(solve_one: Callable, item, time_limit: float | None) -> dict:
    """``solve_one(item, time_limit)`` as a record whatever happens inside, but a signal."""
    item_id = str(item.id)
    error = getattr(item, "error", None)
    if error is not None:
        return failed(item_id, str(error))
    try:
        return normalized(solve_one(item, time_limit), item_id)
    except PdbtoolError as exc:
        return failed(item_id, str(exc))
    except MemoryError:
        return failed(item_id, "out of memory")
    except RecursionError:
        return failed(item_id, "internal error: recursion too deep")
    except Exception as exc:  # a bug of the domain's solver: one line for this instance, the batch goes on
        return failed(item_id, f"internal error: {type(exc).__name__}: {exc}")


def _typed_cell(text: str) -> Any:
    """A CSV cell as it was written: JSON for anything but a plain string."""
    if text == "":
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def _cell(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def _well_formed(record: Any) -> str | None:
    """Why a record read back from a results file cannot be used as one, or None."""
    if not isinstance(record, dict):
        return "not a JSON object"
    if not isinstance(record.get("id"), str) or not record["id"]:
        return "no instance id"
    if not isinstance(record.get("solved"), bool):
        return "'solved' is not true or false"
    for key in ("error", "disagreement"):
        if record.get(key) is not None and not isinstance(record[key], str):
            return f"'{key}' is not text"
    return None


# ---------------------------------------------------------------------------------------------------------
# the results file


class ResultsLog:
    """A batch's results file: JSON Lines, or CSV with ``fmt`` csv.  Opened with ``resume`` it is read back
    first: ``held`` maps each instance id to its last well-formed record and that record's line number.
    Every record is appended, flushed and synced before the next; a line cut short by a kill is ended
    before the next record, so that no record is lost with it."""

    def __init__(self, path: str, fmt: str, columns: Sequence[str], resume: bool):
        self.path = path
        self.csv = fmt == "csv"
        self.columns = list(columns)
        self.held: dict[str, tuple[dict, int]] = {}
        self.notes: list[str] = []
        size = _regular_size(path)
        if size and not resume:
            raise BatchError(f"{path} holds results: add --resume to go on from them, or remove it")
        if size > MAX_RESULTS_BYTES:
            raise BatchError(f"{path}: {size:,} bytes, larger than a results file of pdbtool can be")
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags, 0o644)
        except OSError as exc:
            raise BatchError(f"{path}: cannot write: {exc.strerror or exc}") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced since the check
                raise BatchError(f"{path}: not a regular file")
            _lock(fd, path)
            text = _read_all(fd)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        self._needs_newline = bool(text) and not text.endswith(b"\n")
        self._needs_header = self.csv and not text.strip()
        if text:
            self._read_back(text.decode("utf-8", errors="replace"))

    def _read_back(self, text: str) -> None:
        lines = text.split("\n")
        if self.csv:
            self._read_csv(lines)
            return
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            why: str | None
            try:
                record = json.loads(line)
            except ValueError:
                record, why = None, "not JSON (a line cut short?)"
            else:
                why = _well_formed(record)
            if why is not None:
                self.notes.append(f"{self.path}:{number}: {why}; ignored")
                continue
            self.held[record["id"]] = (record, number)

    def _read_csv(self, lines: list[str]) -> None:
        rows = csv.reader(lines)
        try:
            header = next(rows)
        except (StopIteration, csv.Error):
            return
        if header != self.columns:
            raise BatchError(f"{self.path}: its CSV columns are not those of this command's results: "
                             f"remove it or name another --output")
        for number, row in enumerate(rows, 2):
            if not row:
                continue
            if len(row) != len(header):
                self.notes.append(f"{self.path}:{number}: {len(row)} cells, not {len(header)}; ignored")
                continue
            record = {key: _typed_cell(cell) for key, cell in zip(header, row)}
            if isinstance(record.get("id"), (int, float)):
                record["id"] = row[header.index("id")]
            why = _well_formed(record)
            if why is not None:
                self.notes.append(f"{self.path}:{number}: {why}; ignored")
                continue
            self.held[record["id"]] = (record, number)

    def append(self, record: dict) -> None:
        out = io.StringIO()
        if self._needs_newline:
            out.write("\n")
        if self.csv:
            writer = csv.writer(out, lineterminator="\n")
            if self._needs_header:
                writer.writerow(self.columns)
            writer.writerow([_cell(record.get(key)) for key in self.columns])
        else:
            out.write(json.dumps(record) + "\n")
        data = out.getvalue().encode()
        try:
            while data:
                data = data[os.write(self._fd, data):]
            os.fsync(self._fd)
        except OSError as exc:
            raise BatchError(f"{self.path}: cannot write: {exc.strerror or exc}") from None
        self._needs_newline = self._needs_header = False

    def close(self) -> None:
        os.close(self._fd)


def _regular_size(path: str) -> int:
    """The size of ``path``; 0 if it does not exist; refused if it is not a regular file."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return 0
    except OSError as exc:
        raise BatchError(f"{path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise BatchError(f"{path}: not a regular file")
    return info.st_size


def _lock(fd: int, path: str) -> None:
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise BatchError(f"{path} is being written by another pdbtool run") from None


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    os.lseek(fd, 0, os.SEEK_SET)
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


# ---------------------------------------------------------------------------------------------------------
# worker processes


def _batch_handler(solve_one: Callable, time_limit: float | None) -> Callable:
    """A worker process's handler (:class:`pdbtool.processes.WorkerPool`)."""
    return functools.partial(solve_safely, solve_one, time_limit=time_limit)


def _in_processes(items: list, solve_one: Callable, time_limit: float | None, jobs: int):
    """Yield ``(index, record)`` as the instances end, solved in ``jobs`` spawned processes; the instance
    of a worker that dies is tried once more, and reported failed if that worker dies too."""

    def lost(index: int, how: str, signum: int | None) -> dict:
        record = failed(str(items[index].id), f"the worker solving it was {how}, twice (once retried)")
        record[_KILLED_TWICE] = True
        return record

    with WorkerPool(jobs, functools.partial(_batch_handler, solve_one, time_limit), lost, BatchError) as pool:
        yield from pool.run(items)


def _on_ray(items: list, solve_one: Callable, time_limit: float | None, address: str):
    try:
        import ray
    except ImportError:
        raise BatchError("--ray needs Ray: pip install 'pdbtool[ray]'") from None
    started = not ray.is_initialized()
    if started:
        ray.init(address=None if address == "local" else address, log_to_driver=False,
                 include_dashboard=False, configure_logging=False)
    try:
        remote = ray.remote(solve_safely)
        futures = {remote.remote(solve_one, item, time_limit): i for i, item in enumerate(items)}
        waiting = list(futures)
        while waiting:
            done, waiting = ray.wait(waiting, num_returns=1)
            for ref in done:
                index = futures[ref]
                try:
                    yield index, ray.get(ref)
                except Exception as exc:  # the task's worker died, or the cluster lost it
                    yield index, failed(str(items[index].id), f"lost on the Ray cluster: {type(exc).__name__}")
    finally:
        if started:
            ray.shutdown()


# ---------------------------------------------------------------------------------------------------------
# the run


class _Printer:
    """Records in input order on stdout, in the batch's format."""

    def __init__(self, fmt: str, columns: Sequence[str], text_line: Callable[[dict], str] | None):
        self.fmt = fmt
        self.columns = list(columns)
        self.text_line = text_line or (lambda r: json.dumps(r))
        self.header_done = False

    def __call__(self, record: dict) -> None:
        if self.fmt == "json":
            click.echo(json.dumps(record))
        elif self.fmt == "csv":
            out = io.StringIO()
            writer = csv.writer(out, lineterminator="\n")
            if not self.header_done:
                writer.writerow(self.columns)
                self.header_done = True
            writer.writerow([_cell(record.get(key)) for key in self.columns])
            click.echo(out.getvalue(), nl=False)
        else:
            click.echo(self.text_line(record))


class _Progress:
    def __init__(self, total: int, what: str, wanted: bool):
        self.total = total
        self.what = what
        self.live = sys.stderr.isatty()
        self.wanted = wanted or self.live
        self.start = time.perf_counter()
        self.done = self.failed = 0

    def __call__(self, record: dict) -> None:
        self.done += 1
        self.failed += record["error"] is not None
        if not self.wanted or self.total < 2:
            return
        elapsed = time.perf_counter() - self.start
        left = elapsed * (self.total - self.done) / self.done
        text = (f"pdbtool: {self.done} of {self.total} {self.what} done ({self.failed} failed), {elapsed:.0f} s, "
                f"~{left:.0f} s left")
        click.echo(("\r" + text + "\033[K") if self.live else text, err=True, nl=not self.live)

    def close(self) -> None:
        if self.wanted and self.live and self.total > 1:
            click.echo("", err=True)


def run_batch(items: Sequence, solve_one: Callable, batch: BatchOptions, *,
              check_held: Callable[[Any, dict], str | None] | None = None,
              text_line: Callable[[dict], str] | None = None, csv_columns: Sequence[str] = ("id", "solved", "error"),
              what: str = "instances") -> int:
    """Solve ``items`` with ``solve_one`` as ``batch`` asks, print each record and return the exit status
    (0 fine, 1 an instance failed, 3 a result disagrees with its input, 4 a worker killed twice)."""
    items = list(items)
    ids = [str(item.id) for item in items]
    seen: set[str] = set()
    for name in ids:
        if name in seen:
            raise BatchError(f"two instances are named {name}: names must be unique in a batch")
        seen.add(name)
    columns = list(csv_columns)
    log = ResultsLog(batch.output, batch.fmt, columns, batch.resume) if batch.output is not None else None
    try:
        held, todo = _held_and_todo(items, log, check_held)
        printer = _Printer(batch.fmt, columns, text_line)
        progress = _Progress(len(todo), what, batch.progress)
        records: list[dict | None] = [None] * len(todo)
        printed = 0

        def finish(index: int, record: dict) -> None:
            nonlocal printed
            killed = record.pop(_KILLED_TWICE, False)
            if log is not None:
                log.append(record)
            if killed:
                record[_KILLED_TWICE] = True
            records[index] = record
            for key in ("error", "disagreement"):
                if record[key] is not None:   # named on stderr whatever the format, for the batch's log
                    say(f"{record['id']}: {record[key]}")
            progress(record)
            while printed < len(records) and records[printed] is not None:
                shown = {k: v for k, v in records[printed].items() if k != _KILLED_TWICE}  # type: ignore[union-attr]
                printer(shown)
                printed += 1

        try:
            if batch.ray is not None:
                stream = _on_ray(todo, solve_one, batch.time_limit, batch.ray)
            elif batch.jobs > 1 and len(todo) > 1:
                stream = _in_processes(todo, solve_one, batch.time_limit, batch.jobs)
            else:
                stream = ((i, solve_safely(solve_one, item, batch.time_limit)) for i, item in enumerate(todo))
            for index, record in stream:
                finish(index, record)
        except Interrupted as stop:
            done = sum(r is not None for r in records)
            stop.note = (f"{done} of {len(todo)} {what} finished" +
                         (f", kept in {batch.output} (--resume goes on)" if log is not None else ""))
            raise
        finally:
            progress.close()
        finished = [r for r in records if r is not None] + held
        if batch.fmt == "text":
            click.echo(_summary(finished, len(held), what, batch.output))
        return _status(finished)
    finally:
        if log is not None:
            log.close()


def _held_and_todo(items: list, log: ResultsLog | None, check_held) -> tuple[list[dict], list]:
    """The held records that pass their checks, and the items still to solve."""
    if log is None:
        return [], items
    for note in log.notes:
        say(note)
    held, todo = [], []
    retried = 0
    for item in items:
        entry = log.held.get(str(item.id))
        if entry is None or getattr(item, "error", None) is not None:
            todo.append(item)
            continue
        record, line = entry
        if not record["solved"] or record["error"] is not None:
            retried += 1
            todo.append(item)
            continue
        try:
            reason = check_held(item, record) if check_held is not None else None
        except Exception as exc:  # a record of the wrong shape for the domain's check
            reason = f"unreadable record ({type(exc).__name__})"
        if reason is not None:
            say(f"{log.path}:{line}: {item.id}: {reason}; solving it again")
            todo.append(item)
        else:
            held.append(record)
    say(f"{log.path}: {len(held)} of {len(items)} held results checked and kept, {len(todo)} to solve"
        + (f" ({retried} unsolved or failed before)" if retried else ""))
    return held, todo


def _summary(records: list[dict], held: int, what: str, output: str | None) -> str:
    solved = sum(r["solved"] and r["error"] is None for r in records)
    errors = sum(r["error"] is not None for r in records)
    unsolved = len(records) - solved - errors
    disagree = sum(r["disagreement"] is not None for r in records)
    text = f"{len(records)} {what}: {solved} solved, {unsolved} stopped by the time limit, {errors} failed"
    if disagree:
        text += f", {disagree} disagreeing with their input"
    if held:
        text += f" ({held} held in {output})"
    return text


def _status(records: list[dict]) -> int:
    if any(r["disagreement"] is not None for r in records):
        return EXIT_DISAGREES
    if any(r.get(_KILLED_TWICE) for r in records):
        return EXIT_WORKER_KILLED
    return EXIT_FAILED if any(r["error"] is not None for r in records) else EXIT_OK


def read_limited(path: str | os.PathLike, limit: int, what: str = "file") -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (``-``: standard input), refused in one line
    otherwise: a FIFO or a device is never opened for a blocking read, ``/dev/zero`` never read to the end."""
    try:
        return read_stdin(limit, what) if str(path) == "-" else read_regular(path, limit, what)
    except FileNotFoundError:
        raise BatchError(f"{path}: no such file") from None
    except FileKindError as exc:
        raise BatchError(str(exc)) from None


def instance_paths(arguments: Sequence[str], suffixes: Sequence[str]) -> list[str]:
    """The files the arguments name: files as given, ``-``, and the files of a directory whose names end
    in one of ``suffixes`` (sorted)."""
    paths: list[str] = []
    for arg in arguments:
        if arg != "-" and os.path.isdir(arg):
            found = sorted(str(p) for p in Path(arg).iterdir()
                           if p.is_file() and (not suffixes or p.name.endswith(tuple(suffixes))))
            if not found:
                raise BatchError(f"{arg}: no instance files ({', '.join(suffixes)}) in this directory")
            paths.extend(found)
        else:
            paths.append(arg)
    return paths


__all__ = ["BatchError", "BatchOptions", "EXIT_USAGE", "ResultsLog", "batch_options", "die_with_parent",
           "failed", "instance_paths", "read_limited", "run_batch", "solve_safely"]
