"""The packed look-ups of the dynamic tables, a state's and a move's.

A key is (t, c, u, cu): tile t in cell c and tile u in cell cu.  ConflictGraph packs the look-ups of
:class:`pdbtool.tables.pairs_triples.DynamicTables` so that a key costs one or two cache lines:
* ``near[(t*n + c)*n + u]``: bit cu (low 32 bits) is set when the key has a pair value or rows; the high
  32 bits are the index in ``records`` of the word's first such key (keys in increasing order);
* ``records``: first the distinct blank masks of the rows (cells of the blank where a row holds), then for
  the i-th key with something (at ``records[masks + i]``): its first row (bits 0-31), its number of rows
  (32-47), its pair units (48-55; PAIR_BY_REGION: in its rows);
* ``rows[j]`` (int32, so that the rows take half the cache): v (bits 0-4; 0 for a pair's value by
  region), cell of v (5-9), units (10-15), the index of its blank mask in ``records`` (16-30).  The sets
  have few distinct masks (one without regions, 145 with them on the 24-puzzle), so the masks stay in the
  L1 cache and are read only for a row whose v stands in its cell.
A state is set up from scratch with these.  A move has look-ups of its own (:func:`pack_move_lookups`), keyed
by (t, c, m, u, cu): t moves into c from c's neighbour m, where the blank will then be, so each key keeps
only what holds with the blank there: its pair units are final (no rows for a pair's value by region),
and its triples need no blank test.  Triples a blank in m's cell cannot reach, and keys left with
nothing, are gone.  A key's triples are grouped into entries, one per (v, units) with the cells of v
where they hold as a mask, so that one test per entry finds whether v stands in one of them.  A triple
placement needs to be under one key only, that of u or that of v, and each is put where it shares its
entry with more placements (:func:`_orient_triples`): on the 24-puzzle with -region, 0.31 M entries and
88 k keys for 0.72 M placements (0.38 M and 114 k under the smaller tile, as the tables keep them), and
on the first 10 M nodes of #1 a move finds 2.6 keys and 10.3 entries instead of 3.5 and 14.2.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..._native.intrinsics import popcount
from ...errors import PdbtoolError
from ...tables.pairs_triples import PAIR_BY_REGION

# try_move reads a key's entries in blocks of this many, each block branch-free (every entry written, the
# count advanced by its test and by whether it is still the key's), so that a key of one or two entries costs
# no branch on its length; pack_move_lookups pads the entries so that the last block stays inside ``look``
ENTRY_BLOCK = 2



@njit(cache=True, _nrt=False, inline="always")
def _key_record(near, records, word, cu):
    """The record of the key (word, cu); its bit in ``near[word]`` must be set."""
    w = near[np.uint64(word)]
    return records[np.uint64((w >> 32) + popcount(w & ((np.int64(1) << cu) - 1)))]


@njit(cache=True, _nrt=False, inline="always")
def _record_units(rec, records, rows, blank):
    """The pair units of a key's record with the blank in cell ``blank``."""
    w = (rec >> 48) & 255
    if w != PAIR_BY_REGION:
        return w
    first = rec & 0xFFFFFFFF
    for j in range(first, first + ((rec >> 32) & 0xFFFF)):
        r = np.int64(rows[j])
        if r & 31 == 0 and (records[r >> 16] >> blank) & 1:
            return (r >> 10) & 63
    return np.int64(0)


