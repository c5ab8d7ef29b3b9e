"""The harness's own raw change streams (prose_tests/raw_stream.py): what they send and how they read.

A fake database answers the commands, so what is sent is seen exactly: cursor ids go back as 64-bit integers
(mongo-java-server refuses a 32-bit one), a database stream's getMore names ``$cmd.aggregate``, and a read stops
at the count, at ``until``, or when the server closes the cursor. The checks that stand on it run against the
embedded server in test_server_checks.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from bson.int64 import Int64
from pymongo.errors import OperationFailure

from prose_tests.raw_stream import DATABASE_STREAM_COLLECTION, RawStream, changes_after


class FakeDatabase:
    """Answers aggregate with ``first``, then each getMore with the next of ``batches`` (id 0 after the last)."""

    def __init__(self, first: list[dict[str, Any]], batches: list[list[dict[str, Any]]], refuse_kill: bool = False):
        self.first, self.batches, self.refuse_kill = first, list(batches), refuse_kill
        self.sent: list[tuple[str, Any, dict[str, Any]]] = []

    def command(self, name: str, value: Any, **fields: Any) -> dict[str, Any]:
        self.sent.append((name, value, fields))
        if name == "aggregate":
            return {"cursor": {"id": Int64(7), "firstBatch": self.first}, "ok": 1}
        if name == "getMore":
            batch = self.batches.pop(0) if self.batches else []
            return {"cursor": {"id": Int64(7 if self.batches else 0), "nextBatch": batch}, "ok": 1}
        if self.refuse_kill:
            raise OperationFailure("no", 1)
        return {"ok": 1}


def _event(n: int, kind: str = "insert") -> dict[str, Any]:
    return {"_id": {"_data": f"{n:02x}"}, "operationType": kind}


def test_cursor_ids_go_back_as_64_bit_integers_and_the_cursor_is_killed():
    database = FakeDatabase([], [[_event(1)], [_event(2)], []])
    with RawStream(database, "c", {"fullDocument": "default"}, await_ms=50) as stream:
        assert stream.changes(1) == [_event(1)]
    aggregate, get_more, kill = database.sent
    assert aggregate == ("aggregate", "c", {"pipeline": [{"$changeStream": {"fullDocument": "default"}}], "cursor": {}})
    assert (
        get_more[0] == "getMore" and type(get_more[1]) is Int64 and get_more[2] == {"collection": "c", "maxTimeMS": 50}
    )
    assert kill[0] == "killCursors" and all(type(cursor) is Int64 for cursor in kill[2]["cursors"])


def test_a_database_stream_is_aggregate_1_and_its_get_more_names_cmd_aggregate():
    database = FakeDatabase([_event(1)], [])
    assert changes_after(database, None, lambda: None, 1) == [_event(1)]
    assert database.sent[0][1] == 1
    assert database.sent[-1] == ("killCursors", DATABASE_STREAM_COLLECTION, {"cursors": [Int64(7)]})


def test_a_read_stops_at_until_keeping_what_came_after_and_at_a_closed_cursor():
    database = FakeDatabase([], [[_event(1, "drop"), _event(2, "invalidate"), _event(3)]])
    stream = RawStream(database, "c").open()
    taken = stream.changes(5, until=lambda change: change["operationType"] == "invalidate")
    assert [e["operationType"] for e in taken] == ["drop", "invalidate"] and stream.buffered == [_event(3)]
    assert not stream.alive and stream.changes(5) == [_event(3)]  # closed: no getMore is sent
    assert [name for name, _, _ in database.sent] == ["aggregate", "getMore"]


@pytest.mark.parametrize("get_mores", [0, 3])
def test_a_read_gives_up_after_its_get_mores(get_mores):
    database = FakeDatabase([], [[], [], [], [], [_event(1)]])
    assert RawStream(database, "c").open().changes(1, get_mores=get_mores) == []
    assert sum(name == "getMore" for name, _, _ in database.sent) == get_mores


def test_a_refused_kill_is_tidying_up_not_a_failure():
    database = FakeDatabase([], [[], []], refuse_kill=True)
    stream = RawStream(database, "c").open()
    stream.close()
    assert not stream.alive
