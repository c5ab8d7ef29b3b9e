"""The server checks (prose_tests/server_checks.py) judge the server alone, and each is proven by a broken server.

SecantusDB 0.7 as shipped opens a change stream for an aggregate naming two start points (a known deviation,
reproduced by tests/repro/secantusdb/secantusdb_two_start_points.py), so the check fails on it and names every
pair; SecantusDB patched to refuse each pair, as mongod does, passes; one that refuses one pair only still
fails, naming the two others (a breakage of one code path of three).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from secantus import changestreams
from secantus import commands as secantus_commands
from secantus.storage import Storage

from prose_tests.server_checks import START_POINTS, load_server_checks
from prose_tests.server_event_checks import BEFORE_REPLACE, EMPTY_WAIT_MS

#: Each check by the first rule id of its name.
CHECKS = {check.name.split(":", 1)[0].split(",")[0]: check for check in load_server_checks()}
#: A patch of the embedded SecantusDB, applied with pytest's monkeypatch (undone after the test).
Breakage = Callable[[pytest.MonkeyPatch], None]


def _refuses(pairs: set[frozenset[str]]):
    """SecantusDB refusing (code 40674, as mongod) an aggregate whose $changeStream names one of ``pairs``."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = secantus_commands._aggregate_change_stream

        def aggregate(doc: Any, ctx: Any, coll: Any, pipeline: list[dict[str, Any]], batch_size: int) -> Any:
            named = frozenset(pipeline[0].get("$changeStream", {})) & set(START_POINTS) if pipeline else frozenset()
            if named in pairs:
                return {"ok": 0.0, "errmsg": "only one start point may be given", "code": 40674}
            return original(doc, ctx, coll, pipeline, batch_size)

        mp.setattr(secantus_commands, "_aggregate_change_stream", aggregate)

    return apply


EVERY_PAIR = {
    frozenset(p)
    for p in (
        {"resumeAfter", "startAfter"},
        {"resumeAfter", "startAtOperationTime"},
        {"startAfter", "startAtOperationTime"},
    )
}


def test_two_start_points_accepted_as_shipped_fails_naming_every_pair(embedded_run):
    """The deviation, pinned: a SecantusDB that fixes it shows up here (and as an unexpected pass in runs)."""
    verdict = embedded_run.verdict(CHECKS["SRV-START-EXCLUSIVE"])
    assert verdict.outcome == "failed", verdict.message
    for pair in (
        "resumeAfter with startAfter",
        "resumeAfter with startAtOperationTime",
        "startAfter with startAtOperationTime",
    ):
        assert pair in verdict.message, verdict.message


def test_a_server_that_refuses_every_pair_passes(embedded_run, monkeypatch):
    _refuses(EVERY_PAIR)(monkeypatch)
    verdict = embedded_run.verdict(CHECKS["SRV-START-EXCLUSIVE"])
    assert verdict.outcome == "passed", verdict.message


def test_a_server_that_refuses_one_pair_only_fails_naming_the_others(embedded_run, monkeypatch):
    _refuses({frozenset({"resumeAfter", "startAfter"})})(monkeypatch)
    verdict = embedded_run.verdict(CHECKS["SRV-START-EXCLUSIVE"])
    assert verdict.outcome == "failed", verdict.message
    assert "resumeAfter with startAfter" not in verdict.message
    assert "startAfter with startAtOperationTime" in verdict.message, verdict.message


def _start_at_operation_time_exclusive(mp: pytest.MonkeyPatch) -> None:
    """startAtOperationTime resolved to the oplog entry after the one at that time."""
    original = Storage.find_seq_for_ts
    mp.setattr(Storage, "find_seq_for_ts", lambda self, ts, **kwargs: original(self, ts, **kwargs) + 1)


def _tokens_not_bound_to_their_stream(mp: pytest.MonkeyPatch) -> None:
    """Every namespace matches every stream's scope, so a token of another collection is found in this one."""
    mp.setattr(changestreams, "_scope_matches", lambda ns, scope: True)


