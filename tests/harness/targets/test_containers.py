"""The testcontainers target's logic, with Docker faked at its boundary (no Docker engine runs here).

The container API is a recording stand-in whose "mongod" is a SecantusDB server on the loopback interface;
the replica-set dialogue that SecantusDB does not speak (``replSetInitiate``) is played by a scripted client.
Nothing here has met a real Docker engine (README: Not run here).
"""

from __future__ import annotations

import socket

import pytest
from pymongo.errors import AutoReconnect, OperationFailure

from harness.core.ports import TargetUnavailable
from harness.targets import containers
from harness.targets.containers import (
    MEMBER_HOST,
    MONGOD_PORT,
    REPLICA_SET,
    MongoContainerTarget,
    initiate_single_node,
)


class FakeContainer:
    """testcontainers' ``DockerContainer`` as the target uses it; every call recorded in order."""

    def __init__(self, image: str, port: int, calls: list, fail_start: Exception | None = None) -> None:
        self.image, self.port, self.calls, self.fail_start = image, port, calls, fail_start

    def with_command(self, command):
        self.calls.append(("with_command", command))
        return self

    def with_exposed_ports(self, *ports):
        self.calls.append(("with_exposed_ports", ports))
        return self

    def start(self):
        self.calls.append(("start",))
        if self.fail_start is not None:
            raise self.fail_start
        return self

    def get_container_host_ip(self):
        self.calls.append(("get_container_host_ip",))
        return "127.0.0.1"

    def get_exposed_port(self, port):
        self.calls.append(("get_exposed_port", port))
        return self.port

    def stop(self):
        self.calls.append(("stop",))


class ScriptedClient:
    """The harness's client during initiation: each command gets the next scripted reply (or error)."""

    def __init__(self, script: list, sent: list) -> None:
        self.script, self.sent = list(script), sent
        self.admin = self

    def command(self, name, *args):
        self.sent.append(name)
        reply = self.script.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.sent.append("close")


class StepClock:
    """A clock that moves only when the code under test sleeps: timeouts without waiting."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def mongod():
    """The container's mongod, played by SecantusDB on the loopback interface (a replica-set primary)."""
    from secantus import SecantusDBServer

    server = SecantusDBServer(port=0, storage_path=":memory:")
    server.start()
    yield server
    server.stop()


def _target(mongod, calls, sent, script, **fake):
    return MongoContainerTarget(
        "mongo:7.0",
        container_factory=lambda image: FakeContainer(image, mongod.port, calls, **fake),
        client_factory=lambda uri, **options: ScriptedClient(script, sent),
    )


def test_a_single_node_replica_set_with_test_commands_is_started_initiated_and_removed(mongod):
    calls, sent = [], []
    still_starting = AutoReconnect("connection refused")
    script = [still_starting, still_starting, {"ok": 1}, {"isWritablePrimary": False}, {"isWritablePrimary": True}]
    target = _target(mongod, calls, sent, script)
    info = target.start()
    command = calls[0][1]
    assert f"--replSet {REPLICA_SET}" in command and "--setParameter enableTestCommands=1" in command
    assert calls[:3] == [("with_command", command), ("with_exposed_ports", (MONGOD_PORT,)), ("start",)]
    assert sent == ["replSetInitiate"] * 3 + ["hello", "hello", "close"]  # retried until up, then until primary
    assert target.uri == f"mongodb://127.0.0.1:{mongod.port}/?directConnection=true"
    assert info.kind == "testcontainers" and info.name == "mongod-7.0" and info.topology == "replicaset"
    assert info.details["image"] == "mongo:7.0" and info.details["test_commands"] is True
    assert ("stop",) not in calls
    target.stop()
    assert calls[-1] == ("stop",) and calls.count(("stop",)) == 1
    target.stop()  # stopping twice removes nothing twice
    assert calls.count(("stop",)) == 1


def test_an_initiated_container_is_taken_as_it_is(mongod):
    calls, sent = [], []
    already = OperationFailure("already initialized", code=23)
    target = _target(mongod, calls, sent, [already, {"isWritablePrimary": True}])
    target.start()
    target.stop()
    assert sent == ["replSetInitiate", "hello", "close"]


