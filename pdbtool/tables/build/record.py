"""The build record: the state of a long table build, kept in the cache beside the table being built, so
that a build stopped by a signal or killed (SIGKILL, a reboot) resumes where the record left it.

A build expands its layers in slices of rank blocks (:func:`pdbtool.processes.run_in_slices`); between
two slices its arrays are a consistent state (a layer's blocks before the slice expanded, the others
not), and that state is what a record holds: the arrays (the byte table, the two-bit states, the
zero-aware entries, the chunk flags) and the counters.  Layout::

    magic b"\\x93PDBBLD\\n" | version uint16 | header length uint32 | JSON header | arrays | xxhash64

The header names the build (board, goal, tiles, blank rule, encoding, the code of the builders) and the
arrays' types and lengths.  A record is trusted only when its checksum matches and it names this build
exactly; any other is said in one line and set aside (the build starts anew).  It is written to a
temporary beside the table and renamed over the last one (then the directory is synced), so a kill
leaves the old record or the new one.  Like the tables' checksum it finds damage, not intent.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import xxhash

from ..._version import __version__
from ...errors import PdbtoolError
from ...files import FileKindError, open_regular
from ..fileformat import write_hashed

MAGIC = b"\x93PDBBLD\n"
VERSION = 1
_PREFIX = struct.Struct("<8sHI")
_DIGEST = struct.Struct("<Q")
MAX_HEADER_BYTES = 1 << 20
_STEP = 1 << 24
# the modules whose code decides a table's bytes: a record of other code is not resumed
_BUILDER_MODULES = ("driver.py", "ignored_bfs.py", "minimized_bfs.py", "moves.py", "scheduling.py",
                    "two_bit_states.py", "record.py", "../ranking.py", "../zero_aware.py")


class BuildRecordError(PdbtoolError):
    """A build record that cannot be written (a full disk): one line naming it."""


def code_version() -> str:
    """pdbtool's version and a hash of the builders' source, which a record must match."""
    digest = xxhash.xxh64()
    here = Path(__file__).resolve().parent
    for name in _BUILDER_MODULES:
        try:
            digest.update((here / name).read_bytes())
        except OSError:
            digest.update(name.encode())
    return f"{__version__}+{digest.hexdigest()}"


@dataclass
class BuildState:
    """Where a build stands between two slices: the layer at ``depth`` is expanded up to block
    ``next_block`` (its ``partial`` counts so far); ``counters`` are the driver's running totals."""

    depth: int
    next_block: int
    block: int
    layers: list[int]
    moves: int
    partial: list[int]
    counters: list[int]
    seconds: float
    arrays: dict[str, np.ndarray] = field(default_factory=dict)

    def scalars(self) -> dict:
        return {"depth": self.depth, "next_block": self.next_block, "block": self.block, "layers": self.layers,
                "moves": self.moves, "partial": self.partial, "counters": self.counters,
                "seconds": self.seconds}


def _whole(value, what: str, low: int = 0) -> int:
    if type(value) is not int or value < low:
        raise ValueError(f"{what} is not a whole number of at least {low}")
    return value


def _wholes(value, what: str, length: int | None = None) -> list[int]:
    if not isinstance(value, list) or (length is not None and len(value) != length):
        raise ValueError(f"{what} is not a list{'' if length is None else f' of {length}'}")
    return [_whole(v, what) for v in value]


