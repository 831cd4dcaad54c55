"""The report of verifying one table file of a domain beside the tiles (hanoi4, vertex cover): the checks
passed in order and, when one failed, why.  The tile verifier's richer :class:`pdbtool.tables.verify.Report`
has the same ``file``, ``ok``, ``summary`` and ``as_dict``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class FileReport:
    path: Path
    ok: bool
    checks: list[tuple[str, str]]
    failure: str | None = None
    what: str = ""

    @property
    def file(self) -> str:
        return str(self.path)

    def summary(self) -> str:
        if self.ok:
            return f"OK   {self.path}: {self.what}; " + ", ".join(f"{n} {d}" for n, d in self.checks)
        return f"FAIL {self.path}: {self.failure}"

    def as_dict(self) -> dict:
        return {"file": str(self.path), "ok": self.ok, "table": self.what, "checks": dict(self.checks),
                "failure": self.failure}
