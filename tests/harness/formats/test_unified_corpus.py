"""The unified runner end to end on the embedded SecantusDB target.

* the change-stream corpus: every test's outcome is what
  ``specs/expectations/secantusdb.yml`` says (the ``.json`` encodings load to
  the same tests, see ``test_unified_loader``, so the ``.yml`` files are run);
* the format's self-tests: valid-pass tests pass or are skipped with a
  reason, valid-fail tests never pass.

One server serves the module; several corpus tests wait ~10 s for pymongo's
monitor after a state-change error (the server omits ``topologyVersion``),
which is most of the ~80 s this module takes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.engine.run import HarnessRun, RunOptions
from harness.formats.loaders import load_paths
from tests.paths import SHARED_SPECS

SPECS = SHARED_SPECS / "upstream"
UNIFIED = SPECS / "unified"
SELFTESTS = SPECS / "unified-format-selftests"

pytestmark = pytest.mark.skipif(not UNIFIED.is_dir(), reason=f"upstream spec files not found at {SPECS}")

CORPUS = load_paths([UNIFIED]) if UNIFIED.is_dir() else []
VALID_PASS = load_paths([SELFTESTS / "valid-pass"]) if SELFTESTS.is_dir() else []
VALID_FAIL = load_paths([SELFTESTS / "valid-fail"]) if SELFTESTS.is_dir() else []


@pytest.fixture(scope="module")
def run() -> Iterator[HarnessRun]:
    with HarnessRun(RunOptions(target="embedded", expected="auto")) as harness_run:
        yield harness_run


@pytest.mark.parametrize("test", CORPUS, ids=[t.test_id for t in CORPUS])
def test_change_stream_corpus_outcome_is_as_expected(run: HarnessRun, test) -> None:
    result = run.run_test(test)
    assert result.classification.expected, (
        f"{result.outcome} ({result.classification.kind}): {result.message} {result.classification.reason}"
    )


@pytest.mark.parametrize("test", VALID_PASS, ids=[t.test_id for t in VALID_PASS])
def test_valid_pass_selftest_passes_or_is_skipped_with_a_reason(run: HarnessRun, test) -> None:
    result = run.run_test(test)
    assert result.outcome in ("passed", "skipped"), result.message
    if result.outcome == "skipped":
        assert result.message


@pytest.mark.parametrize("test", VALID_FAIL, ids=[t.test_id for t in VALID_FAIL])
def test_valid_fail_selftest_does_not_pass(run: HarnessRun, test) -> None:
    result = run.run_test(test)
    assert result.outcome in ("failed", "error")
    assert result.message


def test_an_unknown_operation_is_an_error_naming_it(run: HarnessRun) -> None:
    (test,) = [t for t in VALID_FAIL if t.file_stem == "operation-unsupported"]
    result = run.run_test(test)
    assert result.outcome == "error" and "unsupportedOperation" in result.message


RUNNER_OPERATIONS_FILE = """
description: test-runner operations
schemaVersion: "1.9"
createEntities:
  - client: {id: client0, observeEvents: [commandStartedEvent]}
  - database: {id: database0, client: client0, databaseName: runnerops}
  - collection: {id: collection0, database: database0, collectionName: coll0}
  - session: {id: session0, client: client0}
initialData:
  - {databaseName: runnerops, collectionName: coll0, documents: [{_id: 1}]}
