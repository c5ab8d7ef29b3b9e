"""Outcome names, and what several verdicts of one test come to: one definition for the run and the report.

A record's ``outcome`` is one of :data:`OUTCOMES`. A test run more than once (``harness run
--retry-unexpected N`` or ``--repeat N``, a matrix's repeats, runs over time) has a **status** over its
verdicts: ``pass`` when every decided one passed, ``fail`` when none did, ``flaky`` when both happened, and
``skip`` when nothing was decided. :data:`STATUS_RULES` states it as data, so the run's summary and the
conformance statement (:func:`status`, in Python) and the report (``reports.outcomes.status``, a Spark
column built from the same rules) cannot disagree on the same records.
"""

from __future__ import annotations

from collections.abc import Iterable

PASSED, FAILED, ERROR, SKIPPED = "passed", "failed", "error", "skipped"
#: Every outcome a record may carry, in the order tables show them.
OUTCOMES = (PASSED, FAILED, ERROR, SKIPPED)
#: The outcomes that decide something about the test (a skip decides nothing).
DECIDED = (PASSED, FAILED, ERROR)
#: The outcomes that count as a failure.
FAILING = (FAILED, ERROR)
#: A test that both failed and passed: never a record's outcome, a test's across its verdicts (a statement's, the
#: run's summary's); never ``passed``.
FLAKY = "flaky"

#: A group's status (the report's ``status`` column).
PASS, FAIL, FLAKY_STATUS, SKIP = "pass", "fail", "flaky", "skip"
#: The status of a group of verdicts from whether any passed and whether any failed: the first rule whose
#: conditions hold (None: either way).
STATUS_RULES: tuple[tuple[str, bool | None, bool | None], ...] = (
    (FLAKY_STATUS, True, True),
    (FAIL, None, True),
    (PASS, True, None),
    (SKIP, None, None),
)


def status(passed: int, failures: int) -> str:
    """``pass``, ``fail``, ``flaky`` or ``skip`` from a group's counts of passed and failing verdicts."""
    for name, needs_pass, needs_failure in STATUS_RULES:
        if (needs_pass is None or (passed > 0) == needs_pass) and (
            needs_failure is None or (failures > 0) == needs_failure
        ):
            return name
    raise AssertionError("STATUS_RULES ends with a rule that always holds")


def status_of(outcomes: Iterable[str]) -> str:
    """The status of a test's verdicts, given their outcomes."""
    seen = list(outcomes)
    return status(sum(1 for o in seen if o == PASSED), sum(1 for o in seen if o in FAILING))


def outcome_of(outcomes: Iterable[str]) -> str:
    """What a test's verdicts come to, as an outcome: ``flaky`` when some passed and some failed; else ``failed``
    (``error`` when every failing one was an error), ``passed``, or ``skipped``."""
    seen = list(outcomes)
    found = status_of(seen)
    if found == FAIL:
        return ERROR if all(o == ERROR for o in seen if o in FAILING) else FAILED
    return {PASS: PASSED, FLAKY_STATUS: FLAKY, SKIP: SKIPPED}[found]


#: A status as a statement's outcome; ``fail`` is ``failed`` (``error`` where every failing verdict was one).
STATUS_OUTCOME = {PASS: PASSED, FAIL: FAILED, FLAKY_STATUS: FLAKY, SKIP: SKIPPED}
