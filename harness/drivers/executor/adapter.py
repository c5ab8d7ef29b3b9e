"""The driver port over an executor process (docs/executor-protocol.md): one request per port call.

The adapter owns one :class:`ExecutorProcess` at a time. A protocol fault kills it (the test that saw the
fault gets an ``error``); the next scope starts a new one, so one broken test never takes the run down.
"""

from __future__ import annotations

import itertools
import shlex
import threading
from typing import Any

from harness.core.credentials import redact_text
from harness.core.model import EntitySpec, Operation
from harness.core.observations import CursorDocuments, DriverOperationError, NoChangeWithin, ObservedEvent
from harness.core.ports import (
    DEFAULT_ITERATION_MODES,
    DRIVER_CAPABILITIES,
    DriverLacksFeature,
    NestedOperations,
    UnsupportedOperation,
    chosen_iteration_mode,
    iteration_mode_problems,
)
from harness.core.vocabulary import executor_operations
from harness.drivers.executor import codec
from harness.drivers.executor.early_verdict import ExecutorStreamClock
from harness.drivers.executor.process import (
    HELLO_TIMEOUT_S,
    PROTOCOL_VERSION,
    ExecutorFailure,
    ExecutorProcess,
)
from harness.drivers.executor.redaction import SensitiveCommands

#: Each request's deadline unless the adapter is given another; the test's own deadline is shorter and,
#: when it passes, the engine calls :meth:`ExecutorAdapter.restart`.
REQUEST_TIMEOUT_S = 300.0
#: How long closing a scope waits for a busy executor (a timed-out test's) before leaving it to restart().
CLOSE_WAIT_S = 2.0
#: Capabilities of the protocol itself, beyond the driver port's (docs/executor-protocol.md 6.4.2): the scope's
#: command log and a per-request ``budgetMS``, which let the harness give its early no-change verdict.
PROTOCOL_CAPABILITIES = frozenset({"command_log"})
#: What ``hello``'s ``capabilities`` may name.
EXECUTOR_CAPABILITIES = DRIVER_CAPABILITIES | PROTOCOL_CAPABILITIES
#: What an executor that never answered ``hello`` is recorded as: nothing is known about its driver.
_NOT_STARTED: dict[str, Any] = {
    "driver": {"name": "unknown", "version": "unknown", "language": "unknown"},
    "capabilities": [],
    "operations": [],
}


class ExecutorEntity:
    """A driver object the executor keeps (a change stream, a cursor): only its id crosses the port."""

    def __init__(self, entity_id: str | None) -> None:
        self.entity_id = entity_id

    def __repr__(self) -> str:
        return f"<executor entity {self.entity_id}>"


def _entity_id(result: Any) -> str | None:
    """The id under which the executor keeps an operation's result, when it is a driver object."""
    return result.entity_id if isinstance(result, ExecutorEntity) else None


def _handshake(reply: dict[str, Any]) -> dict[str, Any]:
    """The ``hello`` result, checked field by field (section 4); a wrong one is an :class:`ExecutorFailure`."""
    if not reply["ok"]:
        raise ExecutorFailure(redact_text(f"hello failed: {reply['error'].get('message', reply['error'])}"))
    result = reply["result"]
    problems = hello_problems(result)
    if problems:
        raise ExecutorFailure(redact_text("hello: " + "; ".join(problems)))
    return dict(result)


def hello_problems(result: Any) -> list[str]:
    """What is wrong with a ``hello`` result (empty when nothing is)."""
    if not isinstance(result, dict):
        return [f"the result must be a document, got {result!r}"]
    problems = []
    if result.get("protocolVersion") != PROTOCOL_VERSION:
        problems.append(
            f"protocolVersion {result.get('protocolVersion')!r}: this harness speaks version {PROTOCOL_VERSION}"
        )
    driver = result.get("driver")
    for key in ("name", "version", "language"):
        if not isinstance(driver, dict) or not isinstance(driver.get(key), str) or not driver.get(key):
            problems.append(f"driver.{key} must be a non-empty string")
    capabilities = result.get("capabilities")
    if not isinstance(capabilities, list) or not all(isinstance(c, str) for c in capabilities):
        problems.append("capabilities must be an array of strings")
    else:
        unknown = sorted(set(capabilities) - EXECUTOR_CAPABILITIES)
        if unknown:
            problems.append(f"unknown capabilities {unknown} (known: {sorted(EXECUTOR_CAPABILITIES)})")
    operations = result.get("operations")
    if not isinstance(operations, list) or not all(isinstance(o, str) for o in operations):
        problems.append("operations must be an array of operation names")
    else:
        unknown = sorted(set(operations) - executor_operations())
        if unknown:
            problems.append(f"operations {unknown} are not in the vocabulary (harness/core/vocabulary.json)")
    for key in ("fastHeartbeatMS", "minWireVersion"):
        if result.get(key) is not None and not isinstance(result.get(key), int):
            problems.append(f"{key} must be an integer or null")
    if "iterationModes" in result:  # absent: ["next"] (section 4); unknown, repeated or empty: a handshake error
        problems.extend(iteration_mode_problems(result["iterationModes"]))
    return problems


