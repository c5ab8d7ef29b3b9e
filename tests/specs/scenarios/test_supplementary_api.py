"""The driver-side helper and cursor scenarios (change-streams-api.yml) fail for a pymongo that breaks their rule.

Each broken driver is pymongo with one function patched for the length of one
test (``monkeypatch``): an option value or a pipeline stage refused on the
client instead of left to the server, the read concern dropped or forced, the
getMore sent to a collection the aggregate did not name, a plain aggregate
that resumes like a change stream, a close that leaves the cursor open, a
resume outside the stream's session.

CS-PIPE-MULTISTAGE checks only that the aggregate goes out: SecantusDB accepts
a second ``$changeStream`` stage where mongod refuses it (40602), so the
server's error cannot be part of the scenario on this target.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pymongo import change_stream_shared
from pymongo.errors import InvalidOperation, PyMongoError
from pymongo.read_concern import ReadConcern
from pymongo.synchronous import change_stream as sync_change_stream
from pymongo.synchronous.collection import Collection
from pymongo.synchronous.database import Database

from tests.specs.scenarios.test_supplementary import assert_rule_fails, scenarios_of

ChangeStream = sync_change_stream.ChangeStream
AnyChangeStream = change_stream_shared._AgnosticChangeStream
Breakage = Callable[[pytest.MonkeyPatch], None]

#: The values the spec lists today; a driver that checks against them breaks forward compatibility.
KNOWN_FULL_DOCUMENT = {"default", "updateLookup", "whenAvailable", "required"}
KNOWN_FULL_DOCUMENT_BEFORE_CHANGE = {"whenAvailable", "required", "off"}


def _refusing(check: Callable[[Any], str | None]) -> Breakage:
    """A driver whose stream constructor raises a client-side error when ``check(stream)`` names a problem."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = AnyChangeStream.__init__

        def init(self: Any, *args: Any, **kwargs: Any) -> None:
            original(self, *args, **kwargs)
            problem = check(self)
            if problem:
                raise InvalidOperation(problem)

        mp.setattr(AnyChangeStream, "__init__", init)

    return apply


def _unknown_full_document(stream: Any) -> str | None:
    if stream._full_document is not None and stream._full_document not in KNOWN_FULL_DOCUMENT:
        return f"fullDocument must be one of {sorted(KNOWN_FULL_DOCUMENT)}"
    return None


def _unknown_full_document_before_change(stream: Any) -> str | None:
    value = stream._full_document_before_change
    if value is not None and value not in KNOWN_FULL_DOCUMENT_BEFORE_CHANGE:
        return f"fullDocumentBeforeChange must be one of {sorted(KNOWN_FULL_DOCUMENT_BEFORE_CHANGE)}"
    return None


def _comment_unasked(mp: pytest.MonkeyPatch) -> None:
    """Every stream carries a comment the caller never gave (a driver's own tag, say)."""
    original = AnyChangeStream.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        if self._comment is None:
            self._comment = "sent by the driver"

    mp.setattr(AnyChangeStream, "__init__", init)


def _second_change_stream_stage(stream: Any) -> str | None:
    if any("$changeStream" in stage for stage in stream._pipeline):
        return "the pipeline must not contain another $changeStream stage"
    return None


def _not_majority(stream: Any) -> str | None:
    level = stream._target.read_concern.level
    if level not in (None, "majority"):
        return f"change streams take only the majority read concern, not {level!r}"
    return None


def _read_concern(value: ReadConcern) -> Breakage:
    """Every change stream's aggregate runs with ``value`` as its read concern, whatever the collection's."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = ChangeStream._run_aggregation_cmd

        def run(self: Any, session: Any) -> Any:
            self._target = self._target.with_options(read_concern=value)
            return original(self, session)

        mp.setattr(ChangeStream, "_run_aggregation_cmd", run)

    return apply


def _get_more_to_dollar_cmd(mp: pytest.MonkeyPatch) -> None:
    """Database and client streams send getMore to ``$cmd`` instead of the collection the reply's ns names."""
    original = ChangeStream._create_cursor

    def create_cursor(self: Any) -> Any:
        cursor = original(self)
        database, _, collection = cursor._ns.partition(".")
        if collection.startswith("$cmd"):
            cursor._ns = f"{database}.$cmd"
        return cursor

    mp.setattr(ChangeStream, "_create_cursor", create_cursor)


def _close_forgets_the_cursor(mp: pytest.MonkeyPatch) -> None:
    """close() marks the stream closed and leaves its server cursor open."""

    def close(self: Any) -> None:
        self._closed = True

    mp.setattr(ChangeStream, "close", close)


def _resume_outside_the_session(mp: pytest.MonkeyPatch) -> None:
    """A resume runs its aggregate in a session of its own instead of the stream's."""
    original = ChangeStream._resume

    def resume(self: Any) -> None:
        self._session = None
        original(self)

    mp.setattr(ChangeStream, "_resume", resume)


def _closed_stream_reopens(mp: pytest.MonkeyPatch) -> None:
    """Iterating a closed stream opens it again (a resume) instead of staying closed."""
    original = ChangeStream.try_next

    def try_next(self: Any) -> Any:
        self._closed = False
        return original(self)

    mp.setattr(ChangeStream, "try_next", try_next)


