"""``byte``: the table value itself, one byte a rank (255: unreachable)."""

from __future__ import annotations

from numba import njit

from ..._native.intrinsics import load_u8


@njit(cache=True, forceinline=True)
def byte_at(addr, rank):
    return load_u8(addr + rank)
