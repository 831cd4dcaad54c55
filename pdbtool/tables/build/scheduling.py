"""How the workers of a parallel BFS step share the table: blocks of ranks handed out by an atomic counter,
chunk flags that say which ranks hold the layer to expand, a worker's scratch arrays, and the parallel fill.

A step is a ``prange`` over one worker per thread; each worker takes the next block of ranks from a shared
counter (an atomic fetch-and-add, :func:`next_block`) until none is left, so that a thread never waits
while blocks remain: neighbouring blocks have very different amounts of work, and Numba's own ``prange``
schedule is static under its omp and workqueue threading layers.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from ..._native.intrinsics import atomic_add_u64

BATCH = 256  # children computed and prefetched before they are looked up
# ranks per chunk of the "holds the layer to expand" flags: a step scans only flagged chunks
CHUNK_SHIFT = 8
CHUNK = 1 << CHUNK_SHIFT


@njit(cache=True, inline="always")
def block_dispenser(first_block):
    """The counter from which the workers of a parallel step (a ``prange`` over one per thread, their
    number passed in: ``numba.get_num_threads()`` in a kernel stops Numba from caching it) take the
    indices of the blocks of ranks to scan (``next_block``), from ``first_block`` on: a step may scan a
    slice of a layer's blocks per call, so that the driver sees a signal between two slices."""
    dispenser = np.zeros(1, dtype=np.uint64)
    dispenser[0] = numba.uint64(first_block)
    return dispenser


@njit(cache=True, inline="always")
def next_block(dispenser):
    """The next block to scan, by an atomic fetch-and-add on the dispenser's counter: a worker done with
    its block takes the next one, so the schedule is dynamic under every threading layer (Numba's
    ``prange`` splits its iterations statically under the omp and workqueue layers)."""
    return np.int64(atomic_add_u64(dispenser, 0, numba.uint64(1)))


@njit(cache=True, inline="always")
def block_scratch(n, k, size):
    """A worker's arrays, kept from block to block: the cells, digits and prefix masks of the placement in
    hand (cells and digits start valid for ``unrank_next``), three move buffers of ``size`` entries, and
    the cell weights."""
    return (np.zeros(k, dtype=np.int64), np.zeros(k, dtype=np.int64), np.empty(k, dtype=np.uint64),
            np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64),
            np.zeros(n, dtype=np.int64))


@njit(cache=True, inline="always")
def _any_active(active, r0, r1):
    """Whether a chunk of ranks ``r0..r1-1`` is flagged in ``active``."""
    for chunk in range(r0 >> CHUNK_SHIFT, ((r1 - 1) >> CHUNK_SHIFT) + 1):
        if active[chunk]:
            return True
    return False


@njit(cache=True, inline="always")
def next_active_block(dispenser, end_block, block, entries, active):
    """The next block (``next_block``) before ``end_block`` with a chunk flagged in ``active``, as (block,
    first rank, end rank), or block -1 when none is left."""
    while True:
        b = next_block(dispenser)
        if b >= end_block:
            return -1, 0, 0
        r0 = b * block
        r1 = min(entries, r0 + block)
        if _any_active(active, r0, r1):
            return b, r0, r1


@njit(parallel=True, cache=True)
def fill_parallel(array, value):
    """``array[:] = value`` by all threads, 2 MiB a task: the first touch of a large fresh array (its page
    faults) is a serial phase otherwise."""
    step = 1 << 21
    for b in prange((array.shape[0] + step - 1) // step):
        array[b * step: min(array.shape[0], (b + 1) * step)] = value


def block_size(entries: int, threads: int) -> int:
    # many more blocks than threads: neighbouring rank blocks have very different work, and a thread
    # done with its block takes the next (next_block); a multiple of 32 keeps blocks on whole two-bit
    # words often
    return max(256, min(1 << 16, (entries // (threads * 256)) // 32 * 32 or 256))