def _edit_events(edit: Callable[[dict[str, Any], bool], tuple[dict[str, Any], bool]]) -> Breakage:
    """A server whose change events pass through ``edit(event, invalidates)`` as it builds them."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = changestreams.project

        def project(seq: int, oplog_entry: Any, **options: Any) -> tuple[Any, bool]:
            event, invalidates = original(seq, oplog_entry, **options)
            return (event, invalidates) if event is None else edit(dict(event), invalidates)

        mp.setattr(changestreams, "project", project)

    return apply


def _replaces(edit: Callable[[dict[str, Any]], None]) -> Breakage:
    """Replace events edited in place by ``edit``; every other event as built."""

    def on_replace(event: dict[str, Any], invalidates: bool) -> tuple[dict[str, Any], bool]:
        if event.get("operationType") == "replace":
            edit(event)
        return event, invalidates

    return _edit_events(on_replace)


def _as_mongo_java_server_reports_it(event: dict[str, Any]) -> None:
    """An update whose documentKey is the new document, and no description (mongo-java-server 1.47.0)."""
    event["operationType"] = "update"
    event["documentKey"] = event.pop("fullDocument")


def _as_a_described_update(event: dict[str, Any]) -> None:
    """A well-formed update event that describes the replacement: what the spec lets a server report instead."""
    new = event.pop("fullDocument")
    event["operationType"] = "update"
    event["updateDescription"] = {
        "updatedFields": {k: v for k, v in new.items() if k != "_id"},
        "removedFields": sorted(set(BEFORE_REPLACE) - set(new)),
        "truncatedArrays": [],
    }


def _drops_that_do_not_invalidate(event: dict[str, Any], invalidates: bool) -> tuple[dict[str, Any], bool]:
    return event, invalidates and event.get("operationType") != "drop"


def _get_more_waits(max_time_ms: int | None) -> Breakage:
    """Every getMore waits ``max_time_ms`` whatever it asks for (0: returns at once, as mongo-java-server 1.47.0)."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = secantus_commands._HANDLERS["getMore"]

        def get_more(doc: dict[str, Any], ctx: Any) -> Any:
            return original({**doc, "maxTimeMS": max_time_ms}, ctx)

        mp.setitem(secantus_commands._HANDLERS, "getMore", get_more)

    return apply


