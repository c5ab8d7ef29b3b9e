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

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

from harness.core.errors import HarnessError
from harness.core.model import EntitySpec, Operation
from harness.core.observations import DriverOperationError, ObservedEvent


class UnsupportedOperation(Exception):
    """The adapter cannot carry out what it was asked (a malformed call, a missing entity): an ``error``."""


class DriverLacksFeature(UnsupportedOperation):
    """The format defines this (an operation, argument, entity option, event family, structured logging)
    and the adapter does not implement it: the test is ``skipped`` with this reason, never an ``error``.
    A name the format does not define is refused when the file is loaded, so it never gets this far."""


#: What a driver adapter may be able to answer beyond running operations: one name per
#: :class:`DriverScope` method (or event family) the engine calls only when the adapter lists it in
#: :attr:`DriverAdapter.capabilities`. A test that needs one the adapter lacks is ``skipped`` with the name.
DRIVER_CAPABILITIES = frozenset(
    {
        "session_lsid",  # DriverScope.session_lsid: $$sessionLsid
        "session_state",  # DriverScope.session_state: assertSessionTransactionState/Pinned/Dirty
        "session_pinned_address",  # DriverScope.session_pinned_address: targetedFailPoint
        "connections_checked_out",  # DriverScope.connections_checked_out: assertNumberConnectionsCheckedOut
        "log_messages",  # DriverScope.log_messages: expectLogMessages
        "cmap_events",  # DriverScope.events(..., "cmap")
        "sdam_events",  # DriverScope.events(..., "sdam")
    }
)

#: The public ways a driver may offer an application to consume a change stream (docs/executor-protocol.md,
#: section 6.4.1, whose table says how each carries out ``iterateUntilDocumentOrError`` and ``iterateOnce``): a
#: driver can keep a rule in one and break it in another, so a run names one (``--iteration-mode``) and every
#: record says which (``driver.iteration_mode``). :attr:`DriverAdapter.iteration_modes` lists the ones an adapter
#: drives for real, its default first.
ITERATION_MODES: Mapping[str, str] = MappingProxyType(
    {
        "next": "a blocking or awaited next: pymongo next(stream), Node await stream.next(), Go stream.Next(ctx)",
        "tryNext": "a non-blocking next that returns nothing when no change is buffered: pymongo try_next()",
        "iterator": "the language's iteration protocol, one iterator kept per stream: for change in stream",
        "emitter": "a callback per change and per error: Node stream.on('change', ...)",
        "stream": "a readable stream of changes: Node stream.stream() read through 'data'",
    }
)
#: The modes in which the driver, not the application, decides when to send a getMore (read-ahead, section
#: 6.4.1): there a stream's getMores are not ordered against the test's other commands, nor counted.
PUSH_ITERATION_MODES = frozenset({"emitter", "stream"})
#: What a driver that declares no modes offers (an executor whose ``hello`` has no ``iterationModes``).
DEFAULT_ITERATION_MODES = ("next",)


def iteration_mode_problems(modes: Any) -> list[str]:
    """What is wrong with a declared list of iteration modes (empty when nothing is): it must be a non-empty list
    of names from :data:`ITERATION_MODES`, each once (docs/executor-protocol.md, section 4)."""
    if not isinstance(modes, (list, tuple)) or not all(isinstance(mode, str) for mode in modes):
        return [f"iterationModes must be an array of mode names, got {modes!r}"]
    problems = []
    if not modes:
        problems.append("iterationModes must name at least one mode (leave it out to mean ['next'])")
    unknown = [mode for mode in modes if mode not in ITERATION_MODES]
    if unknown:
        problems.append(f"unknown iteration modes {unknown} (known: {list(ITERATION_MODES)})")
    repeated = sorted({mode for mode in modes if modes.count(mode) > 1})
    if repeated:
        problems.append(f"iteration modes listed more than once: {repeated}")
    return problems


#: ``DriverScope.events`` families that are capabilities (command events every adapter must publish).
EVENT_FAMILY_CAPABILITIES = {"cmap": "cmap_events", "sdam": "sdam_events"}


def require_capability(driver: DriverAdapter, capability: str, why: str) -> None:
    """Raise :class:`DriverLacksFeature` naming ``capability`` unless ``driver`` declares it (never a probe)."""
    if capability not in DRIVER_CAPABILITIES:
        raise ValueError(f"{capability!r} is not a driver capability (known: {sorted(DRIVER_CAPABILITIES)})")
    if capability not in driver.capabilities:
        raise DriverLacksFeature(f"{why}: the {driver.name} driver adapter lacks the capability {capability!r}")


