"""Compact encodings of a byte distance table, their parallel encoders and the lookups the search calls.

All but ``byte`` store the *excess* ``e = (h - m) / 2`` of a placement over the Manhattan distance ``m`` of
the pattern's tiles (every table value has ``h >= m`` and ``h - m`` even), or a residue of ``h``:

=============  ===============================================  ==========================================
encoding       payload (uint8, rank r)                          value
=============  ===============================================  ==========================================
byte           ``h`` in byte r (255: unreachable)               ``h``
nibble         ``min(e, 15)`` in nibble r (low nibble first)    ``m + 2 e``; a saturated entry gives
                                                                ``m + 30 <= h``: still admissible
mod3           ``h mod 3``, five residues a byte                from the parent's exact value (CHILD-H),
               (byte = sum of residue_i * 3^i, i = r mod 5)     or by a descent to the goal (EXACT)
parity         bit 1 of ``h`` (``(h >> 1) & 1``), 8 a byte      as mod3
min-nibble C   ``min(e, 15)`` least over the group of C          ``m + 2 e_group <= h``: lossy, admissible
               consecutive ranks (group ``r >> log2 C``)
sparse         uint64 words: preamble, a bit per rank           ``m + 2 e`` (``e = 0`` where the bit is 0)
               (``e != 0``), a rank directory, the nonzero
               excesses (saturated at 15) as nibbles in rank
               order
=============  ===============================================  ==========================================

mod3 and parity need a *consistent* table: one whose value changes by exactly one whenever one pattern tile
moves into an adjacent cell free of pattern tiles (an "abstract neighbour": any such cell, whatever the blank
region).  Then a child's value is the parent's plus or minus one, and the stored residue tells which:

* mod3: ``h' = h + 1`` if ``h' mod 3 == (h + 1) mod 3``, else ``h - 1`` (a blank move keeps the residue: ``h``).
* parity: ``h + 1`` and ``h - 1`` differ by two, so their bit 1 differs: ``h' = h + 1`` iff bit 1 of
  ``h + 1`` equals the stored bit.  Without a parent, ``h mod 4 = 2 * bit + (m mod 2)`` (as ``h = m`` mod 2).

EXACT walks from a placement to the goal placement through abstract neighbours whose value is one less
(residue one less for mod3, ``h mod 4`` one less for parity), counting steps: each step lowers the value by
exactly one, and a neighbour one less always exists (the first move of a shortest abstract path).

Blank-*ignored* tables are consistent: they are breadth-first distances in the graph of abstract neighbours.
Blank-*minimized* tables are not: the least distance over blank regions jumps by 3, 5 or more when a tile
opens or closes the region the blank needs (how often: ``bench/bench_encodings.py``), and the largest consistent
table below a minimized table is exactly the blank-ignored one; so mod3 and parity refuse minimized tables.

Decoding kernels (``*_at``) take the payload's address (an int64, as the IDA* kernel keeps its tables) and
are ``forceinline`` (inlined by LLVM into the kernel that calls them); ``value_of`` / ``exact_of`` take the
arrays, for tests and Python callers.

The modules: one per family (:mod:`.byte`, :mod:`.nibble`, :mod:`.mod3`, :mod:`.parity`, :mod:`.min_nibble`,
:mod:`.sparse`: its decoding kernels and its parallel encoder), :mod:`.common` (names, codes, the chunks of
ranks), :mod:`.lookup` (``value_at`` over every family, EXACT, the whole-table decoders) and :mod:`.api` (the
Python API).  Everything named in ``__all__`` is imported from this package.
"""

from __future__ import annotations

from ..._native.intrinsics import load_u8, load_u64
from .api import (Encoded, check_blank, check_payload, decode, encode, exact_value, normalize_params,
                  payload_bytes)
from .byte import byte_at
from .common import (BYTE, CHUNK, CODES, ENCODINGS, MAX_GROUP, MIN_NIBBLE, MOD3, NEEDS_CONSISTENT, NIBBLE,
                     NIBBLE_CAP, PARITY, SPARSE, UNREACHABLE, EncodingError, free_neighbour, manhattan_run,
                     rank_moved)
from .lookup import decode_excess_table, decode_layer, exact_at, exact_of, tile_move_deltas, value_at, value_of
from .min_nibble import encode_min_nibble, min_nibble_at
from .mod3 import encode_mod3, mod3_child_at, mod3_residue_at
from .nibble import encode_nibble, nibble_at, nibble_excess_at
from .parity import encode_parity, parity_bit_at, parity_child_at
from .sparse import (SPARSE_BLOCK_WORDS, SPARSE_PREAMBLE, sparse_at, sparse_count_before, sparse_excess_at,
                     sparse_rank1, sparse_select1)

__all__ = ["ENCODINGS", "CODES", "BYTE", "NIBBLE", "MOD3", "PARITY", "MIN_NIBBLE", "SPARSE", "EncodingError",
           "Encoded", "encode", "decode", "check_blank", "check_payload", "exact_value", "normalize_params",
           "payload_bytes", "value_at",
           "exact_at", "value_of", "exact_of", "load_u8", "load_u64", "sparse_rank1", "sparse_select1",
           "tile_move_deltas", "manhattan_run",
           # the families' kernels and constants, as the single module had them
           "NEEDS_CONSISTENT", "UNREACHABLE", "NIBBLE_CAP", "MAX_GROUP", "CHUNK", "SPARSE_PREAMBLE",
           "SPARSE_BLOCK_WORDS", "byte_at",
           "nibble_excess_at", "nibble_at", "min_nibble_at", "sparse_count_before", "sparse_excess_at", "sparse_at",
           "mod3_residue_at", "mod3_child_at", "parity_bit_at", "parity_child_at", "free_neighbour", "rank_moved",
           "encode_nibble", "encode_min_nibble", "encode_mod3", "encode_parity", "decode_excess_table",
           "decode_layer"]
