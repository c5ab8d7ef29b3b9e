"""One of each thing: the outcome names and the classification kinds are defined once.

``harness.record.outcomes`` names the outcomes (the engine names them through
``harness.core.verdicts``) and ``harness.core.expectations`` the classification
kinds; every other table, the report's included, uses theirs: the report may
import ``harness.record`` and nothing else of the harness.
"""

from __future__ import annotations

import ast

from harness.core import expectations, verdicts
from tests.helpers import failing_causes, known_entry
from tests.paths import REPO

ROOT = REPO
#: The modules allowed to spell the names out.
DEFINITIONS = {ROOT / "harness" / "record" / "outcomes.py", ROOT / "harness" / "core" / "expectations.py"}
#: Literals that can only be an outcome or a kind ("failed", "error", "pass" and "skip" mean other things too:
#: a matrix cell's status, a spec file's key, a find option).
SPELLED_ONCE = {
    verdicts.PASSED,
    verdicts.SKIPPED,
    expectations.UNEXPECTED_PASS,
    expectations.RECOMMENDATION_NOT_FOLLOWED,
} | {
    prefix + word
    for prefix in (expectations.KNOWN, expectations.UNEXPECTED)
    for word in ("failure", verdicts.ERROR, verdicts.SKIPPED, verdicts.FAILED)
}


def test_the_reports_outcomes_are_the_record_s():
    from harness.record import outcomes as record
    from reports import outcomes, statements

    assert outcomes.OUTCOMES is record.OUTCOMES is verdicts.OUTCOMES
    assert outcomes.FAILING == (verdicts.FAILED, verdicts.ERROR)
    assert outcomes.DECIDED == tuple(o for o in verdicts.OUTCOMES if o != verdicts.SKIPPED)
    assert statements.FLAKY is record.FLAKY


def test_the_console_and_the_matrix_use_the_core_outcomes():
    from harness.app import reporting
    from harness.matrix import observe, summary

    assert reporting.OUTCOMES is observe.OUTCOMES is summary.OUTCOMES is verdicts.OUTCOMES


def test_an_expectation_gives_a_failure_or_an_error():
    assert expectations.KNOWN_OUTCOMES == (verdicts.FAILED, verdicts.ERROR)


def test_every_kind_classify_gives_is_built_from_the_one_vocabulary():
    listed = expectations.Expectations([known_entry(f"t/{o}", o) for o in expectations.KNOWN_OUTCOMES])
    kinds = {
        listed.classify(f"t/{entry}", outcome, failing_causes(outcome=outcome), should_only).kind
        for entry in [*expectations.KNOWN_OUTCOMES, "unlisted"]
        for outcome in verdicts.OUTCOMES
        for should_only in ((), ("CS-SOME-RECOMMENDATION",))
    }
    assert kinds <= SPELLED_ONCE | {expectations.PASS, expectations.SKIP}
    assert {
        expectations.PASS,
        expectations.SKIP,
        expectations.UNEXPECTED_PASS,
        "known-failure",
        "unexpected-failure",
        "unexpected-error",
        "known-error",
        "recommendation-not-followed",
    } <= kinds


def test_no_other_module_spells_an_outcome_or_a_kind():
    spelled = []
    for package in ("harness", "faults", "prose_tests"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path in DEFINITIONS:
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Constant) and node.value in SPELLED_ONCE:
                    spelled.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert spelled == [], "use harness.record.outcomes / harness.core.expectations:\n" + "\n".join(spelled)
