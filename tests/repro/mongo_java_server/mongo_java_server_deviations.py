"""Reproduce each deviation listed for mongo-java-server, with raw commands and no harness run.

Every entry of specs/expectations/mongo-java-server*.yml names one of the deviation ids below; the ids from
``replace-as-update`` on are what the server checks (``--suite checks``, raw commands) find once nothing but the
server stands between them and the verdict. Each check
sends the few commands that show the behaviour straight to the server (pymongo, ``directConnection``, no
wire proxy, no spec runner) and prints what came back beside what a MongoDB server of the reported
version does. Exit status 0: every deviation reproduced; 1: at least one did not (the list is stale).

    python tests/repro/mongo_java_server/mongo_java_server_deviations.py [mongodb://127.0.0.1:PORT]

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


def _fresh(client: MongoClient, *names: str) -> None:
    """Drop ``names`` (a missing one is fine) and create each again, empty."""
    for name in names:
        client[DB].drop_collection(name)
        client[DB].create_collection(name)


def _first_event(
    client: MongoClient, collection: str, write: Callable[[], Any], stage: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The first event a stream on ``collection`` (with ``stage``) reports after ``write``, or {} if none."""
    opened = _command(client, DB, _stream(collection, stage))
    cursor_id = Int64(opened.get("cursor", {}).get("id", 0))
    write()
    more = _command(client, DB, {"getMore": cursor_id, "collection": collection, "maxTimeMS": 100})
    batch = more.get("cursor", {}).get("nextBatch", [])
    return batch[0] if batch else {}


def _updated(client: MongoClient, collection: str, stage: dict[str, Any] | None = None) -> dict[str, Any]:
    """The event of ``update_one({_id: 1}, {$set: {a: 2}, $unset: {b: ""}})`` on a document {_id: 1, a: 1, b: 1}."""
    _fresh(client, collection)
    client[DB][collection].insert_one({"_id": 1, "a": 1, "b": 1})
    change = {"$set": {"a": 2}, "$unset": {"b": ""}}
    return _first_event(client, collection, lambda: client[DB][collection].update_one({"_id": 1}, change), stage)


def event_without_ns(client: MongoClient) -> tuple[bool, str]:
    """An insert event has no ``ns`` (mongod names the database and collection in every data event)."""
    _fresh(client, "shapes")
    event = _first_event(client, "shapes", lambda: client[DB]["shapes"].insert_one({"_id": 1}))
    return event.get("operationType") == "insert" and "ns" not in event, f"insert event keys {sorted(event)}"


def event_without_wall_time(client: MongoClient) -> tuple[bool, str]:
    """An insert event has clusterTime but no ``wallTime`` (mongod 6.0 adds a date to every event)."""
    _fresh(client, "shapes")
    event = _first_event(client, "shapes", lambda: client[DB]["shapes"].insert_one({"_id": 1}))
    shown = f"insert event keys {sorted(event)}"
    return event.get("operationType") == "insert" and "clusterTime" in event and "wallTime" not in event, shown


def update_documentkey_is_modifier(client: MongoClient) -> tuple[bool, str]:
    """An update event's documentKey is the update's modifier document ($set, $unset), not {_id}."""
    event = _updated(client, "updated")
    key = event.get("documentKey")
    return event.get("operationType") == "update" and key == {
        "$set": {"a": 2},
        "$unset": {"b": ""},
    }, f"documentKey {key}"


def update_without_description(client: MongoClient) -> tuple[bool, str]:
    """An update event has no updateDescription (mongod: updatedFields {a: 2}, removedFields [b])."""
    event = _updated(client, "updated")
    shown = f"update event keys {sorted(event)}"
    return event.get("operationType") == "update" and "updateDescription" not in event, shown


def update_with_full_document(client: MongoClient) -> tuple[bool, str]:
    """Without a fullDocument option an update event still has fullDocument (the $set and $unset values merged)."""
    event = _updated(client, "updated")
    full = event.get("fullDocument", "<absent>")
    return event.get("operationType") == "update" and full == {"a": 2, "b": ""}, f"fullDocument {full}"


def replace_without_full_document(client: MongoClient) -> tuple[bool, str]:
    """A replacement's event has fullDocument {} instead of the new document (mongod: {_id: 1, after: 2})."""
    _fresh(client, "replaced_doc")
    client[DB]["replaced_doc"].insert_one({"_id": 1, "before": 1})
    write = lambda: client[DB]["replaced_doc"].replace_one({"_id": 1}, {"after": 2})  # noqa: E731
    event = _first_event(client, "replaced_doc", write)
    full = event.get("fullDocument", "<absent>")
    return full == {}, f"{event.get('operationType')} event fullDocument {full}"


