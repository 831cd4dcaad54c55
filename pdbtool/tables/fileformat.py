"""The on-disk table format: a magic string, a versioned self-describing header, the payload, a checksum.

Layout (all integers little-endian)::

    offset 0   8 bytes   magic  b"\\x93PDBTBL\\n"
    offset 8   uint16    format major version (a reader refuses a major it does not know)
    offset 10  uint16    format minor version (additions a reader may ignore)
    offset 12  uint32    header length L in bytes
    offset 16  L bytes   header: UTF-8 JSON, space-padded so that the payload starts on a 64-byte boundary
    16 + L     P bytes   payload (P = header["payload_bytes"])
    end - 8    uint64    xxhash64 (seed 0) of every byte before it

The header names the table's identity (board, goal, tiles, blank rule, encoding and its parameters) and
its shape (entries, payload dtype and bytes, max value).  Loading checks the magic, the version, the
sizes against the file's length and the checksum of the whole file, then memory-maps the payload:
the array returned is a read-only view of the page cache, not a copy.
"""

from __future__ import annotations

import errno
import json
import math
import mmap
import os
import stat
import struct
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable
from typing import Any

import numpy as np
import xxhash

from .._version import __version__
from ..errors import PdbtoolError

MAGIC = b"\x93PDBTBL\n"
FORMAT_MAJOR = 1
FORMAT_MINOR = 0
_PREFIX = struct.Struct("<8sHHI")  # magic, major, minor, header length
_DIGEST = struct.Struct("<Q")
_ALIGN = 64
REQUIRED_KEYS = ("width", "height", "goal", "tiles", "blank", "encoding", "entries", "payload_dtype",
                 "payload_bytes")
# the keys of the tables of other domains, by the header's "kind" (a tile table has none)
KIND_KEYS = {"hanoi4": ("disks", "target", "layout", "encoding", "entries", "payload_dtype", "payload_bytes"),
             "msa": ("sequences_hash", "cost", "lengths", "triangles", "partitions", "upper_bound", "entries",
                     "payload_dtype", "payload_bytes"),
             "move-automaton": ("width", "height", "depth", "states", "duplicates", "entries", "payload_dtype",
                                "payload_bytes"),
             "vertex-cover": ("graph_hash", "vertices", "edges", "cliques", "entries", "payload_dtype",
                              "payload_bytes")}
# A header is a few hundred bytes; the cap keeps a crafted length from making the reader allocate and parse
# megabytes (numpy caps its .npy headers for the same reason).
MAX_HEADER_BYTES = 1 << 16
# Payload types a reader accepts: unsigned and little-endian (the kernels read words in the machine's order).
PAYLOAD_DTYPES = ("|u1", "<u2", "<u4", "<u8")
_MAX_DIGITS = 30            # longer JSON integers are refused before Python converts them
_MAX_CELLS = 64             # boards, goals and tile lists are at most this long


class TableFileError(PdbtoolError):
    """A table file that cannot be used (damaged, truncated, of another version or identity)."""


@dataclass
class TableFile:
    """A loaded table: its header and its payload (a read-only memory-mapped array)."""

    path: Path | None
    header: dict[str, Any]
    payload: np.ndarray
    # (device, inode, size, mtime_ns, ctime_ns, stored digest) of the file opened: what a record of a
    # check made once (pdbtool.tables.integrity) is bound to; a change to the file changes its ctime
    stamp: tuple[int, ...] | None = None

    @property
    def file_bytes(self) -> int:
        return int(self.header.get("_file_bytes", 0))


def _header_bytes(header: dict[str, Any]) -> bytes:
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    pad = (-(_PREFIX.size + len(text))) % _ALIGN
    return text + b" " * pad


def encode_prefix(header: dict[str, Any]) -> bytes:
    """Magic, version, header length and header: everything that precedes the payload."""
    body = _header_bytes(header)
    return _PREFIX.pack(MAGIC, FORMAT_MAJOR, FORMAT_MINOR, len(body)) + body


