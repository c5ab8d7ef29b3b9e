"""Framing round-trips and handshake rewrites: the bytes the proxy reads and writes."""

from __future__ import annotations

import struct

import bson
import pytest
from bson import Int64

from harness.shared.wire import protocol as wire
from harness.shared.wire.rewrite import handshake_reply, handshake_request


def split(message: bytes) -> tuple[wire.Header, bytes]:
    return wire.Header.parse(message[:16]), message[16:]


def test_op_msg_round_trip_with_document_sequences():
    docs = b"".join(bson.encode({"_id": i, "x": "y" * i}) for i in range(3))
    msg = wire.OpMsg(wire.EXHAUST_ALLOWED, bson.encode({"insert": "coll", "$db": "db"}), [("documents", docs)])
    header, payload = split(wire.build_op_msg(7, 3, msg))
    assert (header.request_id, header.response_to, header.op_code) == (7, 3, wire.OP_MSG)
    assert header.length == 16 + len(payload)
    parsed = wire.parse_op_msg(payload)
    assert parsed == msg
    assert parsed.decode_body() == {"insert": "coll", "$db": "db"}


def test_op_msg_checksum_is_skipped_on_read_and_dropped_on_rebuild():
    body = bson.encode({"ping": 1, "$db": "admin"})
    payload = struct.pack("<I", wire.CHECKSUM_PRESENT) + b"\x00" + body + b"\xde\xad\xbe\xef"
    parsed = wire.parse_op_msg(payload)
    assert parsed.body == body and parsed.sequences == []
    _, rebuilt = split(wire.build_op_msg(1, 0, parsed))
    assert struct.unpack_from("<I", rebuilt)[0] & wire.CHECKSUM_PRESENT == 0
    assert wire.parse_op_msg(rebuilt).body == body


def test_op_query_and_op_reply_round_trip():
    query = wire.OpQuery(0, "admin.$cmd", 0, -1, bson.encode({"isMaster": 1, "helloOk": True}))
    header, payload = split(wire.build_op_query(11, 0, query))
    assert header.op_code == wire.OP_QUERY
    parsed = wire.parse_op_query(payload)
    assert parsed == query and parsed.is_command and parsed.database == "admin"

    reply = wire.OpReply(8, 0, 0, [bson.encode({"ismaster": True, "ok": 1.0})])
    header, payload = split(wire.build_op_reply(12, 11, reply))
    assert (header.op_code, header.response_to) == (wire.OP_REPLY, 11)
    assert wire.parse_op_reply(payload) == reply


def test_first_key_reads_the_command_name_without_decoding():
    assert wire.first_key(bson.encode({"getMore": Int64(5), "collection": "c"})) == "getMore"
    assert wire.first_key(bson.encode({})) == ""


def test_append_fields_keeps_existing_types_exactly():
    original = bson.encode({"n": Int64(1), "ok": 1.0})
    spliced = wire.append_fields(original, {"writeConcernError": {"code": 100}})
    decoded = bson.decode(spliced)
    assert decoded == {"n": 1, "ok": 1.0, "writeConcernError": {"code": 100}}
    assert spliced[4 : len(original) - 1] == original[4:-1]  # the int64 "n" is still the same 8 bytes


@pytest.mark.parametrize("length", [3, 48_000_001])
def test_impossible_lengths_are_protocol_errors(length):
    with pytest.raises(wire.ProtocolError):
        wire.Header.parse(struct.pack("<iiii", length, 1, 0, wire.OP_MSG))


def test_truncated_document_is_a_protocol_error():
    payload = struct.pack("<I", 0) + b"\x00" + bson.encode({"ping": 1})[:-3]
    with pytest.raises(wire.ProtocolError):
        wire.parse_op_msg(payload)


def test_handshake_request_strips_compression_and_reads_app_name():
    command = {"isMaster": 1, "client": {"application": {"name": "victim"}}, "compression": ["zstd"]}
    changed, app = handshake_request(command)
    assert changed == {"isMaster": 1, "client": {"application": {"name": "victim"}}} and app == "victim"
    assert handshake_request({"hello": 1}) == (None, None)


def test_handshake_reply_names_the_proxy_and_drops_other_members():
    reply = {
        "ismaster": True,
        "me": "db0:27017",
        "hosts": ["db0:27017", "db1:27017"],
        "passives": ["db2:27017"],
        "arbiters": [],
        "primary": "db0:27017",
        "setName": "rs",
        "compression": ["zstd"],
        "ok": 1.0,
    }
    rewritten = handshake_reply(reply, {"localhost:27017"}, "127.0.0.1:9999")
    assert rewritten["me"] == rewritten["primary"] == "127.0.0.1:9999"
    assert rewritten["hosts"] == ["127.0.0.1:9999"]
    assert rewritten["passives"] == [] and rewritten["arbiters"] == []
    assert "compression" not in rewritten and rewritten["setName"] == "rs"


def test_handshake_reply_of_a_standalone_is_left_alone_but_compression():
    reply = {"ismaster": True, "maxWireVersion": 21, "ok": 1.0}
    assert handshake_reply(reply, {"localhost:27017"}, "127.0.0.1:9999") == reply
