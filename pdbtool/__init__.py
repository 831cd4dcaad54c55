"""pdbtool: additive pattern databases for the sliding-tile puzzles, and an IDA* solver that uses them.

The public names below are imported on first use, so that ``import pdbtool`` (and the command line's
``--help``) stays light: the Numba kernels load only when something needs them.
"""

from __future__ import annotations

import importlib

from ._version import __version__

_PUBLIC = {
    "Board": "pdbtool.puzzle.board",
    "TilePattern": "pdbtool.tables.ranking",
    "PatternTable": "pdbtool.tables.table",
    "TableCache": "pdbtool.tables.cache",
    "load_partition": "pdbtool.tables.partitions",
    "Solver": "pdbtool.search.solver",
    "PdbtoolError": "pdbtool.errors",
}

__all__ = [*_PUBLIC, "__version__"]


def __getattr__(name: str):
    if name in _PUBLIC:
        return getattr(importlib.import_module(_PUBLIC[name]), name)
    raise AttributeError(f"module 'pdbtool' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
