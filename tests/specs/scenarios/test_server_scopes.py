"""The overview's scope, cursor and parameter scenarios (server-scopes) fail for a broken server, and SecantusDB's
deviations from the overview are pinned: as shipped the scenario fails, and a SecantusDB patched to behave as the
overview says passes it (a fix shows up here and as an unexpected pass of the run).

Each breakage is SecantusDB with one function patched for one test: the oplog scan and the scope test that
decide which writes a stream sees, the change-stream ``aggregate`` handler (its reply's cursor namespace), the
batch builder (a getMore's batch and cursor id), the ``$changeStream`` parameter validation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import bson
import pytest
from secantus import changestreams
from secantus import commands as secantus_commands
from secantus.storage import Storage

from tests.specs.scenarios.test_supplementary import assert_rule_fails, scenarios_of
from tests.specs.scenarios.test_supplementary_server import Breakage, _cursor_doc, overview_run_settings

Reply = dict[str, Any]
#: The largest reply batch a server sends (16 MiB, the BSON document limit).
BSON_LIMIT = 16 * 1024 * 1024


@pytest.fixture(scope="module")
def overview_run():
    with overview_run_settings() as run:
        yield run


def _scope_widened(widen: Callable[[str, Mapping[str, Any]], bool | None]) -> Breakage:
    """A server whose streams see every oplog entry, and whose scope test answers ``widen(ns, scope)`` where
    that is not None."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        scan, matches = Storage.read_oplog_scan, changestreams._scope_matches

        def read_oplog_scan(self: Any, *, start_seq: int, limit: int, ns_filter: Any = None) -> Any:
            return scan(self, start_seq=start_seq, limit=limit, ns_filter=None)

        def scope_matches(ns: str, scope: Mapping[str, Any]) -> bool:
            widened = widen(ns, scope)
            return matches(ns, scope) if widened is None else widened

        mp.setattr(Storage, "read_oplog_scan", read_oplog_scan)
        mp.setattr(changestreams, "_scope_matches", scope_matches)

    return apply


def _siblings_seen(ns: str, scope: Mapping[str, Any]) -> bool | None:
    return ns.split(".", 1)[0] == scope["db"] if scope.get("kind") == "coll" else None


def _other_databases_seen(ns: str, scope: Mapping[str, Any]) -> bool | None:
    return True if scope.get("kind") == "db" else None


def _cluster_is_admin_only(ns: str, scope: Mapping[str, Any]) -> bool | None:
    return ns.startswith("admin.") if scope.get("kind") == "cluster" else None


def _aggregate_reply(change: Callable[[Reply, Any, Any], None]) -> Breakage:
    """The change-stream aggregate's reply changed by ``change(reply, ctx, coll)`` before it is sent."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = secantus_commands._aggregate_change_stream

        def aggregate(doc: Any, ctx: Any, coll: Any, pipeline: list[Any], batch_size: int) -> Reply:
            reply = original(doc, ctx, coll, pipeline, batch_size)
            if reply.get("ok"):
                change(reply, ctx, coll)
            return reply

        mp.setattr(secantus_commands, "_aggregate_change_stream", aggregate)

    return apply


def _namespace(of_kind: str, becomes: Callable[[str], str]) -> Callable[[Reply, Any, Any], None]:
    """The reply's cursor namespace rewritten for streams of one kind (coll, db, cluster)."""

    def change(reply: Reply, ctx: Any, coll: Any) -> None:
        kind = "coll" if isinstance(coll, str) else "cluster" if ctx.db_name == "admin" else "db"
        if kind == of_kind:
            reply["cursor"]["ns"] = becomes(ctx.db_name)

    return change


def _empty_get_more_closes(original: Any, args: tuple, kwargs: dict[str, Any]) -> Reply:
    cursor = original(*args, **kwargs)
    if kwargs.get("batch_key") == "nextBatch" and not cursor["nextBatch"]:
        cursor["id"] = type(cursor["id"])(0)
    return cursor


