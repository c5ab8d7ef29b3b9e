"""The server's streamed hello replies, header by header, with no driver: does each answer the previous reply?

An awaitable hello (topologyVersion, maxAwaitTimeMS) sent with the OP_MSG exhaustAllowed flag is answered by a
stream of replies with moreToCome set. mongod gives each streamed reply responseTo = the requestID of the reply
before it (the first answers the request); the Java driver checks exactly that (StreamedHeartbeats.java).

    python tests/repro/java/exhaust_response_to.py 127.0.0.1:27999
"""

from __future__ import annotations

import socket
import struct
import sys

import bson

OP_MSG = 2013
EXHAUST_ALLOWED = 1 << 16
MORE_TO_COME = 1 << 1


def send(sock: socket.socket, document: dict, request_id: int, flags: int = 0) -> None:
    body = struct.pack("<I", flags) + b"\x00" + bson.encode(document)
    sock.sendall(struct.pack("<iiii", 16 + len(body), request_id, 0, OP_MSG) + body)


def receive_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("the server closed the connection")
        data += chunk
    return data


def receive(sock: socket.socket) -> tuple[int, int, int, dict]:
    length, request_id, response_to, _ = struct.unpack("<iiii", receive_exactly(sock, 16))
    rest = receive_exactly(sock, length - 16)
    return request_id, response_to, struct.unpack("<I", rest[:4])[0], bson.decode(rest[5:])


def main(address: str) -> int:
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port))) as sock:
        send(sock, {"hello": 1, "$db": "admin"}, 1)
        topology_version = receive(sock)[3]["topologyVersion"]
        send(
            sock,
            {"hello": 1, "topologyVersion": topology_version, "maxAwaitTimeMS": 100, "$db": "admin"},
            2,
            EXHAUST_ALLOWED,
        )
        expected = 2
        for _ in range(4):
            request_id, response_to, flags, _ = receive(sock)
            verdict = "ok" if response_to == expected else f"expected responseTo {expected}"
            print(
                f"streamed reply requestID {request_id} responseTo {response_to} "
                f"moreToCome {bool(flags & MORE_TO_COME)}: {verdict}"
            )
            expected = request_id
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
