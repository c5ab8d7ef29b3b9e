"""The checks of change streams: a change and its resume token, iteration and its budget, ``close``, invalidate.

Some need the check's own client on the server (a fail point on killCursors, dropping a watched collection), the
way a test runner acts beside the driver under test (docs/executor-protocol.md section 6.4).
"""

from __future__ import annotations

import time

from bson import Decimal128, Int64, Timestamp
from pymongo.errors import PyMongoError

from harness.drivers.executor.checks.session import (
    Check,
    client_and_collection,
    command_names,
    open_scope,
    run_operation,
    server_client,
    typed_tree,
    wire,
)


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
            if typed_tree(change.get(key)) != typed_tree(value):
                check.problems.append(f"change event: {key} should be {wire(value)}, got {wire(change.get(key))}")
        if not isinstance(change.get("_id"), dict):
            check.problems.append(f"change event: _id (the resume token) must be a document, got {change.get('_id')!r}")
    check.expect_ok("run", operation={"name": "close", "object": "stream", "arguments": {}}, **scope)
    check.expect_ok("closeScope", **scope)


#: The application name the close check's fail point is limited to, so only the executor's client is hit.
CLOSE_APP_NAME = "executorCheckClose"


def check_stream_iteration(check: Check) -> None:
    """Section 6.4: ``iterateOnce`` reaches the server, the budget leaves the stream usable, ``close`` swallows a
    failed killCursors."""
    scope = "iteration"
    entities = client_and_collection("iteration", uriOptions={"appName": CLOSE_APP_NAME})
    if open_scope(check, scope, 1000, *entities):
        run_operation(check, scope, "deleteMany", "coll", filter={})
        start = len(command_names(check, scope))
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
    once = run_operation(check, scope, "iterateOnce", "stream")
    names = command_names(check, scope)[start:]
    if not once["ok"] or once.get("result") is not None or names != ["aggregate", "getMore"]:
        check.problems.append(
            "run iterateOnce on a new stream over an empty collection: expected null after exactly aggregate, "
            f"getMore (section 6.4: an empty first batch is not an answer), got {once!r} after {names}"
        )


def _budget(check: Check, scope: str) -> None:
    idle = run_operation(check, scope, "iterateUntilDocumentOrError", "stream")
    if idle["ok"] or idle["error"].get("kind") != "noChange":
        check.problems.append(
            f"run iterateUntilDocumentOrError on an idle stream (budget 1 s): expected noChange, got {idle!r}"
        )
    run_operation(check, scope, "insertOne", "coll", document={"_id": Int64(7)})
    change = run_operation(check, scope, "iterateUntilDocumentOrError", "stream")
    key = (change.get("result") or {}).get("documentKey") if change["ok"] else None
    if typed_tree(key) != typed_tree({"_id": Int64(7)}):
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
    with server_client(check) as server:
        try:
            server.admin.command(fail_point)
        except PyMongoError as exc:
            check.problems.append(f"cannot arm a failCommand fail point (are test commands enabled?): {exc}")
            return
        try:
            closed = run_operation(check, scope, "close", "stream")
        finally:
            server.admin.command({"configureFailPoint": "failCommand", "mode": "off"})
    names = command_names(check, scope)
    if not closed["ok"] or closed.get("result") is not None:
        check.problems.append(
            "run close with killCursors failing (fail point, errorCode 2): expected null, the error swallowed "
            f"(section 6.4), got {closed!r}"
        )
    elif names[-1:] != ["killCursors"]:
        check.problems.append(f"run close on an open stream: expected the driver to send killCursors, it sent {names}")


#: The budget of the scope whose stream the server closes: an answer in less than half of it is "at once".
CLOSED_STREAM_BUDGET_S = 8.0


def check_closed_stream(check: Check) -> None:
    """Section 6.4: after an invalidate the server has closed the stream; iterating it answers at once."""
    scope, budget_s = "invalidate", CLOSED_STREAM_BUDGET_S
    with server_client(check) as server:
        server.executor_check.drop_collection("invalidate")
        if open_scope(check, scope, int(budget_s * 1000), *client_and_collection("invalidate")):
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
        change = run_operation(check, scope, "iterateUntilDocumentOrError", "stream")
        seen.append((change.get("result") or {}).get("operationType") if change["ok"] else change["error"])
        if seen[-1] == "invalidate" or not change["ok"]:
            break
    if seen[-1] != "invalidate":
        check.problems.append(f"a stream on a dropped collection: expected insert, drop, invalidate, got {seen}")
        return False
    return True


def _closed_answers_at_once(check: Check, scope: str, budget_s: float) -> None:
    started = time.monotonic()
    after = run_operation(check, scope, "iterateUntilDocumentOrError", "stream")
    waited = time.monotonic() - started
    kind = None if after["ok"] else after["error"].get("kind")
    if kind not in ("noChange", "driverError") or waited >= budget_s / 2:
        check.problems.append(
            "run iterateUntilDocumentOrError after invalidate (the server closed the cursor): expected "
            f"noChange or a driverError at once (section 6.4), got {after!r} after {waited:.1f} s of a "
            f"{budget_s:.0f} s budget"
        )
