"""Numba kernels of the four-peg Towers of Hanoi: moves, table indices, the table builder, heuristics and
the layer expansion of the search.

A state of n disks is a uint64 holding two bits per disk, disk 0 (the smallest) in the lowest two bits:
the peg (0 to 3) the disk is on.  The order of the disks on a peg is implied (larger below), so every
such word of 2n bits is a legal state and the state itself is its index in a full table.

Tables of a goal set that is symmetric under swapping pegs 1 and 2 (all disks on peg 3, or all on pegs 1
and 2) store one of each mirror pair only (``HALF`` layout): a state is canonical when the largest disk
on peg 1 or 2 is on peg 1 (or no disk is on either).  Their canonical index puts the 2**k states with
every disk on peg 0 or 3 first, then, for j = 0 .. k-1, the states whose largest disk on peg 1 or 2 is
disk j: the disks above j (one bit each: peg 0 or 3), then disks 0 .. j-1 (two bits each).  A table of
k disks then has (4**k + 2**k) / 2 entries.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from .._native.intrinsics import (atomic_add_u64, atomic_or_u64, atomic_xor_u64, extract_bits, load_u8, popcount,
                                  trailing_zeros)
from ..tables.encodings import mod3_child_at, mod3_residue_at

FULL = 0
HALF = 1
UNSEEN = 255
LOW = np.uint64(0x5555555555555555)
_BLOCK_WORDS = 1 << 12  # words of the two-bit array a builder's worker takes at a time
MAX_MOVES = 6  # four pegs: at most one move for each pair of pegs
GOAL_PEG3 = 0  # every disk on peg 3
GOAL_MIDDLE = 1  # every disk on peg 1 or 2
GOAL_STATE = 2  # one placement
# encodings of a table's payload (see :mod:`.encodings`)
BYTE = 0
NIBBLE = 1
MOD3 = 2
# the columns of a plan's table array: one row of int64 per table
T_ADDR, T_K, T_LAYOUT, T_CODE, T_GOAL_KIND, T_GOAL = range(6)


@njit(cache=True, inline="always")
def low_mask(n):
    """The low bit of each of the first n two-bit digits."""
    if n >= 32:
        return numba.uint64(0x5555555555555555)
    return numba.uint64(0x5555555555555555) & ((numba.uint64(1) << numba.uint64(2 * n)) - numba.uint64(1))


@njit(cache=True, inline="always")
def _highest_bit(x):
    """Index of the highest set bit of a nonzero word."""
    x |= x >> numba.uint64(1)
    x |= x >> numba.uint64(2)
    x |= x >> numba.uint64(4)
    x |= x >> numba.uint64(8)
    x |= x >> numba.uint64(16)
    x |= x >> numba.uint64(32)
    return popcount(x) - 1


@njit(cache=True, inline="always")
def on_peg_mask(s, n, peg):
    """The low bit of every digit of ``s`` (n disks) equal to ``peg``."""
    rep = numba.uint64(peg) * numba.uint64(0x5555555555555555)
    t = numba.uint64(s) ^ rep
    return ~(t | (t >> numba.uint64(1))) & low_mask(n)


@njit(cache=True, inline="always")
def children_into(s, n, out):
    """Every state one move from ``s`` (n disks) into ``out``; returns how many."""
    tops = np.empty(4, dtype=np.int64)
    for p in range(4):
        m = on_peg_mask(s, n, p)
        tops[p] = trailing_zeros(m) >> 1 if m else n
    count = 0
    for p in range(4):
        d = tops[p]
        if d >= n:
            continue
        for q in range(4):
            if q != p and tops[q] > d:
                out[count] = numba.uint64(s) ^ (numba.uint64(p ^ q) << numba.uint64(2 * d))
                count += 1
    return count


@njit(cache=True, inline="always")
def half_index(s, k):
    """Index of state ``s`` of k disks (or of its mirror under pegs 1 <-> 2) in a HALF table."""
    s = numba.uint64(s)
    m = (s ^ (s >> numba.uint64(1))) & low_mask(k)
    if m == 0:
        return np.int64(extract_bits(s, low_mask(k)))
    top = _highest_bit(m)  # bit 2j of the largest disk j on peg 1 or 2
    j = top >> 1
    if (s >> numba.uint64(top)) & numba.uint64(3) == numba.uint64(2):
        s ^= m | (m << numba.uint64(1))  # mirror: 1 <-> 2 in every digit
    low = s & ((numba.uint64(1) << numba.uint64(top)) - numba.uint64(1))
    above = extract_bits(s >> numba.uint64(top + 2), low_mask(k - 1 - j))
    return np.int64((((numba.uint64(1) << numba.uint64(j)) + numba.uint64(1)) << numba.uint64(k - 1))
                    + (above << numba.uint64(top)) + low)


@njit(cache=True)
def half_state(index, k):
    """The canonical state of a HALF table's index (the inverse of :func:`half_index`)."""
    index = numba.uint64(index)
    if index < (numba.uint64(1) << numba.uint64(k)):
        s = numba.uint64(0)
        for d in range(k):
            if (index >> numba.uint64(d)) & numba.uint64(1):
                s |= numba.uint64(3) << numba.uint64(2 * d)
        return s
    q = (index >> numba.uint64(k - 1)) - numba.uint64(1)
    j = _highest_bit(q)
    rest = index - (((numba.uint64(1) << numba.uint64(j)) + numba.uint64(1)) << numba.uint64(k - 1))
    low = rest & ((numba.uint64(1) << numba.uint64(2 * j)) - numba.uint64(1))
    above = rest >> numba.uint64(2 * j)
    s = low | (numba.uint64(1) << numba.uint64(2 * j))
    for i in range(k - 1 - j):
        if (above >> numba.uint64(i)) & numba.uint64(1):
            s |= numba.uint64(3) << numba.uint64(2 * (j + 1 + i))
    return s