def test_a_failed_initiation_removes_the_container_and_says_why(mongod):
    calls, sent = [], []
    refused = OperationFailure("bad config", code=93)
    target = _target(mongod, calls, sent, [refused])
    with pytest.raises(TargetUnavailable, match=r"replSetInitiate failed on mongo:7\.0"):
        target.start()
    assert calls[-1] == ("stop",) and target.container is None


def test_a_container_that_does_not_start_says_so_in_one_line(mongod):
    calls, sent = [], []
    target = _target(mongod, calls, sent, [], fail_start=RuntimeError("pull access denied\nmore detail"))
    with pytest.raises(TargetUnavailable) as unavailable:
        target.start()
    assert str(unavailable.value) == "testcontainers could not start mongo:7.0: RuntimeError: pull access denied"
    assert sent == []


def test_no_docker_engine_is_one_line_that_points_at_the_uri_target():
    def no_engine(image):
        raise OSError("Error while fetching server API version: ('Connection aborted.', FileNotFoundError(2))")

    target = MongoContainerTarget("mongo:8.0", container_factory=no_engine)
    with pytest.raises(TargetUnavailable) as unavailable:
        target.start()
    words = str(unavailable.value)
    assert "\n" not in words and "no Docker engine is reachable" in words and "--target uri=" in words


def test_initiation_gives_up_at_its_deadline_with_the_last_error():
    clock, sent = StepClock(), []
    client = ScriptedClient([AutoReconnect("connection refused")] * 100, sent)
    with pytest.raises(TargetUnavailable, match=r"did not answer within 2s: AutoReconnect: connection refused"):
        initiate_single_node(client, image="mongo:8.0", timeout_s=2, clock=clock, sleep=clock.sleep)
    assert sent == ["replSetInitiate"] * 6 and clock.sleeps == [0.5] * 5  # tried until past the deadline


def test_a_member_that_never_becomes_primary_is_a_clear_error():
    clock, sent = StepClock(), []
    client = ScriptedClient([{"ok": 1}] + [{"isWritablePrimary": False}] * 100, sent)
    with pytest.raises(TargetUnavailable, match="did not become primary within 1s"):
        initiate_single_node(client, image="mongo:8.0", timeout_s=1, clock=clock, sleep=clock.sleep)
    assert sent[0] == "replSetInitiate" and set(sent[1:]) == {"hello"}


def test_the_member_is_initiated_as_the_container_sees_itself():
    sent: list = []
    configs = []

    class Recording(ScriptedClient):
        def command(self, name, *args):
            configs.extend(args)
            return super().command(name, *args)

    initiate_single_node(Recording([{"ok": 1}, {"isWritablePrimary": True}], sent), image="mongo:8.0")
    assert configs[0] == {"_id": REPLICA_SET, "members": [{"_id": 0, "host": MEMBER_HOST}]}


def test_the_cli_says_in_one_line_when_docker_is_missing(tmp_path, monkeypatch, capsys):
    """``--target testcontainers`` on a machine without an engine (or without the extra): one line, exit 2."""
    from harness.app import cli

    def no_engine(image):
        raise OSError("Error while fetching server API version: ('Connection aborted.', FileNotFoundError(2))")

    monkeypatch.setattr(containers, "testcontainers_factory", no_engine)
    monkeypatch.setattr(socket, "getaddrinfo", _no_resolving)
    spec = tmp_path / "one.yml"
    spec.write_text(
        "database_name: d\ncollection_name: c\ntests:\n  - description: x\n    target: collection\n"
        "    operations: []\n    result: {success: []}\n"
    )
    status = cli.main(["run", "--specs", str(spec), "--target", "testcontainers", "-q"])
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("harness: note:")]
    assert status == 2
    assert len(err) == 1 and "no Docker engine is reachable" in err[0] and "--target uri=" in err[0]


def _no_resolving(host, *args, **kwargs):
    raise AssertionError(f"the test tried to resolve {host!r}")
