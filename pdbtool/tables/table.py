"""PatternTable: a pattern's distance table with its identity (board, goal, tiles, blank rule, encoding)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import encodings
from . import fileformat
from ..puzzle.board import Board
from .ranking import TilePattern

UNREACHABLE = 255


@dataclass
class PatternTable:
    """Distances of every placement of a pattern, indexed by rank (``values[rank]``, 255 = unreachable)."""

    pattern: TilePattern
    blank: str
    values: np.ndarray
    encoding: str = "byte"
    encoding_params: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    header: dict[str, Any] = field(default_factory=dict)
    stamp: tuple[int, ...] | None = None    # the loaded file's (see fileformat.TableFile.stamp)

    # --- identity -----------------------------------------------------------------------------------
    @property
    def board(self) -> Board:
        return self.pattern.board

    @property
    def entries(self) -> int:
        return table_entries(self.pattern, self.blank)

    def identity(self) -> dict[str, Any]:
        return identity_fields(self.pattern, self.blank, self.encoding, self.encoding_params)

    def lookup(self, cells, blank_cell: int | None = None) -> int:
        """Distance of a placement (cells of the pattern's tiles in ascending tile order), in any encoding;
        a zero-aware table needs the blank's cell too."""
        if self.blank == "zero-aware":
            if blank_cell is None or blank_cell in cells:
                raise ValueError("a zero-aware table is looked up with the blank's cell, a cell free of the pattern")
            from .zero_aware import layout_of

            return int(self.values[layout_of(self.pattern).index(cells, blank_cell)])
        rank = self.pattern.rank(cells)
        if self.encoding == "byte":
            return int(self.values[rank])
        if self.encoding in encodings.NEEDS_CONSISTENT:
            return encodings.exact_value(self.values, self.pattern, self.encoding, cells)
        shift = int(self.encoding_params.get("group", 1)).bit_length() - 1
        return int(encodings.value_of(encodings.CODES[self.encoding], self.values.view(np.uint8), rank,
                                      self.pattern.manhattan(cells), 0, shift))

    def decoded(self) -> np.ndarray:
        """The value of every rank as bytes (a decoding pass for the compact encodings)."""
        if self.encoding == "byte":
            return np.asarray(self.values)
        return encodings.decode(self.values, self.pattern, self.encoding, self.encoding_params)

    # --- statistics ------------------------------------------------------------------------------------
    def histogram(self) -> dict[int, int]:
        counts = byte_counts(self.decoded())
        return {int(v): int(c) for v, c in enumerate(counts) if c and v != UNREACHABLE}

    def stats(self) -> dict[str, Any]:
        hist = self.histogram()
        reached = sum(hist.values())
        mean = sum(v * c for v, c in hist.items()) / reached if reached else 0.0
        stats = {"histogram": hist, "reached": reached, "unreachable": self.entries - reached,
                 "mean": mean, "max": max(hist) if hist else 0,
                 "bits_per_entry": 8 * int(np.asarray(self.values).nbytes) / self.entries}
        conversion = self.header.get("conversion") or {}
        if "saturated" in conversion:   # nibble, sparse, min-nibble: entries whose excess exceeded 15
            stats["saturated"] = int(conversion["saturated"])
        return stats

    # --- files -------------------------------------------------------------------------------------------
    def save(self, path: str | Path, extra: dict[str, Any] | None = None) -> int:
        header = fileformat.make_header(**self.identity())
        if "max_value" not in (extra or {}):    # a converter passes the byte table's, sparing a decode
            header["max_value"] = self.stats()["max"]
        header.update(extra or {})
        return fileformat.save(path, header, self.values)

    @classmethod
    def load(cls, path: str | Path, verify_checksum: bool = True) -> "PatternTable":
        loaded = fileformat.load(path, verify_checksum=verify_checksum)
        return cls.from_file(loaded)

    @classmethod
    def from_file(cls, loaded: fileformat.TableFile, structure: bool = True) -> "PatternTable":
        """The table of a loaded file, after checking that its header describes a valid pattern table and,
        unless ``structure`` is False (``inspect`` of a file whose checksum already failed), that the
        payload's internal structure is sound, so that no look-up reads outside it."""
        h = loaded.header
        if h.get("kind", "pattern") != "pattern":
            raise fileformat.TableFileError(f"{loaded.path}: a {fileformat.clip(h['kind'])} file, not a "
                                            f"pattern table")
        path = loaded.path
        try:
            board = Board(_whole(h["width"]), _whole(h["height"]), tuple(_whole(c) for c in _listed(h["goal"])))
            pattern = TilePattern(board, tuple(_whole(t) for t in _listed(h["tiles"])))
        except (ValueError, TypeError) as exc:
            raise fileformat.TableFileError(f"{path}: damaged header ({exc})") from None
        if h["blank"] not in BLANK_RULES:
            raise fileformat.TableFileError(f"{path}: damaged header (blank rule {fileformat.clip(h['blank'])})")
        if not isinstance(h["encoding"], str) or not isinstance(h.get("encoding_params", {}), dict):
            raise fileformat.TableFileError(f"{path}: damaged header (encoding {fileformat.clip(h['encoding'])} "
                                           f"with parameters {fileformat.clip(h.get('encoding_params'))})")
        if h["encoding"] == "byte" and loaded.payload.dtype != np.uint8:
            raise fileformat.TableFileError(f"{path}: damaged header (a byte table of {loaded.payload.dtype})")
        entries = table_entries(pattern, h["blank"])
        if int(h["entries"]) != entries:
            raise fileformat.TableFileError(
                f"{path}: the header says {h['entries']} entries, but {len(pattern.tiles)} tiles on "
                f"{board.dims} ({h['blank']}) have {entries}")
        if h["encoding"] == "byte" and loaded.payload.shape[0] != entries:
            raise fileformat.TableFileError(
                f"{path}: the payload holds {loaded.payload.shape[0]} entries, the pattern has {entries}")
        if h["encoding"] != "byte" and h["blank"] == "zero-aware":
            raise fileformat.TableFileError(f"{path}: damaged header (zero-aware tables are byte tables)")
        if h["encoding"] != "byte":
            try:
                if structure:
                    encodings.check_payload(loaded.payload, pattern.entries, str(h["encoding"]),
                                            h.get("encoding_params"))
                else:
                    encodings.normalize_params(str(h["encoding"]), h.get("encoding_params"))
            except encodings.EncodingError as exc:
                raise fileformat.TableFileError(f"{path}: {exc}") from None
            if h["encoding"] in encodings.NEEDS_CONSISTENT and h["blank"] != "ignored":
                raise fileformat.TableFileError(f"{path}: damaged header (a {h['encoding']} table of a "
                                                f"blank-{h['blank']} pattern)")
        return cls(pattern, str(h["blank"]), loaded.payload, str(h["encoding"]),
                   dict(h.get("encoding_params", {})), path, h, loaded.stamp)

    def check_identity(self, pattern: TilePattern, blank: str, encoding: str = "byte",
                       encoding_params: dict[str, Any] | None = None) -> None:
        """Refuse a table whose board, goal, tiles, blank rule or encoding differ from what is asked."""
        want = identity_fields(pattern, blank, encoding, encoding_params or {})
        have = self.identity()
        for key in ("width", "height", "goal", "tiles", "blank", "encoding", "encoding_params"):
            if have[key] != want[key]:
                raise fileformat.TableFileError(
                    f"{self.path}: table of another {key.replace('_', ' ')} ({_show(have[key])}, "
                    f"wanted {_show(want[key])})")


def byte_counts(values: np.ndarray) -> np.ndarray:
    """How many entries hold each byte value, counted in slices: ``np.bincount`` widens its input to 8 bytes
    an entry, which on a whole 24-puzzle table would cost 1 GB for a moment."""
    values = np.asarray(values)
    counts = np.zeros(256, dtype=np.int64)
    step = 1 << 22
    for start in range(0, values.shape[0], step):
        counts += np.bincount(values[start:start + step], minlength=256)
    return counts


def identity_fields(pattern: TilePattern, blank: str, encoding: str, encoding_params: dict[str, Any]):
    board = pattern.board
    return {"board": board.dims, "width": board.width, "height": board.height, "goal": list(board.goal),
            "tiles": list(pattern.tiles), "blank": blank, "encoding": encoding,
            "encoding_params": dict(encoding_params), "entries": table_entries(pattern, blank)}


BLANK_RULES = ("minimized", "ignored", "zero-aware")


def table_entries(pattern: TilePattern, blank: str) -> int:
    """Entries of a pattern's table: one per placement, or per (placement, blank region) when zero-aware
    (:mod:`pdbtool.tables.zero_aware`)."""
    if blank == "zero-aware":
        from .zero_aware import zero_aware_entries

        return zero_aware_entries(pattern)
    return pattern.entries


def _whole(value) -> int:
    """A JSON whole number (not a float, string or bool that int() would quietly accept)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{fileformat.clip(value)} is not a whole number")
    return value


def _listed(value) -> list:
    if not isinstance(value, list):
        raise TypeError(f"{fileformat.clip(value)} is not a list")
    return value


def _show(value) -> str:
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value)


def convert_table(table, encoding: str, params: dict[str, Any] | None = None, threads: int | None = None):
    """A byte PatternTable re-encoded: ``(PatternTable, header fields to save with it)``."""
    if table.encoding != "byte":
        raise encodings.EncodingError(f"conversion starts from a byte table, not a {table.encoding} one")
    encoded = encodings.encode(table.values, table.pattern, table.blank, encoding, params, threads)
    max_value = table.header.get("max_value")
    if max_value is None:   # a table made in memory: the largest reachable value, a slice at a time
        values = np.asarray(table.values)
        max_value = 0
        for start in range(0, values.shape[0], 1 << 24):
            part = values[start:start + (1 << 24)]
            part = part[part != UNREACHABLE]
            if part.size:
                max_value = max(max_value, int(part.max()))
    extra = {"max_value": int(max_value), "conversion": encoded.info}
    for key in ("build_seconds", "layers"):
        if key in table.header:
            extra[key] = table.header[key]
    return PatternTable(table.pattern, table.blank, encoded.payload, encoding, encoded.params), extra
