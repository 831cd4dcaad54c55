"""The process groups of ``make test`` (tests/conftest.py's ``xdist_group``) reach pytest-xdist's scheduler:
under ``--dist loadgroup`` a grouped test's node id ends with ``@`` and its group, which is how the
scheduler keeps a group in one process.  A pytest that xdist does not know how to tag (structured node ids,
pytest-dev/pytest-xdist#1386) runs the groups split over the processes without a word: this fails then."""

from __future__ import annotations

import pytest
from conftest import FILE_GROUPS, SCHEDULED


def test_grouped_tests_carry_their_group_to_the_scheduler(pytestconfig):
    if not getattr(pytestconfig, "workerinput", None) or not pytestconfig.getvalue("loadgroup"):
        pytest.skip("only in a run with --dist loadgroup (make test, make test-fast)")
    grouped = [(node, group) for node, group in SCHEDULED if group is not None]
    if not any(group in FILE_GROUPS.values() for _, group in grouped):
        pytest.skip("no test of a grouped file in this run")
    untagged = [node for node, group in grouped if not node.endswith(f"@{group}")]
    assert not untagged, untagged[:5]
