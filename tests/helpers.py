"""Small builders for tests that need hand-made spec tests."""

from __future__ import annotations

from pathlib import Path

from harness.formats.loaders import load_file
from tests.paths import TESTS_DATA

LEGACY_HEADER = """
database_name: harness-selftest
collection_name: coll
database2_name: harness-selftest-2
collection2_name: coll2
tests:
"""

#: A legacy test that passes on any target (an insert, and its change event), and one that fails (the wrong
#: event expected): the tests of the front ends and targets run these to see a verdict of each kind.
PASSING = """
  - description: passes
    target: collection
    operations:
      - {database: harness-selftest, collection: coll, name: insertOne, arguments: {document: {x: 1}}}
    result: {success: [{operationType: insert}]}
"""
FAILING = """
  - description: fails
    target: collection
    operations:
      - {database: harness-selftest, collection: coll, name: insertOne, arguments: {document: {x: 1}}}
    result: {success: [{operationType: delete}]}
"""


def legacy_tests(tmp_path: Path, body: str, name: str = "selftest.yml"):
    """Write a legacy-format file with the given ``tests:`` entries and load it."""
    path = tmp_path / name
    path.write_text(LEGACY_HEADER + body)
    return load_file(path)


#: The project's own unified files that exercise runner features (CSOT, log messages, withTransaction).
UNIFIED_RUNNER_DATA = TESTS_DATA / "unified-runner"


def runner_file_test(name: str, description: str):
    """A freshly loaded test of ``tests/data/unified-runner/NAME`` whose description starts with ``description``
    (fresh, so a test may break it in place to show the check can fail)."""
    from harness.formats.loaders import load_file

    (test,) = [t for t in load_file(UNIFIED_RUNNER_DATA / name) if t.description.startswith(description)]
    return test
