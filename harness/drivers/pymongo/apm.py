"""Command monitoring (APM) capture for one client, through :mod:`pymongo.monitoring`.

A :class:`CommandRecorder` is registered as an event listener of exactly one
client, so nothing from another client can reach it. It keeps the kinds of
events the test asked for and leaves out what the specs call internal:
handshake and authentication commands (unless sensitive commands are to be
observed), fail point configuration, and any command names the test ignores.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from pymongo import monitoring

from harness.core.constants import (
    ALL_COMMAND_EVENTS,
    CMAP_EVENTS,
    INTERNAL_COMMANDS,
)
from harness.core.observations import ObservedEvent
from harness.core.vocabulary import sensitive_command


class CommandRecorder(monitoring.CommandListener):
    """Records the command events of one client, filtered as the specs require."""

    def __init__(
        self,
        observe: Iterable[str] = ALL_COMMAND_EVENTS,
        ignore_commands: Iterable[str] = (),
        observe_sensitive: bool = False,
    ) -> None:
        self.observe = frozenset(observe)
        self.ignore = frozenset(ignore_commands) | INTERNAL_COMMANDS
        self.observe_sensitive = observe_sensitive
        self._lock = threading.Lock()
        self._events: list[ObservedEvent] = []
        self._hidden_request_ids: set[int] = set()

    # -- filtering -------------------------------------------------------
    def _hidden(self, name: str, command: dict[str, Any] | None, request_id: int) -> bool:
        """Decide on the started event; its succeeded/failed event follows the decision."""
        if command is None:  # a reply: hidden exactly when its started event was
            return request_id in self._hidden_request_ids or name in self.ignore
        hide = name in self.ignore
        if not self.observe_sensitive:
            hide = hide or sensitive(name, command)
        if hide:
            self._hidden_request_ids.add(request_id)
        return hide

    def _keep(self, event: ObservedEvent) -> None:
        if event.kind in self.observe:
            with self._lock:
                self._events.append(event)

    # -- pymongo listener API ------------------------------------------
    def started(self, event: monitoring.CommandStartedEvent) -> None:
        if not self._hidden(event.command_name, dict(event.command), event.request_id):
            self._keep(started_event(event))

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        if not self._hidden(event.command_name, None, event.request_id):
            self._keep(succeeded_event(event))

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        if not self._hidden(event.command_name, None, event.request_id):
            self._keep(failed_event(event))

    # -- reading ---------------------------------------------------------
    @property
    def events(self) -> list[ObservedEvent]:
        with self._lock:
            return list(self._events)

    def clear(self) -> None:
        with self._lock:
            self._events.clear()


# (each event keeps what pymongo's carries; a field an older pymongo lacks is observed as absent, so a test that
# expects it fails on that driver release instead of the listener crashing)
def started_event(event: monitoring.CommandStartedEvent, *, redacted: bool = False) -> ObservedEvent:
    return ObservedEvent(
        "commandStartedEvent",
        event.command_name,
        event.database_name,
        command={} if redacted else dict(event.command),
        request_id=event.request_id,
        operation_id=event.operation_id,
        server_connection_id=_server_connection_id(event),
        service_id=event.service_id,
    )


def succeeded_event(event: monitoring.CommandSucceededEvent, *, redacted: bool = False) -> ObservedEvent:
    return ObservedEvent(
        "commandSucceededEvent",
        event.command_name,
        event.database_name,
        reply={} if redacted else dict(event.reply),
        request_id=event.request_id,
        operation_id=event.operation_id,
        server_connection_id=_server_connection_id(event),
        service_id=event.service_id,
        duration_s=event.duration_micros / 1e6,
    )


def failed_event(event: monitoring.CommandFailedEvent, *, redacted: bool = False) -> ObservedEvent:
    return ObservedEvent(
        "commandFailedEvent",
        event.command_name,
        event.database_name,
        failure={} if redacted else event.failure,
        request_id=event.request_id,
        operation_id=event.operation_id,
        server_connection_id=_server_connection_id(event),
        service_id=event.service_id,
        duration_s=event.duration_micros / 1e6,
    )


def sensitive(name: str, command: Mapping[str, Any] | None) -> bool:
    """A security-sensitive command (docs/executor-protocol.md 7.1): an authentication command, or a handshake that
    carries authentication (pymongo then publishes it with an empty, redacted body)."""
    return sensitive_command(name, {} if command is None else dict(command))


class ScopeCommandLog:
    """Every command event of every client of one scope, in the order pymongo published them, whatever each client
    observes: the reference executor's command log (docs/executor-protocol.md 6.4.2). A sensitive command is kept
    with its body and reply redacted."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[tuple[str, ObservedEvent]] = []
        self._redacted: set[int] = set()

    def listener(self, client_id: str) -> monitoring.CommandListener:
        """The listener of one client of the scope."""
        log = self

        class _Tap(monitoring.CommandListener):
            def started(self, event: monitoring.CommandStartedEvent) -> None:
                redact = sensitive(event.command_name, dict(event.command))
                with log._lock:
                    if redact:
                        log._redacted.add(event.request_id)
                    log._entries.append((client_id, started_event(event, redacted=redact)))

            def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
                with log._lock:
                    redact = event.request_id in log._redacted
                    log._entries.append((client_id, succeeded_event(event, redacted=redact)))

            def failed(self, event: monitoring.CommandFailedEvent) -> None:
                with log._lock:
                    redact = event.request_id in log._redacted
                    log._entries.append((client_id, failed_event(event, redacted=redact)))

        return _Tap()

    def length(self) -> int:
        with self._lock:
            return len(self._entries)

    def since(self, start: int) -> list[tuple[str, ObservedEvent]]:
        """The entries from index ``start`` to the end (client id, event)."""
        with self._lock:
            return list(self._entries[start:])


