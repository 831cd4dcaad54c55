"""Compact encodings of the hanoi4 disk tables, and which heuristics can read them.

=========  =====================================================  ==========================================
encoding   payload                                                read by
=========  =====================================================  ==========================================
byte       the value of each entry, a byte                        every heuristic (one load)
nibble     per group of the four placements that differ only      every heuristic (one load of two adjacent
           in the smallest disk's peg: their least value (a       bytes): 4 bits a placement, lossless
           byte) and one flag a placement (bits 0-3 of a second
           byte); value = least + flag
mod3       ``h mod 3``, five entries a byte (the tile tables'     static splits (and their max with the
           packing, :func:`pdbtool.tables.encodings.encode_mod3`)  infinite-peg bound): 1.6 bits an entry
=========  =====================================================  ==========================================

*nibble*: the smallest disk is always on top of its peg and may move to any other peg, so the four
placements of a group are pairwise one move apart and their values differ by at most one: the least value
and a bit a placement hold them exactly.  Groups are indexed as a table of the k - 1 larger disks is (in a
HALF table one group per mirror pair of those disks, the smallest disk's peg mirrored with them), so a
look-up stays one cache line and the payload is 2 (4**(k-1) + 2**(k-1)) / 2 bytes: half the byte table.

*mod3*: a move changes a table's value by -1, 0 or +1 (the value is a breadth-first distance and the move,
restricted to the table's disks, is a move of the table's puzzle or none), three different residues, so a
child's value follows from its parent's and its own residue (CHILD-H, the tile tables' rule).  The search
carries each group's exact value from parent to child; h of the start is found by EXACT (a walk to the
goal through neighbours whose residue is one less).  A dynamic split reads C(n, A) groups a node, each
a set of disks of its own: carrying them all is not worth it, so dynamic heuristics refuse mod3.

Not offered: *parity* (bit 1 of h) needs every move to change the value by exactly one, a bipartite
graph; here the smallest disk's moves form triangles and a move can keep the value.  *min-nibble* and
*sparse* store the excess of a tile value over the tiles' Manhattan distance, which has no counterpart
here; the nearest cheap bound, the table of the k - 1 largest disks, falls short of a 14-disk table's
value by up to 23 (more than a nibble holds), and a lossy table would change the search's node counts.
"""

from __future__ import annotations

from contextlib import contextmanager

import numba
import numpy as np
from numba import njit, prange

from ..tables.encodings import EncodingError, encode_mod3
from ..tables.encodings import payload_bytes as packed_bytes
from . import kernels as K

HANOI_ENCODINGS = ("byte", "nibble", "mod3")
CODES = {"byte": K.BYTE, "nibble": K.NIBBLE, "mod3": K.MOD3}
_BLOCK = 1 << 14  # entries (or groups) a parallel worker takes at a time
_WHY_NOT = {
    "parity": "parity needs every move to change a value by exactly one, and the smallest disk's moves form "
              "triangles (a move can keep the value)",
    "min-nibble": "min-nibble stores an excess over the tiles' Manhattan distance, which has no counterpart here",
    "sparse": "sparse stores an excess over the tiles' Manhattan distance, which has no counterpart here",
}


def check_encoding(encoding: str) -> None:
    """Refuse, in one line, an encoding that hanoi4 tables do not offer."""
    if encoding in HANOI_ENCODINGS:
        return
    why = _WHY_NOT.get(encoding, f"unknown encoding {encoding!r}")
    raise EncodingError(f"hanoi4 tables are stored as {', '.join(HANOI_ENCODINGS)}: {why}")


def groups_of(k: int, layout: int) -> int:
    """Groups of a nibble payload: entries of a table of the k - 1 larger disks."""
    return (4 ** (k - 1) + 2 ** (k - 1)) // 2 if layout == K.HALF else 4 ** (k - 1)


def payload_size(encoding: str, k: int, layout: int) -> int:
    entries = (4 ** k + 2 ** k) // 2 if layout == K.HALF else 4 ** k
    if encoding == "nibble":
        return 2 * groups_of(k, layout)
    return packed_bytes(encoding, entries)


