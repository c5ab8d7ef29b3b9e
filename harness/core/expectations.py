"""Expected outcomes per target: the tests a target is known to fail, each with its reason.

The file (YAML, read by :mod:`harness.formats.expectations_file`) looks like::

    target: secantusdb
    known:
      - test: "legacy/change-streams::Test consecutive resume"   # test_id, fnmatch patterns allowed
        outcome: failed                                        # failed (default), error or skipped
        reason: "one line saying what the target does wrong"

A result is then *expected* (it matches the file: a pass not listed, or a
listed test with its listed outcome) or *unexpected*: an unexpected failure,
or an unexpected pass, which is news too (the entry is stale). A run fails
only on the unexpected.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

OUTCOMES = ("failed", "error", "skipped")


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
    kind: str  # "pass" | "known-failure" | "unexpected-failure" | "unexpected-pass" | "skip" | ...
    reason: str = ""

    def as_record(self) -> dict[str, Any]:
        return {"expected": self.expected, "kind": self.kind, "reason": self.reason}


class Expectations:
    def __init__(self, known: list[KnownOutcome], source: str = "<none>") -> None:
        self.known = known
        self.source = source

    @classmethod
    def empty(cls) -> "Expectations":
        return cls([])

    @classmethod
    def combined(cls, parts: list["Expectations"]) -> "Expectations":
        """One set from several files (the target's and the driver's); the first entry matching a test wins."""
        sources = [part.source for part in parts if part.source != "<none>"]
        return cls([entry for part in parts for entry in part.known], " + ".join(sources) or "<none>")

    @classmethod
    def from_data(cls, data: Any, source: str) -> "Expectations":
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
            outcome = entry.get("outcome", "failed")
            if outcome not in OUTCOMES:
                raise ExpectationsError(f"{source}: known[{index}] ({entry['test']}): outcome must be one of {OUTCOMES}")
            reason = entry.get("reason")
            if not isinstance(reason, str) or not reason.strip():
                raise ExpectationsError(f"{source}: known[{index}] ({entry['test']}): a one-line 'reason' is required")
            known.append(KnownOutcome(entry["test"], outcome, reason.strip()))
        return cls(known, source)

    def unmatched(self, test_ids: list[str]) -> list[KnownOutcome]:
        """Entries no test of this run matched: stale, misspelt, or simply not selected (``-k``)."""
        return [entry for entry in self.known
                if not any(entry.pattern == t or fnmatch.fnmatchcase(t, entry.pattern) for t in test_ids)]

    def lookup(self, test_id: str) -> KnownOutcome | None:
        for entry in self.known:
            if entry.pattern == test_id or fnmatch.fnmatchcase(test_id, entry.pattern):
                return entry
        return None

    def classify(self, test_id: str, outcome: str) -> Classification:
        entry = self.lookup(test_id)
        if entry is None:
            if outcome in ("passed", "skipped"):
                return Classification(True, "pass" if outcome == "passed" else "skip")
            return Classification(False, f"unexpected-{'failure' if outcome == 'failed' else 'error'}")
        if outcome == entry.outcome:
            return Classification(True, f"known-{'failure' if outcome == 'failed' else outcome}", entry.reason)
        if outcome == "passed":
            return Classification(False, "unexpected-pass", f"listed as {entry.outcome}: {entry.reason}")
        return Classification(False, f"unexpected-{outcome}", f"listed as {entry.outcome}: {entry.reason}")
