"""Knowing when a change can no longer come: the clock behind the early no-change verdict (docs/causes.md 4).

An iteration that waits for a change the stream will never deliver used to wait out its whole budget. A scope can
see every command its clients send and every reply (an in-process driver through command monitoring, an executor
through its scope's command log, docs/executor-protocol.md 6.4.2), so it knows when each write of the test was made
(the reply's ``operationTime``), which write is still waiting for its reply, which transaction is still open, and
what each getMore of a stream brought back (its batch and its ``postBatchResumeToken``). One :class:`StreamClock`
per scope is told every command event in the order the driver published them, and :meth:`StreamClock.judge_cursor`
answers, between two of the driver's own iterations, whether waiting longer can still bring a change:

    the stream's last getMore on its current cursor (or, before any, the aggregate that opened it with no start
    point) returned an empty batch, was sent after the reply to every write of the test, and its
    postBatchResumeToken stands for a position at or past the last write's time; no write is waiting for its reply,
    no transaction is open, nothing is buffered in the driver.

Then the change can no longer come: every write that could make it had been made and was visible before that
getMore ran, and the server read past it and returned nothing. Where any part is unknown (no postBatchResumeToken,
a token whose time the harness cannot read for this target, a write whose reply never came or carried no
operation time, a TTL index that may delete later), the iteration keeps its budget and its ``no-change`` fact says
why. The rule assumes that no write *starts* during the iteration: the spec runner runs a test's operations one at
a time (it has no ``runOnThread``), so it vouches for that and gives the scope a token format; prose checks and
campaigns, which write through the harness's admin client or from threads, give none and keep the budget.

The clock knows commands, not drivers: which cursor is a stream's current one, and whether the driver holds a
change, is the adapter's to say (:mod:`harness.drivers.pymongo.stream_clock` reads it from pymongo's stream;
:mod:`harness.drivers.executor.early_verdict` from the executor's log and answers).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from bson.timestamp import Timestamp

from harness.core.resume_tokens import UnreadableToken, read_position, show_time

#: A cursor as the clock knows it: (the connection or server it lives on, or None where that is not known; its id).
CursorKey = tuple[Any, int]

#: Commands that never produce a change event. Every other command is taken as a write (a command the list does
#: not know included): its reply's time moves the last write, and until the reply comes the change may still come.
READS = frozenset(
    {
        "find",
        "getMore",
        "count",
        "distinct",
        "listCollections",
        "listIndexes",
        "listDatabases",
        "listSearchIndexes",
        "killCursors",
        "hello",
        "isMaster",
        "ismaster",
        "ping",
        "buildInfo",
        "serverStatus",
        "hostInfo",
        "dbStats",
        "collStats",
        "explain",
        "getParameter",
        "connectionStatus",
        "endSessions",
        "abortTransaction",
        "saslStart",
        "saslContinue",
        "authenticate",
        "getnonce",
        "whatsmyuri",
    }
)
#: Aggregation stages that write (an ``aggregate`` with one is a write).
_WRITING_STAGES = ("$out", "$merge")
#: The ``$changeStream`` options that start a stream elsewhere than where the server is when it opens.
START_POINTS = ("resumeAfter", "startAfter", "startAtOperationTime")


@dataclass
class _Reply:
    """The last *answered* command of a change-stream cursor (the aggregate that opened it, then each getMore that
    came back): the stream's last word on where it is."""

    sent: int  # the clock's tick when it was sent
    empty: bool = False
    token: Any = None
    failed: bool = False
    #: The aggregate that opened the cursor with no start point: the stream begins where the server is now.
    opened_now: bool = False
    getmore: bool = True
    #: The server ended the cursor (id 0 in the reply).
    closed: bool = False


@dataclass(frozen=True)
class Judgement:
    """Whether a change can still come: ``early`` is the fact when it cannot, else ``why`` says what keeps it open
    (a wait that may end, such as a write awaiting its reply) or why the stream's position is unknown."""

    early: str | None
    why: str = ""


