"""The driver-side resume, error and option scenarios fail for a pymongo that breaks their rule.

Each broken driver is pymongo with one function patched for the length of one
test (``monkeypatch``), the way a driver author's mistake would look: an error
classed as resumable when it must not be (or the reverse), a resume that is
retried, forgets its token, its pipeline or its options, a token that is
never refreshed, a killCursors failure that escapes, an event without a
resume token handed to the user. The rule it breaks must then see at least
one of its scenarios fail, and none of them error.

One finding about pymongo itself: pymongo 4.20 raises the "not primary"
codes (10107, 189, 91, 11600, 11602, 13435, 13436) from a getMore as a
``NotPrimaryError``, a ``ConnectionFailure``, and so resumes on them without
the ``ResumableChangeStreamError`` label on a 4.4+ server, which the spec's
Resumable Error rule does not allow. A scenario checks it (10107 without the
label); pymongo fails it, as specs/expectations/drivers/pymongo.yml says, and
the test at the end pins that and shows a pymongo that follows the rule passes.
The other CS-RESUME-NONRESUMABLE scenario uses NetworkTimeout (89).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pymongo import change_stream_shared
from pymongo.errors import ConnectionFailure, CursorNotFound, OperationFailure, PyMongoError
from pymongo.synchronous import change_stream as sync_change_stream
from pymongo.synchronous.command_cursor import CommandCursor
from pymongo.synchronous.mongo_client import MongoClient
from secantus import commands as secantus_commands

from tests.specs.scenarios.test_supplementary import assert_rule_fails, scenarios_of

ChangeStream = sync_change_stream.ChangeStream
AnyChangeStream = change_stream_shared._AgnosticChangeStream
Breakage = Callable[[pytest.MonkeyPatch], None]

#: The pre-4.4 allow list of resumable codes (spec, Resumable Error), which a 4.4+ server's errors must not use.
PRE_44_RESUMABLE_CODES = {6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436, 63, 150, 13388, 234, 133}


def _resumable_as(rule: Callable[[PyMongoError, bool], bool]) -> Breakage:
    """A driver whose resumable-error test is ``rule(error, what the real test says)``."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = sync_change_stream._resumable
        mp.setattr(sync_change_stream, "_resumable", lambda exc: rule(exc, original(exc)))

    return apply


def _label_only(exc: PyMongoError, real: bool) -> bool:
    return isinstance(exc, OperationFailure) and exc.has_error_label("ResumableChangeStreamError")


def _code_allow_list_too(exc: PyMongoError, real: bool) -> bool:
    return real or (isinstance(exc, OperationFailure) and exc.code in PRE_44_RESUMABLE_CODES)


def _aggregate_resumed(mp: pytest.MonkeyPatch) -> None:
    """A resumable error on the aggregate that opens the stream is resumed (the aggregate is sent again)."""
    original = ChangeStream._create_cursor

    def create_cursor(self: Any) -> Any:
        try:
            return original(self)
        except PyMongoError as exc:
            if not sync_change_stream._resumable(exc):
                raise
            return original(self)

    mp.setattr(ChangeStream, "_create_cursor", create_cursor)


def _resume_retried(mp: pytest.MonkeyPatch) -> None:
    """A resume whose aggregate fails is attempted a second time."""
    original = ChangeStream._resume

    def resume(self: Any) -> None:
        try:
            original(self)
        except PyMongoError:
            original(self)

    mp.setattr(ChangeStream, "_resume", resume)


def _options(change: Callable[[dict[str, Any], Any], dict[str, Any]]) -> Breakage:
    """A driver whose ``$changeStream`` options go through ``change(options, stream)``."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = AnyChangeStream._change_stream_options
        mp.setattr(AnyChangeStream, "_change_stream_options", lambda self: change(dict(original(self)), self))

    return apply


def _token_forgotten(options: dict[str, Any], stream: Any) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k not in ("resumeAfter", "startAfter")}


def _full_document_lost_on_resume(options: dict[str, Any], stream: Any) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k != "fullDocument"} if "resumeAfter" in options else options


def _start_at_operation_time_kept(options: dict[str, Any], stream: Any) -> dict[str, Any]:
    if "resumeAfter" in options and stream._start_at_operation_time is not None:
        return {**options, "startAtOperationTime": stream._start_at_operation_time}
    return options


def _stale_token(mp: pytest.MonkeyPatch) -> None:
    """The token cached from the opening reply is never refreshed by the documents and batches that follow."""
    original = ChangeStream.try_next

    def try_next(self: Any) -> Any:
        before = self._resume_token
        document = original(self)
        if before is not None:
            self._resume_token = before
        return document

    mp.setattr(ChangeStream, "try_next", try_next)


def _pipeline_lost_on_resume(mp: pytest.MonkeyPatch) -> None:
    """A resume sends only the ``$changeStream`` stage, not the user's pipeline."""
    original = AnyChangeStream._aggregation_pipeline
    mp.setattr(
        AnyChangeStream,
        "_aggregation_pipeline",
        lambda self: original(self)[:1] if self._resume_token is not None else original(self),
    )


