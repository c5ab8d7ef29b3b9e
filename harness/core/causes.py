"""Causes: why a test failed, one observed fact per broken check (docs/causes.md).

A verdict says that a test failed; its causes say which check broke and what was observed there, so that
an expected-outcomes entry can excuse one cause and not the whole test. The engine builds causes where it
finds them (a comparator's mismatch, an error the driver raised, an iteration that waited its budget); the
record keeps them; :mod:`harness.core.expectations` explains them one by one.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from harness.core.errors import TestFailure
from harness.core.matching import MISSING, Mismatch, show
from harness.core.model import NOT_GIVEN, TEST_RUNNER, SpecTest
from harness.core.observations import ErrorInfo

# The clauses are the record's (harness.record.causes: a cause's shape); the engine names them from here.
from harness.record.causes import CHECK as CHECK
from harness.record.causes import CLAUSES as CLAUSES
from harness.record.causes import ERROR_MATCH as ERROR_MATCH
from harness.record.causes import ERROR_NOT_RAISED as ERROR_NOT_RAISED
from harness.record.causes import ERROR_RAISED as ERROR_RAISED
from harness.record.causes import EVENT as EVENT
from harness.record.causes import EVENT_MISSING as EVENT_MISSING
from harness.record.causes import EXTRA_EVENTS as EXTRA_EVENTS
from harness.record.causes import LOG_MESSAGES as LOG_MESSAGES
from harness.record.causes import NO_CHANGE as NO_CHANGE
from harness.record.causes import OUTCOME as OUTCOME
from harness.record.causes import RESULT as RESULT
from harness.record.causes import SET_UP as SET_UP
from harness.record.causes import TIMEOUT as TIMEOUT
from harness.record.outcomes import FAILING

#: Clauses after which the test's entities are no longer in the state it assumes: nothing later is run.
FLOW_BREAKING = frozenset({ERROR_NOT_RAISED, ERROR_RAISED, NO_CHANGE, SET_UP, TIMEOUT})


#: The operations that wait for a change, and so can end with ``no-change``.
ITERATIONS = frozenset({"iterateUntilDocumentOrError", "iterateOnce"})


def clauses_of(test: SpecTest | None) -> tuple[str, ...]:
    """The clauses a test's checks can report, in :data:`CLAUSES` order (``harness coverage`` shows them per rule).
    ``None`` is a code-defined check (a prose test, a server check): its assertions are ``check`` causes, and what
    it runs may raise. ``set-up`` and ``timeout`` judge no rule and are left out."""
    if test is None:
        return (CHECK, ERROR_RAISED)
    found = {ERROR_RAISED}
    for operation in test.operations:
        if operation.expect_result is not NOT_GIVEN and not operation.ignore_result_and_error:
            found.add(RESULT)
        if operation.expect_error is not None:
            found.update((ERROR_MATCH, ERROR_NOT_RAISED))
        if operation.name in ITERATIONS:
            found.add(NO_CHANGE)
        if operation.object == TEST_RUNNER and operation.name.startswith("assert"):
            found.add(CHECK)
    if test.expect_error is not None:
        found.update((ERROR_MATCH, ERROR_NOT_RAISED))
    for events in test.expect_events:
        found.update((EVENT, EVENT_MISSING))
        if not events.ignore_extra_events:
            found.add(EXTRA_EVENTS)
    if test.expect_log_messages:
        found.add(LOG_MESSAGES)
    if test.expected_data:
        found.add(OUTCOME)
    return tuple(clause for clause in CLAUSES if clause in found)


def error_fields(error: ErrorInfo | None) -> dict[str, Any] | None:
    """An error as a cause holds it: what an entry's signature can name."""
    if error is None:
        return None
    return {
        "type": error.type,
        "code": error.code,
        "code_name": error.code_name,
        "labels": list(error.labels),
        "client_error": error.is_client_error,
        "timeout_error": error.is_timeout_error,
        "message": error.message,
    }


def _shown(value: Any) -> str:
    return "" if value is None else show(value)


