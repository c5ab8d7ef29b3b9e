"""The server-side supplementary scenarios (specs/scenarios/supplementary/server-*.yml) fail for a broken server.

The embedded target runs SecantusDB in this process, so each broken server is
SecantusDB with one of its functions patched for the length of one test
(``monkeypatch``): the function that turns an oplog entry into a change event
(``secantus.changestreams.project``), the one that cuts a batch and stamps its
postBatchResumeToken (``secantus.commands._change_stream_cursor_doc``), the
resume-token parser and the change-stream ``aggregate`` handler. Each
breakage is the mistake an emulator author could make: a field left out, an
invalidate forgotten or added, a batch reordered, ``resumeAfter`` made
inclusive. The rule it breaks must then see at least one of its scenarios
fail, and none of them error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from secantus import changestreams
from secantus import commands as secantus_commands

from tests.specs.scenarios.test_supplementary import assert_rule_fails

Breakage = Callable[[pytest.MonkeyPatch], None]


def overview_run_settings():
    """The embedded SecantusDB of the overview's breakages (test_server_*.py, one session fixture each), with a
    short iteration timeout: a breakage that withholds an event fails its scenario in two seconds, not ten."""
    from harness.engine.run import HarnessRun, RunOptions
    from harness.engine.run_settings import RunSettings

    return HarnessRun(RunOptions(target="embedded", expected="none", settings=RunSettings(iteration_timeout_s=2.0)))


def _edit_events(edit: Callable[[dict[str, Any], bool, dict[str, Any]], tuple[dict[str, Any], bool]]) -> Breakage:
    """A server whose change events pass through ``edit(event, invalidates, options)``."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = changestreams.project

        def project(seq: int, oplog_entry: Any, **options: Any) -> tuple[Any, bool]:
            event, invalidates = original(seq, oplog_entry, **options)
            return (event, invalidates) if event is None else edit(dict(event), invalidates, options)

        mp.setattr(changestreams, "project", project)

    return apply


def _with_options(**forced: Any) -> Breakage:
    """A server that builds every event as if the stream had been opened with ``forced`` options."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = changestreams.project
        mp.setattr(
            changestreams, "project", lambda seq, entry, **options: original(seq, entry, **{**options, **forced})
        )

    return apply


def _without_field(field: str, *operation_types: str) -> Breakage:
    """Events (of the given types, or all) built without ``field``."""

    def edit(event: dict[str, Any], invalidates: bool, options: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        if not operation_types or event.get("operationType") in operation_types:
            event.pop(field, None)
        return event, invalidates

    return _edit_events(edit)


def _invalidates(operation_type: str, value: bool, scope_kind: str | None = None) -> Breakage:
    """An ``operation_type`` event (at one scope kind, or any) that does or does not invalidate."""

    def edit(event: dict[str, Any], invalidates: bool, options: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        if event.get("operationType") == operation_type and scope_kind in (None, options["scope"].get("kind")):
            return event, value
        return event, invalidates

    return _edit_events(edit)


def _removed_fields_lost(event: dict[str, Any], invalidates: bool, options: dict[str, Any]):
    if "updateDescription" in event:
        event["updateDescription"] = {**event["updateDescription"], "removedFields": []}
    return event, invalidates


def _cursor_doc(change: Callable[[Any, tuple, dict[str, Any]], dict[str, Any]]) -> Breakage:
    """A server whose change-stream batches go through ``change(original, args, kwargs)``."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = secantus_commands._change_stream_cursor_doc
        mp.setattr(
            secantus_commands, "_change_stream_cursor_doc", lambda *args, **kwargs: change(original, args, kwargs)
        )

    return apply


