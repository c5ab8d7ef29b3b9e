"""Every prose check can fail: a deliberately broken driver makes it fail, the real one makes it pass.

Each mutant is a small, plausible change-stream bug planted in pymongo for
the length of one test (``monkeypatch``, never in the product): a stale
resume token, a resume that forgets its token or its pipeline, an error
swallowed or resumed when it must not be, a cursor closed too early... The
check it targets must report ``failed`` under the mutant and ``passed``
without it, on the embedded SecantusDB. Prose test 6 runs on that server
presented as a three-member replica set (an emulation through one wire proxy
per member): its mutants select the wrong member for the resume or kill the
old cursor on another member.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pymongo import ReadPreference, change_stream_shared, cursor_shared
from pymongo.cursor_shared import _CursorAddress
from pymongo.errors import InvalidOperation, PyMongoError
from pymongo.synchronous import change_stream as sync_change_stream
from pymongo.synchronous import command_cursor as sync_command_cursor
from pymongo.synchronous.mongo_client import MongoClient

import prose_tests
from harness.engine.run import CodeDefinedTest, HarnessRun, RunOptions
from harness.engine.run_settings import RunSettings

ChangeStream = sync_change_stream.ChangeStream
AnyChangeStream = change_stream_shared._AgnosticChangeStream
CommandCursorBase = cursor_shared._AgnosticCommandCursorBase
Mutant = Callable[[pytest.MonkeyPatch], None]


# -- the mutants ------------------------------------------------------------------------------
def stale_resume_token(mp: pytest.MonkeyPatch) -> None:
    """The exposed resume token is the first one the stream ever had."""

    def resume_token(self: Any) -> Any:
        if "_first_token" not in self.__dict__:
            self.__dict__["_first_token"] = copy.deepcopy(self._resume_token)
        return self.__dict__["_first_token"]

    mp.setattr(AnyChangeStream, "resume_token", property(resume_token))


def swallowed_errors(mp: pytest.MonkeyPatch) -> None:
    """Iteration hides errors and reports "no change yet" instead."""
    original = ChangeStream.try_next

    def try_next(self: Any) -> Any:
        try:
            return original(self)
        except PyMongoError:
            return None

    mp.setattr(ChangeStream, "try_next", try_next)


def never_resumes(mp: pytest.MonkeyPatch) -> None:
    """No error counts as resumable."""
    mp.setattr(sync_change_stream, "_resumable", lambda exc: False)


def _resume_with(mp: pytest.MonkeyPatch, change: Callable[[Any], None]) -> None:
    original = ChangeStream._resume

    def _resume(self: Any) -> None:
        change(self)
        original(self)

    mp.setattr(ChangeStream, "_resume", _resume)


def resume_forgets_token(mp: pytest.MonkeyPatch) -> None:
    """The resume re-sends the original aggregate, without resumeAfter."""
    _resume_with(mp, lambda stream: setattr(stream, "_resume_token", None))


def resume_drops_pipeline(mp: pytest.MonkeyPatch) -> None:
    """The resume sends $changeStream alone, losing the user's stages."""
    _resume_with(mp, lambda stream: setattr(stream, "_pipeline", []))


def resume_drops_start_after(mp: pytest.MonkeyPatch) -> None:
    """The resume always names resumeAfter, even before any result."""
    _resume_with(mp, lambda stream: setattr(stream, "_uses_start_after", False))


def start_after_kept_after_results(mp: pytest.MonkeyPatch) -> None:
    """Returning a change does not switch the stream from startAfter to resumeAfter."""
    original = ChangeStream.try_next

    def try_next(self: Any) -> Any:
        uses_start_after = self._uses_start_after
        change = original(self)
        self._uses_start_after = uses_start_after
        return change

    mp.setattr(ChangeStream, "try_next", try_next)


def resumes_aggregate_errors(mp: pytest.MonkeyPatch) -> None:
    """A failed initial aggregate is tried once more, as if it were a resumable getMore."""
    original = ChangeStream._create_cursor

    def _create_cursor(self: Any) -> Any:
        try:
            return original(self)
        except PyMongoError:
            return original(self)

    mp.setattr(ChangeStream, "_create_cursor", _create_cursor)


