"""The packed look-ups of the dynamic tables, a state's and a move's.

A key is (t, c, u, cu): tile t in cell c and tile u in cell cu.  ConflictGraph packs the look-ups of
:class:`pdbtool.tables.pairs_triples.DynamicTables` so that a key costs one or two cache lines:
* ``near[(t*n + c)*n + u]``: bit cu is set when the key has a pair value or rows, and the index in
  ``records`` of the word's first such key (keys in increasing order) is in the word's high 32 bits on a
  board of at most :data:`NARROW_CELLS` cells; on a wider board the bits of cu take the whole word, and the
  index is in ``near[n**3 + word]`` (see :func:`is_wide`);
* ``records``: first the distinct blank masks of the rows (cells of the blank where a row holds), then for
  the i-th key with something (at ``records[masks + i]``): its first row (bits 0-31), its number of rows
  (32-47), its pair units (48-55; PAIR_BY_REGION: in its rows);
* ``rows[j]`` (int32, so that the rows take half the cache): v (bits 0-5; 0 for a pair's value by
  region), cell of v (6-11), units (12-17), the index of its blank mask in ``records`` (18-30).  The sets
  have few distinct masks (one without regions, 145 with them on the 24-puzzle), so the masks stay in the
  L1 cache and are read only for a row whose v stands in its cell.
A state is set up from scratch with these.  A move has look-ups of its own (:func:`pack_move_lookups`), keyed
by (t, c, m, u, cu): t moves into c from c's neighbour m, where the blank will then be, so each key keeps
only what holds with the blank there: its pair units are final (no rows for a pair's value by region),
and its triples need no blank test.  Triples a blank in m's cell cannot reach, and keys left with
nothing, are gone.  A key's triples are grouped into entries, one per (v, units) with the cells of v
where they hold as a mask, so that one test per entry finds whether v stands in one of them.  A triple
placement needs to be under one key only, that of u or that of v, and each is put where it shares its
entry with more placements (:func:`_orient_triples`), so that a move reads fewer keys and entries.

Boards of more than :data:`NARROW_CELLS` cells (up to 64) need a 64-bit mask of cells per filter word and
per entry, so their move look-ups have a wide layout of their own, read by :func:`.moves.try_move_wide`: the
search compiles one of the two layouts per heuristic state class, and the narrow boards keep one word per
filter word and per entry."""

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

# boards of at most this many cells pack a filter word's cells and a key's index into one word
NARROW_CELLS = 32

# fields of a state's row (see "the key look-ups" above)
ROW_CELL_SHIFT, ROW_UNITS_SHIFT, ROW_MASK_SHIFT = 6, 12, 18


def is_wide(n: int) -> bool:
    """Whether a board of n cells has the wide layout of the look-ups (see "the key look-ups" above)."""
    return n > NARROW_CELLS


@njit(cache=True, _nrt=False, forceinline=True)
def _key_record(near, records, word, cu):
    """The record of the key (word, cu) of a narrow layout; its bit in ``near[word]`` must be set."""
    w = near[np.uint64(word)]
    return records[np.uint64((w >> 32) + popcount(w & ((np.int64(1) << cu) - 1)))]


@njit(cache=True, _nrt=False, forceinline=True)
def _wide_key_record(near, records, word, cu, index_at):
    """The record of the key (word, cu) of a wide layout, whose first key's index is at
    ``near[index_at + word]``; its bit in ``near[word]`` must be set."""
    w = near[np.uint64(word)]
    return records[np.uint64(near[np.uint64(index_at + word)] + popcount(w & ((np.int64(1) << cu) - 1)))]


@njit(cache=True, _nrt=False, forceinline=True)
def _state_key_record(near, records, word, cu, n):
    """The record of the key (word, cu) of a state's look-ups (:func:`pack_lookups`), either layout."""
    n3 = n * n * n
    if near.shape[0] == n3:
        return _key_record(near, records, word, cu)
    return _wide_key_record(near, records, word, cu, n3)


@njit(cache=True, _nrt=False, forceinline=True)
def _record_units(rec, records, rows, blank):
    """The pair units of a key's record with the blank in cell ``blank``."""
    w = (rec >> 48) & 255
    if w != PAIR_BY_REGION:
        return w
    first = rec & 0xFFFFFFFF
    for j in range(first, first + ((rec >> 32) & 0xFFFF)):
        r = np.int64(rows[j])
        if r & 63 == 0 and (records[r >> ROW_MASK_SHIFT] >> blank) & 1:
            return (r >> ROW_UNITS_SHIFT) & 63
    return np.int64(0)