def make_header(**fields: Any) -> dict[str, Any]:
    header = {"format": f"{FORMAT_MAJOR}.{FORMAT_MINOR}", "pdbtool_version": __version__}
    header.update(fields)
    return header


def write_hashed(f, array: np.ndarray, hasher) -> None:
    """Write ``array``'s bytes to ``f`` in 16 MiB pieces, each also fed to ``hasher`` (a signal is seen
    between two pieces)."""
    view = np.ascontiguousarray(array).reshape(-1).view(np.uint8).data
    step = 1 << 24
    for start in range(0, len(view), step):
        chunk = view[start:start + step]
        f.write(chunk)
        hasher.update(chunk)


def save(path: str | os.PathLike, header: dict[str, Any], payload: np.ndarray) -> int:
    """Write a table file at ``path`` (not atomically: the cache writes a temporary file and renames it).

    Returns the file's size.  A full disk raises TableFileError naming the file.
    """
    path = Path(path)
    payload = np.ascontiguousarray(payload)
    header = dict(header)
    header["payload_dtype"] = payload.dtype.str
    header["payload_bytes"] = int(payload.nbytes)
    prefix = encode_prefix(header)
    hasher = xxhash.xxh64()
    try:
        # never through a symbolic link planted at the name (the cache creates its temporaries with
        # O_EXCL first, so the name is its own file)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                     0o644)
        with open(fd, "wb") as f:
            f.write(prefix)
            hasher.update(prefix)
            write_hashed(f, payload, hasher)
            f.write(_DIGEST.pack(hasher.intdigest()))
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise TableFileError(f"{path}: the disk is full while saving the table ({exc.strerror})") from None
        raise TableFileError(f"{path}: cannot write the table: {exc.strerror or exc}") from None
    return len(prefix) + payload.nbytes + _DIGEST.size


def open_regular(path: str | os.PathLike) -> int:
    """A read-only descriptor of ``path``, refused unless it is a regular file.

    Opened without blocking, so a FIFO or a device planted under a table's name is refused at once
    instead of blocking the reader forever."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise TableFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise TableFileError(f"{path}: not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_header(path: str | os.PathLike) -> tuple[dict[str, Any], int]:
    """The header of a table file and the payload's offset, checking magic, version and sizes only."""
    path = Path(path)
    fd = open_regular(path)
    try:
        with os.fdopen(fd, "rb") as f:
            size = os.fstat(f.fileno()).st_size  # of the file opened, even if the name is replaced meanwhile
            prefix = f.read(_PREFIX.size)
            header, offset = _parse_prefix(path, prefix, size, f)
    except OSError as exc:
        raise TableFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return header, offset


def is_kind(path: str | os.PathLike, kind: str) -> bool:
    """Whether a file's header names ``kind`` (False for anything unreadable)."""
    try:
        header, _ = read_header(path)
    except TableFileError:
        return False
    return header.get("kind") == kind


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a number")


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_DIGITS:
        raise ValueError(f"an integer of {len(text)} digits")
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:20]} is not a finite number")
    return value


def parse_header_text(path: Path, raw: bytes) -> Any:
    """The JSON of a header; every failure (bad UTF-8 or JSON, a huge integer, NaN, infinity, nesting too
    deep) is a TableFileError."""
    try:
        return json.loads(raw.decode(), parse_int=_parse_int, parse_float=_parse_float,
                          parse_constant=_refuse_constant)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise TableFileError(f"{path}: damaged header (not valid JSON)") from None
    except (ValueError, RecursionError, OverflowError) as exc:
        raise TableFileError(f"{path}: damaged header ({clip(str(exc))})") from None


