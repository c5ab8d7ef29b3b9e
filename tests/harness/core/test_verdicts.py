"""One of each thing: the outcome names and the classification kinds are defined once.

``harness.core.verdicts`` names the outcomes and ``harness.core.expectations``
the classification kinds; every other table uses theirs. The reports may not
import the harness (the ``reports`` import contract), so ``reports.outcomes``
keeps a copy, and this test pins the copy to the original.
"""

from __future__ import annotations

import ast

from harness.core import expectations, verdicts
from tests.helpers import failing_causes, known_entry
from tests.paths import REPO

ROOT = REPO
#: The modules allowed to spell the names out.
DEFINITIONS = {ROOT / "harness" / "core" / "verdicts.py", ROOT / "harness" / "core" / "expectations.py"}
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


def test_the_reports_copy_of_the_outcomes_is_the_harness_s():
    from reports import outcomes

    assert outcomes.OUTCOMES == verdicts.OUTCOMES
    assert outcomes.FAILING == (verdicts.FAILED, verdicts.ERROR)
    assert outcomes.DECIDED == tuple(o for o in verdicts.OUTCOMES if o != verdicts.SKIPPED)


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
    assert spelled == [], "use harness.core.verdicts / harness.core.expectations:\n" + "\n".join(spelled)
