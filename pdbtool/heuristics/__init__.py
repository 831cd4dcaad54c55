"""Heuristics for the IDA* driver, one module each: Manhattan distance (:mod:`.manhattan`), linear conflicts
(:mod:`.linear_conflict`), additive pattern sums over byte tables (:mod:`.pattern_sum`) or compactly
encoded ones (:mod:`.encoded`), with the diagonal reflection and tables shared through symmetries, and the
dynamically partitioned pairs and triples combined by a weighted vertex cover (:mod:`.dynamic`, with
:mod:`.vertex_cover`).  Each is a class with ``value(state)`` and ``setup(tiles, capacity)``, plus its
implementation of the driver's hooks (:mod:`.hooks`) for the class of its search state.
"""

from __future__ import annotations

from .hooks import HeuristicError

HEURISTICS = ("pdb", "manhattan", "linear-conflict")


def make_heuristic(name: str, board, patterns=None, tables=None, reflect: bool = True, shared=None):
    """A static heuristic by name (``pdb`` needs the patterns and their tables)."""
    if name == "manhattan":
        from .manhattan import Manhattan

        return Manhattan(board)
    if name == "linear-conflict":
        from .linear_conflict import LinearConflict

        return LinearConflict(board)
    if name == "pdb":
        from .pattern_sum import PatternSum

        if patterns is None or tables is None:
            raise HeuristicError("the pdb heuristic needs a partition and its tables")
        return PatternSum(patterns, tables, reflect, shared)
    raise HeuristicError(f"unknown heuristic {name!r}: choose one of {', '.join(HEURISTICS)}")


__all__ = ["HEURISTICS", "HeuristicError", "make_heuristic"]
