"""A clean, non-editable install from the local tree, offline: the sdist and the wheel that ``python -m build``
makes from it carry the code and the built-in partitions, raise no setuptools warnings, and run ``pdbtool``.

Nothing is fetched: the build runs without isolation (setuptools and build come with the ``test`` extra) and
pip installs with ``--no-index --no-deps`` into a target directory, beside the test environment's
dependencies.  The source is copied first, so that the build leaves nothing in the working tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# what the sdist is made of (pyproject.toml and MANIFEST.in)
SOURCES = ["pdbtool", "partitions", "pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", "Makefile", "examples",
           "docs", "tests"]
WARNINGS = ("warning", "deprecat", "absent from the `packages`")

pytest.importorskip("build", reason="the test extra brings 'build'")


def _run(args, **kw):
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)
    assert proc.returncode == 0, f"{' '.join(map(str, args))} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """The sdist and the wheel built from it (``python -m build`` builds the wheel from the sdist)."""
    tmp = tmp_path_factory.mktemp("install")
    src = tmp / "src"
    for name in SOURCES:
        path = ROOT / name
        if not path.exists():
            continue
        if path.is_dir():
            shutil.copytree(path, src / name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc", ".hypothesis"))
        else:
            src.mkdir(exist_ok=True)
            shutil.copy2(path, src / name)
    proc = _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp / "dist"), str(src)])
    out = tmp / "dist"
    return tmp, out, next(out.glob("*.tar.gz")), next(out.glob("*.whl")), proc.stdout + proc.stderr


def test_build_raises_no_setuptools_warnings(dist):
    *_, log = dist
    noisy = [line for line in log.splitlines()
             if any(w in line.lower() for w in WARNINGS) and "byte-compiling is disabled" not in line]
    assert not noisy, "\n".join(noisy)


def test_partitions_are_package_data_not_a_symlink(dist):
    """Wheel and sdist carry the partition files, never a link (the source tree links pdbtool/partitions to
    the top-level partitions/ that users read)."""
    _, _, sdist, wheel, _ = dist
    names = zipfile.ZipFile(wheel).namelist()
    builtin = sorted(p.name for p in (ROOT / "partitions").glob("*.txt"))
    assert builtin and all(f"pdbtool/partitions/{name}" in names for name in builtin)
    # the wheel holds the files themselves, not the source tree's link pdbtool/partitions -> partitions
    assert not any(info.external_attr >> 28 == 0o12 for info in zipfile.ZipFile(wheel).infolist())
    with tarfile.open(sdist) as tar:
        members = {m.name.split("/", 1)[1]: m for m in tar.getmembers() if "/" in m.name}
    assert all(f"partitions/{name}" in members for name in builtin)
    assert not any(m.issym() for m in members.values())


def _install(target: Path, artifact: Path) -> dict:
    _run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--no-build-isolation",
          "--target", str(target), str(artifact)])
    env = dict(os.environ, PYTHONPATH=str(target))
    env.pop("PDBTOOL_CACHE_DIR", None)
    return env


def test_wheel_installs_and_solves(dist, tmp_path):
    _, _, _, wheel, _ = dist
    target = tmp_path / "site"
    env = _install(target, wheel)
    env["PDBTOOL_CACHE_DIR"] = str(tmp_path / "cache")
    # run outside the source tree, so that only the installed copy can be imported
    where = _run([sys.executable, "-c", "import pdbtool, pdbtool.partitions as p; print(pdbtool.__file__); "
                  "from pdbtool.tables.partitions import builtin_names; print(' '.join(builtin_names()))"],
                 env=env, cwd=tmp_path).stdout.split("\n")
    assert where[0].startswith(str(target))
    assert {"8-4-4", "15-7-8", "24-6-6-6-6"} <= set(where[1].split())
    # Manhattan distance: one kernel to compile in the fresh install (the pattern kernels take minutes on a
    # busy machine); the built-in partitions were found above
    solved = _run([str(target / "bin" / "pdbtool"), "solve", str(ROOT / "examples" / "8puzzle.txt"),
                   "--heuristic", "manhattan"], env=env, cwd=tmp_path)
    assert "solved 10 of 10" in solved.stdout + solved.stderr


def test_sdist_installs_with_its_partitions(dist, tmp_path):
    _, _, sdist, _, _ = dist
    target = tmp_path / "site"
    env = _install(target, sdist)
    out = _run([sys.executable, "-c", "from pdbtool import load_partition; import pdbtool; print(pdbtool.__file__); "
                "print(load_partition('15-6-6-3').patterns[2])"], env=env, cwd=tmp_path).stdout.split("\n")
    assert out[0].startswith(str(target))
    assert out[1] == "12,13,14"
