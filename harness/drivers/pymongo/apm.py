"""Command monitoring (APM) capture for one client, through :mod:`pymongo.monitoring`.

A :class:`CommandRecorder` is registered as an event listener of exactly one
client, so nothing from another client can reach it. It keeps the kinds of
events the test asked for and leaves out what the specs call internal:
handshake and authentication commands (unless sensitive commands are to be
observed), fail point configuration, and any command names the test ignores.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from pymongo import monitoring

from harness.core.constants import (
    ALL_COMMAND_EVENTS,
    CMAP_EVENTS,
    HANDSHAKE_COMMANDS,
    INTERNAL_COMMANDS,
    SENSITIVE_COMMANDS,
)
from harness.core.observations import ObservedEvent


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
    def _hidden(self, name: str, command: dict | None, request_id: int) -> bool:
        """Decide on the started event; its succeeded/failed event follows the decision."""
        if command is None:  # a reply: hidden exactly when its started event was
            return request_id in self._hidden_request_ids or name in self.ignore
        hide = name in self.ignore
        if not self.observe_sensitive:
            # A handshake command is sensitive when it carries authentication;
            # pymongo then publishes it with an empty (redacted) body.
            speculative = name in HANDSHAKE_COMMANDS and (not command or "speculativeAuthenticate" in command)
            hide = hide or name in SENSITIVE_COMMANDS or speculative
        if hide:
            self._hidden_request_ids.add(request_id)
        return hide

    def _keep(self, event: ObservedEvent) -> None:
        if event.kind in self.observe:
            with self._lock:
                self._events.append(event)

    # -- pymongo listener API ------------------------------------------
    # (each keeps what the event carries; a field an older pymongo lacks is observed as absent, so a
    # test that expects it fails on that driver release instead of the listener crashing)
    def started(self, event: monitoring.CommandStartedEvent) -> None:
        if self._hidden(event.command_name, dict(event.command), event.request_id):
            return
        self._keep(
            ObservedEvent(
                "commandStartedEvent",
                event.command_name,
                event.database_name,
                command=dict(event.command),
                request_id=event.request_id,
                operation_id=event.operation_id,
                server_connection_id=_server_connection_id(event),
                service_id=event.service_id,
            )
        )

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        if self._hidden(event.command_name, None, event.request_id):
            return
        self._keep(
            ObservedEvent(
                "commandSucceededEvent",
                event.command_name,
                event.database_name,
                reply=dict(event.reply),
                request_id=event.request_id,
                operation_id=event.operation_id,
                server_connection_id=_server_connection_id(event),
                service_id=event.service_id,
                duration_s=event.duration_micros / 1e6,
            )
        )

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        if self._hidden(event.command_name, None, event.request_id):
            return
        self._keep(
            ObservedEvent(
                "commandFailedEvent",
                event.command_name,
                event.database_name,
                failure=event.failure,
                request_id=event.request_id,
                operation_id=event.operation_id,
                server_connection_id=_server_connection_id(event),
                service_id=event.service_id,
                duration_s=event.duration_micros / 1e6,
            )
        )

    # -- reading ---------------------------------------------------------
    @property
    def events(self) -> list[ObservedEvent]:
        with self._lock:
            return list(self._events)

    def clear(self) -> None:
        with self._lock:
            self._events.clear()


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
