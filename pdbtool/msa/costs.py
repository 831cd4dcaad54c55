"""Cost models of sum-of-pairs alignment: a substitution cost for two residues in a column, a gap cost for a
residue against a gap, and a cost for two gaps in a column (nothing in the standard model).

Scores are turned into costs by ``cost(a, b) = s_max - s(a, b)`` (``s_max``: the matrix's largest entry
over the letters of the alphabet), which makes every cost non-negative.  With a linear gap cost ``g`` per
residue, minimising this cost is the same as maximising the sum-of-pairs score with a gap penalty of
``g - s_max / 2`` per residue (every pair's residue count is fixed, so the ``s_max`` terms add a constant).

``pastar`` is PA-Star's model (Sundfeld, Teodoro, de Melo; ``src/Cost.cpp`` and ``Node::pairCost``): its
cost matrix is derived from PAM250 on the 20 amino acids, a residue against a gap costs 30, and so do two gaps
in a column (its lattice move charges every pair of which not both sequences advance).  Letters its table
leaves unset (B, X) cost 0 against everything, as its zero-initialised table gives.  Its matrix is
``17 - PAM250`` but for four pairs (see ``_PASTAR``), so it is stored as PA-Star has it.

The substitution tables are NCBI's (``sm_pam250.c``, ``sm_blosum62.c``, public domain).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import PdbtoolError

MATRIX_LETTERS = "ARNDCQEGHILKMFPSTWYVBJZX"
_PAM250 = """
 2 -2  0  0 -2  0  0  1 -1 -1 -2 -1 -1 -3  1  1  1 -6 -3  0  0 -1  0 -1
-2  6  0 -1 -4  1 -1 -3  2 -2 -3  3  0 -4  0  0 -1  2 -4 -2 -1 -3  0 -1
 0  0  2  2 -4  1  1  0  2 -2 -3  1 -2 -3  0  1  0 -4 -2 -2  2 -3  1 -1
 0 -1  2  4 -5  2  3  1  1 -2 -4  0 -3 -6 -1  0  0 -7 -4 -2  3 -3  3 -1
-2 -4 -4 -5 12 -5 -5 -3 -3 -2 -6 -5 -5 -4 -3  0 -2 -8  0 -2 -4 -5 -5 -1
 0  1  1  2 -5  4  2 -1  3 -2 -2  1 -1 -5  0 -1 -1 -5 -4 -2  1 -2  3 -1
 0 -1  1  3 -5  2  4  0  1 -2 -3  0 -2 -5 -1  0  0 -7 -4 -2  3 -3  3 -1
 1 -3  0  1 -3 -1  0  5 -2 -3 -4 -2 -3 -5  0  1  0 -7 -5 -1  0 -4  0 -1
-1  2  2  1 -3  3  1 -2  6 -2 -2  0 -2 -2  0 -1 -1 -3  0 -2  1 -2  2 -1
-1 -2 -2 -2 -2 -2 -2 -3 -2  5  2 -2  2  1 -2 -1  0 -5 -1  4 -2  3 -2 -1
-2 -3 -3 -4 -6 -2 -3 -4 -2  2  6 -3  4  2 -3 -3 -2 -2 -1  2 -3  5 -3 -1
-1  3  1  0 -5  1  0 -2  0 -2 -3  5  0 -5 -1  0  0 -3 -4 -2  1 -3  0 -1
-1  0 -2 -3 -5 -1 -2 -3 -2  2  4  0  6  0 -2 -2 -1 -4 -2  2 -2  3 -2 -1
-3 -4 -3 -6 -4 -5 -5 -5 -2  1  2 -5  0  9 -5 -3 -3  0  7 -1 -4  2 -5 -1
 1  0  0 -1 -3  0 -1  0  0 -2 -3 -1 -2 -5  6  1  0 -6 -5 -1 -1 -2  0 -1
 1  0  1  0  0 -1  0  1 -1 -1 -3  0 -2 -3  1  2  1 -2 -3 -1  0 -2  0 -1
 1 -1  0  0 -2 -1  0  0 -1  0 -2  0 -1 -3  0  1  3 -5 -3  0  0 -1 -1 -1
