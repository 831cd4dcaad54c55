"""Numba's on-disk cache is stamped with the whole package (pdbtool._native.numba_cache): a compiled
function holds copies of the functions it calls, so an edit to any source file must recompile them all."""

from __future__ import annotations

import importlib
import os
import pkgutil
import subprocess
import sys

import numba

import pdbtool
from pdbtool._native import numba_cache


def _package_modules():
    for info in pkgutil.walk_packages(pdbtool.__path__, "pdbtool."):
        if info.name.endswith("__main__"):  # runs the command line
            continue
        try:
            yield importlib.import_module(info.name)
        except ImportError:  # an optional dependency (Ray) that this installation lacks
            continue


# one interpreter that imports Numba (not pdbtool), then forks a child per module: the child imports the module
# first, then the helper, so the module alone must have put the package's locators in; each child prints
# "module: the kernels without the package's stamp"
_CHECK_EACH = """
import importlib, os, sys
import numba
for name in sys.argv[1:]:
    pid = os.fork()
    if pid == 0:
        module = importlib.import_module(name)
        from pdbtool._native.numba_cache import cached_kernels
        print(name + ":", " ".join(k for k, stamped in cached_kernels(module) if not stamped), flush=True)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if status:
        sys.exit(f"{name}: the check failed ({status})")
"""


def test_every_cached_kernel_of_the_package_has_the_package_stamp():
    """Each module that defines cached kernels, imported first in a fresh interpreter, gives all of them
    the package's stamp (so each imports pdbtool._native.numba_cache before defining them)."""
    modules = [m for m in _package_modules() if numba_cache.cached_kernels(m)]
    names = [m.__name__ for m in modules]
    assert len(names) >= 8 and "pdbtool.search.driver" in names
    run = subprocess.run([sys.executable, "-c", _CHECK_EACH, *names], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    lines = dict(line.split(":", 1) for line in run.stdout.splitlines())
    assert sorted(lines) == sorted(names), run.stdout
    unstamped = {name: kernels.split() for name, kernels in lines.items() if kernels.strip()}
    assert not unstamped, f"cached kernels stamped with their own file only: {unstamped}"
    # and the stamp they carry is the whole package's
    from pdbtool.search.driver import ida

    assert ida._cache._impl._locator.get_source_stamp() == numba_cache.package_stamp()


def test_the_stamp_follows_every_source_file(tmp_path):
    stamp = numba_cache.package_stamp.__wrapped__
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub" / "b.py").write_text("y = 1\n")
    first = stamp(tmp_path)
    assert stamp(tmp_path) == first
    (tmp_path / "sub" / "b.py").write_text("y = 22\n")  # another size
    second = stamp(tmp_path)
    assert second != first
    st = (tmp_path / "a.py").stat()
    os.utime(tmp_path / "a.py", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # the same size, a later time
    assert stamp(tmp_path) != second


def test_functions_outside_the_package_keep_numbas_own_stamp(tmp_path, monkeypatch):
    (tmp_path / "outside_kernels.py").write_text("from numba import njit\n\n"
                                                 "@njit(cache=True)\n"
                                                 "def twice(x):\n"
                                                 "    return 2 * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("outside_kernels")
    try:
        assert module.twice(21) == 42
        locator = type(module.twice._cache._impl._locator)
        assert not getattr(locator, "pdbtool_package_stamp", False)
    finally:
        sys.modules.pop("outside_kernels", None)


def test_installing_twice_adds_the_locators_once():
    classes = numba.core.caching.CacheImpl._locator_classes
    before = list(classes)
    assert numba_cache.install()
    assert classes == before
    assert sum(getattr(c, "pdbtool_package_stamp", False) for c in classes) == 3


# a writer of one specialization of ``total`` into the cache at argv[1]; its save stops before it writes the
# index until the other writer has come that far too (or BARRIER_SECONDS passed), the window in which
# Numba's unlocked save lets both pick the same data file
_WRITER = """
import os, sys, time
sys.path.insert(0, sys.argv[1])
import pdbtool._native  # the locks
import numba.core.caching as caching
here, size, cache = sys.argv[1], int(sys.argv[2]), sys.argv[3]
save_index = caching.IndexDataCacheFile._save_index
def waiting(self, overloads):
    open(os.path.join(here, f"at-save-{size}"), "w").close()
    end = time.monotonic() + {seconds}
    while time.monotonic() < end and len([n for n in os.listdir(here) if n.startswith("at-save-")]) < 2:
        time.sleep(0.01)
    save_index(self, overloads)
caching.IndexDataCacheFile._save_index = waiting
import summed
assert summed.total((1,) * size) == size
"""
BARRIER_SECONDS = 2.0


def test_two_processes_compiling_one_function_keep_both_specializations(tmp_path):
    """Two processes that save specializations of one cached function at once: each keeps its data file
    and its index entry, and a third process loads both with their own types (without the lock, both
    writers pick the same data file: one entry is lost and the other may map to the wrong machine code)."""
    (tmp_path / "summed.py").write_text("from numba import njit\n\n\n@njit(cache=True)\ndef total(t):\n"
                                        "    s = 0\n    for x in t:\n        s += x\n    return s\n")
    cache = tmp_path / "cache"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    code = _WRITER.replace("{seconds}", repr(BARRIER_SECONDS))
    writers = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path), str(size), str(cache)], env=env)
               for size in (1, 2)]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    assert len(list(cache.rglob("summed.total*.nbc"))) == 2
    reader = ("import sys; sys.path.insert(0, sys.argv[1]); import pdbtool._native, summed; "
              "print(summed.total((1,)), summed.total((1, 1)))")
    out = subprocess.run([sys.executable, "-c", reader, str(tmp_path)], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-500:]
    assert out.stdout.split() == ["1", "2"]
