"""The spec runner's side of the early no-change verdict (docs/causes.md section 4): what the record says.

A change a ``$match`` filters out never comes. With the verdict, the ``no-change`` cause's fact says the stream
passed the last write, and keeps the words expected-outcomes signatures match ("no document arrived"); without it
(turned off, a wire proxy in the test's path), the iteration waits its budget and the fact says why. The verdict is
the same either way. Nothing here asserts a duration.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.formats.loaders import load_file

FILE = """
description: early-no-change
schemaVersion: "1.7"
runOnRequirements:
  - topologies: [ replicaset ]
createEntities:
  - client: { id: client0, observeEvents: [ commandStartedEvent ], uriOptions: { appName: earlyClient } }
  - client: { id: writer }
  - database: { id: db0, client: client0, databaseName: early_no_change }
  - collection: { id: coll0, database: db0, collectionName: coll }
  - database: { id: writerDb, client: writer, databaseName: early_no_change }
  - collection: { id: writerColl, database: writerDb, collectionName: coll }
initialData:
  - { databaseName: early_no_change, collectionName: coll, documents: [] }
tests:
  - description: a filtered change never comes
    operations:
      - name: createChangeStream
        object: coll0
        arguments: { pipeline: [ { $match: { operationType: delete } } ] }
        saveResultAsEntity: stream0
      - name: insertOne
        object: writerColl
        arguments: { document: { _id: 1 } }
      - name: iterateUntilDocumentOrError
        object: stream0
        expectResult: { operationType: insert }
  - description: a filtered change never comes, replies through a wire proxy
    operations:
      - name: shapeReplies
        object: testRunner
        arguments: { profile: small-batches, appName: earlyClient }
      - name: createChangeStream
        object: coll0
        arguments: { pipeline: [ { $match: { operationType: delete } } ] }
        saveResultAsEntity: stream0
      - name: insertOne
        object: writerColl
        arguments: { document: { _id: 1 } }
      - name: iterateUntilDocumentOrError
        object: stream0
        expectResult: { operationType: insert }
"""


def _tests(tmp_path: Path) -> list[Any]:
    path = tmp_path / "early-no-change.yml"
    path.write_text(FILE, encoding="utf-8")
    tests = load_file(path)
    assert all(test.load_error is None for test in tests), [test.load_error for test in tests]
    return tests


def _cause(run: Any, test: Any) -> dict[str, Any]:
    result = run.run_test(test)
    assert result.outcome == "failed", result.message
    [cause] = result.record["causes"]
    assert cause["clause"] == "no-change" and cause["expected"] == '{"operationType": "insert"}'
    assert "no document arrived" in cause["fact"]  # what expected-outcomes signatures match
    return dict(cause)


def test_a_lost_change_fails_with_the_early_fact(embedded_run: Any, tmp_path: Path) -> None:
    """The write comes from another client of the test: the scope's clock hears every client."""
    cause = _cause(embedded_run, _tests(tmp_path)[0])
    assert cause["fact"].startswith(
        "no change arrived: no document arrived; the stream passed the last write (insert) at Timestamp("
    )
    assert f"(watched {cause['waited_s']:g}s of 10s)" in cause["fact"]


def test_turned_off_the_budget_is_waited_and_the_fact_says_so(embedded_run: Any, tmp_path: Path) -> None:
    settings = embedded_run.runner.settings
    settings.early_no_change, settings.iteration_timeout_s = False, 1.0
    try:
        cause = _cause(embedded_run, _tests(tmp_path)[0])
    finally:
        settings.early_no_change, settings.iteration_timeout_s = True, 10.0
    assert cause["fact"].startswith("no change arrived: no document arrived within 1s (watched ")
    assert "of 1s; no early verdict: it is turned off for this run)" in cause["fact"]


def test_a_wire_proxy_in_the_path_keeps_the_budget(embedded_run: Any, tmp_path: Path) -> None:
    """A proxy that may hold back a batch answers a getMore with an empty one: the rule's premise is gone."""
    settings = embedded_run.runner.settings
    settings.iteration_timeout_s = 1.0
    try:
        cause = _cause(embedded_run, _tests(tmp_path)[1])
    finally:
        settings.iteration_timeout_s = 10.0
    assert cause["fact"].startswith("no change arrived: no document arrived within 1s (watched ")
    assert "no early verdict: a wire proxy in this test's path may hold back or reshape replies" in cause["fact"]
