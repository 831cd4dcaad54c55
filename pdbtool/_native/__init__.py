"""Low-level Numba intrinsics (bit selection, atomics, prefetches, raw loads) used by the layers above.

Nothing here knows about puzzles or tables: every function works on integers, words and addresses.
"""
