"""Every name a user can choose: heuristics, blank rules, table encodings and dynamic sets.

The command line's choices and their ``--help``, the checks of :class:`pdbtool.search.solver.Solver` and the
construction of its heuristic are all read from here, so adding one of these is one line in this module
(and, for a heuristic, its own module).  Nothing here imports NumPy or Numba: ``pdbtool --help`` reads it.

A heuristic's entry names its factory as ``"module:attribute"`` (imported when a solver is made) and what the
solver must prepare for it, which also decides the options the command line accepts with it: the static
partition's pattern tables (``partition``: ``--partition``, ``--blank``), a dynamic set of pair and triple
tables (``dynamic``: ``--dynamic``), compact encodings of its pattern tables (``encodings``:
``--encoding``).  The solver calls the factory with those of :data:`HEURISTIC_INPUTS` that its signature
names.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import PdbtoolError


class RegistryError(PdbtoolError):
    pass


@dataclass(frozen=True)
class Heuristic:
    """A heuristic of the search: its name, a one-line description, its factory and what it takes."""

    name: str
    help: str
    factory: str
    partition: bool = False
    dynamic: bool = False
    encodings: bool = False

    def load(self):
        """The factory, imported now."""
        from importlib import import_module

        module, _, attribute = self.factory.partition(":")
        return getattr(import_module(module), attribute)

    def inputs(self, factory=None) -> tuple[str, ...]:
        """The keyword arguments of :data:`HEURISTIC_INPUTS` that its factory takes: those its signature
        names (all of them if it takes ``**kwargs``)."""
        import inspect

        params = inspect.signature(factory or self.load()).parameters
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            return HEURISTIC_INPUTS
        return tuple(name for name in HEURISTIC_INPUTS if name in params)


# What a factory may be given: the board; the static partition's patterns, their tables (values indexed by
# rank), whether to take the diagonal reflection and which pattern reads which table (pdbtool.tables.sharing);
# the tables' encoding and its parameters; the partition itself, its table plan and blank rule (catalogues);
# the dynamic set's name and where its tables are cached or built.
HEURISTIC_INPUTS = ("board", "patterns", "tables", "reflect", "shared", "encoding", "encoding_params", "partition",
                    "plan", "blank", "dynamic", "cache", "cache_dir", "threads", "notify")

HEURISTICS: dict[str, Heuristic] = {h.name: h for h in (
    Heuristic("pdb", "the additive sum of the partition's pattern tables, max with its diagonal reflection",
              "pdbtool.heuristics:pattern_sum_heuristic", partition=True, encodings=True),
    Heuristic("manhattan", "Manhattan distance", "pdbtool.heuristics.manhattan:Manhattan"),
    Heuristic("linear-conflict", "Manhattan distance plus linear conflicts",
              "pdbtool.heuristics.linear_conflict:LinearConflict"),
    Heuristic("ddb", "pair and triple tables combined by a weighted vertex cover",
              "pdbtool.heuristics.dynamic:ddb_heuristic", dynamic=True),
    Heuristic("max", "the larger of pdb and ddb", "pdbtool.heuristics.dynamic:max_heuristic", partition=True,
              dynamic=True),
)}
DEFAULT_HEURISTIC = "pdb"

# the blank rule of a pattern table: how the blank's cell counts in the abstraction
BLANK_RULES: dict[str, str] = {
    "minimized": "the blank is part of the abstract state, minimized over its region (stronger)",
    "ignored": "the blank is not part of the abstract state (consistent, so mod3 and parity can store it)",
    "zero-aware": "minimized, with a value per blank region where the regions differ",
}
DEFAULT_BLANK = "minimized"

# how a table's values are stored; the order is the code in the table file's header (append only)
ENCODINGS: dict[str, str] = {
    "byte": "the distance, a byte per state",
    "nibble": "the excess over Manhattan, a nibble per state (capped at 15)",
    "mod3": "the distance mod 3, five states a byte (blank ignored only)",
    "parity": "one bit of the distance per state (blank ignored only)",
    "min-nibble": "the least excess over a group of ranks, a nibble per group (lossy)",
    "sparse": "the nonzero excesses, with a bit per state and a rank directory",
}
DEFAULT_ENCODING = "byte"
# encodings whose values only bound the distances from below: a table of them may drop by more than one per
# move even with the blank ignored
LOSSY_ENCODINGS = ("min-nibble",)

# the sets of pair and triple tables of the dynamic heuristics (pdbtool.tables.pairs_triples)
# (docs/design.md, "The sets", says how they differ)
DYNAMIC_SETS = ("pairs", "pairs+triples", "pairs+triples-fkh", "pairs-region", "pairs+triples-region")
DEFAULT_DYNAMIC_SET = "pairs+triples"

# duplicate-path pruning of the search (pdbtool.search.move_automaton): the parent's inverse move only, or
# the move automaton
PRUNING_RULES = ("parent", "fsm")
DEFAULT_PRUNING = "parent"
# boards whose default is another rule, chosen by measurement (docs/frontier-24.md): on the 24-puzzle the
# automaton saves more CPU than any heuristic measured so far, and the published counts stay one
# `--pruning parent` away
DEFAULT_PRUNING_BY_DIMS = {"5x5": "fsm"}


def default_pruning(dims: str) -> str:
    """The pruning rule a search on a board of ``dims`` (``"WxH"``) uses when none is asked for."""
    return DEFAULT_PRUNING_BY_DIMS.get(dims, DEFAULT_PRUNING)


# the longest duplicates the automaton prunes (``--fsm-depth``): longer ones prune more nodes, but the
# automaton grows about fivefold per two moves (slower to build, more cache misses per node)
DEFAULT_FSM_DEPTH = 12
# on the 24-puzzle's long searches a deeper one pays (docs/pruning.md); it is kept in the table cache
DEFAULT_FSM_DEPTH_BY_DIMS = {"5x5": 16}


def default_fsm_depth(dims: str) -> int:
    """The automaton's depth on a board of ``dims`` when none is asked for."""
    return DEFAULT_FSM_DEPTH_BY_DIMS.get(dims, DEFAULT_FSM_DEPTH)


