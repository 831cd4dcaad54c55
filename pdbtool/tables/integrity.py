"""Load-time checks of a pattern table's values: what the search kernels rely on beyond the file's structure.

:func:`pdbtool.tables.fileformat.load` checks the envelope (magic, version, header fields, sizes,
checksum) and :meth:`PatternTable.from_file` the payload's structure (a sparse table's offsets, directory
and popcounts).  A checksum is no proof of origin, though: anyone can give a crafted table a valid one.
So before a table reaches a kernel, :func:`check_table` also establishes

* the goal placement's value is 0 (else a search never stops, even on the goal);
* every reached value is at most the header's ``max_value`` (byte, mod3, parity; the excess encodings
  bound their values by the Manhattan distance + 30 by construction);
* a random sample of placements satisfies the relations every pattern database does
  (:func:`pdbtool.tables.verify.check_placement`: at least the Manhattan distance, of its parity, a
  neighbour one less...), which catches wholesale changes such as every value doubled;
* mod3 and parity: the whole payload decodes layer by layer from the goal with every residue consistent
  (so CHILD-H and EXACT can never step below zero or wander: the values are then exactly the
  breadth-first distances of the abstract graph).

Byte tables are checked at every load (one pass over the bytes, in the page cache after the checksum).
The compact encodings need a full decode; that is done once per file and remembered: in this process,
and in a record beside the table (``NAME.checked``) bound to the file's device, inode, size, times and
checksum, so that any change to the file (which changes its ctime) voids the record.  A record is
trusted only if it is a regular file owned by this user or root and writable by no one else; where the
cache cannot be written, no record is kept and the check runs at every load.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
from pathlib import Path

import numpy as np
from numba import njit

from . import encodings, fileformat
from ..errors import PdbtoolError
from .fileformat import TableFileError
from .table import UNREACHABLE, PatternTable

RECORD_SUFFIX = ".checked"
LOAD_SAMPLES = 256
_RECORD_VERSION = 1
_checked: set[tuple[int, ...]] = set()   # stamps of files checked in this process


@njit(cache=True)
def largest_reached(values):
    """The largest value other than 255 (unreachable), or -1 when every entry is unreachable."""
    best = -1
    for i in range(values.shape[0]):
        v = np.int64(values[i])
        if v != UNREACHABLE and v > best:
            best = v
    return best


def record_path(path: Path) -> Path:
    return path.with_name(path.name + RECORD_SUFFIX)


def _record_matches(path: Path, stamp: tuple[int, ...]) -> bool:
    try:
        fd = os.open(record_path(path), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid not in (os.geteuid(), 0) or info.st_mode & 0o022 \
                or info.st_size > 4096:
            return False
        record = json.loads(os.read(fd, 4096).decode())
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    finally:
        os.close(fd)
    return isinstance(record, dict) and record.get("version") == _RECORD_VERSION and \
        record.get("stamp") == list(stamp)


def _write_record(path: Path, stamp: tuple[int, ...]) -> None:
    """Best effort: a cache that cannot be written keeps no record."""
    target = record_path(path)
    tmp = target.with_name(f"{target.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w") as f:
            json.dump({"version": _RECORD_VERSION, "stamp": list(stamp),
                       "checked": "goal, max value, sampled consistency, full decode"}, f)
        os.replace(tmp, target)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def check_values(table: PatternTable, values: np.ndarray, samples: int = LOAD_SAMPLES) -> None:
    """Refuse (TableFileError) a table whose values break what every sound table satisfies."""
    from .verify import _check_consistency, _lossy

    path = table.path
    # the relations below are those of one value per placement; a table of another blank rule (one value per
    # placement and blank region) gets the max check only
    per_placement = table.blank in ("minimized", "ignored")
    goal = table.pattern.goal_rank()
    if per_placement and int(values[goal]) != 0:
        raise TableFileError(f"{path}: the goal placement has value {int(values[goal])}, not 0 (a damaged or "
                             f"crafted table)")
    claimed = table.header.get("max_value")
    if claimed is None:
        raise TableFileError(f"{path}: damaged header (no max_value)")
    largest = int(values.max()) if values.size else 0    # a vectorised pass; 255 only where some are unreachable
    if largest == UNREACHABLE:
        largest = int(largest_reached(values))
    # the excess encodings bound every value by Manhattan + 30 by construction, and store an unreachable
    # entry as a saturated one, which may decode above the largest reached value
    if largest > claimed and table.encoding in ("byte", "mod3", "parity"):
        raise TableFileError(f"{path}: a value of {largest} is above the header's max_value {claimed} (a damaged "
                             f"or crafted table)")
    if samples and per_placement:
        _, status, detail = _check_consistency(table, values, samples, False, None, 1, _lossy(table))
        if status == "fail":
            raise TableFileError(f"{path}: its values are not a pattern database's: {detail}")


def check_table(table: PatternTable, record: bool = True) -> PatternTable:
    """The load-time value checks of :mod:`this module <pdbtool.tables.integrity>`; returns ``table``.

    ``record``: whether a compact table's full check may be remembered beside its file."""
    stamp = table.stamp
    if stamp is not None and stamp in _checked:
        return table
    if table.encoding == "byte":
        check_values(table, np.asarray(table.values))
    else:
        if stamp is not None and table.path is not None and _record_matches(table.path, stamp):
            _checked.add(stamp)
            return table
        try:
            values = encodings.decode(table.values, table.pattern, table.encoding, table.encoding_params)
        except PdbtoolError as exc:
            raise TableFileError(f"{table.path}: {exc}") from None
        check_values(table, values)
        del values
        if record and stamp is not None and table.path is not None:
            _write_record(table.path, stamp)
    if stamp is not None:
        _checked.add(stamp)
    return table


def load_checked(path: str | Path, record: bool = True) -> PatternTable:
    """A pattern table from a file, after every check: the envelope, the structure and the values."""
    return check_table(PatternTable.from_file(fileformat.load(path)), record)
