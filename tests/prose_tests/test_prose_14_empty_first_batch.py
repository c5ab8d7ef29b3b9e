"""Prose test 14 where it cannot run: a target whose initial aggregate returns an empty first batch.

The README says test 14 cannot be run against a sharded cluster, whose initial aggregate only opens the
shards' cursors and always returns an empty ``firstBatch``. A target that answers the same way is skipped
with that reason, not reported as an error. The target is emulated here by the wire proxy's
``slow-first-batch`` reply shaping (the aggregate's documents held back for the first getMore), on the
embedded SecantusDB, which otherwise returns them in the first batch (test_prose_mutants.py has the check
pass there). A driver that itself asks for an empty first batch (``batchSize: 0``) is not skipped.
"""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import Any

import pytest
from pymongo import change_stream_shared

import prose_tests
from prose_tests.support import ProseContext, ProseTest, preflight

VARIANTS = ["14-startAfter", "14-resumeAfter", "14-neither"]


def _test_of(check_id: str) -> ProseTest:
    (test,) = [test for test in prose_tests.REGISTRY if test.short_id == check_id]
    return test


def _behind_empty_first_batches(check_id: str) -> Any:
    """The check of ``check_id`` with its clients behind a wire proxy that empties every first batch."""
    original = _test_of(check_id)

    def body(cx: ProseContext) -> None:
        cx.shape("slow-first-batch")
        original.body(cx)

    test = dataclasses.replace(original, body=body, shaping=True)
    check = next(check for check in prose_tests.CHECKS if check.name == original.name)
    return dataclasses.replace(check, open=partial(ProseContext, test=test), preflight=partial(preflight, test))


@pytest.mark.parametrize("check_id", VARIANTS)
def test_prose_14_is_skipped_with_the_reason_where_the_first_batch_is_always_empty(embedded_run, check_id):
    result = embedded_run.run_test(_behind_empty_first_batches(check_id))
    assert result.outcome == "skipped", result.message
    assert "empty firstBatch" in result.message and "sharded cluster" in result.message, result.message


def test_prose_14_is_not_skipped_when_the_driver_asks_for_the_empty_first_batch(embedded_run, monkeypatch):
    """A driver that sends ``batchSize: 0`` on the initial aggregate empties the first batch itself: the check
    cannot tell what it needs to, and says so (an ``error`` naming the batch size), rather than skip."""
    original = change_stream_shared._AgnosticChangeStream._command_options
    monkeypatch.setattr(
        change_stream_shared._AgnosticChangeStream,
        "_command_options",
        lambda self: {**original(self), "batchSize": 0},
    )
    check = next(check for check in prose_tests.CHECKS if prose_tests.check_id(check) == "14-neither")
    result = embedded_run.run_test(check)
    assert result.outcome == "error" and "batchSize" in result.message, result.message