-6  2 -4 -7 -8 -5 -7 -7 -3 -5 -2 -3 -4  0 -6 -2 -5 17  0 -6 -5 -3 -6 -1
-3 -4 -2 -4  0 -4 -4 -5  0 -1 -1 -4 -2  7 -5 -3 -3  0 10 -2 -3 -1 -4 -1
 0 -2 -2 -2 -2 -2 -2 -1 -2  4  2 -2  2 -1 -1 -1  0 -6 -2  4 -2  2 -2 -1
 0 -1  2  3 -4  1  3  0  1 -2 -3  1 -2 -4 -1  0  0 -5 -3 -2  3 -3  2 -1
-1 -3 -3 -3 -5 -2 -3 -4 -2  3  5 -3  3  2 -2 -2 -1 -3 -1  2 -3  5 -2 -1
 0  0  1  3 -5  3  3  0  2 -2 -3  0 -2 -5  0  0 -1 -6 -4 -2  2 -2  3 -1
-1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1
"""
_BLOSUM62 = """
 4 -1 -2 -2  0 -1 -1  0 -2 -1 -1 -1 -1 -2 -1  1  0 -3 -2  0 -2 -1 -1 -1
-1  5  0 -2 -3  1  0 -2  0 -3 -2  2 -1 -3 -2 -1 -1 -3 -2 -3 -1 -2  0 -1
-2  0  6  1 -3  0  0  0  1 -3 -3  0 -2 -3 -2  1  0 -4 -2 -3  4 -3  0 -1
-2 -2  1  6 -3  0  2 -1 -1 -3 -4 -1 -3 -3 -1  0 -1 -4 -3 -3  4 -3  1 -1
 0 -3 -3 -3  9 -3 -4 -3 -3 -1 -1 -3 -1 -2 -3 -1 -1 -2 -2 -1 -3 -1 -3 -1
-1  1  0  0 -3  5  2 -2  0 -3 -2  1  0 -3 -1  0 -1 -2 -1 -2  0 -2  4 -1
-1  0  0  2 -4  2  5 -2  0 -3 -3  1 -2 -3 -1  0 -1 -3 -2 -2  1 -3  4 -1
 0 -2  0 -1 -3 -2 -2  6 -2 -4 -4 -2 -3 -3 -2  0 -2 -2 -3 -3 -1 -4 -2 -1
-2  0  1 -1 -3  0  0 -2  8 -3 -3 -1 -2 -1 -2 -1 -2 -2  2 -3  0 -3  0 -1
-1 -3 -3 -3 -1 -3 -3 -4 -3  4  2 -3  1  0 -3 -2 -1 -3 -1  3 -3  3 -3 -1
-1 -2 -3 -4 -1 -2 -3 -4 -3  2  4 -2  2  0 -3 -2 -1 -2 -1  1 -4  3 -3 -1
-1  2  0 -1 -3  1  1 -2 -1 -3 -2  5 -1 -3 -1  0 -1 -3 -2 -2  0 -3  1 -1
-1 -1 -2 -3 -1  0 -2 -3 -2  1  2 -1  5  0 -2 -1 -1 -1 -1  1 -3  2 -1 -1
-2 -3 -3 -3 -2 -3 -3 -3 -1  0  0 -3  0  6 -4 -2 -2  1  3 -1 -3  0 -3 -1
-1 -2 -2 -1 -3 -1 -1 -2 -2 -3 -3 -1 -2 -4  7 -1 -1 -4 -3 -2 -2 -3 -1 -1
 1 -1  1  0 -1  0  0  0 -1 -2 -2  0 -1 -2 -1  4  1 -3 -2 -2  0 -2  0 -1
 0 -1  0 -1 -1 -1 -1 -2 -2 -1 -1 -1 -1 -2 -1  1  5 -2 -2  0 -1 -1 -1 -1
-3 -3 -4 -4 -2 -2 -3 -2 -2 -3 -2 -3 -1  1 -4 -3 -2 11  2 -3 -4 -2 -2 -1
-2 -2 -2 -3 -2 -1 -2 -3  2 -1 -1 -2 -1  3 -3 -2 -2  2  7 -1 -3 -1 -2 -1
 0 -3 -3 -3 -1 -2 -2 -3 -3  3  1 -2  1 -1 -2 -2  0 -3 -1  4 -3  2 -2 -1