@contextmanager
def numba_threads(threads: int | None):
    """Run Numba's parallel loops on ``threads`` threads (default: as set), restoring the count after."""
    previous = numba.get_num_threads()
    numba.set_num_threads(max(1, min(threads or previous, numba.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        numba.set_num_threads(previous)


# --- kernels -------------------------------------------------------------------------------------------

@njit(parallel=True, cache=True)
def _encode_nibble(table, k, layout, out):
    """Each group's least value and flags into ``out``; returns the groups whose values are more than one
    apart or unreached (none in a breadth-first table)."""
    groups = out.shape[0] // 2
    nblocks = (groups + _BLOCK - 1) // _BLOCK
    bad = np.zeros(nblocks, dtype=np.int64)
    for b in prange(nblocks):
        vals = np.empty(4, dtype=np.int64)
        for g in range(b * _BLOCK, min(groups, (b + 1) * _BLOCK)):
            r = K.half_state(g, k - 1) if layout == K.HALF else numba.uint64(g)
            low = 255
            for p in range(4):
                vals[p] = np.int64(table[K.table_index((r << numba.uint64(2)) | numba.uint64(p), k, layout)])
                low = min(low, vals[p])
            flags = 0
            for p in range(4):
                d = vals[p] - low
                if d > 1 or low == K.UNSEEN:
                    bad[b] += 1
                flags |= (d & 1) << p
            out[2 * g] = low
            out[2 * g + 1] = flags
    return bad.sum()


@njit(parallel=True, cache=True)
def _decode_nibble(payload, k, layout, out):
    addr = payload.ctypes.data
    entries = out.shape[0]
    for b in prange((entries + _BLOCK - 1) // _BLOCK):
        _decode_nibble_block(addr, k, layout, out, b * _BLOCK, min(entries, (b + 1) * _BLOCK))


# the prange bodies below are kernels of their own (a large body slows Numba's parallel passes), with the
# error model a prange body has; they take the payload's address, so one compile serves every payload
@njit(cache=True, error_model="numpy")
def _decode_nibble_block(addr, k, layout, out, i0, i1):
    for i in range(i0, i1):
        s = K.half_state(i, k) if layout == K.HALF else numba.uint64(i)
        out[i] = K.nibble_value_at(addr, s, k, layout)


@njit(parallel=True, cache=True)
def _mod3_decode_layer(payload, out, frontier, depth, k, layout):
    """Give depth + 1 to every undecoded neighbour of the entries of ``frontier`` (those at ``depth``: a
    breadth-first search over the table's puzzle), checking that its residue is that of depth + 1.
    Returns the number of residues that disagree."""
    addr = payload.ctypes.data
    n = frontier.shape[0]
    nblocks = (n + _BLOCK - 1) // _BLOCK
    bad = np.zeros(nblocks, dtype=np.int64)
    for b in prange(nblocks):
        bad[b] = _mod3_decode_block(addr, out, frontier, depth, k, layout, b * _BLOCK, min(n, (b + 1) * _BLOCK))
    return bad.sum()


@njit(cache=True, error_model="numpy")
def _mod3_decode_block(addr, out, frontier, depth, k, layout, i0, i1):
    """:func:`_mod3_decode_layer` over ``frontier[i0:i1]``; the residues that disagree."""
    want = (depth + 1) % 3
    bad = 0
    kids = np.empty(K.MAX_MOVES, dtype=np.uint64)
    for i in range(i0, i1):
        s = K.half_state(frontier[i], k) if layout == K.HALF else numba.uint64(frontier[i])
        for t in range(K.children_into(s, k, kids)):
            j = K.table_index(kids[t], k, layout)
            if out[j] != K.UNSEEN:
                continue
            if K.mod3_residue_at(addr, j) == want:
                out[j] = depth + 1  # benign race: every writer writes depth + 1
            else:
                bad += 1
    return bad


@njit(cache=True)
def _seed_layer(payload, out, seeds, k, layout):
    """The goal entries at 0; returns how many of them have a residue other than 0's."""
    bad = 0
    for s in seeds:
        j = K.table_index(s, k, layout)
        if K.mod3_residue_at(payload.ctypes.data, j) != 0:
            bad += 1
        out[j] = 0
    return bad


# --- the Python API ------------------------------------------------------------------------------------

def encode(values: np.ndarray, k: int, layout: int, encoding: str, threads: int | None = None) -> np.ndarray:
    """The payload of a byte table (``values``) in ``encoding``."""
    check_encoding(encoding)
    values = np.ascontiguousarray(values, dtype=np.uint8)
    if encoding == "byte":
        return values
    out = np.empty(payload_size(encoding, k, layout), dtype=np.uint8)
    with numba_threads(threads):
        bad = _encode_nibble(values, k, layout, out) if encoding == "nibble" else encode_mod3(values, out)
    if bad:
        raise EncodingError(f"{encoding} cannot hold this table: {bad} entries are unreached or further than "
                            f"one move from their neighbours' values (not a breadth-first table)")
    return out


def check_payload(payload: np.ndarray, k: int, layout: int, encoding: str) -> str | None:
    """What is structurally wrong with a payload (its size; a nibble group's least value and flags), or
    None."""
    want = payload_size(encoding, k, layout)
    if payload.shape[0] != want:
        return f"a {encoding} payload of {k} disks has {want} bytes, not {payload.shape[0]}"
    if encoding == "nibble":
        low, flags = payload[0::2], payload[1::2]
        bad = int(np.count_nonzero((flags & 0xF0) | (flags == 0x0F) | (low == K.UNSEEN)))
        if bad:
            first = int(np.flatnonzero((flags & 0xF0) | (flags == 0x0F) | (low == K.UNSEEN))[0])
            return f"{bad} nibble groups are malformed (first: group {first}: least {low[first]}, " \
                   f"flags {flags[first]:#x})"
    return None


def decode(payload: np.ndarray, k: int, layout: int, encoding: str, seeds: np.ndarray,
           threads: int | None = None) -> np.ndarray:
    """The byte table of a payload.  mod3 is decoded by a breadth-first search from the goal entries
    (``seeds``, states) that checks every entry's residue on the way; an EncodingError says where a
    payload disagrees with itself."""
    check_encoding(encoding)
    problem = check_payload(payload, k, layout, encoding)
    if problem:
        raise EncodingError(problem)
    if encoding == "byte":
        return payload
    entries = (4 ** k + 2 ** k) // 2 if layout == K.HALF else 4 ** k
    out = np.empty(entries, dtype=np.uint8)
    with numba_threads(threads):
        if encoding == "nibble":
            _decode_nibble(payload, k, layout, out)
            return out
        K.fill_parallel(out, np.uint8(K.UNSEEN))
        if _seed_layer(payload, out, np.ascontiguousarray(seeds, dtype=np.uint64), k, layout):
            raise EncodingError("mod3 payload: a goal entry's residue is not 0")
        depth = 0
        frontier = np.flatnonzero(out == 0)
        while frontier.size:
            bad = _mod3_decode_layer(payload, out, frontier, depth, k, layout)
            if bad:
                raise EncodingError(f"mod3 payload: {bad} residues at depth {depth + 1} are not that depth's "
                                    f"(a damaged or misencoded table)")
            depth += 1
            if depth >= K.UNSEEN - 1:
                raise EncodingError("mod3 payload decodes to values beyond 253")
            frontier = np.flatnonzero(out == depth)
    left = int(np.count_nonzero(out == K.UNSEEN))
    if left:
        raise EncodingError(f"mod3 payload: {left} entries are never reached from the goal")
    return out


def exact_value(payload: np.ndarray, k: int, layout: int, goal_kind: int, goal: int, state: int) -> int:
    """EXACT for a mod3 payload: the value of one placement (-1 when the payload leads nowhere)."""
    return int(K.mod3_exact_at(np.int64(payload.ctypes.data), np.uint64(state), np.int64(k), np.int64(layout),
                               np.int64(goal_kind), np.int64(goal)))  # the signature table_value compiles