@njit(cache=True, inline="always")
def table_index(s, k, layout):
    if layout == HALF:
        return half_index(s, k)
    return np.int64(s)


# --- the table builder: layered backward BFS, two bits per state ---------------------------------------
# Korf's two-bit breadth-first search over all 4**k states (the moves are reversible, so the backward
# search is the forward one): 00 unseen, 11 old, 01 and 10 "current" and "next", whose roles swap at every
# layer.  Children are marked "next" from 00 only, with an atomic OR on their 64-bit word (a word's 00
# entries only ever turn into "next" during a layer, so the test-then-OR loses nothing); the scanning
# worker turns its word's current entries to 11 with one atomic XOR once it has expanded them.  The
# worker that expands a state alone writes its byte (HALF: only canonical states are written).

@njit(cache=True)
def seed_bits(bits, seeds):
    for s in seeds:
        w = np.int64(s >> numba.uint64(5))
        bits[w] |= numba.uint64(1) << numba.uint64(2 * (s & numba.uint64(31)))


@njit(cache=True, inline="always")
def _next_block(dispenser):
    return np.int64(atomic_add_u64(dispenser, 0, numba.uint64(1)))


@njit(parallel=True, cache=True)
def bfs_layer(bits, table, depth, k, layout, workers, first_block, end_block):
    """Expand the states of the current layer (``depth``) in blocks ``first_block..end_block-1`` of
    ``BLOCK_WORDS`` words; returns how many were expanded.  A layer may be expanded a slice of blocks per
    call with the same result (children are marked from 00 only, and a word's current states turn to 11
    by its own scan), so that the driver sees a signal between two slices."""
    cur = numba.uint64(1 + (depth & 1))
    nxt = numba.uint64(3) - cur
    nwords = bits.shape[0]
    nblocks = min(end_block, (nwords + _BLOCK_WORDS - 1) // _BLOCK_WORDS)
    dispenser = np.zeros(1, dtype=np.uint64)
    dispenser[0] = numba.uint64(first_block)
    counts = np.zeros(workers, dtype=np.int64)
    full = low_mask(k)
    for wid in prange(workers):
        kids = np.empty(MAX_MOVES, dtype=np.uint64)
        expanded = 0
        b = _next_block(dispenser)
        while b < nblocks:
            w1 = min(nwords, (b + 1) * _BLOCK_WORDS)
            for w in range(b * _BLOCK_WORDS, w1):
                x = bits[w]
                if cur == numba.uint64(1):
                    m = x & ~(x >> numba.uint64(1)) & LOW
                else:
                    m = ~x & (x >> numba.uint64(1)) & LOW
                if m == 0:
                    continue
                todo = m
                while todo:
                    i = trailing_zeros(todo)
                    todo &= todo - numba.uint64(1)
                    s = (numba.uint64(w) << numba.uint64(5)) | numba.uint64(i >> 1)
                    expanded += 1
                    if layout == HALF:
                        mm = (s ^ (s >> numba.uint64(1))) & full
                        if mm == 0 or (s >> numba.uint64(_highest_bit(mm))) & numba.uint64(3) == numba.uint64(1):
                            table[half_index(s, k)] = depth
                    else:
                        table[np.int64(s)] = depth
                    c = children_into(s, k, kids)
                    for t in range(c):
                        child = kids[t]
                        cw = np.int64(child >> numba.uint64(5))
                        shift = numba.uint64(2 * (child & numba.uint64(31)))
                        if (bits[cw] >> shift) & numba.uint64(3) == numba.uint64(0):
                            atomic_or_u64(bits, cw, nxt << shift)
                # current (01 or 10) -> old (11): XOR with the other bit of each
                atomic_xor_u64(bits, w, m << numba.uint64(1) if cur == numba.uint64(1) else m)
            b = _next_block(dispenser)
        counts[wid] = expanded
    return counts.sum()


@njit(parallel=True, cache=True)
def fill_parallel(table, value):
    n = table.shape[0]
    step = 1 << 20
    for b in prange((n + step - 1) // step):
        table[b * step:min(n, (b + 1) * step)] = value


# --- checks of a built table ----------------------------------------------------------------------------

@njit(parallel=True, cache=True)
def check_consistency(tabs, layout, goal_kind, goal, samples):
    """For each index of ``samples`` in the table of ``tabs`` (one row, any encoding): 0 exactly at goal
    states; otherwise some neighbour is one less and none differs by more than one.  Returns the number
    of entries failing (and the first one, or -1)."""
    n = samples.shape[0]
    first = np.full(n, -1, dtype=np.int64)
    chunks = max(1, min(n, 256))
    per = (n + chunks - 1) // chunks
    for c in prange(chunks):
        _check_range(tabs, layout, goal_kind, goal, samples, c * per, min(n, (c + 1) * per), first)
    bad = 0
    for i in range(n):
        if first[i] >= 0:
            bad += 1
    return bad, first


@njit(cache=True, error_model="numpy")  # a prange body's error model (no division checks)
def _check_range(tabs, layout, goal_kind, goal, samples, i0, i1, first):
    """:func:`check_consistency` of ``samples[i0:i1]``: a failing one's index into ``first``.  A function
    of its own, not the ``prange`` body, so that Numba's parallel passes see a one-line loop."""
    k = tabs[0, T_K]
    kids = np.empty(MAX_MOVES, dtype=np.uint64)
    for i in range(i0, i1):
        idx = samples[i]
        s = half_state(idx, k) if layout == HALF else numba.uint64(idx)
        v = table_value(tabs, 0, s)
        ok = v != UNSEEN and v >= 0
        at_goal = s == goal if goal_kind == GOAL_STATE else is_goal_set(s, k, goal_kind)
        if at_goal != (v == 0):
            ok = False
        c = children_into(s, k, kids)
        below = False
        for t in range(c):
            u = table_value(tabs, 0, kids[t])
            if u == UNSEEN or u < 0 or u > v + 1 or u < v - 1:
                ok = False
            if u == v - 1:
                below = True
        if v > 0 and not below:
            ok = False
        if not ok:
            first[i] = idx


@njit(cache=True, inline="always")
def is_goal_set(s, n, goal_kind):
    """Whether ``s`` is in the goal set: every disk on peg 3, or every disk on peg 1 or 2."""
    if goal_kind == GOAL_PEG3:
        return on_peg_mask(s, n, 3) == low_mask(n)
    m = (numba.uint64(s) ^ (numba.uint64(s) >> numba.uint64(1))) & low_mask(n)
    return m == low_mask(n)


# --- heuristics -----------------------------------------------------------------------------------------
# A heuristic is a max over "splits", each split a sum over groups of disks (a disk mask of two bits per
# disk and a table); plus, optionally, the infinite-peg bound.  The tables are read through their
# addresses (``load_u8``), so that tables of several sizes serve one kernel without copies.

@njit(cache=True, inline="always")
def infinite_peg(s, goal, n):
    """The infinite-peg relaxation's bound towards the goal state ``goal`` (every disk's goal peg).

    From the largest disk down: a disk is settled when it and every larger disk that sits on or is headed
    for its peg are in place.  An unsettled disk moves at least once, and twice when it must leave its
    peg before it can be placed for good: it is on its goal peg, or above an unsettled disk bound for the
    same goal peg (that disk must move, and be placed, before it)."""
    ok = 15  # pegs whose stack is still sound from the bottom
    pending = np.zeros(4, dtype=np.int64)  # per peg: goal pegs of the unsettled disks on it (a 4-bit set)
    h = 0
    for d in range(n - 1, -1, -1):
        p = np.int64((numba.uint64(s) >> numba.uint64(2 * d)) & numba.uint64(3))
        q = np.int64((numba.uint64(goal) >> numba.uint64(2 * d)) & numba.uint64(3))
        if p == q and (ok >> p) & 1:
            continue
        h += 1
        if p == q or (pending[p] >> q) & 1:
            h += 1
        pending[p] |= 1 << q
        ok &= ~((1 << p) | (1 << q))
    return h


@njit(cache=True, inline="always")
def outside_middle(s, n):
    """Disks not on peg 1 or 2: each moves at least once to reach the middle goal set."""
    m = (numba.uint64(s) ^ (numba.uint64(s) >> numba.uint64(1))) & low_mask(n)
    return n - popcount(m)


@njit(cache=True, inline="always")
def nibble_group(s, k, layout):
    """The group of placement ``s`` in a nibble payload (the placement of disks 1 .. k-1, canonical in a
    HALF table) and the peg of disk 0 in that group (mirrored with the group)."""
    s = numba.uint64(s)
    p = np.int64(s & numba.uint64(3))
    r = s >> numba.uint64(2)
    if layout != HALF:
        return np.int64(r), p
    m = (r ^ (r >> numba.uint64(1))) & low_mask(k - 1)
    if m != 0 and (r >> numba.uint64(_highest_bit(m))) & numba.uint64(3) == numba.uint64(2) and (p == 1 or p == 2):
        p ^= 3
    return half_index(r, k - 1), p


@njit(cache=True, inline="always")
def nibble_value_at(addr, s, k, layout):
    """The value of placement ``s`` from a nibble payload: the least value of its group, plus its flag."""
    g, p = nibble_group(s, k, layout)
    return load_u8(addr + 2 * g) + ((load_u8(addr + 2 * g + 1) >> p) & 1)


@njit(cache=True, inline="always")
def at_goal(s, k, goal_kind, goal):
    if goal_kind == GOAL_STATE:
        return numba.uint64(s) == numba.uint64(goal)
    return is_goal_set(s, k, goal_kind)


@njit(cache=True)
def mod3_exact_at(addr, s, k, layout, goal_kind, goal):
    """EXACT for a mod3 payload: the value of placement ``s``, found by walking to the goal through
    neighbours whose residue is one less (a move changes a value by -1, 0 or +1, three residues apart, so
    that neighbour is one closer to the goal); -1 when the payload leads nowhere (a damaged table)."""
    kids = np.empty(MAX_MOVES, dtype=np.uint64)
    s = numba.uint64(s)
    steps = 0
    while not at_goal(s, k, goal_kind, goal):
        want = (mod3_residue_at(addr, table_index(s, k, layout)) + 2) % 3
        c = children_into(s, k, kids)
        moved = False
        for t in range(c):
            if mod3_residue_at(addr, table_index(kids[t], k, layout)) == want:
                s = kids[t]
                moved = True
                break
        if not moved or steps >= UNSEEN - 1:
            return -1
        steps += 1
    if mod3_residue_at(addr, table_index(s, k, layout)) != 0:
        return -1
    return steps


@njit(cache=True, inline="always")
def table_value(tabs, t, sub):
    """The value of the placement ``sub`` in table ``t`` (a row of ``tabs``), whatever its encoding; a
    mod3 table's by EXACT (searches carry mod3 values from parent to child instead)."""
    code = tabs[t, T_CODE]
    if code == BYTE:
        return load_u8(tabs[t, T_ADDR] + table_index(sub, tabs[t, T_K], tabs[t, T_LAYOUT]))
    if code == NIBBLE:
        return nibble_value_at(tabs[t, T_ADDR], sub, tabs[t, T_K], tabs[t, T_LAYOUT])
    # one signature of mod3_exact_at for every caller (each signature is a compile of its own)
    return mod3_exact_at(tabs[t, T_ADDR], numba.uint64(sub), tabs[t, T_K], tabs[t, T_LAYOUT], tabs[t, T_GOAL_KIND],
                         tabs[t, T_GOAL])


@njit(cache=True, inline="always")
def split_value(s, g0, g1, group_mask, group_table, tabs):
    total = 0
    for g in range(g0, g1):
        total += table_value(tabs, group_table[g], extract_bits(s, group_mask[g]))
    return total


@njit(cache=True, inline="always")
def bound_value(s, kind, goal, n):
    if kind == 1:
        return infinite_peg(s, goal, n)
    if kind == 2:
        return outside_middle(s, n)
    return 0


@njit(cache=True)
def heuristic(s, limit, plan_ints, goal, n, split_start, group_mask, group_table, tabs):
    """h(s), or a value above ``limit`` as soon as one is found (the caller prunes such a state)."""
    h = bound_value(s, plan_ints[0], goal, n)
    if h > limit:
        return h
    nsplits = split_start.shape[0] - 1
    for i in range(nsplits):
        v = split_value(s, split_start[i], split_start[i + 1], group_mask, group_table, tabs)
        if v > h:
            h = v
            if h > limit:
                return h
    return h


# --- the search's layer step ----------------------------------------------------------------------------

@njit(parallel=True, cache=True)
def expand_layer(layer, n, out):
    """The children of every state of ``layer`` into ``out`` (MAX_MOVES slots per state, unused ones set
    to all ones); returns the number of children."""
    m = layer.shape[0]
    chunks = max(1, min(m, 256))
    counts = np.zeros(chunks, dtype=np.int64)
    per = (m + chunks - 1) // chunks
    for c in prange(chunks):
        kids = np.empty(MAX_MOVES, dtype=np.uint64)
        total = 0
        for i in range(c * per, min(m, (c + 1) * per)):
            k = children_into(layer[i], n, kids)
            for t in range(MAX_MOVES):
                out[i * MAX_MOVES + t] = kids[t] if t < k else ~numba.uint64(0)
            total += k
        counts[c] = total
    return counts.sum()


@njit(cache=True)
def unique_subtract(a, b, c):
    """The distinct elements of sorted ``a`` (all-ones entries excluded) that are in neither sorted ``b``
    nor sorted ``c``, in order."""
    out = np.empty(a.shape[0], dtype=np.uint64)
    none = ~numba.uint64(0)
    i = j = n = 0
    for t in range(a.shape[0]):
        x = a[t]
        if x == none or (t > 0 and a[t - 1] == x):
            continue
        while i < b.shape[0] and b[i] < x:
            i += 1
        while j < c.shape[0] and c[j] < x:
            j += 1
        if (i < b.shape[0] and b[i] == x) or (j < c.shape[0] and c[j] == x):
            continue
        out[n] = x
        n += 1
    return out[:n].copy()


@njit(parallel=True, cache=True)
def evaluate(states, limit, plan_ints, goal, n, split_start, group_mask, group_table, tabs, hs):
    """h of every state into ``hs`` (a value above ``limit`` where the state is pruned)."""
    for i in prange(states.shape[0]):
        hs[i] = heuristic(states[i], limit, plan_ints, goal, n, split_start, group_mask, group_table, tabs)


@njit(cache=True, inline="always")
def _find_sorted(a, x):
    """Index of ``x`` in sorted ``a``, or -1."""
    lo, hi = 0, a.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < a.shape[0] and a[lo] == x else -1


@njit(parallel=True, cache=True)
def evaluate_carried(states, layer, layer_vals, plan_ints, goal, n, split_start, group_mask, group_table, tabs,
                     hs, vals):
    """h of every state of ``states`` (children of the sorted ``layer``) from the exact table values its
    parent in ``layer`` carries (``layer_vals[i, g]``: group g's value): each group's value is the
    parent's, moved by the residue of the child's entry (CHILD-H; a mod3 table; other tables are read), and is stored in
    ``vals`` for the state's own children.  Returns the number of states with no parent in ``layer``
    (0 unless the caller broke the contract)."""
    orphans = np.zeros(states.shape[0], dtype=np.int64)
    ngroups = group_mask.shape[0]
    for i in prange(states.shape[0]):
        kids = np.empty(MAX_MOVES, dtype=np.uint64)
        s = states[i]
        c = children_into(s, n, kids)
        parent = -1
        for t in range(c):
            parent = _find_sorted(layer, kids[t])
            if parent >= 0:
                break
        if parent < 0:
            orphans[i] = 1
            hs[i] = 1 << 30
            continue
        for g in range(ngroups):
            t = group_table[g]
            sub = extract_bits(s, group_mask[g])
            if tabs[t, T_CODE] == MOD3:
                idx = table_index(sub, tabs[t, T_K], tabs[t, T_LAYOUT])
                vals[i, g] = mod3_child_at(tabs[t, T_ADDR], idx, np.int64(layer_vals[parent, g]))
            else:
                vals[i, g] = table_value(tabs, t, sub)
        h = bound_value(s, plan_ints[0], goal, n)
        for j in range(split_start.shape[0] - 1):
            v = 0
            for g in range(split_start[j], split_start[j + 1]):
                v += np.int64(vals[i, g])
            if v > h:
                h = v
        hs[i] = h
    return orphans.sum()


@njit(cache=True)
def find_goal(states, n, goal_kind, goal):
    """Index of the first goal state of ``states`` (-1 if none); goal_kind 2 means the state ``goal``."""
    for i in range(states.shape[0]):
        s = states[i]
        if goal_kind == GOAL_STATE:
            if s == goal:
                return i
        elif is_goal_set(s, n, goal_kind):
            return i
    return -1
