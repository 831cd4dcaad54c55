"""The two-bit state array of the blank-minimized and zero-aware builders: one state per (rank, index of the
blank among the n - k free cells), 00 unseen, 11 old, 01 / 10 "current" and "next" (their roles swap at
every layer, as in Korf's two-bit BFS), 32 states a 64-bit word.  Helpers to read a rank's states as one
word, to find slots of a value, and to OR new states in atomically.

A rank's states fit one word when it has at most 32 free cells (every board of up to 32 cells, and large
patterns on larger boards); with more (small patterns on boards of up to 64 cells) they are read and
written as two words, the first 32 states and the rest: :func:`rank_free_equal` and
:func:`or_region_states` take either path by ``nf``.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit

from ..._native.intrinsics import atomic_or_u64, deposit_bits, extract_bits, trailing_zeros

LOW_BITS = np.uint64(0x5555555555555555)


@njit(cache=True, inline="always")
def slots_equal(word, value):
    """The low bit of every two-bit slot of ``word`` that holds ``value`` (0..3)."""
    y = word ^ (numba.uint64(value) * LOW_BITS)
    return ~(y | (y >> numba.uint64(1))) & LOW_BITS


@njit(cache=True, inline="always")
def in_window(match, w, s, s1):
    """``match`` (the low bits of some two-bit slots of word ``w``) less the slots of states before ``s``
    or from ``s1`` on."""
    match &= ~numba.uint64(0) << numba.uint64(2 * (s & 31))
    if s1 < (w + 1) * 32:
        match &= (numba.uint64(1) << numba.uint64(2 * (s1 - w * 32))) - numba.uint64(1)
    return match


@njit(cache=True, inline="always")
def window_from(match, w, s0, s1):
    """``in_window`` for a window that may start before word ``w``."""
    return in_window(match, w, max(s0, w * 32), s1)


@njit(cache=True, inline="always")
def rank_states(bits, first, nf):
    """The two-bit states of one rank (``nf`` of them from state index ``first``) as one word."""
    pos = first * 2
    w = pos >> 6
    sh = numba.uint64(pos & 63)
    x = bits[w] >> sh
    if sh and (pos & 63) + 2 * nf > 64:
        x |= bits[w + 1] << (numba.uint64(64) - sh)
    return x & (~numba.uint64(0) >> numba.uint64(64 - 2 * nf))  # nf <= 32 (a shift by 64 is undefined)


@njit(cache=True, inline="always")
def or_rank_states(bits, first, nf, value, probe):
    """Atomically OR a word of two-bit states into the ``nf`` states of one rank (only the words that
    receive bits); return the old two bits of state index ``probe`` (the lowest state set in ``value``),
    so that exactly one of several racing writers sees 0."""
    pos = first * 2
    w = pos >> 6
    sh = pos & 63
    probe_shift = numba.uint64(2 * (probe & 31))
    seen = numba.uint64(0)
    low = value << numba.uint64(sh)
    if low:
        old = atomic_or_u64(bits, w, low)
        seen = (old >> probe_shift) & numba.uint64(3)
    if sh and sh + 2 * nf > 64:
        high = value >> numba.uint64(64 - sh)
        if high:
            old = atomic_or_u64(bits, w + 1, high)
            if low == 0:  # the probe is in the second word
                seen = (old >> probe_shift) & numba.uint64(3)
    return seen


@njit(cache=True, inline="always")
def state_of(bits, s):
    return (bits[s >> 5] >> numba.uint64(2 * (s & 31))) & numba.uint64(3)


@njit(cache=True, inline="always")
def rank_free_equal(bits, first, nf, value):
    """The mask (bit i: the i-th free cell) of the states of one rank (``nf`` of them from state index
    ``first``; value 1 or 2) that hold ``value``."""
    if nf <= 32:
        return extract_bits(slots_equal(rank_states(bits, first, nf), value), LOW_BITS)
    low = extract_bits(slots_equal(rank_states(bits, first, 32), value), LOW_BITS)
    high = extract_bits(slots_equal(rank_states(bits, first + 32, nf - 32), value), LOW_BITS)
    return low | (high << numba.uint64(32))


@njit(cache=True, inline="always")
def or_region_states(bits, first, nf, free_mask, value):
    """Atomically OR ``value`` into the states of one rank (``nf`` of them from state index ``first``) whose
    free cells are in ``free_mask`` (bit i: the i-th free cell; not empty); return the old two bits of the
    lowest of them, so that exactly one of several racing writers sees 0."""
    probe = first + trailing_zeros(free_mask)
    if nf <= 32:
        return or_rank_states(bits, first, nf, deposit_bits(free_mask, LOW_BITS) * value, probe)
    low = deposit_bits(free_mask, LOW_BITS) * value
    high = deposit_bits(free_mask >> numba.uint64(32), LOW_BITS) * value
    seen = numba.uint64(0)
    if low:
        seen = or_rank_states(bits, first, 32, low, probe)
    if high:
        old = or_rank_states(bits, first + 32, nf - 32, high, probe)
        if low == 0:
            seen = old
    return seen
