"""Reproduce each deviation listed for mongo-java-server, with raw commands and no harness run.

Every entry of specs/expectations/mongo-java-server*.yml names one of the deviation ids below; the ids from
``replace-as-update`` on are what the server checks (``--suite checks``, raw commands) find once nothing but the
server stands between them and the verdict. Each check
sends the few commands that show the behaviour straight to the server (pymongo, ``directConnection``, no
wire proxy, no spec runner) and prints what came back beside what a MongoDB server of the reported
version does. Exit status 0: every deviation reproduced; 1: at least one did not (the list is stale).

    python harness/targets/mongo_java_server/repro/mongo_java_server_deviations.py [mongodb://127.0.0.1:PORT]

Without a connection string the script starts mongo-java-server itself with the harness's launcher (the
pinned release, reporting server 6.0, as ``--target mongo-java-server`` does) and stops it at the end.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from bson.int64 import Int64
from pymongo import MongoClient
from pymongo.errors import OperationFailure

DB = "repro_mjs"


def _command(client: MongoClient, database: str, command: dict[str, Any]) -> dict[str, Any]:
    """The server's reply document, error or not (an error's reply is its details)."""
    try:
        reply: dict[str, Any] = client[database].command(command)
        return reply
    except OperationFailure as exc:
        return dict(exc.details or {"ok": 0, "errmsg": str(exc)})


def _stream(collection: str, stage: dict[str, Any] | None = None, *extra: dict[str, Any]) -> dict[str, Any]:
    return {"aggregate": collection, "pipeline": [{"$changeStream": stage or {}}, *extra], "cursor": {}}


def no_operation_time(client: MongoClient) -> tuple[bool, str]:
    """A change stream's aggregate reply has no operationTime, while the server reports wire version 7+."""
    hello = _command(client, "admin", {"isMaster": 1})
    reply = _command(client, DB, _stream("c"))
    shown = f"isMaster maxWireVersion={hello.get('maxWireVersion')}; aggregate reply keys={sorted(reply)}"
    return reply.get("ok") == 1 and "operationTime" not in reply and hello.get("maxWireVersion", 0) >= 7, shown


def no_post_batch_resume_token(client: MongoClient) -> tuple[bool, str]:
    """Neither the aggregate's nor a getMore's cursor carries postBatchResumeToken (empty batch or not)."""
    opened = _command(client, DB, _stream("c"))
    client[DB]["c"].insert_one({})
    more = _command(client, DB, {"getMore": opened.get("cursor", {}).get("id", 0), "collection": "c"})
    keys = [sorted(reply.get("cursor", {})) for reply in (opened, more)]
    return all("postBatchResumeToken" not in k for k in keys) and more.get("ok") == 1, f"cursor keys {keys}"


def no_sessions(client: MongoClient) -> tuple[bool, str]:
    """isMaster has no logicalSessionTimeoutMinutes (so drivers say sessions are unsupported)."""
    hello = _command(client, "admin", {"isMaster": 1})
    return "logicalSessionTimeoutMinutes" not in hello, f"isMaster keys={sorted(hello)}"


def no_hello(client: MongoClient) -> tuple[bool, str]:
    """``hello`` is an unknown command (only the legacy isMaster is answered)."""
    reply = _command(client, "admin", {"hello": 1})
    return reply.get("code") == 59, f"hello -> {reply.get('code')} {reply.get('errmsg')!r}"


def no_collmod(client: MongoClient) -> tuple[bool, str]:
    """``collMod`` (changeStreamPreAndPostImages) is an unknown command."""
    client[DB].drop_collection("images")
    client[DB].create_collection("images")
    reply = _command(client, DB, {"collMod": "images", "changeStreamPreAndPostImages": {"enabled": True}})
    return reply.get("code") == 59, f"collMod -> {reply.get('code')} {reply.get('errmsg')!r}"


def no_cluster_stream(client: MongoClient) -> tuple[bool, str]:
    """An all-cluster stream (``aggregate: 1`` on admin with allChangesForCluster) is refused as an unknown command."""
    reply = _command(client, "admin", {**_stream("c", {"allChangesForCluster": True}), "aggregate": 1})
    return reply.get("code") == 59, f"admin aggregate:1 -> {reply.get('code')} {reply.get('errmsg')!r}"


def database_stream_on_collection_one(client: MongoClient) -> tuple[bool, str]:
    """``aggregate: 1`` on another database (a database stream, or allChangesForCluster outside admin) opens a
    stream on a collection named "1" instead of a database stream or an error."""
    flagged = _command(client, DB, {**_stream("c", {"allChangesForCluster": True}), "aggregate": 1})
    plain = _command(client, DB, {**_stream("c"), "aggregate": 1})
    namespaces = [reply.get("cursor", {}).get("ns") for reply in (flagged, plain)]
    return namespaces == [f"{DB}.1", f"{DB}.1"], f"cursor namespaces {namespaces} (flagged, plain)"