class BuildRecorder:
    """The record of one build at ``path`` (beside the table: ``NAME.build``), for the build ``identity``.

    :meth:`due` says whether a record is wanted now: at most every ``every`` seconds, and never more often
    than twenty times the last write took, so that writing costs a small part of the build.
    ``notify`` gets the one-line notes (a record set aside, resumed, not writable)."""

    def __init__(self, path: Path, identity: dict, every: float = 60.0,
                 notify: Callable[[str], None] | None = None):
        self.path = Path(path)
        self.identity = dict(identity, code=code_version())
        self.every = every
        self.notify = notify or (lambda _line: None)
        self.last = time.monotonic()
        self.write_seconds = 0.0
        self.enabled = True
        self.written = False

    def due(self) -> bool:
        return self.enabled and time.monotonic() - self.last >= max(self.every, 20 * self.write_seconds)

    # --- reading --------------------------------------------------------------------------------------

    def load(self, shapes: dict[str, tuple[str, int]]) -> BuildState | None:
        """The state of the record, or None when there is none to trust (said in one line and moved aside,
        the build starting anew).  ``shapes``: each array's dtype and length for this build."""
        try:
            fd = open_regular(self.path, pass_missing=True)
        except FileNotFoundError:
            return None
        except FileKindError as exc:
            self.notify(f"{exc}: not a build record; the build starts anew")
            self.enabled = False  # never write over what is not ours
            return None
        try:
            with os.fdopen(fd, "rb") as f:
                state = self._read(f, shapes)
        except (ValueError, TypeError, KeyError, OSError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            self.notify(f"{self.path}: {reason}: not resumed, the build starts anew")
            self.remove()
            return None
        self.notify(f"{self.path}: resuming the build at depth {state.depth} "
                    f"({state.seconds:,.0f} s of it done before)")
        return state

    def _read(self, f, shapes: dict[str, tuple[str, int]]) -> BuildState:
        size = os.fstat(f.fileno()).st_size
        digest = xxhash.xxh64()
        prefix = f.read(_PREFIX.size)
        if len(prefix) < _PREFIX.size:
            raise ValueError("a build record cut short")
        magic, version, length = _PREFIX.unpack(prefix)
        if magic != MAGIC:
            raise ValueError("not a build record")
        if version != VERSION:
            raise ValueError(f"a build record of format {version}, not {VERSION}")
        if length > MAX_HEADER_BYTES:
            raise ValueError("a build record's header too large")
        raw = f.read(length)
        digest.update(prefix)
        digest.update(raw)
        header = json.loads(raw)
        if not isinstance(header, dict) or not isinstance(header.get("arrays"), list):
            raise ValueError("a build record without its arrays")
        if header.get("identity") != self.identity:
            ours, theirs = self.identity, header.get("identity")
            which = [k for k in ours if not isinstance(theirs, dict) or theirs.get(k) != ours[k]]
            raise ValueError(f"the record of another build (its {', '.join(which) or 'identity'} differs)")
        specs = [(name, dtype, count) for name, dtype, count in header["arrays"]]
        if {name: (dtype, count) for name, dtype, count in specs} != shapes or len(specs) != len(shapes):
            raise ValueError("a build record whose arrays are not this build's")
        body = sum(np.dtype(dtype).itemsize * count for _, dtype, count in specs)
        if size != _PREFIX.size + length + body + _DIGEST.size:
            raise ValueError("a build record whose length is not what its header says")
        arrays = {}
        for name, dtype, count in specs:
            array = np.empty(count, dtype=np.dtype(dtype))
            view = array.reshape(-1).view(np.uint8).data
            for start in range(0, len(view), _STEP):
                chunk = view[start:start + _STEP]
                if f.readinto(chunk) != len(chunk):
                    raise ValueError("a build record cut short")
                digest.update(chunk)
            arrays[name] = array
        tail = f.read(_DIGEST.size)
        if len(tail) != _DIGEST.size or _DIGEST.unpack(tail)[0] != digest.intdigest():
            raise ValueError("a build record whose checksum does not match (damaged or edited)")
        s = header.get("state")
        if not isinstance(s, dict):
            raise ValueError("a build record without its state")
        seconds = s.get("seconds")
        if not isinstance(seconds, (int, float)) or not 0 <= seconds < 1e12:
            raise ValueError("a build record's seconds out of range")
        state = BuildState(_whole(s.get("depth"), "depth"), _whole(s.get("next_block"), "next_block"),
                           _whole(s.get("block"), "block", 32), _wholes(s.get("layers"), "layers"),
                           _whole(s.get("moves"), "moves"), _wholes(s.get("partial"), "partial"),
                           _wholes(s.get("counters"), "counters"), float(seconds), arrays)
        if state.block % 32 or state.depth >= 254:
            raise ValueError("a build record's block or depth out of range")
        return state

    # --- writing --------------------------------------------------------------------------------------

    def save(self, state: BuildState) -> None:
        """Write the record atomically; a failure (a full disk) is said once, and no more are written."""
        if not self.enabled:
            return
        start = time.monotonic()
        try:
            self._write(state)
        except BuildRecordError as exc:
            self.notify(f"{exc}; the build goes on without a record (a kill would lose it)")
            self.enabled = False
            return
        self.written = True
        self.last = time.monotonic()
        self.write_seconds = self.last - start

    def _write(self, state: BuildState) -> None:
        header = {"identity": self.identity, "state": state.scalars(),
                  "arrays": [[name, a.dtype.str, int(a.shape[0])] for name, a in state.arrays.items()]}
        raw = json.dumps(header, sort_keys=True).encode()
        prefix = _PREFIX.pack(MAGIC, VERSION, len(raw))
        # a temporary named after the table (``NAME.tmp-...``): the cache's sweep leaves it alone while the
        # builder holds the table's lock, and removes it once a killed builder's lock is gone
        table_name = self.path.name.removesuffix(".build")
        tmp = self.path.with_name(f"{table_name}.tmp-{os.getpid()}-{secrets.token_hex(4)}.build")
        digest = xxhash.xxh64()
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                         0o644)
            try:
                with os.fdopen(fd, "wb") as f:
                    for part in (prefix, raw):
                        f.write(part)
                        digest.update(part)
                    for array in state.arrays.values():
                        write_hashed(f, array, digest)
                    f.write(_DIGEST.pack(digest.intdigest()))
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                try:
                    tmp.unlink()
                except OSError:
                    pass
                raise
        except OSError as exc:
            full = " (the disk is full)" if exc.errno == errno.ENOSPC else ""
            raise BuildRecordError(f"{self.path}: cannot write the build record: {exc.strerror or exc}{full}") \
                from None
        try:
            dfd = os.open(self.path.parent, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(dfd)
        except OSError:
            pass
        finally:
            os.close(dfd)

    def remove(self) -> None:
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            self.notify(f"{self.path}: cannot remove the build record: {exc.strerror or exc}")


def record_bytes(shapes: dict[str, tuple[str, int]]) -> int:
    """The size of a record of arrays of these shapes (the header aside)."""
    return sum(np.dtype(dtype).itemsize * count for dtype, count in shapes.values()) + (1 << 16)


__all__ = ["BuildRecordError", "BuildRecorder", "BuildState", "code_version", "record_bytes"]
