"""The lists of long tests in conftest.py (left out of ``make test-fast``) name tests that exist: an entry
left behind by a renamed test would silently put it back into the edit loop."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

from conftest import COLLECTED, LONG_TESTS, WARM_LONG_TESTS

TESTS = Path(__file__).resolve().parent


@cache
def functions_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}


def test_every_long_test_entry_names_a_test_function():
    missing = []
    for entry in LONG_TESTS + WARM_LONG_TESTS:
        file, _, name = entry.partition("::")
        path = TESTS / file
        if not path.exists() or name.split("[")[0] not in functions_of(path):
            missing.append(entry)
    assert not missing, missing
    assert len(set(LONG_TESTS + WARM_LONG_TESTS)) == len(LONG_TESTS) + len(WARM_LONG_TESTS)


def test_every_entry_with_parameters_names_a_collected_case():
    """An entry with parameters in brackets names a case that exists, among the files this run collected
    (``make test`` and ``make test-fast`` collect them all, before ``-m`` leaves any out)."""
    cases = set(COLLECTED)
    files = {case.partition("::")[0] for case in cases}
    missing = [entry for entry in LONG_TESTS + WARM_LONG_TESTS if "[" in entry and entry not in cases
               and entry.partition("::")[0] in files]
    assert not missing, missing
