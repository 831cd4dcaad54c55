"""Instances of multiple sequence alignment: the sequences of one FASTA file.

A FASTA file is a list of records, each a header line ``>NAME description`` and the lines of its sequence;
blank lines and a trailing ``*`` (a stop) are ignored, letters are read in either case.  One file is one
instance.  Every input is checked here, before a kernel sees it: the file is FASTA, has two or more
sequences, none empty, every letter belongs to the alphabet (protein or DNA; ``auto`` takes DNA when every
letter is one of ACGTN), and the sizes stay within what the search can index.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import xxhash

from ..errors import PdbtoolError
from .costs import DNA_LETTERS, PROTEIN_LETTERS

MAX_FILE_BYTES = 64 << 20
MAX_SEQUENCES = 12        # 2**k - 1 moves a node; a move is a 16-bit mask
MAX_LENGTH = 100_000
ALPHABETS = ("auto", "protein", "dna")
SUFFIXES = (".fasta", ".fa", ".faa", ".fas")


class InstanceError(PdbtoolError):
    """A FASTA file that is not an instance this domain can solve."""


@dataclass(frozen=True)
class Instance:
    """The sequences of one file (upper case, in file order), their names and alphabet."""

    id: str
    names: tuple[str, ...]
    sequences: tuple[str, ...]
    alphabet: str
    source: str = ""
    digest: str = field(default="", compare=False)

    @property
    def k(self) -> int:
        return len(self.sequences)

    @property
    def lengths(self) -> tuple[int, ...]:
        return tuple(len(s) for s in self.sequences)

    def sequence_hash(self) -> str:
        """A hash of the sequences alone (names left out), in order: what a table built for them depends on."""
        return xxhash.xxh64("\n".join(self.sequences).encode()).hexdigest()


def parse_fasta(text: str, name: str = "-", alphabet: str = "auto", source: str = "") -> Instance:
    """The instance a FASTA text holds (``name``: how messages name it)."""
    if alphabet not in ALPHABETS:
        raise InstanceError(f"unknown alphabet {alphabet!r} (auto, protein or dna)")
    names: list[str] = []
    chunks: list[list[str]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(";"):
            continue
        if line.startswith(">"):
            names.append(line[1:].strip().split()[0] if line[1:].strip() else f"seq{len(names) + 1}")
            chunks.append([])
            continue
        if not chunks:
            raise InstanceError(f"{name}: not FASTA (line {number} comes before any '>' header)")
        chunks[-1].append("".join(line.split()).upper())
    if not names:
        raise InstanceError(f"{name}: not FASTA (no '>' header line)")
    sequences = ["".join(c).removesuffix("*") for c in chunks]
    for n, s in zip(names, sequences):
        if not s:
            raise InstanceError(f"{name}: the sequence {n} is empty")
    if len(sequences) < 2:
        raise InstanceError(f"{name}: one sequence ({names[0]}); an alignment needs two or more")
    if len(sequences) > MAX_SEQUENCES:
        raise InstanceError(f"{name}: {len(sequences)} sequences; an exact alignment here takes at most "
                            f"{MAX_SEQUENCES} (its lattice has 2**k - 1 moves a node)")
    for n, s in zip(names, sequences):
        if len(s) > MAX_LENGTH:
            raise InstanceError(f"{name}: the sequence {n} has {len(s):,} residues, more than the "
                                f"{MAX_LENGTH:,} a sequence may have")
    letters = set("".join(sequences))
    if alphabet == "auto":
        alphabet = "dna" if letters <= set(DNA_LETTERS) else "protein"
    allowed = set(DNA_LETTERS if alphabet == "dna" else PROTEIN_LETTERS)
    for n, s in zip(names, sequences):
        bad = sorted(set(s) - allowed)
        if bad:
            shown = ", ".join(repr(c) if not c.isalpha() else c for c in bad[:12])
            raise InstanceError(f"{name}: the sequence {n} has letters outside the {alphabet} alphabet "
                                f"({DNA_LETTERS if alphabet == 'dna' else PROTEIN_LETTERS}): {shown}")
    return Instance(name, tuple(names), tuple(sequences), alphabet, source)


def read_fasta(path: str | os.PathLike, alphabet: str = "auto", name: str | None = None) -> Instance:
    """The instance in a FASTA file (``-``: standard input); its id is the file's stem."""
    import sys

    if str(path) == "-":
        data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
        label, ident = "-", name or "stdin"
    else:
        p = Path(path)
        label, ident = str(p), name or p.stem
        try:
            if p.is_dir():
                raise InstanceError(f"{p}: a directory, not a FASTA file")
            size = p.stat().st_size
            if size > MAX_FILE_BYTES:
                raise InstanceError(f"{p}: {size:,} bytes, larger than the {MAX_FILE_BYTES >> 20} MiB a FASTA "
                                    f"instance may have")
            with open(p, "rb") as f:
                data = f.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise InstanceError(f"{p}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise InstanceError(f"{label}: larger than the {MAX_FILE_BYTES >> 20} MiB a FASTA instance may have")
    if b"\0" in data:
        raise InstanceError(f"{label}: not FASTA (a binary file)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InstanceError(f"{label}: not FASTA (not UTF-8 text)") from None
    inst = parse_fasta(text, label, alphabet, source=label)
    digest = xxhash.xxh64(data).hexdigest()
    return Instance(ident, inst.names, inst.sequences, inst.alphabet, label, digest)


def expand_paths(paths: list[str]) -> list[str]:
    """The FASTA files named: files as given, directories by their FASTA files (sorted), ``-`` kept."""
    out: list[str] = []
    for p in paths:
        if p != "-" and os.path.isdir(p):
            found = sorted(str(q) for q in Path(p).iterdir() if q.suffix.lower() in SUFFIXES and q.is_file())
            if not found:
                raise InstanceError(f"{p}: a directory with no FASTA files ({', '.join(SUFFIXES)})")
            out.extend(found)
        else:
            out.append(p)
    return out


def format_fasta(names, rows, width: int = 60) -> str:
    lines = []
    for n, r in zip(names, rows):
        lines.append(f">{n}")
        lines.extend(r[i:i + width] for i in range(0, len(r), width))
    return "\n".join(lines) + "\n"


def format_clustal(names, rows, width: int = 60) -> str:
    """A Clustal-like text: blocks of ``width`` columns, each row's name and its residue count so far, and a
    line marking the columns with one letter throughout (``*``)."""
    pad = max(len(n) for n in names) + 2
    counts = [0] * len(rows)
    out = ["CLUSTAL-like multiple sequence alignment (pdbtool, optimal sum of pairs)", ""]
    length = len(rows[0]) if rows else 0
    for start in range(0, length, width):
        for i, (n, r) in enumerate(zip(names, rows)):
            block = r[start:start + width]
            counts[i] += sum(c != "-" for c in block)
            out.append(f"{n:<{pad}}{block} {counts[i]}")
        marks = "".join("*" if len({r[c] for r in rows}) == 1 and rows[0][c] != "-" else " "
                        for c in range(start, min(start + width, length)))
        out.append(" " * pad + marks)
        out.append("")
    return "\n".join(out)
