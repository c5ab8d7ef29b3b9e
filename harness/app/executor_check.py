"""``harness executor-check CMD``: tells an executor's author which parts of the protocol it gets wrong.

Each check sends a few messages (docs/executor-protocol.md) and prints ``ok`` or what was wrong with which
message. A protocol fault (a crash, a hang, a line that is not JSON, a wrong id) ends the checks that need
the process; the rest are reported as not run. The checks that need a server run on ``--uri`` when given,
otherwise on a ``--target`` the harness starts itself (the run-options row ``harness run`` takes; default the
embedded server), so an author needs no deployment of their own.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bson import Binary, Decimal128, Int64, ObjectId, Timestamp, json_util
from pymongo import MongoClient
from pymongo.errors import PyMongoError

from harness.core.ports import TargetUnavailable
from harness.drivers.executor.adapter import hello_problems
from harness.drivers.executor.process import HELLO_TIMEOUT_S, PROTOCOL_VERSION, ExecutorFailure, ExecutorProcess
from harness.shared.connection_strings import redact_text

REQUEST_TIMEOUT_S = 20.0

#: Values whose types must survive the Extended JSON round trip (section 2), key order included.
ROUND_TRIP = {
    "int32": 7,
    "int64": Int64(2**40),
    "smallInt64": Int64(1),
    "double": 1.5,
    "decimal": Decimal128("1.10"),
    "timestamp": Timestamp(1700000000, 3),
    "token": Binary(b"\x00\x01resume", 0),
    "uuid": Binary(b"0123456789abcdef", 4),
    "oid": ObjectId("0123456789abcdef01234567"),
    "nested": {"z": 1, "a": [Int64(5), {"$": None}]},
}


@dataclass
class Check:
    process: ExecutorProcess
    uri: str | None
    problems: list[str] = field(default_factory=list)
    #: The executor's ``hello`` result (plain JSON), for the checks that depend on what it declared.
    hello: dict[str, Any] = field(default_factory=dict)

    def request(self, method: str, **params: Any) -> dict[str, Any]:
        reply = self.process.request(method, params, REQUEST_TIMEOUT_S)
        self.plain_envelope(method)
        stray = self.process.unexpected_output(0.05)
        if stray:
            self.problems.append(f"{method}: stdout carried lines that are not replies: {stray[:3]!r}")
        return reply

    def plain_envelope(self, method: str) -> None:
        """The reply's ``id`` and ``ok`` are plain JSON (section 2), not ``{"$numberInt": ...}``."""
        envelope = json.loads(self.process.last_line)
        request_id, ok = envelope.get("id"), envelope.get("ok")
        if isinstance(request_id, bool) or not isinstance(request_id, int) or not isinstance(ok, bool):
            self.problems.append(
                f"{method}: the reply's id and ok must be a plain JSON integer and boolean (section 2), "
                f"got id {json.dumps(request_id)}, ok {json.dumps(ok)}"
            )

    def expect_ok(self, method: str, **params: Any) -> Any:
        reply = self.request(method, **params)
        if not reply["ok"]:
            self.problems.append(f"{method}: expected success, got error {reply['error']!r}")
        return reply.get("result")


def check_hello(check: Check) -> None:
    reply = check.process.request("hello", {"protocolVersion": PROTOCOL_VERSION}, HELLO_TIMEOUT_S)
    check.plain_envelope("hello")
    if not reply["ok"]:
        check.problems.append(f"hello: error reply {reply['error']!r}")
        return
    check.problems.extend(f"hello: {problem}" for problem in hello_problems(reply["result"]))
    plain = json.loads(check.process.last_line).get("result") or {}
    check.hello = plain if isinstance(plain, dict) else {}
    fast = plain.get("fastHeartbeatMS")
    if fast is not None and (isinstance(fast, bool) or not isinstance(fast, int) or fast <= 0):
        check.problems.append(
            f"hello: fastHeartbeatMS must be null or a positive integer (section 4), got {json.dumps(fast)}"
        )
    for key in ("protocolVersion", "fastHeartbeatMS", "minWireVersion"):
        if isinstance(plain.get(key), dict):
            check.problems.append(
                f"hello: {key} must be a plain JSON number (hello is plain JSON), got {json.dumps(plain[key])}"
            )


