"""The public entry point of the builders: :func:`build_table` runs the layered BFS of one pattern under a blank
rule, one parallel step (:mod:`.ignored_bfs`, :mod:`.minimized_bfs`) a layer, and checks the result.

Every step is top-down: each frontier rank is unranked incrementally from the last one scanned, its
moves are generated, prefetched and looked up a batch later so that their cache misses overlap.  A flag
per chunk of ``CHUNK`` ranks says whether the chunk holds states of the layer to expand; a step scans
only the flagged chunks, so that the many small first and last layers cost about their states, not a
pass over the whole table.  (A bottom-up step, each unseen state looking for a neighbour in the
frontier, was not kept: the sliding-tile searches are deep, with no layer above about an eighth of the
states, and it cost as much or more at every layer.)
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Callable

import numba
import numpy as np

from ... import registry
from ..._native.arrays import read_only
from ...errors import PdbtoolError
from ...processes import StopSignals, run_in_slices
from ..resources import require_memory
from ..ranking import TilePattern, column_masks, radix_inverses, rank_weights
from ..zero_aware import layout_bytes, layout_of
from .checks import excess_blocks, excess_violations, zero_aware_violations
from .ignored_bfs import ignored_top_down
from .minimized_bfs import minimized_top_down
from .record import BuildRecorder, BuildState
from .scheduling import CHUNK, block_size, fill_parallel

UNSEEN = 255
BLANK_RULES = tuple(registry.BLANK_RULES)
STOP_RECORD_BYTES = 256 << 20
"""A build stopped by a signal writes its record on the way out when the record is at most this large (or
an earlier record of it was written within a second): a larger one would keep the process past the
signal, and its last periodic record stands."""


class BuildStopped(PdbtoolError):
    """A build stopped by SIGINT or SIGTERM whose handler did not end it (the signal ignored)."""


@dataclass
class BuildResult:
    table: np.ndarray           # uint8 distance per rank (zero-aware: per entry of its layout; 255: unreachable)
    layers: list[int]           # states (placements or placement/region pairs) per depth
    seconds: float
    unreachable: int
    moves: int = 0              # moves generated (children looked up)


def bits_bytes(pattern: TilePattern) -> int:
    """Bytes of the two-bit state array of a blank-minimized or zero-aware build."""
    states = pattern.entries * pattern.free_cells
    return ((states + 31) // 32) * 8


EXACT_LAYOUT_BYTES = 1 << 28
"""The largest zero-aware layout a memory estimate makes to count the table's entries exactly."""


def estimate_peak_bytes(pattern: TilePattern, blank: str) -> int:
    """Peak memory of a build: the byte table, the two-bit states (minimized, zero-aware), the zero-aware
    layout and entries and a small margin.

    The zero-aware entries are counted exactly only when the layout that counts them is small (it is cached
    for the build); otherwise as the placements, a lower bound (every map has at least one region), so that
    a build far beyond memory is refused without making its layout first."""
    peak = pattern.entries
    if blank != "ignored":
        peak += bits_bytes(pattern)
    if blank == "zero-aware":
        arrays = layout_bytes(pattern.n, pattern.k)
        peak += arrays + (layout_of(pattern).entries if arrays <= EXACT_LAYOUT_BYTES else pattern.entries)
    return peak + (64 << 20)


def check_memory(pattern: TilePattern, blank: str) -> None:
    """Refuse a build whose estimated peak memory exceeds what this process may use."""
    require_memory(estimate_peak_bytes(pattern, blank), f"building pattern {pattern} on {pattern.board.dims} ({blank})")


def _count_unseen(values: np.ndarray) -> int:
    return sum(int(np.count_nonzero(values[i:i + (1 << 24)] == UNSEEN)) for i in range(0, values.shape[0], 1 << 24))


