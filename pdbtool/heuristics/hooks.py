"""The interface between a heuristic and the IDA* driver (:mod:`pdbtool.search.driver`).

A heuristic keeps what its incremental evaluation needs in a *search state*: a namedtuple of arrays (and a
few scalars) of a class of its own, made by its ``setup(tiles, capacity)``.  The driver owns the stack, the
moves, the goal test, the bounds and the node counts, and calls the hooks below on that state.  They
are plain Python functions here; each heuristic module implements them for its state class with
``numba.extending.overload(..., jit_options={"forceinline": True})``, checking the class with
:func:`is_state`, and declares the driver's walk for it with :func:`at_once`.  So the one cached driver
compiles one specialization per state class, with that walk alone and the hooks inlined into it by LLVM
(``forceinline``: each hook is typed and compiled once, then inlined; Numba's own ``inline="always"``
types it again at every call site, which costs several times the compile for the same machine code).

Levels are those of the driver's stack: level ``d`` describes the node at depth d on the current path.
A move slides tile ``t`` from cell ``from_cell`` (the child's blank) into ``to_cell`` (the parent's blank).
"""

from __future__ import annotations

from ..errors import PdbtoolError


class HeuristicError(PdbtoolError):
    pass


_WALKS: list = []  # (a sequence of state classes, whether the driver generates their children at once)

# the modules that implement the hooks.  Each overload it registers gives a hook a new Numba type, so the
# driver imports them all before it is first typed (:func:`load_implementations`): a module imported while a
# driver is being typed (Numba imports a state's module when it reads a cached signature that names the
# state's class) would change the hooks' types halfway through, which Numba reports as "Cannot unify".
IMPLEMENTATIONS = ("pdbtool.heuristics.manhattan", "pdbtool.heuristics.linear_conflict",
                   "pdbtool.heuristics.pattern_sum", "pdbtool.heuristics.encoded",
                   "pdbtool.heuristics.zero_aware_sum", "pdbtool.heuristics.catalogue", "pdbtool.heuristics.dynamic")


def load_implementations() -> None:
    """Import every module of :data:`IMPLEMENTATIONS` (the driver's module does, when it is imported)."""
    import importlib

    for name in IMPLEMENTATIONS:
        importlib.import_module(name)


def at_once(at_once_value: bool, classes) -> None:
    """Declare the driver's walk for the state ``classes`` (a sequence, read when the driver is compiled, so
    classes added to it later count): whether the driver generates all children of a node when it expands it
    (then :func:`child_h` must have no side effects: it is called for every child before any is entered) or
    one at a time as its walk reaches them.  A constant per state class, so the driver compiles only one of
    its two walks."""
    _WALKS.append((classes, at_once_value))


def walks_at_once(typ) -> bool:
    """The walk declared with :func:`at_once` for the state whose Numba type is ``typ`` (at compile time)."""
    for classes, value in _WALKS:
        if is_state(typ, *classes):
            return value
    raise HeuristicError(f"no walk declared for the search state {typ}")


def children(hs, d, blank, prev_move, tiles, nb, bound, next_bound):
    """Called once when the node at level ``d`` is expanded, before its children are generated: a
    heuristic that evaluates all children at once (so that their table loads overlap) does it here.
    ``prev_move`` is the move that led to the node (its inverse is not generated)."""
    raise NotImplementedError("a driver hook: runs only inside the compiled driver")


def child_h(hs, d, m, t, to_cell, from_cell, bound, next_bound):
    """h of the child of level ``d`` reached by move ``m``.  Within the bound (``d + 1 + h <= bound``, exactly
    when the exact h is) any value from 0 to the exact h that is 0 at the goal (the driver tests a child for
    the goal only when its h is 0); otherwise any value that keeps f above ``bound`` and is exact whenever
    the exact f is below ``next_bound`` (so the driver's next bound is unchanged).  A child above the bound
    must leave no trace in the state."""
    raise NotImplementedError("a driver hook: runs only inside the compiled driver")


def enter(hs, d, m, t, to_cell, from_cell, h):
    """The child of level ``d`` by move ``m`` (its h from :func:`child_h`, the last one evaluated) is
    entered: make level ``d + 1`` describe it."""
    raise NotImplementedError("a driver hook: runs only inside the compiled driver")


def leave(hs, d, t, to_cell, from_cell):
    """The node at level ``d`` is left: tile ``t`` slides back from ``from_cell`` into ``to_cell``."""
    raise NotImplementedError("a driver hook: runs only inside the compiled driver")


def is_state(typ, *classes) -> bool:
    """Whether the Numba type ``typ`` is a namedtuple of one of ``classes`` (for an overload's dispatch)."""
    return getattr(typ, "instance_class", None) in classes


def evaluated_alone(at_once_value: bool, *classes) -> None:
    """Declare the walk (:func:`at_once`) and implement :func:`children` (nothing to prepare) for state
    ``classes`` whose :func:`child_h` computes each child's h by itself."""
    from numba.extending import overload

    at_once(at_once_value, classes)

    @overload(children, jit_options={"forceinline": True})
    def _children(hs, d, blank, prev_move, tiles, nb, bound, next_bound):
        if is_state(hs, *classes):
            return lambda hs, d, blank, prev_move, tiles, nb, bound, next_bound: None


def as_tiles(state):
    """A state as a contiguous int64 array."""
    import numpy as np

    return np.ascontiguousarray(np.asarray(state, dtype=np.int64))


def byte_table(pattern, table, entries: int):
    """``table`` as a kernel reads it: a contiguous uint8 array of ``entries`` entries (else a
    :class:`HeuristicError` naming ``pattern``)."""
    import numpy as np

    arr = np.asarray(table)
    if arr.dtype != np.uint8 or arr.ndim != 1 or arr.shape[0] != entries or not arr.flags.c_contiguous:
        raise HeuristicError(f"table of pattern {pattern} is not a contiguous uint8 array of {entries} entries")
    return arr


__all__ = ["HeuristicError", "IMPLEMENTATIONS", "load_implementations", "at_once", "walks_at_once", "children",
           "child_h", "enter", "leave", "is_state", "evaluated_alone", "as_tiles",
           "byte_table"]