def check_round_trip(check: Check) -> None:
    echoed = check.expect_ok("echo", value=ROUND_TRIP)
    if not isinstance(echoed, dict):
        check.problems.append(f"echo: expected the document back, got {echoed!r}")
        return
    if list(echoed) != list(ROUND_TRIP):
        check.problems.append(f"echo: key order changed: {list(echoed)}")
    for key, sent in ROUND_TRIP.items():
        got = echoed.get(key)
        if _typed(got) != _typed(sent):
            check.problems.append(
                f"echo: {key} came back as {type(got).__name__} {got!r}, sent {type(sent).__name__} {sent!r}"
            )


def _typed(value: Any) -> tuple[str, Any, int | None]:
    """A value with its BSON type; Python decodes binary subtype 0 as ``bytes``, the same BSON value."""
    if isinstance(value, bytes) and not isinstance(value, Binary):
        return ("Binary", bytes(value), 0)
    if isinstance(value, Binary):
        return ("Binary", bytes(value), value.subtype)
    return (type(value).__name__, value, None)


#: Lines that are not requests (section 1): no integer id to answer, so nothing may appear on stdout.
NOT_REQUESTS = (
    "{not json",
    "[1, 2]",
    '{"method": "echo", "params": {"value": 1}}',
    '{"id": 1.5, "method": "echo", "params": {"value": 1}}',
)


def check_errors(check: Check) -> None:
    reply = check.request("noSuchMethod")
    if reply["ok"] or reply["error"].get("kind") != "notImplemented":
        check.problems.append(f"noSuchMethod: expected an error of kind notImplemented, got {reply!r}")
    for line in NOT_REQUESTS:
        check.process.send_line(line)
    stray = check.process.unexpected_output(0.5)
    if stray:
        check.problems.append(
            f"lines that are not requests ({', '.join(NOT_REQUESTS)}) must get no reply on stdout (log them to "
            f"stderr), got {stray[:3]!r}"
        )
        return
    if check.expect_ok("echo", value="still there") != "still there":
        check.problems.append("echo after lines that are not requests: the executor must keep reading requests")
    reply = check.request("run", scope="no-such-scope", operation={"name": "find", "object": "x", "arguments": {}})
    if reply["ok"] or reply["error"].get("kind") != "invalidRequest":
        check.problems.append(f"run on an unknown scope: expected an error of kind invalidRequest, got {reply!r}")


def check_with_server(check: Check) -> None:
    """A scope on the server: results, a driver error's shape, events in order, an unknown operation."""
    assert check.uri is not None
    scope = {"scope": "check"}
    check.expect_ok("openScope", uri=check.uri, iterationTimeoutMS=5000, heartbeatFrequencyMS=None, **scope)
    observe = ["commandStartedEvent", "commandSucceededEvent", "commandFailedEvent"]
    entities = [
        {"client": {"id": "client", "observeEvents": observe}},
        {"database": {"id": "db", "client": "client", "databaseName": "executor_check"}},
        {"collection": {"id": "coll", "database": "db", "collectionName": "c"}},
    ]
    for entity in entities:
        check.expect_ok("createEntity", entity=entity, **scope)
    check.expect_ok("run", operation={"name": "deleteMany", "object": "coll", "arguments": {"filter": {}}}, **scope)
    document = {"_id": Int64(1)}
    run = {"name": "insertOne", "object": "coll", "arguments": {"document": document}}
    inserted = check.expect_ok("run", operation=run, **scope)
    if inserted != {"insertedId": Int64(1)} or not isinstance((inserted or {}).get("insertedId"), Int64):
        check.problems.append(f"run insertOne: expected {{'insertedId': Int64(1)}}, got {inserted!r}")
    duplicate = check.request("run", operation=run, **scope)
    _check_driver_error(check, duplicate)
    # batchSize arrives as {"$numberInt": "5"}: an option, which the executor passes as its language's number (2.1)
    find = {"name": "find", "object": "coll", "arguments": {"filter": {}, "batchSize": 5}}
    found = check.request("run", operation=find, **scope)
    if found.get("resultKind") != "documents" or found.get("result") != [document]:
        check.problems.append(f"run find (batchSize 5): expected resultKind documents and [{document}], got {found!r}")
    bad_find = {"name": "find", "object": "coll", "arguments": {"filter": {"$noSuchOperator": 1}}}
    failed = check.request("run", operation=bad_find, **scope)
    if failed["ok"] or failed["error"].get("kind") != "driverError" or failed["error"].get("code") != 2:
        check.problems.append(f"run find {{$noSuchOperator}}: expected a driverError with code 2, got {failed!r}")
    reply = check.request("run", operation={"name": "noSuchOperation", "object": "coll", "arguments": {}}, **scope)
    if reply["ok"] or reply["error"].get("kind") != "notImplemented":
        check.problems.append(f"run noSuchOperation: expected an error of kind notImplemented, got {reply!r}")
    _check_events(check, check.expect_ok("events", client="client", eventType="command", **scope))
    check.expect_ok("closeScope", **scope)


