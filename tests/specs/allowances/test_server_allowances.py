"""Server-side allowances: SecantusDB changed into another server the references permit, and the checks still pass.

Each variation patches the embedded SecantusDB in this process (``monkeypatch``) into a server that behaves as
another conforming deployment may: a sharded cluster's mongos answering a resume with an empty first batch,
or a getMore with an empty batch while an event waits on another shard; a server that orders an event's
fields differently, mints resume tokens of another shape, adds a field to ``ns``, reports an array's truncation
in the other way the spec allows. The checks of the allowance's rules, driver-side and server-side, must all
pass (those that pass on SecantusDB as shipped), and the variation must be seen to happen in at least one check
of each rule (tests/specs/allowances/support.py). The registry (specs/coverage/allowances/) names this table.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import bson
import pytest
from bson.binary import Binary
from secantus import changestreams
from secantus import commands as secantus_commands
from secantus import storage as secantus_storage

from harness.engine.run import HarnessRun
from tests.specs.allowances.support import Observed, Variation, assert_checks_accept, open_run


@pytest.fixture(scope="module")
def run() -> Iterator[HarnessRun]:
    yield from open_run()


def _is_stream(pipeline: Any) -> bool:
    return bool(pipeline) and isinstance(pipeline[0], Mapping) and "$changeStream" in pipeline[0]


def resumed_first_batch_empty(mp: pytest.MonkeyPatch, observed: Observed) -> None:
    """An aggregate with a start point (resumeAfter, startAfter, startAtOperationTime) whose backlog would fill its
    first batch answers with an empty first batch instead, the backlog held for the getMores that follow, as a
    mongos may before every shard has answered. The empty batch's postBatchResumeToken is the start point: the
    token given, or for a start time a high-water mark just before the first change held back."""
    original = secantus_commands._aggregate_change_stream

    def aggregate(doc: Any, ctx: Any, coll: Any, pipeline: list[dict[str, Any]], batch_size: int) -> Any:
        reply = original(doc, ctx, coll, pipeline, batch_size)
        cursor = reply.get("cursor") if isinstance(reply, Mapping) else None
        if not cursor or not cursor.get("firstBatch") or not cursor.get("id"):
            return reply
        stage = pipeline[0]["$changeStream"]
        start = stage.get("resumeAfter") or stage.get("startAfter")
        batch = list(cursor["firstBatch"])
        if start is None:
            first = changestreams.parse_resume_token(batch[0]["_id"])
            start = changestreams.make_resume_token(
                changestreams.ResumeTokenData(first.seq - 1, first.ts, cursor["ns"], {})
            )
        entry = ctx.cursors.get(int(cursor["id"]))
        entry.remaining[:0] = batch
        entry.last_token = start
        observed.saw(f"aggregate with {sorted(set(stage) & START_POINTS)}: {len(batch)} change(s) held back")
        return {**reply, "cursor": {**cursor, "firstBatch": [], "postBatchResumeToken": start}}

    mp.setattr(secantus_commands, "_aggregate_change_stream", aggregate)


#: The $changeStream options that give a stream a start point.
START_POINTS = {"resumeAfter", "startAfter", "startAtOperationTime"}


def empty_get_more_before_changes(mp: pytest.MonkeyPatch, observed: Observed) -> None:
    """A getMore that has changes to return answers with an empty batch first (its postBatchResumeToken the one the
    cursor last gave), and the changes come with the next getMore, as a mongos's does while another shard's cursor
    has not caught up."""
    original_aggregate = secantus_commands._aggregate_change_stream
    original_doc = secantus_commands._change_stream_cursor_doc
    given: dict[int, Any] = {}
    stalled: set[int] = set()

    def aggregate(doc: Any, ctx: Any, coll: Any, pipeline: list[dict[str, Any]], batch_size: int) -> Any:
        reply = original_aggregate(doc, ctx, coll, pipeline, batch_size)
        cursor = reply.get("cursor") if isinstance(reply, Mapping) else None
        if cursor and cursor.get("id"):
            given[int(cursor["id"])] = cursor.get("postBatchResumeToken")
        return reply

    def cursor_doc(entry: Any, cursor_id: int, batch_size: int, ns: str, *, batch_key: str) -> dict[str, Any]:
        if (
            batch_key == "nextBatch"
            and getattr(entry, "change_stream", False)
            and entry.remaining
            and batch_size
            and cursor_id not in stalled
        ):
            stalled.add(cursor_id)
            observed.saw(f"empty getMore on cursor {cursor_id} with {len(entry.remaining)} change(s) waiting")
            empty: dict[str, Any] = {"nextBatch": [], "id": bson.Int64(cursor_id), "ns": ns}
            if given.get(cursor_id) is not None:
                empty["postBatchResumeToken"] = given[cursor_id]
            return empty
        found = original_doc(entry, cursor_id, batch_size, ns, batch_key=batch_key)
        if found.get(batch_key):
            stalled.discard(cursor_id)
        if "postBatchResumeToken" in found:
            given[cursor_id] = found["postBatchResumeToken"]
        return found

    mp.setattr(secantus_commands, "_aggregate_change_stream", aggregate)
    mp.setattr(secantus_commands, "_change_stream_cursor_doc", cursor_doc)


def one_change_per_batch(mp: pytest.MonkeyPatch, observed: Observed) -> None:
    """Every batch of a change stream holds at most one change, whatever the batchSize; the rest follow in the next
    getMores, each batch's postBatchResumeToken that of its last change (as a mongos may cut a batch short)."""
    original = secantus_commands._change_stream_cursor_doc

    def cursor_doc(entry: Any, cursor_id: int, batch_size: int, ns: str, *, batch_key: str) -> dict[str, Any]:
        if getattr(entry, "change_stream", False) and batch_size > 1 and len(entry.remaining) > 1:
            observed.saw(f"a batch of {min(batch_size, len(entry.remaining))} change(s) cut to one")
            batch_size = 1
        return original(entry, cursor_id, batch_size, ns, batch_key=batch_key)

    mp.setattr(secantus_commands, "_change_stream_cursor_doc", cursor_doc)


