"""Causes (docs/causes.md): every broken check of a test is a cause, the test goes on while its flow holds, and a
known deviation excuses its own cause only, so a second, planted cause in the same test fails the run."""

from __future__ import annotations

import json

from harness.app import cli

SPEC = """
description: causes
schemaVersion: "1.7"
createEntities:
  - client: { id: client0, observeEvents: [ commandStartedEvent ] }
  - database: { id: database0, client: client0, databaseName: causes-selftest }
  - collection: { id: collection0, database: database0, collectionName: coll }
initialData:
  - { collectionName: coll, databaseName: causes-selftest, documents: [ { _id: 1, x: 1 }, { _id: 2, x: 2 } ] }
tests:
  - description: two independent checks
    operations:
      - name: countDocuments
        object: collection0
        arguments: { filter: {} }
        expectResult: FIRST
      - name: find
        object: collection0
        arguments: { filter: { _id: 2 } }
        expectResult: [ { _id: 2, x: SECOND } ]
    expectEvents:
      - client: client0
        events:
          - commandStartedEvent: { commandName: aggregate }
          - commandStartedEvent: { commandName: EVENT }
  - description: an error that breaks the flow
    operations:
      - { name: insertOne, object: collection0, arguments: { document: { _id: 1 } } }
      - { name: countDocuments, object: collection0, arguments: { filter: {} }, expectResult: 2 }
    expectEvents:
      - client: client0
        events: [ { commandStartedEvent: { commandName: insert } } ]
"""

KNOWN_FIRST = """
target: secantusdb
known:
  - id: wrong-count
    rule: CS-API-OPEN
    kind: server-bug
    signature: { clause: result, path: "operations[0].expectResult" }
    tests: ["unified/causes::two independent checks"]
    reason: a planted count
    reproduction: this test
"""
KNOWN_SECOND = """
  - id: wrong-document
    rule: CS-API-OPEN
    kind: server-bug
    signature: { clause: result, path: "operations[1].expectResult[0].x" }
    tests: ["unified/causes::two independent checks"]
    reason: a planted document
    reproduction: this test
"""


def _spec(tmp_path, first: int = 2, second: int = 2, event: str = "find"):
    path = tmp_path / "causes.yml"
    text = SPEC.replace("FIRST", str(first)).replace("SECOND", str(second)).replace("EVENT", event)
    path.write_text(text)
    return path


def _run(tmp_path, spec, expected: str | None, *extra: str):
    results = tmp_path / "r.jsonl"
    results.unlink(missing_ok=True)
    argv = ["run", "--specs", str(spec), "-k", "two independent", "--results", str(results), "-q", *extra]
    if expected == "none":
        argv += ["--expected", "none"]
    elif expected is not None:
        (tmp_path / "expected.yml").write_text(expected)
        argv += ["--expected", str(tmp_path / "expected.yml")]
    code = cli.main(argv)
    [record] = [json.loads(line) for line in results.read_text().splitlines()]
    return code, record


def test_every_independent_check_is_a_cause_and_the_test_goes_on(tmp_path):
    code, record = _run(tmp_path, _spec(tmp_path, first=3, second=9, event="insert"), "none")
    assert code == 1 and record["outcome"] == "failed"
    clauses = [(c["clause"], c["path"]) for c in record["causes"]]
    assert clauses == [
        ("result", "operations[0].expectResult"),
        ("result", "operations[1].expectResult[0].x"),
        ("event", "expectEvents[0][1].commandStartedEvent.commandName"),
    ]
    assert record["not_reached"] == []
    first = record["causes"][0]
    assert (first["expected"], first["actual"], first["known"]) == ("3", "2", None)
    assert first["rules"] == record["rules"]


def test_a_flow_breaking_cause_leaves_the_rest_not_reached(tmp_path):
    results = tmp_path / "r.jsonl"
    code = cli.main(["run", "--specs", str(_spec(tmp_path)), "-k", "breaks the flow", "--results", str(results), "-q"])
    [record] = [json.loads(line) for line in results.read_text().splitlines()]
    assert code == 1 and [c["clause"] for c in record["causes"]] == ["error-raised"]
    assert record["causes"][0]["error"]["code"] == 11000  # the duplicate key, with its class and code
    assert record["not_reached"] == ["operations[1] (countDocuments on collection0)", "expectEvents[0]"]


def test_a_known_cause_is_known_and_a_planted_second_cause_fails_the_run(tmp_path):
    code, record = _run(tmp_path, _spec(tmp_path, first=3), KNOWN_FIRST, "--strict")
    assert code == 0 and record["expectation"]["kind"] == "known-failure"
    assert record["causes"][0]["known"] == "expected.yml#wrong-count"
    assert record["causes"][0]["rules"] == ["CS-API-OPEN"]
    code, record = _run(tmp_path, _spec(tmp_path, first=3, second=9), KNOWN_FIRST, "--strict")
    assert code == 1 and record["expectation"]["kind"] == "unexpected-failure"
    assert record["expectation"]["unexplained"] == 1 and record["expectation"]["entries"] == [
        "expected.yml#wrong-count"
    ]
    assert [c["known"] for c in record["causes"]] == ["expected.yml#wrong-count", None]
    code, record = _run(tmp_path, _spec(tmp_path, first=3, second=9), KNOWN_FIRST + KNOWN_SECOND, "--strict")
    assert code == 0 and record["expectation"]["kind"] == "known-failure"


def test_the_summary_has_a_known_by_cause_table(tmp_path, capsys):
    _run(tmp_path, _spec(tmp_path, first=3, second=9), KNOWN_FIRST + KNOWN_SECOND)
    out = capsys.readouterr().out
    assert "known, by cause" in out
    assert any(
        line.split()[:3] == ["expected.yml#wrong-count", "server-bug", "CS-API-OPEN"] for line in out.splitlines()
    )
