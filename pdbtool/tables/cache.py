"""The table cache: where tables live, their names, atomic writes, locks, reuse or rebuild.

One get-or-build (:meth:`TableCache.get_or_build`) serves every file of the cache: pattern tables, their
compact encodings and the dynamic pair and triple tables; the rules below hold for all of them.

* Location: ``--cache-dir`` / ``PDBTOOL_CACHE_DIR`` / platformdirs' user cache dir for ``pdbtool``.
* Names derive from a table's identity: ``4x4-korf-t1.2.3.4.5.6.7-minimized-byte.pdb``.
* Writes go to ``NAME.tmp-PID`` and are renamed over ``NAME`` once complete and synced (the file, then
  after the rename its directory), so a reader sees either the old file or the new one, never a
  half-written table, and a killed build leaves only a temporary file, which the next run removes.  A writer
  holds the table's lock while its temporary exists, so a temporary whose table's lock is free is stale,
  whatever process made it.
* ``NAME.lock`` (an ``flock``, released by the kernel when its holder dies) makes two concurrent builds
  of one table build it once: the second waits, then finds the table and reuses it.  The holder deletes
  the lock file when done; one left by a killed process is reused or swept by the next build.
* A cached file that fails its checks is moved aside (``NAME.corrupt-TIME``), reported, and rebuilt.
  The move happens under the table's lock, after a second look, so a table being replaced by a
  concurrent builder is never moved aside by mistake.
* A cache this user cannot write (a read-only mount, a shared site cache of another user) is used read
  only: sound tables are read without locks (a lock file that exists is opened read-only), the sweep
  leaves what it cannot remove, and a missing or damaged table is a one-line error, not a crash.
* Temporaries are created with ``O_EXCL | O_NOFOLLOW``, under a name no other process uses.
"""

from __future__ import annotations

import errno
import fcntl
import os
import secrets
import time
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from ..errors import PdbtoolError
from .integrity import check_table
from .names import goal_slug, table_name
from .ranking import TilePattern
from .resources import check_disk, free_disk
from .table import PatternTable
from .fileformat import TableFileError, load as load_file

Notify = Callable[[str], None]
T = TypeVar("T")


def default_cache_dir() -> Path:
    env = os.environ.get("PDBTOOL_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("pdbtool"))


__all__ = ["TableCache", "CacheReadOnly", "default_cache_dir", "goal_slug", "table_name", "table_loader",
           "check_disk"]

# a file system or a directory this user cannot write
_READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)


class CacheReadOnly(PdbtoolError):
    """The cache cannot be written, and what was asked needs it written (a missing or damaged table)."""


