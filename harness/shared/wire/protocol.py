"""Wire-protocol framing: parse and build MongoDB messages, no I/O.

The proxy forwards most messages byte for byte, so parsing is lazy where it
matters: an ``OP_MSG`` keeps its body and document sequences as raw bytes
(:meth:`OpMsg.decode_body` decodes the body on demand), and full decoding
happens only for the messages the proxy acts on. A message the proxy
rebuilds never carries an ``OP_MSG`` checksum (CRC-32C is not in the
standard library, and the checksum is optional), so :func:`build_op_msg`
clears that flag.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

import bson
from bson.codec_options import CodecOptions, DatetimeConversion

OP_REPLY = 1
OP_QUERY = 2004
OP_COMPRESSED = 2012
OP_MSG = 2013

CHECKSUM_PRESENT = 1 << 0
MORE_TO_COME = 1 << 1
EXHAUST_ALLOWED = 1 << 16

HEADER = struct.Struct("<iiii")  # messageLength, requestID, responseTo, opCode
HEADER_SIZE = HEADER.size
MAX_MESSAGE_SIZE = 48_000_000

#: Decoding options that keep what the proxy re-encodes as close as BSON allows
#: (datetimes outside Python's range stay ``DatetimeMS``; UUIDs stay ``Binary``).
CODEC = CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_AUTO)


class ProtocolError(Exception):
    """A frame that cannot be a MongoDB message; the connection carrying it is closed."""


@dataclass
class Header:
    length: int
    request_id: int
    response_to: int
    op_code: int

    @classmethod
    def parse(cls, data: bytes) -> Header:
        header = cls(*HEADER.unpack_from(data))
        if not HEADER_SIZE <= header.length <= MAX_MESSAGE_SIZE:
            raise ProtocolError(f"message length {header.length} outside [{HEADER_SIZE}, {MAX_MESSAGE_SIZE}]")
        return header


@dataclass
class OpMsg:
    """An ``OP_MSG``: flag bits, the body, and document sequences kept as raw bytes."""

    flags: int
    body: bytes
    sequences: list[tuple[str, bytes]] = field(default_factory=list)

    def decode_body(self) -> dict[str, Any]:
        return bson.decode(self.body, CODEC)


@dataclass
class OpQuery:
    flags: int
    collection: str
    skip: int
    limit: int
    query: bytes
    fields: bytes = b""

    @property
    def is_command(self) -> bool:
        return self.collection.endswith(".$cmd")

    @property
    def database(self) -> str:
        return self.collection.split(".", 1)[0]


@dataclass
class OpReply:
    flags: int
    cursor_id: int
    starting_from: int
    documents: list[bytes]


def _cstring(data: bytes, offset: int) -> tuple[str, int]:
    end = data.index(b"\x00", offset)
    return data[offset:end].decode("utf-8"), end + 1


def _document(data: bytes, offset: int) -> tuple[bytes, int]:
    (size,) = struct.unpack_from("<i", data, offset)
    if size < 5 or offset + size > len(data):
        raise ProtocolError(f"BSON document of {size} bytes at offset {offset} overruns the message")
    return data[offset : offset + size], offset + size


def parse_op_msg(payload: bytes) -> OpMsg:
    """``payload`` is the message after the header."""
    (flags,) = struct.unpack_from("<I", payload, 0)
    end = len(payload) - 4 if flags & CHECKSUM_PRESENT else len(payload)
    offset, body, sequences = 4, b"", []
    while offset < end:
        kind = payload[offset]
        offset += 1
        if kind == 0:
            body, offset = _document(payload, offset)
        elif kind == 1:
            (size,) = struct.unpack_from("<i", payload, offset)
            section_end = offset + size
            identifier, cursor = _cstring(payload, offset + 4)
            sequences.append((identifier, payload[cursor:section_end]))
            offset = section_end
        else:
            raise ProtocolError(f"OP_MSG section kind {kind} is not 0 or 1")
    if not body:
        raise ProtocolError("OP_MSG without a body section")
    return OpMsg(flags, body, sequences)


def parse_op_query(payload: bytes) -> OpQuery:
    (flags,) = struct.unpack_from("<i", payload, 0)
    collection, offset = _cstring(payload, 4)
    skip, limit = struct.unpack_from("<ii", payload, offset)
    query, offset = _document(payload, offset + 8)
    fields = payload[offset:]
    return OpQuery(flags, collection, skip, limit, query, fields)


def parse_op_reply(payload: bytes) -> OpReply:
    flags, cursor_id, starting_from, count = struct.unpack_from("<iqii", payload, 0)
    offset, documents = 20, []
    for _ in range(count):
        document, offset = _document(payload, offset)
        documents.append(document)
    return OpReply(flags, cursor_id, starting_from, documents)


def frame(request_id: int, response_to: int, op_code: int, payload: bytes) -> bytes:
    return HEADER.pack(HEADER_SIZE + len(payload), request_id, response_to, op_code) + payload


def build_op_msg(request_id: int, response_to: int, msg: OpMsg) -> bytes:
    parts = [struct.pack("<I", msg.flags & ~CHECKSUM_PRESENT), b"\x00", msg.body]
    for identifier, documents in msg.sequences:
        name = identifier.encode("utf-8") + b"\x00"
        parts += [b"\x01", struct.pack("<i", 4 + len(name) + len(documents)), name, documents]
    return frame(request_id, response_to, OP_MSG, b"".join(parts))


def build_op_query(request_id: int, response_to: int, query: OpQuery) -> bytes:
    payload = (
        struct.pack("<i", query.flags)
        + query.collection.encode("utf-8")
        + b"\x00"
        + struct.pack("<ii", query.skip, query.limit)
        + query.query
        + query.fields
    )
    return frame(request_id, response_to, OP_QUERY, payload)


def build_op_reply(request_id: int, response_to: int, reply: OpReply) -> bytes:
    payload = struct.pack("<iqii", reply.flags, reply.cursor_id, reply.starting_from, len(reply.documents))
    return frame(request_id, response_to, OP_REPLY, payload + b"".join(reply.documents))


def first_key(document: bytes) -> str:
    """The first field name of an encoded document (a command's name), without decoding it."""
    if len(document) <= 5:
        return ""
    name, _ = _cstring(document, 5)
    return name


def append_fields(document: bytes, fields: dict[str, Any]) -> bytes:
    """``document`` with ``fields`` appended at the byte level: existing values keep their exact types."""
    extra = bson.encode(fields)[4:-1]
    return struct.pack("<i", len(document) + len(extra)) + document[4:-1] + extra + b"\x00"
