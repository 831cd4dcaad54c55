"""The names of the dynamic sets of pair and triple tables (:mod:`.pairs_triples`), in a module that
loads no Numba, so that the command line can offer them in ``--help``."""

DYNAMIC_SETS = ("pairs", "pairs+triples", "pairs+triples-fkh", "pairs-region", "pairs+triples-region")