def choose(kind: str, names, name: str):
    """``name``'s entry in ``names`` (one of the kinds above; the name itself where they are a tuple), or a
    one-line error that lists the choices."""
    if name not in names:
        raise RegistryError(f"unknown {kind} {name!r}: choose one of {', '.join(names)}")
    return names[name] if isinstance(names, dict) else name


def heuristic(name: str) -> Heuristic:
    return choose("heuristic", HEURISTICS, name)


def heuristics_with(attribute: str) -> tuple[str, ...]:
    """The names of the heuristics whose entry has ``attribute`` (``partition``, ``dynamic``, ``encodings``)."""
    return tuple(h.name for h in HEURISTICS.values() if getattr(h, attribute))


def help_text(names: dict) -> str:
    """``name: description; ...`` for a ``--help`` line (heuristics or a dict of descriptions)."""
    return "; ".join(f"{k}: {v.help if isinstance(v, Heuristic) else v}" for k, v in names.items())


__all__ = ["RegistryError", "Heuristic", "HEURISTIC_INPUTS", "HEURISTICS", "DEFAULT_HEURISTIC", "BLANK_RULES",
           "DEFAULT_BLANK", "ENCODINGS", "DEFAULT_ENCODING", "DYNAMIC_SETS", "DEFAULT_DYNAMIC_SET", "PRUNING_RULES",
           "DEFAULT_PRUNING", "DEFAULT_PRUNING_BY_DIMS", "default_pruning",
           "DEFAULT_FSM_DEPTH", "DEFAULT_FSM_DEPTH_BY_DIMS", "default_fsm_depth", "choose",
           "heuristic", "heuristics_with", "help_text"]
