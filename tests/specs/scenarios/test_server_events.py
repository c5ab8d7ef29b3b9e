"""The overview's event scenarios (server-event-shapes, server-images, server-expanded, server-transactions) fail
for a broken server.

Each breakage is SecantusDB with one function patched for one test: the projection of an oplog entry into an
event (``secantus.changestreams.project``), the invalidate event's builder, the image lookups, the batch
builder. Most change one code path only (one event type, one option, one mode), the mistakes a check that
compares a part of an event would miss. The rule's scenarios must then fail, and none of them error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from secantus import changestreams
from secantus import commands as secantus_commands

from tests.specs.scenarios.test_supplementary import assert_rule_fails
from tests.specs.scenarios.test_supplementary_server import (
    Breakage,
    _cursor_doc,
    _edit_events,
    _with_options,
    _without_field,
    overview_run_settings,
)

Event = dict[str, Any]
Edit = Callable[[Event, bool, dict[str, Any]], tuple[Event, bool]]


def _on(operation_type: str, change: Callable[[Event, dict[str, Any]], None]) -> Breakage:
    """Events of one operationType changed in place by ``change(event, options)``; the others untouched."""

    def edit(event: Event, invalidates: bool, options: dict[str, Any]) -> tuple[Event, bool]:
        if event.get("operationType") == operation_type:
            change(event, options)
        return event, invalidates

    return _edit_events(edit)


def _set(field: str, value: Any) -> Callable[[Event, dict[str, Any]], None]:
    return lambda event, options: event.__setitem__(field, value)


def _retyped(event: Event, options: dict[str, Any]) -> None:
    event["operationType"] = "update"
    event.pop("fullDocument", None)
    event["updateDescription"] = {"updatedFields": {}, "removedFields": [], "truncatedArrays": []}


def _invalidate(change: Callable[[Event], None]) -> Breakage:
    """Invalidate events changed in place by ``change``."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = changestreams.invalidate_event

        def invalidate_event(seq: int, oplog_entry: Any) -> Event:
            event = original(seq, oplog_entry)
            change(event)
            return event

        mp.setattr(changestreams, "invalidate_event", invalidate_event)

    return apply


def _token_as_document_key(event: Event, invalidates: bool, options: dict[str, Any]) -> tuple[Event, bool]:
    if "documentKey" in event:
        event["_id"] = dict(event["documentKey"])
    return event, invalidates


def _token_with(extra: dict[str, Any]) -> Edit:
    def edit(event: Event, invalidates: bool, options: dict[str, Any]) -> tuple[Event, bool]:
        event["_id"] = {**event["_id"], **extra}
        return event, invalidates

    return edit


def _removed_fields_set_to_null(event: Event, options: dict[str, Any]) -> None:
    """A removed field reported as set to null rather than listed in removedFields."""
    description = event["updateDescription"]
    if description.get("removedFields"):
        nulls = dict.fromkeys(description["removedFields"])
        event["updateDescription"] = {
            **description,
            "updatedFields": {**description["updatedFields"], **nulls},
            "removedFields": [],
        }


def _raw_update_description(event: Event, options: dict[str, Any]) -> None:
    event["rawUpdateDescription"] = dict(event.get("updateDescription", {}))


def _project_ignored(mp: pytest.MonkeyPatch) -> None:
    """The stages after $changeStream applied without their $project stages."""
    original = secantus_commands.apply_pipeline

    def apply_pipeline(docs: Any, pipeline: list[Any], ctx: Any) -> Any:
        if getattr(ctx, "change_stream", None) is not None:
            pipeline = [stage for stage in pipeline if "$project" not in stage]
        return original(docs, pipeline, ctx)

    mp.setattr(secantus_commands, "apply_pipeline", apply_pipeline)


def _drops_of_a_dropped_database_not_logged(mp: pytest.MonkeyPatch) -> None:
    """dropDatabase logs itself only, not the drop of each of its collections."""
    from secantus.storage import Storage

    original = Storage._emit_oplog

    def emit(self: Any, entries: list[dict[str, Any]], *args: Any, **kwargs: Any) -> int:
        if any("dropDatabase" in entry.get("o", {}) for entry in entries):
            entries = [entry for entry in entries if "drop" not in entry.get("o", {})]
        return original(self, entries, *args, **kwargs)

    mp.setattr(Storage, "_emit_oplog", emit)


