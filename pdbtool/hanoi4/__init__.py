"""The four-peg Towers of Hanoi: disk-set pattern databases (static, dynamic, infinite peg) and an optimal
breadth-first heuristic search, sharing pdbtool's table file, cache and commands (``--domain hanoi4``).

The names below are imported from their modules on first use, so that importing the package (as its
commands module does for ``pdbtool CMD --help``) loads neither NumPy nor Numba."""

from __future__ import annotations

import importlib

_EXPORTS = {"compile_plan": "heuristics", "parse_spec": "heuristics", "Instance": "instance",
            "apply_moves": "instance", "load_instances": "instance", "standard": "instance",
            "Solution": "search", "frame_stewart": "search", "solve": "search", "HANOI_ENCODINGS": "encodings",
            "DiskTable": "tables", "convert_file": "tables", "get_table": "tables", "verify_file": "tables"}


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = sorted(_EXPORTS)
