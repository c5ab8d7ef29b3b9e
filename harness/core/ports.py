"""The ports: what the engine needs from a driver, a target and a fault backend.

Plug-ins implement these; the engine and the core know nothing else about
them. A driver in another language, a new kind of deployment or a new way of
injecting faults is one module that fits one of these shapes, plus one
registration (docs/architecture.md).

**Driver.** The runner never touches a driver directly. It asks a :class:`DriverAdapter`
for a :class:`DriverScope` per test (the test's entities: clients, databases,
collections, sessions, streams), declares entities, runs operations by
their spec names and reads back observed events. Operations fail with
:class:`~harness.core.observations.DriverOperationError` (driver or server error)
or :class:`UnsupportedOperation` (the adapter cannot express the operation);
anything else is a harness defect. A driver in another language implements
the same surface behind an executor process.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from harness.core.model import EntitySpec, Operation
from harness.core.observations import ObservedEvent


class UnsupportedOperation(Exception):
    """The adapter cannot carry out what it was asked (a malformed call, a missing entity): an ``error``."""


class DriverLacksFeature(UnsupportedOperation):
    """The format defines this (an operation, argument, entity option, event family, structured logging)
    and the adapter does not implement it: the test is ``skipped`` with this reason, never an ``error``.
    A name the format does not define is refused when the file is loaded, so it never gets this far."""


class DriverScope(Protocol):
    def create_entity(self, spec: EntitySpec) -> None: ...

    def run(self, operation: Operation) -> Any: ...

    def events(self, client_id: str, event_type: str = "command") -> list[ObservedEvent]: ...

    def entity(self, entity_id: str) -> Any: ...

    def set_entity(self, entity_id: str, value: Any) -> None: ...

    def close(self) -> None: ...


class DriverAdapter(Protocol):
    name: str
    version: str
    #: The ``heartbeatFrequencyMS`` (and, where the driver has one, ``minHeartbeatFrequencyMS``) the
    #: adapter gives clients when asked for fast heartbeats; None when the driver cannot lower them.
    fast_heartbeat_ms: int | None
    #: The oldest server wire version the driver supports (None: unknown): a test that emulates an older
    #: server (reply shaping) is skipped for it, as the rule it checks does not bind the driver.
    min_wire_version: int | None

    def open_scope(self, uri: str, *, iteration_timeout_s: float, fast_heartbeats: bool = False) -> DriverScope:
        """A new scope; with ``fast_heartbeats``, every client whose ``uriOptions`` leave
        ``heartbeatFrequencyMS`` unset gets :attr:`fast_heartbeat_ms` (the unified format allows it for tests
        that configure fail points, and forbids it for clients that set the option themselves)."""
        ...


# -- targets -------------------------------------------------------------------------------


class TargetUnavailable(Exception):
    """The target cannot be started or reached; the message says which and why."""


@dataclass
class TargetInfo:
    """Provenance of a target, recorded in every result."""

    kind: str
    name: str
    version: str = "unknown"
    topology: str = "unknown"
    uri: str = ""
    max_wire_version: int | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def as_record(self) -> dict[str, Any]:
        return asdict(self)


class Target(Protocol):
    """A deployment under test: its lifetime, the URI drivers use, and the harness's own admin client.

    ``admin`` (a pymongo ``MongoClient`` for the targets in this project) is
    for set-up, fail points and detection, never the client under test.
    """

    name: str
    uri: str
    admin: Any
    info: TargetInfo

    def start(self) -> TargetInfo: ...

    def stop(self) -> None: ...

    def server_parameter(self, name: str) -> Any: ...


# -- fault backends ------------------------------------------------------------------------


class FailPointError(Exception):
    """A fail point could not be armed (the message says why and on what)."""


class FailPointBackend(Protocol):
    """Where ``configureFailPoint`` goes: the target itself, or something in front of it."""

    name: str

    def arm(self, command: dict[str, Any]) -> None: ...

    def disarm(self, fail_point: str) -> None: ...
