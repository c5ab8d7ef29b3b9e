"""The check of a scope's observed command events: every one, paired and in order, with the fields each kind needs.

The harness matches ``expectEvents`` against these (docs/executor-protocol.md section 6.6), so a missing, extra or
reordered event, or a failure that is not the server's reply, is named here rather than as a test's outcome.
"""

from __future__ import annotations

from typing import Any

from harness.drivers.executor.checks.session import Check, wire


def check_events(check: Check, events: Any) -> None:
    """deleteMany, insertOne, insertOne (failed), find: started and succeeded/failed pairs, in that order."""
    if not isinstance(events, list):
        check.problems.append(f"events: expected an array, got {events!r}")
        return
    names = [(e.get("kind"), e.get("commandName")) for e in events if isinstance(e, dict)]
    want = [
        ("commandStartedEvent", "delete"),
        ("commandSucceededEvent", "delete"),
        ("commandStartedEvent", "insert"),
        ("commandSucceededEvent", "insert"),
        ("commandStartedEvent", "insert"),
        ("commandSucceededEvent", "insert"),  # a write error is an ok: 1 reply with writeErrors
        ("commandStartedEvent", "find"),
        ("commandSucceededEvent", "find"),
        ("commandStartedEvent", "find"),
        ("commandFailedEvent", "find"),  # the server answered ok: 0 (BadValue)
    ]
    missing = [f"{kind}({name})" for kind, name in _left_over(want, names)]
    if missing:
        check.problems.append(f"events: missing {', '.join(missing)} (every observed event, in order)")
    extra = [f"{kind}({name})" for kind, name in _left_over(names, want)]
    if extra:
        check.problems.append(f"events: unexpected {', '.join(extra)}")
    if not missing and not extra and names != want:
        check.problems.append(f"events: out of order: expected {want}, got {names}")
    for event in events:
        kind = event.get("kind")
        needed = {"commandStartedEvent": ("command", "databaseName", "requestId")}.get(kind, ("durationMS",))
        if kind == "commandSucceededEvent":
            needed = ("reply", "durationMS", "requestId")
        if kind == "commandFailedEvent":
            needed = ("failure", "durationMS", "requestId")
            _check_failure(check, event.get("failure"))
        missing = [key for key in needed if key not in event]
        if missing:
            check.problems.append(f"events: {kind}({event.get('commandName')}) lacks {missing}")


def _check_failure(check: Check, failure: Any) -> None:
    """A server's error: ``failure`` is the server's reply document, with its integer code (section 6.6)."""
    if not isinstance(failure, dict) or not isinstance(failure.get("code"), int) or "errmsg" not in failure:
        check.problems.append(
            "events: commandFailedEvent(find) failure must be the server's reply document (ok, errmsg, code, "
            f"codeName), got {wire(failure)}"
        )


def _left_over(wanted: list[Any], got: list[Any]) -> list[Any]:
    """What of ``wanted`` is not in ``got``, counting repeats (a multiset difference, in ``wanted``'s order)."""
    remaining = list(got)
    left = []
    for item in wanted:
        if item in remaining:
            remaining.remove(item)
        else:
            left.append(item)
    return left