def _post_batch_resume_token_ignored(mp: pytest.MonkeyPatch) -> None:
    """The driver never reads ``postBatchResumeToken``: only the ``_id`` of documents."""
    original = AnyChangeStream._process_result

    def process_result(self: Any, result: Any) -> None:
        cursor = {k: v for k, v in result["cursor"].items() if k != "postBatchResumeToken"}
        original(self, {**result, "cursor": cursor})

    mp.setattr(AnyChangeStream, "_process_result", process_result)
    mp.setattr(CommandCursor, "_post_batch_resume_token", property(lambda self: None))


def _lost_on_resume(attribute: str) -> Breakage:
    """A resume that rebuilds the stream without one of its options (the attribute pymongo keeps it in)."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = ChangeStream._resume

        def resume(self: Any) -> None:
            setattr(self, attribute, None)
            original(self)

        mp.setattr(ChangeStream, "_resume", resume)

    return apply


def _comment_not_on_get_more(mp: pytest.MonkeyPatch) -> None:
    """The comment goes on the aggregate only; the cursor's getMores go without it."""
    original = ChangeStream._create_cursor

    def create_cursor(self: Any) -> Any:
        cursor = original(self)
        cursor._comment = None
        return cursor

    mp.setattr(ChangeStream, "_create_cursor", create_cursor)


class KillCursorsFailed(PyMongoError):
    """What the broken driver raises when its killCursors fails (a driver's own "cleanup failed" error)."""


def _kill_cursors_errors_escape(mp: pytest.MonkeyPatch) -> None:
    """A failing killCursors is raised to the caller instead of suppressed."""

    def close_cursor_now(self: Any, cursor_id: int, address: Any, session: Any = None, conn_mgr: Any = None) -> None:
        try:
            self._kill_cursors([cursor_id], address, self._get_topology(), session)
        except PyMongoError as exc:
            raise KillCursorsFailed(f"killCursors failed: {exc}") from exc

    mp.setattr(MongoClient, "_close_cursor_now", close_cursor_now)


def _missing_token_accepted(mp: pytest.MonkeyPatch) -> None:
    """An event without ``_id`` reaches the user, the driver taking an empty token for it."""
    original = CommandCursor._try_next

    def try_next(self: Any, get_more_allowed: bool) -> Any:
        document = original(self, get_more_allowed)
        if isinstance(document, dict) and "operationType" in document and "_id" not in document:
            document = {"_id": {}, **document}
        return document

    mp.setattr(CommandCursor, "_try_next", try_next)


def permissive_server(mp: pytest.MonkeyPatch) -> None:
    """A SecantusDB that lets a ``{$project: {_id: 0}}`` stage strip the resume token instead of refusing it.

    mongod (and SecantusDB) fail the getMore when a pipeline removes ``_id``, so
    the driver's own check never runs against them. This server lets such events
    through, the way an emulator might, so that the driver's check is what the
    scenario sees: the stage is left out of the pipeline and the events' ``_id``
    removed as the batch is sent.
    """
    strip = {"$project": {"_id": 0}}
    stripped: set[str] = set()
    original_pipeline = secantus_commands.apply_pipeline
    original_cursor_doc = secantus_commands._change_stream_cursor_doc

    def apply_pipeline(events: list, stages: list, ctx: Any) -> list:
        kept = [stage for stage in stages if stage != strip]
        out = original_pipeline(events, kept, ctx)
        if len(kept) != len(stages):
            stripped.update(event["_id"]["_data"] for event in out if isinstance(event, dict) and "_id" in event)
        return out

    def cursor_doc(*args: Any, **kwargs: Any) -> dict[str, Any]:
        cursor = original_cursor_doc(*args, **kwargs)
        for event in cursor.get(kwargs.get("batch_key", "nextBatch"), []):
            if isinstance(event, dict) and event.get("_id", {}).get("_data") in stripped:
                del event["_id"]
        return cursor

    mp.setattr(secantus_commands, "apply_pipeline", apply_pipeline)
    mp.setattr(secantus_commands, "_change_stream_cursor_doc", cursor_doc)


