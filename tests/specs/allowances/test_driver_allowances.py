"""Driver-side allowances: pymongo changed into another driver the references permit, and the checks still pass.

Each variation patches pymongo for the length of one test (``monkeypatch``), the way another conforming
driver behaves where the change-streams spec leaves it free: the Java driver keeps a stream open after an
error it does not resume, and so on. The checks of the allowance's rules must all pass (those that pass with
pymongo as shipped), and the variation must be seen to happen in at least one check of each rule
(tests/specs/allowances/support.py). The registry (specs/coverage/allowances/) names this table as the proof.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pymongo.cursor_shared import _CURSOR_CLOSED_ERRORS, _CursorAddress
from pymongo.errors import OperationFailure, PyMongoError
from pymongo.synchronous import change_stream as sync_change_stream
from pymongo.synchronous.command_cursor import CommandCursor

from harness.engine.run import HarnessRun
from tests.specs.allowances.support import Observed, Variation, assert_checks_accept, open_run
from tests.specs.scenarios.test_driver_upstream import KNOWN_OPERATION_TYPES

ChangeStream = sync_change_stream.ChangeStream


@pytest.fixture(scope="module")
def run() -> Iterator[HarnessRun]:
    yield from open_run()


def _stream_cursors(mp: pytest.MonkeyPatch) -> None:
    """Mark the cursors change streams open, so a variation of the command cursor touches only theirs."""
    original = ChangeStream._create_cursor

    def create_cursor(self: Any) -> Any:
        cursor = original(self)
        cursor._allowance_stream = True
        return cursor

    mp.setattr(ChangeStream, "_create_cursor", create_cursor)


def kept_open_after_fatal_errors(mp: pytest.MonkeyPatch, observed: Observed) -> None:
    """A server error the stream does not resume is raised, and nothing is closed: the stream, its cursor and the
    server cursor stay as they were (no killCursors), so the next iteration sends a getMore on the same cursor id,
    as the Java driver does. Errors that end the cursor (CursorNotFound and the like), resumable errors and the
    driver's own errors (a change without its resume token, which the spec says closes the stream) are unchanged.
    """
    _stream_cursors(mp)
    original_send = CommandCursor._send_message
    real_close = CommandCursor.close

    def send_message(self: Any, operation: Any) -> None:
        if not getattr(self, "_allowance_stream", False):
            return original_send(self, operation)
        if getattr(self, "_allowance_kept", None) is not None:
            observed.saw(f"getMore on cursor {self._id} after error {self._allowance_kept}")
            self._allowance_kept = None
        asked: list[bool] = []
        self.close = lambda: asked.append(True)
        try:
            original_send(self, operation)
        except OperationFailure as exc:
            del self.close
            if exc.code in _CURSOR_CLOSED_ERRORS or exc.timeout or sync_change_stream._resumable(exc):
                real_close(self)
            else:
                self._allowance_kept = exc.code
            raise
        except BaseException:
            del self.close
            real_close(self)
            raise
        del self.close
        if asked:
            real_close(self)

    original_try_next = ChangeStream.try_next

    def try_next(self: Any) -> Any:
        stream_close = self.close

        def close() -> None:
            if getattr(self._cursor, "_allowance_kept", None) is None:
                stream_close()

        self.close = close
        try:
            return original_try_next(self)
        finally:
            del self.close

    mp.setattr(CommandCursor, "_send_message", send_message)
    mp.setattr(ChangeStream, "try_next", try_next)


def no_batch_size_on_get_more(mp: pytest.MonkeyPatch, observed: Observed) -> None:
    """The batchSize the application gave goes on the aggregate only; the cursor's getMores go without it (the
    server then fills each batch as it likes)."""
    original = ChangeStream._create_cursor

    def create_cursor(self: Any) -> Any:
        cursor = original(self)
        if cursor._batch_size:
            observed.saw(f"batchSize {cursor._batch_size} left off the getMores of cursor {cursor._id}")
            cursor._batch_size = 0
        return cursor

    mp.setattr(ChangeStream, "_create_cursor", create_cursor)


def old_cursor_killed_after_the_new_aggregate(mp: pytest.MonkeyPatch, observed: Observed) -> None:
    """A resume opens the new cursor first and kills the old one after it, on the old cursor's server, its errors
    suppressed as before."""

    def resume(self: Any) -> None:
        old = self._cursor
        self._cursor = self._create_cursor()
        observed.saw(f"old cursor {old._id} closed after the resume's aggregate")
        try:
            old.close()
        except PyMongoError:
            pass

    mp.setattr(ChangeStream, "_resume", resume)


def unknown_operation_type_named_unknown(mp: pytest.MonkeyPatch, observed: Observed) -> None:
    """The driver represents an operationType it does not know as "unknown" (a typed driver's enum value) instead of
    the literal string; nothing is raised."""
    original = ChangeStream.try_next

    def try_next(self: Any) -> Any:
        change = original(self)
        kind = change.get("operationType") if isinstance(change, dict) else None
        if isinstance(kind, str) and kind not in KNOWN_OPERATION_TYPES:
            observed.saw(f"operationType {kind!r} handed over as 'unknown'")
            change = {**change, "operationType": "unknown"}
        return change

    mp.setattr(ChangeStream, "try_next", try_next)


def exhausted_cursor_killed_on_close(mp: pytest.MonkeyPatch, observed: Observed) -> None:
    """A stream whose server cursor is gone (the reply that brought the invalidate said cursor id 0) is closed with a
    killCursors for the id the server last gave, sent once: when the stream finds itself exhausted, or when the
    application closes it first. The reply (a cursor not found) is ignored."""
    _stream_cursors(mp)
    original_send = CommandCursor._send_message
    original_try_next = ChangeStream.try_next
    original_close = ChangeStream.close

    def send_message(self: Any, operation: Any) -> None:
        if getattr(self, "_allowance_stream", False) and self._id:
            self._allowance_last_id = self._id
        original_send(self, operation)

    def kill_gone_cursor(stream: Any) -> None:
        cursor = stream._cursor
        last = getattr(cursor, "_allowance_last_id", None)
        if cursor._id or not last or cursor._address is None:
            return
        cursor._allowance_last_id = None
        observed.saw(f"killCursors for cursor {last}, which the server had closed")
        address = _CursorAddress(cursor._address, cursor._get_namespace())
        try:
            stream._client._kill_cursors([last], address, stream._client._get_topology(), None)
        except PyMongoError:
            pass

    def try_next(self: Any) -> Any:
        change = original_try_next(self)
        if self._closed:
            kill_gone_cursor(self)
        return change

    def close(self: Any) -> None:
        kill_gone_cursor(self)
        original_close(self)

    mp.setattr(CommandCursor, "_send_message", send_message)
    mp.setattr(ChangeStream, "try_next", try_next)
    mp.setattr(ChangeStream, "close", close)


#: allowance id -> (its rules; the variation). specs/coverage/allowances/driver.yml lists them.
ALLOWED_DRIVER: dict[str, tuple[tuple[str, ...], Variation]] = {
    "stream kept open after an error it does not resume": (
        (
            "CS-RESUME-NONRESUMABLE",
            "CS-ERR-LABEL",
        ),
        kept_open_after_fatal_errors,
    ),
    "batchSize on the aggregate only": (
        (
            "CS-OPT-BATCHSIZE",
            "CS-OPT-AGGREGATE",
        ),
        no_batch_size_on_get_more,
    ),
    "old cursor killed after the resume's aggregate": (
        (
            "CS-KILL-RESUME",
            "CS-KILL-SUPPRESS",
        ),
        old_cursor_killed_after_the_new_aggregate,
    ),
    "unknown operationType represented as unknown": (
        ("CS-EVENT-UNKNOWNTYPE",),
        unknown_operation_type_named_unknown,
    ),
    "killCursors sent when closing an exhausted stream": (
        ("CS-RTOKEN-INVALIDATE-CLOSED",),
        exhausted_cursor_killed_on_close,
    ),
}


@pytest.mark.parametrize("allowance_id", sorted(ALLOWED_DRIVER))
def test_the_checks_accept_a_driver_that_varies_as_permitted(run, monkeypatch, allowance_id):
    rules, variation = ALLOWED_DRIVER[allowance_id]
    assert_checks_accept(run, monkeypatch, allowance_id, rules, variation)
