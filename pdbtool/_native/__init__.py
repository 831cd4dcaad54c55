"""Low-level Numba intrinsics (bit selection, atomics, prefetches, raw loads) used by the layers above, the
package-wide stamp of Numba's on-disk cache (:mod:`pdbtool._native.numba_cache`), and read-only views for
kernels' arguments (:mod:`pdbtool._native.arrays`).

Nothing here knows about puzzles or tables: every function works on integers, words and addresses.
"""

import os

# Numba's OpenMP threads spin after each parallel kernel call by default.  The builders call many short
# kernels (a slice of blocks at a time), and on a shared machine the spinning threads take the cores that
# the thread everyone waits for needs: idle threads sleep instead.  Set before Numba loads its threading
# layer, which reads it once; a value the user set is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from . import numba_cache  # noqa: E402,F401  (before any cached kernel is defined)