def pack_lookups(tables) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(near, records, rows)`` of ``tables`` (see "the key look-ups" above).  Most keys have nothing, so
    the filter and the records of the keys that have something fit a cache where the tables do not."""
    n = tables.board.n
    start = tables.tri_start.astype(np.int64)
    count = np.diff(start)
    keys = np.flatnonzero((tables.pair_units != 0) | (count > 0))
    ent = tables.tri_ent.astype(np.int64)
    masks, mask_index = np.unique(ent[:, 3] & _all_cells(n), return_inverse=True)
    words = keys // n
    near = np.zeros(n ** 3, dtype=np.int64)
    np.bitwise_or.at(near, words, np.int64(1) << (keys % n))
    first_key = len(masks) + np.searchsorted(words, np.arange(n ** 3))
    first_key = np.where(near != 0, first_key, 0).astype(np.int64)
    if len(keys) >= 1 << 31 or count.max(initial=0) >= 1 << 16 or len(ent) >= 1 << 31 or \
            len(masks) >= 1 << (31 - ROW_MASK_SHIFT):
        raise PdbtoolError("the dynamic tables are too large to pack for the search")
    if len(ent) and ent[:, 2].max() >= 64:
        raise PdbtoolError("a dynamic table row's units exceed 63")
    near = np.concatenate([near, first_key]) if is_wide(n) else near | first_key << 32
    units = tables.pair_units.astype(np.int64)[keys]
    records = np.concatenate([masks, start[keys] | count[keys] << 32 | units << 48])
    rows = (ent[:, 0] | (ent[:, 1] & 63) << ROW_CELL_SHIFT | ent[:, 2] << ROW_UNITS_SHIFT
            | mask_index.reshape(-1).astype(np.int64) << ROW_MASK_SHIFT)
    return np.ascontiguousarray(near), np.ascontiguousarray(records), np.ascontiguousarray(rows.astype(np.int32))


def _all_cells(n: int) -> np.int64:
    """The mask of all n cells, as an int64 (all ones on 64 cells)."""
    return np.uint64((1 << n) - 1).astype(np.int64)


def _entry_codes(key, other, units):
    """The code of a move entry (key, other tile, units): :func:`pack_move_lookups` groups rows by it."""
    return (key * 64 + other) * 64 + units


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
    share makes fewer entries and fewer keys, so each row takes that side, in a few greedy passes."""
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
    array, indices absolute.  The narrow layout (:func:`is_wide` false):

    * the filter: word ``((t*n + c)*4 + m)*n + u`` has bit cu set when the key has a pair value or entries,
      and in its high 32 bits the index of its first key's record (keys in increasing order of cu);
    * each key's record: its first entry (bits 0-31), its number of entries (32-47), its pair units
      (48-55), with the blank in ``nb[c, m]``;
    * the entries: the cells of v where the triple (t, u, v) holds with that blank (bits 0-31, as a mask),
      v (32-37) and the triple's units (38-43), one entry per (key, v, units); then ENTRY_BLOCK - 1 words of
      0, which never match, so that a block read from the last key's entries stays inside the array.

    The wide layout: the filter's words hold the cells alone (bits 0-63), and the indices of their first
    keys' records follow them, one word per filter word; the records are as above; an entry is two words,
    the cells of v (bits 0-63), then v (bits 0-5) and the units (6-11); the padding is 2 (ENTRY_BLOCK - 1)
    words of 0."""
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
    entry_key = group // (64 * 64)
    v_units = (group // 64) % 64 | (group % 64) << 6
    count = np.bincount(entry_key, minlength=nmk)
    keys = np.flatnonzero((pair_units != 0) | (count > 0))
    words = keys // n
    n_filter = nmk // n
    wide = is_wide(n)
    width = 2 if wide else 1  # words per entry
    entries_at = n_filter * width + len(keys)
    if entries_at + width * len(group) >= 1 << 32 or count.max(initial=0) >= 1 << 16:
        raise PdbtoolError("the dynamic tables are too large to pack for the search")
    near = np.zeros(n_filter, dtype=np.int64)
    np.bitwise_or.at(near, words, np.int64(1) << (keys % n))
    first_key = n_filter * width + np.searchsorted(words, np.arange(n_filter))
    first_key = np.where(near != 0, first_key, 0).astype(np.int64)
    first = entries_at + width * np.concatenate([[0], np.cumsum(count)[:-1]])
    records = first[keys] | count[keys] << 32 | pair_units[keys] << 48
    if wide:
        parts = [near, first_key, records, np.stack([cells, v_units], axis=1).reshape(-1)]
    else:
        parts = [near | first_key << 32, records, cells | v_units << 32]
    parts.append(np.zeros(width * (ENTRY_BLOCK - 1), dtype=np.int64))
    return np.ascontiguousarray(np.concatenate(parts))


def pack_all(tables) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """Both packed look-ups of ``tables``: a state's (:func:`pack_lookups`) and a move's
    (:func:`pack_move_lookups`), to build once and share between the graphs of one heuristic."""
    return pack_lookups(tables), pack_move_lookups(tables)