def _reversed_batches(original: Any, args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
    entry = args[0]
    entry.remaining = list(reversed(entry.remaining))
    return original(*args, **kwargs)


def _no_post_batch_resume_token(original: Any, args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
    cursor = original(*args, **kwargs)
    cursor.pop("postBatchResumeToken", None)
    return cursor


def _batch_size_ignored(original: Any, args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
    entry, cursor_id, _batch_size, *rest = args
    return original(entry, cursor_id, 10_000, *rest, **kwargs)


def _inclusive_resume_after(mp: pytest.MonkeyPatch) -> None:
    """``resumeAfter`` (and ``startAfter``) resume AT the token's event instead of after it."""
    original = changestreams.parse_resume_token

    def parse(token: Any) -> Any:
        data = original(token)
        data.seq -= 1
        return data

    mp.setattr(changestreams, "parse_resume_token", parse)


def _starts_one_entry_early(mp: pytest.MonkeyPatch) -> None:
    """A fresh stream (no start point asked for) starts at the oplog entry before "now"."""
    original = secantus_commands._aggregate_change_stream

    def aggregate(doc: Any, ctx: Any, coll: Any, pipeline: list, batch_size: int) -> dict[str, Any]:
        reply = original(doc, ctx, coll, pipeline, batch_size)
        spec = pipeline[0].get("$changeStream", {})
        if reply.get("ok") and not {"resumeAfter", "startAfter", "startAtOperationTime"} & set(spec):
            ctx.cursors.get(reply["cursor"]["id"]).position_seq -= 1
        return reply

    mp.setattr(secantus_commands, "_aggregate_change_stream", aggregate)


#: breakage -> (the server rule whose scenarios must catch it, the patch)
BROKEN_SERVER: dict[str, tuple[str, Breakage]] = {
    "batches reversed": ("SRV-ORDER", _cursor_doc(_reversed_batches)),
    "ns left out": ("SRV-NS", _without_field("ns", "insert", "update", "replace", "delete")),
    "documentKey left out": ("SRV-DOCKEY", _without_field("documentKey")),
    "wallTime left out": ("SRV-TIMES", _without_field("wallTime")),
    "clusterTime left out": ("SRV-TIMES", _without_field("clusterTime")),
    "insert without fullDocument": ("SRV-FULLDOC-INSERT", _without_field("fullDocument", "insert")),
    "replace without fullDocument": ("SRV-FULLDOC-INSERT", _without_field("fullDocument", "replace")),
    "removedFields lost": ("SRV-UPDATE-DESC", _edit_events(_removed_fields_lost)),
    "updateDescription left out": ("SRV-UPDATE-DEFAULT", _without_field("updateDescription")),
    "server looks every update up": ("SRV-UPDATE-DEFAULT", _with_options(full_document_mode="updateLookup")),
    "updateLookup ignored": ("SRV-FULLDOC-LOOKUP", _with_options(full_document_mode=changestreams.FULL_DOC_DEFAULT)),
    "stream starts one entry early": ("SRV-START-NOW", _starts_one_entry_early),
    "expanded events by default": ("SRV-DML-ONLY", _with_options(show_expanded_events=True)),
    "rename without to": ("SRV-RENAME-TO", _without_field("to", "rename")),
    "no invalidate after rename": ("SRV-INVALIDATE-RENAME", _invalidates("rename", False)),
    "no invalidate after drop": ("SRV-INVALIDATE-DROP", _invalidates("drop", False)),
    "no invalidate after dropDatabase": ("SRV-INVALIDATE-DROPDB", _invalidates("dropDatabase", False)),
    "database stream invalidated by a collection drop": ("SRV-DB-SCOPE", _invalidates("drop", True, "db")),
    "cluster stream invalidated by a drop": ("SRV-CLUSTER-NO-INVALIDATE", _invalidates("drop", True, "cluster")),
    "resumeAfter inclusive": ("SRV-RESUMEAFTER-EXCLUSIVE", _inclusive_resume_after),
    "no postBatchResumeToken": ("SRV-PBRT", _cursor_doc(_no_post_batch_resume_token)),
    "batchSize ignored": ("SRV-BATCHSIZE", _cursor_doc(_batch_size_ignored)),
}


@pytest.mark.parametrize("breakage", sorted(BROKEN_SERVER))
def test_a_server_that_breaks_the_rule_fails_its_scenario(embedded_run, monkeypatch, breakage):
    rule, patch = BROKEN_SERVER[breakage]
    patch(monkeypatch)
    assert_rule_fails(embedded_run, rule, breakage)


def _second_stage_refused(mp: pytest.MonkeyPatch) -> None:
    """SecantusDB as mongod behaves: a $changeStream stage anywhere but first is refused (40602)."""
    original = secantus_commands._aggregate_change_stream

    def aggregate(doc: Any, ctx: Any, coll: Any, pipeline: list[dict[str, Any]], batch_size: int) -> dict[str, Any]:
        if any("$changeStream" in stage for stage in pipeline[1:]):
            return {
                "ok": 0.0,
                "errmsg": "$changeStream is only valid as the first stage in a pipeline",
                "code": 40602,
                "codeName": "Location40602",
            }
        return original(doc, ctx, coll, pipeline, batch_size)

    mp.setattr(secantus_commands, "_aggregate_change_stream", aggregate)


def test_secantusdb_accepts_a_second_change_stream_stage_and_a_server_that_refuses_it_passes(embedded_run, monkeypatch):
    """The deviation, pinned: as shipped the scenario fails (a fix shows up here and as an unexpected pass);
    with the stage refused, as the rule says, it passes."""
    from tests.specs.scenarios.test_supplementary import scenarios_of

    (test,) = scenarios_of("SRV-STAGE-ONCE")
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "failed" and "expected to raise an error" in verdict.message, verdict.message
    _second_stage_refused(monkeypatch)
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "passed", verdict.message
