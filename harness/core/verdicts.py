"""Verdicts: what one test came to, whatever kind of test it was.

The four outcomes (named by the record: :mod:`harness.record.outcomes`), and
the rule that a dirty target (a clean-up problem) turns any verdict into an ``error`` that keeps the test's own story.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.core.causes import SET_UP, Cause

# The outcome names are the record's (harness.record.outcomes); the engine's modules name them from here.
from harness.record.outcomes import ERROR as ERROR
from harness.record.outcomes import FAILED as FAILED
from harness.record.outcomes import OUTCOMES as OUTCOMES
from harness.record.outcomes import PASSED as PASSED
from harness.record.outcomes import SKIPPED as SKIPPED


@dataclass
class Verdict:
    outcome: str
    message: str = ""
    mismatches: list[str] = field(default_factory=list)
    #: Free-form facts for the result record (a campaign's schedule and counts).
    details: dict[str, Any] = field(default_factory=dict)
    #: Why it failed, one :class:`~harness.core.causes.Cause` per broken check (docs/causes.md); empty for a
    #: pass or a skip, never empty for a failure or an error once the lifecycle has given the verdict.
    causes: list[Any] = field(default_factory=list)
    #: Checks of the test that a flow-breaking cause left unreached (not counted as failed).
    not_reached: list[str] = field(default_factory=list)


def with_cleanup_problems(verdict: Verdict, problems: list[str]) -> Verdict:
    """A dirty target taints later tests, so clean-up problems make the verdict an error (keeping its story)."""
    if not problems:
        return verdict
    story = (
        f"\n  (the test itself: {verdict.outcome}: {verdict.message})"
        if verdict.message or verdict.outcome != PASSED
        else ""
    )
    clean_up = Cause(SET_UP, step="teardown", fact="clean-up failed: " + "; ".join(problems))
    return Verdict(
        ERROR,
        "clean-up failed: " + "; ".join(problems) + story,
        verdict.mismatches,
        verdict.details,
        [*verdict.causes, clean_up],
        verdict.not_reached,
    )