def _parse_prefix(path: Path, prefix: bytes, size: int, f) -> tuple[dict[str, Any], int]:
    if size == 0:
        raise TableFileError(f"{path}: the file is empty")
    if len(prefix) < _PREFIX.size or prefix[:8] != MAGIC:
        raise TableFileError(f"{path}: not a pdbtool table (bad magic string)")
    _, major, minor, header_len = _PREFIX.unpack(prefix)
    if major != FORMAT_MAJOR:
        raise TableFileError(f"{path}: table format version {major}.{minor} is not supported "
                             f"(this pdbtool reads {FORMAT_MAJOR}.x)")
    if _PREFIX.size + header_len + _DIGEST.size > size:
        raise TableFileError(f"{path}: truncated file (header runs past the end)")
    if header_len > MAX_HEADER_BYTES:
        raise TableFileError(f"{path}: damaged header ({header_len:,} bytes, more than the "
                             f"{MAX_HEADER_BYTES:,} a table header may have)")
    header = parse_header_text(path, f.read(header_len))
    kind = header.get("kind") if isinstance(header, dict) else None
    required = KIND_KEYS.get(kind, REQUIRED_KEYS) if isinstance(kind, str) else REQUIRED_KEYS
    if not isinstance(header, dict) or any(k not in header for k in required):
        missing = [k for k in required if not isinstance(header, dict) or k not in header]
        raise TableFileError(f"{path}: damaged header (missing {', '.join(missing)})")
    # a damaged header may still be valid JSON: check the types of what the reader relies on
    for key in ("entries", "payload_bytes"):
        if not _is_count(header[key]):
            raise TableFileError(f"{path}: damaged header ({key} is {clip(header[key])}, not a count)")
    offset = _PREFIX.size + header_len
    expected = offset + int(header["payload_bytes"]) + _DIGEST.size
    if size < expected:
        raise TableFileError(f"{path}: truncated file ({size} bytes, the header promises {expected})")
    if size > expected:
        raise TableFileError(f"{path}: {size - expected} unexpected bytes after the table")
    if header["payload_dtype"] not in PAYLOAD_DTYPES:
        why = "big-endian" if isinstance(header["payload_dtype"], str) and header["payload_dtype"][:1] == ">" \
            else "not an unsigned integer type"
        raise TableFileError(f"{path}: damaged header (payload type {clip(header['payload_dtype'])} "
                             f"is {why}; tables hold little-endian unsigned integers)")
    dtype = np.dtype(header["payload_dtype"])
    if int(header["payload_bytes"]) % dtype.itemsize:
        raise TableFileError(f"{path}: damaged header (payload size is not a whole number of items)")
    validate_header(path, header)
    header["_file_bytes"] = size
    return header, offset


# --- the header validator: every field any reader uses, by type and range ----------------------------------

def _whole(value: Any, low: int = 0, high: int = 1 << 62) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _finite(value: Any, low: float = 0.0) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            and value >= low)


def _short_text(value: Any, limit: int = 200) -> bool:
    return isinstance(value, str) and len(value) <= limit


def _cells(value: Any) -> bool:
    return isinstance(value, list) and len(value) <= _MAX_CELLS and all(_whole(v, 0, 4096) for v in value)