# -- images -------------------------------------------------------------------------------------------------
def _project_with_seq(change: Callable[[int, Event, dict[str, Any]], None]) -> Breakage:
    """Events changed by ``change(seq, event, options)`` after projection (the oplog position is needed to
    read the stored pre-image)."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = changestreams.project

        def project(seq: int, oplog_entry: Any, **options: Any) -> tuple[Any, bool]:
            event, invalidates = original(seq, oplog_entry, **options)
            if event is not None:
                event = dict(event)
                change(seq, event, options)
            return event, invalidates

        mp.setattr(changestreams, "project", project)

    return apply


def _post_image_is_the_pre_image(seq: int, event: Event, options: dict[str, Any]) -> None:
    if event.get("operationType") == "update" and options["full_document_mode"] in ("whenAvailable", "required"):
        event["fullDocument"] = options["storage"].read_preimage(seq)


def _pre_image_looked_up_now(seq: int, event: Event, options: dict[str, Any]) -> None:
    if "fullDocumentBeforeChange" in event and event["fullDocumentBeforeChange"] is not None:
        ns = event["ns"]
        found = options["storage"].find_matching(ns["db"], ns["coll"], event["documentKey"], limit=1)
        event["fullDocumentBeforeChange"] = found[0] if found else None


def _insert_with_null_pre_image(seq: int, event: Event, options: dict[str, Any]) -> None:
    if event.get("operationType") == "insert" and options["full_document_before_change_mode"] == "whenAvailable":
        event["fullDocumentBeforeChange"] = None


def _missing_pre_image_omitted(seq: int, event: Event, options: dict[str, Any]) -> None:
    if event.get("fullDocumentBeforeChange", 0) is None:
        del event["fullDocumentBeforeChange"]


def _no_full_document_on_required_updates(seq: int, event: Event, options: dict[str, Any]) -> None:
    if event.get("operationType") == "update" and options["full_document_mode"] == "required":
        event.pop("fullDocument", None)


def _lookup_finds_empty_document(seq: int, event: Event, options: dict[str, Any]) -> None:
    if options["full_document_mode"] == "updateLookup" and event.get("fullDocument", 0) is None:
        event["fullDocument"] = {}


def _mode(option: str, when: str, becomes: str) -> Breakage:
    """A stream opened with ``option`` = ``when`` served as if it had been ``becomes``."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = changestreams.project

        def project(seq: int, oplog_entry: Any, **options: Any) -> tuple[Any, bool]:
            if options.get(option) == when:
                options = {**options, option: becomes}
            return original(seq, oplog_entry, **options)

        mp.setattr(changestreams, "project", project)

    return apply


def _post_images_without_the_collection_option(mp: pytest.MonkeyPatch) -> None:
    """whenAvailable and required look the document up even where the collection keeps no images."""
    from secantus.storage import Storage

    mp.setattr(Storage, "_pre_post_images_enabled", lambda self, db, coll: True)


# -- showExpandedEvents -------------------------------------------------------------------------------------
def _hidden(operation_type: str) -> Breakage:
    """Events of ``operation_type`` never reported, showExpandedEvents or not."""

    def edit(event: Event, invalidates: bool, options: dict[str, Any]) -> tuple[Any, bool]:
        return (None, invalidates) if event.get("operationType") == operation_type else (event, invalidates)

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = changestreams.project

        def project(seq: int, oplog_entry: Any, **options: Any) -> tuple[Any, bool]:
            event, invalidates = original(seq, oplog_entry, **options)
            return (event, invalidates) if event is None else edit(event, invalidates, options)

        mp.setattr(changestreams, "project", project)

    return apply


def _index_description_without_key(event: Event, options: dict[str, Any]) -> None:
    event["operationDescription"] = {
        "indexes": [
            {k: v for k, v in index.items() if k != "key"} for index in event["operationDescription"]["indexes"]
        ]
    }


