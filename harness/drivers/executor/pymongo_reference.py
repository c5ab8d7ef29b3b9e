"""The reference executor: pymongo's in-process adapter served over the executor protocol.

``python -m harness.drivers.executor.pymongo_reference`` reads requests on stdin and answers on stdout
(docs/executor-protocol.md). It is a thin loop — decode, call the :class:`PyMongoScope`, encode — so a run
with ``--driver pymongo-executor`` differs from ``--driver pymongo`` only by the protocol, which is what
it is for: the protocol's own test, and an example for other languages' executors.
"""

from __future__ import annotations

import contextlib
import datetime
import itertools
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from bson import Binary, Code, DBRef, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp
from pymongo import errors as pymongo_errors

from harness.core.model import Operation
from harness.core.observations import CursorDocuments, DriverOperationError, NoChangeWithin
from harness.core.ports import DriverLacksFeature, NestedOperations, UnsupportedOperation
from harness.drivers.executor import codec
from harness.drivers.executor.process import PROTOCOL_VERSION, decode, encode_reply
from harness.drivers.pymongo.adapter import PyMongoAdapter, PyMongoScope
from harness.drivers.pymongo.apm import ScopeCommandLog
from harness.drivers.pymongo.operations import OPERATIONS

ADAPTER = PyMongoAdapter()


class InvalidRequest(Exception):
    """A request this executor cannot make sense of (``invalidRequest``)."""


