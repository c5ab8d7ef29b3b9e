"""Reading a stream's position from a postBatchResumeToken, only in a format proved for the target in use.

The ``secantusdb-bson`` reading is proved on the embedded SecantusDB: every event's token reads as the event's own
``clusterTime``, and the postBatchResumeToken of a quiet stream reads at or past every write made before its
getMore. Anything that is not that format is refused with the reason, never guessed at.
"""

from __future__ import annotations

from typing import Any

import bson
import pytest
from bson.timestamp import Timestamp

from harness.core.resume_tokens import (
    DETAIL,
    SECANTUSDB_BSON,
    UNREAD,
    StreamPosition,
    UnreadableToken,
    read_position,
    secantusdb_format,
)


def secantus_token(**fields: Any) -> dict[str, str]:
    document = {"s": 12, "t": Timestamp(1700000000, 3), "n": "db.c", "k": {}, **fields}
    return {"_data": bson.encode(document).hex()}


def test_a_secantusdb_token_reads_as_its_cluster_time() -> None:
    position = read_position(secantus_token(), SECANTUSDB_BSON)
    assert position == StreamPosition(Timestamp(1700000000, 3))
    assert str(position) == "Timestamp(1700000000, 3)"
    assert read_position(secantus_token(i=True), SECANTUSDB_BSON).time == Timestamp(1700000000, 3)


def test_a_position_includes_its_own_time() -> None:
    """Every SecantusDB oplog entry has a time of its own, so a token at an entry's time has read that entry."""
    position = StreamPosition(Timestamp(10, 2))
    assert position.passed(Timestamp(10, 2)) and position.passed(Timestamp(10, 1)) and position.passed(Timestamp(9, 9))
    assert not position.passed(Timestamp(10, 3)) and not position.passed(Timestamp(11, 0))


@pytest.mark.parametrize(
    "token,words",
    [
        ({"_data": "8260C141F8000000012B022C0100296E5A1004"}, "not a secantusdb-bson document"),  # mongod's KeyString
        ({"_data": "zz"}, "not a secantusdb-bson document"),
        ({"_data": 5}, "no hexadecimal _data"),
        ({"data": "00"}, "no hexadecimal _data"),
        ("8260C141F8", "no hexadecimal _data"),
        (secantus_token(x=1), "fields"),
        (secantus_token(s="twelve"), "fields"),
        (secantus_token(t=5), "not a Timestamp"),
    ],
)
def test_a_token_not_in_the_format_is_unreadable_with_the_reason(token: Any, words: str) -> None:
    with pytest.raises(UnreadableToken, match=words):
        read_position(token, SECANTUSDB_BSON)


def test_an_unread_format_reads_nothing() -> None:
    with pytest.raises(UnreadableToken, match="reads no resume tokens of this target"):
        read_position(secantus_token(), UNREAD)


def test_only_checked_secantusdb_releases_are_read() -> None:
    assert secantusdb_format("0.7.0b3") == secantusdb_format("0.7.2") == SECANTUSDB_BSON
    assert secantusdb_format("0.8.0") == secantusdb_format("unknown") == secantusdb_format("0.70") == UNREAD


def test_the_embedded_target_says_which_format_its_tokens_have(embedded_run: Any) -> None:
    details = embedded_run.target.info.details
    assert details[DETAIL] == secantusdb_format(details["package_version"]) == SECANTUSDB_BSON


def test_the_reading_holds_on_the_embedded_server(embedded_run: Any) -> None:
    """The proof of the format for the target in use: each event's token reads as its ``clusterTime``; a
    postBatchResumeToken of an empty getMore reads at or past the ``operationTime`` of every write before it."""
    admin = embedded_run.target.admin
    collection = admin.resume_token_format.c
    collection.drop()
    with collection.watch(max_await_time_ms=50) as stream:
        written = [
            admin.resume_token_format.command("insert", "c", documents=[{"n": n}])["operationTime"] for n in range(3)
        ]
        admin.resume_token_format.command("insert", "other", documents=[{"n": 9}])  # another namespace
        events = [stream.next() for _ in written]
        for event in events:
            assert read_position(event["_id"], SECANTUSDB_BSON).time == event["clusterTime"]
        assert [e["clusterTime"] for e in events] == sorted(e["clusterTime"] for e in events)
        assert stream.try_next() is None  # an empty getMore: its token is the stream's position
        position = read_position(stream.resume_token, SECANTUSDB_BSON)
        assert all(position.passed(time) for time in written)
