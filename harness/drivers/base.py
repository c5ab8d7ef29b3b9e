"""The seam between the runner and a driver under test.

The runner never touches a driver directly. It asks a :class:`DriverAdapter`
for a :class:`DriverSession` per test, declares entities, runs operations by
their spec names and reads back observed events. Operations fail with
:class:`~harness.observations.DriverOperationError` (driver or server error)
or :class:`UnsupportedOperation` (the adapter cannot express the operation);
anything else is a harness defect. A driver in another language implements
the same surface behind an executor process.
"""

from __future__ import annotations

from typing import Any, Protocol

from harness.model import EntitySpec, Operation
from harness.observations import ObservedEvent


class UnsupportedOperation(Exception):
    """The adapter has no implementation for an operation, entity kind or option."""


class DriverSession(Protocol):
    def create_entity(self, spec: EntitySpec) -> None: ...

    def run(self, operation: Operation) -> Any: ...

    def events(self, client_id: str, event_type: str = "command") -> list[ObservedEvent]: ...

    def entity(self, entity_id: str) -> Any: ...

    def set_entity(self, entity_id: str, value: Any) -> None: ...

    def close(self) -> None: ...


class DriverAdapter(Protocol):
    name: str
    version: str

    def open_session(self, uri: str, *, iteration_timeout_s: float) -> DriverSession: ...
