"""Multiple sequence alignment: optimal sum-of-pairs alignments by A* (and partial-expansion A*) over the
lattice of prefix lengths, with additive pairwise and three-way pattern databases (``--domain msa``).

The names below are imported on first use, so that importing the command module (``--help``) loads
neither NumPy nor Numba."""

from __future__ import annotations

import importlib

_EXPORTS = {"COSTS": "costs", "CostModel": "costs", "alignment_cost": "costs", "make_model": "costs",
            "Alignment": "search", "align": "search", "Instance": "sequences", "parse_fasta": "sequences",
            "read_fasta": "sequences"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
