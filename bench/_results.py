"""Where a benchmark result comes from: the metadata stored beside the figures in ``bench/results/*.json``.

``bench/run.py`` adds a ``meta`` object to the JSON file each benchmark writes; a benchmark may also call
:func:`write` itself.  ``bench/report.py`` reads the files back with :func:`load`.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


def git_commit(root: Path = ROOT) -> str | None:
    """The commit the benchmark ran on, with ``+dirty`` when tracked files had uncommitted changes.  The
    results themselves (``bench/results/``) do not count: a benchmark has just written its own."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                ":(exclude)bench/results"], cwd=root, capture_output=True, text=True,
                               check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+dirty" if dirty else "")


def cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("numpy", "numba"):
        try:
            out[name] = __import__(name).__version__
        except ImportError:
            pass
    return out


def metadata(command: list[str] | str, started: float | None = None, load_before=None, **extra) -> dict:
    """Machine, cores, date, commit, command and load of a benchmark run (``started``: its ``time.time()``)."""
    now = time.time()
    meta = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started or now)),
        "commit": git_commit(),
        "command": command if isinstance(command, str) else " ".join(command),
        "machine": {"platform": platform.platform(), "cpu": cpu_model(), "cores": os.cpu_count(),
                    "memory_bytes": memory_bytes()},
        "versions": versions(),
        "load_average_before": load_before,
        "load_average_after": load_average(),
    }
    if started is not None:
        meta["wall_seconds"] = round(now - started, 1)
    meta.update(extra)
    return meta


def write(path: str | Path, data: dict, command: list[str] | str | None = None, **meta) -> Path:
    """Write ``data`` with a ``meta`` object (``command`` defaults to this process's command line)."""
    path = Path(path)
    data = dict(data)
    data["meta"] = metadata(command or [Path(sys.executable).name, *sys.argv], **meta)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path


def load(name: str) -> dict | None:
    """``bench/results/<name>.json``, or None when it has not been measured."""
    path = RESULTS / f"{name}.json"
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
