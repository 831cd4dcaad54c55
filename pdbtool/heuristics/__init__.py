"""Heuristics for the IDA* driver, one module each: Manhattan distance (:mod:`.manhattan`), linear conflicts
(:mod:`.linear_conflict`), additive pattern sums over byte tables (:mod:`.pattern_sum`) or compactly
encoded ones (:mod:`.encoded`), with the diagonal reflection and tables shared through symmetries, and the
dynamically partitioned pairs and triples combined by a weighted vertex cover (:mod:`.dynamic`, with
:mod:`.vertex_cover`).  Each is a class with ``value(state)`` and ``setup(tiles, capacity)``, plus its
implementation of the driver's hooks (:mod:`.hooks`) for the class of its search state.

Which heuristics exist, and what each is made from, is listed in :mod:`pdbtool.registry`;
:func:`make_heuristic` makes one by name.
"""

from __future__ import annotations

from .. import registry
from .hooks import HeuristicError


def make_heuristic(name: str, **inputs):
    """The heuristic ``name`` of :data:`pdbtool.registry.HEURISTICS`, from the keyword ``inputs`` (those of
    :data:`pdbtool.registry.HEURISTIC_INPUTS`; each factory is given the ones its signature names)."""
    try:
        entry = registry.heuristic(name)
    except registry.RegistryError as exc:
        raise HeuristicError(str(exc)) from None
    factory = entry.load()
    return factory(**{k: v for k, v in inputs.items() if k in entry.inputs(factory)})


def pattern_sum_heuristic(board, patterns, tables, reflect, shared, encoding="byte", encoding_params=None,
                          partition=None, plan=None, blank="minimized"):
    """``pdb``: the partition's additive sum over byte tables (:mod:`.pattern_sum`) or compactly encoded ones
    (:mod:`.encoded`) or zero-aware ones (:mod:`.zero_aware_sum`); a catalogue of partitions takes the
    catalogue kernel (:mod:`.catalogue`)."""
    if patterns is None or tables is None:
        raise HeuristicError("the pdb heuristic needs a partition and its tables")
    if hasattr(partition, "partitions"):
        from .catalogue import catalogue_heuristic

        return catalogue_heuristic(partition, plan, tables, blank, reflect)
    if blank == "zero-aware":
        from .zero_aware_sum import ZeroAwareSum

        return ZeroAwareSum(patterns, tables, reflect, shared)
    if encoding != registry.DEFAULT_ENCODING:
        from .encoded import EncodedPatternSum

        return EncodedPatternSum(patterns, tables, encoding, encoding_params or {}, reflect, shared)
    from .pattern_sum import PatternSum

    return PatternSum(patterns, tables, reflect, shared)


__all__ = ["HeuristicError", "make_heuristic", "pattern_sum_heuristic"]
