"""The ``unified`` comparator: ``expectResult``, ``expectError`` and ``expectEvents`` judged.

Results are matched as root-level values with :mod:`harness.core.matching.unified_matcher`.
Each ``expectedError`` and ``expectedEvent`` key is an assertion found by
name in a table, so an assertion this runner does not know is a mismatch
naming it, never silently passed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bson.objectid import ObjectId

from harness.core.constants import CMAP_EVENTS
from harness.core.matching import MISSING, Mismatch, UnsupportedAssertion, child_path
from harness.core.matching.unified_matcher import Matcher
from harness.core.observations import ErrorInfo, ObservedEvent

ErrorAssertion = Callable[[Matcher, Any, ErrorInfo, str], list[Mismatch]]
EventAssertion = Callable[[Matcher, Any, ObservedEvent, str], list[Mismatch]]


def _fails(path: str, expected: Any, actual: Any, reason: str) -> list[Mismatch]:
    return [Mismatch(path, expected, actual, reason)]


# -- expectedError ----------------------------------------------------------------
def _is_error(m: Matcher, want: Any, error: ErrorInfo, path: str) -> list[Mismatch]:
    return [] if want is True else _fails(path, want, True, "isError may only be true")


def _flag(attribute: str) -> ErrorAssertion:
    def check(m: Matcher, want: Any, error: ErrorInfo, path: str) -> list[Mismatch]:
        got = bool(getattr(error, attribute))
        return [] if got == want else _fails(path, want, got, f"error is {error.type}")

    return check


def _error_contains(m: Matcher, want: Any, error: ErrorInfo, path: str) -> list[Mismatch]:
    if str(want).lower() in (error.message or "").lower():
        return []
    return _fails(path, want, error.message, "message does not contain the text (case-insensitive)")


def _error_code(m: Matcher, want: Any, error: ErrorInfo, path: str) -> list[Mismatch]:
    return [] if error.code == want else _fails(path, want, error.code, "server error code differs")


def _error_code_name(m: Matcher, want: Any, error: ErrorInfo, path: str) -> list[Mismatch]:
    if error.code_name is not None and error.code_name.lower() == str(want).lower():
        return []
    return _fails(path, want, error.code_name, "server codeName differs")


def _labels_contain(m: Matcher, want: Any, error: ErrorInfo, path: str) -> list[Mismatch]:
    missing = [label for label in want if label not in error.labels]
    return _fails(path, want, list(error.labels), f"label(s) {missing} missing") if missing else []


def _labels_omit(m: Matcher, want: Any, error: ErrorInfo, path: str) -> list[Mismatch]:
    present = [label for label in want if label in error.labels]
    return _fails(path, want, list(error.labels), f"label(s) {present} present") if present else []


def _error_response(m: Matcher, want: Any, error: ErrorInfo, path: str) -> list[Mismatch]:
    if error.details is None:
        return _fails(path, want, MISSING, "the error carries no server response")
    return m.match(want, error.details, path, root=True)


def _error_result(m: Matcher, want: Any, error: ErrorInfo, path: str) -> list[Mismatch]:
    return m.match(want, MISSING if error.result is None else error.result, path, root=True)


ERROR_ASSERTIONS: dict[str, ErrorAssertion] = {
    "isError": _is_error,
    "isClientError": _flag("is_client_error"),
    "isTimeoutError": _flag("is_timeout_error"),
    "errorContains": _error_contains,
    "errorCode": _error_code,
    "errorCodeName": _error_code_name,
    "errorLabelsContain": _labels_contain,
    "errorLabelsOmit": _labels_omit,
    "errorResponse": _error_response,
    "expectResult": _error_result,
}


# -- expectedEvent ----------------------------------------------------------------
def _root_document(attribute: str) -> EventAssertion:
    def check(m: Matcher, want: Any, event: ObservedEvent, path: str) -> list[Mismatch]:
        got = getattr(event, attribute)
        return m.match(want, MISSING if got is None else got, path, root=True)

    return check


def _equals(attribute: str) -> EventAssertion:
    def check(m: Matcher, want: Any, event: ObservedEvent, path: str) -> list[Mismatch]:
        got = getattr(event, attribute)
        return [] if got == want else _fails(path, want, got, "differs")

    return check


def _has_service_id(m: Matcher, want: Any, event: ObservedEvent, path: str) -> list[Mismatch]:
    service_id = event.service_id
    has = service_id is not None and service_id != ObjectId(b"\x00" * 12)
    return [] if has == want else _fails(path, want, service_id, "serviceId presence differs")


def _has_server_connection_id(m: Matcher, want: Any, event: ObservedEvent, path: str) -> list[Mismatch]:
    connection_id = event.server_connection_id
    has = isinstance(connection_id, int) and connection_id > 0
    return [] if has == want else _fails(path, want, connection_id, "serverConnectionId presence differs")


_COMMON_EVENT_ASSERTIONS: dict[str, EventAssertion] = {
    "commandName": _equals("command_name"),
    "databaseName": _equals("database_name"),
    "hasServiceId": _has_service_id,
    "hasServerConnectionId": _has_server_connection_id,
}
EVENT_ASSERTIONS: dict[str, dict[str, EventAssertion]] = {
    "commandStartedEvent": {**_COMMON_EVENT_ASSERTIONS, "command": _root_document("command")},
    "commandSucceededEvent": {**_COMMON_EVENT_ASSERTIONS, "reply": _root_document("reply")},
    "commandFailedEvent": dict(_COMMON_EVENT_ASSERTIONS),
    # Connection pool events: the kind is the main assertion; only these fields are testable.
    **{kind: {"hasServiceId": _has_service_id} for kind in CMAP_EVENTS.values()},
    **{
        kind: {"hasServiceId": _has_service_id, "reason": _equals("reason")}
        for kind in ("connectionClosedEvent", "connectionCheckOutFailedEvent")
    },
    # SDAM events: descriptions are matched as root-level documents (the spec asserts ``type``, ignores the rest).
    **{
        kind: {
            "previousDescription": _root_document("previous_description"),
            "newDescription": _root_document("new_description"),
        }
        for kind in ("serverDescriptionChangedEvent", "topologyDescriptionChangedEvent")
    },
    **{
        kind: {"awaited": _equals("awaited")}
        for kind in ("serverHeartbeatStartedEvent", "serverHeartbeatSucceededEvent", "serverHeartbeatFailedEvent")
    },
    "topologyOpeningEvent": {},
    "topologyClosedEvent": {},
}


def _apply(
    table: dict[str, Callable[..., list[Mismatch]]],
    matcher: Matcher,
    expected: dict[str, Any],
    actual: Any,
    path: str,
    what: str,
) -> list[Mismatch]:
    found: list[Mismatch] = []
    for key, want in expected.items():
        assertion = table.get(key)
        where = child_path(path, key)
        if assertion is None:
            raise UnsupportedAssertion(f"{where}: {what} assertion {key!r} is not supported by this runner")
        found.extend(assertion(matcher, want, actual, where))
    return found


class UnifiedComparator:
    """The unified format's matching rules, for the runner's three questions."""

    def match_result(self, expected: Any, actual: Any, path: str, context: Any = None) -> list[Mismatch]:
        return Matcher(context).match(expected, actual, child_path(path, "expectResult"), root=True)

    def match_error(self, expected: dict[str, Any], error: Any, path: str, context: Any = None) -> list[Mismatch]:
        return _apply(ERROR_ASSERTIONS, Matcher(context), expected, error, path, "expectError")

    def match_event(self, expected: dict[str, Any], actual: Any, path: str, context: Any = None) -> list[Mismatch]:
        ((kind, body),) = expected.items()
        if kind != actual.kind:
            return [
                Mismatch(
                    path,
                    kind,
                    actual.kind,
                    f"expected a {kind}, observed a {actual.kind}"
                    + (f" for {actual.command_name}" if actual.command_name else ""),
                )
            ]
        table = EVENT_ASSERTIONS.get(kind)
        if table is None:
            raise UnsupportedAssertion(f"{path}: event type {kind!r} is not supported by this runner")
        return _apply(table, Matcher(context), body, actual, child_path(path, kind), "event")