def require_event_family(driver: DriverAdapter, event_type: str, why: str) -> None:
    """:func:`require_capability` for ``DriverScope.events(client, event_type)``."""
    capability = EVENT_FAMILY_CAPABILITIES.get(event_type)
    if capability is not None:
        require_capability(driver, capability, why)


class NestedOperationHook(Protocol):
    """The engine's side of an operation whose argument is a list of operations (``withTransaction``'s
    ``callback``). The adapter runs the nested operations inside the driver's own loop (which may run
    them more than once) and tells the engine about each one, in order, as it happens (in process) or
    from the executor's reply (per attempt, in order)."""

    def started(self, index: int) -> None:
        """Nested operation ``index`` is about to run (raises if the test has been torn down)."""
        ...

    def finished(self, index: int, result: Any, error: DriverOperationError | None) -> None:
        """Its result (or the driver's error) is known: checked against the nested operation's expectations;
        raises :class:`~harness.core.errors.TestFailure` on a mismatch. For an error that was expected (or
        not), the hook returns and the adapter raises the driver's own error into its loop."""
        ...


@dataclass(frozen=True)
class NestedOperations:
    """What replaces the list of operations in an argument such as ``withTransaction``'s ``callback`` when
    it crosses the driver port: the operations as values, and the hook that checks each one."""

    operations: tuple[Operation, ...]
    hook: NestedOperationHook


class DriverScope(Protocol):
    def create_entity(self, spec: EntitySpec) -> None: ...

    def run(self, operation: Operation) -> Any:
        """Run one operation; an argument listed in the format's nested operations (``callback``) arrives as
        :class:`NestedOperations`."""
        ...

    def events(self, client_id: str, event_type: str = "command") -> list[ObservedEvent]: ...

    def entity(self, entity_id: str) -> Any: ...

    def set_entity(self, entity_id: str, value: Any) -> None: ...

    def close(self) -> None: ...

    # -- capabilities: called only when the adapter lists the name in ``capabilities`` --------------
    def session_lsid(self, entity_id: str) -> Any:
        """The lsid document of a session entity (``$$sessionLsid``), kept from its creation."""
        ...

    def session_state(self, entity_id: str) -> dict[str, Any]:
        """``transactionState``, ``pinned`` and ``dirty`` of a session entity, as the spec names them."""
        ...

    def session_pinned_address(self, entity_id: str) -> tuple[str, int] | None:
        """The ``(host, port)`` a session entity is pinned to, or None."""
        ...

    def connections_checked_out(self, client_id: str) -> int:
        """Connections the client's pool has lent out right now."""
        ...

    def log_messages(self, client_id: str) -> list[Any]:
        """The structured log messages a client with ``observeLogMessages`` emitted, in order."""
        ...


class DriverAdapter(Protocol):
    name: str
    version: str
    #: The driver's programming language (``python``, ``javascript``...): in every record with name and version.
    language: str
    #: The command line of the executor the driver runs in (docs/executor-protocol.md), recorded as the
    #: ``driver``'s ``executor``; None for a driver in the harness's own process (its records have no such field).
    executor: str | None
    #: What the adapter's scopes can answer, names from :data:`DRIVER_CAPABILITIES`.
    capabilities: frozenset[str]
    #: The ``heartbeatFrequencyMS`` (and, where the driver has one, ``minHeartbeatFrequencyMS``) the
    #: adapter gives clients when asked for fast heartbeats; None when the driver cannot lower them.
    fast_heartbeat_ms: int | None
    #: The oldest server wire version the driver supports (None: unknown): a test that emulates an older
    #: server (reply shaping) is skipped for it, as the rule it checks does not bind the driver.
    min_wire_version: int | None
    #: The ways to consume a change stream the adapter drives through the driver's own API, names from
    #: :data:`ITERATION_MODES`; the first is the default (the driver's most common one).
    iteration_modes: tuple[str, ...]
    #: Whether the adapter's scopes can end ``iterateUntilDocumentOrError`` before its budget once the change can
    #: no longer come (docs/causes.md section 4); False: every iteration that gets no change waits its budget.
    early_no_change: bool
    #: Whether :meth:`restart` can end a driver still busy after a test's deadline (an executor's process is killed
    #: and another started); False: a busy in-process driver cannot be stopped, so a timeout does not wait for it.
    restartable: bool

    def open_scope(
        self,
        uri: str,
        *,
        iteration_timeout_s: float,
        fast_heartbeats: bool = False,
        iteration_mode: str | None = None,
        resume_token_format: str | None = None,
    ) -> DriverScope:
        """A new scope; with ``fast_heartbeats``, every client whose ``uriOptions`` leave
        ``heartbeatFrequencyMS`` unset gets :attr:`fast_heartbeat_ms` (the unified format allows it for tests
        that configure fail points, and forbids it for clients that set the option themselves). Every change
        stream of the scope is consumed in ``iteration_mode`` (None: the default, the first of
        :attr:`iteration_modes`; one the adapter does not declare is refused: :func:`chosen_iteration_mode`).
        ``resume_token_format`` (``harness.core.resume_tokens``) is given by a caller that vouches that no write
        starts while an iteration waits (the spec runner): the scope may then give the early verdict, reading the
        target's tokens in that format (``unread``: their positions are unknown). None: every iteration keeps its
        budget."""
        ...

    def restart(self) -> None:
        """Called after a test's deadline passed while the driver was still busy, before the next test: an
        in-process adapter may do nothing; an executor adapter kills its process group and starts another."""
        ...


