"""Expected outcomes, keyed by cause: which observed causes of failure are known deviations (docs/causes.md).

The files (YAML, read by :mod:`harness.formats.expectations_file`) are a target's, a driver's or a target and
driver pair's. Each entry names one cause: the rule it breaks, its kind (a server's bug, a driver's missing
feature...), a signature that a record's cause must match (its clause, a mismatch path, an error code or type,
a message pattern), optionally the tests it is limited to, the outcome it gives, the reason and the
reproduction that showed it outside the harness::

    target: secantusdb
    known:
      - id: second-stage-accepted
        rule: SRV-STAGE-ONCE
        kind: server-bug
        signature: {clause: error-not-raised}
        tests: ["unified/server-pipeline::SRV-STAGE-ONCE: *"]
        reason: "one line saying what the target does wrong"
        reproduction: "how it was shown outside the harness"

A failed (or error) result is *expected* only when every one of its causes is explained by an entry; one cause
no entry explains makes it *unexpected*, even beside known ones, so a known deviation never hides a second
fault. A passing test that an entry names exactly is an *unexpected pass* (the entry may be stale).

One failure is neither: an unexplained failure of a test that checks only SHOULD-level rules
(:meth:`harness.core.rules.RuleIndex.should_only`) is a *recommendation not followed*. Its outcome stays
``failed`` (what was observed), but a check stricter than the spec's MUST must not fail a run, so it is
expected, and the summary counts it on its own.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.core.causes import CLAUSES, Cause
from harness.core.ports import ITERATION_MODES
from harness.core.verdicts import ERROR, FAILED, PASSED, SKIPPED

#: The outcomes an entry may give: a failure, or an error (the harness could not carry the test out).
KNOWN_OUTCOMES = (FAILED, ERROR)

#: A classification's ``kind``: ``pass`` and ``skip`` (unlisted, as expected), ``known-<word>`` (every cause
#: explained), ``unexpected-<word>`` (a cause unexplained) and ``unexpected-pass``.
PASS, SKIP, UNEXPECTED_PASS = "pass", "skip", "unexpected-pass"
KNOWN, UNEXPECTED = "known-", "unexpected-"
#: An unexplained failure of a test that checks only SHOULD-level rules: a finding that does not fail the run.
RECOMMENDATION_NOT_FOLLOWED = "recommendation-not-followed"
#: How a kind names a failing or skipped outcome where not by the outcome's own name.
_KIND_WORD = {FAILED: "failure"}

#: An entry's kind, and which files may hold it: a target's file never explains a driver's bug, nor a
#: driver's a server's (docs/causes.md, "Kinds").
KINDS: dict[str, tuple[str, ...]] = {
    "server-bug": ("target", "pair"),
    "server-not-implemented": ("target", "pair"),
    "driver-bug": ("driver", "pair"),
    "driver-not-implemented": ("driver", "pair"),
    "harness-limitation": ("target", "driver", "pair"),
    # A push mode's read-ahead (docs/executor-protocol.md 6.4.1) meeting a test written for pull timing: no rule
    # is broken, so the entry names none and the cause then counts against no rule (docs/causes.md, "Kinds").
    "read-ahead": ("driver", "pair"),
}
#: The kinds whose entries name no rule: what they explain breaks none.
RULELESS_KINDS = frozenset({"read-ahead"})
#: The owners a file names with its leading keys: a target, a driver, or both (a pair).
_SIGNATURE_FIELDS = (
    "clause",
    "step",
    "path",
    "error_code",
    "error_code_name",
    "error_type",
    "error_labels",
    "message",
)
#: A signature must pin the fact down with at least one of these (a clause alone would excuse any such failure).
_SPECIFIC = ("step", "path", "error_code", "error_code_name", "error_type", "message")
_PATTERN_CHARS = set("*?[")


class ExpectationsError(Exception):
    """A malformed expected-outcomes file; names the file and the entry."""


#: A glob's two wildcards as regular expressions.
_GLOB = {"*": ".*", "?": "."}


def glob_match(text: str, pattern: str) -> bool:
    """``*`` (any run) and ``?`` (one character) only: steps and paths are full of brackets
    (``expectEvents[0][1]``), which :mod:`fnmatch` would read as character classes."""
    regex = "".join(_GLOB.get(c) or re.escape(c) for c in pattern)
    return re.fullmatch(regex, text, re.DOTALL) is not None


@dataclass(frozen=True)
class Signature:
    """What a cause must show for an entry to explain it: every field given must match (docs/causes.md)."""

    clause: str = ""
    step: str = ""
    path: str = ""
    error_code: int | None = None
    error_code_name: str = ""
    error_type: str = ""
    error_labels: tuple[str, ...] = ()
    message: str = ""

    def matches(self, cause: Cause) -> bool:
        error = cause.error or {}
        return (
            (not self.clause or cause.clause == self.clause)
            and (not self.step or glob_match(cause.step, self.step))
            and (not self.path or glob_match(cause.path, self.path))
            and (self.error_code is None or error.get("code") == self.error_code)
            and (not self.error_code_name or error.get("code_name") == self.error_code_name)
            and (not self.error_type or glob_match(str(error.get("type") or ""), self.error_type))
            and all(label in (error.get("labels") or ()) for label in self.error_labels)
            and (not self.message or re.search(self.message, cause.searched_text()) is not None)
        )

    def describe(self) -> str:
        parts = [
            f"{name}={getattr(self, name)!r}" for name in _SIGNATURE_FIELDS if getattr(self, name) not in ("", None, ())
        ]
        return ", ".join(parts)


@dataclass(frozen=True)
class KnownCause:
    """One entry: a cause of failure known to come from the target, the driver or the pair, and why."""

    id: str
    rule: str
    kind: str
    signature: Signature
    reason: str
    reproduction: str
    outcome: str = FAILED
    #: Test-id patterns the entry is limited to; empty: any test whose failure shows this cause.
    tests: tuple[str, ...] = ()
    #: The file, as ``drivers/java.yml``: with ``id``, how records name the entry.
    source: str = ""
    #: The iteration modes (docs/executor-protocol.md 6.4.1) a run must consume streams in for the entry to apply;
    #: empty: every mode.
    iteration_modes: tuple[str, ...] = ()
    #: Why a run may not meet the entry at all although the fault is there (the cause shows only after some
    #: server history, which the order tests ran in decides): then an entry that explained nothing is said, never
    #: a strict failure. Empty: a run whose tests ran through and did not meet it shows the entry is stale.
    sometimes: str = ""

    @property
    def ref(self) -> str:
        return f"{self.source}#{self.id}"

    def applies_in(self, iteration_mode: str) -> bool:
        return not self.iteration_modes or iteration_mode in self.iteration_modes

    def applies_to(self, test_id: str) -> bool:
        return not self.tests or any(test_id == t or fnmatch.fnmatchcase(test_id, t) for t in self.tests)

    def names_exactly(self, test_id: str) -> bool:
        """The entry lists this very test (no pattern): its pass is news."""
        return test_id in self.tests and not _PATTERN_CHARS & set(test_id)

    def explains(self, test_id: str, outcome: str, cause: Cause) -> bool:
        return outcome == self.outcome and self.applies_to(test_id) and self.signature.matches(cause)


@dataclass(frozen=True)
class Classification:
    expected: bool
    kind: str  # PASS, SKIP, UNEXPECTED_PASS, RECOMMENDATION_NOT_FOLLOWED, or KNOWN / UNEXPECTED and an outcome's word
    reason: str = ""
    #: The refs (``FILE#id``) of the entries that explained the test's causes.
    entries: tuple[str, ...] = ()
    #: How many of the test's causes no entry explains.
    unexplained: int = 0
    #: The test's causes, each marked with the entry that explains it (docs/causes.md).
    causes: tuple[Cause, ...] = field(default=(), compare=False)

    @property
    def known(self) -> bool:
        """Every cause of a failing test explained by an entry (a known deviation)."""
        return self.kind.startswith(KNOWN)

    @property
    def recommendation_not_followed(self) -> bool:
        """An unexplained failure of a test that checks only SHOULD-level rules (the reason names them)."""
        return self.kind == RECOMMENDATION_NOT_FOLLOWED

    def as_record(self) -> dict[str, Any]:
        return {
            "expected": self.expected,
            "kind": self.kind,
            "reason": self.reason,
            "entries": list(self.entries),
            "unexplained": self.unexplained,
        }


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
        self, known: list[KnownCause], source: str = "<none>", adjustments: list[Adjustment] | None = None
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
        """One set from several files (the target's, the driver's, the pair's)."""
        sources = [part.source for part in parts if part.source != "<none>"]
        adjustments = [adjustment for part in parts for adjustment in part.adjustments]
        return cls([entry for part in parts for entry in part.known], " + ".join(sources) or "<none>", adjustments)

    @classmethod
    def from_data(cls, data: Any, source: str, label: str = "") -> Expectations:
        """Check and build from a parsed file; every problem names ``source`` and the entry. ``label`` is how
        records name the file (``drivers/java.yml``; default: ``source``)."""
        if data is None:
            return cls([], source)
        if not isinstance(data, dict):
            raise ExpectationsError(f"{source}: an expected-outcomes file is a mapping")
        named = ("target" in data, "driver" in data)
        if not any(named):
            raise ExpectationsError(f"{source}: name the owner: 'target', 'driver', or both for a pair")
        owner = "pair" if all(named) else "target" if named[0] else "driver"
        entries = data.get("known", [])
        if not isinstance(entries, list):
            raise ExpectationsError(f"{source}: 'known' must be a list")
        known = [_entry(entry, index, source, label or source, owner) for index, entry in enumerate(entries)]
        ids = [entry.id for entry in known]
        duplicated = sorted({i for i in ids if ids.count(i) > 1})
        if duplicated:
            raise ExpectationsError(f"{source}: entry ids must be unique in a file: {duplicated}")
        return cls(known, source, _adjustments(data, source))

    def for_mode(self, iteration_mode: str) -> Expectations:
        """The entries that apply to a run consuming its streams in ``iteration_mode``: the others are not loaded,
        so they neither explain a cause nor count as unused."""
        kept = [entry for entry in self.known if entry.applies_in(iteration_mode)]
        return Expectations(kept, self.source, self.adjustments)

    def naming(self, test_id: str) -> list[KnownCause]:
        """The entries limited to tests that include this one (a test with a known deviation of its own)."""
        return [entry for entry in self.known if entry.tests and entry.applies_to(test_id)]

    def unused(self, used: set[str]) -> list[KnownCause]:
        """Entries that explained no cause of the run (``used``: the refs of those that did)."""
        return [entry for entry in self.known if entry.ref not in used]

    def classify(
        self, test_id: str, outcome: str, causes: Sequence[Cause] = (), should_only: Sequence[str] = ()
    ) -> Classification:
        """``causes``: the failing test's causes (each is explained by the first entry that matches it, or not);
        ``should_only``: the SHOULD-level rules of a test that checks nothing stricter (empty: it checks a MUST,
        or nothing known); an unexplained failure of such a test is a recommendation not followed."""
        if outcome in (PASSED, SKIPPED):
            naming = [entry for entry in self.known if entry.names_exactly(test_id)]
            if outcome == PASSED and naming:
                return Classification(False, UNEXPECTED_PASS, "listed: " + "; ".join(e.reason for e in naming))
            return Classification(True, PASS if outcome == PASSED else SKIP)
        marked: list[Cause] = []
        used: list[KnownCause] = []
        for cause in causes:
            entry = next((e for e in self.known if e.explains(test_id, outcome, cause)), None)
            if entry is None:
                marked.append(cause)
                continue
            marked.append(cause.explained(entry.ref, entry.rule))
            if entry not in used:
                used.append(entry)
        unexplained = sum(1 for cause in marked if not cause.known)
        refs = tuple(entry.ref for entry in used)
        reason = "; ".join(f"{entry.ref}: {entry.reason}" for entry in used)
        word = _KIND_WORD.get(outcome, outcome)
        if causes and not unexplained:
            return Classification(True, KNOWN + word, reason, refs, 0, tuple(marked))
        if outcome == FAILED and should_only and not used:
            return Classification(
                True,
                RECOMMENDATION_NOT_FOLLOWED,
                "checks only SHOULD-level rules: " + ", ".join(should_only),
                refs,
                unexplained,
                tuple(marked),
            )
        if used:
            reason = f"{unexplained} of {len(marked)} cause(s) not explained; the others: {reason}"
        return Classification(False, UNEXPECTED + word, reason, refs, max(unexplained, 1), tuple(marked))


def _text(entry: dict[str, Any], key: str, where: str, required: bool = True) -> str:
    value = entry.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value.strip():
        raise ExpectationsError(f"{where}: '{key}' must be a non-empty string")
    return value.strip()


def _signature(raw: Any, where: str) -> Signature:
    if not isinstance(raw, dict) or not raw:
        raise ExpectationsError(f"{where}: 'signature' must be a mapping of {', '.join(_SIGNATURE_FIELDS)}")
    unknown = sorted(set(raw) - set(_SIGNATURE_FIELDS))
    if unknown:
        raise ExpectationsError(f"{where}: signature fields {unknown} unknown; known: {', '.join(_SIGNATURE_FIELDS)}")
    if not any(raw.get(key) not in (None, "", []) for key in _SPECIFIC):
        raise ExpectationsError(f"{where}: a signature needs at least one of {', '.join(_SPECIFIC)}")
    clause = raw.get("clause", "")
    if clause and clause not in CLAUSES:
        raise ExpectationsError(f"{where}: signature clause {clause!r} unknown; known: {', '.join(CLAUSES)}")
    code = raw.get("error_code")
    if code is not None and (not isinstance(code, int) or isinstance(code, bool)):
        raise ExpectationsError(f"{where}: signature error_code must be an integer")
    labels = raw.get("error_labels", [])
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        raise ExpectationsError(f"{where}: signature error_labels must be a list of strings")
    message = raw.get("message", "")
    try:
        re.compile(str(message))
    except re.error as exc:
        raise ExpectationsError(f"{where}: signature message is not a regular expression: {exc}") from exc
    texts = {key: raw.get(key, "") for key in ("clause", "step", "path", "error_code_name", "error_type", "message")}
    if not all(isinstance(value, str) for value in texts.values()):
        raise ExpectationsError(f"{where}: signature text fields must be strings")
    return Signature(error_code=code, error_labels=tuple(labels), **texts)


def _entry(entry: Any, index: int, source: str, label: str, owner: str) -> KnownCause:
    where = f"{source}: known[{index}]"
    if not isinstance(entry, dict):
        raise ExpectationsError(f"{where}: an entry is a mapping")
    if "test" in entry:
        raise ExpectationsError(
            f"{where}: entries are keyed by cause, not by test: give id, rule, kind, signature, reason and "
            "reproduction (docs/causes.md); 'tests' may limit an entry to some tests"
        )
    where = f"{where} ({entry.get('id')!r})"
    entry_id = _text(entry, "id", where)
    kind = _text(entry, "kind", where)
    if kind not in KINDS:
        raise ExpectationsError(f"{where}: kind {kind!r} unknown; known: {', '.join(KINDS)}")
    if kind in RULELESS_KINDS and "rule" in entry:
        raise ExpectationsError(f"{where}: a {kind} entry breaks no rule, so it names none (leave 'rule' out)")
    rule = "" if kind in RULELESS_KINDS else _text(entry, "rule", where)
    modes = _iteration_modes(entry, where)
    if kind == "read-ahead" and not modes:
        raise ExpectationsError(f"{where}: a read-ahead entry names the push modes it applies to (iteration_modes)")
    if owner not in KINDS[kind]:
        raise ExpectationsError(f"{where}: a {owner}'s file cannot hold a {kind} (only {', '.join(KINDS[kind])})")
    outcome = entry.get("outcome", FAILED)
    if outcome not in KNOWN_OUTCOMES:
        raise ExpectationsError(f"{where}: outcome must be one of {KNOWN_OUTCOMES}")
    if kind == "harness-limitation" and outcome != ERROR:
        raise ExpectationsError(f"{where}: a harness limitation gives an error, never a failure (outcome: error)")
    tests = entry.get("tests", [])
    if not isinstance(tests, list) or not all(isinstance(t, str) and t for t in tests):
        raise ExpectationsError(f"{where}: 'tests' must be a list of test-id patterns")
    if any(t.strip() == "*" for t in tests):
        raise ExpectationsError(f"{where}: 'tests' may not be '*' (leave it out to apply to every test)")
    if "sometimes" in entry and not tests:
        raise ExpectationsError(
            f"{where}: a 'sometimes' entry names the tests it may show in ('tests'): otherwise nothing could show "
            "that it went stale"
        )
    fields = {
        "id",
        "rule",
        "kind",
        "signature",
        "reason",
        "reproduction",
        "outcome",
        "tests",
        "iteration_modes",
        "sometimes",
    }
    unknown = sorted(set(entry) - fields)
    if unknown:
        raise ExpectationsError(f"{where}: unknown field(s) {unknown}")
    return KnownCause(
        entry_id,
        rule,
        kind,
        _signature(entry.get("signature"), where),
        _text(entry, "reason", where),
        _text(entry, "reproduction", where),
        outcome,
        tuple(tests),
        label,
        modes,
        _text(entry, "sometimes", where) if "sometimes" in entry else "",
    )


def _iteration_modes(entry: dict[str, Any], where: str) -> tuple[str, ...]:
    modes = entry.get("iteration_modes", [])
    if not isinstance(modes, list) or not all(isinstance(m, str) for m in modes):
        raise ExpectationsError(f"{where}: 'iteration_modes' must be a list of mode names")
    unknown = [m for m in modes if m not in ITERATION_MODES]
    if unknown:
        raise ExpectationsError(f"{where}: iteration modes {unknown} unknown; known: {', '.join(ITERATION_MODES)}")
    return tuple(modes)