def _check_driver_error(check: Check, reply: dict[str, Any]) -> None:
    error = reply.get("error") or {}
    if reply["ok"] or error.get("kind") != "driverError":
        check.problems.append(f"run insertOne (duplicate _id): expected a driverError, got {reply!r}")
        return
    expected = {"code": 11000, "isClientError": False, "isNetworkError": False, "isTimeoutError": False}
    for key, value in expected.items():
        if error.get(key) != value:
            check.problems.append(f"driverError: {key} should be {value!r}, got {error.get(key)!r}")
    for key, kind in (("message", str), ("type", str), ("errorLabels", list)):
        if not isinstance(error.get(key), kind):
            check.problems.append(f"driverError: {key} must be a {kind.__name__}, got {error.get(key)!r}")
    if "codeName" not in error:
        check.problems.append("driverError: codeName is missing (null when the server gave none)")


def _check_events(check: Check, events: Any) -> None:
    """deleteMany, insertOne, insertOne (failed), find: started and succeeded/failed pairs, in that order."""
    if not isinstance(events, list):
        check.problems.append(f"events: expected an array, got {events!r}")
        return
    names = [(e.get("kind"), e.get("commandName")) for e in events if isinstance(e, dict)]
    want = [
        ("commandStartedEvent", "delete"),
        ("commandSucceededEvent", "delete"),
        ("commandStartedEvent", "insert"),
        ("commandSucceededEvent", "insert"),
        ("commandStartedEvent", "insert"),
        ("commandSucceededEvent", "insert"),  # a write error is an ok: 1 reply with writeErrors
        ("commandStartedEvent", "find"),
        ("commandSucceededEvent", "find"),
        ("commandStartedEvent", "find"),
        ("commandFailedEvent", "find"),  # the server answered ok: 0 (BadValue)
    ]
    missing = [f"{kind}({name})" for kind, name in _left_over(want, names)]
    if missing:
        check.problems.append(f"events: missing {', '.join(missing)} (every observed event, in order)")
    extra = [f"{kind}({name})" for kind, name in _left_over(names, want)]
    if extra:
        check.problems.append(f"events: unexpected {', '.join(extra)}")
    if not missing and not extra and names != want:
        check.problems.append(f"events: out of order: expected {want}, got {names}")
    for event in events:
        kind = event.get("kind")
        needed = {"commandStartedEvent": ("command", "databaseName", "requestId")}.get(kind, ("durationMS",))
        if kind == "commandSucceededEvent":
            needed = ("reply", "durationMS", "requestId")
        if kind == "commandFailedEvent":
            needed = ("failure", "durationMS", "requestId")
            _check_failure(check, event.get("failure"))
        missing = [key for key in needed if key not in event]
        if missing:
            check.problems.append(f"events: {kind}({event.get('commandName')}) lacks {missing}")


def _check_failure(check: Check, failure: Any) -> None:
    """A server's error: ``failure`` is the server's reply document, with its integer code (section 6.6)."""
    if not isinstance(failure, dict) or not isinstance(failure.get("code"), int) or "errmsg" not in failure:
        check.problems.append(
            "events: commandFailedEvent(find) failure must be the server's reply document (ok, errmsg, code, "
            f"codeName), got {_wire(failure)}"
        )


def _left_over(wanted: list[Any], got: list[Any]) -> list[Any]:
    """What of ``wanted`` is not in ``got``, counting repeats (a multiset difference, in ``wanted``'s order)."""
    remaining = list(got)
    left = []
    for item in wanted:
        if item in remaining:
            remaining.remove(item)
        else:
            left.append(item)
    return left