def closes_empty_first_batch(mp: pytest.MonkeyPatch) -> None:
    """A cursor whose first batch is empty is closed as if exhausted."""
    original = ChangeStream._create_cursor

    def _create_cursor(self: Any) -> Any:
        cursor = original(self)
        if not cursor._has_next():
            cursor.close()
        return cursor

    mp.setattr(ChangeStream, "_create_cursor", _create_cursor)


def kill_cursors_error_raised(mp: pytest.MonkeyPatch) -> None:
    """A failed killCursors is raised (as a non-resumable error) instead of being suppressed."""

    def _close_cursor_now(self: Any, cursor_id: int, address: Any, session: Any = None, conn_mgr: Any = None) -> None:
        try:
            self._kill_cursors([cursor_id], address, self._get_topology(), session)
        except PyMongoError as exc:
            raise PyMongoError(f"killCursors failed: {exc}") from exc

    mp.setattr(MongoClient, "_close_cursor_now", _close_cursor_now)


def post_batch_token_lags(mp: pytest.MonkeyPatch) -> None:
    """The cursor reports the postBatchResumeToken of the reply before the current one."""

    def get(self: Any) -> Any:
        return self.__dict__.get("_previous_pbrt")

    def set_(self: Any, value: Any) -> None:
        self.__dict__["_previous_pbrt"] = self.__dict__.get("_current_pbrt")
        self.__dict__["_current_pbrt"] = value

    mp.setattr(CommandCursorBase, "_postbatchresumetoken", property(get, set_), raising=False)


def batch_token_for_every_document(mp: pytest.MonkeyPatch) -> None:
    """Every returned document caches the batch's postBatchResumeToken, not only the last one."""
    original = ChangeStream.try_next

    def try_next(self: Any) -> Any:
        change = original(self)
        if change is not None and self._cursor._post_batch_resume_token is not None:
            self._resume_token = self._cursor._post_batch_resume_token
        return change

    mp.setattr(ChangeStream, "try_next", try_next)


def first_batch_token_always_cached(mp: pytest.MonkeyPatch) -> None:
    """The aggregate's postBatchResumeToken is cached even when its first batch has changes."""
    original = AnyChangeStream._process_result

    def _process_result(self: Any, result: Any) -> None:
        original(self, result)
        token = result["cursor"].get("postBatchResumeToken")
        if token is not None:
            self._resume_token = token

    mp.setattr(AnyChangeStream, "_process_result", _process_result)


def operation_time_not_saved(mp: pytest.MonkeyPatch) -> None:
    """An empty first batch without postBatchResumeToken does not save the aggregate's operationTime."""

    def _process_result(self: Any, result: Any) -> None:
        if not result["cursor"]["firstBatch"] and "postBatchResumeToken" in result["cursor"]:
            self._resume_token = result["cursor"]["postBatchResumeToken"]

    mp.setattr(AnyChangeStream, "_process_result", _process_result)


def operation_time_overrides_user_time(mp: pytest.MonkeyPatch) -> None:
    """The aggregate's operationTime replaces the startAtOperationTime the application gave."""
    original = AnyChangeStream._process_result

    def _process_result(self: Any, result: Any) -> None:
        original(self, result)
        if (
            not result["cursor"]["firstBatch"]
            and "postBatchResumeToken" not in result["cursor"]
            and self._resume_token is None
        ):
            self._start_at_operation_time = result.get("operationTime")

    mp.setattr(AnyChangeStream, "_process_result", _process_result)


def token_cleared_without_post_batch_token(mp: pytest.MonkeyPatch) -> None:
    """An empty batch without postBatchResumeToken clears the cached resume token."""
    original = ChangeStream.try_next

    def try_next(self: Any) -> Any:
        change = original(self)
        if change is None and self._cursor._post_batch_resume_token is None:
            self._resume_token = None
        return change

    mp.setattr(ChangeStream, "try_next", try_next)


def operation_time_as_token(mp: pytest.MonkeyPatch) -> None:
    """With no token to cache, the stream makes one up from the aggregate's operationTime."""
    original = AnyChangeStream._process_result

    def _process_result(self: Any, result: Any) -> None:
        original(self, result)
        if self._resume_token is None and result.get("operationTime") is not None:
            self._resume_token = {"_data": f"operationTime:{result['operationTime']}"}

    mp.setattr(AnyChangeStream, "_process_result", _process_result)


