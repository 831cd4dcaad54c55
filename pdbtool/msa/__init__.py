"""Multiple sequence alignment: optimal sum-of-pairs alignments by A* (and partial-expansion A*) over the
lattice of prefix lengths, with additive pairwise and three-way pattern databases (``--domain msa``)."""

from .costs import COSTS, CostModel, alignment_cost, make_model
from .search import Alignment, align
from .sequences import Instance, parse_fasta, read_fasta

__all__ = ["COSTS", "Alignment", "CostModel", "Instance", "align", "alignment_cost", "make_model", "parse_fasta",
           "read_fasta"]
