"""``expectLogMessages`` judged: the unified format's rules for a client's structured log messages.

A message matches an expected one when ``level`` and ``component`` are equal,
``data`` matches as a root-level document (extra keys allowed, ``$$`` operators
work), and ``failureIsRedacted``, when given, agrees with the logged failure.
Messages matching any of ``ignoreMessages`` are left out first; the rest must
match ``messages`` one for one, in order, with no extra messages unless
``ignoreExtraMessages``.
"""

from __future__ import annotations

from typing import Any

from bson import json_util

from harness.core.matching import Mismatch, UnsupportedAssertion, child_path, show
from harness.core.matching.unified_matcher import Matcher
from harness.core.model import LogExpectation
from harness.core.observations import ObservedLogMessage

#: What a redacted server failure may keep (the command logging spec's "Security" section).
REDACTED_FAILURE_KEYS = frozenset({"code", "codeName", "errorLabels"})
_KEYS = frozenset({"level", "component", "data", "failureIsRedacted"})


def failure_is_redacted(failure: Any) -> bool | None:
    """Whether a logged failure was redacted: only code, codeName and labels left; None if there is none."""
    if failure is None:
        return None
    if isinstance(failure, str):
        try:
            failure = json_util.loads(failure)
        except ValueError:
            return False  # a message text: not redacted
    if isinstance(failure, dict):
        return set(failure) <= REDACTED_FAILURE_KEYS
    return False


def match_log_message(
    matcher: Matcher, expected: dict[str, Any], actual: ObservedLogMessage, path: str
) -> list[Mismatch]:
    unknown = sorted(set(expected) - _KEYS)
    if unknown:
        raise UnsupportedAssertion(f"{path}: log message assertion(s) {unknown} are not supported by this runner")
    found = []
    for key in ("level", "component"):
        if expected.get(key) != getattr(actual, key):
            found.append(Mismatch(child_path(path, key), expected.get(key), getattr(actual, key), "differs"))
    if "failureIsRedacted" in expected:
        redacted = failure_is_redacted(actual.data.get("failure"))
        if redacted is None:
            found.append(
                Mismatch(
                    child_path(path, "failureIsRedacted"),
                    expected["failureIsRedacted"],
                    None,
                    "the message has no failure",
                )
            )
        elif redacted != expected["failureIsRedacted"]:
            found.append(
                Mismatch(
                    child_path(path, "failureIsRedacted"),
                    expected["failureIsRedacted"],
                    redacted,
                    f"failure is {show(actual.data.get('failure'), 120)}",
                )
            )
    found.extend(matcher.match(expected.get("data", {}), actual.data, child_path(path, "data"), root=True))
    return found


def match_log_messages(
    expectation: LogExpectation, observed: list[ObservedLogMessage], path: str, context: Any = None
) -> list[Mismatch]:
    """Every mismatch between what ``expectation`` asks and the messages observed (empty: they agree)."""
    matcher = Matcher(context)
    kept = [
        message
        for message in observed
        if not any(
            not match_log_message(matcher, ignored, message, "ignoreMessages")
            for ignored in expectation.ignore_messages
        )
    ]
    found: list[Mismatch] = []
    for index, expected in enumerate(expectation.messages):
        where = f"{path}.messages[{index}]"
        if index >= len(kept):
            return [*found, Mismatch(where, expected, None, f"only {len(kept)} message(s) were logged")]
        found.extend(match_log_message(matcher, expected, kept[index], where))
    extra = kept[len(expectation.messages) :]
    if extra and not expectation.ignore_extra_messages:
        found.append(
            Mismatch(
                f"{path}.messages",
                len(expectation.messages),
                len(kept),
                f"{len(extra)} unexpected extra message(s): {[m.summary() for m in extra][:5]}",
            )
        )
    return found
