"""All 50 legacy tests on the embedded target, each checked against the expected-outcomes file."""

from __future__ import annotations

import pytest

from harness.engine.run import HarnessRun, RunOptions
from harness.formats.loaders import load_paths
from tests.conftest import LEGACY_DIR, require_shared_specs


@pytest.fixture(scope="module")
def corpus_results(tmp_path_factory):
    require_shared_specs()
    tests = load_paths([LEGACY_DIR])
    results = tmp_path_factory.mktemp("legacy") / "results.jsonl"
    with HarnessRun(RunOptions(target="embedded", expected="auto", results=results)) as run:
        return [run.run_test(test) for test in tests], results


def test_every_legacy_test_gets_a_verdict(corpus_results):
    outcomes, results = corpus_results
    assert len(outcomes) == 50
    assert len(results.read_text().splitlines()) == 50


def test_no_legacy_test_errors(corpus_results):
    outcomes, _ = corpus_results
    errors = [(r.test_id, r.message) for r in outcomes if r.outcome == "error"]
    assert errors == []


def test_every_outcome_is_what_the_expectations_file_says(corpus_results):
    outcomes, _ = corpus_results
    unexpected = [
        (r.test_id, r.outcome, r.classification.kind, r.message[:300])
        for r in outcomes
        if not r.classification.expected
    ]
    assert unexpected == []


def test_skips_are_only_for_version_or_topology(corpus_results):
    outcomes, _ = corpus_results
    for result in outcomes:
        if result.outcome == "skipped":
            assert "maxServerVersion" in result.message or "topology" in result.message, result.message


@pytest.fixture(scope="module")
def emulated_results():
    """The fail-point tests again, on a SecantusDB daemon without test commands (auto -> emulated)."""
    require_shared_specs()
    tests = [t for t in load_paths([LEGACY_DIR]) if t.uses_failpoints]
    with HarnessRun(RunOptions(target="secantusdb-daemon", expected="none", failpoints="auto")) as run:
        assert run.target.info.details["test_commands"] is False
        assert run.provenance.failpoints == "emulated"
        return [run.run_test(test) for test in tests]


def test_fail_point_tests_get_the_same_verdicts_native_and_emulated(corpus_results, emulated_results):
    native = {r.test_id: r.outcome for r in corpus_results[0]}
    emulated = {r.test_id: r.outcome for r in emulated_results}
    assert len(emulated) == 38
    assert {test_id: native[test_id] for test_id in emulated} == emulated
    assert any(outcome == "passed" for outcome in emulated.values())
