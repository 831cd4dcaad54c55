"""The README cannot drift from the code: its ``console`` and ``python`` blocks are run here.

In a ``console`` block, a line starting with ``$ `` is a command (run by bash in the repository root, with
this environment's ``pdbtool`` first on the PATH and a fresh table cache); the lines after it are output
the command must print, in order, among its stdout and stderr lines.  A line ending in "…" matches an
output line that begins with the rest; a line that is only "…" stands for lines left out.  Seconds and
rates differ from run to run, so numbers followed by " s" or " nodes generated/s" are compared as "#", and
the cache directory is shown as ``~/.cache/pdbtool``.  A ``python`` block runs as a script and must exit
0 (its asserts are the checks).  The blocks run in the README's order and share the cache, so a command
may use the tables an earlier one built.  ``sh`` blocks (big tables, installing) are not run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
TIMING = re.compile(r"\d[\d,]*(?:\.\d+)?(?= s\b| nodes generated/s)")
MAX_BYTES = 16_000  # the project's limit for the README: details go to docs/


def blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(README.read_text())]


def console_steps(body: str) -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
        elif line.strip():
            raise AssertionError(f"output before any command in a console block: {line!r}")
    return steps


def _mask(line: str, cache: Path) -> str:
    return TIMING.sub("#", line.replace(str(cache), "~/.cache/pdbtool")).rstrip()


def missing_lines(expected: list[str], output: str, cache: Path) -> list[str]:
    """The expected lines not found, in order, among the output's lines (an empty list: all found)."""
    actual = [_mask(line, cache) for line in output.splitlines()]
    at = 0
    for want in expected:
        if want.strip() in ("", "…"):
            continue
        want = _mask(want, cache)
        prefix = want.endswith("…")
        want = want.removesuffix("…").rstrip()
        while at < len(actual) and not (actual[at].startswith(want) if prefix else actual[at] == want):
            at += 1
        if at == len(actual):
            return [want]
        at += 1
    return []


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    cache = tmp_path_factory.mktemp("readme-cache")
    return cache, dict(os.environ, PDBTOOL_CACHE_DIR=str(cache), PYTHONUNBUFFERED="1",
                       PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_readme_is_short():
    assert len(README.read_bytes()) <= MAX_BYTES


# the docs that describe the code are read whole by a newcomer: their limits (bytes)
DOC_LIMITS = {"docs/design.md": 35_000, "docs/cluster.md": 12_000}


def test_design_docs_are_within_their_limits():
    sizes = {name: len((ROOT / name).read_bytes()) for name in DOC_LIMITS}
    assert all(sizes[name] <= limit for name, limit in DOC_LIMITS.items()), sizes


def test_links_of_readme_and_docs_lead_somewhere():
    for page in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", page.read_text()):
            if target.startswith(("http://", "https://")):
                continue
            linked = (page.parent / target) if target else page
            assert linked.exists(), f"{page.name} links to a missing {target}"
            if anchor:
                headings = re.findall(r"^#+ (.*)$", linked.read_text(), re.M)
                assert anchor in {_slug(h) for h in headings}, f"{page.name}: no heading #{anchor} in {linked.name}"


def test_readme_has_runnable_blocks():
    kinds = [kind for kind, _ in blocks()]
    assert kinds.count("console") >= 5 and kinds.count("python") >= 1


def test_matcher_fails_on_a_wrong_line(tmp_path):
    output = "PASS a.pdb: format\nsearch 0.161 s, 1,640,545 nodes generated/s\n"
    assert not missing_lines(["PASS a.pdb…", "search 9.9 s, 1 nodes generated/s"], output, tmp_path)
    assert missing_lines(["FAIL a.pdb…"], output, tmp_path)
    assert missing_lines(["search 0.161 s", "PASS a.pdb: format"], output, tmp_path)   # order counts


@pytest.mark.slow  # builds the README's tables in a fresh cache and runs every command block
def test_readme_blocks_run(env):
    cache, environ = env
    ran = 0
    for kind, body in blocks():
        if kind == "console":
            for command, expected in console_steps(body):
                proc = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=ROOT, env=environ,
                                      capture_output=True, text=True, timeout=600)
                assert proc.returncode == 0, f"$ {command}\nexit {proc.returncode}\n{proc.stderr}"
                missing = missing_lines(expected, proc.stdout + "\n" + proc.stderr, cache)
                assert not missing, (f"$ {command}\ndid not print {missing[0]!r}\n--- stdout\n{proc.stdout}"
                                     f"--- stderr\n{proc.stderr}")
                ran += 1
        elif kind == "python":
            proc = subprocess.run([sys.executable, "-c", body], cwd=ROOT, env=environ, capture_output=True,
                                  text=True, timeout=600)
            assert proc.returncode == 0, f"python block failed:\n{body}\n{proc.stderr}"
            ran += 1
    assert ran >= 8
