"""The encodings' Python API: check a name and its parameters, refuse a blank rule an encoding cannot
hold, size, encode, check and decode a payload, and EXACT for one placement."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..._native.arrays import read_only
from ..ranking import TilePattern
from .common import CODES, ENCODINGS, MAX_GROUP, NEEDS_CONSISTENT, UNREACHABLE, EncodingError, _Threads
from .lookup import decode_excess_table, decode_layer, exact_of
from .min_nibble import encode_min_nibble
from .mod3 import _MOD3_DIGITS, encode_mod3
from .nibble import encode_nibble
from .parity import encode_parity
from .sparse import (SPARSE_BLOCK_WORDS, SPARSE_PREAMBLE, _sparse_bitmap, _sparse_directory_errors,
                     _sparse_fill)


@dataclass
class Encoded:
    """A payload and what its conversion found (saturated entries, loss, timing)."""

    payload: np.ndarray
    params: dict[str, Any]
    info: dict[str, Any] = field(default_factory=dict)


def normalize_params(encoding: str, params: dict[str, Any] | None = None,
                     group: int | None = None) -> dict[str, Any]:
    """Check an encoding name and its parameters; return the parameters that name the table."""
    if encoding not in ENCODINGS:
        raise EncodingError(f"encoding {encoding!r}: choose one of {', '.join(ENCODINGS)}")
    params = dict(params or {})
    if group is not None:
        params["group"] = group
    if encoding != "min-nibble":
        if params:
            raise EncodingError(f"encoding {encoding} takes no parameters (--group is for min-nibble)")
        return {}
    if set(params) - {"group"}:
        raise EncodingError(f"min-nibble takes only a group size, not {', '.join(sorted(set(params) - {'group'}))}")
    c = params.get("group")
    if c is None:
        raise EncodingError("min-nibble needs a group size: --group C (a power of two, e.g. 2 or 4)")
    try:
        c = int(c)
    except (TypeError, ValueError):
        raise EncodingError(f"--group {c!r}: expected a power of two") from None
    if c < 1 or c & (c - 1) or c > MAX_GROUP:
        raise EncodingError(f"--group {c}: the group size must be a power of two from 1 to {MAX_GROUP}")
    return {"group": c}


def check_blank(encoding: str, blank: str) -> None:
    """Refuse mod3/parity for blank-minimized tables, whose values are not consistent (see the module doc),
    and any compact encoding of a zero-aware table (the zero-aware sums read bytes by region)."""
    if blank == "zero-aware" and encoding != "byte":
        raise EncodingError(f"zero-aware tables are byte tables only (the zero-aware sums do not read {encoding} "
                            f"tables by region): for a compact table, use --blank minimized")
    if encoding in NEEDS_CONSISTENT and blank != "ignored":
        raise EncodingError(
            f"{encoding} needs a table that changes by exactly one per tile move, and blank-{blank} tables "
            f"do not (a tile that opens or closes the blank's best region changes them by 3 or more): "
            f"build with --blank ignored, or use nibble, sparse or min-nibble")


def payload_bytes(encoding: str, entries: int, params: dict[str, Any] | None = None, nonzero: int = 0) -> int:
    """Size of a payload (for sparse, given its number of nonzero excesses)."""
    if encoding == "byte":
        return entries
    if encoding == "nibble":
        return (entries + 1) // 2
    if encoding == "mod3":
        return (entries + 4) // 5
    if encoding == "parity":
        return (entries + 7) // 8
    if encoding == "min-nibble":
        groups = -(-entries // int((params or {})["group"]))
        return (groups + 1) // 2
    nwords = (entries + 63) // 64
    ndir = (nwords + SPARSE_BLOCK_WORDS - 1) // SPARSE_BLOCK_WORDS + 1
    return 8 * (SPARSE_PREAMBLE + nwords + ndir + (nonzero + 15) // 16)


def encode(values: np.ndarray, pattern: TilePattern, blank: str, encoding: str,
           params: dict[str, Any] | None = None, threads: int | None = None) -> Encoded:
    """Encode a byte table (``values[rank]``, 255 = unreachable) of ``pattern`` under ``blank``."""
    params = normalize_params(encoding, params)
    values = np.ascontiguousarray(values, dtype=np.uint8)
    entries = pattern.entries
    if values.shape != (entries,):
        raise EncodingError(f"the byte table holds {values.shape[0]} entries, the pattern has {entries}")
    check_blank(encoding, blank)
    n, k = pattern.n, pattern.k
    md = pattern.md_rows()
    info: dict[str, Any] = {}
    start = time.perf_counter()
    with _Threads(threads):
        if encoding == "byte":
            payload = values.copy()
        elif encoding == "nibble":
            payload = np.empty(payload_bytes(encoding, entries), dtype=np.uint8)
            sat, unr = encode_nibble(values, n, k, md, payload)
            info.update(saturated=int(sat), unreachable=int(unr))
        elif encoding == "min-nibble":
            c = params["group"]
            payload = np.empty(payload_bytes(encoding, entries, params), dtype=np.uint8)
            sat, loss = encode_min_nibble(values, n, k, md, c.bit_length() - 1, payload)
            reached = entries - int(np.count_nonzero(values == UNREACHABLE))
            info.update(saturated=int(sat), mean_loss=round(2 * int(loss) / max(1, reached), 6))
        elif encoding in ("mod3", "parity"):
            payload = np.empty(payload_bytes(encoding, entries), dtype=np.uint8)
            unr = (encode_mod3 if encoding == "mod3" else encode_parity)(values, payload)
            if unr:
                raise EncodingError(f"{encoding} cannot hold the {unr} unreachable entries of this table: "
                                    f"use byte, nibble or sparse")
        else:
            nwords = (entries + 63) // 64
            ndir = (nwords + SPARSE_BLOCK_WORDS - 1) // SPARSE_BLOCK_WORDS + 1
            # pass 1 needs the bitmap before the value count is known: size the words for the worst case
            # only as far as the bitmap and directory, then grow once the count is known
            head = np.zeros(SPARSE_PREAMBLE + nwords + ndir, dtype=np.uint64)
            counts = _sparse_bitmap(values, n, k, md, head)
            nonzero = int(counts.sum())
            words = np.zeros(payload_bytes(encoding, entries, nonzero=nonzero) // 8, dtype=np.uint64)
            words[: head.shape[0]] = head
            del head
            dir_off = SPARSE_PREAMBLE + nwords
            val_off = dir_off + ndir
            words[0], words[1], words[2], words[3] = entries, dir_off, val_off, nonzero
            chunk_start = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
            sat = _sparse_fill(values, n, k, md, words, chunk_start, nwords, dir_off, val_off)
            words[dir_off + ndir - 1] = nonzero
            payload = words.view(np.uint8)
            info.update(saturated=int(sat), nonzero=nonzero)
    info["encode_seconds"] = round(time.perf_counter() - start, 3)
    info["bits_per_entry"] = round(8 * payload.nbytes / entries, 4)
    return Encoded(payload, params, info)


def check_payload(payload: np.ndarray, entries: int, encoding: str, params: dict[str, Any] | None) -> None:
    """Refuse a payload whose size or internal structure does not fit the encoding and entries.

    For sparse, every offset a look-up follows is checked: the preamble (entries, directory and values
    offsets, nonzero count), the directory against the bitmap's popcounts and the count against
    ``nonzero``, so that no look-up can read outside the payload."""
    params = normalize_params(encoding, params)
    payload = np.asarray(payload).reshape(-1).view(np.uint8)
    nonzero = 0
    if encoding == "sparse":
        if payload.nbytes < 8 * SPARSE_PREAMBLE:
            raise EncodingError(f"sparse payload of {payload.nbytes} bytes is too short")
        pre = payload[: 8 * SPARSE_PREAMBLE].view(np.uint64)
        nwords = (entries + 63) // 64
        ndir = (nwords + SPARSE_BLOCK_WORDS - 1) // SPARSE_BLOCK_WORDS + 1
        if int(pre[0]) != entries or int(pre[1]) != SPARSE_PREAMBLE + nwords or \
                int(pre[2]) != SPARSE_PREAMBLE + nwords + ndir or int(pre[3]) > entries:
            raise EncodingError("sparse payload preamble does not match the table")
        nonzero = int(pre[3])
    want = payload_bytes(encoding, entries, params, nonzero)
    if payload.nbytes != want:
        raise EncodingError(f"{encoding} payload of {payload.nbytes} bytes, expected {want} for {entries} entries")
    if encoding == "sparse":
        code, count = _sparse_directory_errors(payload.view(np.uint64), entries, nwords,
                                               SPARSE_PREAMBLE + nwords, ndir)
        if code < 0:
            raise EncodingError("sparse bitmap has bits set past the last entry")
        if code > 0:
            raise EncodingError(f"sparse directory entry {code - 1} does not match the bitmap's popcount")
        if count != nonzero:
            raise EncodingError(f"sparse bitmap holds {count} nonzero entries, the preamble says {nonzero}")


def decode(payload: np.ndarray, pattern: TilePattern, encoding: str, params: dict[str, Any] | None = None,
           threads: int | None = None) -> np.ndarray:
    """The values of every rank as a uint8 array (saturated nibbles decode to m + 30)."""
    params = normalize_params(encoding, params)
    payload = np.ascontiguousarray(payload).reshape(-1).view(np.uint8)
    entries = pattern.entries
    check_payload(payload, entries, encoding, params)
    if encoding == "byte":
        return payload.copy()
    n, k = pattern.n, pattern.k
    md = pattern.md_rows()
    out = np.full(entries, UNREACHABLE, dtype=np.uint8)
    with _Threads(threads):
        if encoding in ("nibble", "min-nibble", "sparse"):
            shift = params.get("group", 1).bit_length() - 1
            decode_excess_table(CODES[encoding], payload, n, k, md, shift, entries, out)
            return out
        # mod3 / parity: layer by layer from the goal, CHILD-H from each decoded placement
        nb = pattern.board.neighbours()
        goal = pattern.goal_rank()
        residue = _MOD3_DIGITS[payload[goal // 5], goal % 5] if encoding == "mod3" else \
            (payload[goal >> 3] >> (goal & 7)) & 1
        if residue:
            raise EncodingError(f"{encoding} payload is inconsistent (the goal placement's residue is not that of 0)")
        out[goal] = 0
        block = 4096
        depth = 0
        while True:
            found, bad = decode_layer(CODES[encoding], read_only(payload), out, depth, n, k, nb, md, block)
            if bad:
                raise EncodingError(f"{encoding} payload is inconsistent ({bad} residues contradict their "
                                    f"neighbours at depth {depth + 1}): a damaged or misencoded table")
            if found == 0:
                break
            depth += 1
            if depth >= UNREACHABLE - 1:
                raise EncodingError(f"{encoding} payload decodes to values beyond 253")
        left = int(np.count_nonzero(out == UNREACHABLE))
        if left:   # mod3 and parity hold only tables in which every placement is reached
            raise EncodingError(f"{encoding} payload is inconsistent ({left} placements are never reached "
                                f"from the goal): a damaged or misencoded table")
    return out


def exact_value(payload: np.ndarray, pattern: TilePattern, encoding: str, cells) -> int:
    """EXACT for mod3/parity: the value of one placement from the payload alone."""
    if encoding not in NEEDS_CONSISTENT:
        raise EncodingError(f"EXACT is for mod3 and parity, not {encoding}")
    cells = np.asarray(cells, dtype=np.int64)
    return int(exact_of(CODES[encoding], np.ascontiguousarray(payload).view(np.uint8), cells, pattern.n,
                        pattern.k, pattern.board.neighbours(), pattern.md_rows(), pattern.goal_rank()))