def invalid_parameters_accepted(client: MongoClient) -> tuple[bool, str]:
    """A $changeStream stage with an unknown parameter or value is accepted and opens a cursor."""
    stages = [{"notAParameter": True}, {"fullDocument": "notAMode"}, {"fullDocumentBeforeChange": "notAMode"}]
    replies = [_command(client, DB, _stream("c", stage)) for stage in stages]
    accepted = [stage for stage, reply in zip(stages, replies, strict=True) if reply.get("ok") == 1]
    return len(accepted) == len(stages), f"accepted: {accepted}"


def redact_string_expression(client: MongoClient) -> tuple[bool, str]:
    """``$redact: "$$KEEP"`` after $changeStream fails inside the server (a Java class cast error)."""
    reply = _command(client, DB, _stream("c", None, {"$redact": "$$KEEP"}))
    failed_inside = reply.get("ok") != 1 and "cannot be cast" in str(reply.get("errmsg"))
    return failed_inside, f"errmsg={str(reply.get('errmsg'))[:160]!r}"


def standalone_streams(client: MongoClient) -> tuple[bool, str]:
    """The server says it is a standalone (no setName) yet opens change streams (mongod refuses: 40573)."""
    hello = _command(client, "admin", {"isMaster": 1})
    reply = _command(client, DB, _stream("c"))
    return "setName" not in hello and reply.get("ok") == 1, f"setName={hello.get('setName')}; ok={reply.get('ok')}"


def _events_after(client: MongoClient, collection: str, write: Callable[[], Any]) -> list[dict[str, Any]]:
    """Open a stream on ``collection``, make ``write``, and return what three getMores bring (cursor ids as 64-bit)."""
    opened = _command(client, DB, _stream(collection))
    cursor_id = Int64(opened.get("cursor", {}).get("id", 0))
    write()
    events: list[dict[str, Any]] = []
    for _ in range(3):
        more = _command(client, DB, {"getMore": cursor_id, "collection": collection, "maxTimeMS": 100})
        events += more.get("cursor", {}).get("nextBatch", [])
        if not more.get("cursor", {}).get("id"):
            break
    return events


def replace_as_update(client: MongoClient) -> tuple[bool, str]:
    """A replacement is reported as an update whose documentKey is the new document, with no updateDescription."""
    client[DB].drop_collection("replaced")
    client[DB]["replaced"].insert_one({"_id": 1, "before": 1})
    events = _events_after(client, "replaced", lambda: client[DB]["replaced"].replace_one({"_id": 1}, {"after": 2}))
    event = events[0] if events else {}
    shown = {k: event.get(k) for k in ("operationType", "documentKey", "fullDocument", "updateDescription")}
    wrong_key = event.get("documentKey") not in (None, {"_id": 1})
    return event.get("operationType") == "update" and wrong_key and "updateDescription" not in event, f"event {shown}"


def drop_without_invalidate(client: MongoClient) -> tuple[bool, str]:
    """Dropping the watched collection gives a drop event and no invalidate; the cursor stays open."""
    client[DB].drop_collection("dropped")
    client[DB].create_collection("dropped")
    events = _events_after(client, "dropped", lambda: client[DB].drop_collection("dropped"))
    kinds = [event.get("operationType") for event in events]
    return "drop" in kinds and "invalidate" not in kinds, f"events after the drop: {kinds}"


def rename_without_events(client: MongoClient) -> tuple[bool, str]:
    """Renaming the watched collection gives neither a rename event nor an invalidate (mongod sends both)."""
    client[DB].drop_collection("renamed_to")
    client[DB].drop_collection("renamed")
    client[DB].create_collection("renamed")
    rename = {"renameCollection": f"{DB}.renamed", "to": f"{DB}.renamed_to"}
    replies: list[dict[str, Any]] = []
    events = _events_after(client, "renamed", lambda: replies.append(_command(client, "admin", rename)))
    kinds = [event.get("operationType") for event in events]
    renamed = bool(replies) and replies[0].get("ok") == 1
    shown = f"renameCollection ok={replies[0].get('ok') if replies else None}; events after it: {kinds}"
    return renamed and "rename" not in kinds and "invalidate" not in kinds, shown


def get_more_without_wait(client: MongoClient) -> tuple[bool, str]:
    """A getMore with maxTimeMS 500 and nothing to return answers an empty batch at once (mongod waits the 500 ms)."""
    opened = _command(client, DB, _stream("quiet"))
    cursor_id = Int64(opened.get("cursor", {}).get("id", 0))
    started = time.monotonic()
    more = _command(client, DB, {"getMore": cursor_id, "collection": "quiet", "maxTimeMS": 500})
    waited_ms = (time.monotonic() - started) * 1000
    empty = more.get("ok") == 1 and not more.get("cursor", {}).get("nextBatch")
    return empty and waited_ms < 100, f"empty batch after {waited_ms:.0f} ms (maxTimeMS 500)"


