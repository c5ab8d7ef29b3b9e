"""Expected outcomes per target: the tests a target is known to fail, each with its reason.

The file (YAML, read by :mod:`harness.formats.expectations_file`) looks like::

    target: secantusdb
    known:
      - test: "legacy/change-streams::Test consecutive resume"   # test_id, fnmatch patterns allowed
        outcome: failed                                        # failed (default), error or skipped
        reason: "one line saying what the target does wrong"

A result is then *expected* (it matches the file: a pass not listed, or a
listed test with its listed outcome, or a listed test skipped because this
target does not meet its requirements) or *unexpected*: an unexpected failure,
or an unexpected pass, which is news too (the entry is stale). A run fails
only on the unexpected.

One failure is neither: an unlisted test that checks only SHOULD-level rules
(:meth:`harness.core.rules.RuleIndex.should_only`) and failed is a
*recommendation not followed*. Its outcome stays ``failed`` (what was
observed), but a check stricter than the spec's MUST must not fail a run, so
it is expected, and the summary counts it on its own.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.core.verdicts import FAILED, OUTCOMES, PASSED, SKIPPED

#: The outcomes an entry may name: every outcome but a pass (a pass is what an unlisted test is expected to do).
KNOWN_OUTCOMES = tuple(outcome for outcome in OUTCOMES if outcome != PASSED)

#: A classification's ``kind``: ``pass`` and ``skip`` (unlisted, as expected), ``known-<word>`` (listed, as
#: listed), ``unexpected-<word>`` (unlisted and failing, or listed with another outcome) and ``unexpected-pass``.
PASS, SKIP, UNEXPECTED_PASS = "pass", "skip", "unexpected-pass"
KNOWN, UNEXPECTED = "known-", "unexpected-"
#: An unlisted failure of a test that checks only SHOULD-level rules: a finding that does not fail the run.
RECOMMENDATION_NOT_FOLLOWED = "recommendation-not-followed"
#: How a kind names a failing or skipped outcome where not by the outcome's own name.
_KIND_WORD = {FAILED: "failure"}


class ExpectationsError(Exception):
    """A malformed expected-outcomes file; names the file and the entry."""


@dataclass(frozen=True)
class KnownOutcome:
    pattern: str
    outcome: str
    reason: str


@dataclass(frozen=True)
class Classification:
    expected: bool
    kind: str  # PASS, SKIP, UNEXPECTED_PASS, RECOMMENDATION_NOT_FOLLOWED, or KNOWN / UNEXPECTED and an outcome's word
    reason: str = ""

    @property
    def known(self) -> bool:
        """A listed test that did what its entry says (a known deviation)."""
        return self.kind.startswith(KNOWN)

    @property
    def recommendation_not_followed(self) -> bool:
        """An unlisted failure of a test that checks only SHOULD-level rules (the reason names them)."""
        return self.kind == RECOMMENDATION_NOT_FOLLOWED

    def as_record(self) -> dict[str, Any]:
        return {"expected": self.expected, "kind": self.kind, "reason": self.reason}


@dataclass(frozen=True)
class Adjustment:
    """A change to how the driver under test connects, for one target and driver pair (``adjust:`` in a pair's
    file): URI options added to the driver's connection string, and why. Only for a reproduced fault of the target
    that makes this driver's verdicts depend on timing (the reason names the reproduction); recorded in every
    record and said at the start of the run."""

    uri_options: dict[str, str]
    reason: str
    source: str


def _adjustments(data: Any, source: str) -> list[Adjustment]:
    """``adjust: {uriOptions: {NAME: VALUE}, reason: TEXT}``: both required, option values plain text."""
    adjust = data.get("adjust") if isinstance(data, dict) else None
    if adjust is None:
        return []
    options = adjust.get("uriOptions") if isinstance(adjust, dict) else None
    reason = adjust.get("reason") if isinstance(adjust, dict) else None
    if not isinstance(options, dict) or not options or not isinstance(reason, str) or not reason.strip():
        raise ExpectationsError(f"{source}: 'adjust' needs 'uriOptions' (a non-empty mapping) and a one-line 'reason'")
    if not all(isinstance(k, str) and isinstance(v, str | int | bool) for k, v in options.items()):
        raise ExpectationsError(f"{source}: adjust.uriOptions maps option names to plain values")
    plain = {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in options.items()}
    return [Adjustment(plain, reason.strip(), source)]


def with_uri_options(uri: str, options: dict[str, str]) -> str:
    """``uri`` with ``options`` added to its query (an option it already sets is left as it is)."""
    if not options:
        return uri
    base, _, query = uri.partition("?")
    present = {pair.split("=", 1)[0].lower() for pair in query.split("&") if pair}
    added = "&".join(f"{name}={value}" for name, value in options.items() if name.lower() not in present)
    if not added:
        return uri
    if not query and "/" not in base.partition("://")[2]:
        base += "/"
    return f"{base}?{query + '&' if query else ''}{added}"


class Expectations:
    def __init__(
        self, known: list[KnownOutcome], source: str = "<none>", adjustments: list[Adjustment] | None = None
    ) -> None:
        self.known = known
        self.source = source
        self.adjustments = list(adjustments or [])

    @property
    def uri_options(self) -> dict[str, str]:
        """Every adjustment's URI options, the first file's winning."""
        merged: dict[str, str] = {}
        for adjustment in reversed(self.adjustments):
            merged.update(adjustment.uri_options)
        return merged

    @classmethod
    def empty(cls) -> Expectations:
        return cls([])

    @classmethod
    def combined(cls, parts: list[Expectations]) -> Expectations:
        """One set from several files (the target's and the driver's); the first entry matching a test wins."""
        sources = [part.source for part in parts if part.source != "<none>"]
        adjustments = [adjustment for part in parts for adjustment in part.adjustments]
        return cls([entry for part in parts for entry in part.known], " + ".join(sources) or "<none>", adjustments)

    @classmethod
    def from_data(cls, data: Any, source: str) -> Expectations:
        """Check and build from a parsed file; every problem names ``source`` and the entry."""
        entries = data.get("known", []) if isinstance(data, dict) else None
        if data is None:
            entries = []
        if not isinstance(entries, list):
            raise ExpectationsError(f"{source}: 'known' must be a list")
        known = []
        for index, entry in enumerate(entries):
            if not isinstance(entry, dict) or not isinstance(entry.get("test"), str):
                raise ExpectationsError(f"{source}: known[{index}] needs a 'test' string")
            outcome = entry.get("outcome", FAILED)
            if outcome not in KNOWN_OUTCOMES:
                raise ExpectationsError(
                    f"{source}: known[{index}] ({entry['test']}): outcome must be one of {KNOWN_OUTCOMES}"
                )
            reason = entry.get("reason")
            if not isinstance(reason, str) or not reason.strip():
                raise ExpectationsError(f"{source}: known[{index}] ({entry['test']}): a one-line 'reason' is required")
            known.append(KnownOutcome(entry["test"], outcome, reason.strip()))
        return cls(known, source, _adjustments(data, source))

    def unmatched(self, test_ids: list[str]) -> list[KnownOutcome]:
        """Entries no test of this run matched: stale, misspelt, or simply not selected (``-k``)."""
        return [
            entry
            for entry in self.known
            if not any(entry.pattern == t or fnmatch.fnmatchcase(t, entry.pattern) for t in test_ids)
        ]

    def lookup(self, test_id: str) -> KnownOutcome | None:
        for entry in self.known:
            if entry.pattern == test_id or fnmatch.fnmatchcase(test_id, entry.pattern):
                return entry
        return None

    def classify(self, test_id: str, outcome: str, should_only: Sequence[str] = ()) -> Classification:
        """``should_only``: the SHOULD-level rules of a test that checks nothing stricter (empty: it checks a MUST,
        or nothing known); an unlisted failure of such a test is a recommendation not followed."""
        entry = self.lookup(test_id)
        if entry is None:
            if outcome in (PASSED, SKIPPED):
                return Classification(True, PASS if outcome == PASSED else SKIP)
            if outcome == FAILED and should_only:
                return Classification(
                    True, RECOMMENDATION_NOT_FOLLOWED, "checks only SHOULD-level rules: " + ", ".join(should_only)
                )
            return Classification(False, UNEXPECTED + _KIND_WORD.get(outcome, outcome))
        if outcome == entry.outcome:
            return Classification(True, KNOWN + _KIND_WORD.get(outcome, outcome), entry.reason)
        if outcome == SKIPPED:
            # The deviation was not exercised here (the target does not meet the test's requirements, as a
            # standalone target for a driver's replica-set deviation): nothing is learnt about the entry either way.
            return Classification(True, SKIP, f"not run here; listed as {entry.outcome}: {entry.reason}")
        kind = UNEXPECTED_PASS if outcome == PASSED else UNEXPECTED + _KIND_WORD.get(outcome, outcome)
        return Classification(False, kind, f"listed as {entry.outcome}: {entry.reason}")