def delete_with_full_document(client: MongoClient) -> tuple[bool, str]:
    """A delete event has a fullDocument field (null), which mongod leaves out of delete events."""
    _fresh(client, "deleted")
    client[DB]["deleted"].insert_one({"_id": 1})
    event = _first_event(client, "deleted", lambda: client[DB]["deleted"].delete_one({"_id": 1}))
    shown = f"delete event fullDocument {event.get('fullDocument', '<absent>')!r}, keys {sorted(event)}"
    return event.get("operationType") == "delete" and "fullDocument" in event, shown


def sibling_drop_in_collection_stream(client: MongoClient) -> tuple[bool, str]:
    """A collection stream reports the drop of another collection of its database (a drop event without ns)."""
    _fresh(client, "watched", "sibling")
    event = _first_event(client, "watched", lambda: client[DB].drop_collection("sibling"))
    return event.get("operationType") == "drop", f"the stream on 'watched' after 'sibling' was dropped: {event}"


def drop_database_without_invalidate(client: MongoClient) -> tuple[bool, str]:
    """Dropping the watched collection's database gives one drop event per collection and no invalidate."""
    other = client[f"{DB}_dropped"]
    other["watched"].insert_one({"_id": 1})
    other["other"].insert_one({"_id": 1})
    opened = _command(client, other.name, _stream("watched"))
    cursor_id = Int64(opened.get("cursor", {}).get("id", 0))
    client.drop_database(other.name)
    more = _command(client, other.name, {"getMore": cursor_id, "collection": "watched", "maxTimeMS": 100})
    kinds = [event.get("operationType") for event in more.get("cursor", {}).get("nextBatch", [])]
    still_open = bool(more.get("cursor", {}).get("id"))
    shown = f"events after dropDatabase: {kinds}; cursor still open: {still_open}"
    return kinds.count("drop") >= 2 and "invalidate" not in kinds and still_open, shown


def resume_after_earlier_drop_invalidates(client: MongoClient) -> tuple[bool, str]:
    """resumeAfter an insert's token, on a collection dropped (and made again) before that insert, answers an
    invalidate carrying the given token and a closed cursor instead of the next insert."""
    client[DB]["recreated"].insert_one({"_id": 0})
    client[DB].drop_collection("recreated")
    client[DB].create_collection("recreated")

    def two_inserts() -> None:
        client[DB]["recreated"].insert_many([{"_id": 1}, {"_id": 2}])

    events = _events_after(client, "recreated", two_inserts)
    token = events[0]["_id"] if events else {}
    resumed = _command(client, DB, _stream("recreated", {"resumeAfter": token}))
    cursor = resumed.get("cursor", {})
    first = [event.get("operationType") for event in cursor.get("firstBatch", [])]
    shown = f"resumeAfter the first insert's token: firstBatch {first}, cursor id {cursor.get('id')}"
    return len(events) == 2 and first == ["invalidate"] and cursor.get("id") == 0, shown


def update_lookup_of_deleted_document(client: MongoClient) -> tuple[bool, str]:
    """With updateLookup, an update read after the document was deleted carries the update's values, not null."""
    _fresh(client, "looked_up")
    client[DB]["looked_up"].insert_one({"_id": 1, "n": 0})
    opened = _command(client, DB, _stream("looked_up", {"fullDocument": "updateLookup"}))
    cursor_id = Int64(opened.get("cursor", {}).get("id", 0))
    client[DB]["looked_up"].update_one({"_id": 1}, {"$set": {"n": 9}})
    client[DB]["looked_up"].delete_one({"_id": 1})
    more = _command(client, DB, {"getMore": cursor_id, "collection": "looked_up", "maxTimeMS": 100})
    update = next((e for e in more.get("cursor", {}).get("nextBatch", []) if e.get("operationType") == "update"), {})
    full = update.get("fullDocument", "<absent>")
    return bool(update) and full not in (None, "<absent>"), f"the update's fullDocument after the delete: {full}"


def post_image_modes_ignored(client: MongoClient) -> tuple[bool, str]:
    """fullDocument whenAvailable and required, on a collection without images, are taken as the default: the update
    event carries the update's values (mongod: null for whenAvailable, a NoMatchingDocument error for required)."""
    seen = {}
    for mode in ("whenAvailable", "required"):
        event = _updated(client, "post_images", {"fullDocument": mode})
        seen[mode] = (event.get("operationType"), event.get("fullDocument", "<absent>"))
    updates = all(kind == "update" and full == {"a": 2, "b": ""} for kind, full in seen.values())
    return updates, f"fullDocument mode -> (event, fullDocument): {seen}"


