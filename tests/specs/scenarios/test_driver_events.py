"""The checks of the spec's Response Format and of the watch helpers' scope fail for a broken server or driver.

The change-streams spec describes what the server sends (each event type's fields, the replies' shape,
what each fullDocument mode adds, the expanded events) and what the driver must pass on unchanged. The
rules are checked by ``specs/scenarios/supplementary/driver-events.yml`` and by the upstream tests the
mapping names. Each breakage here is either SecantusDB with one function patched for the length of one
test (an event field left out or added where the spec says it is absent, a reply without its
postBatchResumeToken or operationTime, a stage refused) or pymongo with one patched (an event field
dropped on the way to the user, a helper that watches the wrong scope, a comment turned into a string);
the rule's checks must then fail, none erroring, while the unbroken pair passes them. Entries marked
``(async)`` patch pymongo's asynchronous API alone and are caught through ``--driver pymongo-async``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from bson import Binary
from secantus import aggregate as secantus_aggregate
from secantus import changestreams
from secantus import commands as secantus_commands
from secantus import server as secantus_server
from secantus import storage as secantus_storage

from tests.specs.scenarios.test_driver_upstream import ASYNC, SYNC, Api, assert_caught, open_runs, wrap_result

Patch = Callable[[pytest.MonkeyPatch, Any], None]
Event = dict[str, Any]


def _server_events(edit: Callable[[Event, dict[str, Any]], Event | None]) -> Patch:
    """A server whose change events pass through ``edit(event, options)`` (None: the event is not reported)."""

    def apply(mp: pytest.MonkeyPatch, api: Any) -> None:
        original = changestreams.project

        def project(seq: int, oplog_entry: Any, **options: Any) -> tuple[Any, bool]:
            event, invalidates = original(seq, oplog_entry, **options)
            return (event, invalidates) if event is None else (edit(dict(event), options), invalidates)

        mp.setattr(changestreams, "project", project)

    return apply


def _drop(field: str, *operation_types: str) -> Callable[[Event, dict[str, Any]], Event]:
    def edit(event: Event, options: dict[str, Any]) -> Event:
        if not operation_types or event.get("operationType") in operation_types:
            event.pop(field, None)
        return event

    return edit


def _add(field: str, value: Callable[[Event], Any], *operation_types: str) -> Callable[[Event, dict[str, Any]], Event]:
    def edit(event: Event, options: dict[str, Any]) -> Event:
        if event.get("operationType") in operation_types:
            event[field] = value(event)
        return event

    return edit


def _edit_update_description(change: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[Event, Any], Event]:
    def edit(event: Event, options: dict[str, Any]) -> Event:
        if isinstance(event.get("updateDescription"), dict):
            event["updateDescription"] = change(dict(event["updateDescription"]))
        return event

    return edit


def _ns_without_db(event: Event, options: dict[str, Any]) -> Event:
    """A data event's ns without its db (a field added beside db and coll would be permitted, not a breakage)."""
    if isinstance(event.get("ns"), dict) and "coll" in event["ns"]:
        event["ns"] = {k: v for k, v in event["ns"].items() if k != "db"}
    return event


def _truncation_size_off_by_one(description: dict[str, Any]) -> dict[str, Any]:
    truncated = description.get("truncatedArrays")
    if truncated:
        description["truncatedArrays"] = [{**entry, "newSize": entry["newSize"] + 1} for entry in truncated]
    return description


def _on_every_event(field: str, value: Any) -> Callable[[Event, dict[str, Any]], Event]:
    """``field`` added to every event that lacks it, whatever its type and the stream's options."""

    def edit(event: Event, options: dict[str, Any]) -> Event:
        event.setdefault(field, value)
        return event

    return edit


def _not_reported(operation_type: str) -> Callable[[Event, dict[str, Any]], Event | None]:
    return lambda event, options: None if event.get("operationType") == operation_type else event


def _image_mode(function: str, asked: str, used: str) -> Patch:
    """A server that serves image mode ``asked`` as if ``used`` had been asked for."""

    def apply(mp: pytest.MonkeyPatch, api: Any) -> None:
        original = getattr(changestreams, function)
        key = "full_document_mode" if function == "_attach_full_document" else "mode"

        def attach(*args: Any, **kwargs: Any) -> Any:
            if kwargs.get(key) == asked:
                kwargs[key] = used
            return original(*args, **kwargs)

        mp.setattr(changestreams, function, attach)

    return apply