class DriverUnavailable(Exception):
    """The driver under test cannot be set up on this machine (unknown, or its runtime or packages are missing):
    the run is refused before its target starts (exit 2), and the message names the command that installs
    what is missing."""


def chosen_iteration_mode(driver: DriverAdapter, requested: str | None) -> str:
    """The mode a run (or a scope) consumes change streams in: ``requested``, or the driver's default made explicit.

    A mode the driver does not declare is refused with :class:`DriverUnavailable` naming the ones it does, so a run
    that asks for one stops before its target starts (exit 2) instead of certifying another mode under its name."""
    if requested is None:
        return driver.iteration_modes[0]
    if requested not in driver.iteration_modes:
        known = (
            "" if requested in ITERATION_MODES else f" (not a mode at all: the modes are {', '.join(ITERATION_MODES)})"
        )
        raise DriverUnavailable(
            f"--iteration-mode {requested}: the {driver.name} driver does not offer it{known}; its iteration modes: "
            f"{', '.join(driver.iteration_modes)}"
        )
    return requested


# -- targets -------------------------------------------------------------------------------


class TargetUnavailable(Exception):
    """The target cannot be started or reached; the message says which and why."""


class WireVersionRefused(TargetUnavailable):
    """The target reports a wire version the harness's own client (pymongo) refuses: with a pymongo driver under
    test (the same pymongo) the pair cannot work at all; with another driver, this harness cannot run the target."""


class PairIncompatible(TargetUnavailable):
    """The driver under test and the target cannot work together (the driver refuses the target's wire
    version): a reasoned result for a matrix cell, not a fault of either."""


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


class TargetAdminError(HarnessError):
    """The harness's own client could not do a set-up, check or fail-point job on the target (the message
    says which and why); the driver's error types never cross this port."""


class FailPointError(Exception):
    """A fail point could not be armed (the message says why and on what)."""


class FailPointBackend(Protocol):
    """Where ``configureFailPoint`` goes: the target itself, or something in front of it."""

    name: str

    def arm(self, command: dict[str, Any]) -> None: ...

    def disarm(self, fail_point: str) -> None: ...

    def leftovers(self) -> list[str]:
        """Fail points still in effect that nobody armed through this backend, by name ([] when the backend
        cannot know): the manager turns them off and reports them after every test."""
        ...


class DirectFailPointBackend(FailPointBackend, Protocol):
    """A :class:`FailPointBackend` on one server reached by a client of its own (``targetedFailPoint``)."""

    def close(self) -> None: ...


class TargetAdmin(Protocol):
    """The jobs the engine gives the harness's own client (never the client under test), one method each.

    Errors are :class:`TargetAdminError`. The engine imports no driver: this is how it sets up data,
    reads outcomes and reaches a server directly.
    """

    def drop_database(self, name: str) -> None: ...

    def recreate_collection(
        self, database: str, collection: str, options: dict[str, Any], documents: list[dict[str, Any]]
    ) -> None:
        """Drop and create the collection with ``options``, then insert ``documents``, with majority write concern
        (the formats' set-up), trying the drop-create pair again if a late write recreates it in between."""
        ...

    def collection_documents(self, database: str, collection: str) -> list[dict[str, Any]]:
        """Every document, by ``_id``, read from the primary with read concern ``local`` (the formats' outcome)."""
        ...

    def collection_names(self, database: str) -> list[str]: ...

    def index_names(self, database: str, collection: str) -> list[str]: ...

    def only_server(self, uri: str) -> tuple[str, int] | None:
        """The one ``(host, port)`` a connection string names, or None when it names several."""
        ...

    def direct_failpoints(self, address: tuple[str, int]) -> DirectFailPointBackend:
        """A fail-point backend on the server at ``address`` through a direct client of its own (closed by
        the caller)."""
        ...


