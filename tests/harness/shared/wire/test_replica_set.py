"""One SecantusDB presented as a three-member replica set (harness/shared/wire/replica_set.py): an emulation.

pymongo must discover one primary and two secondaries, send each command to
a member chosen by its read preference (seen only in the per-member log, as
every member is the same server), meet a fail point on one member only, and
be refused writes on a secondary.
"""

from __future__ import annotations

from urllib.parse import urlparse

import pytest
from bson import ObjectId
from pymongo import MongoClient, ReadPreference
from pymongo.errors import NotPrimaryError, OperationFailure
from pymongo.read_preferences import Secondary

from harness.shared.wire.replica_set import EmulatedReplicaSet, ReplicaSetConfigError, member_hello

HELLO = {
    "ok": 1.0,
    "isWritablePrimary": True,
    "secondary": False,
    "setName": "rs",
    "setVersion": 1,
    "hosts": ["db:1"],
    "passives": [],
    "arbiters": [],
    "primary": "db:1",
    "me": "db:1",
    "electionId": ObjectId(),
    "maxWireVersion": 21,
    "compression": ["zlib"],
}


# -- the hello rewrite (pure) ------------------------------------------------------------------
@pytest.mark.parametrize(
    "role,writable,secondary", [("primary", True, False), ("secondary", False, True), ("recovering", False, False)]
)
def test_member_hello_by_role(role: str, writable: bool, secondary: bool) -> None:
    reply = member_hello(
        HELLO, me="127.0.0.1:2", hosts=["127.0.0.1:1", "127.0.0.1:2"], primary="127.0.0.1:1", role=role
    )
    assert (reply["isWritablePrimary"], reply["ismaster"], reply["secondary"]) == (writable, writable, secondary)
    assert reply["me"] == "127.0.0.1:2" and reply["hosts"] == ["127.0.0.1:1", "127.0.0.1:2"]
    assert reply["primary"] == "127.0.0.1:1" and reply["setName"] == "rs" and reply["maxWireVersion"] == 21
    assert "compression" not in reply and "passives" not in reply
    assert ("electionId" in reply) == writable  # only a primary reports its election
    assert "tags" not in reply


def test_member_hello_without_primary_and_with_tags() -> None:
    reply = member_hello(HELLO, me="h:2", hosts=["h:2"], primary=None, role="secondary", tags={"dc": "east"})
    assert "primary" not in reply and reply["tags"] == {"dc": "east"}


def test_member_hello_refuses_a_server_that_is_no_replica_set_member() -> None:
    with pytest.raises(ReplicaSetConfigError, match="setName"):
        member_hello(
            {k: v for k, v in HELLO.items() if k != "setName"}, me="h:1", hosts=["h:1"], primary=None, role="secondary"
        )


@pytest.mark.parametrize(
    "roles,tags,message",
    [
        ((), None, "at least one"),
        (("primary", "primary"), None, "at most one primary"),
        (("arbiter",), None, "unknown 'arbiter'"),
        (("primary", "secondary"), [{}], "2 members"),
    ],
)
def test_bad_replica_set_requests_name_the_field(roles, tags, message) -> None:
    with pytest.raises(ReplicaSetConfigError, match=message):
        EmulatedReplicaSet("127.0.0.1", 1, roles, tags=tags)


# -- pymongo through the emulated set ----------------------------------------------------------
@pytest.fixture(scope="module")
def target():
    from secantus import SecantusDBServer

    server = SecantusDBServer(port=0, storage_path=":memory:")
    server.start()
    yield urlparse(server.uri)
    server.stop()


@pytest.fixture
def replica_set(target):
    with EmulatedReplicaSet(target.hostname, target.port, tags=[{"dc": "a"}, {"dc": "a"}, {"dc": "b"}]) as rs:
        yield rs


@pytest.fixture
def client(target, replica_set):
    set_name = MongoClient(target.geturl()).admin.command("hello")["setName"]
    client = MongoClient(replica_set.uri(set_name), serverSelectionTimeoutMS=5000)
    yield client
    client.close()


def _member(replica_set: EmulatedReplicaSet, address: tuple[str, int]) -> int:
    return replica_set.addresses.index(f"{address[0]}:{address[1]}")


def test_the_driver_discovers_one_primary_and_two_secondaries(client, replica_set) -> None:
    client.admin.command("ping")  # waits for a selectable server (server selection, not a sleep)
    for dc in ("a", "b"):  # server selection waits until the secondary with that tag is known (no sleep)
        client.db.get_collection("c", read_preference=Secondary(tag_sets=[{"dc": dc}])).find_one()
    assert client.primary is not None and _member(replica_set, client.primary) == 0
    assert {_member(replica_set, a) for a in client.secondaries} == {1, 2}


def test_each_command_is_logged_on_the_member_it_arrived_on(client, replica_set) -> None:
    client.db.c.insert_one({"x": 1})
    mark = replica_set.mark()
    client.db.get_collection("c", read_preference=ReadPreference.SECONDARY).find_one()
    client.db.get_collection("c", read_preference=Secondary(tag_sets=[{"dc": "b"}])).find_one()
    client.db.c.insert_one({"x": 2})
    arrived = replica_set.arrivals(since=mark)
    finds = [a for a in arrived if a.name == "find"]
    assert [a.namespace for a in finds] == ["db.c", "db.c"]
    assert finds[0].member in (1, 2) and finds[1].member == 2  # tags {dc: b}: member 2 only
    assert [a.member for a in arrived if a.name == "insert"] == [0]
    assert not [a for a in replica_set.arrivals() if a.name in ("hello", "isMaster", "ismaster")]


def test_a_fail_point_fires_on_its_member_only(client, replica_set) -> None:
    secondary = client.db.get_collection("c", read_preference=ReadPreference.SECONDARY)
    secondary.find_one()
    replica_set.configure_fail_point(
        0, {"configureFailPoint": "failCommand", "mode": "alwaysOn", "data": {"failCommands": ["find"], "errorCode": 2}}
    )
    assert replica_set.armed() == {0: ["failCommand"]}
    mark = replica_set.mark()
    secondary.find_one()  # a secondary: not failed
    with pytest.raises(OperationFailure) as raised:
        client.db.c.find_one()  # the primary
    assert raised.value.code == 2
    assert [(a.name, a.member != 0) for a in replica_set.arrivals(since=mark)] == [("find", True), ("find", False)]


def test_a_secondary_refuses_writes(target, replica_set) -> None:
    direct = MongoClient(f"mongodb://{replica_set.addresses[1]}/?directConnection=true", serverSelectionTimeoutMS=5000)
    try:
        with pytest.raises(NotPrimaryError, match="emulated member 1 is secondary"):
            direct.db.c.insert_one({"x": 1})
        assert [a.name for a in replica_set.arrivals() if a.member == 1][:1] == ["insert"]
    finally:
        direct.close()


def test_a_recovering_member_says_so_in_hello(target, replica_set) -> None:
    replica_set.set_role(2, "recovering")
    direct = MongoClient(f"mongodb://{replica_set.addresses[2]}/?directConnection=true", serverSelectionTimeoutMS=5000)
    try:
        hello = direct.admin.command("hello")
    finally:
        direct.close()
    assert (hello["isWritablePrimary"], hello["secondary"], hello["me"]) == (False, False, replica_set.addresses[2])
    assert hello["primary"] == replica_set.addresses[0] and hello["hosts"] == replica_set.addresses
    assert hello["tags"] == {"dc": "b"}
    with pytest.raises(ReplicaSetConfigError, match="already has a primary"):
        replica_set.set_role(1, "primary")