def _reopened_on_missing_id(mp: pytest.MonkeyPatch, resume: bool) -> None:
    """The driver's error for a change without _id still raises, but the stream is reopened (and resumed)."""
    original = ChangeStream.try_next

    def try_next(self: Any) -> Any:
        try:
            return original(self)
        except InvalidOperation:
            self._closed = False
            if resume:
                self._resume()
            raise

    mp.setattr(ChangeStream, "try_next", try_next)


def missing_id_resumed(mp: pytest.MonkeyPatch) -> None:
    """A change without _id is treated as a resumable error: the stream resumes instead of closing."""
    _reopened_on_missing_id(mp, resume=True)


def stream_left_open_on_missing_id(mp: pytest.MonkeyPatch) -> None:
    """A change without _id raises, but the stream stays open and the next iteration goes on."""
    _reopened_on_missing_id(mp, resume=False)


def _kill_raising(stream: Any, old: Any, what: str) -> None:
    """Send killCursors for ``old`` (whatever state it is in) and raise its error."""
    address = _CursorAddress(old._address, old._get_namespace())
    try:
        stream._client._kill_cursors([old._id], address, stream._client._get_topology(), None)
    except PyMongoError as exc:
        raise PyMongoError(f"{what} failed: {exc}") from exc


def kill_after_new_aggregate_raised(mp: pytest.MonkeyPatch) -> None:
    """The resume opens the new cursor first, then kills the old one, always (even if gone), raising its error."""

    def _resume(self: Any) -> None:
        old = self._cursor
        self._cursor = self._create_cursor()
        _kill_raising(self, old, "killCursors")

    mp.setattr(ChangeStream, "_resume", _resume)


def second_kill_cursors_error_raised(mp: pytest.MonkeyPatch) -> None:
    """The resume kills the old cursor twice; the first error is suppressed, the second raised."""
    original = ChangeStream._resume

    def _resume(self: Any) -> None:
        old = self._cursor
        original(self)
        _kill_raising(self, old, "second killCursors")

    mp.setattr(ChangeStream, "_resume", _resume)


def user_pipeline_ignored(mp: pytest.MonkeyPatch) -> None:
    """The driver sends $changeStream alone and drops the stages the application gave."""
    mp.setattr(
        AnyChangeStream, "_aggregation_pipeline", lambda self: [{"$changeStream": self._change_stream_options()}]
    )


def resume_with_primary(mp: pytest.MonkeyPatch) -> None:
    """The resume selects a server with read preference primary, whatever the stream was created with."""
    _resume_with(
        mp,
        lambda stream: setattr(stream, "_target", stream._target.with_options(read_preference=ReadPreference.PRIMARY)),
    )


def resume_forgets_read_preference(mp: pytest.MonkeyPatch) -> None:
    """The resume uses the client's read preference (here the default, primary), not the stream's."""
    _resume_with(
        mp,
        lambda stream: setattr(
            stream,
            "_target",
            stream._target.with_options(read_preference=stream._target.database.client.read_preference),
        ),
    )


def resume_on_same_member(mp: pytest.MonkeyPatch) -> None:
    """The resume goes back to the server of the old cursor, without server selection."""

    def _resume(self: Any) -> None:
        address = self._cursor.address
        try:
            self._cursor.close()
        except PyMongoError:
            pass
        with self._client._tmp_session(self._session) as session:
            command = self._aggregation_command_class(
                self._target,
                sync_command_cursor.CommandCursor,
                self._aggregation_pipeline(),
                self._command_options(),
                result_processor=self._process_result,
                comment=self._comment,
            )
            self._cursor = self._client._retryable_read(
                command.get_cursor,
                self._target._read_preference_for(session),
                session,
                operation="aggregate",
                address=address,
            )

    mp.setattr(ChangeStream, "_resume", _resume)


def kill_on_primary(mp: pytest.MonkeyPatch) -> None:
    """The old cursor is killed on the primary instead of on the member that served it."""
    original = MongoClient._close_cursor_now

    def _close_cursor_now(self: Any, cursor_id: int, address: Any, session: Any = None, conn_mgr: Any = None) -> None:
        if address is not None and self.primary is not None:
            address = _CursorAddress(self.primary, address.namespace)
        original(self, cursor_id, address, session, conn_mgr)

    mp.setattr(MongoClient, "_close_cursor_now", _close_cursor_now)


