"""The remote-target guard checks every host the harness or a driver would reach, not the seed list's names.

Two halves. Names: which spellings are literally local (case, trailing dot, IPv6 forms, IPv4-mapped), decided with
name resolution forbidden. Members: a local fake server (a few lines of OP_QUERY/OP_MSG over a socket) whose
``hello`` names a remote member, as a secondary of a remote primary or in its ``hosts``; the ``uri=`` target must
refuse it before anything resolves or connects to that member, name it, and, given ``--allow-destructive``, record
the hosts it was allowed to reach. Nothing leaves the loopback interface: the remote names are under ``.invalid``
and resolving them is refused and recorded.
"""

from __future__ import annotations

import re
import socket
import socketserver
import threading
import time
from typing import Any

import bson
import pytest

from harness.core.ports import TargetAdminError
from harness.shared.wire import protocol as wire
from harness.targets.safety import (
    DestructiveTargetRefused,
    LoopbackWatch,
    is_loopback_host,
    is_loopback_name,
    remote_hosts,
)
from harness.targets.uri_target import UriTarget

REMOTE = "db.example.invalid:27017"
LOCAL_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})


# -- names -------------------------------------------------------------------------------------------------


@pytest.fixture
def no_resolver(monkeypatch):
    """Any name lookup fails the test: the classification must never ask a resolver."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"name resolution attempted: {args!r}")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "gethostbyname", refuse)


@pytest.mark.parametrize(
    "name",
    ["localhost", "LOCALHOST", "LocalHost", "127.0.0.1", "127.1.2.3", "::1", "[::1]", "[0:0:0:0:0:0:0:1]",
     "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1", "[::ffff:127.0.0.1]", "::FFFF:7F00:1"],
)  # fmt: skip
def test_literally_local_names(name, no_resolver):
    assert is_loopback_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "localhost.",  # fully qualified: the resolver, maybe DNS, answers for it, not the hosts file
        "LOCALHOST.",
        "localhost.example.invalid",
        "db.example.invalid",
        "127.1",  # shorthand IPv4: not one of the literal forms, so refused rather than trusted
        "0.0.0.0",
        "::",
        "::ffff:10.0.0.1",
        "10.0.0.1",
        "[2001:db8::1]",
        "",
    ],
)
def test_every_other_name_is_remote_without_resolving_it(name, no_resolver):
    assert not is_loopback_name(name)


@pytest.mark.parametrize(
    ("host", "local"),
    [
        ("localhost.:27017", False),
        ("LOCALHOST:27017", True),
        ("[::1]:27017", True),
        ("[0:0:0:0:0:0:0:1]:5", True),
        ("[::ffff:127.0.0.1]:27017", True),
        ("127.1.2.3", True),
        ("db.example.invalid:27017", False),
        ("%2Ftmp%2Fmongodb-27017.sock", True),
        ("%2Ftmp%2Fnot-a-socket", False),  # pymongo reads only a name ending in .sock as a socket
    ],
)
def test_hosts_as_connection_strings_write_them(host, local, no_resolver):
    assert is_loopback_host(host) is local


def test_a_trailing_dot_seed_is_refused_with_the_reason(no_resolver):
    from harness.targets.safety import check_destructive

    assert remote_hosts("mongodb://localhost.:27017/") == ["localhost.:27017"]
    with pytest.raises(DestructiveTargetRefused) as refused:
        check_destructive("mongodb://localhost.:27017/", allowed=False)
    assert "localhost.:27017" in str(refused.value) and "trailing dot" in str(refused.value)


# -- a local server that names a remote member -------------------------------------------------------------


class FakeServer(socketserver.ThreadingTCPServer):
    """A loopback server that answers the handshake with ``hello`` (changeable while it runs) and every other command
    with ``ok: 1``, recording the command names it gets."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, hello: dict[str, Any]) -> None:
        super().__init__(("127.0.0.1", 0), _FakeConnection)
        self.hello = hello
        self.commands: list[str] = []
        self.address_text = f"127.0.0.1:{self.server_address[1]}"

    def reply_to(self, command: dict[str, Any]) -> dict[str, Any]:
        name = next(iter(command), "")
        self.commands.append(name)
        if name.lower() in ("hello", "ismaster"):
            return {**self.hello, "me": self.hello.get("me", self.address_text)}
        if name == "buildInfo":
            return {"version": "7.0.0", "gitVersion": "fake", "ok": 1}
        if name == "listCollections":
            return {"cursor": {"id": 0, "ns": "db.$cmd.listCollections", "firstBatch": []}, "ok": 1}
        return {"ok": 1}