-2 -1  4  4 -3  0  1 -1  0 -3 -4  0 -3 -3 -2  0 -1 -4 -3 -3  4 -3  0 -1
-1 -2 -3 -3 -1 -2 -3 -4 -3  3  3 -3  2  0 -3 -2 -1 -2 -1  2 -3  3 -3 -1
-1  0  0  1 -3  4  4 -2  0 -3 -3  1 -1 -3 -1  0 -1 -2 -2 -2  0 -3  4 -1
-1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1
"""

AMINO_ACIDS = "ACDEFGHIKLMNPQRSTVWY"
# PA-Star's cost matrix (src/Cost.cpp, set_cost_pam250), lower triangle in AMINO_ACIDS order.  It is
# 17 - PAM250 except A-F, F-N, G-P and N-P, one higher than NCBI's PAM250 gives (an older PAM250 printing).
_PASTAR = """
A 15
C 19  5
D 17 22 13
E 17 22 14 13
F 21 21 23 22  8
G 16 20 16 17 22 12
H 18 20 16 16 19 19 11
I 18 19 19 19 16 20 19 12
K 18 22 17 17 22 19 17 19 12
L 19 23 21 20 15 21 19 15 20 11
M 18 22 20 19 17 20 19 15 17 13 11
N 17 21 15 16 21 17 15 19 16 20 19 15
P 16 20 18 18 22 18 17 19 18 20 19 18 11
Q 17 22 15 15 22 18 14 19 16 19 18 16 17 13
R 19 21 18 18 21 20 15 19 14 20 17 17 17 16 11
S 16 17 17 17 20 16 18 18 17 20 19 16 16 18 17 15
T 16 19 17 17 20 17 18 17 17 19 18 17 17 18 18 16 14
V 17 19 19 19 18 18 19 13 19 15 15 19 18 19 19 18 17 13
W 23 25 24 24 17 24 20 22 20 19 21 21 23 22 15 19 22 23  0
Y 20 17 21 21 10 22 17 18 21 18 19 19 22 21 21 20 20 19 17  7
"""
PROTEIN_LETTERS = AMINO_ACIDS + "BZX"      # the 20 and the ambiguity codes both matrices score
PASTAR_LETTERS = AMINO_ACIDS + "BX"        # Z indexes past the end of PA-Star's table: refused
DNA_LETTERS = "ACGTN"

COSTS = ("pastar", "pam250", "blosum62", "dna")
GAP_MODELS = ("linear", "affine")
DEFAULT_GAP = {"pastar": 30, "pam250": 30, "blosum62": 20, "dna": 2}
DEFAULT_GAP_OPEN = {"pam250": 40, "blosum62": 20, "dna": 3}
PASTAR_GAP = 30


def pastar_table() -> dict[tuple[str, str], int]:
    """PA-Star's cost of each pair of the 20 amino acids."""
    out = {}
    for line in _PASTAR.strip().splitlines():
        a, *values = line.split()
        for b, v in zip(AMINO_ACIDS, values):
            out[a, b] = out[b, a] = int(v)
    return out


def score_table(name: str) -> dict[tuple[str, str], int]:
    """A published substitution matrix as ``{(a, b): score}`` over :data:`MATRIX_LETTERS`."""
    text = {"pam250": _PAM250, "blosum62": _BLOSUM62}[name]
    rows = [[int(v) for v in line.split()] for line in text.strip().splitlines()]
    return {(a, b): rows[i][j] for i, a in enumerate(MATRIX_LETTERS) for j, b in enumerate(MATRIX_LETTERS)}


class CostError(PdbtoolError):
    """A cost model that cannot be built (an option value it does not take)."""


@dataclass(frozen=True)
class CostModel:
    """A sum-of-pairs cost model over an alphabet: ``sub[i, j]`` the cost of letters ``i`` and ``j`` (indices
    into ``letters``) in one column, ``gap`` a residue against a gap (per residue), ``gap_open`` added once
    per gap run (0: linear gaps), ``gap_gap`` two gaps in one column."""

    name: str
    letters: str
    sub: np.ndarray
    gap: int
    gap_open: int = 0
    gap_gap: int = 0

    @property
    def affine(self) -> bool:
        return self.gap_open > 0

    def identity(self) -> dict:
        """What a table built under this model depends on (stored in its header, hashed into its name)."""
        return {"cost": self.name, "letters": self.letters, "gap": self.gap, "gap_open": self.gap_open,
                "gap_gap": self.gap_gap, "matrix": [int(v) for v in self.sub.reshape(-1)]}

    def describe(self) -> str:
        gaps = f"gap {self.gap}" if not self.affine else f"gap open {self.gap_open} + {self.gap} per residue"
        extra = f", two gaps {self.gap_gap}" if self.gap_gap else ""
        return f"{self.name} ({gaps}{extra})"

    def pair_cost(self, a: str, b: str) -> int:
        """The cost of one column of a pair (``-`` a gap), linear gaps."""
        if a == "-" and b == "-":
            return self.gap_gap
        if a == "-" or b == "-":
            return self.gap
        return int(self.sub[self.letters.index(a), self.letters.index(b)])


