"""The instances of ``bench/bench_msa.py``: BAliBASE reference 1 from its tarball, and synthetic families.

BAliBASE reference 1 (Thompson, Plewniak & Poch 1999) as PA-Star's repository holds it
(``seqs/Balibase/Ref1/<group>/<name>.fasta``, 82 instances of 3 to 6 sequences in nine groups: short,
medium or long sequences, low, medium or high identity).  The tarball stays outside the repository; the
benchmark takes its path and unpacks it into a scratch folder.

Synthetic families come from ``pdbtool random --domain msa`` when that command exists; until then from
:func:`family` here: a random ancestor, each member a copy of it with point substitutions and short
insertions and deletions, all drawn from a seeded generator, so that a family is the same on every run.
"""

from __future__ import annotations

import random
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BALIBASE = ROOT.parent / "shared" / "data" / "msa" / "balibase_ref1.tar.gz"
if not DEFAULT_BALIBASE.exists():
    DEFAULT_BALIBASE = Path("/work/shared/data/msa/balibase_ref1.tar.gz")

# amino-acid background frequencies (Robinson & Robinson 1991, as used by BLAST), ARNDCQEGHILKMFPSTWYV
AMINO = "ARNDCQEGHILKMFPSTWYV"
FREQ = [0.07805, 0.05129, 0.04487, 0.05364, 0.01925, 0.04264, 0.06295, 0.07377, 0.02199, 0.05142, 0.09019,
        0.05744, 0.02243, 0.03856, 0.05203, 0.07120, 0.05841, 0.01330, 0.03216, 0.06441]

# the families of issue 54: sequences x ancestor length
FAMILIES = ["4x300", "5x120", "5x200", "6x60", "6x90"]
SUBSTITUTION = 0.25     # per residue of a member: replaced by a random residue
INDEL = 0.02            # per residue: an insertion or a deletion starts here (half each)
MAX_INDEL = 4           # its length, 1 to this


@dataclass(frozen=True)
class Instance:
    name: str
    group: str
    path: Path
    lengths: tuple[int, ...]

    @property
    def k(self) -> int:
        return len(self.lengths)

    @property
    def size(self) -> float:
        """How hard it looks: the lattice's size, the product of (length + 1)."""
        out = 1.0
        for n in self.lengths:
            out *= n + 1
        return out


def fasta_lengths(path: Path) -> tuple[int, ...]:
    lengths: list[int] = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if line.startswith(">"):
            lengths.append(0)
        elif line and lengths:
            lengths[-1] += len(line)
    return tuple(lengths)


def balibase(tarball: Path, scratch: Path) -> list[Instance]:
    """The reference-1 instances of ``tarball``, unpacked below ``scratch`` (once), in the groups' order."""
    tarball = Path(tarball)
    if not tarball.is_file():
        raise SystemExit(f"no BAliBASE tarball at {tarball} (give --balibase PATH)")
    folder = scratch / "balibase"
    stamp = folder / ".from"
    if not (stamp.exists() and stamp.read_text() == f"{tarball.resolve()} {tarball.stat().st_size}"):
        folder.mkdir(parents=True, exist_ok=True)
        with tarfile.open(tarball) as tar:
            members = [m for m in tar.getmembers()
                       if not m.name.startswith("/") and ".." not in Path(m.name).parts]
            tar.extractall(folder, members=members)
        stamp.write_text(f"{tarball.resolve()} {tarball.stat().st_size}")
    out = []
    for path in sorted(folder.rglob("*.fasta")):
        out.append(Instance(path.stem, path.parent.name, path, fasta_lengths(path)))
    out.sort(key=lambda i: (i.group, i.name))
    return out


def parse_family(spec: str) -> tuple[int, int]:
    m = re.fullmatch(r"(\d+)x(\d+)", spec.strip())
    if not m or not (2 <= int(m.group(1)) <= 12 and 1 <= int(m.group(2)) <= 100_000):
        raise SystemExit(f"a family is SEQUENCESxLENGTH such as 6x90 (2 to 12 sequences), not {spec!r}")
    return int(m.group(1)), int(m.group(2))


def family(k: int, length: int, seed: int) -> list[str]:
    """``k`` sequences descended from one random ancestor of ``length`` residues (a star phylogeny)."""
    rng = random.Random(f"msa-family-{k}x{length}-{seed}")
    ancestor = rng.choices(AMINO, weights=FREQ, k=length)
    members = []
    for _ in range(k):
        out: list[str] = []
        at = 0
        while at < len(ancestor):
            r = rng.random()
            if r < INDEL / 2:                          # a deletion of 1 to MAX_INDEL residues
                at += rng.randint(1, MAX_INDEL)
                continue
            if r < INDEL:                              # an insertion of 1 to MAX_INDEL before this residue
                out += rng.choices(AMINO, weights=FREQ, k=rng.randint(1, MAX_INDEL))
            residue = ancestor[at]
            out.append(rng.choices(AMINO, weights=FREQ)[0] if rng.random() < SUBSTITUTION else residue)
            at += 1
        members.append("".join(out) or rng.choice(AMINO))
    return members


def pdbtool_random(k: int, length: int, seed: int, folder: Path) -> Path | None:
    """The family ``pdbtool random --domain msa -k K --length N --seed S`` writes (its defaults for the
    rates), or None when pdbtool has no such command."""
    try:
        from pdbtool.msa.commands import COMMANDS
    except ImportError:
        return None
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()) as said:
        COMMANDS["random"].main(["-k", str(k), "--length", str(length), "--seed", str(seed),
                                 "--output-dir", str(folder)],
                                prog_name="pdbtool random --domain msa", standalone_mode=False)
    return Path(said.getvalue().strip().splitlines()[-1])


def synthetic(specs: list[str], seed: int, scratch: Path) -> tuple[list[Instance], dict]:
    """The families ``specs`` as FASTA files below ``scratch``, and where they came from."""
    folder = scratch / "synthetic"
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    source: dict = {}
    for spec in specs:
        k, length = parse_family(spec)
        path = pdbtool_random(k, length, seed, folder)
        if path is not None:
            source.setdefault("commands", []).append(path.read_text().splitlines()[0].lstrip(";"))
            source.update(generator="pdbtool random --domain msa", seed=seed, command=source["commands"][-1])
            name = f"family-{k}x{length}-seed{seed}"
            lengths = fasta_lengths(path)
        else:
            source = {"generator": "bench/_msa_data.py family", "seed": seed, "substitution": SUBSTITUTION,
                      "indel": INDEL, "max_indel": MAX_INDEL}
            name = f"family-{k}x{length}-seed{seed}"
            seqs = family(k, length, seed)
            path = folder / f"{name}.fasta"
            path.write_text("".join(f">{name}-{i}\n{s}\n" for i, s in enumerate(seqs)))
            lengths = tuple(len(s) for s in seqs)
        out.append(Instance(name, f"{k}x{length}", path, lengths))
    return out, source
