"""Verdicts: what one test came to, whatever kind of test it was.

The four outcomes, and the rule that a dirty target (a clean-up problem)
turns any verdict into an ``error`` that keeps the test's own story.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PASSED, FAILED, SKIPPED, ERROR = "passed", "failed", "skipped", "error"
#: Every outcome, in the order tables show them (the console summary, the matrix, the reports' copy).
OUTCOMES = (PASSED, FAILED, ERROR, SKIPPED)


@dataclass
class Verdict:
    outcome: str
    message: str = ""
    mismatches: list[str] = field(default_factory=list)
    #: Free-form facts for the result record (a campaign's schedule and counts).
    details: dict[str, Any] = field(default_factory=dict)


def with_cleanup_problems(verdict: Verdict, problems: list[str]) -> Verdict:
    """A dirty target taints later tests, so clean-up problems make the verdict an error (keeping its story)."""
    if not problems:
        return verdict
    story = (
        f"\n  (the test itself: {verdict.outcome}: {verdict.message})"
        if verdict.message or verdict.outcome != PASSED
        else ""
    )
    return Verdict(ERROR, "clean-up failed: " + "; ".join(problems) + story, verdict.mismatches, verdict.details)