def _database_watch_returns_the_cursor(mp: pytest.MonkeyPatch) -> None:
    """Database.watch returns the aggregate's own cursor (no resume, no token) instead of a change stream."""

    def watch(self: Any, pipeline: list | None = None, **kwargs: Any) -> Any:
        return self.aggregate([{"$changeStream": {}}, *(pipeline or [])])

    mp.setattr(Database, "watch", watch)


class _ResumingCursor:
    """What the broken helper returns: the aggregate's cursor, run again once after a resumable error."""

    def __init__(self, cursor: Any, rerun: Callable[[], Any]) -> None:
        self._cursor, self._rerun = cursor, rerun

    def __iter__(self) -> Any:
        try:
            yield from self._cursor
        except PyMongoError as exc:
            if not sync_change_stream._resumable(exc):
                raise
            cursor = self._rerun()  # a tailable cursor: read what one getMore gives, then stop
            while (document := cursor._try_next(True)) is not None:
                yield document
            cursor.close()


def _plain_aggregate_resumes(mp: pytest.MonkeyPatch) -> None:
    """The plain aggregate helper treats a leading $changeStream specially: its cursor resumes on errors."""
    original = Collection.aggregate

    def aggregate(self: Any, pipeline: list, *args: Any, **kwargs: Any) -> Any:
        cursor = original(self, pipeline, *args, **kwargs)
        if pipeline and isinstance(pipeline[0], dict) and "$changeStream" in pipeline[0]:
            return _ResumingCursor(cursor, lambda: original(self, pipeline, *args, **kwargs))
        return cursor

    mp.setattr(Collection, "aggregate", aggregate)


#: breakage -> (the rules (ids joined by ", ") whose scenarios must catch it, the patch)
BROKEN_API: dict[str, tuple[str, Breakage]] = {
    "unknown fullDocument refused": ("CS-OPT-FULLDOC-UNKNOWN", _refusing(_unknown_full_document)),
    "unknown fullDocumentBeforeChange refused": (
        "CS-OPT-FULLDOCBC-UNKNOWN",
        _refusing(_unknown_full_document_before_change),
    ),
    "collection read concern dropped": ("CS-API-READCONCERN", _read_concern(ReadConcern())),
    "majority read concern forced": ("CS-API-READCONCERN", _read_concern(ReadConcern("majority"))),
    "read concern checked by the driver": ("CS-API-READCONCERN-NOTHROW", _refusing(_not_majority)),
    "getMore sent to $cmd": ("CS-CURSOR-NS-DB, CS-CURSOR-NS-CLIENT", _get_more_to_dollar_cmd),
    "comment sent unasked": ("CS-OPT-DEFAULTS", _comment_unasked),
    "plain aggregate resumes a $changeStream": ("CS-API-AGGREGATE-PLAIN", _plain_aggregate_resumes),
    "close leaves the cursor open": ("CS-API-CLOSE", _close_forgets_the_cursor),
    "a closed stream reopens when iterated": ("CS-API-CLOSE", _closed_stream_reopens),
    "Database.watch returns the aggregate's cursor": ("CS-API-RETURNS", _database_watch_returns_the_cursor),
    "resume outside the session": ("CS-RESUME-SESSION", _resume_outside_the_session),
}


@pytest.mark.parametrize("breakage", sorted(BROKEN_API))
def test_a_driver_that_breaks_the_rule_fails_its_scenario(embedded_run, monkeypatch, breakage):
    rules, patch = BROKEN_API[breakage]
    patch(monkeypatch)
    assert_rule_fails(embedded_run, rules, breakage)


def test_second_change_stream_stage_refused_by_the_driver_fails_its_scenario(embedded_run, monkeypatch):
    """CS-PIPE-MULTISTAGE: a driver that refuses the stage itself sends no aggregate, and the scenario fails."""
    _refusing(_second_change_stream_stage)(monkeypatch)
    assert_rule_fails(embedded_run, "CS-PIPE-MULTISTAGE", "second $changeStream stage refused by the driver")


def test_pymongo_drops_a_collation_given_to_watch_and_a_pymongo_that_sends_it_passes(embedded_run, monkeypatch):
    """CS-OPT-AGGREGATE, the known pymongo deviation (specs/expectations/drivers/pymongo.yml): the scenario fails on
    the collation alone, and a pymongo whose stream passes the collation on to the aggregate passes it."""
    scenario = next(test for test in scenarios_of("CS-OPT-AGGREGATE") if "collation" in test.description)
    verdict = embedded_run.verdict(scenario)
    assert verdict.outcome == "failed" and "command.collation" in verdict.message, verdict.message
    original = AnyChangeStream._command_options

    def command_options(self: Any) -> dict[str, Any]:
        options = original(self)
        return {**options, "collation": self._collation} if self._collation is not None else options

    monkeypatch.setattr(AnyChangeStream, "_command_options", command_options)
    verdict = embedded_run.verdict(scenario)
    assert verdict.outcome == "passed", verdict.message
