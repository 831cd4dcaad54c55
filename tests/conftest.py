"""Fixtures shared by the whole test session, made once: Korf's 100 parsed, and the look-ups of the
dynamic sets on small boards, built on first use.  The markers (``slow``, ``ray``, ``install``) are
registered in pyproject.toml; ``make test-fast`` leaves those tests out.

Hypothesis runs each test's full number of examples; ``HYPOTHESIS_PROFILE=fast`` (``make test-fast``) runs
a tenth of them (:func:`examples`), for the edit loop.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

FAST = os.environ.get("HYPOTHESIS_PROFILE") == "fast"
settings.register_profile("fast", max_examples=10, deadline=None)
if FAST:
    settings.load_profile("fast")


def examples(n: int) -> int:
    """``max_examples`` for a hypothesis test whose full run tries ``n``: a tenth (at least 10) in the edit
    loop, all of them in ``make test``."""
    return max(10, n // 10) if FAST else n

# files whose every test needs Ray or builds and installs the package (markers for `make test-fast`)
FILE_MARKERS = {"test_ray.py": "ray", "test_install.py": "install"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        marker = FILE_MARKERS.get(item.path.name)
        if marker:
            item.add_marker(getattr(pytest.mark, marker))


@cache
def korf100() -> dict[int, tuple[tuple[int, ...], int]]:
    """Korf's 100 (``examples/korf100.txt``): id -> (tiles cell by cell, optimal length).  A plain function
    too, for ``parametrize`` lists, which are made before fixtures exist."""
    out = {}
    for line in (EXAMPLES / "korf100.txt").read_text().splitlines():
        body, _, comment = line.partition("#")
        fields = body.split()
        if fields:
            out[int(fields[0])] = (tuple(int(x) for x in fields[1:17]), int(comment.split()[-1]))
    return out


def korf100_line(ident: int, optimal: bool = True) -> str:
    """Instance ``ident`` of Korf's 100 as a line of an instance file: the id, the tiles, and (unless
    ``optimal`` is false) the comment ``# optimal N`` that makes ``solve`` check the length it finds."""
    tiles, length = korf100()[ident]
    line = f"{ident} {' '.join(map(str, tiles))}"
    return f"{line}  # optimal {length}" if optimal else line


def korf100_file(path: Path, ids, optimal: bool = True) -> Path:
    """An instance file at ``path`` holding the instances ``ids`` of Korf's 100, in that order."""
    path.write_text("".join(korf100_line(i, optimal) + "\n" for i in ids))
    return path


@pytest.fixture(scope="session")
def korf100_instances() -> dict[int, tuple[tuple[int, ...], int]]:
    return korf100()


class LazyDynamicTables(dict):
    """``tables[(width, height), set name]``: the look-ups of a dynamic set, built into one cache directory
    on first use, so that a test session builds only the boards and sets its tests ask for."""

    def __init__(self, cache_dir: Path):
        super().__init__()
        self.cache_dir = cache_dir

    def __missing__(self, key):
        from pdbtool.puzzle.board import Board
        from pdbtool.tables.pairs_triples import load_dynamic

        dims, name = key
        value = self[key] = load_dynamic(Board(*dims), name, cache_dir=self.cache_dir, jobs=1)
        return value


@pytest.fixture(scope="session")
def dynamic_tables(tmp_path_factory) -> LazyDynamicTables:
    return LazyDynamicTables(tmp_path_factory.mktemp("dynamic-cache"))