#: Prose check id -> the mutants that must make it fail.
MUTANTS: dict[str, list[Mutant]] = {
    "1": [stale_resume_token],
    "2": [swallowed_errors],
    "2-driver-side": [swallowed_errors, missing_id_resumed, stream_left_open_on_missing_id],
    "3": [never_resumes, resume_forgets_token, resume_drops_pipeline, stale_resume_token],
    "4": [resumes_aggregate_errors],
    "4-network-error": [resumes_aggregate_errors],
    "6": [resume_with_primary, resume_forgets_read_preference, kill_on_primary],
    "6-member-down": [resume_with_primary, resume_forgets_read_preference, resume_on_same_member],
    "7": [closes_empty_first_batch],
    "8": [kill_cursors_error_raised, kill_after_new_aggregate_raised, second_kill_cursors_error_raised],
    "8-cursor-gone": [kill_after_new_aggregate_raised],
    "r51ca03b-9-operation-time": [operation_time_not_saved, operation_time_as_token],
    "r51ca03b-9-start-at-operation-time": [operation_time_overrides_user_time],
    "r51ca03b-12-last-id": [token_cleared_without_post_batch_token, stale_resume_token],
    "r51ca03b-12-resume-after": [token_cleared_without_post_batch_token],
    "r51ca03b-12-start-after": [token_cleared_without_post_batch_token],
    "r51ca03b-12-empty": [operation_time_as_token],
    "11-empty-batch": [post_batch_token_lags],
    "11-iterated-batch": [post_batch_token_lags, stale_resume_token],
    "13": [batch_token_for_every_document],
    "14-startAfter": [first_batch_token_always_cached],
    "14-resumeAfter": [first_batch_token_always_cached],
    "14-neither": [first_batch_token_always_cached],
    "17": [resume_drops_start_after],
    "18": [start_after_kept_after_results],
    "19": [user_pipeline_ignored],
}
#: Checks that cannot run on the embedded single-node target, hence have no mutant (6 runs on it presented
#: as an emulated replica set).
SKIPPED_ON_EMBEDDED: set[str] = set()

CHECKS = {prose_tests.check_id(check): check for check in prose_tests.CHECKS}


@pytest.fixture(scope="module")
def run() -> Iterator[HarnessRun]:
    options = RunOptions(expected="none", settings=RunSettings(test_timeout_s=20.0, iteration_timeout_s=2.0))
    with HarnessRun(options) as harness_run:
        yield harness_run


def test_every_check_has_a_mutant_or_a_reason() -> None:
    assert set(CHECKS) == set(MUTANTS) | SKIPPED_ON_EMBEDDED
    live = {key for key in CHECKS if not key.startswith("r")}
    earlier = {key for key in CHECKS if key.startswith("r51ca03b-")}
    assert {int(key.split("-")[0]) for key in live} == set(prose_tests.LIVE_PROSE_TESTS)
    assert {int(key.split("-")[1]) for key in earlier} == set(prose_tests.EARLIER_REVISION_TESTS)
    assert live | earlier == set(CHECKS)


@pytest.mark.parametrize("check_id", sorted(CHECKS))
def test_pristine_driver(run: HarnessRun, check_id: str) -> None:
    result = run.run_test(CHECKS[check_id])
    expected = "skipped" if check_id in SKIPPED_ON_EMBEDDED else "passed"
    assert result.outcome == expected, result.message


@pytest.mark.parametrize(
    "check_id,mutant",
    [(check_id, mutant) for check_id, mutants in MUTANTS.items() for mutant in mutants],
    ids=lambda value: value if isinstance(value, str) else value.__name__,
)
def test_mutant_fails_the_check(
    run: HarnessRun, monkeypatch: pytest.MonkeyPatch, check_id: str, mutant: Mutant
) -> None:
    check: CodeDefinedTest = CHECKS[check_id]
    mutant(monkeypatch)
    result = run.run_test(check)
    assert result.outcome == "failed", (
        f"{mutant.__name__} should make {check.name!r} fail: {result.outcome} {result.message}"
    )
