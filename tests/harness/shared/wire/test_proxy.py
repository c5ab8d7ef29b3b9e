"""pymongo through the wire proxy to an embedded SecantusDB that refuses ``configureFailPoint``.

The target runs with test commands off, so every fail point seen here is the
proxy's doing. One target serves the module (it is slow-ish to stop); each
test gets its own proxy and clients.
"""

from __future__ import annotations

import socket
import time
from urllib.parse import urlparse

import pytest
from pymongo import MongoClient, monitoring
from pymongo.errors import OperationFailure, WriteConcernError

from harness.engine.failpoint_manager import FailPointManager
from harness.shared.failpoint_backends import EmulatedFailPoints
from harness.shared.wire import WireProxy


@pytest.fixture(scope="module")
def target():
    from secantus import SecantusDBServer

    server = SecantusDBServer(port=0, storage_path=":memory:", enable_test_commands=False)
    server.start()
    yield urlparse(server.uri)
    server.stop()


@pytest.fixture
def direct(target):
    client = MongoClient(target.geturl(), serverSelectionTimeoutMS=5000)
    yield client
    client.close()


@pytest.fixture
def proxy(target):
    with WireProxy(target.hostname, target.port, seed=1) as running:
        yield running


class Commands(monitoring.CommandListener):
    def __init__(self) -> None:
        self.names: list[str] = []

    def started(self, event):  # type: ignore[override]
        self.names.append(event.command_name)

    def succeeded(self, event):
        pass

    def failed(self, event):
        pass


@pytest.fixture
def connect(proxy):
    clients = []

    def make(**options):
        options.setdefault("serverSelectionTimeoutMS", 5000)
        client = MongoClient(proxy.uri, **options)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def coll(connect, direct, request):
    name = request.node.name.replace("[", "_").replace("]", "")[:60]
    direct.wire[name].drop()
    return connect().wire[name]


def arm(client, mode, **data):
    return client.admin.command({"configureFailPoint": "failCommand", "mode": mode, "data": data})


