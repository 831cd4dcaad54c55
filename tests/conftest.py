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

# Numba's OpenMP threads spin-wait after each parallel kernel call by default.  The tests run several processes
# on few cores and call many short kernels (a build a slice of blocks at a time, its checks a block at a
# time): spinning threads then take the cores that the thread everyone waits for needs, and one small build
# burns seconds of CPU.  Idle threads sleep instead, here and in every process the tests start (set before
# Numba loads its threading layer, which reads it once).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# opt-in record of Numba's compiles and each test's CPU (tests/compile_profile.py)
PROFILE = None
if os.environ.get("PDBTOOL_COMPILE_PROFILE"):
    from compile_profile import recorder

    PROFILE = recorder(os.environ.get("PYTEST_XDIST_WORKER", "main"))

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
    warm-up (their stamp, kept in pytest's cache) or ``PDBTOOL_TEST_WARMUP=0``.  The shared tables of
    other stamps are removed first (:func:`forget_old_tables`)."""
    config = session.config
    if not hasattr(config, "workerinput"):
        forget_old_tables(config)
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
    warmed, failed = warm_up(processes)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        from kernel_warmup import jobs

        reporter.write_line(f"kernels warmed up: {warmed} of {len(jobs())} jobs in {processes} processes, "
                            f"{time.monotonic() - start:.0f} s")
        for line in failed:  # the tests of that code say what is wrong; this says where the time went
            reporter.write_line(f"  {line}")
    if cache is not None and not failed:
        cache.set("pdbtool/warmed-kernels", stamp)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if PROFILE is None:
        yield
        return
    started = PROFILE.start_test(item.nodeid)
    yield
    PROFILE.end_test(item.nodeid, started)


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


# the tests that take over about a second and a half with warm caches (an entry with its parameters in
# brackets names one case): `make test` runs them, the edit loop leaves them out
WARM_LONG_TESTS = (
    "test_64cells.py::test_commands_on_large_boards[8x8]",
    "test_64cells.py::test_encoded_tables_search_as_the_byte_tables_on_8x8[ignored-encodings1]",
    "test_64cells.py::test_encoded_tables_search_as_the_byte_tables_on_8x8[minimized-encodings0]",
    "test_64cells.py::test_move_pruning_keeps_the_length_on_6x6",
    "test_bfs.py::test_block_dispenser_hands_out_every_block_exactly_once",
    "test_bfs.py::test_builders_match_an_independent_search_of_the_abstraction[minimized-4-8-tiles7]",
    "test_bfs.py::test_incremental_unrank_follows_any_increasing_ranks[3-3-2]",
    "test_bfs.py::test_incremental_unrank_follows_any_increasing_ranks[4-4-1]",
    "test_bfs.py::test_incremental_unrank_follows_any_increasing_ranks[4-4-7]",
    "test_bfs.py::test_incremental_unrank_follows_any_increasing_ranks[5-5-3]",
    "test_bfs.py::test_parallel_build_equals_single_thread_build",
    "test_bfs.py::test_pattern_of_all_tiles_gives_true_distances[ignored-3-3-31]",
    "test_bfs.py::test_pattern_of_all_tiles_gives_true_distances[minimized-3-3-31]",
    "test_catalogue_lazy.py::test_lazy_rule_searches_5x5_walks_exactly_like_the_plain_evaluation[fsm]",
    "test_catalogue_lazy.py::test_lazy_rule_searches_5x5_walks_exactly_like_the_plain_evaluation[parent]",
    "test_catalogue_lazy.py::test_lazy_rule_searches_the_4x4_exactly_like_the_plain_evaluation[fsm]",
    "test_catalogue_lazy.py::test_lazy_rule_searches_the_4x4_exactly_like_the_plain_evaluation[parent]",
    "test_catalogue_lazy.py::test_lazy_rule_with_threads_counts_as_serial",
    "test_dynamic.py::test_admissible_on_every_8puzzle_state",
    "test_dynamic.py::test_incremental_equals_from_scratch_with_small_memos",
    "test_dynamic.py::test_move_lookups_hold_what_holds_with_the_blank_where_the_tile_was[dims3-pairs+triples-region-150]",
    "test_dynamic.py::test_packed_lookups_give_the_tables_edges[dims1-pairs+triples-region]",
    "test_dynamic.py::test_region_values_match_an_exact_search",
    "test_dynamic_variants.py::test_every_variant_is_admissible_and_at_most_the_region_set_on_every_8puzzle_state",
    "test_dynamic_wide.py::test_move_lookups_hold_what_holds_with_the_blank_where_the_tile_was[6x6]",
    "test_dynamic_wide.py::test_pair_tables_of_wide_boards_equal_a_plain_search[dims0]",
    "test_dynamic_wide.py::test_pair_tables_of_wide_boards_equal_a_plain_search[dims1]",
    "test_dynamic_wide.py::test_state_lookups_give_the_tables_edges[3x12]",
    "test_dynamic_wide.py::test_state_lookups_give_the_tables_edges[6x6]",
    "test_dynamic_wide.py::test_wide_boards_have_the_wide_layout[6x6]",
    "test_encodings.py::test_minimized_tables_jump_by_three_or_more_on_some_tile_moves[dims3-tiles3]",
    "test_faults.py::test_a_fifo_planted_as_a_table_name_never_blocks",
    "test_faults.py::test_a_signal_while_saving_removes_the_temporary[2]",
    "test_faults.py::test_crafted_region_rows_are_refused[group-group index]",
    "test_faults.py::test_crafted_region_rows_are_refused[odd-odd or negative]",
    "test_faults.py::test_crafted_region_rows_are_refused[order-not sorted]",
    "test_faults.py::test_crafted_region_rows_are_refused[rank-rank out of range]",
    "test_faults.py::test_crafted_sparse_values_offset_is_refused",
    "test_faults.py::test_every_flipped_bit_and_every_truncation_is_refused",
    "test_faults.py::test_interrupted_solve_reports_what_was_solved[2-interrupted-text]",
    "test_faults.py::test_two_builds_of_one_table_build_it_once",
    "test_fuzz.py::test_every_header_key_of_every_kind",
    "test_fuzz.py::test_headers_that_lie_with_a_valid_checksum",
    "test_fuzz.py::test_mutated_table_files",
    "test_fuzz.py::test_random_instance_files",
    "test_hanoi.py::test_goal_peg_instances_and_dynamic_search",
    "test_hanoi.py::test_placement_goal_heuristics_are_admissible",
    "test_hanoi.py::test_random_instances_solve_optimally",
    "test_hanoi.py::test_search_counts_fall_with_a_stronger_heuristic",
    "test_ida.py::test_goal_and_other_goals",
    "test_ida.py::test_korf_instances_with_partitions[15-6-6-3]",
    "test_large_boards.py::test_24_puzzle_smoke",
    "test_large_boards.py::test_2x5_against_a_full_bfs",
    "test_large_boards.py::test_ddb_and_max_threads_on_random_3x4_states[ddb]",
    "test_large_boards.py::test_ddb_and_max_threads_on_random_3x4_states[max]",
    "test_large_boards.py::test_rectangular_boards_build_and_solve[3x7]",
    "test_large_boards.py::test_rectangular_boards_build_and_solve[4x8]",
    "test_large_boards.py::test_solve_command_with_threads",
    "test_large_boards.py::test_threads_find_the_serial_length_on_15_puzzles[93-ddb]",
    "test_large_boards.py::test_threads_find_the_serial_length_on_15_puzzles[93-max]",
    "test_large_boards.py::test_threads_find_the_serial_length_on_15_puzzles[93-pdb]",
    "test_large_boards.py::test_threads_find_the_serial_length_on_15_puzzles[97-ddb]",
    "test_large_boards.py::test_threads_find_the_serial_length_on_15_puzzles[97-max]",
    "test_longruns.py::test_results_come_in_input_order_as_soon_as_those_before_are_done",
    "test_pattern.py::test_every_rank_is_hit_once_in_order[3-3-8]",
    "test_runtime.py::test_ctrl_c_stops_the_search_threads",
    "test_sample.py::test_sampled_histogram_equals_python_values_of_the_same_states[LinearConflict]",
    "test_solve_cli.py::test_jobs_give_the_same_results",
    "test_solve_encodings.py::test_reflection_changes_the_search_so_its_lookups_are_exercised",
    "test_solve_encodings.py::test_values_carried_down_the_stack_are_the_byte_values[mod3]",
    "test_solve_encodings.py::test_values_carried_down_the_stack_are_the_byte_values[parity]",
    "test_solve_encodings.py::test_values_carried_down_the_stack_are_the_byte_values[sparse]",
    "test_verify.py::test_consistency_kernel_agrees_with_a_plain_oracle_on_mutated_tables[minimized]",
    "test_zero_aware.py::test_builder_matches_a_01_bfs_of_each_blank_region[3-7-tiles7]",
    "test_zero_aware.py::test_builder_matches_a_01_bfs_of_each_blank_region[5-5-tiles6]",
    "test_zero_aware.py::test_one_partition_catalogue_searches_exactly_like_the_pattern_sum",
    "test_zero_aware.py::test_parallel_zero_aware_build_equals_single_thread_build",
    "test_zero_aware.py::test_random_8_puzzle_and_3x4_states_solve_optimally[zero-aware]",
)


COLLECTED: list[str] = []  # every case this run collected, for tests/test_long_lists.py


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config, items):
    COLLECTED[:] = [f"{item.path.name}::{item.name}" for item in items]  # before -m deselects any
    for item in items:
        marker = FILE_MARKERS.get(item.path.name)
        if marker:
            item.add_marker(getattr(pytest.mark, marker))
        if f"{item.path.name}::{item.name.split('[')[0]}" in LONG_TESTS or \
                f"{item.path.name}::{item.name}" in WARM_LONG_TESTS:
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


SCHEDULED: list[tuple[str, str | None]] = []  # (node id, xdist group) of each test as the scheduler gets it


def pytest_collection_finish(session):
    SCHEDULED[:] = [(item.nodeid, group_mark(item)) for item in session.items]


def group_mark(item) -> str | None:
    mark = item.get_closest_marker("xdist_group")
    if mark is None:
        return None
    return mark.args[0] if mark.args else mark.kwargs.get("name", "default")


# files whose tests compile the same kernels, which the warm-up does not: one process compiles them once
FILE_GROUPS = {"test_hanoi.py": "hanoi4", "test_hanoi_encodings.py": "hanoi4"}


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


TABLES_DIR = "pdbtool-tables"  # below pytest's cache directory: the shared tables, one folder per package stamp


def shared_tables_root(config) -> Path | None:
    """Where the shared tables of every run are kept (pytest's cache directory), None without one."""
    cache = getattr(config, "cache", None)
    return None if cache is None else Path(cache.mkdir(TABLES_DIR))


def stamp_folder() -> str:
    """The folder below :func:`shared_tables_root` of the package's sources as they are now."""
    from pdbtool._native.numba_cache import package_stamp

    return package_stamp()[:16]


@pytest.fixture(scope="session")
def shared_cache_dir(tmp_path_factory, pytestconfig) -> Path:
    """A table cache for the whole run, the parallel processes' too: for tables that tests only read
    (never damage, move or count), so that each is built once.  The cache's lock makes a process that
    asks for a table another is building wait for it, then read it.

    It is kept between runs, for the package's sources of its stamp (that of Numba's cache): a run after
    an edit of the package builds its tables afresh, a run of unchanged sources (the edit loop on tests,
    ``make test-fast`` again) reads them.  Without pytest's cache (``-p no:cacheprovider``) it is a
    directory of the run."""
    root = shared_tables_root(pytestconfig)
    if root is None:
        root = tmp_path_factory.getbasetemp()
        if os.environ.get("PYTEST_XDIST_WORKER"):
            root = root.parent  # the run's directory, above each process's own
        path = root / "shared-tables"
    else:
        path = root / stamp_folder()
    path.mkdir(exist_ok=True)
    return path


def forget_old_tables(config) -> None:
    """Remove the shared tables of other package stamps (at the start of a run, before its processes)."""
    import shutil

    root = shared_tables_root(config)
    if root is None:
        return
    for old in root.iterdir():
        if old.name != stamp_folder():
            shutil.rmtree(old, ignore_errors=True)


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

