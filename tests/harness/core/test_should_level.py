"""No false alarms: a test that checks only SHOULD-level rules and fails is a recommendation not followed.

Its outcome stays ``failed`` (what was observed), but it does not fail the run, not even under ``--strict``;
the summary counts it on its own line with its rule ids, and the record's ``expectation`` says so. A test
that checks one MUST fails the run as before, and an expected-outcomes entry still lists any test.

The levels come from the rule catalogues and the assertion traces (``specs/coverage/``), read by the
composition root into the run's :class:`~harness.core.rules.RuleIndex`. The broken driver is pymongo that
never kills the old cursor on a resume (the patch of ``tests/specs/scenarios/test_supplementary_gaps.py``):
the CS-KILL-RESUME scenario, traced at SHOULD level, fails for it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.core.expectations import RECOMMENDATION_NOT_FOLLOWED, Expectations
from harness.core.records import RunProvenance
from harness.core.rules import MUST, SHOULD, RuleIndex, TestRules
from harness.core.verdicts import ERROR, FAILED, PASSED, Verdict
from harness.engine.run import CodeDefinedTest, result_of
from tests.helpers import LEGACY_HEADER, failing_causes, known_entry
from tests.paths import REPO
from tests.specs.scenarios.test_supplementary_gaps import _old_cursor_left_open

RESUME_POINTS = REPO / "specs" / "scenarios" / "supplementary" / "resume-points.yml"
KILL_RESUME = "unified/resume-points::CS-KILL-RESUME: a resume kills the old cursor in its own database and collection"

#: Planted levels: two rules of each level, and a trace that holds a MUST rule at its SHOULD half.
PLANTED = RuleIndex(
    entries=[
        TestRules(checks=("CS-PLANTED-MUST",), test="prose/planted::mapped to a MUST"),
        TestRules(checks=("CS-PLANTED-SHOULD",), test="prose/planted::mapped to a SHOULD"),
    ],
    levels={
        "CS-PLANTED-MUST": MUST,
        "CS-PLANTED-HALVES": MUST,
        "CS-PLANTED-SHOULD": SHOULD,
        "CS-PLANTED-ADVICE": SHOULD,
    },
    traced={
        "unified/planted::CS-PLANTED-HALVES: its SHOULD half": (("CS-PLANTED-HALVES", SHOULD),) * 2,
        "unified/planted::CS-PLANTED-ADVICE: and a MUST precondition": (
            ("CS-PLANTED-ADVICE", SHOULD),
            ("CS-PLANTED-MUST", MUST),
        ),
    },
)


def _should_only(test_id: str) -> list[str]:
    return PLANTED.should_only(test_id, test_id.split("::", 1)[1])


@pytest.mark.parametrize(
    "test_id, expected",
    [
        ("unified/planted::CS-PLANTED-SHOULD: named in its description", ["CS-PLANTED-SHOULD"]),
        (
            "unified/planted::CS-PLANTED-SHOULD, CS-PLANTED-ADVICE: two recommendations",
            ["CS-PLANTED-ADVICE", "CS-PLANTED-SHOULD"],
        ),
        ("prose/planted::mapped to a SHOULD", ["CS-PLANTED-SHOULD"]),
        ("unified/planted::CS-PLANTED-HALVES: its SHOULD half", ["CS-PLANTED-HALVES"]),
        ("unified/planted::CS-PLANTED-SHOULD, CS-PLANTED-MUST: one MUST among them", []),
        ("prose/planted::mapped to a MUST", []),
        ("unified/planted::CS-PLANTED-ADVICE: and a MUST precondition", []),
        ("unified/planted::CS-PLANTED-UNCATALOGUED: a rule no catalogue has counts as a MUST", []),
        ("unified/planted::checks no rule at all", []),
    ],
)
def test_a_test_is_should_only_when_every_rule_it_holds_is_a_should(test_id, expected):
    assert _should_only(test_id) == expected


def test_an_index_without_levels_holds_every_rule_as_a_must():
    assert RuleIndex().should_only("unified/x::CS-PLANTED-SHOULD: y", "CS-PLANTED-SHOULD: y") == []
    assert PLANTED.with_levels({}, {}).should_only("prose/planted::mapped to a SHOULD") == []


def test_only_an_unlisted_failure_of_a_should_only_test_is_a_recommendation_not_followed():
    should = ["CS-PLANTED-SHOULD"]
    listed = Expectations([known_entry("t/listed", FAILED, "a known deviation")])
    causes = failing_causes()
    finding = Expectations.empty().classify("t/x", FAILED, causes, should)
    assert (finding.expected, finding.kind) == (True, RECOMMENDATION_NOT_FOLLOWED)
    assert finding.recommendation_not_followed and "CS-PLANTED-SHOULD" in finding.reason
    assert Expectations.empty().classify("t/x", FAILED, causes, []).kind == "unexpected-failure"
    errors = failing_causes(outcome=ERROR)
    assert Expectations.empty().classify("t/x", ERROR, errors, should).kind == "unexpected-error"  # no finding
    assert Expectations.empty().classify("t/x", PASSED, (), should).kind == "pass"
    assert listed.classify("t/listed", FAILED, causes, should).kind == "known-failure"
    assert listed.classify("t/listed", PASSED, (), should).kind == "unexpected-pass"


def test_the_record_keeps_the_failure_and_names_the_should_rules_in_its_expectation():
    check = CodeDefinedTest("unified", "planted", "CS-PLANTED-SHOULD: named in its description", open=lambda run: None)
    provenance = RunProvenance("run", {"name": "t"}, {"name": "d"})
    result = result_of(check, Verdict(FAILED, "no killCursors"), provenance, Expectations.empty(), PLANTED, "now", 0.1)
    assert result.outcome == FAILED and result.record["outcome"] == FAILED
    assert result.record["expectation"] == {
        "expected": True,
        "kind": RECOMMENDATION_NOT_FOLLOWED,
        "reason": "checks only SHOULD-level rules: CS-PLANTED-SHOULD",
        "entries": [],
        "unexplained": 1,
    }
    assert result.record["rules"] == ["CS-PLANTED-SHOULD"]


# -- the CLI, on the project's catalogues and traces, with a pymongo that never kills the old cursor ----------
MUST_FAILURE = """
  - description: "CS-TOKEN-MISSING: planted, a MUST-level check that fails"
    target: collection
    operations:
      - {database: harness-selftest, collection: coll, name: insertOne, arguments: {document: {x: 1}}}
    result: {success: [{operationType: delete}]}