def _start_after_on_resume(options: dict[str, Any], stream: Any) -> dict[str, Any]:
    if "resumeAfter" in options:
        options["startAfter"] = options.pop("resumeAfter")
    return options


def _operation_time_on_resume(options: dict[str, Any], stream: Any) -> dict[str, Any]:
    from bson.timestamp import Timestamp

    return {**options, "startAtOperationTime": Timestamp(1, 1)} if "resumeAfter" in options else options


#: breakage -> (the rules (ids joined by ", ") whose scenarios must catch it, the patch)
BROKEN_DRIVER: dict[str, tuple[str, Breakage]] = {
    "never resumes": ("CS-RESUME-ATTEMPT, CS-ERR-LABEL", _resumable_as(lambda exc, real: False)),
    "network errors not resumable": (
        "CS-ERR-NETWORK",
        _resumable_as(lambda exc, real: real and not isinstance(exc, ConnectionFailure)),
    ),
    "CursorNotFound needs the label": (
        "CS-ERR-CURSORNOTFOUND",
        _resumable_as(lambda exc, real: real if not isinstance(exc, CursorNotFound) else _label_only(exc, real)),
    ),
    "every error resumed": ("CS-RESUME-NONRESUMABLE", _resumable_as(lambda exc, real: True)),
    "pre-4.4 code allow list on 4.4+": ("CS-ERR-LABEL, CS-RESUME-NONRESUMABLE", _resumable_as(_code_allow_list_too)),
    "aggregate errors resumed": ("CS-ERR-AGGREGATE", _aggregate_resumed),
    "resume retried": ("CS-RESUME-ONLYONCE, CS-RESUME-ONCE", _resume_retried),
    "resume forgets the token": ("CS-RESUME-RESUMEAFTER", _options(_token_forgotten)),
    "resume uses startAfter": ("CS-RESUME-RESUMEAFTER-NOSTARTAFTER", _options(_start_after_on_resume)),
    "resume adds startAtOperationTime": ("CS-RESUME-RESUMEAFTER-NOOPTIME", _options(_operation_time_on_resume)),
    "stale resume token": ("CS-TOKEN-TRACK", _stale_token),
    "resume drops the pipeline": ("CS-RESUME-STEPS", _pipeline_lost_on_resume),
    "resume drops fullDocument": ("CS-RESUME-STEPS", _options(_full_document_lost_on_resume)),
    "postBatchResumeToken ignored": ("CS-TOKEN-CACHE-PBRT-EMPTY", _post_batch_resume_token_ignored),
    "empty-batch token forgotten": ("CS-TOKEN-CACHE-PBRT-EMPTY", _options(_token_forgotten)),
    "startAtOperationTime kept on resume": (
        "CS-RESUME-RESUMEAFTER-DROPOPTIME",
        _options(_start_at_operation_time_kept),
    ),
    "maxAwaitTimeMS lost on resume": ("CS-OPT-MAXAWAIT", _lost_on_resume("_max_await_time_ms")),
    "comment lost on resume": ("CS-OPT-COMMENT-GETMORE, CS-OPT-AGGREGATE", _lost_on_resume("_comment")),
    "comment not on getMore": ("CS-OPT-COMMENT-GETMORE", _comment_not_on_get_more),
    "killCursors errors escape": ("CS-KILL-SUPPRESS", _kill_cursors_errors_escape),
}


@pytest.mark.parametrize("breakage", sorted(BROKEN_DRIVER))
def test_a_driver_that_breaks_the_rule_fails_its_scenario(embedded_run, monkeypatch, breakage):
    rule, patch = BROKEN_DRIVER[breakage]
    patch(monkeypatch)
    assert_rule_fails(embedded_run, rule, breakage)


def test_missing_token_is_the_drivers_error_on_a_server_that_lets_it_through(embedded_run, monkeypatch):
    """CS-TOKEN-MISSING: with the server's own check out of the way, pymongo raises and a driver that does not fails."""
    (scenario,) = scenarios_of("CS-TOKEN-MISSING")
    permissive_server(monkeypatch)
    verdict = embedded_run.verdict(scenario)
    assert verdict.outcome == "passed", verdict.message
    _missing_token_accepted(monkeypatch)
    assert_rule_fails(embedded_run, "CS-TOKEN-MISSING", "missing resume token accepted")