def pre_image_modes_ignored(client: MongoClient) -> tuple[bool, str]:
    """fullDocumentBeforeChange whenAvailable and required, on a collection without images, are ignored: the update
    event has no fullDocumentBeforeChange (mongod: null for whenAvailable, a NoMatchingDocument error for required)."""
    seen = {}
    for mode in ("whenAvailable", "required"):
        event = _updated(client, "pre_images", {"fullDocumentBeforeChange": mode})
        seen[mode] = (event.get("operationType"), event.get("fullDocumentBeforeChange", "<absent>"))
    ignored = all(kind == "update" and before == "<absent>" for kind, before in seen.values())
    return ignored, f"fullDocumentBeforeChange mode -> (event, fullDocumentBeforeChange): {seen}"


def projected_id_internal_error(client: MongoClient) -> tuple[bool, str]:
    """A pipeline that projects out _id makes the getMore fail inside the server (a Java NullPointerException
    message, no code), where mongod fails it with ChangeStreamFatalError (280)."""
    _fresh(client, "projected")
    opened = _command(client, DB, _stream("projected", None, {"$project": {"_id": 0}}))
    cursor_id = Int64(opened.get("cursor", {}).get("id", 0))
    client[DB]["projected"].insert_one({"_id": 1})
    more = _command(client, DB, {"getMore": cursor_id, "collection": "projected", "maxTimeMS": 100})
    failed = more.get("ok") != 1 and "code" not in more and "is null" in str(more.get("errmsg"))
    return failed, f"getMore -> code={more.get('code')} errmsg={str(more.get('errmsg'))[:120]!r}"


def pipeline_update_refused(client: MongoClient) -> tuple[bool, str]:
    """An update given as an aggregation pipeline fails inside the server (a Java class cast error, no code)."""
    _fresh(client, "pipeline_update")
    client[DB]["pipeline_update"].insert_one({"_id": 1, "a": [1, 2, 3]})
    update = {"q": {"_id": 1}, "u": [{"$set": {"a": {"$slice": ["$a", 1]}}}]}
    reply = _command(client, DB, {"update": "pipeline_update", "updates": [update]})
    failed = reply.get("ok") != 1 and "java.util.ArrayList cannot be cast" in str(reply.get("errmsg"))
    return failed, f"update with a pipeline -> code={reply.get('code')} errmsg={str(reply.get('errmsg'))[:100]!r}"


def linearizable_read_concern_accepted(client: MongoClient) -> tuple[bool, str]:
    """A change stream's aggregate with readConcern linearizable opens a cursor (mongod refuses it)."""
    command = {**_stream("c"), "readConcern": {"level": "linearizable"}}
    reply = _command(client, DB, command)
    return reply.get(
        "ok"
    ) == 1 and "cursor" in reply, f"aggregate with readConcern linearizable -> ok={reply.get('ok')}"


def views_not_implemented(client: MongoClient) -> tuple[bool, str]:
    """``create`` with viewOn makes an ordinary collection, and a change stream opens on it (mongod: no stream on
    a view)."""
    client[DB].drop_collection("a_view")
    created = _command(client, DB, {"create": "a_view", "viewOn": "c", "pipeline": []})
    listed = [c.get("type") for c in client[DB].list_collections() if c.get("name") == "a_view"]
    reply = _command(client, DB, _stream("a_view"))
    shown = f"create viewOn -> ok={created.get('ok')}; listed as {listed}; $changeStream on it -> ok={reply.get('ok')}"
    return created.get("ok") == 1 and listed == ["collection"] and reply.get("ok") == 1, shown


def placeholder_token_accepted(client: MongoClient) -> tuple[bool, str]:
    """resumeAfter or startAfter {_data: "00"} (no token the server ever handed out) opens a stream, which starts at
    the beginning of the server's history (mongod refuses: the token is not in its history)."""
    client[DB]["placeholder"].insert_one({"x": 1})
    replies = {
        name: _command(client, DB, _stream("placeholder", {name: {"_data": "00"}}))
        for name in ("resumeAfter", "startAfter")
    }
    shown = {n: (r.get("ok"), len(r.get("cursor", {}).get("firstBatch", []))) for n, r in replies.items()}
    opened = all(r.get("ok") == 1 and r.get("cursor", {}).get("firstBatch") for r in replies.values())
    return opened, f"start point -> (ok, events in the first batch): {shown}"


