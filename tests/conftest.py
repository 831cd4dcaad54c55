"""Fixtures shared by the whole test session, made once: Korf's 100 parsed, one table cache for the tables
tests only read (the named partitions, the dynamic look-ups on small boards), built on first use.  The
markers (``slow``, ``ray``, ``install``) are registered in pyproject.toml; ``make test-fast`` leaves those
tests out.

``make test`` runs the tests in parallel processes (pytest-xdist, ``--dist loadgroup``): the shared cache
is one directory for all of them (a table is built once, under the cache's lock, and read by the others),
and tests that share a module-scoped fixture, or a Ray instance, run in one process
(:func:`pytest_collection_modifyitems`), so that the fixture is made once.

Hypothesis runs each test's full number of examples; ``HYPOTHESIS_PROFILE=fast`` (``make test-fast``) runs
a tenth of them (:func:`examples`), for the edit loop.
"""

from __future__ import annotations

import os
import time
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


def pytest_sessionstart(session):
    """In a parallel run (``-n N``), before the test processes start: compile the common kernels once, in
    N processes at once (tests/kernel_warmup.py), unless the package's sources are those of the last
    warm-up (their stamp, kept in pytest's cache) or ``PDBTOOL_TEST_WARMUP=0``."""
    config = session.config
    processes = getattr(config.option, "numprocesses", None) or 0
    if processes < 2 or hasattr(config, "workerinput") or os.environ.get("PDBTOOL_TEST_WARMUP") == "0":
        return
    from kernel_warmup import warm_up

    from pdbtool._native.numba_cache import package_stamp

    stamp = package_stamp()
    cache = getattr(config, "cache", None)
    if cache is not None and cache.get("pdbtool/warmed-kernels", None) == stamp:
        return
    start = time.monotonic()
    jobs, failed = warm_up(processes)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"kernels warmed up: {jobs - failed} of {jobs} jobs in {processes} processes, "
                            f"{time.monotonic() - start:.0f} s")
    if cache is not None and not failed:
        cache.set("pdbtool/warmed-kernels", stamp)


# files whose every test needs Ray or builds and installs the package (markers for `make test-fast`)
FILE_MARKERS = {"test_ray.py": "ray", "test_install.py": "install"}

# the longest tests of a run from a fresh clone (their kernels' first compile included): `make test` runs
# them, the edit loop (`make test-fast`) leaves them out as it leaves out the tests marked slow
LONG_TESTS = (
    "test_zero_aware.py::test_every_8_puzzle_state_admissible_and_at_least_each_partition",
    "test_zero_aware.py::test_zero_aware_tables_dominate_minimized_ones_on_the_8_puzzle",
    "test_64cells.py::test_threads_count_the_serial_nodes_on_8x8",
    "test_dynamic_wide.py::test_the_search_on_a_wide_board_matches_a_reference_ida",
    "test_dynamic_wide.py::test_incremental_equals_from_scratch_along_random_walks",
    "test_dynamic_wide.py::test_covers_of_tiles_up_to_63_equal_brute_force",
    "test_hanoi_encodings.py::test_encodings_decode_to_the_byte_table",
    "test_hanoi_encodings.py::test_search_is_the_same_with_every_encoding",
    "test_hanoi.py::test_tables_equal_a_breadth_first_search",
    "test_hanoi.py::test_every_heuristic_is_admissible_and_consistent",
    "test_dynamic_variants.py::test_goal_anywhere_is_exact_and_differs_only_where_home_cells_cut_the_board",
    "test_encodings.py::test_nibble_and_sparse_saturate_admissibly_and_count_it",
    "test_encodings.py::test_lossless_encodings_decode_every_rank_to_the_byte_value",
    "test_encodings.py::test_ignored_tables_change_by_exactly_one_per_tile_move",
    "test_solve_encodings.py::test_lossless_encodings_search_exactly_like_byte",
    "test_35.py::test_stronger_heuristics_predict_fewer_nodes",
    "test_35.py::test_the_benchmark_writes_its_rows_and_plot",
    "test_numba_cache.py::test_every_cached_kernel_of_the_package_has_the_package_stamp",
    "test_readme.py::test_readme_blocks_run",
    "test_sample.py::test_sampled_line_scan_conflicts_equal_their_value",
    "test_fuzz.py::test_structure_aware_mutations_of_every_kind",
    "test_dynamic.py::test_incremental_equals_from_scratch_along_random_walks",
)


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config, items):
    for item in items:
        marker = FILE_MARKERS.get(item.path.name)
        if marker:
            item.add_marker(getattr(pytest.mark, marker))
        if f"{item.path.name}::{item.name.split('[')[0]}" in LONG_TESTS:
            item.add_marker(pytest.mark.slow)
    if hasattr(config, "workerinput"):  # a process of a parallel run (each collects the same list)
        for item in items:
            group = xdist_group(item)
            if group and not item.get_closest_marker("xdist_group"):
                item.add_marker(pytest.mark.xdist_group(group))
        groups = [group_mark(item) for item in items]
        sizes = {name: groups.count(name) for name in set(groups) if name is not None}
        # the groups first, the largest first: a group runs whole in one process, so one started last
        # would leave the other processes idle at the end
        rank = {id(item): -sizes[name] if name is not None else 0 for item, name in zip(items, groups)}
        items.sort(key=lambda item: rank[id(item)])


def group_mark(item) -> str | None:
    mark = item.get_closest_marker("xdist_group")
    if mark is None:
        return None
    return mark.args[0] if mark.args else mark.kwargs.get("name", "default")


# files whose tests compile the same kernels, which the warm-up does not: one process compiles them once
FILE_GROUPS = {"test_hanoi.py": "hanoi4", "test_hanoi_encodings.py": "hanoi4",
               "test_sample.py": "sampling", "test_predict.py": "sampling", "test_35.py": "sampling"}


def xdist_group(item) -> str | None:
    """The process group of a test under ``--dist loadgroup``: Ray's tests together (one Ray instance of
    this run at a time, as in a serial run), a domain's tests together (``FILE_GROUPS``), and a module's
    tests that use a fixture of module or class scope defined there together (the fixture is made once,
    not once per process)."""
    if item.get_closest_marker("ray"):
        return "ray"
    if item.path.name in FILE_GROUPS:
        return FILE_GROUPS[item.path.name]
    module = item.nodeid.split("::")[0]
    info = getattr(item, "_fixtureinfo", None)
    for name in info.names_closure if info else ():
        for fixturedef in info.name2fixturedefs.get(name, ()):
            if fixturedef.scope in ("module", "class") and fixturedef.baseid.split("::")[0] == module:
                return module
    return None


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


@pytest.fixture(scope="session")
def shared_cache_dir(tmp_path_factory) -> Path:
    """A table cache for the whole run, the parallel processes' too: for tables that tests only read
    (never damage, move or count), so that each is built once.  The cache's lock makes a process that
    asks for a table another is building wait for it, then read it."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's directory, above each process's own
    path = root / "shared-tables"
    path.mkdir(exist_ok=True)
    return path


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
def dynamic_tables(shared_cache_dir) -> LazyDynamicTables:
    return LazyDynamicTables(shared_cache_dir)

