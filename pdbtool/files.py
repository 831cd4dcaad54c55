"""Files that pdbtool reads or writes, refused at once unless they are regular files, and read with a cap.

A FIFO, a device, a directory or a symlink to one of them, given where a file is meant (an instance file, a
checkpoint, a results file), would block the reader in ``open()`` forever (a FIFO with no writer) or feed it
without end (``/dev/zero``): each is refused in one line instead.  Descriptors are opened without blocking
and checked with ``fstat`` (the file opened, not the name, which may be replaced meanwhile); a file larger
than its reader's cap is refused before it is read.  The table files have their own reader
(:func:`pdbtool.tables.fileformat.open_regular`), which says the same.
"""

from __future__ import annotations

import os
import stat
import sys

from .errors import PdbtoolError

MAX_TEXT_BYTES = 1 << 30   # instance files, results files: far past any batch


class FileKindError(PdbtoolError):
    """A path that is not a regular file, too large, or that cannot be opened: one line naming it."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_regular(path, missing_ok: bool = True) -> None:
    """Refuse ``path`` unless it is a regular file (following symlinks) or, with ``missing_ok``, absent.

    For a file about to be written or created: nothing is opened."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if missing_ok:
            return
        raise FileKindError(f"{path}: no such file") from None
    except OSError as exc:
        raise FileKindError(f"{path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise FileKindError(f"{path}: {_refusal(info.st_mode)}")


def _refusal(mode: int) -> str:
    kind = _kind(mode)
    return f"{kind}, not a regular file" if kind != "not a regular file" else kind


def open_regular(path, flags: int = os.O_RDONLY, mode: int = 0o666, pass_missing: bool = False) -> int:
    """A descriptor of ``path`` opened with ``flags`` (without blocking, then set back to blocking),
    refused unless it is a regular file; :class:`FileKindError` (one line) for that and for an ``OSError``
    (but ``FileNotFoundError`` with ``pass_missing``)."""
    verb = "write" if flags & (os.O_WRONLY | os.O_RDWR) else "read"
    try:
        fd = os.open(path, flags | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), mode)
    except FileNotFoundError as exc:
        if pass_missing:
            raise
        raise FileKindError(f"{path}: cannot {verb}: {exc.strerror or exc}") from None
    except OSError as exc:
        try:  # a FIFO with no reader (ENXIO), a directory (EISDIR): say what it is
            mode = os.stat(path).st_mode
        except OSError:
            mode = stat.S_IFREG
        if not stat.S_ISREG(mode):
            raise FileKindError(f"{path}: {_refusal(mode)}") from None
        raise FileKindError(f"{path}: cannot {verb}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileKindError(f"{path}: {_refusal(info.st_mode)}")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path, limit: int = MAX_TEXT_BYTES, what: str = "file") -> bytes:
    """The bytes of the regular file ``path``, refused (one line) when it is larger than ``limit``.
    ``FileNotFoundError`` passes through, for callers for which a missing file means something."""
    fd = open_regular(path, pass_missing=True)
    with os.fdopen(fd, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise FileKindError(f"{path}: {size:,} bytes, too large for a {what} (at most {limit:,})")
        try:
            data = f.read(limit + 1)
        except OSError as exc:
            raise FileKindError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:  # grew while it was read
        raise FileKindError(f"{path}: too large for a {what} (at most {limit:,} bytes)")
    return data


def read_stdin(limit: int = MAX_TEXT_BYTES, what: str = "file", stream=None) -> bytes:
    """Standard input (``-`` in place of a file name; ``stream``: another binary or text stream), refused
    in one line when it holds more than ``limit`` bytes, as a file past its cap is: ``cat /dev/zero |
    pdbtool solve -`` ends with that line rather than when memory runs out."""
    source = stream if stream is not None else sys.stdin.buffer
    data = source.read(limit + 1)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    if len(data) > limit:
        raise FileKindError(f"<stdin>: more than {limit:,} bytes, too large for a {what}")
    return data


__all__ = ["FileKindError", "MAX_TEXT_BYTES", "check_regular", "open_regular", "read_regular", "read_stdin"]
