"""Client-side operation timeouts (``timeoutMS``) through the unified runner, on the embedded SecantusDB.

``tests/data/unified-runner/csot.yml`` (project-authored) sets ``timeoutMS`` on a client, a database, a
collection (and one inherited from its database), an operation, a session (``defaultTimeoutMS``), a
change stream's creation and its iteration, each against a ``failCommand`` that blocks the command
longer than the timeout. Each check is shown able to fail: with ``isTimeoutError`` flipped, and with a
driver whose ``pymongo.timeout`` does nothing (the levels pymongo has no option for then go unbounded).
"""

from __future__ import annotations

import contextlib

import pytest

from harness.formats.loaders import load_file
from tests.helpers import UNIFIED_RUNNER_DATA

CSOT = UNIFIED_RUNNER_DATA / "csot.yml"
TESTS = load_file(CSOT)


FLIPPABLE = [t for t in TESTS if any("isTimeoutError" in (op.expect_error or {}) for op in t.operations)]


@pytest.mark.parametrize("test", FLIPPABLE, ids=[t.description for t in FLIPPABLE])
def test_is_timeout_error_flipped_fails(embedded_run, test):
    for operation in test.operations:
        if operation.expect_error and "isTimeoutError" in operation.expect_error:
            operation.expect_error = {
                **operation.expect_error,
                "isTimeoutError": not operation.expect_error["isTimeoutError"],
            }
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "failed" and "isTimeoutError" in verdict.message, verdict.message


#: Levels the adapter applies with ``pymongo.timeout`` (the client's ``timeoutMS`` is pymongo's own).
APPLIED = [
    "database timeoutMS bounds a blocked runCommand",
    "collection timeoutMS bounds a blocked insert",
    "a collection inherits its database's timeoutMS",
    "operation timeoutMS bounds a blocked insert on a collection without one",
]


@pytest.mark.parametrize("description", APPLIED)
def test_a_driver_whose_timeout_block_does_nothing_fails(embedded_run, monkeypatch, description):
    import pymongo

    monkeypatch.setattr(pymongo, "timeout", lambda seconds: contextlib.nullcontext())
    (test,) = [t for t in load_file(CSOT) if t.description == description]
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "failed" and "expected to raise an error" in verdict.message, verdict.message
