"""The checks of operations and their results on the server: a scope's results, scopes and URI options, cursors.

They open scopes on the ``--uri`` (or the started target) and ask what docs/executor-protocol.md sections 3, 5
and 6.1 ask: typed results, a driver error and the events of a few operations, a scope id never reused, an
unknown URI option refused, a cursor read to its end.
"""

from __future__ import annotations

import json

from bson import Int64

from harness.drivers.executor.checks.errors import check_driver_error
from harness.drivers.executor.checks.events import check_events
from harness.drivers.executor.checks.session import (
    Check,
    client_and_collection,
    command_names,
    open_scope,
    run_operation,
    typed_tree,
    wire,
)


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
    check_driver_error(check, duplicate)
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
    check_events(check, check.expect_ok("events", client="client", eventType="command", **scope))
    check.expect_ok("closeScope", **scope)


def check_scopes(check: Check) -> None:
    """Section 5: a scope opened with the executor's own fastHeartbeatMS works, and an open scope's id is not reused;
    section 6.1: an unknown URI option is refused, never silently dropped."""
    scope = "scopes"
    fast = check.hello.get("fastHeartbeatMS")
    if not open_scope(check, scope, 5000, *client_and_collection("scopes"), heartbeat=fast):
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
    counted = run_operation(check, scope, "countDocuments", "coll", filter={})
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
    if open_scope(check, scope, 5000, *client_and_collection("cursor")):
        run_operation(check, scope, "deleteMany", "coll", filter={})
        documents = [{"_id": Int64(n)} for n in (1, 2, 3)]
        run_operation(check, scope, "insertMany", "coll", documents=documents)
        start = len(command_names(check, scope))
        found = run_operation(check, scope, "find", "coll", filter={}, sort={"_id": 1}, batchSize=1)
        if found.get("resultKind") != "documents" or typed_tree(found.get("result")) != typed_tree(documents):
            check.problems.append(
                f"run find (batchSize 1, three documents): expected resultKind documents and {wire(documents)}, "
                f"got {found!r}"
            )
        names = command_names(check, scope)[start:]
        if names[:1] != ["find"] or names[1:].count("getMore") < 2:
            check.problems.append(
                "run find (batchSize 1, three documents): expected find then a getMore per further batch (section "
                f"3: a cursor is read until the server closes it), the client sent {names}"
            )
    check.expect_ok("closeScope", scope=scope)