def check_change_stream(check: Check) -> None:
    """A change stream: an entity reply, the insert it sees with its binary-bearing resume token intact."""
    assert check.uri is not None
    scope = {"scope": "stream"}
    check.expect_ok("openScope", uri=check.uri, iterationTimeoutMS=5000, heartbeatFrequencyMS=None, **scope)
    for entity in (
        {"client": {"id": "client", "observeEvents": ["commandStartedEvent"]}},
        {"database": {"id": "db", "client": "client", "databaseName": "executor_check"}},
        {"collection": {"id": "coll", "database": "db", "collectionName": "stream"}},
    ):
        check.expect_ok("createEntity", entity=entity, **scope)
    check.expect_ok("run", operation={"name": "deleteMany", "object": "coll", "arguments": {"filter": {}}}, **scope)
    create = {"name": "createChangeStream", "object": "coll", "arguments": {"pipeline": []}}
    reply = check.request("run", operation={**create, "saveResultAsEntity": "stream"}, **scope)
    if not reply["ok"] or reply.get("resultKind") != "entity":
        check.problems.append(f"run createChangeStream: expected resultKind entity, got {reply!r}")
        return
    started = check.expect_ok("events", client="client", eventType="command", **scope) or []
    if "aggregate" not in [event.get("commandName") for event in started if isinstance(event, dict)]:
        check.problems.append(
            "run createChangeStream: replied before its driver sent the aggregate (section 6.4: the stream is "
            "opened by createChangeStream, not lazily at the first iteration)"
        )
        check.expect_ok("closeScope", **scope)
        return
    document = {"_id": Int64(2), "at": Timestamp(1700000000, 1), "price": Decimal128("9.99")}
    insert = {"name": "insertOne", "object": "coll", "arguments": {"document": document}}
    check.expect_ok("run", operation=insert, **scope)
    iterate = {"name": "iterateUntilDocumentOrError", "object": "stream", "arguments": {}}
    change = check.expect_ok("run", operation=iterate, **scope)
    if not isinstance(change, dict):
        check.problems.append(f"run iterateUntilDocumentOrError: expected the change document, got {change!r}")
    else:
        expected = {"operationType": "insert", "documentKey": {"_id": Int64(2)}, "fullDocument": document}
        for key, value in expected.items():
            if _typed_tree(change.get(key)) != _typed_tree(value):
                check.problems.append(f"change event: {key} should be {_wire(value)}, got {_wire(change.get(key))}")
        if not isinstance(change.get("_id"), dict):
            check.problems.append(f"change event: _id (the resume token) must be a document, got {change.get('_id')!r}")
    check.expect_ok("run", operation={"name": "close", "object": "stream", "arguments": {}}, **scope)
    check.expect_ok("closeScope", **scope)


def _wire(value: Any) -> str:
    """A value as canonical Extended JSON, the way it crosses the pipe (so an Int64 and an int look different)."""
    return json_util.dumps(value, json_options=json_util.CANONICAL_JSON_OPTIONS)


