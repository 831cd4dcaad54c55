"""The names of the dynamic sets of pair and triple tables (:mod:`.pairs_triples`), as listed in
:mod:`pdbtool.registry` (a module that loads no Numba, so that the command line can offer them in ``--help``)."""

from ..registry import DYNAMIC_SETS

__all__ = ["DYNAMIC_SETS"]
