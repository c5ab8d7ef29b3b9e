"""Is an error that reached the application one the change-streams spec allows?

The spec (change-streams.md, "Resumable Error" and "Resume Process"): on a
resumable error from a ``getMore`` -- any network or timeout error, code 43,
or (wire version 9+) the ``ResumableChangeStreamError`` label -- a driver
MUST resume once; on any other error it MUST NOT resume. So an application
may see:

* a non-resumable server error, when the campaign injected one of that code;
* a resumable error *after* the driver's one resume attempt failed: an
  ``aggregate`` was started after the failed ``getMore`` (the resume, or the
  ``getMore`` after it, failed), or the target was unreachable so the
  resume's server selection itself failed;
* an error from the ``aggregate`` that (re)opens a stream: never resumable.

Anything else is *not allowed*: a resumable error surfacing with no resume
attempt (the driver gave up), a non-resumable error nobody injected (the
server misbehaved), or an error with no failed command to explain it.
:func:`silent_resumes` checks the converse: a non-resumable ``getMore``
failure the driver resumed on instead of reporting.

Pure functions over driver-neutral facts (an ``ErrorInfo``'s fields and the
consumer client's observed command events), so they are unit-tested with
hand-made events.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.core.constants import CURSOR_NOT_FOUND, RESUMABLE_LABEL


@dataclass(frozen=True)
class ErrorClassification:
    """Whether one error that reached the application is one the spec allows, and why (a test's outcome is a
    :class:`harness.core.verdicts.Verdict`)."""

    allowed: bool
    reason: str


def resumable(code: int | None, labels: Sequence[str], is_client_error: bool) -> bool:
    """The spec's definition, for a server on wire version 9 or later."""
    return is_client_error or code == CURSOR_NOT_FOUND or RESUMABLE_LABEL in labels


def failure_facts(failure: Any) -> tuple[int | None, tuple[str, ...], str, bool]:
    """(code, labels, message, is_client_error) of a ``commandFailedEvent``'s failure document."""
    if not isinstance(failure, dict):
        return None, (), str(failure), True
    code = failure.get("code")
    labels = tuple(failure.get("errorLabels") or ())
    message = str(failure.get("errmsg", ""))
    return (int(code) if isinstance(code, (int, float)) else None), labels, message, code is None


def _is_change_stream_aggregate(event: Any) -> bool:
    if event.command_name != "aggregate" or event.kind != "commandStartedEvent":
        return False
    pipeline = (event.command or {}).get("pipeline") or [{}]
    return isinstance(pipeline, list) and bool(pipeline) and "$changeStream" in (pipeline[0] or {})


def _follows_a_resume(window: Sequence[Any], failed_index: int) -> bool:
    """Whether the getMore that failed at ``failed_index`` was the first command after a resume's aggregate."""
    failed = window[failed_index]
    started = [i for i in range(failed_index) if window[i].kind == "commandStartedEvent"]
    own = next((i for i in reversed(started) if window[i].request_id == failed.request_id), None)
    if own is None:
        own = next((i for i in reversed(started) if window[i].command_name == "getMore"), None)
    before = [i for i in started if own is not None and i < own]
    return bool(before) and _is_change_stream_aggregate(window[before[-1]])


def classify(
    *,
    code: int | None,
    labels: Sequence[str],
    message: str,
    is_client_error: bool,
    window: Sequence[Any],
    injected: Any = None,
    outage_recent: bool = False,
    opening: bool = False,
) -> ErrorClassification:
    """Judge one error. ``window``: the consumer client's command events during the failed operation.

    ``injected``: the non-resumable fault that explains this error, if the campaign has one;
    ``outage_recent``: the target was unreachable from the consumer at or shortly before the error;
    ``opening``: the error came from the application's own ``createChangeStream``.
    """
    if opening:
        return ErrorClassification(
            True, "the aggregate opening the stream failed (never resumable); the application retried"
        )
    if not resumable(code, labels, is_client_error):
        if injected is not None:
            return ErrorClassification(True, f"non-resumable error the campaign injected (fault {injected.describe()})")
        return ErrorClassification(False, f"non-resumable server error (code {code}) the campaign did not inject")
    failed = [i for i, e in enumerate(window) if e.kind == "commandFailedEvent" and e.command_name == "getMore"]
    if not failed:
        if any(e.kind == "commandFailedEvent" and e.command_name == "aggregate" for e in window):
            return ErrorClassification(True, "the driver's resume of a dead cursor failed in its aggregate")
        if is_client_error and outage_recent:
            return ErrorClassification(
                True, "target unreachable: server selection for the getMore or its resume failed"
            )
        return ErrorClassification(False, "resumable error with no failed command to explain it")
    last = failed[-1]
    if any(_is_change_stream_aggregate(e) for e in window[last + 1 :]):
        return ErrorClassification(True, "the driver resumed once; the resume or the getMore after it failed")
    if _follows_a_resume(window, last):
        return ErrorClassification(True, "the driver resumed once; the getMore right after the resume failed")
    same = failure_facts(window[last].failure)[2] == message
    if is_client_error and outage_recent and not same:
        return ErrorClassification(
            True, "getMore failed and the resume's server selection failed while the target was unreachable"
        )
    return ErrorClassification(False, "resumable getMore error reached the application with no resume attempt")


def silent_resumes(events: Sequence[Any], app_opens: Sequence[tuple[int, int]]) -> list[str]:
    """Non-resumable ``getMore`` failures the driver answered with its own ``aggregate`` (a forbidden resume).

    ``app_opens``: event-index ranges ``[start, end)`` during which the
    application itself was opening a stream; aggregates there are not the driver's.
    """

    def by_application(index: int) -> bool:
        return any(start <= index < end for start, end in app_opens)

    problems = []
    for i, event in enumerate(events):
        if event.kind != "commandFailedEvent" or event.command_name != "getMore":
            continue
        code, labels, message, client = failure_facts(event.failure)
        if resumable(code, labels, client):
            continue
        following = next((j for j in range(i + 1, len(events)) if events[j].kind == "commandStartedEvent"), None)
        if following is not None and _is_change_stream_aggregate(events[following]) and not by_application(following):
            problems.append(
                f"getMore failed with non-resumable code {code} ({message}) and the driver resumed "
                "instead of reporting it"
            )
    return problems