# key -> (test, what it must be); optional keys are checked only when present
_FieldCheck = tuple[Callable[[Any], bool], str]
_COMMON: dict[str, _FieldCheck] = {
    "format": (_short_text, "text"),
    "pdbtool_version": (_short_text, "text"),
    "kind": (_short_text, "text"),
    "board": (_short_text, "text"),
    "width": (lambda v: _whole(v, 1, _MAX_CELLS), f"a whole number from 1 to {_MAX_CELLS}"),
    "height": (lambda v: _whole(v, 1, _MAX_CELLS), f"a whole number from 1 to {_MAX_CELLS}"),
    "goal": (_cells, f"a list of at most {_MAX_CELLS} cells"),
    "tiles": (_cells, f"a list of at most {_MAX_CELLS} tiles"),
    "blank": (_short_text, "text"),
    "encoding": (_short_text, "text"),
    "encoding_params": (lambda v: isinstance(v, dict) and len(v) <= 8
                        and all(_short_text(k, 40) and _whole(x) for k, x in v.items()),
                        "an object of whole numbers"),
    "max_value": (lambda v: _whole(v, 0, 255), "a whole number from 0 to 255"),
    "build_seconds": (_finite, "a finite number of seconds"),
    "description": (lambda v: _short_text(v, 2000), "text"),
    "conversion": (lambda v: isinstance(v, dict), "an object"),
    "layers": (lambda v: isinstance(v, (list, dict, int)) and not isinstance(v, bool), "a list of layer sizes"),
    # the move automata's files
    "depth": (lambda v: _whole(v, 2, 64), "a whole number from 2 to 64"),
    "states": (_whole, "a count"),
    "duplicates": (_whole, "a count"),
    # the dynamic tables' files
    "group_size": (lambda v: _whole(v, 1, 8), "a whole number from 1 to 8"),
    "groups": (_whole, "a count"),
    "entries_per_group": (_whole, "a count"),
    "rows": (_whole, "a count"),
    "max_excess": (lambda v: _whole(v, 0, 254), "a whole number from 0 to 254"),
    "unreachable": (_whole, "a count"),
    "columns": (lambda v: isinstance(v, list) and len(v) <= 16 and all(_short_text(c, 40) for c in v),
                "a list of column names"),
}
_CONVERSION: dict[str, _FieldCheck] = {
    "saturated": (_whole, "a count"),
    "unreachable": (_whole, "a count"),
    "nonzero": (_whole, "a count"),
    "mean_loss": (_finite, "a finite number"),
    "encode_seconds": (_finite, "a finite number"),
    "bits_per_entry": (_finite, "a finite number"),
}


def validate_header(path: Path | str | None, header: dict[str, Any]) -> None:
    """Refuse a header any of whose known fields has the wrong type or range (a TableFileError naming it).

    Fields a newer minor version adds, and this reader does not know, are left alone."""
    for fields, prefix in ((_COMMON, ""),):
        for key, (test, what) in fields.items():
            if key in header and not test(header[key]):
                raise TableFileError(f"{path}: damaged header ({prefix}{key} is {clip(header[key])}, "
                                     f"not {what})")
    conversion = header.get("conversion")
    if isinstance(conversion, dict):
        for key, (test, what) in _CONVERSION.items():
            if key in conversion and not test(conversion[key]):
                raise TableFileError(f"{path}: damaged header (conversion {key} is "
                                     f"{clip(conversion[key])}, not {what})")


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 62


def clip(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def load(path: str | os.PathLike, verify_checksum: bool = True) -> TableFile:
    """Load a table file: check it and memory-map its payload."""
    path = Path(path)
    fd = open_regular(path)
    try:
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())  # of the file opened, even if the name is replaced meanwhile
            size = info.st_size
            header, offset = _parse_prefix(path, f.read(_PREFIX.size), size, f)
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise TableFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(mapped) != size:  # the file changed under us (only a writer ignoring the cache's rename would)
        raise TableFileError(f"{path}: the file changed while being read")
    stored = _DIGEST.unpack_from(mapped, size - _DIGEST.size)[0]
    if verify_checksum:
        with memoryview(mapped) as view:
            actual = xxhash.xxh64(view[: size - _DIGEST.size]).intdigest()
        if stored != actual:
            raise TableFileError(f"{path}: checksum mismatch (the file is damaged)")
    dtype = np.dtype(header["payload_dtype"])
    payload = np.frombuffer(mapped, dtype=dtype, count=int(header["payload_bytes"]) // dtype.itemsize,
                            offset=offset)
    stamp = (info.st_dev, info.st_ino, size, info.st_mtime_ns, info.st_ctime_ns, stored) if verify_checksum \
        else None
    return TableFile(path, header, payload, stamp)


def checksum_ok(path: str | os.PathLike) -> bool:
    """Whether the stored xxhash64 matches the file (False for files too short to hold one)."""
    path = Path(path)
    with os.fdopen(open_regular(path), "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size < _DIGEST.size:
            return False
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            stored = _DIGEST.unpack_from(mapped, size - _DIGEST.size)[0]
            with memoryview(mapped) as view:
                actual = xxhash.xxh64(view[: size - _DIGEST.size]).intdigest()
        finally:
            mapped.close()
    return stored == actual
