"""The early no-change verdict of the pymongo adapters is sound: a lost change fails at once, a delayed one passes.

docs/causes.md section 4 gives the rule. Each test opens a scope of the adapter under test on the embedded
SecantusDB, as the spec runner does (with the target's token format), and asserts on what the iteration answered:
the change, or ``NoChangeWithin`` with ``early`` and its fact. No assertion is on a duration: a rule that failed to
give the verdict shows as ``early`` being false (after the budget), one that gave it wrongly as a change missed.
The delays are made where the rule must see them: a write blocked by a fail point on the server while the stream's
getMores come back empty, a transaction committed late from another thread, a getMore held back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import bson
import pytest
from bson.timestamp import Timestamp

from harness.core.model import EntitySpec
from harness.core.observations import NoChangeWithin
from harness.core.resume_tokens import SECANTUSDB_BSON, UNREAD
from harness.drivers.pymongo.adapter import PyMongoAdapter
from harness.drivers.pymongo.api_shims import ASYNC_API
from harness.drivers.pymongo.stream_clock import Judgement, StreamClock
from harness.shared.wire import WireProxy
from tests.harness.drivers.watched import FILTERED, filtered_change_fails_at_once, op, watch_collection

DRIVERS = ("pymongo", "pymongo-async")
MODES = ("next", "tryNext", "iterator")
#: Long enough that no delay made here, on a loaded machine, comes near it: a change failed early shows at once.
LONG_BUDGET_S = 60.0
#: For the cases that must wait the budget out.
SHORT_BUDGET_S = 1.0


def adapter(driver: str) -> PyMongoAdapter:
    if driver == "pymongo":
        return PyMongoAdapter()
    if not ASYNC_API:
        pytest.skip("this pymongo has no AsyncMongoClient")
    from harness.drivers.pymongo.async_scope import AsyncPyMongoAdapter

    return AsyncPyMongoAdapter()


@pytest.fixture
def stream_of(embedded_run: Any, request: pytest.FixtureRequest) -> Iterator[Callable[..., Any]]:
    """``stream_of(driver, ...)``: a scope with client ``c`` (appName: the test's name), collection ``coll`` emptied,
    and a change stream ``s`` on it, opened as the spec runner opens scopes (the target's token format)."""
    scopes: list[Any] = []
    app_name = request.node.name[:100]

    def open_stream(
        driver: str,
        mode: str = "next",
        *,
        pipeline: list[Any] | None = None,
        budget_s: float = LONG_BUDGET_S,
        token_format: str | None = SECANTUSDB_BSON,
        uri: str | None = None,
    ) -> Any:
        scope = adapter(driver).open_scope(
            uri or embedded_run.driver_uri,
            iteration_timeout_s=budget_s,
            iteration_mode=mode,
            resume_token_format=token_format,
        )
        scopes.append(scope)
        return watch_collection(scope, app_name, pipeline)

    open_stream.app_name = app_name  # type: ignore[attr-defined]
    yield open_stream
    for scope in scopes:
        scope.close()
    embedded_run.target.admin.admin.command({"configureFailPoint": "failCommand", "mode": "off"})


def fail_point(run: Any, app_name: str, commands: list[str], block_ms: int) -> None:
    """``failCommand`` holding the next of ``commands`` from this test's client ``block_ms`` before it runs."""
    run.target.admin.admin.command(
        {
            "configureFailPoint": "failCommand",
            "mode": {"times": 1},
            "data": {"failCommands": commands, "blockConnection": True, "blockTimeMS": block_ms, "appName": app_name},
        }
    )


def watching(scope: Any) -> list[Judgement]:
    """Every judgement the scope's clock gives from now on (what kept the change possible, each time)."""
    seen: list[Judgement] = []
    judge = scope.clock.judge

    def recorded(stream: Any) -> Judgement:
        judgement = judge(stream)
        seen.append(judgement)
        return judgement

    scope.clock.judge = recorded
    return seen


def until(scope: Any) -> Any:
    return op(scope, "iterateUntilDocumentOrError", "s")


# -- a change that can no longer come fails at once ---------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("driver", DRIVERS)
def test_a_filtered_change_fails_at_once_saying_why(driver: str, mode: str, stream_of: Any) -> None:
    filtered_change_fails_at_once(stream_of(driver, mode, pipeline=FILTERED))


def _losing_first_change(driver: str, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """A driver that drops the first change the server delivered (its ``try_next`` answers None for it)."""
    lost: list[Any] = []
    if driver == "pymongo":
        from pymongo.change_stream import ChangeStream

        original = ChangeStream.try_next

        def lossy(self: Any) -> Any:
            change = original(self)
            if change is not None and not lost:
                lost.append(change)
                return None
            return change

        monkeypatch.setattr(ChangeStream, "try_next", lossy)
    else:
        from pymongo.asynchronous.change_stream import AsyncChangeStream

        original_async = AsyncChangeStream.try_next

        async def lossy_async(self: Any) -> Any:
            change = await original_async(self)
            if change is not None and not lost:
                lost.append(change)
                return None
            return change

        monkeypatch.setattr(AsyncChangeStream, "try_next", lossy_async)
    return lost


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("driver", DRIVERS)
def test_a_change_the_driver_lost_fails_at_once(
    driver: str, mode: str, stream_of: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server delivered the change and the driver dropped it: the stream's position is then the change's own
    token, at the write's time exactly (a position includes its own time), and the next empty getMore ends it."""
    lost = _losing_first_change(driver, monkeypatch)
    scope = stream_of(driver, mode)
    op(scope, "insertOne", "coll", document={"_id": 1})
    with pytest.raises(NoChangeWithin) as failed:
        until(scope)
    assert [change["documentKey"] for change in lost] == [{"_id": 1}]
    assert failed.value.early and "the stream passed the last write (insert)" in str(failed.value)


def _resuming_from_nowhere(driver: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A driver that forgets where its stream was (its token and start time) when it resumes: the resume opens a new
    stream at the server's present, past the changes it had not delivered yet."""
    if driver == "pymongo":
        from pymongo.change_stream import ChangeStream as Stream
    else:
        from pymongo.asynchronous.change_stream import AsyncChangeStream as Stream
    resume = Stream._resume

    def forgetting(self: Any) -> Any:
        self._resume_token = self._start_at_operation_time = None
        self._uses_start_after = self._uses_resume_after = False
        return resume(self)

    monkeypatch.setattr(Stream, "_resume", forgetting)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("driver", DRIVERS)
def test_a_resume_that_lost_its_start_point_fails_once_it_has_reopened(
    driver: str, mode: str, stream_of: Any, embedded_run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The resume's aggregate, sent after the write's reply and naming no start point, opens the stream past the
    write: no getMore need be waited for."""
    _resuming_from_nowhere(driver, monkeypatch)
    scope = stream_of(driver, mode)
    op(scope, "insertOne", "coll", document={"_id": 8})
    embedded_run.target.admin.admin.command(
        {
            "configureFailPoint": "failCommand",
            "mode": {"times": 1},
            "data": {"failCommands": ["getMore"], "closeConnection": True, "appName": stream_of.app_name},
        }
    )
    with pytest.raises(NoChangeWithin) as failed:
        until(scope)
    assert failed.value.early, str(failed.value)
    assert "the stream was opened after its reply, with no start point, and an empty first batch" in str(failed.value)


# -- a change delayed, not lost, still arrives ----------------------------------------------------------------------


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_write_awaiting_its_reply_keeps_the_stream_waiting(driver: str, stream_of: Any, embedded_run: Any) -> None:
    """A write from another thread, held by the server before it runs: the stream's getMores come back empty with
    positions past every write answered so far, and the change only exists once the held write runs."""
    scope = stream_of(driver)
    seen = watching(scope)
    fail_point(embedded_run, stream_of.app_name, ["insert"], 2500)
    writer = threading.Thread(target=op, args=(scope, "insertOne", "coll"), kwargs={"document": {"_id": 2}})
    writer.start()
    try:
        _wait_for_started(scope, "insert")
        change = until(scope)
    finally:
        writer.join()
    assert change["documentKey"] == {"_id": 2}
    assert any(j.why == "the test's insert was awaiting its reply" for j in seen), [j.why for j in seen]


def _wait_for_started(scope: Any, command: str) -> None:
    """Until the scope's clock has seen ``command`` sent (the writer thread has begun it)."""
    event = threading.Event()
    for _ in range(2000):
        with scope.clock._lock:
            if command in scope.clock._writes.values():
                return
        event.wait(0.01)
    raise AssertionError(f"{command} was never sent")


@pytest.mark.parametrize("driver", DRIVERS)
def test_an_open_transaction_keeps_the_stream_waiting(driver: str, stream_of: Any) -> None:
    """The insert's reply came long ago, inside a transaction: its change exists only at the commit, which another
    thread makes once the stream has been seen waiting on the open transaction."""
    scope = stream_of(driver)
    scope.create_entity(EntitySpec("session", "session0", {"client": "c"}))
    op(scope, "startTransaction", "session0")
    op(scope, "insertOne", "coll", document={"_id": 3}, session="session0")
    judged_open = threading.Event()
    judge = scope.clock.judge

    def judged(stream: Any) -> Judgement:
        judgement = judge(stream)
        if judgement.why == "a transaction of the test was open":
            judged_open.set()
        return judgement

    scope.clock.judge = judged

    def commit() -> None:
        judged_open.wait(LONG_BUDGET_S)
        op(scope, "commitTransaction", "session0")

    committer = threading.Thread(target=commit)
    committer.start()
    try:
        change = until(scope)
    finally:
        judged_open.set()
        committer.join()
    assert change["documentKey"] == {"_id": 3}


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_held_back_getmore_delays_the_change_without_losing_it(
    driver: str, stream_of: Any, embedded_run: Any
) -> None:
    scope = stream_of(driver)
    op(scope, "insertOne", "coll", document={"_id": 4})
    fail_point(embedded_run, stream_of.app_name, ["getMore"], 1500)
    assert until(scope)["documentKey"] == {"_id": 4}


# -- where the position is unknown, the budget holds and the fact says why -----------------------------------------


@pytest.mark.parametrize("driver", DRIVERS)
def test_replies_without_a_post_batch_resume_token_keep_the_budget(
    driver: str, stream_of: Any, embedded_run: Any
) -> None:
    """A server before 4.0.7 (replies shaped by the wire proxy): no position, so the budget, and the fact says so."""
    host, port = embedded_run.target.admin.address
    with WireProxy(host, port) as proxy:
        proxy.shape_replies({"profile": "pre-4.0.7-cursor-replies"})
        scope = stream_of(driver, "tryNext", pipeline=FILTERED, budget_s=SHORT_BUDGET_S, uri=proxy.uri)
        op(scope, "insertOne", "coll", document={"_id": 5})
        with pytest.raises(NoChangeWithin) as failed:
            until(scope)
        scope.close()
    assert not failed.value.early
    assert str(failed.value) == (
        "no document arrived within 1s (no early verdict: the target's getMore replies carry no postBatchResumeToken)"
    )


def test_tokens_the_harness_does_not_read_keep_the_budget(stream_of: Any) -> None:
    scope = stream_of("pymongo", pipeline=FILTERED, budget_s=SHORT_BUDGET_S, token_format=UNREAD)
    op(scope, "insertOne", "coll", document={"_id": 6})
    with pytest.raises(NoChangeWithin) as failed:
        until(scope)
    assert not failed.value.early
    assert "no document arrived within 1s (no early verdict: the postBatchResumeToken's time cannot be read" in str(
        failed.value
    )


@pytest.mark.parametrize("mode", MODES)
def test_a_scope_without_a_token_format_waits_its_budget_as_before(mode: str, stream_of: Any) -> None:
    """What prose checks, campaigns and the reference executor open: no early verdict, the message unchanged."""
    scope = stream_of("pymongo", mode, pipeline=FILTERED, budget_s=SHORT_BUDGET_S, token_format=None)
    op(scope, "insertOne", "coll", document={"_id": 7})
    with pytest.raises(NoChangeWithin) as failed:
        until(scope)
    assert not failed.value.early and str(failed.value) == "no document arrived within 1s"


# -- the clock's premises, one by one (command events made by hand) ------------------------------------------------


class _Event:
    """A command event as pymongo's listeners get it (only what the clock reads)."""

    _ids = iter(range(1, 1_000_000))

    def __init__(self, name: str, command: Any = None, reply: Any = None, failure: Any = None, request_id: int = 0):
        self.command_name, self.command, self.reply, self.failure = name, command or {}, reply or {}, failure
        self.request_id = request_id or next(self._ids)
        self.connection_id = ("127.0.0.1", 27017)


class _Cursor:
    def __init__(self, cursor_id: int) -> None:
        self._id, self._address, self._data = cursor_id, ("127.0.0.1", 27017), []


class _Stream:
    alive = True

    def __init__(self, cursor_id: int = 42) -> None:
        self._cursor = _Cursor(cursor_id)


def _token(time: Timestamp) -> dict[str, str]:
    return {"_data": bson.encode({"s": 1, "t": time, "n": "db.c", "k": {}}).hex()}


def _reply(time: Timestamp, **fields: Any) -> dict[str, Any]:
    return {"ok": 1.0, "operationTime": time, **fields}


def _command(clock: StreamClock, name: str, reply: Any = None, command: Any = None, failure: Any = None) -> None:
    event = _Event(name, command)
    clock.started(event)  # type: ignore[arg-type]
    if failure is not None:
        clock.failed(_Event(name, failure=failure, request_id=event.request_id))  # type: ignore[arg-type]
    elif reply is not None:
        clock.succeeded(_Event(name, reply=reply, request_id=event.request_id))  # type: ignore[arg-type]


def _get_more(clock: StreamClock, position: Timestamp, batch: list[Any] | None = None, cursor_id: int = 42) -> None:
    cursor = {"id": cursor_id, "nextBatch": batch or [], "postBatchResumeToken": _token(position)}
    _command(clock, "getMore", _reply(position, cursor=cursor), {"getMore": cursor_id})


def _written(clock: StreamClock, time: Timestamp, name: str = "insert") -> None:
    _command(clock, name, _reply(time), {name: "c"})


def test_the_clock_gives_the_verdict_only_when_every_premise_holds() -> None:
    clock = StreamClock(SECANTUSDB_BSON)
    stream = _Stream()
    _command(clock, "aggregate", _reply(Timestamp(10, 1), cursor={"id": 42, "firstBatch": []}), {"pipeline": []})
    _written(clock, Timestamp(10, 5))
    assert clock.judge(stream).why == "the stream's cursor had no getMore yet"
    _get_more(clock, Timestamp(10, 4))
    assert clock.judge(stream).why == (
        "the stream's position Timestamp(10, 4) had not reached the last write (insert) at Timestamp(10, 5)"
    )
    _get_more(clock, Timestamp(10, 5), batch=[{"_id": _token(Timestamp(10, 5))}])
    assert clock.judge(stream).why == "the stream's last batch was not empty"
    _get_more(clock, Timestamp(10, 5))
    assert clock.judge(stream).early
    assert not clock.judge(_Stream(cursor_id=43)).early  # another cursor (after a resume): no getMore on it yet
    _written(clock, Timestamp(10, 6), "update")
    assert clock.judge(stream).why == "no getMore sent since the last write's reply had come back"
    _get_more(clock, Timestamp(10, 9))
    assert clock.judge(stream).early == (
        "no document arrived; the stream passed the last write (update) at Timestamp(10, 6): a getMore sent after "
        "its reply returned an empty batch with a postBatchResumeToken at Timestamp(10, 9), so no change can come "
        "without a new write"
    )


def test_a_getmore_still_waiting_on_the_server_neither_gives_nor_keeps_the_verdict() -> None:
    """An executor's slice may end while the driver's next getMore waits on the server (docs/executor-protocol.md
    6.4.2): the verdict rests on the last getMore answered. One sent after the write and not answered yet is no
    evidence either way; one answered empty after it is."""
    clock = StreamClock(SECANTUSDB_BSON)
    stream = _Stream()
    _command(clock, "aggregate", _reply(Timestamp(10, 1), cursor={"id": 42, "firstBatch": []}), {"pipeline": []})
    _written(clock, Timestamp(10, 5))
    clock.started(_Event("getMore", {"getMore": 42}))  # type: ignore[arg-type]
    assert clock.judge(stream).why == "the stream's cursor had no getMore yet"
    _get_more(clock, Timestamp(10, 5))
    assert clock.judge(stream).early
    clock.started(_Event("getMore", {"getMore": 42}))  # type: ignore[arg-type]
    assert clock.judge(stream).early  # the next one, on its way, changes nothing: no write was made since
    _written(clock, Timestamp(10, 6), "update")
    clock.started(_Event("getMore", {"getMore": 42}))  # type: ignore[arg-type]
    assert clock.judge(stream).why == "no getMore sent since the last write's reply had come back"


def test_a_stream_opened_after_the_writes_with_no_start_point_is_past_them() -> None:
    clock = StreamClock(SECANTUSDB_BSON)
    _written(clock, Timestamp(10, 5))
    opened = {"cursor": {"id": 42, "firstBatch": [], "postBatchResumeToken": _token(Timestamp(10, 6))}}
    _command(clock, "aggregate", _reply(Timestamp(10, 6), **opened), {"pipeline": [{"$changeStream": {}}]})
    assert "opened after its reply, with no start point" in str(clock.judge(_Stream()).early)
    resumed = {"pipeline": [{"$changeStream": {"resumeAfter": _token(Timestamp(10, 1))}}]}
    _command(clock, "aggregate", _reply(Timestamp(10, 7), **opened), resumed)
    assert clock.judge(_Stream()).why == "the stream's cursor had no getMore yet"  # it reads from its start point


def test_a_write_or_a_transaction_still_open_keeps_the_change_possible() -> None:
    clock = StreamClock(SECANTUSDB_BSON)
    _written(clock, Timestamp(10, 1))
    clock.started(_Event("update", {"update": "c"}))  # type: ignore[arg-type]
    _get_more(clock, Timestamp(10, 2))
    assert clock.judge(_Stream()).why == "the test's update was awaiting its reply"

    clock = StreamClock(SECANTUSDB_BSON)
    session = {"lsid": {"id": "s1"}, "autocommit": False}
    _command(clock, "insert", _reply(Timestamp(10, 1)), {"insert": "c", "startTransaction": True, **session})
    _get_more(clock, Timestamp(10, 2))
    assert clock.judge(_Stream()).why == "a transaction of the test was open"
    _command(clock, "commitTransaction", _reply(Timestamp(10, 3)), {"commitTransaction": 1, **session})
    _get_more(clock, Timestamp(10, 3))
    assert clock.judge(_Stream()).early


@pytest.mark.parametrize(
    "make,why",
    [
        (
            lambda c: _command(c, "insert", command={"insert": "c"}, failure={"errmsg": "connection closed"}),
            "the test's insert got no reply from the server: whether and when it wrote is unknown",
        ),
        (
            lambda c: _command(c, "insert", {"ok": 1}, {"insert": "c"}),
            "the reply to the test's insert carried no operationTime",
        ),
        (
            lambda c: _command(
                c, "createIndexes", _reply(Timestamp(10, 1)), {"indexes": [{"key": {"a": 1}, "expireAfterSeconds": 1}]}
            ),
            "the test's createIndexes set a TTL index, whose deletes come without a write",
        ),
    ],
)
def test_a_write_of_unknown_time_or_a_ttl_index_keeps_the_budget(make: Any, why: str) -> None:
    clock = StreamClock(SECANTUSDB_BSON)
    _written(clock, Timestamp(10, 1))
    make(clock)
    _get_more(clock, Timestamp(20, 1))
    assert clock.judge(_Stream()) == Judgement(None, why)


def test_a_failed_write_the_server_answered_is_a_write_at_its_reply_time() -> None:
    clock = StreamClock(SECANTUSDB_BSON)
    failure = {"ok": 0, "code": 11000, "operationTime": Timestamp(10, 4)}
    _command(clock, "findAndModify", command={"findAndModify": "c"}, failure=failure)
    _get_more(clock, Timestamp(10, 3))
    assert "had not reached the last write (findAndModify) at Timestamp(10, 4)" in clock.judge(_Stream()).why


def test_reads_are_not_writes_but_an_aggregate_that_writes_is() -> None:
    clock = StreamClock(SECANTUSDB_BSON)
    _written(clock, Timestamp(10, 1))
    _command(clock, "find", _reply(Timestamp(10, 7)), {"find": "c"})
    _get_more(clock, Timestamp(10, 2))
    assert clock.judge(_Stream()).early  # the find's later time is no write
    _command(clock, "aggregate", _reply(Timestamp(10, 8)), {"pipeline": [{"$out": "d"}]})
    _get_more(clock, Timestamp(10, 7))
    assert "had not reached the last write (aggregate) at Timestamp(10, 8)" in clock.judge(_Stream()).why
