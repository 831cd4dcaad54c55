"""Synthetic families of related sequences for benchmarks and tests: a random ancestor mutated
independently into k descendants by substitutions, deletions and insertions (a seeded model)."""

from __future__ import annotations

import numpy as np

from ..errors import PdbtoolError
from .costs import AMINO_ACIDS
from .sequences import MAX_LENGTH, MAX_SEQUENCES

DNA_BASES = "ACGT"


def family(k: int, length: int, seed: int, substitution: float = 0.2, indel: float = 0.05,
           alphabet: str = "protein") -> list[str]:
    """k descendants of a uniformly random ancestor of ``length`` residues: each residue of the ancestor is
    kept or replaced (probability ``substitution``), deleted (``indel / 2``), and followed by an inserted
    random residue (``indel / 2``), independently in each descendant; none is left empty."""
    if not 2 <= k <= MAX_SEQUENCES:
        raise PdbtoolError(f"a family has 2 to {MAX_SEQUENCES} sequences, not {k}")
    if not 1 <= length <= MAX_LENGTH:
        raise PdbtoolError(f"the ancestor has 1 to {MAX_LENGTH:,} residues, not {length}")
    for name, p in (("substitution", substitution), ("indel", indel)):
        if not 0.0 <= p <= 1.0:
            raise PdbtoolError(f"the {name} rate is a probability from 0 to 1, not {p}")
    letters = AMINO_ACIDS if alphabet == "protein" else DNA_BASES
    rng = np.random.default_rng(seed)
    ancestor = rng.integers(0, len(letters), length)
    out = []
    for _ in range(k):
        seq: list[int] = []
        for a in ancestor:
            r = rng.random()
            if r < indel / 2:
                continue
            seq.append(int(rng.integers(0, len(letters))) if rng.random() < substitution else int(a))
            if rng.random() < indel / 2:
                seq.append(int(rng.integers(0, len(letters))))
        if not seq:
            seq.append(int(ancestor[0]))
        out.append("".join(letters[v] for v in seq))
    return out