def _reversed(document: Mapping[str, Any]) -> dict[str, Any]:
    return {key: document[key] for key in reversed(list(document))}


#: Server-made documents of an event whose own fields are reordered too (documentKey's order is the shard key's, and
#: fullDocument and the images are the application's documents, so they are left as they are).
_SERVER_MADE = ("ns", "to", "updateDescription", "operationDescription")


def other_key_order(mp: pytest.MonkeyPatch, observed: Observed) -> None:
    """Every change event comes with its fields in the reverse of mongod's order (the token last), and so do its
    ns, to, updateDescription and operationDescription; the aggregate's and getMore's replies and their cursor
    documents too."""
    original_order = changestreams._order_event_fields
    original_doc = secantus_commands._change_stream_cursor_doc
    original_aggregate = secantus_commands._aggregate_change_stream
    original_get_more = secantus_commands._HANDLERS["getMore"]

    def order_event_fields(event: dict[str, Any]) -> dict[str, Any]:
        ordered = original_order(event)
        for key in _SERVER_MADE:
            if isinstance(ordered.get(key), Mapping):
                ordered[key] = _reversed(ordered[key])
        observed.saw(f"{ordered.get('operationType')} event with its fields reversed")
        return _reversed(ordered)

    def cursor_doc(*args: Any, **kwargs: Any) -> dict[str, Any]:
        return _reversed(original_doc(*args, **kwargs))

    def aggregate(doc: Any, ctx: Any, coll: Any, pipeline: list[dict[str, Any]], batch_size: int) -> Any:
        reply = original_aggregate(doc, ctx, coll, pipeline, batch_size)
        if isinstance(reply, Mapping) and isinstance(reply.get("cursor"), Mapping):
            observed.saw("aggregate reply with its fields reversed")
            return _reversed({**reply, "cursor": _reversed(reply["cursor"])})
        return reply

    def get_more(doc: dict[str, Any], ctx: Any) -> Any:
        reply = original_get_more(doc, ctx)
        return _reversed(reply) if isinstance(reply, Mapping) and "cursor" in reply else reply

    mp.setattr(changestreams, "_order_event_fields", order_event_fields)
    mp.setattr(secantus_commands, "_change_stream_cursor_doc", cursor_doc)
    mp.setattr(secantus_commands, "_aggregate_change_stream", aggregate)
    mp.setitem(secantus_commands._HANDLERS, "getMore", get_more)