tests:
  - description: assertions that hold
    operations:
      - {name: createIndex, object: collection0, arguments: {keys: {x: 1}, name: x_1}}
      - {name: assertCollectionExists, object: testRunner, arguments: {databaseName: runnerops, collectionName: coll0}}
      - {name: assertCollectionNotExists, object: testRunner,
         arguments: {databaseName: runnerops, collectionName: nope}}
      - {name: assertIndexExists, object: testRunner,
         arguments: {databaseName: runnerops, collectionName: coll0, indexName: x_1}}
      - {name: assertIndexNotExists, object: testRunner,
         arguments: {databaseName: runnerops, collectionName: coll0, indexName: y_1}}
      - {name: find, object: collection0, arguments: {filter: {}, session: session0}}
      - {name: find, object: collection0, arguments: {filter: {}, session: session0}}
      - {name: assertSameLsidOnLastTwoCommands, object: testRunner, arguments: {client: client0}}
      - {name: find, object: collection0, arguments: {filter: {}}}
      - {name: assertDifferentLsidOnLastTwoCommands, object: testRunner, arguments: {client: client0}}
      - {name: assertSessionTransactionState, object: testRunner, arguments: {session: session0, state: none}}
      - {name: assertSessionNotDirty, object: testRunner, arguments: {session: session0}}
      - {name: assertSessionUnpinned, object: testRunner, arguments: {session: session0}}
      - {name: assertNumberConnectionsCheckedOut, object: testRunner, arguments: {client: client0, connections: 0}}
    expectEvents:
      - client: client0
        ignoreExtraEvents: true
        events:
          - commandStartedEvent: {commandName: createIndexes}
          - commandStartedEvent: {command: {find: coll0, lsid: {$$sessionLsid: session0}}}
    outcome:
      - {databaseName: runnerops, collectionName: coll0, documents: [{_id: 1}]}
"""

#: Each assertion that must fail on the same set-up, with a word its message must carry.
FAILING_ASSERTIONS = [
    ("assertCollectionExists", "{databaseName: runnerops, collectionName: nope}", "does not exist"),
    ("assertCollectionNotExists", "{databaseName: runnerops, collectionName: coll0}", "exists"),
    ("assertIndexExists", "{databaseName: runnerops, collectionName: coll0, indexName: y_1}", "does not exist"),
    ("assertIndexNotExists", "{databaseName: runnerops, collectionName: coll0, indexName: _id_}", "exists"),
    ("assertSameLsidOnLastTwoCommands", "{client: client0}", "command(s)"),
    ("assertSessionTransactionState", "{session: session0, state: in_progress}", "transactionState"),
    ("assertSessionDirty", "{session: session0}", "dirty"),
    ("assertSessionPinned", "{session: session0}", "pinned"),
    ("assertNumberConnectionsCheckedOut", "{client: client0, connections: 3}", "checked out"),
]


def test_test_runner_operations_that_hold_pass(run: HarnessRun, tmp_path: Path) -> None:
    spec = tmp_path / "runner-operations.yml"
    spec.write_text(RUNNER_OPERATIONS_FILE)
    (test,) = load_paths([spec])
    result = run.run_test(test)
    assert result.outcome == "passed", result.message


@pytest.mark.parametrize(("name", "arguments", "words"), FAILING_ASSERTIONS, ids=[f[0] for f in FAILING_ASSERTIONS])
def test_test_runner_assertions_that_do_not_hold_fail(
    run: HarnessRun, tmp_path: Path, name: str, arguments: str, words: str
) -> None:
    spec = tmp_path / "runner-assertion.yml"
    head = RUNNER_OPERATIONS_FILE.split("tests:")[0]
    spec.write_text(
        head + f"tests:\n  - description: {name} fails\n    operations:\n"
        f"      - {{name: {name}, object: testRunner, arguments: {arguments}}}\n"
    )
    (test,) = load_paths([spec])
    result = run.run_test(test)
    assert result.outcome == "failed", result.message
    assert name in result.message and words in result.message


def test_outcome_mismatch_fails(run: HarnessRun, tmp_path: Path) -> None:
    spec = tmp_path / "outcome.yml"
    spec.write_text(
        RUNNER_OPERATIONS_FILE.split("tests:")[0]
        + """tests:
  - description: wrong outcome
    operations: []
    outcome:
      - {databaseName: runnerops, collectionName: coll0, documents: [{_id: 2}]}
"""
    )
    (test,) = load_paths([spec])
    result = run.run_test(test)
    assert result.outcome == "failed" and "runnerops.coll0" in result.message