"""


def _harness_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *specs: Path
) -> tuple[int, str, dict[str, dict]]:
    """``harness run`` in this process (so the patched pymongo is the one under test): status, output, records."""
    from harness.app.cli import main

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    results = tmp_path / "results.jsonl"
    status = main(
        [
            "run",
            *[arg for spec in specs for arg in ("--specs", str(spec))],
            "--expected",
            "none",
            "--strict",
            "--results",
            str(results),
        ]
    )
    out = capsys.readouterr()
    assert results.exists(), f"no results (exit status {status}): {out.out}{out.err}"
    records = [json.loads(line) for line in results.read_text().splitlines()]
    return status, out.out, {record["test_id"]: record for record in records}


def test_a_driver_that_skips_a_should_fails_its_test_without_failing_the_run(tmp_path, monkeypatch, capsys):
    _old_cursor_left_open(monkeypatch)
    status, out, records = _harness_run(tmp_path, monkeypatch, capsys, RESUME_POINTS)
    record = records[KILL_RESUME]
    assert record["outcome"] == FAILED and 'expected "killCursors"' in record["message"]
    assert record["expectation"]["kind"] == RECOMMENDATION_NOT_FOLLOWED and record["expectation"]["expected"]
    assert "CS-KILL-RESUME" in record["expectation"]["reason"]
    assert "1 SHOULD-level recommendations not followed" in out
    assert f"SHOULD not followed: {KILL_RESUME} (checks only SHOULD-level rules: CS-KILL-RESUME)" in out
    assert "0 unexpected" in out and status == 0, out  # under --strict too


def test_a_must_level_failure_in_the_same_run_still_fails_it(tmp_path, monkeypatch, capsys):
    must_file = tmp_path / "planted.yml"
    must_file.write_text(LEGACY_HEADER + MUST_FAILURE)
    _old_cursor_left_open(monkeypatch)
    status, out, records = _harness_run(tmp_path, monkeypatch, capsys, RESUME_POINTS, must_file)
    assert records[KILL_RESUME]["expectation"]["kind"] == RECOMMENDATION_NOT_FOLLOWED
    must = records["legacy/planted::CS-TOKEN-MISSING: planted, a MUST-level check that fails"]
    assert must["rules"] == ["CS-TOKEN-MISSING"] and must["expectation"]["kind"] == "unexpected-failure"
    assert "1 SHOULD-level recommendations not followed" in out and "1 unexpected" in out
    assert status == 1, out