class StreamClock:
    """Every command of one scope's clients in one order: writes and their times, what is in flight, getMores."""

    def __init__(self, token_format: str | None) -> None:
        #: The format of the target's resume tokens (harness.core.resume_tokens); None: no early verdict at all.
        self.token_format = token_format
        self._lock = threading.Lock()
        self._tick = 0
        self._writes: dict[Hashable, str] = {}  # request id -> command name, sent and not answered
        #: request id -> the cursor and the tick it was sent at, until its reply comes
        self._getmores_sent: dict[Hashable, tuple[CursorKey, int]] = {}
        self._opening: dict[Hashable, tuple[Any, int, bool]] = {}  # request id -> (address, tick, no start point)
        self._cursors: dict[tuple[Any, int], _Reply] = {}  # (address, cursor id) -> its last reply
        self._last_write: Timestamp | None = None
        self._last_write_name = ""
        self._last_write_tick = 0
        self._unknown = ""  # why the last write's time is unknown for good ("" while it is known)
        self._open_transactions: set[str] = set()  # the sessions with a transaction begun and not ended
        self._ending: dict[Hashable, str] = {}  # request id of a commitTransaction/abortTransaction -> its session

    # -- the events, in the order the driver published them ----------------------------------------------------
    def command_started(self, name: str, command: Mapping[str, Any], request_id: Hashable, connection: Any) -> None:
        """A command was sent on ``connection`` (a cursor's getMores and its aggregate name the same one)."""
        with self._lock:
            self._tick += 1
            if command.get("autocommit") is False:  # inside a transaction: its writes come at the commit
                session = repr(command.get("lsid"))
                if name in ("commitTransaction", "abortTransaction"):
                    self._ending[request_id] = session
                else:
                    self._open_transactions.add(session)
            stage = _change_stream_stage(name, command)
            if name == "getMore":
                key = (connection, int(command.get("getMore") or 0))
                # The cursor's last word stays its last *answered* command: a getMore still on its way (an executor's
                # slice may end while one waits on the server) was sent with nothing buffered, after an empty reply.
                self._getmores_sent[request_id] = (key, self._tick)
            elif stage is not None:
                fresh = not any(point in stage for point in START_POINTS)
                self._opening[request_id] = (connection, self._tick, fresh)
            elif _writes(name, command):
                self._writes[request_id] = name
                if _sets_ttl(name, command):
                    self._unknown = f"the test's {name} set a TTL index, whose deletes come without a write"

    def command_succeeded(self, name: str, request_id: Hashable, reply: Mapping[str, Any]) -> CursorKey | None:
        """A command's reply; the cursor it opened when it was a change stream's aggregate."""
        return self._answered(name, request_id, reply, server_replied=True)

    def command_failed(self, name: str, request_id: Hashable, failure: Any) -> CursorKey | None:
        """A command failed: ``failure`` is the server's reply for a server error, anything else for a client-side
        one (a network error: whether and when a write was made is then unknown)."""
        reply = failure if isinstance(failure, Mapping) else {}
        return self._answered(name, request_id, reply, server_replied="code" in reply or "operationTime" in reply)

    def _answered(
        self, name: str, request_id: Hashable, reply: Mapping[str, Any], *, server_replied: bool
    ) -> CursorKey | None:
        with self._lock:
            self._tick += 1
            # A commit or abort that was answered ended its transaction (a commit whose reply never came is a write
            # of unknown outcome below).
            self._open_transactions.discard(self._ending.pop(request_id, ""))
            sent = self._getmores_sent.pop(request_id, None)
            if sent is not None:
                self._got_more(*sent, reply, server_replied)
            opened: CursorKey | None = None
            opening = self._opening.pop(request_id, None)
            if opening is not None:
                opened = self._opened(opening, reply, server_replied)
            if self._writes.pop(request_id, None) is None:
                if self._last_write is None and server_replied:  # the first reply: the writes of the set-up
                    self._bump(_reply_time(reply), "the writes before the test's first command", 0)
                return opened
            time = _reply_time(reply)
            if not server_replied:
                self._unknown = f"the test's {name} got no reply from the server: whether and when it wrote is unknown"
            elif time is None:
                self._unknown = f"the reply to the test's {name} carried no operationTime"
            else:
                self._bump(time, name, self._tick)
            return opened

    def _bump(self, time: Timestamp | None, name: str, tick: int) -> None:
        if time is not None and (self._last_write is None or time >= self._last_write):
            self._last_write, self._last_write_name = time, name
        self._last_write_tick = max(self._last_write_tick, tick)

    def _opened(
        self, opening: tuple[Any, int, bool], reply: Mapping[str, Any], server_replied: bool
    ) -> CursorKey | None:
        address, tick, fresh = opening
        cursor = reply.get("cursor") if server_replied and reply.get("ok") else None
        if not isinstance(cursor, Mapping) or not cursor.get("id"):
            return None
        batch = cursor.get("firstBatch")
        key = (address, int(cursor["id"]))
        self._cursors[key] = _Reply(
            tick,
            empty=isinstance(batch, list) and not batch,
            token=cursor.get("postBatchResumeToken"),
            opened_now=fresh,
            getmore=False,
        )
        return key

    def _got_more(self, key: CursorKey, sent: int, reply: Mapping[str, Any], server_replied: bool) -> None:
        last = self._cursors[key] = _Reply(sent)
        cursor = reply.get("cursor") if server_replied and reply.get("ok") else None
        if not isinstance(cursor, Mapping):
            last.failed = True
            return
        batch = cursor.get("nextBatch")
        last.empty = isinstance(batch, list) and not batch
        last.closed = cursor.get("id") in (0, None)
        last.token = cursor.get("postBatchResumeToken")

    # -- the verdict ---------------------------------------------------------------------------------------------
    def closed(self, key: CursorKey) -> bool:
        """Whether the server ended the cursor (a getMore's reply with cursor id 0): no change comes on it."""
        with self._lock:
            last = self._cursors.get(key)
            return last is not None and last.closed

    def judge_cursor(self, key: CursorKey | None, *, buffered: bool = False) -> Judgement:
        """Whether a change can still come to the stream whose current cursor is ``key`` (None: it has none open),
        asked between two of the driver's iterations, after one returned nothing; ``buffered``: the driver holds
        changes it has not handed out."""
        if self.token_format is None:
            return Judgement(None, "")
        if key is None:
            return Judgement(None, "the stream is not open")
        if buffered:
            return Judgement(None, "a change is buffered in the driver")
        with self._lock:
            last = self._cursors.get(key)
            if last is None or not (last.getmore or last.opened_now):
                # A stream opened from a start point has read nothing past it until a getMore has.
                return Judgement(None, "the stream's cursor had no getMore yet")
            if last.failed:
                return Judgement(None, "the stream's last getMore failed")
            if last.token is None:
                return Judgement(None, "the target's getMore replies carry no postBatchResumeToken")
            try:
                position = read_position(last.token, self.token_format)
            except UnreadableToken as exc:
                return Judgement(None, f"the postBatchResumeToken's time cannot be read: {exc}")
            if self._unknown:
                return Judgement(None, self._unknown)
            if self._writes:
                return Judgement(None, f"the test's {next(iter(self._writes.values()))} was awaiting its reply")
            if self._open_transactions:
                return Judgement(None, "a transaction of the test was open")
            if self._last_write is None:
                return Judgement(None, "no reply told the time of the writes before the stream")
            if last.sent < self._last_write_tick:
                return Judgement(None, "no getMore sent since the last write's reply had come back")
            if not last.empty:
                return Judgement(None, "the stream's last batch was not empty")
            write = f"the last write ({self._last_write_name}) at {show_time(self._last_write)}"
            if not position.passed(self._last_write):
                return Judgement(None, f"the stream's position {position} had not reached {write}")
            how = (
                "a getMore sent after its reply returned an empty batch"
                if last.getmore
                else "the stream was opened after its reply, with no start point, and an empty first batch"
            )
            return Judgement(
                f"no document arrived; the stream passed {write}: {how} with a postBatchResumeToken at "
                f"{position}, so no change can come without a new write"
            )