def record_shapes(pattern: TilePattern, blank: str, za_layout=None) -> dict[str, tuple[str, int]]:
    """The arrays of a build's state (:class:`.record.BuildState`): each one's dtype and length."""
    entries = pattern.entries
    chunks = (entries + CHUNK - 1) // CHUNK
    shapes = {"table": ("|u1", entries), "active": ("|u1", chunks), "active_next": ("|u1", chunks)}
    if blank != "ignored":
        shapes["bits"] = ("<u8", bits_bytes(pattern) // 8)
    if blank == "zero-aware":
        shapes["za"] = ("|u1", (za_layout or layout_of(pattern)).entries)
    return shapes


class _LayeredBfs:
    """The state of one build between kernel calls, and the loop that expands its layers a slice of rank
    blocks per call (:func:`pdbtool.processes.run_in_slices`)."""

    def __init__(self, pattern: TilePattern, blank: str, threads: int, recorder: BuildRecorder | None):
        self.pattern, self.blank, self.threads, self.recorder = pattern, blank, threads, recorder
        n, k = pattern.n, pattern.k
        self.weights, self.inverses = rank_weights(n, k), radix_inverses(n, k)
        nfc, nlc = column_masks(pattern.board)
        self.masks = (np.uint64(nfc), np.uint64(nlc), pattern.board.width)
        self.za_layout = layout_of(pattern) if blank == "zero-aware" else None
        self.slice = [0]
        state = recorder.load(self.shapes()) if recorder is not None else None
        if state is not None and not self._plausible(state):
            assert recorder is not None
            recorder.notify(f"{recorder.path}: a build record with counters no build writes: not resumed, "
                            "the build starts anew")
            state = None
        self.state = state if state is not None else self._fresh()
        self.seconds_before = self.state.seconds
        self.started = time.perf_counter()
        self.slice[0] = self.nblocks

    def _plausible(self, state: BuildState) -> bool:
        nblocks = (self.pattern.entries + state.block - 1) // state.block
        sizes = (3, 1) if self.blank == "ignored" else (4, 3)
        return (state.next_block <= nblocks and (len(state.partial), len(state.counters)) == sizes
                and len(state.layers) <= state.depth + 1)

    @property
    def nblocks(self) -> int:
        return (self.pattern.entries + self.state.block - 1) // self.state.block

    def shapes(self) -> dict[str, tuple[str, int]]:
        return record_shapes(self.pattern, self.blank, self.za_layout)

    def _fresh(self) -> BuildState:
        pattern, board = self.pattern, self.pattern.board
        entries = pattern.entries
        goal_rank = pattern.goal_rank()
        table = np.empty(entries, dtype=np.uint8)
        fill_parallel(table, UNSEEN)
        # the chunks of ranks that hold the layer to expand, and those that receive the next: a step scans
        # only the former, so that the small first and last layers cost no pass over the table
        active = np.zeros((entries + CHUNK - 1) // CHUNK, dtype=np.uint8)
        active[goal_rank // CHUNK] = 1
        arrays: dict[str, np.ndarray] = {"table": table, "active": active, "active_next": np.zeros_like(active)}
        state = BuildState(0, 0, block_size(entries, self.threads), [], 0, [0, 0, 0, 0], [], 0.0, arrays)
        if self.blank == "ignored":
            table[goal_rank] = 0
            state.partial = [0, 0, 0]
            state.counters = [1]  # seen
            return state
        if self.za_layout is not None:
            za = np.empty(self.za_layout.entries, dtype=np.uint8)
            fill_parallel(za, UNSEEN)
            arrays["za"] = za
        nfree = pattern.free_cells
        bits = np.zeros(bits_bytes(pattern) // 8, dtype=np.uint64)
        goal_cells = pattern.goal_cells()
        occupied = 0
        for c in goal_cells:
            occupied |= 1 << int(c)
        # depth 0 (value 01) in every cell of the goal's blank region
        goal_region = pattern.blank_region(goal_cells, board.goal[0])
        for cell in goal_region:
            s = goal_rank * nfree + cell - bin(occupied & ((1 << cell) - 1)).count("1")
            bits[s >> 5] |= np.uint64(1) << np.uint64(2 * (s & 31))
        arrays["bits"] = bits
        state.counters = [1, len(goal_region), len(goal_region)]  # frontier, its cells, cells seen
        return state

    def _za_args(self) -> tuple:
        if self.za_layout is not None:
            lay = self.za_layout
            return (self.state.arrays["za"], lay.base, lay.region, lay.binom, lay.kfact)
        # read-only like a zero-aware layout's arrays: both builds share one compiled builder
        return (np.empty(0, np.uint8), read_only(np.empty(1, np.int64)), read_only(np.empty(0, np.uint8)),
                read_only(np.empty((1, 1), np.int64)), 1)

    def _expand(self, a: int, b: int) -> None:
        """Expand blocks ``a..b-1`` of the current layer and add their counts to the layer's."""
        st, p = self.state, self.pattern
        arr = st.arrays
        common = (st.depth, p.n, p.k, st.block, *self.masks, self.weights, self.inverses, arr["active"],
                  arr["active_next"], self.threads)
        if self.blank == "ignored":
            counts = ignored_top_down(arr["table"], *common, a, b)
        else:
            counts = minimized_top_down(arr["bits"], arr["table"], *common, *self._za_args(), a, b)
        st.partial = [x + int(c) for x, c in zip(st.partial, counts)]
        if a == b:
            return
        st.next_block = b
        if self.recorder is not None and self.recorder.due():
            self.record()

    def seconds(self) -> float:
        """The build's seconds, those of the runs before a resume included."""
        return self.seconds_before + time.perf_counter() - self.started

    def record(self) -> None:
        assert self.recorder is not None
        self.state.seconds = self.seconds_before + time.perf_counter() - self.started
        self.recorder.save(self.state)

    def _done(self) -> float:
        """The fraction of the state space reached so far."""
        if self.blank == "ignored":
            return min(1.0, self.state.counters[0] / self.pattern.entries)
        return self.state.counters[2] / (self.pattern.entries * self.pattern.free_cells)

    def _layer_start(self, progress) -> None:
        st = self.state
        if self.blank != "ignored":
            frontier = st.counters[0]
            st.layers.append(frontier)
            if progress:
                progress(st.depth, frontier, self._done())

    def _layer_end(self, progress) -> bool:
        """The bookkeeping of a finished layer; False when it was the last."""
        st = self.state
        arr = st.arrays
        arr["active"], arr["active_next"] = arr["active_next"], arr["active"]
        arr["active_next"][:] = 0
        if self.blank == "ignored":
            expanded, discovered, looked_up = st.partial
            st.layers.append(expanded)
            if progress:
                progress(st.depth, expanded, min(1.0, (st.counters[0] + discovered) / self.pattern.entries))
            st.counters[0] += discovered  # may count a child twice when two threads reach it: progress only
        else:
            expanded, discovered, new_cells, looked_up = st.partial
            frontier_cells = st.counters[1]
            if expanded != frontier_cells:
                raise AssertionError(f"depth {st.depth}: {expanded} cells expanded, {frontier_cells} "
                                     "marked: a builder bug")
            if discovered:
                st.counters = [discovered, new_cells, st.counters[2] + new_cells]
        st.moves += looked_up
        st.partial = [0] * len(st.partial)
        st.next_block = 0
        if discovered == 0:
            return False
        st.depth += 1
        if st.depth >= UNSEEN - 1:
            raise OverflowError("distances exceed 253: the table would not fit a byte")
        return True

    def run(self, stop: StopSignals, progress) -> bool:
        """Expand the layers until none is left (True) or ``stop`` is requested (False)."""
        if progress and self.seconds_before > 0:  # resumed: the progress bar's estimate starts from here
            progress(self.state.depth, 0, self._done())
        while True:
            if self.state.next_block == 0:
                self._layer_start(progress)
            run_in_slices(self.nblocks, self._expand, self.state.next_block, stop, self.slice)
            if stop.requested:
                return False
            if not self._layer_end(progress):
                return True

    def record_on_stop(self) -> None:
        """The record of a build stopped by a signal, when it can be written quickly."""
        rec = self.recorder
        if rec is None or not rec.enabled:
            return
        size = sum(a.nbytes for a in self.state.arrays.values())
        if size <= STOP_RECORD_BYTES or (rec.written and rec.write_seconds < 1.0):
            self.record()
        if rec.written:
            rec.notify(f"{rec.path}: the build's progress is recorded (depth {self.state.depth}): "
                       "the same command resumes it")


def build_table(pattern: TilePattern, blank: str = "minimized", threads: int | None = None,
                progress: Callable[[int, int, float], None] | None = None,
                recorder: BuildRecorder | None = None) -> BuildResult:
    """Build the distance table of ``pattern`` under a blank rule.

    ``progress(depth, states, done)`` is called once per layer with the layer's size and the fraction of
    the state space reached so far (placements, or (placement, blank cell) pairs for the blank minimized).

    ``zero-aware`` runs the blank-minimized search and also records the depth of every (placement, blank
    region) state: its ``table`` is indexed as :mod:`pdbtool.tables.zero_aware` says, not by rank.

    Each layer is expanded a slice of rank blocks per kernel call, so that SIGINT and SIGTERM stop the build
    within a fraction of a second.  With a ``recorder`` (:mod:`.record`), the build resumes from its record
    if it has one, records its state every so often and when stopped, and the record is left for the
    caller to remove once the table is stored.
    """
    if blank not in BLANK_RULES:
        raise ValueError(f"blank rule {blank!r}: choose one of {', '.join(BLANK_RULES)}")
    threads = threads or os.cpu_count() or 1
    threads = max(1, min(threads, numba.config.NUMBA_NUM_THREADS))
    n, k = pattern.n, pattern.k
    previous_threads = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        bfs = _LayeredBfs(pattern, blank, threads, recorder)
        # compile or load the step's kernel with no block to expand, before signals are only recorded: the
        # minutes of a first compilation stay interruptible
        bfs._expand(0, 0)
        with StopSignals() as stop:
            finished = bfs.run(stop, progress)
            if not finished:
                bfs.record_on_stop()
        if not finished:  # the signal's handler returned: ignored, and so is the rest of the build
            raise BuildStopped(f"the build of {{{pattern}}} on {pattern.board.dims} was stopped by a signal")
        st = bfs.state
        table = st.arrays.pop("table")
        st.arrays.pop("bits", None)
        block = st.block
        md_rows = pattern.md_rows()
        totals = [0, 0]  # violations, unreachable entries

        def check(a: int, b: int) -> None:
            bad, unreached = excess_violations(table, n, k, md_rows, block, bfs.inverses, a, b)
            totals[0] += int(bad)
            totals[1] += int(unreached)

        # the checks too run a slice per call, so that a signal stops them within a fraction of a second
        run_in_slices(excess_blocks(pattern.entries, n, k, block), check, 0, None, [1])
        unreachable = totals[1]
        if bfs.za_layout is not None:
            lay, za = bfs.za_layout, st.arrays["za"]

            def check_za(a: int, b: int) -> None:
                totals[0] += int(zero_aware_violations(za, table, n, k, md_rows, block, lay.base, lay.region,
                                                       lay.binom, lay.kfact, a, b))

            run_in_slices((pattern.entries + block - 1) // block, check_za, 0, None, [1])
            unreachable = _count_unseen(za)
            table = za
        bad = totals[0]
    finally:
        numba.set_num_threads(previous_threads)
    if bad:
        raise AssertionError(f"{bad} entries violate h >= Manhattan with an even excess: a builder bug")
    return BuildResult(table, st.layers, bfs.seconds(), int(unreachable), st.moves)
