"""``parity``: bit 1 of ``h``, eight a byte; a child's value from its parent's (CHILD-H)."""

from __future__ import annotations

from numba import njit

from ..._native.intrinsics import load_u8
from .common import _pack_digits


@njit(cache=True, forceinline=True)
def parity_bit_at(addr, rank):
    return (load_u8(addr + (rank >> 3)) >> (rank & 7)) & 1


@njit(cache=True, forceinline=True)
def parity_child_at(addr, rank, manhattan, parent):
    """CHILD-H: exact value of a child (``manhattan`` its pattern's Manhattan distance) from its parent's.

    A blank move keeps the placement (same parity of h and m as the parent: value unchanged); a tile move
    changes the value by one, and bit 1 of ``parent + 1`` and ``parent - 1`` differ."""
    if ((manhattan ^ parent) & 1) == 0:
        return parent
    up = parent + 1
    if ((up >> 1) & 1) == parity_bit_at(addr, rank):
        return up
    return parent - 1


def encode_parity(table, out):
    """Pack bit 1 of h eight a byte; return the number of unreachable entries."""
    return _pack_digits(table, out, 8, 2, 1)