def make_model(cost: str = "pastar", alphabet: str = "protein", gap: int | None = None,
               gap_open: int | None = None, gaps: str = "linear") -> CostModel:
    """The cost model ``cost`` over ``alphabet`` (``protein`` or ``dna``) with ``gaps`` linear or affine."""
    if cost not in COSTS:
        raise CostError(f"unknown cost model {cost!r} (one of {', '.join(COSTS)})")
    if gaps not in GAP_MODELS:
        raise CostError(f"unknown gap model {gaps!r} (linear or affine)")
    if gap is not None and not 0 <= gap <= 10_000:
        raise CostError(f"the gap cost is a whole number from 0 to 10000, not {gap}")
    if gap_open is not None and not 0 <= gap_open <= 10_000:
        raise CostError(f"the gap opening cost is a whole number from 0 to 10000, not {gap_open}")
    if cost == "dna" and alphabet != "dna" or cost in ("pastar", "pam250", "blosum62") and alphabet != "protein":
        raise CostError(f"the {cost} costs are for {'DNA' if cost == 'dna' else 'protein'} sequences, and these "
                        f"are {alphabet} (choose --cost {'dna' if alphabet == 'dna' else 'pam250 or blosum62'})")
    if cost == "pastar":
        if gaps != "linear" or gap_open:
            raise CostError("the pastar cost model has PA-Star's linear gap cost of 30; affine gaps need "
                            "--cost pam250, blosum62 or dna")
        if gap is not None and gap != PASTAR_GAP:
            raise CostError("the pastar cost model's gap cost is PA-Star's 30; other gap costs need "
                            "--cost pam250, blosum62 or dna")
        table = pastar_table()
        letters = PASTAR_LETTERS
        sub = np.zeros((len(letters), len(letters)), dtype=np.int32)
        for i, a in enumerate(AMINO_ACIDS):
            for j, b in enumerate(AMINO_ACIDS):
                sub[i, j] = table[a, b]
        return CostModel("pastar", letters, sub, PASTAR_GAP, 0, PASTAR_GAP)
    if cost == "dna":
        letters = DNA_LETTERS
        sub = np.ones((5, 5), dtype=np.int32) - np.eye(5, dtype=np.int32)
        sub[4, 4] = 1   # N is any base: never a sure match
    else:
        scores = score_table(cost)
        letters = PROTEIN_LETTERS
        top = max(scores[a, b] for a in letters for b in letters)
        sub = np.array([[top - scores[a, b] for b in letters] for a in letters], dtype=np.int32)
    if gaps == "affine":
        return CostModel(cost, letters, sub, DEFAULT_GAP[cost] if gap is None else gap,
                         DEFAULT_GAP_OPEN[cost] if gap_open is None else gap_open, 0)
    if gap_open:
        raise CostError("a gap opening cost needs --gaps affine")
    return CostModel(cost, letters, sub, DEFAULT_GAP[cost] if gap is None else gap, 0, 0)


def alignment_cost(model: CostModel, rows: list[str]) -> int:
    """The sum-of-pairs cost of an alignment (rows of equal length, ``-`` a gap), recomputed column by column.

    Affine gaps are charged per pair as a pairwise alignment would be: the columns where both are gaps are
    dropped from the pair first, then each run of gaps in one sequence costs ``gap_open`` once."""
    if not rows or any(len(r) != len(rows[0]) for r in rows):
        raise CostError("the alignment's rows differ in length")
    index = {c: i for i, c in enumerate(model.letters)}
    total = 0
    k = len(rows)
    for i in range(k):
        for j in range(i + 1, k):
            state = 0   # 0: the last kept column was a match, 1: a gap in row i, 2: a gap in row j
            for a, b in zip(rows[i], rows[j]):
                if a == "-" and b == "-":
                    total += model.gap_gap
                    continue
                if a == "-":
                    total += model.gap + (model.gap_open if state != 1 else 0)
                    state = 1
                elif b == "-":
                    total += model.gap + (model.gap_open if state != 2 else 0)
                    state = 2
                else:
                    total += int(model.sub[index[a], index[b]])
                    state = 0
    return total