def _missing_pre_image_left_out(mp: pytest.MonkeyPatch, api: Any) -> None:
    """whenAvailable without a pre-image: the field is left out instead of being null."""
    original = changestreams._attach_full_document_before_change

    def attach(event: Event, *args: Any, **kwargs: Any) -> None:
        original(event, *args, **kwargs)
        if "fullDocumentBeforeChange" in event and event["fullDocumentBeforeChange"] is None:
            del event["fullDocumentBeforeChange"]

    mp.setattr(changestreams, "_attach_full_document_before_change", attach)


def _deleted_lookup_left_out(mp: pytest.MonkeyPatch, api: Any) -> None:
    """updateLookup of a document deleted since: fullDocument left out instead of null."""
    original = changestreams._attach_full_document

    def attach(event: Event, *args: Any, **kwargs: Any) -> None:
        original(event, *args, **kwargs)
        if event.get("operationType") == "update" and "fullDocument" in event and event["fullDocument"] is None:
            del event["fullDocument"]

    mp.setattr(changestreams, "_attach_full_document", attach)


def _server_replies(change: Callable[[dict[str, Any], dict[str, Any]], None]) -> Patch:
    """A server whose every reply to a command ``doc`` goes through ``change(doc, reply)``."""

    def apply(mp: pytest.MonkeyPatch, api: Any) -> None:
        original = secantus_server.dispatch

        def dispatch(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
            reply = original(doc, ctx)
            change(doc, reply)
            return reply

        mp.setattr(secantus_server, "dispatch", dispatch)

    return apply


def _no_operation_time(doc: dict[str, Any], reply: dict[str, Any]) -> None:
    if next(iter(doc), "") == "insert":
        reply.pop("operationTime", None)


def _batches(change: Callable[[dict[str, Any]], None]) -> Patch:
    """A server whose change-stream cursor documents go through ``change(cursor)``."""

    def apply(mp: pytest.MonkeyPatch, api: Any) -> None:
        original = secantus_commands._change_stream_cursor_doc

        def cursor_doc(*args: Any, **kwargs: Any) -> dict[str, Any]:
            cursor = original(*args, **kwargs)
            change(cursor)
            return cursor

        mp.setattr(secantus_commands, "_change_stream_cursor_doc", cursor_doc)

    return apply


def _no_post_batch_resume_token_on_get_more(cursor: dict[str, Any]) -> None:
    if "nextBatch" in cursor:
        cursor.pop("postBatchResumeToken", None)


def _stage_refused(stage: str) -> Patch:
    return lambda mp, api: mp.delitem(secantus_aggregate._STAGES, stage)


def _inclusive_resume_after(mp: pytest.MonkeyPatch, api: Any) -> None:
    """A server that resumes AT the token's change instead of after it."""
    original = changestreams.parse_resume_token

    def parse(token: Any) -> Any:
        data = original(token)
        data.seq -= 1
        return data

    mp.setattr(changestreams, "parse_resume_token", parse)


def _start_time_exclusive(mp: pytest.MonkeyPatch, api: Any) -> None:
    """A server that starts a startAtOperationTime stream after the first change at or after the time."""
    original = secantus_storage.Storage.find_seq_for_ts
    mp.setattr(secantus_storage.Storage, "find_seq_for_ts", lambda self, ts, **kw: original(self, ts, **kw) + 1)


def _start_time_ignored(mp: pytest.MonkeyPatch, api: Any) -> None:
    """A server that opens a startAtOperationTime stream at the present, as if no time were given."""
    original = changestreams.parse_spec

    def parse_spec(spec: Any) -> Any:
        parsed = original(spec)
        parsed.start_at_operation_time = None
        return parsed

    mp.setattr(changestreams, "parse_spec", parse_spec)


# -- driver breakages -----------------------------------------------------------------------------------


def _driver_events(edit: Callable[[Event], Event]) -> Patch:
    """A driver that hands the user each event after ``edit`` (a field lost or rewritten on the way)."""

    def after(stream: Any, document: Any) -> Any:
        return document if document is None else edit(dict(document))

    return lambda mp, api: wrap_result(api.stream, "try_next", after)(mp)


def _driver_drops(field: str) -> Callable[[Event], Event]:
    def edit(event: Event) -> Event:
        event.pop(field, None)
        return event

    return edit


def _driver_trims_update_description(event: Event) -> Event:
    if isinstance(event.get("updateDescription"), dict):
        event["updateDescription"] = {k: v for k, v in event["updateDescription"].items() if k != "truncatedArrays"}
    return event


def _watch_scope(kind: str) -> Patch:
    """A driver whose database streams watch the cluster (``widened``), or whose client streams lose
    ``allChangesForCluster`` (``narrowed``)."""

    def apply(mp: pytest.MonkeyPatch, api: Any) -> None:
        database_stream = api.stream if kind == "widened" else api.cluster_stream
        original = database_stream._aggregation_pipeline

        def pipeline(self: Any) -> list[dict[str, Any]]:
            stages = original(self)
            stage = dict(stages[0]["$changeStream"])
            if kind == "narrowed" and isinstance(self, api.cluster_stream):
                stage.pop("allChangesForCluster", None)
            elif kind == "widened" and type(self).__name__.endswith("DatabaseChangeStream"):
                stage["allChangesForCluster"] = True
                self._target = self._target.client.get_database("admin", codec_options=self._target.codec_options)
            return [{"$changeStream": stage}, *stages[1:]]

        mp.setattr(database_stream, "_aggregation_pipeline", pipeline)

    return apply


def _comment_as_string(mp: pytest.MonkeyPatch, api: Any) -> None:
    """A driver that sends a non-string comment as its string form."""
    original = api.stream.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        if self._comment is not None and not isinstance(self._comment, str):
            self._comment = str(self._comment)

    mp.setattr(api.stream, "__init__", init)


REPLICA_SET = "replicaset"


def _server(rules: str, patch: Patch) -> tuple[str, Patch, Api, str]:
    return (rules, patch, SYNC, REPLICA_SET)


#: breakage -> (the rules (ids joined by ", ") whose checks must catch it, the patch, the API run, the target)
BROKEN_EVENTS: dict[str, tuple[str, Patch, Api, str]] = {
    # the server
    "server wallTime left out": _server("SRV-SPEC-EVENT-FIELDS", _server_events(_drop("wallTime"))),
    "server clusterTime left out": _server("SRV-SPEC-EVENT-FIELDS", _server_events(_drop("clusterTime"))),
    "server ns without db": _server("SRV-SPEC-EVENT-FIELDS", _server_events(_ns_without_db)),
    "server documentKey on a delete left out": _server(
        "SRV-SPEC-DOCKEY", _server_events(_drop("documentKey", "delete"))
    ),
    "server documentKey carries the whole document": _server(
        "SRV-SPEC-DOCKEY", _server_events(_add("documentKey", lambda e: e.get("fullDocument"), "insert"))
    ),
    "server removedFields lost": _server(
        "SRV-SPEC-UPDATEDESC", _server_events(_edit_update_description(lambda d: {**d, "removedFields": []}))
    ),
    "server updateDescription on replace events": _server(
        "SRV-SPEC-UPDATEDESC",
        _server_events(_add("updateDescription", lambda e: {"updatedFields": {}, "removedFields": []}, "replace")),
    ),
    "server truncatedArrays left out": _server(
        "SRV-SPEC-TRUNCATED",
        _server_events(_edit_update_description(lambda d: {k: v for k, v in d.items() if k != "truncatedArrays"})),
    ),
    "server truncation reported with the wrong size": _server(
        "SRV-SPEC-TRUNCATED", _server_events(_edit_update_description(_truncation_size_off_by_one))
    ),
    "server disambiguatedPaths left out": _server(
        "SRV-SPEC-DISAMBIGUATED",
        _server_events(_edit_update_description(lambda d: {k: v for k, v in d.items() if k != "disambiguatedPaths"})),
    ),
    "server replace without fullDocument": _server(
        "SRV-SPEC-FULLDOC", _server_events(_drop("fullDocument", "replace"))
    ),
    "server every update looked up": _server(
        "SRV-SPEC-FULLDOC", _image_mode("_attach_full_document", "default", "updateLookup")
    ),
    "server a deleted document's lookup left out": _server("SRV-SPEC-FULLDOC", _deleted_lookup_left_out),
    "server required post-image served as whenAvailable": _server(
        "SRV-SPEC-POSTIMAGE", _image_mode("_attach_full_document", "required", "whenAvailable")
    ),
    "server whenAvailable post-image left out": _server(
        "SRV-SPEC-POSTIMAGE", _image_mode("_attach_full_document", "whenAvailable", "default")
    ),
    "server required pre-image served as whenAvailable": _server(
        "SRV-SPEC-PREIMAGE", _image_mode("_attach_full_document_before_change", "required", "whenAvailable")
    ),
    "server missing pre-image left out instead of null": _server("SRV-SPEC-PREIMAGE", _missing_pre_image_left_out),
    "server createIndexes not reported": _server("SRV-SPEC-EXPANDED", _server_events(_not_reported("createIndexes"))),
    "server modify not reported": _server("SRV-SPEC-EXPANDED", _server_events(_not_reported("modify"))),
    "server operationDescription left out": _server("SRV-SPEC-OPDESC", _server_events(_drop("operationDescription"))),
    "server collectionUUID left out": _server("SRV-SPEC-COLLUUID", _server_events(_drop("collectionUUID"))),
    "server nsType left out": _server("SRV-SPEC-NSTYPE", _server_events(_drop("nsType"))),
    "server rename without to": _server("SRV-SPEC-TO", _server_events(_drop("to", "rename"))),
    "server getMore replies without postBatchResumeToken": _server(
        "SRV-SPEC-REPLY", _batches(_no_post_batch_resume_token_on_get_more)
    ),
    "server insert replies without operationTime": _server("SRV-SPEC-OPTIME", _server_replies(_no_operation_time)),
    "server $redact refused after $changeStream": _server("SRV-SPEC-STAGES", _stage_refused("$redact")),
    "server $addFields refused after $changeStream": _server("SRV-SPEC-STAGES", _stage_refused("$addFields")),
    "server resumeAfter inclusive": _server("SRV-SPEC-RESUMEAFTER", _inclusive_resume_after),
    "server startAtOperationTime exclusive": _server("SRV-SPEC-STARTATOPTIME", _start_time_exclusive),
    "server startAtOperationTime ignored": _server("SRV-SPEC-STARTATOPTIME", _start_time_ignored),
    "server collectionUUID on every event": _server(
        "SRV-SPEC-COLLUUID", _server_events(_on_every_event("collectionUUID", Binary(bytes(16), 4)))
    ),
    "server operationDescription on every event": _server(
        "SRV-SPEC-OPDESC", _server_events(_on_every_event("operationDescription", {}))
    ),
    "server nsType on every event": _server("SRV-SPEC-NSTYPE", _server_events(_on_every_event("nsType", "collection"))),
    "server to on every event": _server(
        "SRV-SPEC-TO", _server_events(_on_every_event("to", {"db": "elsewhere", "coll": "elsewhere"}))
    ),
    # the driver
    "events handed over without wallTime": (
        "CS-EVENT-PASSTHROUGH",
        _driver_events(_driver_drops("wallTime")),
        SYNC,
        REPLICA_SET,
    ),
    "events handed over without truncatedArrays (async)": (
        "CS-EVENT-PASSTHROUGH",
        _driver_events(_driver_trims_update_description),
        ASYNC,
        REPLICA_SET,
    ),
    "database streams watch the cluster": ("CS-API-DB-WATCH", _watch_scope("widened"), SYNC, REPLICA_SET),
    "database streams watch the cluster (async)": ("CS-API-DB-WATCH", _watch_scope("widened"), ASYNC, REPLICA_SET),
    "client streams without allChangesForCluster": (
        "CS-API-CLUSTER-WATCH",
        _watch_scope("narrowed"),
        SYNC,
        REPLICA_SET,
    ),
    "a document comment sent as a string": ("CS-OPT-COMMENT-ANYTYPE", _comment_as_string, SYNC, REPLICA_SET),
    "a document comment sent as a string (async)": ("CS-OPT-COMMENT-ANYTYPE", _comment_as_string, ASYNC, REPLICA_SET),
}


@pytest.fixture(scope="module")
def runs():
    yield from open_runs()


@pytest.mark.parametrize("breakage", sorted(BROKEN_EVENTS))
def test_the_checks_of_the_rule_fail_for_a_broken_server_or_driver(runs, monkeypatch, breakage):
    assert_caught(runs, monkeypatch, breakage, BROKEN_EVENTS[breakage])