def other_token_shape(mp: pytest.MonkeyPatch, observed: Observed) -> None:
    """Resume tokens are ``{_data: <binary>, _typeBits: <binary>}`` (the shapes of MongoDB 3.6 and 4.0 together),
    not ``{_data: <hex string>}``; the server takes them back as start points."""
    original_make = changestreams.make_resume_token
    original_parse = changestreams.parse_resume_token

    def make_resume_token(data: Any) -> dict[str, Any]:
        token = original_make(data)
        observed.saw("token minted as {_data: binary, _typeBits: binary}")
        return {"_data": Binary(bytes.fromhex(token["_data"])), "_typeBits": Binary(b"\x00")}

    def parse_resume_token(token: Mapping[str, Any]) -> Any:
        if (
            isinstance(token, Mapping)
            and isinstance(token.get("_data"), bytes)
            and set(token) == {"_data", "_typeBits"}
        ):
            return original_parse({"_data": bytes(token["_data"]).hex()})
        return original_parse(token)

    mp.setattr(changestreams, "make_resume_token", make_resume_token)
    mp.setattr(changestreams, "parse_resume_token", parse_resume_token)


def ns_with_a_new_field(mp: pytest.MonkeyPatch, observed: Observed) -> None:
    """Every event's ``ns`` (and a rename's ``to``) carries a field beside db and coll, as a later server may add."""
    original = changestreams._ns_doc

    def ns_doc(ns: str) -> dict[str, Any]:
        found: dict[str, Any] = {**original(ns), "addedInFuture": 1}
        observed.saw(f"ns {ns} with a new field")
        return found

    mp.setattr(changestreams, "_ns_doc", ns_doc)


