"""The checks of the pipe itself: the ``hello`` handshake, the Extended JSON round trip (``echo``) and EOF.

They need no server, and run first: an executor that cannot say hello or keep a value's type gets nothing else
checked usefully (docs/executor-protocol.md sections 1, 2 and 4).
"""

from __future__ import annotations

import json

from bson import Binary, Decimal128, Int64, ObjectId, Timestamp

from harness.drivers.executor.adapter import hello_problems
from harness.drivers.executor.checks.session import Check, typed
from harness.drivers.executor.process import HELLO_TIMEOUT_S, PROTOCOL_VERSION

#: Values whose types must survive the Extended JSON round trip (section 2), key order included.
ROUND_TRIP = {
    "int32": 7,
    "int64": Int64(2**40),
    "smallInt64": Int64(1),
    "double": 1.5,
    "decimal": Decimal128("1.10"),
    "timestamp": Timestamp(1700000000, 3),
    "token": Binary(b"\x00\x01resume", 0),
    "uuid": Binary(b"0123456789abcdef", 4),
    "oid": ObjectId("0123456789abcdef01234567"),
    "nested": {"z": 1, "a": [Int64(5), {"$": None}]},
}


def check_hello(check: Check) -> None:
    reply = check.process.request("hello", {"protocolVersion": PROTOCOL_VERSION}, HELLO_TIMEOUT_S)
    check.plain_envelope("hello")
    if not reply["ok"]:
        check.problems.append(f"hello: error reply {reply['error']!r}")
        return
    check.problems.extend(f"hello: {problem}" for problem in hello_problems(reply["result"]))
    plain = json.loads(check.process.last_line).get("result") or {}
    check.hello = plain if isinstance(plain, dict) else {}
    fast = plain.get("fastHeartbeatMS")
    if fast is not None and (isinstance(fast, bool) or not isinstance(fast, int) or fast <= 0):
        check.problems.append(
            f"hello: fastHeartbeatMS must be null or a positive integer (section 4), got {json.dumps(fast)}"
        )
    for key in ("protocolVersion", "fastHeartbeatMS", "minWireVersion"):
        if isinstance(plain.get(key), dict):
            check.problems.append(
                f"hello: {key} must be a plain JSON number (hello is plain JSON), got {json.dumps(plain[key])}"
            )


def check_round_trip(check: Check) -> None:
    echoed = check.expect_ok("echo", value=ROUND_TRIP)
    if not isinstance(echoed, dict):
        check.problems.append(f"echo: expected the document back, got {echoed!r}")
        return
    if list(echoed) != list(ROUND_TRIP):
        check.problems.append(f"echo: key order changed: {list(echoed)}")
    for key, sent in ROUND_TRIP.items():
        got = echoed.get(key)
        if typed(got) != typed(sent):
            check.problems.append(
                f"echo: {key} came back as {type(got).__name__} {got!r}, sent {type(sent).__name__} {sent!r}"
            )


def check_eof(check: Check) -> None:
    status = check.process.finish()
    if status != 0:
        what = "did not exit within 5 s" if status is None else f"exited with status {status}"
        check.problems.append(f"EOF on stdin: the executor {what} (it must finish and exit 0)")