def malformed_token_without_code(client: MongoClient) -> tuple[bool, str]:
    """An aggregate with a resumeAfter the server cannot read is refused with no error code, only a Java message."""
    reply = _command(client, DB, _stream("c", {"resumeAfter": {"_data": "not hexadecimal"}}))
    return reply.get("ok") != 1 and "code" not in reply, f"code={reply.get('code')} errmsg={reply.get('errmsg')!r}"


def no_configure_fail_point(client: MongoClient) -> tuple[bool, str]:
    """``configureFailPoint`` is an unknown command (test commands cannot be turned on)."""
    off = {"configureFailPoint": "failCommand", "mode": "off"}
    reply = _command(client, "admin", off)
    return reply.get("ok") != 1, f"configureFailPoint -> {reply.get('code')} {reply.get('errmsg')!r}"


def foreign_token_accepted(client: MongoClient) -> tuple[bool, str]:
    """resumeAfter with the token of another collection's change opens this collection's stream and delivers its
    events (mongod refuses: the token is not in the stream)."""
    client[DB].drop_collection("elsewhere")
    client[DB].create_collection("elsewhere")
    elsewhere = _events_after(client, "elsewhere", lambda: client[DB]["elsewhere"].insert_one({"x": 1}))
    token = elsewhere[0]["_id"] if elsewhere else {}
    opened = _command(client, DB, _stream("here", {"resumeAfter": token}))
    client[DB]["here"].insert_one({"here": 1})
    cursor_id = Int64(opened.get("cursor", {}).get("id", 0))
    more = _command(client, DB, {"getMore": cursor_id, "collection": "here", "maxTimeMS": 100})
    delivered = [e.get("operationType") for e in more.get("cursor", {}).get("nextBatch", [])]
    return opened.get("ok") == 1 and bool(delivered), f"aggregate ok={opened.get('ok')}; delivered {delivered}"


def two_start_points_accepted(client: MongoClient) -> tuple[bool, str]:
    """An aggregate naming resumeAfter and startAtOperationTime together opens a cursor (mongod refuses any pair)."""
    events = _events_after(client, "pair", lambda: client[DB]["pair"].insert_one({"x": 1}))
    event = events[0] if events else {}
    both = {"resumeAfter": event.get("_id"), "startAtOperationTime": event.get("clusterTime")}
    reply = _command(client, DB, _stream("pair", both))
    return bool(event) and reply.get("ok") == 1, f"resumeAfter with startAtOperationTime -> ok={reply.get('ok')}"


#: deviation id -> check; the ids the expected-outcome entries name in their reasons.
CHECKS: dict[str, Callable[[MongoClient], tuple[bool, str]]] = {
    "no-operation-time": no_operation_time,
    "no-post-batch-resume-token": no_post_batch_resume_token,
    "no-sessions": no_sessions,
    "no-hello": no_hello,
    "no-collmod": no_collmod,
    "no-cluster-stream": no_cluster_stream,
    "database-stream-on-collection-1": database_stream_on_collection_one,
    "invalid-parameters-accepted": invalid_parameters_accepted,
    "redact-string-expression": redact_string_expression,
    "standalone-streams": standalone_streams,
    "replace-as-update": replace_as_update,
    "drop-without-invalidate": drop_without_invalidate,
    "rename-without-events": rename_without_events,
    "get-more-without-wait": get_more_without_wait,
    "malformed-token-without-code": malformed_token_without_code,
    "no-configure-fail-point": no_configure_fail_point,
    "foreign-token-accepted": foreign_token_accepted,
    "two-start-points-accepted": two_start_points_accepted,
}


def reproduce(uri: str) -> dict[str, tuple[bool, str]]:
    with MongoClient(uri, directConnection=True, serverSelectionTimeoutMS=10_000) as client:
        return {name: check(client) for name, check in CHECKS.items()}


def main(argv: list[str]) -> int:
    server = None
    if len(argv) > 1:
        uri = argv[1]
    else:
        from harness.targets.mongo_java_server import MongoJavaServer

        server = MongoJavaServer()
        server.start()
        uri = server.uri
    try:
        found = reproduce(uri)
    finally:
        if server is not None:
            server.stop()
    for name, (reproduced, shown) in found.items():
        print(f"{'REPRODUCED' if reproduced else 'NOT REPRODUCED'}  {name}: {shown}")
    return 0 if all(reproduced for reproduced, _ in found.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