def _typed_tree(value: Any) -> Any:
    """A value with every leaf's BSON type, so ``Int64(2)`` and ``2`` differ as they do on the wire."""
    if isinstance(value, dict):
        return [(key, _typed_tree(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [_typed_tree(item) for item in value]
    return _typed(value)


def _open_scope(check: Check, scope: str, budget_ms: int, *entities: dict[str, Any], heartbeat: Any = None) -> bool:
    """``openScope`` on the server and its entities; False (with the problem said) when any of them failed."""
    assert check.uri is not None
    before = len(check.problems)
    check.expect_ok(
        "openScope", scope=scope, uri=check.uri, iterationTimeoutMS=budget_ms, heartbeatFrequencyMS=heartbeat
    )
    for entity in entities:
        check.expect_ok("createEntity", scope=scope, entity=entity)
    return len(check.problems) == before


def _client_and_collection(collection: str, **client: Any) -> tuple[dict[str, Any], ...]:
    return (
        {"client": {"id": "client", "observeEvents": ["commandStartedEvent"], **client}},
        {"database": {"id": "db", "client": "client", "databaseName": "executor_check"}},
        {"collection": {"id": "coll", "database": "db", "collectionName": collection}},
    )


def _command_names(check: Check, scope: str) -> list[str]:
    """The names of the commands the scope's ``client`` has started so far, in order."""
    events = check.expect_ok("events", scope=scope, client="client", eventType="command")
    return [event.get("commandName") for event in events or [] if isinstance(event, dict)]


def _run(check: Check, scope: str, name: str, obj: str, **arguments: Any) -> dict[str, Any]:
    return check.request("run", scope=scope, operation={"name": name, "object": obj, "arguments": arguments})


def check_scopes(check: Check) -> None:
    """Section 5: a scope opened with the executor's own fastHeartbeatMS works, and an open scope's id is not reused;
    section 6.1: an unknown URI option is refused, never silently dropped."""
    scope = "scopes"
    fast = check.hello.get("fastHeartbeatMS")
    if not _open_scope(check, scope, 5000, *_client_and_collection("scopes"), heartbeat=fast):
        check.problems.append(
            f"openScope with heartbeatFrequencyMS {json.dumps(fast)} (hello's fastHeartbeatMS) and a "
            "client: expected both to succeed (section 5)"
        )
        check.expect_ok("closeScope", scope=scope)
        return
    again = check.request("openScope", scope=scope, uri=check.uri, iterationTimeoutMS=5000, heartbeatFrequencyMS=None)
    if again["ok"] or again["error"].get("kind") != "invalidRequest":
        check.problems.append(
            f"openScope with the id of an open scope: expected invalidRequest (section 5), got {again!r}"
        )
    counted = _run(check, scope, "countDocuments", "coll", filter={})
    if not counted["ok"]:
        check.problems.append(
            "countDocuments after a second openScope of the same id: the open scope must be left as it was, "
            f"got {counted!r}"
        )
    unknown = {"client": {"id": "unknownOption", "uriOptions": {"notAUriOption": 1}}}
    reply = check.request("createEntity", scope=scope, entity=unknown)
    error = reply.get("error") or {}
    refused = error.get("kind") == "notImplemented" or (
        error.get("kind") == "driverError" and error.get("isClientError") is True
    )
    if reply["ok"] or not refused:
        check.problems.append(
            "createEntity with uriOptions {notAUriOption: 1}: expected notImplemented or a driverError with "
            f"isClientError true, never a client that drops the option (section 6.1), got {reply!r}"
        )
    check.expect_ok("closeScope", scope=scope)


def check_cursor_reading(check: Check) -> None:
    """Section 3, ``documents``: a cursor is read to its end, through the getMores it takes."""
    scope = "cursor"
    if _open_scope(check, scope, 5000, *_client_and_collection("cursor")):
        _run(check, scope, "deleteMany", "coll", filter={})
        documents = [{"_id": Int64(n)} for n in (1, 2, 3)]
        _run(check, scope, "insertMany", "coll", documents=documents)
        start = len(_command_names(check, scope))
        found = _run(check, scope, "find", "coll", filter={}, sort={"_id": 1}, batchSize=1)
        if found.get("resultKind") != "documents" or _typed_tree(found.get("result")) != _typed_tree(documents):
            check.problems.append(
                f"run find (batchSize 1, three documents): expected resultKind documents and {_wire(documents)}, "
                f"got {found!r}"
            )
        names = _command_names(check, scope)[start:]
        if names[:1] != ["find"] or names[1:].count("getMore") < 2:
            check.problems.append(
                "run find (batchSize 1, three documents): expected find then a getMore per further batch (section "
                f"3: a cursor is read until the server closes it), the client sent {names}"
            )
    check.expect_ok("closeScope", scope=scope)


def check_bulk_write_error(check: Check) -> None:
    """Section 7: a write error's ``code`` is the first write error's, ``errorResponse.writeErrors`` the server's."""
    scope = "bulk"
    if _open_scope(check, scope, 5000, *_client_and_collection("bulk")):
        _run(check, scope, "deleteMany", "coll", filter={})
        reply = _run(check, scope, "insertMany", "coll", documents=[{"_id": 1}, {"_id": 1}])
        error = reply.get("error") or {}
        response = error.get("errorResponse")
        written = response.get("writeErrors") if isinstance(response, dict) else None
        if reply["ok"] or error.get("kind") != "driverError" or error.get("code") != 11000:
            check.problems.append(
                f"run insertMany (a duplicate _id at index 1): expected a driverError with code 11000, got {reply!r}"
            )
        elif not isinstance(written, list) or len(written) != 1 or not isinstance(written[0], dict):
            check.problems.append(
                "run insertMany (a duplicate _id at index 1): errorResponse.writeErrors must be the server's "
                f"writeErrors array, one entry, got errorResponse {_wire(response)}"
            )
        elif written[0].get("index") != 1 or written[0].get("code") != 11000:
            check.problems.append(
                "run insertMany (a duplicate _id at index 1): expected writeErrors [{index: 1, code: 11000, ...}], "
                f"got {_wire(written)}"
            )
    check.expect_ok("closeScope", scope=scope)


#: The application name the close check's fail point is limited to, so only the executor's client is hit.
CLOSE_APP_NAME = "executorCheckClose"


def check_stream_iteration(check: Check) -> None:
    """Section 6.4: ``iterateOnce`` reaches the server, the budget leaves the stream usable, ``close`` swallows a
    failed killCursors."""
    scope = "iteration"
    entities = _client_and_collection("iteration", uriOptions={"appName": CLOSE_APP_NAME})
    if _open_scope(check, scope, 1000, *entities):
        _run(check, scope, "deleteMany", "coll", filter={})
        start = len(_command_names(check, scope))
        create = {"name": "createChangeStream", "object": "coll", "arguments": {"pipeline": []}}
        opened = check.request("run", scope=scope, operation={**create, "saveResultAsEntity": "stream"})
        if opened["ok"]:
            _iterate_once(check, scope, start)
            _budget(check, scope)
            _close_with_failing_kill_cursors(check, scope)
        else:
            check.problems.append(f"run createChangeStream: expected the stream, got {opened!r}")
    check.expect_ok("closeScope", scope=scope)


def _iterate_once(check: Check, scope: str, start: int) -> None:
    once = _run(check, scope, "iterateOnce", "stream")
    names = _command_names(check, scope)[start:]
    if not once["ok"] or once.get("result") is not None or names != ["aggregate", "getMore"]:
        check.problems.append(
            "run iterateOnce on a new stream over an empty collection: expected null after exactly aggregate, "
            f"getMore (section 6.4: an empty first batch is not an answer), got {once!r} after {names}"
        )


def _budget(check: Check, scope: str) -> None:
    idle = _run(check, scope, "iterateUntilDocumentOrError", "stream")
    if idle["ok"] or idle["error"].get("kind") != "noChange":
        check.problems.append(
            f"run iterateUntilDocumentOrError on an idle stream (budget 1 s): expected noChange, got {idle!r}"
        )
    _run(check, scope, "insertOne", "coll", document={"_id": Int64(7)})
    change = _run(check, scope, "iterateUntilDocumentOrError", "stream")
    key = (change.get("result") or {}).get("documentKey") if change["ok"] else None
    if _typed_tree(key) != _typed_tree({"_id": Int64(7)}):
        check.problems.append(
            "run iterateUntilDocumentOrError after a noChange and an insert: expected the insert (section 6.4: a "
            f"stream that ran out of budget stays usable), got {change!r}"
        )


def _close_with_failing_kill_cursors(check: Check, scope: str) -> None:
    fail_point = {
        "configureFailPoint": "failCommand",
        "mode": {"times": 1},
        "data": {"failCommands": ["killCursors"], "errorCode": 2, "appName": CLOSE_APP_NAME},
    }
    with _server_client(check) as server:
        try:
            server.admin.command(fail_point)
        except PyMongoError as exc:
            check.problems.append(f"cannot arm a failCommand fail point (are test commands enabled?): {exc}")
            return
        try:
            closed = _run(check, scope, "close", "stream")
        finally:
            server.admin.command({"configureFailPoint": "failCommand", "mode": "off"})
    names = _command_names(check, scope)
    if not closed["ok"] or closed.get("result") is not None:
        check.problems.append(
            "run close with killCursors failing (fail point, errorCode 2): expected null, the error swallowed "
            f"(section 6.4), got {closed!r}"
        )
    elif names[-1:] != ["killCursors"]:
        check.problems.append(f"run close on an open stream: expected the driver to send killCursors, it sent {names}")


#: An argument no operation of the unified format has: every executor must refuse it, never drop it (section 6.2).
UNKNOWN_ARGUMENT = "notAnArgument"


def check_unknown_arguments(check: Check) -> None:
    """Section 6.2: an argument the executor cannot pass to its driver is refused with ``notImplemented`` naming it,
    before anything is sent; an operation that takes no arguments (a stream's ``iterateOnce``) refuses one too."""
    scope = "arguments"
    if _open_scope(check, scope, 1000, *_client_and_collection("arguments")):
        create = {"name": "createChangeStream", "object": "coll", "arguments": {"pipeline": []}}
        opened = check.request("run", scope=scope, operation={**create, "saveResultAsEntity": "stream"})
        _refuses_unknown_argument(check, scope, "find", "coll", filter={})
        if opened["ok"]:
            _refuses_unknown_argument(check, scope, "iterateOnce", "stream")
        else:
            check.problems.append(f"run createChangeStream: expected the stream, got {opened!r}")
    check.expect_ok("closeScope", scope=scope)


def _refuses_unknown_argument(check: Check, scope: str, name: str, obj: str, **arguments: Any) -> None:
    sent = len(_command_names(check, scope))
    reply = _run(check, scope, name, obj, **arguments, **{UNKNOWN_ARGUMENT: 1})
    commands = _command_names(check, scope)[sent:]
    error = reply.get("error") or {}
    refused = error.get("kind") == "notImplemented" and UNKNOWN_ARGUMENT in str(error.get("message"))
    if reply["ok"] or not refused or commands:
        check.problems.append(
            f"run {name} with an argument {UNKNOWN_ARGUMENT}: expected notImplemented naming it and no command sent "
            f"(section 6.2: an argument the executor cannot pass is refused, never dropped), got {reply!r} after "
            f"{commands}"
        )


def _server_client(check: Check) -> MongoClient[dict[str, Any]]:
    """The check's own pymongo client on the server, for what a test runner does beside the driver under test."""
    assert check.uri is not None
    return MongoClient(check.uri, serverSelectionTimeoutMS=int(REQUEST_TIMEOUT_S * 1000))


#: The budget of the scope whose stream the server closes: an answer in less than half of it is "at once".
CLOSED_STREAM_BUDGET_S = 8.0


def check_closed_stream(check: Check) -> None:
    """Section 6.4: after an invalidate the server has closed the stream; iterating it answers at once."""
    scope, budget_s = "invalidate", CLOSED_STREAM_BUDGET_S
    with _server_client(check) as server:
        server.executor_check.drop_collection("invalidate")
        if _open_scope(check, scope, int(budget_s * 1000), *_client_and_collection("invalidate")):
            create = {"name": "createChangeStream", "object": "coll", "arguments": {"pipeline": []}}
            if check.request("run", scope=scope, operation={**create, "saveResultAsEntity": "stream"})["ok"]:
                server.executor_check.invalidate.insert_one({"_id": 1})
                server.executor_check.drop_collection("invalidate")
                if _read_to_invalidate(check, scope):
                    _closed_answers_at_once(check, scope, budget_s)
    check.expect_ok("closeScope", scope=scope)


def _read_to_invalidate(check: Check, scope: str) -> bool:
    seen = []
    for _ in range(3):
        change = _run(check, scope, "iterateUntilDocumentOrError", "stream")
        seen.append((change.get("result") or {}).get("operationType") if change["ok"] else change["error"])
        if seen[-1] == "invalidate" or not change["ok"]:
            break
    if seen[-1] != "invalidate":
        check.problems.append(f"a stream on a dropped collection: expected insert, drop, invalidate, got {seen}")
        return False
    return True


def _closed_answers_at_once(check: Check, scope: str, budget_s: float) -> None:
    started = time.monotonic()
    after = _run(check, scope, "iterateUntilDocumentOrError", "stream")
    waited = time.monotonic() - started
    kind = None if after["ok"] else after["error"].get("kind")
    if kind not in ("noChange", "driverError") or waited >= budget_s / 2:
        check.problems.append(
            "run iterateUntilDocumentOrError after invalidate (the server closed the cursor): expected "
            f"noChange or a driverError at once (section 6.4), got {after!r} after {waited:.1f} s of a "
            f"{budget_s:.0f} s budget"
        )


def check_iteration_modes(check: Check) -> None:
    """Section 6.4.1: each mode ``hello`` declares, driven for real (:mod:`harness.app.executor_check_modes`)."""
    from harness.app.executor_check_modes import check_iteration_modes as check_each_mode

    check_each_mode(check)


def check_command_log(check: Check) -> None:
    """Section 6.4.2, when ``hello`` lists ``command_log`` (:mod:`harness.app.executor_check_log`)."""
    from harness.app.executor_check_log import check_command_log as check_log

    check_log(check)


def check_eof(check: Check) -> None:
    status = check.process.finish()
    if status != 0:
        what = "did not exit within 5 s" if status is None else f"exited with status {status}"
        check.problems.append(f"EOF on stdin: the executor {what} (it must finish and exit 0)")


#: The checks, in order: each name, what it sends, and whether it needs a server.
CHECKS: list[tuple[str, Callable[[Check], None], bool]] = [
    ("handshake (hello)", check_hello, False),
    ("Extended JSON round trip (echo)", check_round_trip, False),
    ("error replies", check_errors, False),
    ("a scope on the server", check_with_server, True),
    ("a change stream on the server", check_change_stream, True),
    ("scope ids, heartbeats and URI options", check_scopes, True),
    ("reading a cursor to its end", check_cursor_reading, True),
    ("a bulk write error", check_bulk_write_error, True),
    ("iterateOnce, the iteration budget and close", check_stream_iteration, True),
    ("an argument the executor cannot pass", check_unknown_arguments, True),
    ("a stream the server closed", check_closed_stream, True),
    ("iteration modes", check_iteration_modes, True),
    ("the command log and budget slices (if declared)", check_command_log, True),
    ("EOF handling", check_eof, False),
]


def run_checks(command: str | list[str], uri: str | None, out: Callable[[str], None] = print) -> int:
    """Run every check against a new process; 0 when all pass."""
    try:
        process = ExecutorProcess(command)
    except ExecutorFailure as exc:
        out(f"FAIL start: {exc}")
        return 1
    check = Check(process, uri)
    failed = 0
    broken: str | None = None
    for name, run, needs_server in CHECKS:
        if broken is not None:
            out(f"NOT RUN {name}: the executor broke earlier")
            failed += 1
            continue
        if needs_server and uri is None:
            out(f"SKIP {name}: no server")
            continue
        check.problems = []
        try:
            run(check)
        except ExecutorFailure as exc:
            check.problems.append(str(exc))
            broken = str(exc)
        if check.problems:
            failed += 1
            out(f"FAIL {name}")
            for problem in check.problems:
                out(f"  - {problem}")
        else:
            out(f"ok   {name}")
    if process.failure is None:
        process.kill()
    out(f"{len(CHECKS)} checks, {failed} failed")
    return 1 if failed else 0


def run_checks_on_target(command: str | list[str], target_spec: str, out: Callable[[str], None] = print) -> int:
    """Start ``--target NAME[=ARG]`` from the plug-in table (as ``harness run`` does), run every check on it, stop it;
    2 when the target cannot start."""
    from harness.app import compose

    try:
        target = compose.plugins().make_target(target_spec)
        target.start()
    except TargetUnavailable as exc:
        out(f"FAIL start the target {redact_text(target_spec)!r}: {redact_text(str(exc))}")
        return 2
    try:
        out(f"target {redact_text(target_spec)}: {redact_text(target.uri)}")
        return run_checks(command, target.uri, out)
    finally:
        target.stop()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.app.options import add_cli_options

    parser.add_argument(
        "executor", nargs="?", help="the executor's command line (one argument; split as a shell would)"
    )
    from harness.app.catalogue import executor_help
    from harness.app.compose import plugins

    parser.add_argument("--driver", help=executor_help(plugins()))
    add_cli_options(parser, only=("target", "allow_destructive"))
    parser.add_argument(
        "--uri",
        help="a running MongoDB deployment for the checks that need a server, instead of starting --target (the "
        "checks write to its executor_check database: a deployment off the loopback interface needs "
        "--allow-destructive)",
    )


def _executor_of(args: argparse.Namespace) -> str | list[str]:
    """The command line to check: given, or the one ``--driver`` names (refused with the reason, exit 2)."""
    from harness.app.catalogue import executor_names
    from harness.app.compose import plugins
    from harness.core.ports import DriverUnavailable

    if (args.executor is None) == (args.driver is None):
        raise _Refused("give the executor's command line or --driver NAME (one of them)")
    if args.executor is not None:
        if args.executor in plugins().drivers:  # `harness executor-check node` would start Node's REPL
            raise _Refused(f"{args.executor!r} is a driver's name: give --driver {args.executor}")
        return str(args.executor)
    try:
        command = plugins().executor_command(args.driver)
    except DriverUnavailable as exc:
        raise _Refused(str(exc)) from None
    if command is None:
        known = executor_names(plugins())
        in_process = [name for name in sorted(plugins().drivers) if name not in known]
        raise _Refused(
            f"--driver {args.driver}: names no driver in an executor (executors: {', '.join(known)}; "
            f"{', '.join(in_process)} run in the harness's process)"
        )
    return command


class _Refused(Exception):
    """executor-check cannot start: the message says why."""


def command_executor_check(args: argparse.Namespace) -> int:
    try:
        executor = _executor_of(args)
    except _Refused as exc:
        print(f"harness executor-check: {exc}")
        return 2
    if args.uri:
        from harness.core.ports import TargetUnavailable
        from harness.targets.safety import check_destructive
        from harness.targets.uri_target import discovers_members, probe_members

        try:  # the same guard as a run's uri= target: the seeds, then every member they report
            check_destructive(args.uri, args.allow_destructive)
            if not args.allow_destructive and discovers_members(args.uri):
                probe_members(args.uri)
        except TargetUnavailable as exc:
            print(f"harness executor-check: {exc}")
            return 2
        return run_checks(executor, args.uri)
    return run_checks_on_target(executor, args.target)
