"""The runner can fail: every kind of difference becomes a verdict that points at it."""

from __future__ import annotations

import pytest

from tests.helpers import legacy_tests

INSERT = "      - {database: harness-selftest, collection: coll, name: insertOne, arguments: {document: {x: 1}}}\n"


def _run(embedded_run, tmp_path, body):
    [test] = legacy_tests(tmp_path, body)
    assert test.load_error is None, test.load_error
    return embedded_run.verdict(test)


def test_a_matching_change_passes(embedded_run, tmp_path):
    verdict = _run(
        embedded_run,
        tmp_path,
        """
  - description: insert seen
    target: collection
    topology: [replicaset]
    operations:
"""
        + INSERT
        + """
    expectations:
      - command_started_event: {command_name: aggregate, database_name: harness-selftest,
                                command: {aggregate: coll, pipeline: [{$changeStream: {}}]}}
    result:
      success:
        - {operationType: insert, ns: {db: harness-selftest, coll: coll}, fullDocument: {x: 1}}
""",
    )
    assert verdict.outcome == "passed", verdict.message


def test_a_wrong_field_fails_with_path_expected_and_actual(embedded_run, tmp_path):
    verdict = _run(
        embedded_run,
        tmp_path,
        """
  - description: wrong value
    target: collection
    operations:
"""
        + INSERT
        + """
    result:
      success:
        - {operationType: insert, fullDocument: {x: 2}}
""",
    )
    assert verdict.outcome == "failed"
    assert "success[0].fullDocument.x: expected 2, got 1" in verdict.message


def test_a_missing_change_fails_as_soon_as_it_can_no_longer_come(embedded_run, tmp_path):
    embedded_run.runner.settings.iteration_timeout_s = 1.0
    try:
        verdict = _run(
            embedded_run,
            tmp_path,
            """
  - description: two changes expected, one happens
    target: collection
    operations:
"""
            + INSERT
            + """
    result:
      success:
        - {operationType: insert}
        - {operationType: insert}
""",
        )
    finally:
        embedded_run.runner.settings.iteration_timeout_s = 10.0
    assert verdict.outcome == "failed"
    # The stream read past the insert and found nothing more: no change can come (docs/causes.md section 4).
    assert verdict.message.startswith("success[1]: no document arrived; the stream passed the last write (insert)")


def test_an_expected_error_that_never_comes_fails(embedded_run, tmp_path):
    verdict = _run(
        embedded_run,
        tmp_path,
        """
  - description: error expected
    target: collection
    operations: []
    result:
      error: {code: 280}
""",
    )
    assert verdict.outcome == "failed" and "no operation raised one" in verdict.message


def test_the_wrong_error_code_fails_naming_both(embedded_run, tmp_path):
    verdict = _run(
        embedded_run,
        tmp_path,
        """
  - description: wrong code
    target: collection
    changeStreamPipeline: [{$unsupported: foo}]
    operations: []
    result:
      error: {code: 1}
""",
    )
    assert verdict.outcome == "failed"
    assert "result.error.code: expected 1, got 40324" in verdict.message


def test_an_event_mismatch_names_the_event_and_what_was_sent(embedded_run, tmp_path):
    verdict = _run(
        embedded_run,
        tmp_path,
        """
  - description: wrong event
    target: collection
    operations: []
    expectations:
      - command_started_event: {command_name: find, database_name: harness-selftest}
    result:
      success: []
""",
    )
    assert verdict.outcome == "failed"
    assert 'expectations[0].commandStartedEvent.commandName: expected "find", got "aggregate"' in verdict.message
    assert "observed commandStartedEvent(aggregate)" in verdict.message


def test_an_unknown_operation_is_an_error_naming_it(embedded_run, tmp_path):
    verdict = _run(
        embedded_run,
        tmp_path,
        """
  - description: unknown operation
    target: collection
    operations:
      - {database: harness-selftest, collection: coll, name: frobnicate, arguments: {}}
    result:
      success: []
""",
    )
    assert verdict.outcome == "error" and "'frobnicate'" in verdict.message
    assert "operations[0]" in verdict.message


def test_a_load_error_is_an_error_verdict(embedded_run, tmp_path):
    [test] = legacy_tests(tmp_path, "  - description: broken\n    target: collection\n")
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "error" and "broken" in verdict.message


def test_inapplicable_tests_are_skipped_with_the_reason(embedded_run, tmp_path):
    verdict = _run(
        embedded_run,
        tmp_path,
        """
  - description: sharded only
    target: collection
    topology: [sharded]
    operations: []
    result: {success: []}
""",
    )
    assert verdict.outcome == "skipped" and "topology replicaset not in ['sharded']" in verdict.message
    verdict = _run(
        embedded_run,
        tmp_path,
        """
  - description: future server
    minServerVersion: "99.0"
    target: collection
    operations: []
    result: {success: []}
""",
    )
    assert verdict.outcome == "skipped" and "minServerVersion 99.0" in verdict.message


class _ReappearingCollection:
    """A database whose collection a lingering write of the previous test recreates ``times`` times."""

    def __init__(self, times: int) -> None:
        self.times, self.calls = times, []

    def drop_collection(self, name):
        self.calls.append(("drop", name))

    def create_collection(self, name, **options):
        from pymongo.errors import CollectionInvalid

        self.calls.append(("create", name))
        if self.times:
            self.times -= 1
            raise CollectionInvalid(f"collection {name} already exists")


class _AdminOf:
    """A stand-in admin client whose every database is ``database`` (only the target port's set-up is used)."""

    def __init__(self, database) -> None:
        self.database = database

    def get_database(self, name, **options):
        return self.database


def test_set_up_drops_again_when_a_lingering_write_recreates_the_collection():
    from harness.core.ports import TargetAdminError
    from harness.shared.target_base import RECREATE_ATTEMPTS, TargetBase

    target = TargetBase("fake")
    target.admin = _AdminOf(database := _ReappearingCollection(times=1))
    target.admin_tasks.recreate_collection("db", "coll", {}, [])
    assert database.calls == [("drop", "coll"), ("create", "coll"), ("drop", "coll"), ("create", "coll")]

    target.admin = _AdminOf(always := _ReappearingCollection(times=RECREATE_ATTEMPTS))
    with pytest.raises(TargetAdminError, match="already exists"):
        target.admin_tasks.recreate_collection("db", "coll", {}, [])
    assert len(always.calls) == 2 * RECREATE_ATTEMPTS
