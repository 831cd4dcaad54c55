"""Numba's on-disk cache, keyed on the whole package rather than on each function's own file.

Numba stamps a cached function with its own source file only, yet a compiled function carries its own copy
of every function it calls, inlined or not: after an edit to ``heuristics/vertex_cover/moves.py`` alone, the
cached search driver (``search/driver.py``) would go on running the old kernels.  The cache locators
installed here stamp every pdbtool function with the sizes and modification times of all the package's
source files, so that any edit recompiles them all.  An installed release behaves the same either way.
Functions outside the package keep Numba's own locators.  Every module that compiles cached kernels
imports this one first (``pdbtool._native`` does, and the modules that do not import it name it).

Numba reads and writes a function's cache without a lock: a save reads the index, picks the first unused
data file name and writes the index, then the data.  Two processes that compile specializations of one
function at once (test processes, a batch's workers, the builders of two commands) can both pick the same
name, so that the index maps one signature to the other's machine code, which every later process then
loads: a typing error, or a kernel that runs with the wrong types (numba/numba#10128).  :func:`install`
also makes each save hold an exclusive lock on the cache directory, and each load a shared one.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from functools import cache
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: Numba's unlocked cache
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".pdbtool-numba.lock"  # in each directory of cached kernels

PACKAGE = Path(__file__).resolve().parents[1]


@cache
def package_stamp(root: Path = PACKAGE) -> str:
    """A digest of the path, size and modification time of every ``.py`` file below ``root`` (computed once
    per process: a process compiles each function once)."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        st = path.stat()
        digest.update(f"{path.relative_to(root)}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _inside_package(py_file: str) -> bool:
    try:
        Path(py_file).resolve().relative_to(PACKAGE)
    except (OSError, ValueError):
        return False
    return True


def _package_locator(base: type) -> type:
    """``base`` (one of Numba's locators for functions backed by a source file), for pdbtool's functions
    only, with the package's stamp instead of the file's."""

    class PackageLocator(base):
        pdbtool_package_stamp = True

        def get_source_stamp(self):
            return package_stamp()

        @classmethod
        def from_function(cls, py_func, py_file):
            if not _inside_package(py_file):
                return None
            return super().from_function(py_func, py_file)

    PackageLocator.__name__ = PackageLocator.__qualname__ = f"Package{base.__name__}"
    return PackageLocator


def cached_kernels(module) -> list[tuple[str, bool]]:
    """``(name, whether it has the package's stamp)`` of each Numba function with an on-disk cache that
    ``module`` defines (for tests and inspection)."""
    from numba.core.caching import FunctionCache
    from numba.core.registry import CPUDispatcher

    found = []
    for value in vars(module).values():
        if isinstance(value, CPUDispatcher) and value.__module__ == module.__name__:
            cache = getattr(value, "_cache", None)
            if isinstance(cache, FunctionCache):
                found.append((value.__name__, getattr(type(cache._impl._locator), "pdbtool_package_stamp", False)))
    return found


@contextlib.contextmanager
def directory_lock(directory: str, exclusive: bool):
    """Hold an ``flock`` on ``directory``'s lock file, exclusive or shared; nothing where the file cannot
    be opened (no such directory yet, or one this user cannot write: nobody saves there either)."""
    try:
        fd = os.open(os.path.join(directory, LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)  # releases the lock


def _locked(method, exclusive: bool):
    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with directory_lock(self._cache_path, exclusive):
            return method(self, *args, **kwargs)

    locked.pdbtool_locked = True  # type: ignore[attr-defined]
    return locked


def _install_locks(caching) -> bool:
    """Numba's index-and-data cache file, its saves under an exclusive lock and its loads under a shared
    one (once); False where this Numba or this system has no such class or no ``flock``."""
    files = getattr(caching, "IndexDataCacheFile", None)
    if fcntl is None or files is None or not all(hasattr(files, m) for m in ("save", "load", "flush")):
        return False  # pragma: no cover - another Numba, or Windows
    if not getattr(files.save, "pdbtool_locked", False):
        files.save = _locked(files.save, exclusive=True)
        files.flush = _locked(files.flush, exclusive=True)
        files.load = _locked(files.load, exclusive=False)
    return True


def install() -> bool:
    """Put the package's locators ahead of the ones they derive from, and lock the cache files (once);
    False where this Numba has no such locators (its own per-file stamps then apply)."""
    try:
        from numba.core import caching

        classes = caching.CacheImpl._locator_classes
        bases = (caching.UserProvidedCacheLocator, caching.InTreeCacheLocator, caching.UserWideCacheLocator)
    except (ImportError, AttributeError):  # pragma: no cover - another Numba
        return False
    _install_locks(caching)
    if any(getattr(c, "pdbtool_package_stamp", False) for c in classes):
        return True
    extended = []
    for cls in classes:
        if cls in bases:
            extended.append(_package_locator(cls))
        extended.append(cls)
    classes[:] = extended
    return True


install()
