"""Low-level Numba intrinsics (bit selection, atomics, prefetches, raw loads) used by the layers above, the
package-wide stamp of Numba's on-disk cache (:mod:`pdbtool._native.numba_cache`), and read-only views for
kernels' arguments (:mod:`pdbtool._native.arrays`).

Nothing here knows about puzzles or tables: every function works on integers, words and addresses.
"""

from . import numba_cache  # noqa: F401  (before any cached kernel is defined)
