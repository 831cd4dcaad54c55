"""What ``pdbtool inspect`` reports of a table file: header, size, checksum status, distance histogram."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import fileformat
from ..errors import PdbtoolError
from .table import PatternTable


def describe(path: str | Path) -> dict[str, Any]:
    """A summary of one table file; raises TableFileError when the header itself is unusable."""
    path = Path(path)
    ok = fileformat.checksum_ok(path)
    loaded = fileformat.load(path, verify_checksum=False)
    try:
        table = PatternTable.from_file(loaded)
        broken = None
    except fileformat.TableFileError as exc:
        if ok:
            raise
        # a damaged file: show its header, but decode nothing whose structure failed
        table = PatternTable.from_file(loaded, structure=False)
        broken = str(exc)
    header = table.header
    file_bytes = int(header["_file_bytes"])
    try:
        if broken:
            raise PdbtoolError(broken)
        stats = table.stats()   # decodes compact encodings, which a damaged payload can make impossible
    except PdbtoolError as exc:
        if ok:
            raise
        stats = {"histogram": {}, "unreachable": 0, "mean": 0.0, "max": 0, "decode_error": str(exc)}
    refused = None
    if ok and not stats.get("decode_error"):
        from .integrity import check_table

        try:   # what a load through the cache would say of the values
            check_table(table, record=False)
        except fileformat.TableFileError as exc:
            refused = str(exc).removeprefix(f"{path}: ")
    return {
        "file": str(path),
        "kind": "pattern",
        "format": header.get("format"),
        "pdbtool_version": header.get("pdbtool_version"),
        "board": table.board.dims,
        "goal": table.board.goal_name,
        "tiles": list(table.pattern.tiles),
        "blank": table.blank,
        "encoding": table.encoding,
        "encoding_params": table.encoding_params,
        "entries": table.entries,
        "max_value": header.get("max_value"),
        "payload_bytes": int(header["payload_bytes"]),
        "file_bytes": file_bytes,
        "bits_per_entry": round(8 * int(header["payload_bytes"]) / table.entries, 4),
        "checksum_ok": ok,
        "build_seconds": header.get("build_seconds"),
        "histogram": {str(v): c for v, c in sorted(stats["histogram"].items())},
        "unreachable": stats["unreachable"],
        "mean": round(stats["mean"], 4),
        "max": stats["max"],
        # nibble / sparse / min-nibble: entries whose excess over Manhattan exceeded 15 (stored as 15)
        "saturated": stats.get("saturated"),
        "conversion": header.get("conversion"),
        "decode_error": stats.get("decode_error"),
        "refused": refused,
    }


def format_text(info: dict[str, Any]) -> str:
    lines = [
        f"{info['file']}",
        f"  board {info['board']}, goal {info['goal']}, tiles {' '.join(map(str, info['tiles']))}",
        f"  blank {info['blank']}, encoding {info['encoding']}"
        + (f" {info['encoding_params']}" if info["encoding_params"] else "")
        + f", format {info['format']} (pdbtool {info['pdbtool_version']})",
        f"  entries {info['entries']:,}, payload {info['payload_bytes']:,} bytes, file {info['file_bytes']:,} bytes, "
        f"{info['bits_per_entry']:g} bits per entry",
        f"  checksum {'ok' if info['checksum_ok'] else 'MISMATCH (the file is damaged)'}",
    ]
    if info.get("refused"):
        lines.append(f"  refused at load: {info['refused']}")
    if info.get("saturated") is not None:
        lines.append(f"  saturated entries {info['saturated']:,} (excess above 15 stored as 15: lower, still admissible)")
    if (info.get("conversion") or {}).get("mean_loss") is not None:
        lines.append(f"  mean loss from grouping {info['conversion']['mean_loss']:g} per entry")
    lines += [
        f"  mean {info['mean']:.4f}, max {info['max']}"
        + (f", unreachable {info['unreachable']:,}" if info["unreachable"] else ""),
        "  histogram (distance: placements):",
    ]
    total = sum(info["histogram"].values()) or 1
    for value, count in info["histogram"].items():
        bar = "#" * max(1, round(40 * count / total)) if count else ""
        lines.append(f"    {int(value):3d}: {count:>13,}  {bar}")
    return "\n".join(lines)
