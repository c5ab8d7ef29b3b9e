"""The walk of one spec test goes down only: the run's one runner builds each test's case with its collaborators,
and the case (what test-runner operations see) holds no reference back to the runner or the run
(docs/architecture.md, "The walk of one test")."""

from __future__ import annotations

from typing import Any

from harness.engine.spec_context import SpecContext
from tests.helpers import legacy_tests

ONE_TEST = """
  - description: one insert
    target: collection
    topology: [replicaset]
    operations:
      - {database: harness-selftest, collection: coll, name: insertOne, arguments: {document: {x: 1}}}
    expectations: []
    result:
      success:
        - {operationType: insert, ns: {db: harness-selftest, coll: coll}, fullDocument: {x: 1}}
"""


def _back_references(case: Any, *above: Any) -> list[str]:
    """The case's attributes that hold one of ``above`` (the runner, the run): the climbs a case could make."""
    return sorted(name for name, value in vars(case).items() if any(value is up for up in above))


def test_a_case_gets_the_runs_collaborators_and_holds_no_runner(embedded_run, tmp_path):
    [test] = legacy_tests(tmp_path, ONE_TEST)
    case = embedded_run.runner.case(test)
    assert isinstance(case, SpecContext)
    assert (case.target, case.driver, case.failpoints) == (
        embedded_run.target,
        embedded_run.driver,
        embedded_run.failpoints,
    )
    assert case.driver_uri == embedded_run.driver_uri
    assert _back_references(case, embedded_run.runner, embedded_run) == []


def test_a_case_given_a_back_reference_is_caught(embedded_run, tmp_path):
    """The check above can fail: a case that kept its runner (as SpecContext did before) is named."""
    [test] = legacy_tests(tmp_path, ONE_TEST)
    case = embedded_run.runner.case(test)
    case.runner = embedded_run.runner
    assert _back_references(case, embedded_run.runner, embedded_run) == ["runner"]


def test_the_case_the_runner_builds_runs_to_its_verdict(embedded_run, tmp_path):
    [test] = legacy_tests(tmp_path, ONE_TEST)
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "passed", verdict.message