def _change_stream_stage(name: str, command: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ``$changeStream`` stage of an aggregate that opens a change stream, else None."""
    pipeline = command.get("pipeline") if name == "aggregate" else None
    if not isinstance(pipeline, list) or not pipeline or not isinstance(pipeline[0], Mapping):
        return None
    stage = pipeline[0].get("$changeStream")
    return stage if isinstance(stage, Mapping) else None


def _writes(name: str, command: Mapping[str, Any]) -> bool:
    if name == "aggregate":
        pipeline = command.get("pipeline")
        return isinstance(pipeline, list) and any(
            isinstance(stage, Mapping) and any(key in stage for key in _WRITING_STAGES) for stage in pipeline
        )
    return name not in READS


def _sets_ttl(name: str, command: Mapping[str, Any]) -> bool:
    if name == "createIndexes":
        indexes = command.get("indexes")
        return isinstance(indexes, list) and any(
            isinstance(index, Mapping) and "expireAfterSeconds" in index for index in indexes
        )
    if name in ("collMod", "create"):
        index = command.get("index")
        return "expireAfterSeconds" in command or (isinstance(index, Mapping) and "expireAfterSeconds" in index)
    return False


def _reply_time(reply: Mapping[str, Any]) -> Timestamp | None:
    """The time of a reply's write: its ``operationTime``, else the ``$clusterTime`` it gossips (never earlier)."""
    time = reply.get("operationTime")
    if isinstance(time, Timestamp):
        return time
    cluster = reply.get("$clusterTime")
    time = cluster.get("clusterTime") if isinstance(cluster, Mapping) else None
    return time if isinstance(time, Timestamp) else None
