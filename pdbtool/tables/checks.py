"""``verify`` and ``inspect`` of any file the cache holds: each file goes to the checks of its kind.

Pattern tables (``*.pdb``, every encoding) to :mod:`pdbtool.tables.verify` and
:mod:`pdbtool.tables.inspection`; the dynamic sets' pair and triple tables and their region rows
(``*.ddb``, header ``kind`` ``dynamic`` or ``dynamic-regions``) to :mod:`pdbtool.tables.dynamic_check`.
The kind is read from the header; a file whose header cannot be read goes to the pattern table checks,
which report why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import fileformat
from .dynamic_check import KINDS, describe_dynamic, format_dynamic, verify_dynamic_file
from .inspection import describe, format_text
from .verify import Report, verify_file


def kind_of(path: str | Path) -> str | None:
    """The header's ``kind`` (``"pattern"`` when it has none), or None when the header cannot be read."""
    try:
        header, _ = fileformat.read_header(path)
    except fileformat.TableFileError:
        return None
    kind = header.get("kind", "pattern")
    return kind if isinstance(kind, str) else None


def verify_any(path: str | Path, expected=None, cache_name: bool = False, **options) -> Report:
    """Verify one file with the checks of its kind (options as :func:`pdbtool.tables.verify.verify_file`)."""
    if expected is None and kind_of(path) in KINDS:
        options.pop("threads", None)
        return verify_dynamic_file(path, cache_name=cache_name, **options)
    return verify_file(path, expected, cache_name=cache_name, **options)


def describe_any(path: str | Path) -> dict[str, Any]:
    if kind_of(path) in KINDS:
        return describe_dynamic(path)
    return describe(path)


def format_any(info: dict[str, Any]) -> str:
    return format_dynamic(info) if info.get("kind") in KINDS else format_text(info)