def pack_lookups(tables) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(near, records, rows)`` of ``tables`` (see "the key look-ups" above).  Most keys have nothing, so
    the filter and the records of the keys that have something fit a cache where the tables do not."""
    n = tables.board.n
    start = tables.tri_start.astype(np.int64)
    count = np.diff(start)
    keys = np.flatnonzero((tables.pair_units != 0) | (count > 0))
    ent = tables.tri_ent.astype(np.int64)
    masks, mask_index = np.unique(ent[:, 3] & 0xFFFFFFFF, return_inverse=True)
    words = keys // n
    near = np.zeros(n ** 3, dtype=np.int64)
    np.bitwise_or.at(near, words, np.int64(1) << (keys % n))
    first_key = len(masks) + np.searchsorted(words, np.arange(n ** 3))
    near |= np.where(near != 0, first_key, 0).astype(np.int64) << 32
    units = tables.pair_units.astype(np.int64)[keys]
    if len(keys) >= 1 << 31 or count.max(initial=0) >= 1 << 16 or len(ent) >= 1 << 31 or len(masks) >= 1 << 15:
        raise PdbtoolError("the dynamic tables are too large to pack for the search")
    if len(ent) and ent[:, 2].max() >= 64:
        raise PdbtoolError("a dynamic table row's units exceed 63")
    records = np.concatenate([masks, start[keys] | count[keys] << 32 | units << 48])
    rows = (ent[:, 0] | (ent[:, 1] & 31) << 5 | ent[:, 2] << 10 | mask_index.reshape(-1).astype(np.int64) << 16)
    return near, np.ascontiguousarray(records), np.ascontiguousarray(rows.astype(np.int32))


def _entry_codes(key, other, units):
    """The code of a move entry (key, other tile, units): :func:`pack_move_lookups` groups rows by it."""
    return (key * 32 + other) * 64 + units


def _group_sizes(codes, distinct, count):
    """For each of ``codes``, its count in ``distinct``/``count`` (``np.unique(..., return_counts=True)``)."""
    if len(distinct) == 0:
        return np.zeros(len(codes), dtype=np.int64)
    at = np.minimum(np.searchsorted(distinct, codes), len(distinct) - 1)
    return np.where(distinct[at] == codes, count[at], 0)


def _orient_triples(rows, n, passes=3):
    """The move rows ``(key, v, cell of v, units)``, each placed under the key of one of the triple's two
    other tiles.  A placement (t moved into c from m, u in cu, v in cv) is found exactly once whether it is
    kept under the key of u in cu as an entry of v, or under the key of v in cv as an entry of u.  The
    tables keep it under the smaller tile; the side whose entry (key, other tile, units) more placements
    share makes fewer entries and fewer keys, so each row takes that side, in a few greedy passes (on the
    24-puzzle with -region: 0.31 M entries instead of 0.38 M, and 88 k keys instead of 114 k)."""
    key, v, cv, units = rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3]
    u, cu = (key // n) % n, key % n
    flipped = key - u * n - cu + v * n + cv
    own = _entry_codes(key, v, units)
    other = _entry_codes(flipped, u, units)
    distinct, count = np.unique(own, return_counts=True)
    s_own = _group_sizes(own, distinct, count)
    s_other = _group_sizes(other, *np.unique(other, return_counts=True))
    best, best_count = np.ones(len(rows), dtype=bool), len(distinct)
    for _ in range(passes):
        keep = s_own >= s_other
        distinct, count = np.unique(np.where(keep, own, other), return_counts=True)
        if len(distinct) < best_count:
            best, best_count = keep, len(distinct)
        # the size of each side's group with this row counted in it
        s_own = _group_sizes(own, distinct, count) + ~keep
        s_other = _group_sizes(other, distinct, count) + keep
    return np.stack([np.where(best, key, flipped), np.where(best, v, u), np.where(best, cv, cu), units], axis=1)


def pack_move_lookups(tables) -> np.ndarray:
    """The look-ups of the keys ``(t, c, m, u, cu)`` of moves (see "the key look-ups" above), in one int64
    array, indices absolute:

    * the filter: word ``((t*n + c)*4 + m)*n + u`` has bit cu set when the key has a pair value or entries,
      and in its high 32 bits the index of its first key's record (keys in increasing order of cu);
    * each key's record: its first entry (bits 0-31), its number of entries (32-47), its pair units
      (48-55), with the blank in ``nb[c, m]``;
    * the entries: the cells of v where the triple (t, u, v) holds with that blank (bits 0-31, as a mask),
      v (32-36) and the triple's units (37-42), one entry per (key, v, units); then ENTRY_BLOCK - 1 words of
      0, which never match, so that a block read from the last key's entries stays inside the array."""
    n = tables.board.n
    nb = tables.board.neighbours()
    nk = n ** 4
    start = tables.tri_start.astype(np.int64)
    ent = tables.tri_ent.astype(np.int64)
    row_key = np.repeat(np.arange(nk), np.diff(start))
    key = np.arange(nk)
    t_c = key // (n * n)  # t * n + c
    u_cu = key % (n * n)  # u * n + cu
    cell = t_c % n
    units = tables.pair_units.astype(np.int64)
    region_pair = ent[:, 0] == 0
    triple = ~region_pair
    mkeys, munits, mrows = [], [], []
    for m in range(4):
        blank = nb[cell, m]
        valid = (blank >= 0) & (blank != u_cu % n)  # t comes from the blank's cell, so u cannot be there
        blank = np.where(valid, blank, 0)
        move_key = (t_c * 4 + m) * (n * n) + u_cu
        pair = np.where(valid & (units != PAIR_BY_REGION), units, 0)
        k = row_key[region_pair]
        holds = valid[k] & ((ent[region_pair, 3] >> blank[k]) & 1).astype(bool)
        pair[k[holds]] = ent[region_pair, 2][holds]  # one region of a pair holds for one blank cell
        keep = np.flatnonzero(pair)
        mkeys.append(move_key[keep])
        munits.append(pair[keep])
        k = row_key[triple]
        holds = valid[k] & ((ent[triple, 3] >> blank[k]) & 1).astype(bool) & (ent[triple, 1] != blank[k])
        sel = np.flatnonzero(triple)[holds]
        mrows.append(np.stack([move_key[row_key[sel]], ent[sel, 0], ent[sel, 1], ent[sel, 2]], axis=1))
    nmk = 4 * nk
    pair_units = np.zeros(nmk, dtype=np.int64)
    pair_units[np.concatenate(mkeys)] = np.concatenate(munits)
    rows = np.concatenate(mrows)  # key, v, cell of v, units
    if len(rows) and rows[:, 3].max() >= 64:
        raise PdbtoolError("a dynamic table row's units exceed 63")
    rows = _orient_triples(rows, n)
    # one entry per (key, v, units), in increasing order: the mask of the cells of v
    group, where = np.unique(_entry_codes(rows[:, 0], rows[:, 1], rows[:, 3]), return_inverse=True)
    cells = np.zeros(len(group), dtype=np.int64)
    np.bitwise_or.at(cells, where.reshape(-1), np.int64(1) << rows[:, 2])
    entry_key = group // (32 * 64)
    entries = cells | ((group // 64) % 32) << 32 | (group % 64) << 37
    count = np.bincount(entry_key, minlength=nmk)
    keys = np.flatnonzero((pair_units != 0) | (count > 0))
    words = keys // n
    n_filter = nmk // n
    entries_at = n_filter + len(keys)
    if entries_at + len(entries) >= 1 << 32 or count.max(initial=0) >= 1 << 16:
        raise PdbtoolError("the dynamic tables are too large to pack for the search")
    near = np.zeros(n_filter, dtype=np.int64)
    np.bitwise_or.at(near, words, np.int64(1) << (keys % n))
    first_key = n_filter + np.searchsorted(words, np.arange(n_filter))
    near |= np.where(near != 0, first_key, 0).astype(np.int64) << 32
    first = entries_at + np.concatenate([[0], np.cumsum(count)[:-1]])
    records = first[keys] | count[keys] << 32 | pair_units[keys] << 48
    padding = np.zeros(ENTRY_BLOCK - 1, dtype=np.int64)
    return np.ascontiguousarray(np.concatenate([near, records, entries, padding]))


def pack_all(tables) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """Both packed look-ups of ``tables``: a state's (:func:`pack_lookups`) and a move's
    (:func:`pack_move_lookups`), to build once and share between the graphs of one heuristic."""
    return pack_lookups(tables), pack_move_lookups(tables)