class _NestedRecorder:
    """The hook ``withTransaction`` reports its nested operations to: kept for the reply, per attempt."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self.attempt = 0

    def started(self, index: int) -> None:
        if index == 0:
            self.attempt += 1

    def finished(self, index: int, result: Any, error: DriverOperationError | None) -> None:
        entry: dict[str, Any] = {"attempt": self.attempt, "index": index, "ok": error is None}
        if error is None:
            entry.update(_result_fields(result))
        else:
            entry["error"] = _driver_error(error)
        self.entries.append(entry)


class Executor:
    """The open scopes and one handler per protocol method."""

    def __init__(self) -> None:
        self.scopes: dict[str, PyMongoScope] = {}
        self.unnamed = itertools.count(1)

    def scope(self, params: dict[str, Any]) -> PyMongoScope:
        try:
            return self.scopes[params["scope"]]
        except KeyError:
            raise InvalidRequest(f"no open scope {params.get('scope')!r}") from None

    def hello(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "protocolVersion": PROTOCOL_VERSION,
            "driver": {"name": ADAPTER.name, "version": ADAPTER.version, "language": ADAPTER.language},
            "capabilities": sorted(ADAPTER.capabilities | {"command_log"}),
            "operations": sorted(OPERATIONS),
            "fastHeartbeatMS": ADAPTER.fast_heartbeat_ms,
            "minWireVersion": ADAPTER.min_wire_version,
            "iterationModes": list(ADAPTER.iteration_modes),
        }

    def open_scope(self, params: dict[str, Any]) -> None:
        if params["scope"] in self.scopes:
            raise InvalidRequest(f"scope {params['scope']!r} is already open (closeScope it first)")
        mode = params.get("iterationMode")  # absent or null: the first mode hello listed (section 5)
        if mode is not None and mode not in ADAPTER.iteration_modes:
            raise InvalidRequest(
                f"iterationMode {mode!r} is not one of the modes hello listed: {list(ADAPTER.iteration_modes)}"
            )
        scope = ADAPTER.open_scope(
            params["uri"],
            iteration_timeout_s=params["iterationTimeoutMS"] / 1000,
            fast_heartbeats=params.get("heartbeatFrequencyMS") is not None,
            iteration_mode=mode,
        )
        scope.command_log = ScopeCommandLog()  # section 6.4.2: every client of the scope is in it
        self.scopes[params["scope"]] = scope

    def close_scope(self, params: dict[str, Any]) -> None:
        scope = self.scopes.pop(params["scope"], None)
        if scope is not None:
            scope.close()

    def create_entity(self, params: dict[str, Any]) -> None:
        self.scope(params).create_entity(codec.entity_spec(params["entity"]))

    def run(self, params: dict[str, Any]) -> dict[str, Any]:
        scope = self.scope(params)
        operation = codec.operation_value(params["operation"])
        recorder = None
        if operation.name == "withTransaction" and isinstance(operation.arguments.get("callback"), list):
            recorder = _NestedRecorder()
            inner = tuple(codec.operation_value(document) for document in operation.arguments["callback"])
            operation.arguments["callback"] = NestedOperations(inner, recorder)
        try:
            with _budget(scope, operation, params.get("budgetMS")):
                result = scope.run(operation)
        except Exception as exc:
            if recorder is not None:
                raise _WithNested(exc, recorder.entries) from exc
            raise
        fields = _result_fields(result)
        if fields.get("resultKind") == "entity" or operation.save_result_as_entity:
            name = operation.save_result_as_entity or f"$result{next(self.unnamed)}"
            scope.set_entity(name, result)
            if fields.get("resultKind") == "entity":
                fields["entity"] = name
        if recorder is not None:
            fields["nested"] = recorder.entries
        return fields

    def set_entity(self, params: dict[str, Any]) -> None:
        scope = self.scope(params)
        scope.set_entity(params["id"], scope.entity(params["entity"]))

    def events(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        found = self.scope(params).events(params["client"], params.get("eventType", "command"))
        return [codec.event_document(event) for event in found]

    def command_log(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        """Section 6.4.2: the scope's command log from index ``from``."""
        log = self.scope(params).command_log
        assert log is not None  # every scope opened here has one
        start = params.get("from", 0)
        if isinstance(start, bool) or not isinstance(start, int) or not 0 <= start <= log.length():
            raise InvalidRequest(f"commandLog: 'from' must be an integer from 0 to {log.length()}, got {start!r}")
        return [{**codec.event_document(event), "client": client} for client, event in log.since(start)]

    def session_lsid(self, params: dict[str, Any]) -> Any:
        return self.scope(params).session_lsid(params["session"])

    def session_state(self, params: dict[str, Any]) -> Any:
        return self.scope(params).session_state(params["session"])

    def session_pinned_address(self, params: dict[str, Any]) -> Any:
        address = self.scope(params).session_pinned_address(params["session"])
        return None if address is None else {"host": address[0], "port": address[1]}

    def connections_checked_out(self, params: dict[str, Any]) -> int:
        return self.scope(params).connections_checked_out(params["client"])

    def log_messages(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        found = self.scope(params).log_messages(params["client"])
        return [{"level": m.level, "component": m.component, "data": m.data} for m in found]

    def echo(self, params: dict[str, Any]) -> Any:
        return params["value"]

    def close_all(self) -> None:
        for scope_id in list(self.scopes):
            self.close_scope({"scope": scope_id})


#: Protocol method -> handler; ``run`` returns the reply's fields, the others its ``result``.
METHODS: dict[str, Callable[[Executor, dict[str, Any]], Any]] = {
    "hello": Executor.hello,
    "openScope": Executor.open_scope,
    "closeScope": Executor.close_scope,
    "createEntity": Executor.create_entity,
    "run": Executor.run,
    "setEntity": Executor.set_entity,
    "events": Executor.events,
    "commandLog": Executor.command_log,
    "sessionLsid": Executor.session_lsid,
    "sessionState": Executor.session_state,
    "sessionPinnedAddress": Executor.session_pinned_address,
    "connectionsCheckedOut": Executor.connections_checked_out,
    "logMessages": Executor.log_messages,
    "echo": Executor.echo,
}


@contextlib.contextmanager
def _budget(scope: PyMongoScope, operation: Operation, budget_ms: Any) -> Iterator[None]:
    """Section 6.4.2: ``budgetMS`` replaces the scope's budget for one ``iterateUntilDocumentOrError``."""
    if operation.name != "iterateUntilDocumentOrError" or budget_ms is None:
        yield
        return
    if isinstance(budget_ms, bool) or not isinstance(budget_ms, int) or budget_ms <= 0:
        raise InvalidRequest(f"budgetMS must be a positive integer, got {budget_ms!r}")
    scope_budget, scope.iteration_timeout_s = scope.iteration_timeout_s, budget_ms / 1000
    try:
        yield
    finally:
        scope.iteration_timeout_s = scope_budget


class _WithNested(Exception):
    def __init__(self, error: Exception, entries: list[dict[str, Any]]) -> None:
        super().__init__(str(error))
        self.error = error
        self.entries = entries


def _result_fields(result: Any) -> dict[str, Any]:
    """``result`` and ``resultKind`` (section 3): data as it is, a driver object as an entity."""
    if isinstance(result, CursorDocuments):
        return {"result": list(result), "resultKind": "documents"}
    if not _is_data(result):
        return {"result": None, "resultKind": "entity"}
    return {"result": result}


#: What BSON can carry besides documents and arrays (a change stream or cursor is not data: never iterated here).
_SCALARS = (
    type(None),
    bool,
    int,
    float,
    str,
    bytes,
    datetime.datetime,
    uuid.UUID,
    ObjectId,
    Int64,
    Decimal128,
    Timestamp,
    Binary,
    Regex,
    Code,
    MinKey,
    MaxKey,
    DBRef,
)


def _is_data(value: Any) -> bool:
    if isinstance(value, _SCALARS):
        return True
    if isinstance(value, (list, tuple)):
        return all(_is_data(item) for item in value)
    if isinstance(value, Mapping):
        return all(_is_data(item) for item in value.values())
    return False


def _driver_error(error: DriverOperationError) -> dict[str, Any]:
    exception = error.info.exception
    network = isinstance(exception, pymongo_errors.ConnectionFailure) and not error.info.code
    document = codec.error_document(error.info, is_network_error=network)
    if isinstance(exception, pymongo_errors.BulkWriteError):
        _bulk_write_error(document, exception.details)
    return document


def _bulk_write_error(document: dict[str, Any], details: Mapping[str, Any]) -> None:
    """Section 7's bulk write error: pymongo's own ``code`` is 65 (its "several errors"), never the server's; the
    protocol's is the first write error's, else the first write concern error's (whose name the server sends)."""
    written = details.get("writeErrors") or []
    concerns = details.get("writeConcernErrors") or []
    first = written[0] if written else concerns[0] if concerns else {}
    document["code"] = first.get("code")
    document["codeName"] = first.get("codeName")
    if concerns:
        document["errorResponse"] = {**details, "writeConcernError": concerns[0]}


def _error(exc: BaseException) -> dict[str, Any]:
    """An exception as the reply's ``error`` (section 7)."""
    if isinstance(exc, _WithNested):
        return _error(exc.error)
    if isinstance(exc, DriverOperationError):
        return _driver_error(exc)
    if isinstance(exc, DriverLacksFeature):
        return {"kind": "notImplemented", "message": str(exc)}
    if isinstance(exc, NoChangeWithin):
        return {"kind": "noChange", "message": str(exc)}
    if isinstance(exc, (UnsupportedOperation, InvalidRequest, KeyError)):
        return {"kind": "invalidRequest", "message": f"{type(exc).__name__}: {exc}"}
    return {"kind": "internal", "message": f"{type(exc).__name__}: {exc}"}


def answer(executor: Executor, request: dict[str, Any]) -> dict[str, Any]:
    handler = METHODS.get(request.get("method", ""))
    try:
        if handler is None:
            raise DriverLacksFeature(f"unknown method {request.get('method')!r}")
        value = handler(executor, request.get("params") or {})
        fields = value if request["method"] == "run" else {"result": value}
        return {"id": request.get("id"), "ok": True, **fields}
    except Exception as exc:
        reply = {"id": request.get("id"), "ok": False, "error": _error(exc)}
        if isinstance(exc, _WithNested):
            reply["nested"] = exc.entries
        return reply


def read_request(line: str) -> dict[str, Any] | None:
    """A request line as a dict, or None for a line with no request id to answer (section 1: no reply, a log)."""
    if not line.strip():
        return None
    try:
        request = decode(line)
    except ValueError as exc:
        print(f"pymongo_reference: not a JSON line: {exc}", file=sys.stderr)
        return None
    request_id = request.get("id") if isinstance(request, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, int):
        print(f"pymongo_reference: not a request (no integer id): {line.strip()[:200]}", file=sys.stderr)
        return None
    return request


def reply_line(request: dict[str, Any], reply: dict[str, Any]) -> str:
    """The reply as its line (section 2); a result that cannot be encoded becomes an ``internal`` error."""
    try:
        return encode_reply(reply, request.get("method"))
    except (TypeError, ValueError) as exc:
        error = {"kind": "internal", "message": f"unencodable: {exc}"}
        return encode_reply({"id": reply["id"], "ok": False, "error": error}, None)


def main() -> int:
    executor = Executor()
    out = sys.stdout
    sys.stdout = sys.stderr  # stdout carries the protocol only: a stray print goes to stderr
    for line in sys.stdin:
        request = read_request(line)
        if request is None:
            continue
        out.write(reply_line(request, answer(executor, request)))
        out.flush()
    executor.close_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