def _lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def _try_lock(lock_path: Path, wait: bool = False, create: bool = True) -> int | None:
    """An exclusive flock on ``lock_path`` (a descriptor), or None if another holds it (and not ``wait``).

    A holder deletes the lock file before releasing it, so a lock won on a file no longer under that
    name is worthless: try again on the file that is.  A lock file this user cannot open for writing is
    opened read-only (flock needs no write access); one that cannot be created raises OSError.
    """
    while True:
        flags = os.O_RDWR | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(lock_path, flags | (os.O_CREAT if create else 0), 0o644)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno not in _READ_ONLY:
                raise
            try:
                fd = os.open(lock_path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
            except FileNotFoundError:
                if not create:
                    return None
                raise exc from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        if _same_file(fd, lock_path):
            return fd
        os.close(fd)
        if not create:
            return None


def _unlock(fd: int, lock_path: Path) -> None:
    """Delete the lock file, then release it (closing the descriptor releases the flock)."""
    try:
        os.unlink(lock_path)
    except OSError:  # gone already, or a cache this user cannot write: the flock goes with the descriptor
        pass
    finally:
        os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        return False


def table_loader(pattern: TilePattern, blank: str, encoding: str = "byte",
                  params: dict | None = None) -> Callable[[Path], PatternTable]:
    """A loader for :meth:`TableCache.get_or_build`: the table at a path, refused unless it is the one asked for."""
    def load(path: Path) -> PatternTable:
        table = PatternTable.from_file(load_file(path))
        table.check_identity(pattern, blank, encoding, params)
        return check_table(table)

    return load


def _fsync_dir(directory: Path) -> None:
    """Make a rename durable (best effort: some filesystems refuse to sync a directory)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class TableCache:
    """A directory of table files, built on demand.

    :meth:`get_or_build` is the one protocol for every kind of file in the cache (pattern tables, their
    compact encodings, the dynamic pair and triple tables): reuse a sound file; otherwise, under the
    name's lock, look again (a concurrent builder may have finished), move a damaged file aside, make the
    file into a synced temporary and rename it over the name, then sync the directory."""

    def __init__(self, cache_dir: str | os.PathLike | None = None, notify: Notify | None = None):
        if cache_dir is not None and not str(cache_dir).strip():
            raise PdbtoolError("the cache directory is an empty path: give a directory (or leave the option out "
                               "for the default cache)")
        self.dir = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
        if self.dir.exists() and not self.dir.is_dir():
            raise PdbtoolError(f"the cache directory {self.dir} is not a directory")
        self.notify = notify or (lambda message: None)
        self._held: set[Path] = set()  # table paths whose lock this object holds
        self._swept = False

    def path_for(self, pattern: TilePattern, blank: str = "minimized", encoding: str = "byte",
                 params: dict | None = None) -> Path:
        return self.dir / table_name(pattern, blank, encoding, params)

    # --- reading -----------------------------------------------------------------------------------------
    def load_sound(self, path: Path, load: Callable[[Path], T]) -> T | None:
        """``load(path)`` if the file is present and sound (``load`` raises TableFileError otherwise);
        a damaged file is moved aside and reported, and None returned."""
        if not self._swept:  # once a run: what killed processes left behind
            self._swept = True
            self.sweep()
        if not os.path.lexists(path):
            return None
        try:
            return load(path)
        except TableFileError as exc:
            if path in self._held:
                self.quarantine(path, str(exc))
                return None
            reason = str(exc)
        # move it aside only under the lock, and only if it is still damaged: a concurrent builder may
        # have just replaced it with a sound table
        with self.lock(path, why=f"{reason}; it cannot be moved aside and rebuilt"):
            return self.load_sound(path, load)

    def load_valid(self, pattern: TilePattern, blank: str, encoding: str = "byte",
                   params: dict | None = None) -> PatternTable | None:
        """The cached table if present and sound; a damaged one is moved aside and reported."""
        return self.load_sound(self.path_for(pattern, blank, encoding, params),
                               table_loader(pattern, blank, encoding, params))

    def quarantine(self, path: Path, reason: str) -> Path | None:
        stem = f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        aside = path.with_name(stem)
        for n in range(1, 1000):  # never over an earlier damaged file of the same second
            if not aside.exists():
                break
            aside = path.with_name(f"{stem}-{n}")
        try:
            os.replace(path, aside)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise TableFileError(f"{reason}; it cannot be moved aside ({exc.strerror or exc})") from None
        self.notify(f"damaged table moved aside and rebuilt: {reason} (kept as {aside.name})")
        return aside

    # --- building ----------------------------------------------------------------------------------------
    @contextmanager
    def lock(self, path: Path, why: str | None = None) -> Iterator[None]:
        """An exclusive lock on one table name; waits for a concurrent builder to finish.

        Only making or moving a file needs it: in a cache this user cannot write, CacheReadOnly says what
        was needed (``why``, or that ``path`` is missing)."""
        lock_path = _lock_path(path)
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            fd = _try_lock(lock_path)
            if fd is None:
                self.notify(f"waiting for another process building {path.name}")
                fd = _try_lock(lock_path, wait=True)
            if fd is None:  # a waiting lock gives up only when the lock file cannot be created
                raise FileNotFoundError(errno.ENOENT, "the cache folder went away while it was in use", str(self.dir))
        except OSError as exc:
            if exc.errno not in _READ_ONLY:
                raise
            what = why or f"{path.name} is not in it"
            raise CacheReadOnly(f"the cache {self.dir} cannot be written ({exc.strerror}), and {what}: build "
                                f"it in a cache of your own (--cache-dir) or ask the cache's owner") from None
        self._held.add(path)
        try:
            yield
        finally:
            self._held.discard(path)
            _unlock(fd, lock_path)

    def remove_stale_temporaries(self, path: Path) -> int:
        """Delete the temporaries of ``path`` (call with its lock held: they are stale), then sweep."""
        removed = 0
        for tmp in path.parent.glob(path.name + ".tmp-*"):
            try:
                tmp.unlink()
                removed += 1
            except OSError:
                pass
        return removed + self.sweep()

    def sweep(self) -> int:
        """Delete what killed processes left: temporaries of tables nobody is writing (a writer holds the
        table's lock while its temporary exists) and lock files nobody holds.  Returns how many."""
        if not self.dir.is_dir():
            return 0
        removed = 0
        # what this user cannot remove (a read-only or another user's cache) is left alone
        for tmp in self.dir.glob("*.tmp-*"):
            table = tmp.with_name(tmp.name.split(".tmp-")[0])
            if table in self._held:
                continue
            try:
                fd = _try_lock(_lock_path(table))
            except OSError:
                continue
            if fd is None:  # its writer is at work
                continue
            try:
                tmp.unlink()
                removed += 1
            except OSError:
                pass
            finally:
                _unlock(fd, _lock_path(table))
        for lock_path in self.dir.glob("*.lock"):
            try:
                fd = _try_lock(lock_path, create=False)
            except OSError:
                continue
            if fd is not None:
                gone = os.access(lock_path.parent, os.W_OK)
                _unlock(fd, lock_path)
                removed += gone
        return removed

    def write_atomically(self, path: Path, write: Callable[[Path], object]) -> Path:
        """``write(tmp)`` makes the complete file (synced: :func:`fileformat.save` does) at a temporary in
        the same directory, which is renamed over ``path``; the directory is then synced, so that the
        rename survives a crash.  A failed or interrupted write leaves no temporary behind."""
        path.parent.mkdir(parents=True, exist_ok=True)
        # a name of this process alone, created here with O_EXCL | O_NOFOLLOW: no planted file or link
        tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644))
        try:
            write(tmp)
            os.replace(tmp, path)
        except BaseException as exc:
            try:
                tmp.unlink()
            except FileNotFoundError:
                pass
            if isinstance(exc, TableFileError):  # a full disk, say: name the table, not the temporary
                reason = str(exc).removeprefix(f"{tmp}: ")
                raise TableFileError(f"{path}: {reason}; the cached table, if any, is unchanged") from None
            raise
        _fsync_dir(path.parent)
        return path

    def store(self, table: PatternTable, path: Path, extra: dict | None = None) -> Path:
        """Write a table atomically (:meth:`write_atomically`) at ``path``."""
        self.write_atomically(path, lambda tmp: table.save(tmp, extra))
        table.path = path
        return path

    def get_or_build(self, path: Path, load: Callable[[Path], T], write: Callable[[Path], object],
                     force: bool = False) -> T:
        """The file at ``path`` as ``load`` reads it (raising TableFileError when the file is unusable):
        reused if sound, otherwise made by ``write(tmp)`` and stored atomically under the name's lock.

        A second process asking for the same name waits for the lock, then finds the file and reuses it;
        a damaged file is moved aside (``NAME.corrupt-TIME``) and made again.  ``force`` makes it anew."""
        if not force:
            found = self.load_sound(path, load)
            if found is not None:
                return found
        with self.lock(path):
            self.remove_stale_temporaries(path)
            if not force:
                found = self.load_sound(path, load)  # a concurrent builder may have finished
                if found is not None:
                    return found
            self.write_atomically(path, write)
        return load(path)

    def get(self, pattern: TilePattern, blank: str = "minimized", threads: int | None = None,
            force: bool = False, progress=None, on_build: Callable[[PatternTable, Any], None] | None = None,
            encoding: str = "byte", params: dict | None = None,
            on_convert: Callable[[PatternTable, dict], None] | None = None) -> PatternTable:
        """The table of ``pattern`` in ``encoding``: loaded from the cache if sound, otherwise made and saved.

        A compact encoding is converted from the byte table (itself reused from the cache or built); the
        freshly built byte table is saved and dropped first, so the conversion reads the mapped file and
        only the (smaller) encoded payload is held in memory beside it.  ``on_build(table, result)`` and
        ``on_convert(table, info)`` are called once the file is written, before it is renamed into place."""
        recorders: list = []
        if encoding == "byte":
            params = {}

            def write(tmp: Path) -> None:
                from .build import build_table, check_memory

                check_memory(pattern, blank)
                check_disk(self.dir, pattern.entries + 4096, f"the table {{{pattern}}} on {pattern.board.dims}")
                recorders.append(self.build_recorder(pattern, blank, tmp.with_name(tmp.name.split(".tmp-")[0])))
                result = build_table(pattern, blank, threads=threads, progress=progress, recorder=recorders[-1])
                table = PatternTable(pattern, blank, result.table)
                table.save(tmp, {"build_seconds": round(result.seconds, 3), "layers": result.layers})
                if on_build:
                    on_build(table, result)
                # the built array goes when this returns, before the file is mapped back
        else:
            from .encodings import check_blank, normalize_params
            from .table import convert_table

            params = normalize_params(encoding, params)
            check_blank(encoding, blank)

            def write(tmp: Path) -> None:
                byte = self.get(pattern, blank, threads=threads, force=force, progress=progress,
                                on_build=on_build)
                table, extra = convert_table(byte, encoding, params, threads)
                del byte
                table.save(tmp, extra)
                if on_convert:
                    on_convert(table, extra["conversion"])

        table = self.get_or_build(self.path_for(pattern, blank, encoding, params),
                                  table_loader(pattern, blank, encoding, params), write, force=force)
        for recorder in recorders:  # the table is stored: its build's record is done with
            if recorder is not None:
                recorder.remove()
        return table

    def build_recorder(self, pattern: TilePattern, blank: str, path: Path):
        """The record of the build of the byte table at ``path`` (``NAME.build`` beside it), or None (said in
        one line) when the disk has no room for two records beside the table (the old one and its
        replacement)."""
        from .build import BuildRecorder, record_shapes
        from .build.record import record_bytes

        need = pattern.entries + 2 * record_bytes(record_shapes(pattern, blank))
        free = free_disk(self.dir)
        if free is not None and free < need:
            self.notify(f"{path.name}: no room on the disk for a record of the build's progress "
                        f"({need:,} bytes with the table): it goes on without one, and a kill would lose it")
            return None
        board = pattern.board
        identity = {"board": [board.width, board.height], "goal": list(board.goal), "tiles": list(pattern.tiles),
                    "blank": blank, "encoding": "byte", "entries": pattern.entries}
        return BuildRecorder(path.with_name(path.name + ".build"), identity, notify=self.notify)

    def entries(self) -> list[Path]:
        """The table files in the cache: pattern tables (``*.pdb``), the dynamic sets' files (``*.ddb``) and
        the move automata (``*.fsm``)."""
        if not self.dir.exists():
            return []
        return sorted(p for suffix in ("pdb", "ddb", "fsm") for p in self.dir.glob(f"*.{suffix}"))