class PoolRecorder(monitoring.ConnectionPoolListener):
    """Records the connection pool events of one client and counts connections checked out.

    The count is kept whatever the test observes: the unified format's
    ``assertNumberConnectionsCheckedOut`` needs it for every client.
    """

    def __init__(self, observe: Iterable[str] = ()) -> None:
        self.observe = frozenset(observe)
        self._lock = threading.Lock()
        self._events: list[ObservedEvent] = []
        self.checked_out = 0

    def _record(self, method: str, event: object) -> None:
        kind = CMAP_EVENTS[method]
        with self._lock:
            if method == "connection_checked_out":
                self.checked_out += 1
            elif method == "connection_checked_in":
                self.checked_out -= 1
            if kind in self.observe:
                self._events.append(
                    ObservedEvent(
                        kind, "", service_id=getattr(event, "service_id", None), reason=getattr(event, "reason", None)
                    )
                )

    @property
    def events(self) -> list[ObservedEvent]:
        with self._lock:
            return list(self._events)


def _pool_listener_method(method: str) -> object:
    return lambda self, event: self._record(method, event)


for _method in CMAP_EVENTS:
    setattr(PoolRecorder, _method, _pool_listener_method(_method))


def _server_connection_id(event: object) -> int | None:
    """The server's connection id; pymongo 4.6 command events lack it: observed as absent, not an error."""
    return getattr(event, "server_connection_id", None)


class SdamRecorder(monitoring.ServerListener, monitoring.TopologyListener, monitoring.ServerHeartbeatListener):
    """Records one client's SDAM events (server and topology descriptions, heartbeats), by the spec's names.

    Descriptions are kept as ``{"type": ...}`` with the SDAM spec's type names, which are pymongo's
    (``RSPrimary``, ``ReplicaSetWithPrimary``...): the unified format asserts on ``type`` only.
    """

    def __init__(self, observe: Iterable[str] = ()) -> None:
        self.observe = frozenset(observe)
        self._lock = threading.Lock()
        self._events: list[ObservedEvent] = []

    def _keep(self, kind: str, **fields: object) -> None:
        if kind in self.observe:
            with self._lock:
                self._events.append(ObservedEvent(kind, "", **fields))  # type: ignore[arg-type]

    # servers
    def opened(self, event: object) -> None:
        if isinstance(event, monitoring.TopologyOpenedEvent):
            self._keep("topologyOpeningEvent")

    def closed(self, event: object) -> None:
        if isinstance(event, monitoring.TopologyClosedEvent):
            self._keep("topologyClosedEvent")

    def description_changed(self, event: object) -> None:
        previous, new = event.previous_description, event.new_description  # type: ignore[attr-defined]
        if isinstance(event, monitoring.TopologyDescriptionChangedEvent):
            self._keep(
                "topologyDescriptionChangedEvent",
                previous_description={"type": previous.topology_type_name},
                new_description={"type": new.topology_type_name},
            )
        else:
            self._keep(
                "serverDescriptionChangedEvent",
                previous_description={"type": previous.server_type_name},
                new_description={"type": new.server_type_name},
            )

    # heartbeats
    def started(self, event: monitoring.ServerHeartbeatStartedEvent) -> None:
        self._keep("serverHeartbeatStartedEvent", awaited=event.awaited)

    def succeeded(self, event: monitoring.ServerHeartbeatSucceededEvent) -> None:
        self._keep("serverHeartbeatSucceededEvent", awaited=event.awaited)

    def failed(self, event: monitoring.ServerHeartbeatFailedEvent) -> None:
        self._keep("serverHeartbeatFailedEvent", awaited=event.awaited)

    @property
    def events(self) -> list[ObservedEvent]:
        with self._lock:
            return list(self._events)
