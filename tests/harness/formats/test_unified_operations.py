"""Load-time checks of operation and argument names (``harness.formats.unified_operations``).

A misspelt operation or argument is an ``error`` naming the file, the test and ``operations[i]`` when the
file is loaded, even in an operation the test never reaches, and the file's other tests still run. A name
the unified format defines but the driver adapter does not implement is ``skipped`` with the reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.formats.loaders import load_file, load_paths
from harness.formats.unified_operations import ENTITY_OPERATIONS, TEST_RUNNER, arguments_of
from tests.paths import REPO, SHARED_SPECS, TESTS_DATA

SPECS = SHARED_SPECS / "upstream"
REPO_SPECS = REPO / "specs" / "scenarios"
DATA = TESTS_DATA / "unified-runner"

FILE = """
description: operation-names
schemaVersion: "1.9"
createEntities:
  - client: { id: client0 }
  - database: { id: database0, client: client0, databaseName: operation-names }
  - collection: { id: collection0, database: database0, collectionName: coll }
initialData:
  - { databaseName: operation-names, collectionName: coll, documents: [] }
tests:
  - description: fine
    operations:
      - { name: insertOne, object: collection0, arguments: { document: { _id: 1 } } }
  - description: bad
    operations:
      - { name: insertOne, object: collection0, arguments: { document: { _id: 2 } } }
      - { name: failPoint, object: testRunner, arguments: { client: client0,
          failPoint: { configureFailPoint: failCommand, mode: { times: 1 },
                       data: { failCommands: [ insert ], errorCode: 2 } } } }
      - { name: insertOne, object: collection0, arguments: { document: { _id: 3 } } }
      - BAD
"""


def _load(tmp_path: Path, bad: str):
    spec = tmp_path / "operation-names.yml"
    spec.write_text(FILE.replace("BAD", bad))
    return spec, load_file(spec)


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        (
            "{ name: fnd, object: collection0, arguments: { filter: {} } }",
            ["unknown operation 'fnd'", "collection entity"],
        ),
        ("{ name: find, object: collection0, arguments: { fliter: {} } }", ["unknown argument(s) ['fliter']"]),
        (
            "{ name: find, object: database0, arguments: { filter: {} } }",
            ["'find'", "database entity", "operation of collection"],
        ),
        (
            (
                "{ name: createChangeStream, object: collection0, arguments: { pipeline: [] }, "
                "saveResultAsEntity: cs }\n"
                "      - { name: iterateUntilDocumentOrErorr, object: cs }"
            ),
            ["operations[4]", "iterateUntilDocumentOrErorr", "changeStream entity"],
        ),
        (
            (
                "{ name: assertEventCount, object: testRunner, "
                "arguments: { client: client0, event: { commandStartedEvent: {} }, cuont: 1 } }"
            ),
            ["unknown argument(s) ['cuont']", "the test runner"],
        ),
    ],
)
def test_a_misspelt_name_the_test_never_reaches_is_a_load_error(tmp_path, embedded_run, bad, words):
    """operations[2] fails first, so operations[3] is never run: its typo is still reported, by label."""
    spec, (fine, bad_test) = _load(tmp_path, bad)
    assert fine.load_error is None
    assert bad_test.load_error is not None
    for word in [str(spec), "'bad'", "operations[3]" if "[4]" not in str(words) else "", *words]:
        assert word in bad_test.load_error, (word, bad_test.load_error)
    verdict = embedded_run.verdict(bad_test)
    assert verdict.outcome == "error" and "operations[" in verdict.message
    assert embedded_run.verdict(fine).outcome == "passed"  # the file's other tests still run


def test_an_unknown_test_runner_operation_is_an_error_before_anything_runs(tmp_path, embedded_run):
    """Plug-ins add test-runner operations, so the name is checked by the engine, before the first operation."""
    _, (_, test) = _load(tmp_path, "{ name: failPiont, object: testRunner, arguments: {} }")
    assert test.load_error is None
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "error" and "operations[3]" in verdict.message and "'failPiont'" in verdict.message


def test_a_test_runner_operation_the_format_defines_but_the_runner_lacks_is_skipped(tmp_path, embedded_run):
    _, (_, test) = _load(
        tmp_path, "{ name: recordTopologyDescription, object: testRunner, arguments: { client: client0, id: td } }"
    )
    assert test.load_error is None
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "skipped" and "recordTopologyDescription" in verdict.message


def test_an_operation_the_driver_adapter_lacks_is_skipped_with_the_reason(tmp_path, embedded_run):
    _, (_, test) = _load(tmp_path, "{ name: listSearchIndexes, object: collection0 }")
    test.operations = [test.operations[0], test.operations[3]]  # reach it
    assert test.load_error is None
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "skipped", verdict.message
    assert "operations[3]" in verdict.message and "'listSearchIndexes' is not implemented" in verdict.message


def test_an_argument_the_driver_adapter_lacks_is_skipped_with_the_reason(tmp_path, embedded_run):
    _, (_, test) = _load(
        tmp_path, "{ name: find, object: collection0, arguments: { filter: {}, cursorType: tailable } }"
    )
    test.operations = [test.operations[0], test.operations[3]]
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "skipped" and "cursorType" in verdict.message, verdict.message


def test_a_client_option_the_driver_adapter_lacks_is_skipped(tmp_path, embedded_run):
    spec = tmp_path / "option.yml"
    spec.write_text(
        FILE.replace(
            "client: { id: client0 }",
            "client: { id: client0, storeEventsAsEntities: [ { id: e, events: [ CommandStartedEvent ] } ] }",
        ).replace("      - BAD\n", "")
    )
    test = load_file(spec)[0]
    assert test.load_error is None, test.load_error
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "skipped" and "storeEventsAsEntities" in verdict.message, verdict.message


@pytest.mark.skipif(not SPECS.is_dir(), reason=f"upstream spec files not found at {SPECS}")
def test_every_upstream_and_project_file_that_loaded_still_loads():
    """The table covers every operation and argument of the corpora: no file gains a load error."""
    for folder in (SPECS / "unified", SPECS / "unified-format-selftests" / "valid-pass", REPO_SPECS, DATA):
        tests = load_paths([folder])
        assert tests and not [t.load_error for t in tests if t.load_error], folder


@pytest.mark.skipif(not SPECS.is_dir(), reason=f"upstream spec files not found at {SPECS}")
def test_the_valid_fail_files_with_bad_names_are_load_errors_naming_them():
    errors = {
        t.file_stem: t.load_error
        for t in load_paths([SPECS / "unified-format-selftests" / "valid-fail"])
        if t.load_error
    }
    assert "'unsupportedOperation'" in errors["operation-unsupported"]
    assert "['foo']" in errors["ignoreResultAndError-malformed"]


def test_the_table_is_data_every_entity_operation_takes_session_and_timeout_ms():
    assert "timeoutMS" in arguments_of("collection", "insertOne") and "session" in arguments_of(
        "database", "runCommand"
    )
    assert arguments_of("collection", "watch") == arguments_of("collection", "createChangeStream")
    assert "callback" in arguments_of("session", "withTransaction")
    assert arguments_of("changeStream", "iterateUntilDocumentOrError") == frozenset()
    assert {"failPoint", "targetedFailPoint", "waitForEvent", "assertEventCount"} <= set(TEST_RUNNER)
    assert set(ENTITY_OPERATIONS) >= {"client", "database", "collection", "session", "changeStream"}
