"""What a build may use: memory (the machine's, the cgroup's and the process's limits) and disk space.

A build refuses to start when its estimated peak exceeds the least of these, so that a job in a container
or under ``ulimit -v`` stops with one line instead of being killed by the kernel part-way.
"""

from __future__ import annotations

import resource
import shutil
from pathlib import Path

from ..errors import PdbtoolError

_UNLIMITED_CGROUP = 1 << 60   # cgroup v1 writes a huge number for "no limit"


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _number(text: str | None) -> int | None:
    if text is None or not text.isdigit():   # "max" (v2) and unreadable files mean no limit
        return None
    value = int(text)
    return value if value < _UNLIMITED_CGROUP else None


def meminfo_available(proc: Path = Path("/proc")) -> int | None:
    """MemAvailable from /proc/meminfo in bytes (None where it cannot be read)."""
    text = _read(proc / "meminfo")
    for line in (text or "").splitlines():
        if line.startswith("MemAvailable:"):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                return int(parts[1]) * 1024
    return None


def cgroup_available(proc: Path = Path("/proc"), root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """Room left under this process's cgroup memory limits (v2 ``memory.max``, v1
    ``memory.limit_in_bytes``), the least over the cgroup and its ancestors; None when there is no limit."""
    text = _read(proc / "self" / "cgroup")
    if text is None:
        return None
    least = None
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, where = parts
        if controllers == "":                       # v2: one unified hierarchy
            base, limit_file, usage_file = root, "memory.max", "memory.current"
        elif "memory" in controllers.split(","):    # v1: the memory controller's hierarchy
            base, limit_file, usage_file = root / "memory", "memory.limit_in_bytes", "memory.usage_in_bytes"
        else:
            continue
        directory = base / where.strip("/")
        while True:
            limit = _number(_read(directory / limit_file))
            if limit is not None:
                used = _number(_read(directory / usage_file)) or 0
                room = max(0, limit - used)
                least = room if least is None else min(least, room)
            if directory == base or base not in directory.parents:
                break
            directory = directory.parent
    return least


def _status_bytes(field: str, proc: Path) -> int:
    for line in (_read(proc / "self" / "status") or "").splitlines():
        if line.startswith(field + ":"):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                return int(parts[1]) * 1024
    return 0


def rlimit_available(proc: Path = Path("/proc")) -> int | None:
    """Room left under RLIMIT_AS (address space) and RLIMIT_DATA, past what the process already uses."""
    least = None
    for limit_name, field in (("RLIMIT_AS", "VmSize"), ("RLIMIT_DATA", "VmData")):
        which = getattr(resource, limit_name, None)
        if which is None:
            continue
        soft, _ = resource.getrlimit(which)
        if soft == resource.RLIM_INFINITY or soft < 0:
            continue
        room = max(0, soft - _status_bytes(field, proc))
        least = room if least is None else min(least, room)
    return least


def gib(size: int) -> str:
    """A byte count in GiB for a message: two decimals, or a power of ten beyond a million GiB."""
    value = size / 2**30
    return f"{value:,.2f} GiB" if value < 1e6 else f"{value:.1e} GiB"


def available_memory() -> int | None:
    """The least of the machine's available memory, the cgroup's room and the process's rlimits, in bytes
    (None when none of them can be read)."""
    found = [v for v in (meminfo_available(), cgroup_available(), rlimit_available()) if v is not None]
    return min(found) if found else None


def require_memory(need: int, what: str) -> None:
    """Refuse (one line) ``what``, whose peak is about ``need`` bytes, when that exceeds what this process
    may use."""
    have = available_memory()
    if have is not None and need > have:
        raise PdbtoolError(f"{what} needs about {gib(need)}, but only {gib(have)} is available")


def free_disk(directory: Path) -> int | None:
    """Bytes free to this user on the file system of ``directory`` (or its nearest existing parent)."""
    directory = Path(directory)
    while not directory.exists() and directory != directory.parent:
        directory = directory.parent
    try:
        return shutil.disk_usage(directory).free
    except OSError:
        return None


def check_disk(directory: Path, need: int, what: str) -> None:
    """Refuse to start making a file of ``need`` bytes that the file system has no room for."""
    have = free_disk(directory)
    if have is not None and need > have:
        raise PdbtoolError(f"{what} needs about {need / 2**20:,.1f} MiB in {directory}, but only "
                           f"{have / 2**20:,.1f} MiB is free")