@dataclass(frozen=True)
class Cause:
    """One broken check: where (``step``, ``path``), what kind (``clause``) and the observed fact."""

    clause: str
    step: str = ""
    path: str = ""
    expected: str = ""
    actual: str = ""
    error: dict[str, Any] | None = None
    waited_s: float | None = None
    fact: str = ""
    rules: tuple[str, ...] = ()
    #: ``FILE#id`` of the expected-outcomes entry that explains this cause; "" while unexplained.
    known: str = ""

    @property
    def flow_breaking(self) -> bool:
        return self.clause in FLOW_BREAKING

    def with_rules(self, rules: tuple[str, ...] | list[str]) -> Cause:
        return self if self.rules else replace(self, rules=tuple(rules))

    def explained(self, entry_ref: str, rule: str) -> Cause:
        """The cause as an entry explains it: it then stands for the entry's one rule, or for none (an entry of a
        kind that names no rule, such as a push mode's read-ahead)."""
        return replace(self, known=entry_ref, rules=(rule,) if rule else ())

    def searched_text(self) -> str:
        """What an entry's ``message`` pattern is searched in: the fact, then the error's message."""
        return "\n".join(filter(None, (self.fact, str((self.error or {}).get("message") or ""))))

    def as_record(self) -> dict[str, Any]:
        return {
            "clause": self.clause,
            "step": self.step,
            "path": self.path,
            "expected": self.expected,
            "actual": self.actual,
            "error": self.error,
            "waited_s": self.waited_s,
            "fact": self.fact,
            "rules": list(self.rules),
            "known": self.known or None,
        }


def from_record(data: dict[str, Any]) -> Cause:
    """A cause read back from a record (a parallel worker's result)."""
    return Cause(
        str(data.get("clause", CHECK)),
        step=str(data.get("step") or ""),
        path=str(data.get("path") or ""),
        expected=str(data.get("expected") or ""),
        actual=str(data.get("actual") or ""),
        error=data.get("error"),
        waited_s=data.get("waited_s"),
        fact=str(data.get("fact") or ""),
        rules=tuple(data.get("rules") or ()),
        known=str(data.get("known") or ""),
    )


def from_mismatch(clause: str, step: str, mismatch: Mismatch, error: ErrorInfo | None = None) -> Cause:
    """A comparator's mismatch: the path, both sides, and why they differ."""
    return Cause(
        clause,
        step=step,
        path=mismatch.path,
        expected=show(mismatch.expected),
        actual="<missing>" if mismatch.actual is MISSING else show(mismatch.actual),
        error=error_fields(error),
        fact=str(mismatch),
    )


def from_error(clause: str, step: str, error: ErrorInfo | None, fact: str, expected: Any = None) -> Cause:
    """An error raised (unexpected, or standing in the way of the test) with the error's class and code."""
    return Cause(clause, step=step, error=error_fields(error), expected=_shown(expected), fact=fact)


def check(fact: str, step: str = "", expected: Any = None, actual: Any = None) -> Cause:
    """A prose test's or code-defined check's assertion."""
    return Cause(CHECK, step=step, expected=_shown(expected), actual=_shown(actual), fact=fact)


def of_verdict(outcome: str, message: str, causes: list[Cause], rules: list[str]) -> list[Cause]:
    """A verdict's causes, each knowing the test's rules: a failure or an error that named none (a verdict made
    before the test ran, a lost target) gets one cause made of its message; a pass or a skip has none."""
    if outcome not in FAILING:
        return []
    found = causes or [Cause(SET_UP if outcome == "error" else CHECK, fact=message.splitlines()[0] if message else "")]
    return [cause.with_rules(rules) for cause in found]


@dataclass
class Findings:
    """What one test found so far: its causes in order (with the failures' messages and mismatches, for the
    record's text), and the checks a flow-breaking cause left unreached."""

    causes: list[Cause] = field(default_factory=list)
    not_reached: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    mismatches: list[Any] = field(default_factory=list)

    def add(self, cause: Cause) -> None:
        self.causes.append(cause)

    def found(self, failure: TestFailure, step: str = "") -> None:
        """One check's failure joins the findings (a failure that names no cause is one ``check`` cause)."""
        self.messages.append(str(failure))
        self.mismatches.extend(failure.mismatches)
        self.causes.extend(failure.causes or [check(str(failure), step=step)])
        self.not_reached.extend(failure.not_reached)

    @property
    def flow_broken(self) -> bool:
        return any(cause.flow_breaking for cause in self.causes)
