"""Reproduce each deviation listed for mongo-java-server, with raw commands and no harness run.

Every entry of specs/expectations/mongo-java-server*.yml names one of the deviation ids below. Each check
sends the few commands that show the behaviour straight to the server (pymongo, ``directConnection``, no
wire proxy, no spec runner) and prints what came back beside what a MongoDB server of the reported
version does. Exit status 0: every deviation reproduced; 1: at least one did not (the list is stale).

    python harness/targets/mongo_java_server/repro/mongo_java_server_deviations.py [mongodb://127.0.0.1:PORT]

Without a connection string the script starts mongo-java-server itself with the harness's launcher (the
pinned release, reporting server 6.0, as ``--target mongo-java-server`` does) and stops it at the end.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

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