def _errors_leave_the_stream_open(mp: pytest.MonkeyPatch) -> None:
    """The stream raises its fatal errors but never closes itself: the next iteration goes back to the server."""
    original = ChangeStream.try_next

    def try_next(self: Any) -> Any:
        close = self.close
        self.close = lambda: None
        try:
            return original(self)
        finally:
            self.close = close

    mp.setattr(ChangeStream, "try_next", try_next)


def test_a_stream_left_open_after_a_non_resumable_error_fails_its_scenario(embedded_run, monkeypatch):
    """CS-RESUME-NONRESUMABLE on the next iteration: a driver that raises the error, closes the cursor but keeps
    the stream open resumes it when iterated again (pymongo resumes a stream whose cursor is dead), which is a
    resume after an error that is not resumable; another getMore on the same cursor would not be one."""
    scenario = next(test for test in scenarios_of("CS-RESUME-NONRESUMABLE") if "a getMore error" in test.description)
    assert embedded_run.verdict(scenario).outcome == "passed"
    _errors_leave_the_stream_open(monkeypatch)
    verdict = embedded_run.verdict(scenario)
    assert verdict.outcome == "failed" and "expectEvents" in verdict.message, verdict.message


def _stream_and_cursor_kept_open(mp: pytest.MonkeyPatch) -> None:
    """What the Java driver does, which the spec allows: an error that is not resumable is raised, and the stream
    and its cursor stay open. The next iteration sends a getMore on the same cursor, and resumes only when that
    getMore fails with a resumable error (CursorNotFound, when the server dropped the cursor with its error)."""
    original_send = CommandCursor._send_message

    def send_message(self: Any, operation: Any) -> None:
        self.close = lambda: None  # the getMore's error no longer closes (nor kills) the cursor
        try:
            original_send(self, operation)
        finally:
            del self.close

    mp.setattr(CommandCursor, "_send_message", send_message)
    _errors_leave_the_stream_open(mp)


def test_a_driver_that_keeps_the_stream_open_after_a_non_resumable_error_passes(embedded_run, monkeypatch):
    """CS-RESUME-NONRESUMABLE forbids a resume after an error that is not resumable, not another getMore on the
    same cursor: a driver that sends one when iterated again (the server cursor is still open after the fail
    point's 89, so it succeeds) passes. The getMores are recorded, so the test cannot pass without one."""
    scenario = next(test for test in scenarios_of("CS-RESUME-NONRESUMABLE") if "a getMore error" in test.description)
    _stream_and_cursor_kept_open(monkeypatch)
    cursors: list[int] = []
    kept_open = CommandCursor._send_message

    def recording(self: Any, operation: Any) -> None:
        cursors.append(self._id)
        kept_open(self, operation)

    monkeypatch.setattr(CommandCursor, "_send_message", recording)
    verdict = embedded_run.verdict(scenario)
    assert verdict.outcome == "passed", verdict.message
    assert len(cursors) == 2 and cursors[0] == cursors[1], cursors


def test_the_permissive_server_really_lets_the_event_through(embedded_run, monkeypatch):
    """Without this, test_missing_token_is_the_drivers_error_on_a_server_that_lets_it_through could pass on a
    server error; here the event arrives, with no _id."""
    (scenario,) = scenarios_of("CS-TOKEN-MISSING")
    permissive_server(monkeypatch)
    _missing_token_accepted(monkeypatch)
    verdict = embedded_run.verdict(scenario)
    assert verdict.outcome == "failed" and '"_id": {}' in verdict.message, verdict.message


def test_pymongo_resumes_after_a_not_primary_error_without_the_label(embedded_run, monkeypatch):
    """The finding, pinned: pymongo fails the not-primary scenario (a fix shows up here and as an unexpected
    pass), and a pymongo that judges a server's not-primary reply by its label passes it."""
    from pymongo.errors import NotPrimaryError

    (test,) = [t for t in scenarios_of("CS-ERR-LABEL") if "not-primary" in t.description]
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "failed" and "10107" in verdict.message, verdict.message

    def by_the_label(exc: PyMongoError, real: bool) -> bool:
        if isinstance(exc, NotPrimaryError) and isinstance(exc.details, dict) and "code" in exc.details:
            return "ResumableChangeStreamError" in exc.details.get("errorLabels", [])
        return real

    _resumable_as(by_the_label)(monkeypatch)
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "passed", verdict.message