def _token_refusals(edit: Callable[[dict[str, Any], dict[str, Any]], Any]) -> Breakage:
    """The aggregate's answer to a $changeStream with resumeAfter or startAfter passed through ``edit(doc, reply)``."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = secantus_commands._HANDLERS["aggregate"]

        def aggregate(doc: dict[str, Any], ctx: Any) -> Any:
            stage = (doc.get("pipeline") or [{}])[0].get("$changeStream")
            if isinstance(stage, dict) and {"resumeAfter", "startAfter"} & set(stage):
                return edit(doc, original(doc, ctx))
            return original(doc, ctx)

        mp.setitem(secantus_commands._HANDLERS, "aggregate", aggregate)

    return apply


def _without_code(doc: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
    """A refusal with no code, as mongo-java-server 1.47.0 sends (its Java exception's message only)."""
    return {k: v for k, v in reply.items() if k not in ("code", "codeName")} if reply.get("ok") == 0 else reply


def _malformed_tokens_ignored(mp: pytest.MonkeyPatch) -> None:
    """A token the server cannot read is dropped from the stage: the stream opens as if none had been given."""

    def readable(token: Any) -> bool:
        try:
            changestreams.parse_resume_token(token)
        except (ValueError, KeyError, TypeError):
            return False
        return True

    original = secantus_commands._HANDLERS["aggregate"]

    def aggregate(doc: dict[str, Any], ctx: Any) -> Any:
        stage = (doc.get("pipeline") or [{}])[0].get("$changeStream")
        if isinstance(stage, dict):
            kept = {k: v for k, v in stage.items() if k not in ("resumeAfter", "startAfter") or readable(v)}
            doc = {**doc, "pipeline": [{"$changeStream": kept}, *doc["pipeline"][1:]]}
        return original(doc, ctx)

    mp.setitem(secantus_commands._HANDLERS, "aggregate", aggregate)


def _non_document_tokens_ignored(mp: pytest.MonkeyPatch) -> None:
    """The stage's type check skipped: a token that is not a document is passed over, the stream opens from now."""
    original = changestreams.validate_spec
    mp.setattr(
        changestreams,
        "validate_spec",
        lambda spec: original({k: v for k, v in spec.items() if k not in ("resumeAfter", "startAfter")}),
    )


def _fail_points_unknown(mp: pytest.MonkeyPatch) -> None:
    """configureFailPoint is no command at all (a server run without test commands answers 59 CommandNotFound)."""
    mp.delitem(secantus_commands._HANDLERS, "configureFailPoint")


def _fail_points_ignored(mp: pytest.MonkeyPatch) -> None:
    """configureFailPoint answered ok and nothing armed."""
    mp.setitem(secantus_commands._HANDLERS, "configureFailPoint", lambda doc, ctx: {"ok": 1.0})


def _missing_drops_refused(code: int | None) -> Breakage:
    """drop of a collection that does not exist refused with ``code`` (None: no code, as mongo-java-server)."""

    def patch(mp: pytest.MonkeyPatch) -> None:
        original = secantus_commands._HANDLERS["drop"]

        def drop(doc: dict[str, Any], ctx: Any) -> dict[str, Any]:
            if not ctx.storage.collection_exists(ctx.db_name, doc["drop"]):
                return {"ok": 0.0, "errmsg": "ns not found", **({} if code is None else {"code": code})}
            return original(doc, ctx)

        mp.setitem(secantus_commands._HANDLERS, "drop", drop)

    return patch


#: breakage -> (the rules its check's failure must name, comma-separated; the check, by its first rule id; the patch);
#: specs/coverage/breakages/server-checks.yml lists each with these rules
BROKEN_SERVER_CHECKS: dict[str, tuple[str, str, Breakage]] = {
    "startAtOperationTime exclusive": ("SRV-START-AT-TIME", "SRV-START-AT-TIME", _start_at_operation_time_exclusive),
    "tokens not bound to their stream": (
        "SRV-TOKEN-MUST-EXIST",
        "SRV-TOKEN-MUST-EXIST",
        _tokens_not_bound_to_their_stream,
    ),
    "replaces reported as updates keyed by the new document": (
        "SRV-DOCKEY, SRV-FULLDOC-INSERT",
        "SRV-FULLDOC-INSERT",
        _replaces(_as_mongo_java_server_reports_it),
    ),
    "replace events without the new document": (
        "SRV-FULLDOC-INSERT",
        "SRV-FULLDOC-INSERT",
        _replaces(lambda e: e.pop("fullDocument")),
    ),
    "replace events keyed by the whole document": (
        "SRV-DOCKEY",
        "SRV-FULLDOC-INSERT",
        _replaces(lambda e: e.update(documentKey=dict(e["fullDocument"]))),
    ),
    "drops that do not invalidate": (
        "SRV-INVALIDATE-DROP",
        "SRV-INVALIDATE-DROP",
        _edit_events(_drops_that_do_not_invalidate),
    ),
    "empty getMores return at once": ("SRV-MAXTIME-EMPTY", "SRV-MAXTIME-EMPTY", _get_more_waits(0)),
    "empty getMores wait their own 3 s": ("SRV-MAXTIME-EMPTY", "SRV-MAXTIME-EMPTY", _get_more_waits(3000)),
    "malformed tokens refused without a code": (
        "SRV-TOKEN-MALFORMED",
        "SRV-TOKEN-MALFORMED",
        _token_refusals(_without_code),
    ),
    "malformed tokens ignored": ("SRV-TOKEN-MALFORMED", "SRV-TOKEN-MALFORMED", _malformed_tokens_ignored),
    "tokens that are not documents ignored": (
        "SRV-TOKEN-MALFORMED",
        "SRV-TOKEN-MALFORMED",
        _non_document_tokens_ignored,
    ),
    "missing collections refused without a code": ("SRV-ERROR-CODES", "SRV-ERROR-CODES", _missing_drops_refused(None)),
    "missing collections refused with another code": ("SRV-ERROR-CODES", "SRV-ERROR-CODES", _missing_drops_refused(8)),
    "configureFailPoint unknown": ("SRV-TEST-FAILPOINTS", "SRV-TEST-FAILPOINTS", _fail_points_unknown),
    "configureFailPoint accepted and ignored": (
        "SRV-TEST-FAILPOINTS",
        "SRV-TEST-FAILPOINTS",
        _fail_points_ignored,
    ),
}
#: The code-defined checks that pass on SecantusDB as shipped (SRV-START-EXCLUSIVE is its known deviation).
PASSING_ON_SECANTUSDB = sorted({rule for rule in CHECKS if rule != "SRV-START-EXCLUSIVE"})


@pytest.mark.parametrize("rule", PASSING_ON_SECANTUSDB)
def test_each_check_passes_on_secantusdb(embedded_run, rule):
    verdict = embedded_run.verdict(CHECKS[rule])
    assert verdict.outcome == "passed", verdict.message


@pytest.mark.parametrize("breakage", sorted(BROKEN_SERVER_CHECKS))
def test_a_server_that_breaks_the_rule_fails_its_check(embedded_run, monkeypatch, breakage):
    rules, check, patch = BROKEN_SERVER_CHECKS[breakage]
    patch(monkeypatch)
    verdict = embedded_run.verdict(CHECKS[check])
    assert verdict.outcome == "failed", f"{breakage}: {verdict.outcome} {verdict.message}"
    found = verdict.message.removeprefix(f"server check {CHECKS[check].name}: ")
    for rule in rules.split(", "):  # named by the finding itself, not only by the check's name
        assert rule in found, f"{breakage}: the failure does not name {rule}: {found}"


def test_a_replacement_reported_as_an_update_that_describes_it_passes(embedded_run, monkeypatch):
    """The spec leaves update-or-replace to the server: a well-formed update describing the replacement is fine."""
    _replaces(_as_a_described_update)(monkeypatch)
    verdict = embedded_run.verdict(CHECKS["SRV-FULLDOC-INSERT"])
    assert verdict.outcome == "passed", verdict.message


def _invalidate_closes_at_the_next_get_more(mp: pytest.MonkeyPatch) -> None:
    """The reply with the invalidate keeps the cursor id; the next getMore finds the cursor gone (an error)."""
    original = secantus_commands._HANDLERS["getMore"]

    def get_more(doc: dict[str, Any], ctx: Any) -> Any:
        reply = original(doc, ctx)
        batch = (reply.get("cursor") or {}).get("nextBatch") or []
        if batch and batch[-1].get("operationType") == "invalidate" and not reply["cursor"]["id"]:
            reply = {**reply, "cursor": {**reply["cursor"], "id": doc["getMore"]}}
        return reply

    mp.setitem(secantus_commands._HANDLERS, "getMore", get_more)


def test_an_invalidate_whose_cursor_closes_at_the_next_get_more_passes(embedded_run, monkeypatch):
    """The text does not say which reply closes the cursor: the next getMore's refusal closes it too."""
    _invalidate_closes_at_the_next_get_more(monkeypatch)
    verdict = embedded_run.verdict(CHECKS["SRV-INVALIDATE-DROP"])
    assert verdict.outcome == "passed", verdict.message


def test_an_empty_get_more_that_waits_most_of_its_max_time_passes(embedded_run, monkeypatch):
    """A coarse timer is no deviation: a reply after 60% of maxTimeMS is within the accepted window."""
    _get_more_waits(int(EMPTY_WAIT_MS * 0.6))(monkeypatch)
    verdict = embedded_run.verdict(CHECKS["SRV-MAXTIME-EMPTY"])
    assert verdict.outcome == "passed", verdict.message


def test_the_mongo_java_server_shape_of_a_replacement_names_both_rules(embedded_run, monkeypatch):
    _replaces(_as_mongo_java_server_reports_it)(monkeypatch)
    verdict = embedded_run.verdict(CHECKS["SRV-FULLDOC-INSERT"])
    assert "SRV-DOCKEY: documentKey" in verdict.message and "SRV-FULLDOC-INSERT" in verdict.message, verdict.message


def test_the_empty_getmore_wait_is_measured_and_recorded(embedded_run):
    verdict = embedded_run.verdict(CHECKS["SRV-MAXTIME-EMPTY"])
    measured = verdict.details["empty_get_more"]
    low, high = measured["accepted_ms"]
    assert verdict.outcome == "passed" and low <= measured["waited_ms"] <= high, (verdict.message, measured)
    assert measured["maxTimeMS"] == EMPTY_WAIT_MS


def test_the_failpoint_finding_names_the_servers_refusal_and_how_the_run_applies_fail_points(embedded_run, monkeypatch):
    _fail_points_unknown(monkeypatch)
    verdict = embedded_run.verdict(CHECKS["SRV-TEST-FAILPOINTS"])
    assert verdict.outcome == "failed"
    assert "no such command: 'configureFailPoint'" in verdict.message, verdict.message
    assert "this run's fail points are native" in verdict.message, verdict.message


def test_the_check_is_skipped_where_change_streams_cannot_run(embedded_run, monkeypatch):
    monkeypatch.setattr(embedded_run.target.info, "topology", "single")
    verdict = embedded_run.verdict(CHECKS["SRV-START-EXCLUSIVE"])
    assert verdict.outcome == "skipped" and "topology single" in verdict.message, verdict.message


def test_a_server_refusing_a_missing_drop_with_namespace_not_found_passes(embedded_run, monkeypatch):
    """The other permitted answer (mongod before 7.0): NamespaceNotFound, which drivers pass over by its code."""
    _missing_drops_refused(26)(monkeypatch)
    verdict = embedded_run.verdict(CHECKS["SRV-ERROR-CODES"])
    assert verdict.outcome == "passed", verdict.message
    assert verdict.details["missing_drop_refusal"]["code"] == 26