class _FakeConnection(socketserver.BaseRequestHandler):
    server: FakeServer

    def _read(self, size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = self.request.recv(size - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def handle(self) -> None:
        try:
            while True:
                header = wire.Header.parse(self._read(wire.HEADER_SIZE))
                payload = self._read(header.length - wire.HEADER_SIZE)
                if header.op_code == wire.OP_QUERY:
                    query = wire.parse_op_query(payload)
                    reply = bson.encode(self.server.reply_to(bson.decode(query.query)))
                    self.request.sendall(wire.build_op_reply(1, header.request_id, wire.OpReply(0, 0, 0, [reply])))
                elif header.op_code == wire.OP_MSG:
                    body = wire.parse_op_msg(payload).decode_body()
                    reply = bson.encode(self.server.reply_to(body))
                    self.request.sendall(wire.build_op_msg(1, header.request_id, wire.OpMsg(0, reply)))
                else:
                    return
        except (EOFError, OSError):
            return


def _hello(**fields: Any) -> dict[str, Any]:
    """A replica-set member's reply (no topologyVersion: pymongo then polls instead of streaming)."""
    return {"helloOk": True, "setName": "rs", "maxWireVersion": 21, "minWireVersion": 0, "ok": 1, **fields}


@pytest.fixture
def resolver(monkeypatch) -> list[str]:
    """Name resolution for the loopback names only; any other name is recorded and refused."""
    real = socket.getaddrinfo
    asked: list[str] = []

    def getaddrinfo(host, *args, **kwargs):
        if str(host) in LOCAL_HOSTS:
            return real(host, *args, **kwargs)
        asked.append(str(host))
        raise socket.gaierror(socket.EAI_NONAME, "resolution refused by the test")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


@pytest.fixture
def serve():
    servers: list[FakeServer] = []

    def start(hello: dict[str, Any]) -> FakeServer:
        server = FakeServer(hello)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _uri(server: FakeServer, **options: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in {"serverSelectionTimeoutMS": "3000", **options}.items())
    return f"mongodb://{server.address_text}/?{query}"


@pytest.mark.parametrize(
    ("hello", "field"),
    [
        (lambda me: _hello(secondary=True, isWritablePrimary=False, hosts=[me, REMOTE], primary=REMOTE), "primary"),
        (lambda me: _hello(isWritablePrimary=True, hosts=[me], passives=[REMOTE], primary=me), "passives"),
        (lambda me: _hello(isWritablePrimary=True, hosts=[me], arbiters=[REMOTE], primary=me), "arbiters"),
        (lambda me: _hello(isWritablePrimary=True, hosts=[me, "LOCALHOST.:27017"], primary=me), "hosts"),
    ],
    ids=["secondary-of-a-remote-primary", "remote-passive", "remote-arbiter", "trailing-dot-member"],
)
def test_a_local_server_naming_a_remote_member_is_refused_before_anything_reaches_it(hello, field, serve, resolver):
    server = serve({})
    server.hello = hello(server.address_text)
    target = UriTarget(_uri(server))
    with pytest.raises(DestructiveTargetRefused) as refused:
        target.start()
    message = str(refused.value)
    named = REMOTE if field != "hosts" else "LOCALHOST.:27017"  # named as the server spelt it
    assert named in message and repr(field) in message and "--allow-destructive" in message
    assert resolver == []  # the remote member was never even looked up, let alone connected to
    assert target.admin is None  # the harness's own client was never built
    assert [name for name in server.commands if name.lower() not in ("hello", "ismaster")] == []


def test_local_members_are_probed_in_turn_so_a_chain_cannot_lead_off_the_machine(serve, resolver):
    far = serve({})
    far.hello = _hello(secondary=True, isWritablePrimary=False, hosts=[far.address_text], primary=REMOTE)
    near = serve({})
    near.hello = _hello(isWritablePrimary=True, hosts=[near.address_text, far.address_text], primary=near.address_text)
    with pytest.raises(DestructiveTargetRefused) as refused:
        UriTarget(_uri(near)).start()
    assert REMOTE in str(refused.value) and far.address_text in str(refused.value)
    assert resolver == []


def test_allow_destructive_names_every_host_it_allowed_in_the_record(serve, resolver):
    server = serve({})
    server.hello = _hello(isWritablePrimary=True, hosts=[server.address_text, REMOTE], primary=server.address_text)
    target = UriTarget(_uri(server), allow_destructive=True)
    try:
        info = target.start()
    finally:
        target.stop()
    assert info.details["allow_destructive"] is True
    assert server.address_text in info.details["allowed_hosts"] and REMOTE in info.details["allowed_hosts"]
    assert info.topology == "replicaset"


def test_an_all_local_replica_set_starts_and_records_no_allowed_hosts(serve, resolver):
    server = serve({})
    server.hello = _hello(isWritablePrimary=True, hosts=[server.address_text], primary=server.address_text)
    target = UriTarget(_uri(server))
    try:
        info = target.start()
    finally:
        target.stop()
    assert info.details["allow_destructive"] is False and "allowed_hosts" not in info.details
    assert resolver == []


def test_direct_connection_reaches_the_seed_alone_so_reported_members_do_not_matter(serve, resolver):
    server = serve({})
    server.hello = _hello(secondary=True, isWritablePrimary=False, hosts=[REMOTE], primary=REMOTE)
    target = UriTarget(_uri(server, directConnection="true"))
    try:
        target.start()
    finally:
        target.stop()
    assert resolver == []


def test_a_remote_member_appearing_mid_run_stops_every_admin_job(serve, resolver):
    """A reconfig after the start: the harness's own client sees it, and the target refuses further jobs."""
    server = serve({})
    me = server.address_text
    server.hello = _hello(isWritablePrimary=True, hosts=[me], primary=me)
    target = UriTarget(_uri(server, heartbeatFrequencyMS="500"))
    target.start()
    try:
        assert target.admin_tasks.collection_names("db") == []
        server.hello = _hello(isWritablePrimary=True, hosts=[me, REMOTE], primary=me)
        deadline = time.monotonic() + 10
        while target.refusal() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        refusal = target.refusal()
        assert refusal is not None and REMOTE in refusal
        with pytest.raises(TargetAdminError, match=re.escape(REMOTE)):
            target.admin_tasks.collection_names("db")
        with pytest.raises(TargetAdminError, match=re.escape("db.example.invalid")):
            target.admin_tasks.direct_failpoints(("db.example.invalid", 27017))
    finally:
        target.stop()


def test_the_watch_keeps_commands_off_remote_servers():
    class Server:
        def __init__(self, host: str, port: int) -> None:
            self.address = (host, port)

    local, remote = Server("127.0.0.1", 1), Server("db.example.invalid", 2)
    assert LoopbackWatch("mongodb://127.0.0.1:1/").loopback_only([local, remote]) == [local]
    assert LoopbackWatch("mongodb://127.0.0.1:1/", record_only=True).loopback_only([local, remote]) == [local, remote]


def test_executor_check_on_a_uri_is_guarded_like_a_run(serve, resolver, capsys):
    """``harness executor-check --uri`` reaches the deployment too: a local seed naming a remote primary refuses it
    (exit 2) before the executor starts or anything connects to the remote host."""
    from harness.app import cli

    server = serve({})
    server.hello = _hello(secondary=True, isWritablePrimary=False, hosts=[server.address_text, REMOTE], primary=REMOTE)
    status = cli.main(["executor-check", "--uri", _uri(server), "exec:false"])
    said = capsys.readouterr().out
    assert status == 2 and REMOTE in said and "--allow-destructive" in said, said
    assert resolver == []