def next_change(stream, timeout_s=10.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        change = stream.try_next()
        if change is not None:
            return change
    raise AssertionError(f"no change event within {timeout_s}s")


def test_crud_through_the_proxy_and_topology_names_the_proxy(proxy, coll, direct):
    with pytest.raises(OperationFailure):  # the target itself refuses fail points
        direct.admin.command({"configureFailPoint": "failCommand", "mode": "off"})
    coll.insert_many([{"_id": i} for i in range(5)])
    coll.update_one({"_id": 1}, {"$set": {"x": 1}})
    coll.delete_one({"_id": 2})
    assert [d["_id"] for d in coll.find().sort("_id", 1)] == [0, 1, 3, 4]
    client = coll.database.client
    assert list(client.topology_description.server_descriptions()) == [proxy.address]
    assert client.admin.command("hello")["me"] == f"{proxy.address[0]}:{proxy.address[1]}"


def test_error_code_on_insert_armed_through_the_wire(coll):
    assert arm(coll.database.client, {"times": 1}, failCommands=["insert"], errorCode=11000) == {"count": 0, "ok": 1.0}
    with pytest.raises(OperationFailure) as caught:
        coll.insert_one({"_id": 1})
    assert caught.value.code == 11000 and caught.value.details["codeName"] == "DuplicateKey"
    coll.insert_one({"_id": 2})
    assert [d["_id"] for d in coll.find()] == [2]  # the failed insert never reached the target


def test_close_connection_on_get_more_makes_the_change_stream_resume(proxy, connect, direct):
    commands = Commands()
    coll = connect(event_listeners=[commands]).wire.resume_close
    with coll.watch(max_await_time_ms=100) as stream:
        proxy.configure_fail_point(
            {
                "configureFailPoint": "failCommand",
                "mode": {"times": 1},
                "data": {"failCommands": ["getMore"], "closeConnection": True},
            }
        )
        direct.wire.resume_close.insert_one({"x": 1})
        assert next_change(stream)["fullDocument"]["x"] == 1
    assert commands.names.count("aggregate") == 2  # the original and the resume
    assert proxy.armed() == []


def _stream_after_get_more_error(proxy, connect, direct, fail_point):
    coll = connect().wire.labels
    with coll.watch(max_await_time_ms=100) as stream:
        proxy.configure_fail_point(fail_point)
        direct.wire.labels.insert_one({"x": 1})
        return next_change(stream, timeout_s=5)


def test_explicit_resumable_label_makes_any_code_resumable(proxy, connect, direct):
    change = _stream_after_get_more_error(
        proxy,
        connect,
        direct,
        {
            "configureFailPoint": "failCommand",
            "mode": {"times": 1},
            "data": {"failCommands": ["getMore"], "errorCode": 50, "errorLabels": ["ResumableChangeStreamError"]},
        },
    )
    assert change["operationType"] == "insert"


def test_get_more_after_checkout_implies_the_resumable_label(proxy, connect, direct):
    change = _stream_after_get_more_error(
        proxy,
        connect,
        direct,
        {"configureFailPoint": "failGetMoreAfterCursorCheckout", "mode": {"times": 1}, "data": {"errorCode": 6}},
    )
    assert change["operationType"] == "insert"


def test_fail_command_without_labels_is_not_resumable_even_for_allow_listed_codes(proxy, connect, direct):
    with pytest.raises(OperationFailure) as caught:
        _stream_after_get_more_error(
            proxy,
            connect,
            direct,
            {
                "configureFailPoint": "failCommand",
                "mode": {"times": 1},
                "data": {"failCommands": ["getMore"], "errorCode": 6},
            },
        )
    assert caught.value.code == 6 and not caught.value.details.get("errorLabels")


def test_block_connection_delays_then_runs_the_command(coll):
    coll.insert_one({"_id": 1})
    arm(coll.database.client, {"times": 1}, failCommands=["find"], blockConnection=True, blockTimeMS=300)
    started = time.monotonic()
    assert coll.find_one({"_id": 1}) == {"_id": 1}
    assert time.monotonic() - started >= 0.3
    started = time.monotonic()
    coll.find_one({"_id": 1})
    assert time.monotonic() - started < 0.3


def test_write_concern_error_is_spliced_into_a_successful_write(coll):
    arm(
        coll.database.client,
        {"times": 1},
        failCommands=["insert"],
        writeConcernError={"code": 100, "codeName": "UnsatisfiableWriteConcern", "errmsg": "Not enough nodes"},
    )
    with pytest.raises(WriteConcernError) as caught:
        coll.insert_one({"_id": 1})
    assert caught.value.code == 100
    assert coll.count_documents({}) == 1  # the write itself went through


def test_times_and_skip(coll):
    client = coll.database.client
    arm(client, {"times": 2}, failCommands=["insert"], errorCode=2)
    outcomes = []
    for i in range(3):
        try:
            coll.insert_one({"_id": i})
            outcomes.append("ok")
        except OperationFailure:
            outcomes.append("failed")
    assert outcomes == ["failed", "failed", "ok"]
    arm(client, {"skip": 1}, failCommands=["count", "aggregate"], errorCode=2)
    assert coll.count_documents({}) == 1
    with pytest.raises(OperationFailure):
        coll.count_documents({})


def test_app_name_fails_only_the_named_client(connect):
    victim, bystander = connect(appname="victim").wire.app, connect(appname="bystander").wire.app
    arm(bystander.database.client, "alwaysOn", failCommands=["insert"], errorCode=2, appName="victim")
    bystander.insert_one({"who": "bystander"})
    with pytest.raises(OperationFailure):
        victim.insert_one({"who": "victim"})


def test_disarmed_fail_points_leave_traffic_untouched(proxy, coll):
    manager = FailPointManager(EmulatedFailPoints(proxy))
    manager.arm(
        {
            "configureFailPoint": "failCommand",
            "mode": "alwaysOn",
            "data": {"failCommands": ["insert", "find"], "errorCode": 2},
        }
    )
    with pytest.raises(OperationFailure):
        coll.insert_one({"_id": 1})
    assert manager.disarm_all() == [] and proxy.armed() == []
    coll.insert_one({"_id": 1})
    assert coll.find_one() == {"_id": 1}


def test_stop_closes_every_connection(target, direct):
    def current():
        return direct.admin.command("serverStatus")["connections"]["current"]

    before = current()
    proxy = WireProxy(target.hostname, target.port)
    proxy.start()
    clients = [MongoClient(proxy.uri, serverSelectionTimeoutMS=300) for _ in range(3)]  # close() after stop stays quick
    for client in clients:
        client.admin.command("ping")
    assert proxy.connection_count >= 3 and current() >= before + 3
    proxy.stop()
    assert proxy.connection_count == 0
    with pytest.raises(OSError):
        socket.create_connection(proxy.address, timeout=1).close()
    deadline = time.monotonic() + 5
    while current() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert current() <= before  # every upstream connection went with its client
    for client in clients:
        client.close()


class Heartbeats(monitoring.ServerHeartbeatListener):
    def __init__(self) -> None:
        self.awaited: list[str] = []
        self.failures: list[Exception] = []

    def started(self, event):
        pass

    def succeeded(self, event):
        if event.awaited:
            self.awaited.append(event.reply.document.get("me"))

    def failed(self, event):
        self.failures.append(event.reply)


def test_streaming_hello_passes_through_with_every_reply_rewritten(proxy, connect):
    heartbeats = Heartbeats()
    client = connect(heartbeatFrequencyMS=500, event_listeners=[heartbeats])
    client.admin.command("ping")
    time.sleep(1.8)
    assert len(heartbeats.awaited) >= 2, "the monitor never streamed hello through the proxy"
    assert set(heartbeats.awaited) == {f"{proxy.address[0]}:{proxy.address[1]}"}
    assert heartbeats.failures == []


def test_legacy_op_query_handshake_gets_a_rewritten_op_reply(proxy):
    import bson

    from harness.shared.wire import protocol as wire

    query = wire.OpQuery(0, "admin.$cmd", 0, -1, bson.encode({"isMaster": 1, "compression": ["zlib"]}))
    with socket.create_connection(proxy.address, timeout=5) as sock:
        sock.sendall(wire.build_op_query(42, 0, query))
        header = wire.Header.parse(sock.recv(16, socket.MSG_WAITALL))
        payload = sock.recv(header.length - 16, socket.MSG_WAITALL)
    assert (header.op_code, header.response_to) == (wire.OP_REPLY, 42)
    reply = bson.decode(wire.parse_op_reply(payload).documents[0])
    assert reply["me"] == f"{proxy.address[0]}:{proxy.address[1]}" and "compression" not in reply


def test_compression_is_negotiated_off_so_fail_points_still_see_commands(connect):
    """A client asking for compression still sends readable commands (the stripping itself: test_wire_protocol)."""
    coll = connect(compressors="zlib").wire.compressed
    arm(coll.database.client, {"times": 1}, failCommands=["insert"], errorCode=2)
    with pytest.raises(OperationFailure):
        coll.insert_one({"x": 1})


def test_exhaust_cursor_streams_through(coll):
    from pymongo import CursorType

    coll.insert_many([{"_id": i} for i in range(500)])
    got = list(coll.find(cursor_type=CursorType.EXHAUST, batch_size=50))
    assert len(got) == 500


def test_a_malformed_frame_closes_only_its_own_connection(proxy, coll):
    import struct

    with socket.create_connection(proxy.address, timeout=5) as sock:
        sock.sendall(struct.pack("<iiii", 2, 1, 0, 2013))  # shorter than its own header
        assert sock.recv(1) == b""  # closed without a reply
    coll.insert_one({"_id": 1})
    assert coll.find_one() == {"_id": 1}
