"""The change-stream prose tests, automated as driver-neutral checks.

The upstream README lists prose tests every driver implements by hand; each
live one is a :class:`~harness.engine.run.CodeDefinedTest` here (``format="prose"``,
``file="change-streams-prose"``, named ``"<number>: <title>"``), ordered by
number, with one check per variant where a test has several situations.
Tests 9 and 12 of an earlier revision (removed from the live list; they need
servers before 4.0.7) run through reply shaping and are named
``"<number> (README at <commit>): <title>"`` (:mod:`prose_tests.earlier_revision`).
Run them through :meth:`harness.engine.run.HarnessRun.run_test` like any test::

    from prose_tests import load_prose_checks
    for check in load_prose_checks():
        result = run.run_test(check)
"""

from __future__ import annotations

from functools import partial

from harness.engine.run import CodeDefinedTest
from prose_tests import earlier_revision, resume_tokens, resuming, stream_lifecycle  # noqa: F401 - registers the checks
from prose_tests.support import PROSE_FILE, REGISTRY, ProseContext, ProseTest, preflight

#: Every live prose test of the upstream README, by number; each has at least one check.
LIVE_PROSE_TESTS = (1, 2, 3, 4, 6, 7, 8, 11, 13, 14, 17, 18, 19)
#: Prose tests the live README lists as removed, checked as an earlier revision numbered them
#: (``earlier_revision.REVISION``), through reply shaping.
EARLIER_REVISION_TESTS = (9, 12)


def _ordered() -> list[ProseTest]:
    return sorted(REGISTRY, key=lambda test: test.number)  # stable: variants keep their order


def load_prose_checks() -> list[CodeDefinedTest]:
    """One :class:`CodeDefinedTest` per prose test (and variant), ordered by number."""
    return [
        CodeDefinedTest(
            format="prose",
            file=PROSE_FILE,
            name=test.name,
            open=partial(ProseContext, test=test),
            preflight=partial(preflight, test),
        )
        for test in _ordered()
    ]


def check_id(check: CodeDefinedTest) -> str:
    """Short, stable id of a prose check (``"11-empty-batch"``), for pytest ids and selections."""
    for test in REGISTRY:
        if test.name == check.name:
            return test.short_id
    raise KeyError(check.name)


CHECKS: list[CodeDefinedTest] = load_prose_checks()

__all__ = ["CHECKS", "EARLIER_REVISION_TESTS", "LIVE_PROSE_TESTS", "check_id", "load_prose_checks"]
