"""What a driver adapter hands back to the runner, in driver-neutral terms.

Adapters translate their driver's exceptions into :class:`ErrorInfo` and its
monitoring events into :class:`ObservedEvent`; the comparators only ever see
these, so a driver in another language can report the same shapes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ErrorInfo:
    """An error an operation raised, as the spec's ``expectError`` talks about it."""

    message: str
    type: str
    code: int | None = None
    code_name: str | None = None
    labels: tuple[str, ...] = ()
    is_client_error: bool = False
    is_timeout_error: bool = False
    details: dict[str, Any] | None = None
    #: A partial result the error carries (a bulk write's counts), in the spec's result shape.
    result: Any = None
    #: The driver's own exception object, when the adapter is in-process.
    exception: BaseException | None = field(default=None, repr=False, compare=False)

    def describe(self) -> str:
        parts = [self.type]
        if self.code is not None:
            parts.append(f"code {self.code}" + (f" ({self.code_name})" if self.code_name else ""))
        if self.labels:
            parts.append(f"labels {list(self.labels)}")
        return f"{', '.join(parts)}: {self.message}"


class CursorDocuments(list[Any]):
    """Documents an operation read through a cursor (``find``, ``aggregate``, ``listIndexes``...).

    Each element is a root-level document as the specs' matching rules use the
    term (extra fields allowed), unlike a plain array of values (``distinct``),
    so adapters return this type to let a comparator tell the two apart.
    """


class DriverOperationError(Exception):
    """An operation failed in the driver or on the server (as opposed to in the harness)."""

    def __init__(self, info: ErrorInfo) -> None:
        super().__init__(info.describe())
        self.info = info


class NoChangeWithin(Exception):
    """An iteration gave up without a change: it waited its full budget, the stream or cursor ended, or (``early``)
    the stream showed that the change can no longer come (docs/causes.md section 4). The message is the fact."""

    def __init__(self, message: str, *, early: bool = False) -> None:
        super().__init__(message)
        self.early = early


@dataclass
class ObservedEvent:
    """One command monitoring event published by a client under test."""

    kind: str  # commandStartedEvent | ... | connectionReadyEvent (CMAP events have no command)
    command_name: str
    database_name: str | None = None
    command: dict[str, Any] | None = None
    reply: dict[str, Any] | None = None
    failure: Any = None
    request_id: int | None = None
    operation_id: int | None = None
    server_connection_id: int | None = None
    service_id: Any = None
    duration_s: float | None = None
    #: Why a connection closed or a check-out failed (CMAP events).
    reason: str | None = None
    #: SDAM events: the server or topology description before and after (``{"type": "RSPrimary"}``...).
    previous_description: dict[str, Any] | None = None
    new_description: dict[str, Any] | None = None
    #: Heartbeat events: whether the check was an awaited (streaming) one.
    awaited: bool | None = None

    def summary(self) -> str:
        return f"{self.kind}({self.command_name})"


@dataclass
class ObservedLogMessage:
    """One structured log message a client under test emitted (the unified format's ``expectLogMessages``).

    ``level`` and ``component`` use the logging spec's names (``debug``, ``command``); ``data`` is the
    message's key-value pairs, with documents (``command``, ``reply``, ``failure``) as the driver logged
    them (extended JSON strings for pymongo).
    """

    level: str
    component: str
    data: dict[str, Any]

    def summary(self) -> str:
        return f"{self.component}/{self.level}: {self.data.get('message', '')}"


#: SDAM events, by the unified format's names (``eventType: sdam``, ``waitForEvent``, ``assertEventCount``).
SDAM_EVENTS = (
    "serverDescriptionChangedEvent",
    "topologyDescriptionChangedEvent",
    "serverHeartbeatStartedEvent",
    "serverHeartbeatSucceededEvent",
    "serverHeartbeatFailedEvent",
    "topologyOpeningEvent",
    "topologyClosedEvent",
)
