"""The heuristic to sample or predict with, by name, from tables already in the cache.

Sampling and prediction never build a table (a build can take minutes to hours): a table that the cache
lacks is an error that names the ``pdbtool build`` command to run.
"""

from __future__ import annotations

from ..errors import PdbtoolError
from ..puzzle.board import Board


class MissingTableError(PdbtoolError):
    pass


def open_heuristic(name: str, board: Board | None = None, partition: str | None = None, reflect: bool = True,
                   cache_dir: str | None = None, dynamic: str | None = None, blank: str = "minimized",
                   build: bool = False):
    """(heuristic object, label) of ``name`` (``manhattan``, ``linear-conflict``, ``pdb``, ``ddb``, ``max``)
    on ``board`` (for ``pdb`` and ``max``: the partition's board when not given)."""
    from ..search.solver import Solver

    cache = None
    if name in ("pdb", "max") and not build:
        from ..tables.cache import TableCache
        from ..tables.operations import cached_files, partition_plan
        from ..tables.resolve import resolve_partition

        part = resolve_partition(partition, board)
        cache = TableCache(cache_dir)
        plan = partition_plan(part, blank)
        missing = [f for f in cached_files(cache, plan) if f.shared is None and not f.present]
        if missing:
            p = missing[0].pattern
            raise MissingTableError(f"the table of pattern {p} is not in the cache ({missing[0].path}): build it "
                                    f"with: pdbtool build --partition {partition or part.name} --blank {blank}")
        board = part.board
    # the heuristic alone: the analyses model the parent rule's tree, so no move automaton is built
    solver = Solver(board, heuristic=name, partition=partition, reflect=reflect, cache=cache, cache_dir=cache_dir,
                    dynamic=dynamic, blank=blank, pruning="parent")
    return solver.heuristic, solver.label


__all__ = ["open_heuristic", "MissingTableError"]