class ExecutorAdapter:
    """A driver under test in another process: ``--driver node``, ``--driver exec:CMD``."""

    #: A busy executor is killed, with all it started, and the next scope starts another (:meth:`restart`).
    restartable = True

    def __init__(self, command: str | list[str], request_timeout_s: float = REQUEST_TIMEOUT_S) -> None:
        self.command = command
        #: Recorded in every result's ``driver`` (section 4's hello says which driver; this says how it ran).
        self.executor: str | None = redact_text(command if isinstance(command, str) else shlex.join(command))
        self.request_timeout_s = request_timeout_s
        self._lock = threading.Lock()
        self._process: ExecutorProcess | None = None
        #: The process whose ``hello`` is awaited (under ``_lock``): restart() ends it without waiting for the lock.
        self._starting: ExecutorProcess | None = None
        self._scope_ids = itertools.count(1)
        self._hello: dict[str, Any] = {}
        #: Why the executor could not start: the run still goes on, and each test is an ``error`` saying this.
        self.start_failure: str | None = None
        try:
            self._started()
        except ExecutorFailure as exc:
            self.start_failure = str(exc)
        hello = self._hello or _NOT_STARTED
        self.name: str = hello["driver"]["name"]
        self.version: str = hello["driver"]["version"]
        self.language: str = hello["driver"]["language"]
        self.capabilities: frozenset[str] = frozenset(hello["capabilities"])
        self.operations: frozenset[str] = frozenset(hello["operations"])
        self.fast_heartbeat_ms: int | None = hello.get("fastHeartbeatMS")
        self.min_wire_version: int | None = hello.get("minWireVersion")
        #: ``hello``'s ``iterationModes`` (absent, or no ``hello`` at all: ``["next"]``, all that is known).
        self.iteration_modes: tuple[str, ...] = tuple(hello.get("iterationModes") or DEFAULT_ITERATION_MODES)
        #: The early no-change verdict (docs/causes.md section 4) needs the executor's command log and per-request
        #: budgets (section 6.4.2); without them every iteration that gets no change waits its budget.
        self.early_no_change: bool = "command_log" in self.capabilities

    def _started(self) -> ExecutorProcess:
        """The live process, a new one (handshake done) if there is none or the last one broke."""
        with self._lock:
            if self.start_failure is not None:
                raise ExecutorFailure(self.start_failure)
            if self._process is None or self._process.failure is not None:
                process = self._starting = ExecutorProcess(self.command)
                try:
                    hello = _handshake(process.request("hello", {"protocolVersion": PROTOCOL_VERSION}, HELLO_TIMEOUT_S))
                except ExecutorFailure as exc:
                    process.kill()
                    raise ExecutorFailure(redact_text(f"the executor could not start: {exc}")) from exc
                finally:
                    self._starting = None
                if self._hello and hello["driver"] != self._hello["driver"]:
                    process.kill()
                    raise ExecutorFailure(f"the restarted executor is another driver: {hello['driver']}")
                self._hello = hello
                self._process = process
            return self._process

    def open_scope(
        self,
        uri: str,
        *,
        iteration_timeout_s: float,
        fast_heartbeats: bool = False,
        iteration_mode: str | None = None,
        resume_token_format: str | None = None,
    ) -> ExecutorScope:
        """``openScope``; ``iterationMode`` is sent only when a mode was chosen (``--iteration-mode``), so a run
        without one sends what it sent before section 6.4.1 and an executor that predates it sees no new field.
        With ``resume_token_format`` and an executor that lists ``command_log``, the scope waits for a change in
        slices and ends the wait once the change can no longer come (:mod:`harness.drivers.executor.early_verdict`)."""
        mode = {} if iteration_mode is None else {"iterationMode": chosen_iteration_mode(self, iteration_mode)}
        process = self._started()
        scope = ExecutorScope(self, process, f"s{next(self._scope_ids)}")
        scope.iteration_timeout_s = iteration_timeout_s
        if self.early_no_change and resume_token_format is not None:
            scope.early = ExecutorStreamClock(scope.command_log, resume_token_format, iteration_mode, _entity_id)
        heartbeat = self.fast_heartbeat_ms if fast_heartbeats else None
        scope.call(
            "openScope",
            uri=uri,
            iterationTimeoutMS=int(iteration_timeout_s * 1000),
            heartbeatFrequencyMS=heartbeat,
            **mode,
        )
        return scope

    def restart(self) -> None:
        """Kill the executor (and all it started); the next scope starts a new one. One still starting is killed
        first: its ``hello`` holds the lock for up to :data:`HELLO_TIMEOUT_S`."""
        starting = self._starting
        if starting is not None:
            starting.kill()
        with self._lock:
            process, self._process = self._process, None
        if process is not None:
            process.kill()

    def close(self) -> None:
        """EOF to the executor: it closes what is open and exits."""
        with self._lock:
            process, self._process = self._process, None
        if process is not None and process.failure is None:
            process.finish()