def _at(document: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(document, Mapping):
            document = document.get(part)
        elif isinstance(document, list) and part.isdigit() and int(part) < len(document):
            document = document[int(part)]
        else:
            return None
    return document


def truncation_as_whole_array(mp: pytest.MonkeyPatch, observed: Observed) -> None:
    """A shrunk array is reported as the whole new array in updatedFields, with no truncatedArrays entry: the other
    way the spec leaves to the server."""
    original = secantus_storage.pipeline_update_description

    def pipeline_update_description(pre: Mapping[str, Any], post: Mapping[str, Any]) -> Any:
        found = original(pre, post)
        if not found or not found.get("truncatedArrays"):
            return found
        updated = dict(found["updatedFields"])
        for entry in found["truncatedArrays"]:
            field = entry["field"]
            updated = {k: v for k, v in updated.items() if not k.startswith(f"{field}.")}
            updated[field] = _at(post, field)
            observed.saw(f"{field} truncated to {entry['newSize']}, reported whole in updatedFields")
        return {**found, "updatedFields": updated, "truncatedArrays": []}

    mp.setattr(secantus_storage, "pipeline_update_description", pipeline_update_description)


#: allowance id -> (its rules; the variation). specs/coverage/allowances/server.yml lists them.
ALLOWED_SERVER: dict[str, tuple[tuple[str, ...], Variation]] = {
    "empty first batch when a stream starts from a point": (
        (
            "CS-RESUME-ATTEMPT",
            "CS-RESUME-RESUMEAFTER",
            "CS-RESUME-REPEAT",
            "CS-RESUME-OPTIME",
            "CS-RTOKEN-START-OPTIONS",
            "SRV-SPEC-RESUMEAFTER",
            "SRV-SPEC-STARTAFTER",
            "SRV-SPEC-STARTATOPTIME",
            "SRV-RESUMEAFTER-EXCLUSIVE",
            "SRV-RTOKEN-RESUMEAFTER",
            "SRV-RTOKEN-STARTAFTER",
            "SRV-RTOKEN-STARTAFTER-INVALIDATE",
            "SRV-STARTAFTER-INVALIDATE",
            "SRV-START-AT-TIME",
        ),
        resumed_first_batch_empty,
    ),
    "empty getMore before the changes that wait": (
        (
            "CS-UTF-ITERUNTIL",
            "CS-UTF-ITERONCE",
            "CS-UTF-ITER-FIRST",
            "CS-TOKEN-CACHE-PBRT-EMPTY",
            "CS-TOKEN-CACHE-PBRT-LAST",
            "CS-TOKEN-CACHE-ID",
            "CS-TOKEN-EXPOSE-AFTERDOC",
            "CS-TOKEN-EXPOSE-EMPTY",
            "CS-TOKEN-TRACK",
            "CS-OPT-MAXAWAIT",
            "CS-EVENT-PASSTHROUGH",
            "CS-RESUME-RESUMEAFTER",
            "CS-RESUME-STEPS",
            "CS-CURSOR-TAILABLE",
        ),
        empty_get_more_before_changes,
    ),
    "batches cut short": (
        (
            "CS-TOKEN-CACHE-PBRT-LAST",
            "CS-UTF-ITER-FIRST",
            "CS-RTOKEN-INVALIDATE-CLOSED",
            "SRV-ORDER",
            "SRV-TXN-UNWIND",
            "SRV-SPLIT-LARGE",
            "SRV-INVALIDATE-EVENT",
            "SRV-INVALIDATE-DROP",
        ),
        one_change_per_batch,
    ),
    "fields in another order": (
        (
            "CS-EVENT-PASSTHROUGH",
            "CS-EVENT-NSFIELDS",
            "CS-TOKEN-CACHE-ID",
            "SRV-SPEC-EVENT-FIELDS",
            "SRV-SPEC-REPLY",
            "SRV-SPEC-UPDATEDESC",
            "SRV-SPEC-DOCKEY",
            "SRV-SPEC-TO",
            "SRV-SPEC-OPDESC",
            "SRV-EVENT-DML-TYPES",
            "SRV-UPDATE-DESC",
            "SRV-NS",
            "SRV-RENAME-TO",
            "SRV-TOKEN-ID",
            "SRV-INVALIDATE-EVENT",
            "SRV-FIELDS-BY-TYPE",
            "SRV-PBRT",
        ),
        other_key_order,
    ),
    "resume tokens of another shape": (
        (
            "CS-TOKEN-TRACK",
            "CS-TOKEN-CACHE-START",
            "CS-TOKEN-CACHE-PBRT-EMPTY",
            "CS-TOKEN-CACHE-PBRT-LAST",
            "CS-TOKEN-CACHE-ID",
            "CS-TOKEN-EXPOSE",
            "CS-TOKEN-EXPOSE-AFTERDOC",
            "CS-TOKEN-EXPOSE-EMPTY",
            "CS-RESUME-ATTEMPT",
            "CS-RESUME-RESUMEAFTER",
            "CS-RESUME-STARTAFTER",
            "CS-RESUME-STEPS",
            "CS-RTOKEN-START-OPTIONS",
            "CS-RTOKEN-INVALIDATE-CLOSED",
            "CS-EVENT-PASSTHROUGH",
        ),
        other_token_shape,
    ),
    "a new field in ns": (
        (
            "CS-EVENT-NSFIELDS",
            "CS-EVENT-PASSTHROUGH",
            "SRV-NS",
            "SRV-SPEC-EVENT-FIELDS",
            "SRV-SPEC-TO",
            "SRV-RENAME-TO",
            "SRV-INVALIDATE-DROP",
            "SRV-INVALIDATE-RENAME",
        ),
        ns_with_a_new_field,
    ),
    "truncation reported as the whole array": (
        ("SRV-SPEC-TRUNCATED",),
        truncation_as_whole_array,
    ),
}


@pytest.mark.parametrize("allowance_id", sorted(ALLOWED_SERVER))
def test_the_checks_accept_a_server_that_varies_as_permitted(run, monkeypatch, allowance_id):
    rules, variation = ALLOWED_SERVER[allowance_id]
    assert_checks_accept(run, monkeypatch, allowance_id, rules, variation)