def _uuid_only_on_ddl(event: Event, invalidates: bool, options: dict[str, Any]) -> tuple[Event, bool]:
    if "documentKey" in event:
        event.pop("collectionUUID", None)
    return event, invalidates


def _uuid_always(mp: pytest.MonkeyPatch) -> None:
    """collectionUUID on every data event, showExpandedEvents or not."""
    original = changestreams.project

    def project(seq: int, oplog_entry: Any, **options: Any) -> tuple[Any, bool]:
        event, invalidates = original(seq, oplog_entry, **options)
        if event is not None and "documentKey" in event and oplog_entry.get("ui") is not None:
            event = {**event, "collectionUUID": oplog_entry["ui"]}
        return event, invalidates

    mp.setattr(changestreams, "project", project)


def _disambiguated_paths_dropped(event: Event, options: dict[str, Any]) -> None:
    event["updateDescription"] = {k: v for k, v in event["updateDescription"].items() if k != "disambiguatedPaths"}


def _disambiguated_paths_always(event: Event, options: dict[str, Any]) -> None:
    if not options["show_expanded_events"]:
        description = event["updateDescription"]
        paths = {path: path.split(".") for path in description["updatedFields"] if "." in path}
        event["updateDescription"] = {**description, "disambiguatedPaths": paths}


def _leaks(operation_type: str) -> Breakage:
    """Events of ``operation_type`` reported even without showExpandedEvents (the other DDL stays hidden)."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = changestreams.project

        def project(seq: int, oplog_entry: Any, **options: Any) -> tuple[Any, bool]:
            event, invalidates = original(seq, oplog_entry, **options)
            if event is None and not options.get("show_expanded_events"):
                expanded, _ = original(seq, oplog_entry, **{**options, "show_expanded_events": True})
                if expanded is not None and expanded.get("operationType") == operation_type:
                    expanded = {k: v for k, v in expanded.items() if k != "collectionUUID"}
                    return expanded, invalidates
            return event, invalidates

        mp.setattr(changestreams, "project", project)

    return apply


def _rename_description_without_to(event: Event, options: dict[str, Any]) -> None:
    if "operationDescription" in event:
        event["operationDescription"] = {}


# -- transactions -------------------------------------------------------------------------------------------
def _transaction_events_reversed(original: Any, args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Within a batch, the events of a transaction (those with an lsid) in reverse order."""
    entry = args[0]
    in_txn = [event for event in entry.remaining if "lsid" in event]
    reordered = iter(reversed(in_txn))
    entry.remaining = [next(reordered) if "lsid" in event else event for event in entry.remaining]
    return original(*args, **kwargs)


@pytest.fixture(scope="module")
def overview_run():
    with overview_run_settings() as run:
        yield run


_PRE = "full_document_before_change_mode"