class ExecutorScope:
    """One test's entities, kept by the executor under ``scope``; saved data results are kept here too."""

    def __init__(self, adapter: ExecutorAdapter, process: ExecutorProcess, scope_id: str) -> None:
        self.adapter = adapter
        self.process = process
        self.scope_id = scope_id
        self._values: dict[str, Any] = {}
        self._closed = False
        self.iteration_timeout_s = 0.0
        #: The early no-change verdict's clock (None: every iteration waits its budget out in the executor).
        self.early: ExecutorStreamClock | None = None
        #: What the executor's raw command events may not show (section 7.1): redacted here, before anything keeps them.
        self.sensitive = SensitiveCommands()

    def call(self, method: str, timeout_s: float | None = None, **params: Any) -> dict[str, Any]:
        """One request; a failed reply is turned into the port's exception for its ``error.kind``."""
        reply = self.reply(method, timeout_s, **params)
        if not reply["ok"]:
            raise _port_error(method, reply["error"])
        return reply

    def reply(self, method: str, timeout_s: float | None = None, **params: Any) -> dict[str, Any]:
        """One request's reply as it came (``ok`` true or false)."""
        timeout = timeout_s or self.adapter.request_timeout_s
        return self.process.request(method, {"scope": self.scope_id, **params}, timeout)

    # -- entities --------------------------------------------------------------------------------
    def create_entity(self, spec: EntitySpec) -> None:
        if self._closed:
            raise UnsupportedOperation(f"cannot create {spec.id!r}: the test's driver scope is closed")
        self.call("createEntity", entity=codec.entity_description(spec))
        if spec.kind == "client":
            self.sensitive.client_created(spec.id, spec.options)

    def entity(self, entity_id: str) -> Any:
        try:
            return self._values[entity_id]
        except KeyError:
            raise UnsupportedOperation(f"no saved value named {entity_id!r} on the harness's side") from None

    def set_entity(self, entity_id: str, value: Any) -> None:
        if entity_id in self._values:
            raise UnsupportedOperation(f"entity {entity_id!r} already exists")
        if isinstance(value, ExecutorEntity) and value.entity_id not in (None, entity_id):
            self.call("setEntity", id=entity_id, entity=value.entity_id)  # a driver object: named where it lives
            if self.early is not None:
                self.early.alias(entity_id, value.entity_id)
        self._values[entity_id] = value

    # -- operations -------------------------------------------------------------------------------
    def run(self, operation: Operation) -> Any:
        if operation.name not in self.adapter.operations:
            raise DriverLacksFeature(
                f"operation {operation.name!r} is not implemented by the {self.adapter.name} executor"
            )
        arguments = dict(operation.arguments)
        nested = {key: value for key, value in arguments.items() if isinstance(value, NestedOperations)}
        for key, value in nested.items():
            arguments[key] = [codec.operation_document(inner) for inner in value.operations]
        document = codec.operation_document(operation, arguments)
        if self.early is not None and self.early.concerns(operation.name, operation.object):
            return self.early.around(
                operation, lambda budget_ms: self._sent(document, nested, budget_ms), self.iteration_timeout_s
            )
        return self._sent(document, nested, None)

    def _sent(self, document: dict[str, Any], nested: dict[str, NestedOperations], budget_ms: int | None) -> Any:
        """One ``run`` request (with ``budgetMS`` when not None, section 6.4.2) and its result."""
        budget = {} if budget_ms is None else {"budgetMS": budget_ms}
        reply = self.reply("run", operation=document, **budget)
        _report_nested(nested, reply)
        if not reply["ok"]:
            raise _port_error(document["name"], reply["error"])
        kind = reply.get("resultKind", "value")
        if kind == "documents":
            return CursorDocuments(reply["result"] or [])
        if kind == "entity":
            return ExecutorEntity(reply.get("entity") or document.get("saveResultAsEntity"))
        return reply["result"]

    def events(self, client_id: str, event_type: str = "command") -> list[ObservedEvent]:
        found = self.call("events", client=client_id, eventType=event_type)["result"]
        if not isinstance(found, list):
            raise ExecutorFailure(f"events: the result must be an array, got {type(found).__name__}")
        if event_type == "command":
            found = self.sensitive.client_events(client_id, found)
        try:
            return [codec.observed_event(document) for document in found]
        except ValueError as exc:
            raise ExecutorFailure(f"events: {exc}") from exc

    def command_log(self, start: int) -> list[dict[str, Any]]:
        """``commandLog`` from index ``start`` (section 6.4.2), the entries as decoded documents."""
        params: dict[str, Any] = {"from": start}  # a Python keyword, so passed as a mapping
        found = self.call("commandLog", **params)["result"]
        if not isinstance(found, list) or not all(isinstance(entry, dict) for entry in found):
            raise ExecutorFailure(f"commandLog: the result must be an array of documents, got {type(found).__name__}")
        return self.sensitive.log_entries(found)

    # -- capabilities ------------------------------------------------------------------------------
    def session_lsid(self, entity_id: str) -> Any:
        return self.call("sessionLsid", session=entity_id)["result"]

    def session_state(self, entity_id: str) -> dict[str, Any]:
        state = self.call("sessionState", session=entity_id)["result"]
        if not isinstance(state, dict):
            raise ExecutorFailure(f"sessionState: the result must be a document, got {state!r}")
        return state

    def session_pinned_address(self, entity_id: str) -> tuple[str, int] | None:
        address = self.call("sessionPinnedAddress", session=entity_id)["result"]
        return None if address is None else (str(address["host"]), int(address["port"]))

    def connections_checked_out(self, client_id: str) -> int:
        return int(self.call("connectionsCheckedOut", client=client_id)["result"])

    def log_messages(self, client_id: str) -> list[Any]:
        from harness.core.observations import ObservedLogMessage

        found = self.call("logMessages", client=client_id)["result"]
        return [ObservedLogMessage(m["level"], m["component"], dict(m["data"])) for m in found]

    def close(self) -> None:
        """closeScope, unless the executor is busy with a timed-out request (then restart() ends it all)."""
        if self._closed:
            return
        self._closed = True
        if self.process.failure is not None:
            return
        try:
            self.call("closeScope", timeout_s=CLOSE_WAIT_S)
        except ExecutorFailure:
            pass


