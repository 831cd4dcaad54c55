"""Arrays as the compiled kernels take them.

A compiled kernel's signature includes whether each array argument is writable, so the same kernel called
with a memory-mapped (read-only) table and with a fresh (writable) one is compiled twice.  The callers of
such kernels pass :func:`read_only` views of the arrays the kernel only reads, so that one compile serves
both.
"""

from __future__ import annotations

import numpy as np


def read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a`` (``a`` itself stays writable)."""
    view = a.view()
    view.setflags(write=False)
    return view


__all__ = ["read_only"]
