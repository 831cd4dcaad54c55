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


# imports the module first, then the helper: the module alone must have put the package's locators in
_CHECK_ONE = """
import importlib, sys
module = importlib.import_module(sys.argv[1])
from pdbtool._native.numba_cache import cached_kernels
print(" ".join(name for name, stamped in cached_kernels(module) if not stamped))
"""


def test_every_cached_kernel_of_the_package_has_the_package_stamp():
    """Each module that defines cached kernels, imported first in a fresh interpreter, gives all of them
    the package's stamp (so each imports pdbtool._native.numba_cache before defining them)."""
    modules = [m for m in _package_modules() if numba_cache.cached_kernels(m)]
    names = [m.__name__ for m in modules]
    assert len(names) >= 8 and "pdbtool.search.driver" in names
    for name in names:
        run = subprocess.run([sys.executable, "-c", _CHECK_ONE, name], capture_output=True, text=True,
                             check=True)
        assert run.stdout.strip() == "", f"{name}: cached kernels stamped with their own file only: {run.stdout}"
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