def _port_error(method: str, error: dict[str, Any]) -> Exception:
    """An error reply (section 7) as the port's exception; its message with any connection string's secrets hidden
    (an executor's driver may quote the connection string it was given)."""
    message = redact_text(str(error.get("message", "")))
    error = {**error, "message": message} if "message" in error else error
    kind = error.get("kind")
    if kind == "driverError":
        return DriverOperationError(codec.error_info(error))
    if kind == "notImplemented":
        return DriverLacksFeature(f"{method}: the executor lacks this: {message}")
    if kind == "noChange":
        return NoChangeWithin(message)
    if kind in ("invalidRequest", "internal"):
        return UnsupportedOperation(f"{method}: executor {kind}: {message}")
    return ExecutorFailure(f"{method}: error reply with unknown kind {kind!r}: {message}")


def _report_nested(nested: dict[str, NestedOperations], reply: dict[str, Any]) -> None:
    """Tell the engine's hook about each nested operation the executor ran (section 6.5), in order."""
    if not nested:
        return
    ((_, operations),) = nested.items()
    for entry in reply.get("nested") or []:
        index = int(entry["index"])
        operations.hook.started(index)
        if entry.get("ok"):
            operations.hook.finished(index, entry.get("result"), None)
        else:
            error = _port_error("withTransaction callback", entry.get("error") or {})
            operations.hook.finished(index, None, error if isinstance(error, DriverOperationError) else None)
            if not isinstance(error, DriverOperationError):
                raise error