def no_ddl_events(client: MongoClient) -> tuple[bool, str]:
    """With showExpandedEvents, createIndexes, dropIndexes and create give no event (mongod reports each)."""
    _fresh(client, "ddl")
    client[DB].drop_collection("ddl_created")

    def ddl() -> None:
        _command(client, DB, {"createIndexes": "ddl", "indexes": [{"key": {"a": 1}, "name": "a_1"}]})
        _command(client, DB, {"dropIndexes": "ddl", "index": "a_1"})
        _command(client, DB, {"create": "ddl_created"})

    opened = _command(client, DB, _stream("ddl", {"showExpandedEvents": True}))
    cursor_id = Int64(opened.get("cursor", {}).get("id", 0))
    ddl()
    more = _command(client, DB, {"getMore": cursor_id, "collection": "ddl", "maxTimeMS": 100})
    kinds = [event.get("operationType") for event in more.get("cursor", {}).get("nextBatch", [])]
    return opened.get("ok") == 1 and kinds == [], f"events after createIndexes, dropIndexes, create: {kinds}"


def drop_of_missing_collection_without_code(client: MongoClient) -> tuple[bool, str]:
    """``drop`` of a collection that does not exist fails with "ns not found" and no code (mongod 6.0: code 26,
    NamespaceNotFound, which drivers that ignore that error look for)."""
    client[DB].drop_collection("never_made")
    reply = _command(client, DB, {"drop": "never_made"})
    shown = f"drop -> ok={reply.get('ok')} code={reply.get('code')} errmsg={reply.get('errmsg')!r}"
    return reply.get("ok") != 1 and "code" not in reply and reply.get("errmsg") == "ns not found", shown


def bare_resume_misses_change(client: MongoClient) -> tuple[bool, str]:
    """The aggregate reply gives neither operationTime nor postBatchResumeToken, so a driver can only resume with the
    original aggregate and no start point; such an aggregate, opened after a change, never reports that change."""
    _fresh(client, "resumed")
    original = _command(client, DB, _stream("resumed"))
    client[DB]["resumed"].insert_one({"_id": 1})
    resumed = _command(client, DB, _stream("resumed"))  # what the resume sends: the original aggregate, unchanged
    cursor_id = Int64(resumed.get("cursor", {}).get("id", 0))
    more = _command(client, DB, {"getMore": cursor_id, "collection": "resumed", "maxTimeMS": 100})
    delivered = resumed.get("cursor", {}).get("firstBatch", []) + more.get("cursor", {}).get("nextBatch", [])
    points = [k for k in ("operationTime",) if k in original] + [
        k for k in ("postBatchResumeToken",) if k in original.get("cursor", {})
    ]
    shown = f"resume points in the first reply: {points}; the reopened stream delivered {len(delivered)} event(s)"
    return not points and not delivered, shown


def database_stream_misses_inserts(client: MongoClient) -> tuple[bool, str]:
    """A database stream (aggregate: 1) reports no insert into the database's collections (it watches a collection
    named "1")."""
    _fresh(client, "in_database")
    opened = _command(client, DB, {**_stream("c"), "aggregate": 1})
    cursor_id = Int64(opened.get("cursor", {}).get("id", 0))
    client[DB]["in_database"].insert_one({"_id": 1})
    more = _command(client, DB, {"getMore": cursor_id, "collection": "1", "maxTimeMS": 100})
    kinds = [event.get("operationType") for event in more.get("cursor", {}).get("nextBatch", [])]
    return opened.get("ok") == 1 and kinds == [], f"database stream after an insert: {kinds}"


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
    "event-without-ns": event_without_ns,
    "event-without-wall-time": event_without_wall_time,
    "update-documentkey-is-modifier": update_documentkey_is_modifier,
    "update-without-description": update_without_description,
    "update-with-full-document": update_with_full_document,
    "replace-without-full-document": replace_without_full_document,
    "delete-with-full-document": delete_with_full_document,
    "sibling-drop-in-collection-stream": sibling_drop_in_collection_stream,
    "drop-database-without-invalidate": drop_database_without_invalidate,
    "resume-after-earlier-drop-invalidates": resume_after_earlier_drop_invalidates,
    "update-lookup-of-deleted-document": update_lookup_of_deleted_document,
    "post-image-modes-ignored": post_image_modes_ignored,
    "pre-image-modes-ignored": pre_image_modes_ignored,
    "projected-id-internal-error": projected_id_internal_error,
    "pipeline-update-refused": pipeline_update_refused,
    "linearizable-read-concern-accepted": linearizable_read_concern_accepted,
    "views-not-implemented": views_not_implemented,
    "placeholder-token-accepted": placeholder_token_accepted,
    "no-ddl-events": no_ddl_events,
    "drop-of-missing-collection-without-code": drop_of_missing_collection_without_code,
    "bare-resume-misses-change": bare_resume_misses_change,
    "database-stream-misses-inserts": database_stream_misses_inserts,
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
