"""``waitForEvent`` and ``assertEventCount``: counted with the test's comparator, never a wall-clock check here.

Command, CMAP and SDAM events are counted; an event family the driver adapter does
not capture makes the test ``skipped`` with the reason, never an ``error`` and never
a silent pass.
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


def _verdict(run, tmp_path, operation: str, event: str, count: int, header: str = HEADER):
    spec = tmp_path / "counts.yml"
    spec.write_text(header.replace("OPERATION", operation).replace("EVENT", event).replace("COUNT", str(count)))
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
    verdict = _verdict(
        embedded_run, tmp_path, "assertEventCount", "{ commandStartedEvent: { commandName: insert } }", 3
    )
    assert verdict.outcome == "failed" and "published 2 matching" in verdict.message


def test_waiting_for_events_that_never_come_fails(embedded_run, tmp_path, monkeypatch):
    monkeypatch.setattr(runner_operations, "WAIT_FOR_EVENT_S", 0.2)  # the spec's 10 s, shortened for the test
    verdict = _verdict(embedded_run, tmp_path, "waitForEvent", "{ commandStartedEvent: { commandName: delete } }", 1)
    assert verdict.outcome == "failed" and "waitForEvent" in verdict.message and "published 0" in verdict.message


SDAM_HEADER = HEADER.replace(
    "observeEvents: [ commandStartedEvent, connectionCheckedOutEvent ]",
    "observeEvents: [ serverDescriptionChangedEvent, topologyDescriptionChangedEvent ]",
)


def _sdam_verdict(run, tmp_path, operation: str, event: str, count: int):
    return _verdict(run, tmp_path, operation, event, count, header=SDAM_HEADER)


def _wait_then_count(run, tmp_path, event: str, count: int):
    """pymongo publishes SDAM events from a background queue, so a test waits for them before counting."""
    spec = tmp_path / "sdam-wait-count.yml"
    spec.write_text(
        SDAM_HEADER.replace("OPERATION", "waitForEvent").replace("EVENT", event).replace("COUNT", "1")
        + "      - { name: assertEventCount, object: testRunner,\n"
        + f"          arguments: {{ client: client0, event: {event}, count: {count} }} }}\n"
    )
    [test] = load_file(spec)
    assert test.load_error is None, test.load_error
    return run.verdict(test)


def test_sdam_events_are_counted_by_their_description_types(embedded_run, tmp_path):
    """The embedded target is a one-node replica set: its server becomes an RSPrimary, exactly once."""
    primary = "{ serverDescriptionChangedEvent: { newDescription: { type: RSPrimary } } }"
    verdict = _wait_then_count(embedded_run, tmp_path, primary, 1)
    assert verdict.outcome == "passed", verdict.message
    verdict = _wait_then_count(embedded_run, tmp_path, primary, 2)
    assert verdict.outcome == "failed" and "published 1 matching" in verdict.message
    topology = "{ topologyDescriptionChangedEvent: { newDescription: { type: ReplicaSetWithPrimary } } }"
    assert _sdam_verdict(embedded_run, tmp_path, "waitForEvent", topology, 1).outcome == "passed"
    standalone = "{ serverDescriptionChangedEvent: { newDescription: { type: Standalone } } }"
    verdict = _sdam_verdict(embedded_run, tmp_path, "assertEventCount", standalone, 1)
    assert verdict.outcome == "failed" and "published 0 matching" in verdict.message


def test_an_event_family_the_driver_adapter_lacks_is_skipped_with_the_reason(embedded_run, tmp_path, monkeypatch):
    """A driver adapter without SDAM capture (pymongo patched to lack it): skipped, never an error or a pass."""
    from harness.core.ports import DriverLacksFeature
    from harness.drivers.pymongo.adapter import PyMongoScope

    original = PyMongoScope.events

    def without_sdam(self, client_id, event_type="command"):
        if event_type == "sdam":
            raise DriverLacksFeature("event type 'sdam' is not observed by this adapter")
        return original(self, client_id, event_type)

    monkeypatch.setattr(PyMongoScope, "events", without_sdam)
    verdict = _sdam_verdict(embedded_run, tmp_path, "waitForEvent", "{ serverDescriptionChangedEvent: {} }", 1)
    assert verdict.outcome == "skipped" and "'sdam' is not observed" in verdict.message


SDAM_EXPECT_EVENTS = (
    SDAM_HEADER.replace(", topologyDescriptionChangedEvent ]", " ]")
    .replace("OPERATION", "waitForEvent")
    .replace("EVENT", "{ serverDescriptionChangedEvent: {} }")
    .replace("COUNT", "1")
    + """    expectEvents:
      - client: client0
        eventType: sdam
        ignoreExtraEvents: true
        events:
          - serverDescriptionChangedEvent: { previousDescription: { type: Unknown }, newDescription: { type: TYPE } }
"""
)


@pytest.mark.parametrize(("server_type", "outcome"), [("RSPrimary", "passed"), ("Mongos", "failed")])
def test_expect_events_of_type_sdam_match_descriptions(embedded_run, tmp_path, server_type, outcome):
    spec = tmp_path / "sdam-expect.yml"
    spec.write_text(SDAM_EXPECT_EVENTS.replace("TYPE", server_type))
    [test] = load_file(spec)
    assert test.load_error is None, test.load_error
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == outcome, verdict.message
    if outcome == "failed":
        assert "newDescription.type" in verdict.message


def test_topology_opening_is_counted_once_and_closing_not_before_the_end(embedded_run, tmp_path):
    header = HEADER.replace(
        "observeEvents: [ commandStartedEvent, connectionCheckedOutEvent ]",
        "observeEvents: [ topologyOpeningEvent, topologyClosedEvent ]",
    )
    spec = tmp_path / "topology.yml"
    for event, count, outcome in (
        ("{ topologyOpeningEvent: {} }", 1, "passed"),
        ("{ topologyOpeningEvent: {} }", 2, "failed"),
        ("{ topologyClosedEvent: {} }", 0, "passed"),
    ):
        spec.write_text(
            header.replace("OPERATION", "assertEventCount")
            .replace("EVENT", event)
            .replace("COUNT", str(count))
            .replace(
                "      - { name: insertOne, object: collection0, arguments: { document: { _id: 2 } } }\n",
                "      - { name: waitForEvent, object: testRunner, arguments: { client: client0, "
                "event: { topologyOpeningEvent: {} }, count: 1 } }\n",
            )
        )
        [test] = load_file(spec)
        verdict = embedded_run.verdict(test)
        assert verdict.outcome == outcome, (event, count, verdict.message)