def _one_event_per_get_more(original: Any, args: tuple, kwargs: dict[str, Any]) -> Reply:
    entry, cursor_id, _batch_size, *rest = args
    return original(entry, cursor_id, 1, *rest, **kwargs)


def _validated_without(*fields: str, unknown: bool = False) -> Breakage:
    """$changeStream validated with ``fields`` (and, with ``unknown``, every unknown field) left unchecked."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = changestreams.validate_spec

        def validate_spec(spec: Mapping[str, Any]) -> None:
            kept = {k: v for k, v in spec.items() if k not in fields}
            if unknown:
                kept = {k: v for k, v in kept.items() if k in changestreams._KNOWN_SPEC_FIELDS}
            original(kept)

        mp.setattr(changestreams, "validate_spec", validate_spec)

    return apply


#: breakage -> (the rules whose scenarios must catch it, the patch)
BROKEN_SCOPES: dict[str, tuple[str, Breakage]] = {
    "collection stream sees its sibling collections": ("SRV-SCOPE-COLL", _scope_widened(_siblings_seen)),
    "database stream sees other databases": ("SRV-SCOPE-DB", _scope_widened(_other_databases_seen)),
    "all-cluster stream sees the admin database only": ("SRV-SCOPE-CLUSTER", _scope_widened(_cluster_is_admin_only)),
    "database stream's cursor named <db>.$cmd": (
        "SRV-DB-NAMESPACE",
        _aggregate_reply(_namespace("db", lambda db: f"{db}.$cmd")),
    ),
    "all-cluster stream's cursor named admin.$cmd": (
        "SRV-CLUSTER-NS",
        _aggregate_reply(_namespace("cluster", lambda db: "admin.$cmd")),
    ),
    "collection stream's cursor named for its database": (
        "SRV-OPEN-AGGREGATE",
        _aggregate_reply(_namespace("coll", lambda db: f"{db}.$cmd.aggregate")),
    ),
    "an empty getMore closes the cursor": (
        "SRV-CURSOR-TAILABLE, SRV-MAXTIME-EMPTY",
        _cursor_doc(_empty_get_more_closes),
    ),
    "a getMore returns one event at a time": ("SRV-GETMORE-PARTIAL", _cursor_doc(_one_event_per_get_more)),
    "unknown $changeStream parameters accepted": ("SRV-PARAMS-INVALID", _validated_without(unknown=True)),
    "fullDocument mode not validated": ("SRV-PARAMS-INVALID, SRV-OPEN-ERROR", _validated_without("fullDocument")),
    "startAtOperationTime type not validated": ("SRV-PARAMS-INVALID", _validated_without("startAtOperationTime")),
}


@pytest.mark.parametrize("breakage", sorted(BROKEN_SCOPES))
def test_a_server_that_breaks_a_scope_rule_fails_its_scenario(overview_run, monkeypatch, breakage):
    rules, patch = BROKEN_SCOPES[breakage]
    patch(monkeypatch)
    assert_rule_fails(overview_run, rules, breakage)


# -- SecantusDB's deviations, pinned ----------------------------------------------------------------------
def _refused(code: int, code_name: str, message: str) -> Reply:
    return {"ok": 0.0, "errmsg": message, "code": code, "codeName": code_name}


def _views_refused(mp: pytest.MonkeyPatch) -> None:
    """As mongod: a change stream on a view is refused (CommandNotSupportedOnView)."""
    original = secantus_commands._aggregate_change_stream

    def aggregate(doc: Any, ctx: Any, coll: Any, pipeline: list[Any], batch_size: int) -> Reply:
        if isinstance(coll, str) and ctx.storage.collection_exists(ctx.db_name, coll):
            if "viewOn" in ctx.storage.get_collection_options(ctx.db_name, coll):
                return _refused(166, "CommandNotSupportedOnView", "$changeStream is not supported on views")
        return original(doc, ctx, coll, pipeline, batch_size)

    mp.setattr(secantus_commands, "_aggregate_change_stream", aggregate)


def _all_changes_for_cluster_on_admin_only(mp: pytest.MonkeyPatch) -> None:
    """As mongod: allChangesForCluster only on admin, and on admin only with it (InvalidNamespace)."""
    original = secantus_commands._aggregate_change_stream

    def aggregate(doc: Any, ctx: Any, coll: Any, pipeline: list[Any], batch_size: int) -> Reply:
        flag = bool(pipeline[0]["$changeStream"].get("allChangesForCluster"))
        if flag != (ctx.db_name == "admin" and not isinstance(coll, str)):
            return _refused(73, "InvalidNamespace", "allChangesForCluster is for an aggregate: 1 on admin only")
        return original(doc, ctx, coll, pipeline, batch_size)

    mp.setattr(secantus_commands, "_aggregate_change_stream", aggregate)


def _post_image_from_the_pre_image(mp: pytest.MonkeyPatch) -> None:
    """As mongod: a whenAvailable/required post-image is the stored pre-image with the update applied."""
    original = changestreams.project

    def project(seq: int, oplog_entry: Any, **options: Any) -> tuple[Any, bool]:
        event, invalidates = original(seq, oplog_entry, **options)
        images = options["full_document_mode"] in ("whenAvailable", "required")
        if event is not None and images and event.get("operationType") == "update":
            pre = options["storage"].read_preimage(seq)
            if pre is not None:
                description = event["updateDescription"]
                post = {k: v for k, v in pre.items() if k not in description["removedFields"]}
                event = {**event, "fullDocument": {**post, **description["updatedFields"]}}
        return event, invalidates

    mp.setattr(changestreams, "project", project)


def _batches_within_16_mb(original: Any, args: tuple, kwargs: dict[str, Any]) -> Reply:
    """As mongod: a batch holds at least one event and stops before the event that would take it past 16 MiB."""
    entry, cursor_id, batch_size, *rest = args
    fitting, total = 0, 0
    for event in entry.remaining[:batch_size]:
        size = len(bson.encode(event))
        if fitting and total + size > BSON_LIMIT:
            break
        fitting, total = fitting + 1, total + size
    return original(entry, cursor_id, fitting or batch_size, *rest, **kwargs)


#: rule -> (the scenario's description, after the rule id; the patch that makes SecantusDB behave as the overview says)
DEVIATIONS: dict[str, tuple[str, Breakage]] = {
    "SRV-NO-VIEWS": ("an aggregate opening a change stream on a view is refused", _views_refused),
    "SRV-CLUSTER-ADMIN-ONLY": (
        "allChangesForCluster outside the admin database",
        _all_changes_for_cluster_on_admin_only,
    ),
    "SRV-BATCH-16MB": ("a getMore stops short of 16 MB", _cursor_doc(_batches_within_16_mb)),
    "SRV-POSTIMAGE": (
        "with fullDocument whenAvailable, an update event carries the document as",
        _post_image_from_the_pre_image,
    ),
}


def _deviating_scenario(rule: str):
    (test,) = [t for t in scenarios_of(rule) if t.description.startswith(f"{rule}: {DEVIATIONS[rule][0]}")]
    return test


@pytest.mark.parametrize("rule", sorted(DEVIATIONS))
def test_secantusdb_deviates_as_listed_and_a_server_that_follows_the_overview_passes(overview_run, monkeypatch, rule):
    """As shipped the scenario fails (its expected-outcomes entry); with the overview's behaviour patched in, it
    passes, so the scenario tells the two apart."""
    test = _deviating_scenario(rule)
    verdict = overview_run.verdict(test)
    assert verdict.outcome == "failed", f"{rule}: SecantusDB now passes (drop its expected-outcomes entry)"
    DEVIATIONS[rule][1](monkeypatch)
    verdict = overview_run.verdict(test)
    assert verdict.outcome == "passed", verdict.message