#: breakage -> (the rules whose scenarios must catch it, the patch)
BROKEN_EVENTS: dict[str, tuple[str, Breakage]] = {
    # event shapes
    "replace reported as an update": ("SRV-EVENT-DML-TYPES", _on("replace", _retyped)),
    "delete carries fullDocument null": ("SRV-FIELDS-BY-TYPE", _on("delete", _set("fullDocument", None))),
    "drop carries an empty documentKey": ("SRV-FIELDS-BY-TYPE", _on("drop", _set("documentKey", {}))),
    "token is the documentKey": ("SRV-TOKEN-ID", _edit_events(_token_as_document_key)),
    "invalidate without a token": ("SRV-TOKEN-ID", _invalidate(lambda event: event.pop("_id"))),
    "event tokens carry a version field": ("SRV-TOKEN-FORMAT", _edit_events(_token_with({"v": 2}))),
    "rawUpdateDescription on updates": ("SRV-RAW-UPDATE-DEFAULT", _on("update", _raw_update_description)),
    "$project stage ignored": ("SRV-PROJECT-FIELDS", _project_ignored),
    "invalidate carries a documentKey": (
        "SRV-INVALIDATE-EVENT",
        _invalidate(lambda event: event.update(documentKey={})),
    ),
    "invalidate without wallTime": ("SRV-INVALIDATE-EVENT", _invalidate(lambda event: event.pop("wallTime"))),
    "a dropped database's collections not dropped one by one": (
        "SRV-INVALIDATE-COLL-DROPDB",
        _drops_of_a_dropped_database_not_logged,
    ),
    "removed fields reported as set to null": ("SRV-UPDATE-DESC", _on("update", _removed_fields_set_to_null)),
    # images
    "post-image is the pre-image": ("SRV-POSTIMAGE", _project_with_seq(_post_image_is_the_pre_image)),
    "required gives updates no fullDocument": (
        "SRV-FULLDOC-UPDATE",
        _project_with_seq(_no_full_document_on_required_updates),
    ),
    "whenAvailable looks documents up without images": (
        "SRV-POSTIMAGE-MISSING",
        _post_images_without_the_collection_option,
    ),
    "required post-image treated as whenAvailable": (
        "SRV-POSTIMAGE-REQUIRED",
        _mode("full_document_mode", "required", "whenAvailable"),
    ),
    "pre-image looked up when the event is read": ("SRV-PREIMAGE", _project_with_seq(_pre_image_looked_up_now)),
    "insert carries a null pre-image": ("SRV-PREIMAGE-TYPES", _project_with_seq(_insert_with_null_pre_image)),
    "missing pre-image omitted instead of null": (
        "SRV-PREIMAGE-MISSING",
        _project_with_seq(_missing_pre_image_omitted),
    ),
    "required pre-image treated as whenAvailable": (
        "SRV-PREIMAGE-REQUIRED",
        _mode(_PRE, "required", "whenAvailable"),
    ),
    "pre-image off treated as whenAvailable": (
        "SRV-PREIMAGE-OFF",
        _mode(_PRE, "off", "whenAvailable"),
    ),
    "pre-images by default": ("SRV-PREIMAGE-OFF", _with_options(full_document_before_change_mode="whenAvailable")),
    "updateLookup finds an empty document for a deleted one": (
        "SRV-FULLDOC-LOOKUP",
        _project_with_seq(_lookup_finds_empty_document),
    ),
    "fullDocument default treated as updateLookup": (
        "SRV-UPDATE-DEFAULT",
        _mode("full_document_mode", "default", "updateLookup"),
    ),
    # showExpandedEvents
    "createIndexes never reported": ("SRV-EXPANDED-DDL", _hidden("createIndexes")),
    "create never reported": ("SRV-EXPANDED-DDL", _hidden("create")),
    "index description without its key": ("SRV-EXPANDED-OPDESC", _on("createIndexes", _index_description_without_key)),
    "rename description empty": ("SRV-EXPANDED-OPDESC", _on("rename", _rename_description_without_to)),
    "collectionUUID only on DDL events": ("SRV-EXPANDED-UUID", _edit_events(_uuid_only_on_ddl)),
    "collectionUUID without showExpandedEvents": ("SRV-EXPANDED-UUID", _uuid_always),
    "disambiguatedPaths left out": ("SRV-EXPANDED-DISAMBIGUATED", _on("update", _disambiguated_paths_dropped)),
    "collMod reported without showExpandedEvents": ("SRV-DML-ONLY", _leaks("modify")),
    "disambiguatedPaths without showExpandedEvents": (
        "SRV-EXPANDED-DISAMBIGUATED",
        _on("update", _disambiguated_paths_always),
    ),
    # transactions
    "transaction events without lsid": ("SRV-TXN-UNWIND", _without_field("lsid")),
    "transaction events without txnNumber": ("SRV-TXN-UNWIND", _without_field("txnNumber")),
    "transaction events reversed": ("SRV-TXN-UNWIND", _cursor_doc(_transaction_events_reversed)),
}


@pytest.mark.parametrize("breakage", sorted(BROKEN_EVENTS))
def test_a_server_that_breaks_an_event_rule_fails_its_scenario(overview_run, monkeypatch, breakage):
    rules, patch = BROKEN_EVENTS[breakage]
    patch(monkeypatch)
    assert_rule_fails(overview_run, rules, breakage)