class Target(Protocol):
    """A deployment under test: its lifetime, the URI drivers use, and the harness's own admin client.

    ``admin`` (a pymongo ``MongoClient`` for the targets in this project) is for plug-ins' set-up, fail
    points and detection, never the client under test; the engine reaches it only through ``admin_tasks``.
    """

    name: str
    uri: str
    admin: Any
    admin_tasks: TargetAdmin
    info: TargetInfo
    #: How ``configureFailPoint`` sent through ``admin`` is applied: ``native`` (the server), or
    #: ``emulated-by-presenting-proxy`` (something in front of the server answers it); records say which.
    admin_failpoints: str
    #: The network faults in front of the deployment (a Toxiproxy, ``faults.network``) when the run wrapped the
    #: target with them: opaque to the engine, read by the fault plug-ins. None: the run injects none.
    faults: Any
    #: The target this one wraps (the network-fault wrapper's deployment); None: it is the deployment itself.
    inner: Target | None

    def start(self) -> TargetInfo: ...

    def stop(self) -> None: ...

    def server_parameter(self, name: str) -> Any: ...

    def server_address(self) -> tuple[str, int] | None:
        """Where the server itself listens, beneath anything that presents it; None: where ``admin`` connects."""
        ...

    def refusal(self, address: tuple[str, int] | None = None) -> str | None:
        """Why the harness must not use this deployment any more (or reach ``address`` on it): the guard in front of
        a deployment the harness did not start saw a host off the loopback interface appear. None: nothing refused.
        The run stops at the next test with this reason."""
        ...

    def restart_problem(self) -> str | None:
        """Why the harness cannot restart this deployment in place now (not one it started, in-memory storage, not
        running); None: it can (a fault campaign's restart faults ask first)."""
        ...

    def restart_in_place(self, down_s: float = 0.0) -> float:
        """Stop the server, wait ``down_s``, start it again on the same port and storage; the seconds it took. Only
        when :meth:`restart_problem` is None; else it raises :class:`TargetUnavailable` with that problem."""
        ...


# -- fault backends ------------------------------------------------------------------------


# -- anything that runs as a test ----------------------------------------------------------


class Runnable(Protocol):
    """Anything a run runs as one test and records: a spec test (:class:`harness.core.model.SpecTest`), or a
    code-defined check (:class:`harness.engine.run.Check`: a prose test, a server check, a campaign).

    The run, the composition root and ``harness coverage`` ask a test these and never which kind it is. ``run`` is
    the :class:`harness.engine.run.HarnessRun` the test runs in (the core does not import the engine).
    """

    #: The record's ``format`` and ``file``.
    format: str
    file: str

    @property
    def test_id(self) -> str: ...

    @property
    def spec_file(self) -> str | None:
        """The spec file it was loaded from; None: code defines it (no file to pin or to check against a schema)."""
        ...

    @property
    def schema(self) -> str | None:
        """The JSON schema its file was checked against, ``"none"`` when none was found, None when none applies."""
        ...

    @property
    def line(self) -> int | None:
        """The record's ``line`` (None: code defines it)."""
        ...

    @property
    def name(self) -> str:
        """The record's ``test``: a spec test's description, a check's name."""
        ...

    @property
    def clauses(self) -> tuple[str, ...]:
        """What its checks can report (:func:`harness.core.causes.clauses_of`), for ``harness coverage``."""
        ...

    @property
    def ends_with_target(self) -> bool:
        """Whether the target's process exiting ends it at once: a spec test never restarts its target; a check may
        restart it itself (a campaign's restart fault), so the run looks only after it ends."""
        ...

    def early_verdict(self, run: Any) -> Any:
        """The verdict of a test that must not run here (a requirement the target does not meet), or None."""
        ...

    def open_case(self, run: Any) -> Any:
        """The :class:`harness.engine.lifecycle.Case` that runs it (its set-up done)."""
        ...

    def deadline_s(self, run: Any) -> float | None:
        """Its own per-test timeout (a campaign sets its budget); None: the run's."""
        ...
