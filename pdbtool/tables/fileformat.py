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
import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path
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
KIND_KEYS = {"hanoi4": ("disks", "goal", "layout", "encoding", "entries", "payload_dtype", "payload_bytes")}


class TableFileError(PdbtoolError):
    """A table file that cannot be used (damaged, truncated, of another version or identity)."""


@dataclass
class TableFile:
    """A loaded table: its header and its payload (a read-only memory-mapped array)."""

    path: Path | None
    header: dict[str, Any]
    payload: np.ndarray

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
        with open(path, "wb") as f:
            f.write(prefix)
            hasher.update(prefix)
            view = memoryview(payload.reshape(-1).view(np.uint8))
            step = 1 << 24
            for start in range(0, len(view), step):
                chunk = view[start:start + step]
                f.write(chunk)
                hasher.update(chunk)
            f.write(_DIGEST.pack(hasher.intdigest()))
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise TableFileError(f"{path}: the disk is full while saving the table ({exc.strerror})") from None
        raise TableFileError(f"{path}: cannot write the table: {exc.strerror or exc}") from None
    return len(prefix) + payload.nbytes + _DIGEST.size


def read_header(path: str | os.PathLike) -> tuple[dict[str, Any], int]:
    """The header of a table file and the payload's offset, checking magic, version and sizes only."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size  # of the file opened, even if the name is replaced meanwhile
            prefix = f.read(_PREFIX.size)
            header, offset = _parse_prefix(path, prefix, size, f)
    except OSError as exc:
        raise TableFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return header, offset


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
    raw = f.read(header_len)
    try:
        header = json.loads(raw.decode())
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise TableFileError(f"{path}: damaged header (not valid JSON)") from None
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
    try:
        if not isinstance(header["payload_dtype"], str):
            raise TypeError
        dtype = np.dtype(header["payload_dtype"])
        if dtype.kind != "u":  # payloads are unsigned integers (bytes or words of packed fields)
            raise TypeError
    except (TypeError, ValueError):
        raise TableFileError(f"{path}: damaged header (payload type {clip(header['payload_dtype'])} "
                             f"is not an unsigned integer type)") from None
    if int(header["payload_bytes"]) % dtype.itemsize:
        raise TableFileError(f"{path}: damaged header (payload size is not a whole number of items)")
    header["_file_bytes"] = size
    return header, offset


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 62


def clip(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def load(path: str | os.PathLike, verify_checksum: bool = True) -> TableFile:
    """Load a table file: check it and memory-map its payload."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size  # of the file opened, even if the name is replaced meanwhile
            header, offset = _parse_prefix(path, f.read(_PREFIX.size), size, f)
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise TableFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(mapped) != size:  # the file changed under us (only a writer ignoring the cache's rename would)
        raise TableFileError(f"{path}: the file changed while being read")
    if verify_checksum:
        stored = _DIGEST.unpack_from(mapped, size - _DIGEST.size)[0]
        with memoryview(mapped) as view:
            actual = xxhash.xxh64(view[: size - _DIGEST.size]).intdigest()
        if stored != actual:
            raise TableFileError(f"{path}: checksum mismatch (the file is damaged)")
    dtype = np.dtype(header["payload_dtype"])
    payload = np.frombuffer(mapped, dtype=dtype, count=int(header["payload_bytes"]) // dtype.itemsize,
                            offset=offset)
    return TableFile(path, header, payload)


def checksum_ok(path: str | os.PathLike) -> bool:
    """Whether the stored xxhash64 matches the file (False for files too short to hold one)."""
    path = Path(path)
    with open(path, "rb") as f:
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
