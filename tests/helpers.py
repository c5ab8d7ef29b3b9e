"""Small builders for tests that need hand-made spec tests."""

from __future__ import annotations

import os
import subprocess
import sys
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


def known_entry(test: str, outcome: str = "failed", reason: str = "why", source: str = "t.yml"):
    """An expected-outcomes entry (docs/causes.md) for one test that explains any ``check`` cause of it: what a
    failure with only a message gives (``harness.core.causes.of_verdict``)."""
    from harness.core.causes import CHECK
    from harness.core.expectations import KnownCause, Signature

    kind = "harness-limitation" if outcome == "error" else "server-bug"
    clause = "set-up" if outcome == "error" else CHECK
    return KnownCause(test, "CS-X", kind, Signature(clause=clause, step="*"), reason, "repro", outcome, (test,), source)


def failing_causes(message: str = "it failed", outcome: str = "failed"):
    """The causes a verdict with only a message gets."""
    from harness.core.causes import of_verdict

    return of_verdict(outcome, message, [], [])


def known_yaml(test: str, reason: str = "known for this test", message: str = "operationType") -> str:
    """An expected-outcomes file (docs/causes.md) that knows ``FAILING``'s cause (its wrong operationType) in
    ``test``: what the front-end tests plant."""
    return (
        "target: secantusdb\nknown:\n  - id: planted\n    rule: CS-X\n    kind: server-bug\n"
        f"    signature: {{message: {message!r}}}\n    tests: [{test!r}]\n"
        f"    reason: {reason!r}\n    reproduction: planted by the test\n"
    )


def harness_cli(*args: str, cwd: Path, timeout: float = 300, **env: str) -> subprocess.CompletedProcess[str]:
    """``harness ARGS`` as a user runs it: a new process of this interpreter, its output captured, ``env`` added."""
    return subprocess.run(
        [sys.executable, "-m", "harness.app.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **env},
    )
