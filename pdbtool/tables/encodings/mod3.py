"""``mod3``: ``h mod 3``, five residues a byte; a child's value from its parent's (CHILD-H)."""

from __future__ import annotations

import numba
import numpy as np
from numba import njit

from ..._native.intrinsics import load_u8
from .common import _pack_digits

_MOD3_DIGITS = np.array([[(b // 3 ** i) % 3 for i in range(5)] for b in range(256)], dtype=np.int64)
_MOD3_OF = np.array([v % 3 for v in range(256)], dtype=np.int64)
# _MOD3_STEP[parent residue, child residue]: the child's value minus the parent's (0 for a blank move)
_MOD3_STEP = np.array([[0, 1, -1], [-1, 0, 1], [1, -1, 0]], dtype=np.int64)
_MOD3_CHILD = np.array([_MOD3_STEP[pr, (b // 3 ** i) % 3] for b in range(256) for i in range(5) for pr in range(3)],
                       dtype=np.int64)


@njit(cache=True, forceinline=True)
def mod3_residue_at(addr, rank):
    q = np.int64(numba.uint64(rank) // numba.uint64(5))    # unsigned: a multiply and a shift
    return _MOD3_DIGITS[load_u8(addr + q), rank - 5 * q]


@njit(cache=True, forceinline=True)
def mod3_child_at(addr, rank, parent):
    """CHILD-H: exact value of a child from the parent's exact value (they differ by at most one)."""
    q = np.int64(numba.uint64(rank) // numba.uint64(5))
    # one small-table load: the step for (stored byte, position in it, parent's residue)
    return parent + _MOD3_CHILD[(load_u8(addr + q) * 5 + rank - 5 * q) * 3 + _MOD3_OF[parent]]


def encode_mod3(table, out):
    """Pack ``h mod 3`` five a byte; return the number of unreachable entries (which mod3 cannot hold)."""
    return _pack_digits(table, out, 5, 3, 0)
