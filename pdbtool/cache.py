"""The table cache: where tables live, their names, atomic writes, locks, reuse or rebuild.

* Location: ``--cache-dir`` / ``PDBTOOL_CACHE_DIR`` / platformdirs' user cache dir for ``pdbtool``.
* Names derive from a table's identity: ``4x4-korf-t1.2.3.4.5.6.7-minimized-byte.pdb``.
* Writes go to ``NAME.tmp-PID`` and are renamed over ``NAME`` once complete and synced, so a reader
  sees either the old file or the new one, never a half-written table, and a killed build leaves only
  a temporary file, which the next build of that table removes.
* ``NAME.lock`` (an ``flock``, released by the kernel when its holder dies) makes two concurrent builds
  of one table build it once: the second waits, then finds the table and reuses it.
* A cached file that fails its checks is moved aside (``NAME.corrupt-TIME``), reported, and rebuilt.
"""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import xxhash

from .errors import PdbtoolError
from .pattern import TilePattern
from .table import PatternTable
from .tablefile import TableFileError

Notify = Callable[[str], None]


def default_cache_dir() -> Path:
    env = os.environ.get("PDBTOOL_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("pdbtool"))


def goal_slug(pattern: TilePattern) -> str:
    name = pattern.board.goal_name
    if name in ("korf", "blank-last"):
        return name
    return "goal" + xxhash.xxh64(",".join(map(str, pattern.board.goal)).encode()).hexdigest()[:12]


def table_name(pattern: TilePattern, blank: str, encoding: str = "byte", params: dict | None = None) -> str:
    enc = encoding + "".join(f"-{k}{v}" for k, v in sorted((params or {}).items()))
    tiles = ".".join(str(t) for t in pattern.tiles)
    return f"{pattern.board.dims}-{goal_slug(pattern)}-t{tiles}-{blank}-{enc}.pdb"


def available_memory() -> int | None:
    """MemAvailable from /proc/meminfo in bytes (None where it cannot be read)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def check_memory(pattern: TilePattern, blank: str) -> None:
    """Refuse a build whose estimated peak memory exceeds what the machine has available."""
    from .bfs import estimate_peak_bytes

    need = estimate_peak_bytes(pattern, blank)
    have = available_memory()
    if have is not None and need > have:
        raise PdbtoolError(f"building pattern {pattern} on {pattern.board.dims} ({blank}) needs about "
                           f"{need / 2**30:.2f} GiB, but only {have / 2**30:.2f} GiB is available")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class TableCache:
    """A directory of table files, built on demand."""

    def __init__(self, cache_dir: str | os.PathLike | None = None, notify: Notify | None = None):
        self.dir = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
        self.notify = notify or (lambda message: None)

    def path_for(self, pattern: TilePattern, blank: str = "minimized", encoding: str = "byte",
                 params: dict | None = None) -> Path:
        return self.dir / table_name(pattern, blank, encoding, params)

    # --- reading -----------------------------------------------------------------------------------------
    def load_valid(self, pattern: TilePattern, blank: str, encoding: str = "byte",
                   params: dict | None = None) -> PatternTable | None:
        """The cached table if present and sound; a damaged one is moved aside and reported."""
        path = self.path_for(pattern, blank, encoding, params)
        if not path.exists():
            return None
        try:
            table = PatternTable.load(path)
            table.check_identity(pattern, blank, encoding, params)
            return table
        except TableFileError as exc:
            self.quarantine(path, str(exc))
            return None

    def quarantine(self, path: Path, reason: str) -> Path | None:
        aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
        try:
            os.replace(path, aside)
        except FileNotFoundError:
            return None
        self.notify(f"damaged table moved aside and rebuilt: {reason} (kept as {aside.name})")
        return aside

    # --- building ----------------------------------------------------------------------------------------
    @contextmanager
    def lock(self, path: Path) -> Iterator[None]:
        """An exclusive lock on one table name; waits for a concurrent builder to finish."""
        self.dir.mkdir(parents=True, exist_ok=True)
        lock_path = path.with_name(path.name + ".lock")
        with open(lock_path, "a+") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self.notify(f"waiting for another process building {path.name}")
                fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def remove_stale_temporaries(self, path: Path) -> int:
        """Delete temporary files of ``path`` left by dead processes (call with the lock held)."""
        removed = 0
        for tmp in path.parent.glob(path.name + ".tmp-*"):
            pid = tmp.name.rsplit("-", 1)[-1]
            if pid.isdigit() and int(pid) != os.getpid() and _pid_alive(int(pid)):
                continue
            try:
                tmp.unlink()
                removed += 1
            except FileNotFoundError:
                pass
        return removed

    def store(self, table: PatternTable, path: Path, extra: dict | None = None) -> Path:
        """Write atomically: a temporary file in the same directory, synced, then renamed over ``path``."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
        try:
            table.save(tmp, extra)
            os.replace(tmp, path)
        except BaseException:
            try:
                tmp.unlink()
            except FileNotFoundError:
                pass
            raise
        table.path = path
        return path

    def get(self, pattern: TilePattern, blank: str = "minimized", threads: int | None = None,
            force: bool = False, progress=None, on_build: Callable[[PatternTable, object], None] | None = None
            ) -> PatternTable:
        """The byte table of ``pattern``: loaded from the cache if sound, otherwise built and saved."""
        path = self.path_for(pattern, blank)
        if not force:
            table = self.load_valid(pattern, blank)
            if table is not None:
                return table
        with self.lock(path):
            self.remove_stale_temporaries(path)
            if not force:
                table = self.load_valid(pattern, blank)  # a concurrent builder may have finished
                if table is not None:
                    return table
            check_memory(pattern, blank)
            from .bfs import build_table

            result = build_table(pattern, blank, threads=threads, progress=progress)
            table = PatternTable(pattern, blank, result.table)
            self.store(table, path, {"build_seconds": round(result.seconds, 3), "layers": result.layers})
            if on_build:
                on_build(table, result)
        return PatternTable.load(path)

    def get_partition(self, partition, blank: str = "minimized", threads: int | None = None,
                      force: bool = False, progress=None) -> list[PatternTable]:
        return [self.get(p, blank, threads=threads, force=force, progress=progress) for p in partition.patterns]

    def entries(self) -> list[Path]:
        """The table files in the cache."""
        if not self.dir.exists():
            return []
        return sorted(self.dir.glob("*.pdb"))
