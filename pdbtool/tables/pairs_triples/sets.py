"""What a dynamic set is: its definition (group sizes, region values, which triples are kept), the groups
of tiles, the names of its files' sets, and the largest set a board may have."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from math import comb, perm

from ...errors import PdbtoolError
from ...puzzle.board import Board
from ..dynamic_sets import DYNAMIC_SETS

ENCODING = "excess"
# a pair's unit byte when its value depends on the blank's region (rows with v = 0 give it per region)
PAIR_BY_REGION = 255


class DynamicError(PdbtoolError):
    pass


TRIPLE_RULES = ("cover", "sum")
KEEP_AGAINST = ("values", "minimized")
GOAL_RULES = ("region", "anywhere")


@dataclass(frozen=True)
class SetDefinition:
    """What a dynamic set name means: group sizes, whether values follow the blank's region, which triples
    are kept (``"cover"``: beyond their pairs' least cover; ``"sum"``: beyond the sum of their pairs) and
    against which pair values (``"values"``: those the set looks up, by region in a ``-region`` set;
    ``"minimized"``: the blank-minimized ones, which keeps more triples and gives the same cover).

    The named sets use the default ``keep_against``; :func:`make_lookups` also takes a definition of its
    own, so that variants of the published definition can be measured (``bench/bench_dynamic_variants.py``)."""

    sizes: tuple[int, ...]
    regions: bool
    triple_rule: str
    keep_against: str = "values"

    def __post_init__(self):
        if self.triple_rule not in TRIPLE_RULES or self.keep_against not in KEEP_AGAINST or \
                not set(self.sizes) <= {2, 3} or 2 not in self.sizes:
            raise DynamicError(f"bad dynamic set definition {self}")


def parse_set(name: str) -> SetDefinition:
    if name not in DYNAMIC_SETS:
        raise DynamicError(f"unknown dynamic set {name!r}: choose one of {', '.join(DYNAMIC_SETS)}")
    sizes = (2, 3) if name.startswith("pairs+triples") else (2,)
    return SetDefinition(sizes, name.endswith("-region"), "sum" if name.endswith("-fkh") else "cover")


def check_set(name: str) -> tuple[int, ...]:
    """Group sizes of a dynamic set name: ``pairs`` -> (2,), ``pairs+triples`` -> (2, 3), ..."""
    return parse_set(name).sizes


def groups_of(board: Board, k: int) -> list[tuple[int, ...]]:
    return list(combinations(range(1, board.n), k))


def set_name(k: int) -> str:
    return {2: "pairs", 3: "triples"}[k]


# the largest set of excess tables (bytes, one per placement) a board may have: 6x6's triples take 280 MB and
# 7x7's 1.9 GB; 8x8's would take 9.9 GB, and their look-ups (n**4 keys, several words each) more
MAX_SET_BYTES = 1 << 31


def check_size(board: Board, name: str) -> None:
    """Refuse a set whose tables would not fit (:data:`MAX_SET_BYTES`), before anything is built."""
    for k in parse_set(name).sizes:
        size = comb(board.n - 1, k) * perm(board.n, k)
        if size > MAX_SET_BYTES:
            raise DynamicError(f"the dynamic {set_name(k)} of {board.dims} would take {size / 1e9:.1f} GB "
                               f"({comb(board.n - 1, k):,} tables of {perm(board.n, k):,} placements); at most "
                               f"{MAX_SET_BYTES / 1e9:.1f} GB are supported: use a smaller board or --dynamic pairs")
