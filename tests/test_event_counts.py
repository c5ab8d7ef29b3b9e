"""``waitForEvent`` and ``assertEventCount``: counted with the test's comparator, never a wall-clock check here.

An event family the runner does not capture (SDAM) makes the test ``skipped``
with the reason, never an ``error`` and never a silent pass.
"""

from __future__ import annotations

import pytest

from harness.engine import runner_operations
from harness.formats.loaders import load_file

HEADER = """
description: event-counts
schemaVersion: "1.7"
createEntities:
  - client: { id: client0, observeEvents: [ commandStartedEvent, connectionCheckedOutEvent ] }
  - database: { id: database0, client: client0, databaseName: event-counts }
  - collection: { id: collection0, database: database0, collectionName: coll }
initialData:
  - { collectionName: coll, databaseName: event-counts, documents: [] }
tests:
  - description: counted
    operations:
      - { name: insertOne, object: collection0, arguments: { document: { _id: 1 } } }
      - { name: insertOne, object: collection0, arguments: { document: { _id: 2 } } }
      - name: OPERATION
        object: testRunner
        arguments: { client: client0, event: EVENT, count: COUNT }
"""


def _verdict(run, tmp_path, operation: str, event: str, count: int):
    spec = tmp_path / "counts.yml"
    spec.write_text(HEADER.replace("OPERATION", operation).replace("EVENT", event).replace("COUNT", str(count)))
    [test] = load_file(spec)
    assert test.load_error is None, test.load_error
    return run.verdict(test)


@pytest.mark.parametrize("operation", ["assertEventCount", "waitForEvent"])
def test_two_inserts_are_counted(embedded_run, tmp_path, operation):
    verdict = _verdict(embedded_run, tmp_path, operation, "{ commandStartedEvent: { commandName: insert } }", 2)
    assert verdict.outcome == "passed", verdict.message
    checked_out = _verdict(embedded_run, tmp_path, operation, "{ connectionCheckedOutEvent: {} }", 2)
    assert checked_out.outcome == "passed", checked_out.message


def test_a_wrong_count_fails_and_names_what_was_seen(embedded_run, tmp_path):
    verdict = _verdict(embedded_run, tmp_path, "assertEventCount", "{ commandStartedEvent: { commandName: insert } }", 3)
    assert verdict.outcome == "failed" and "published 2 matching" in verdict.message


def test_waiting_for_events_that_never_come_fails(embedded_run, tmp_path, monkeypatch):
    monkeypatch.setattr(runner_operations, "WAIT_FOR_EVENT_S", 0.2)  # the spec's 10 s, shortened for the test
    verdict = _verdict(embedded_run, tmp_path, "waitForEvent", "{ commandStartedEvent: { commandName: delete } }", 1)
    assert verdict.outcome == "failed" and "waitForEvent" in verdict.message and "published 0" in verdict.message


def test_an_event_family_not_captured_is_skipped_with_the_reason(embedded_run, tmp_path):
    verdict = _verdict(embedded_run, tmp_path, "waitForEvent", "{ serverDescriptionChangedEvent: {} }", 1)
    assert verdict.outcome == "skipped" and "does not capture serverDescriptionChangedEvent" in verdict.message
