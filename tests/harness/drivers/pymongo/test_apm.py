"""APM capture: one client's command events, with the specs' internal and sensitive commands left out."""

from __future__ import annotations

import pytest
from pymongo import MongoClient
from pymongo.errors import OperationFailure

from harness.drivers.pymongo.apm import CommandRecorder


@pytest.fixture
def client_with(embedded_run):
    clients = []

    def make(**recorder_options):
        recorder = CommandRecorder(**recorder_options)
        client = MongoClient(embedded_run.target.uri, event_listeners=[recorder])
        clients.append(client)
        return client, recorder

    yield make
    for client in clients:
        client.close()


def _names(recorder, kind="commandStartedEvent"):
    return [e.command_name for e in recorder.events if e.kind == kind]


def test_only_the_monitored_clients_commands_are_recorded(client_with):
    watched, recorder = client_with()
    other, _ = client_with()
    watched.apm.c.insert_one({"x": 1})
    other.apm.c.insert_one({"x": 2})
    other.apm.c.find_one()
    assert _names(recorder) == ["insert"]
    [started] = [e for e in recorder.events if e.kind == "commandStartedEvent"]
    assert started.command["documents"][0]["x"] == 1 and started.database_name == "apm"


def test_started_succeeded_and_failed_events_are_kept_in_order(client_with):
    client, recorder = client_with()
    client.apm.c.insert_one({"_id": 1})
    with pytest.raises(OperationFailure):
        client.apm.command("noSuchCommand")  # ok: 0 -> a failed event
    assert [(e.kind, e.command_name) for e in recorder.events] == [
        ("commandStartedEvent", "insert"),
        ("commandSucceededEvent", "insert"),
        ("commandStartedEvent", "noSuchCommand"),
        ("commandFailedEvent", "noSuchCommand"),
    ]
    assert recorder.events[1].reply["n"] == 1 and recorder.events[3].failure


def test_observe_selects_event_kinds(client_with):
    client, recorder = client_with(observe=["commandStartedEvent"])
    client.apm.c.find_one()
    assert {e.kind for e in recorder.events} == {"commandStartedEvent"}


def test_configure_fail_point_is_never_observed(client_with):
    client, recorder = client_with()
    client.admin.command({"configureFailPoint": "failCommand", "mode": "off"})
    client.apm.c.find_one()
    assert _names(recorder) == ["find"]
    assert _names(recorder, "commandSucceededEvent") == ["find"]


def test_ignored_commands_hide_their_replies_too(client_with):
    client, recorder = client_with(ignore_commands=["find"])
    client.apm.c.find_one()
    client.apm.c.insert_one({})
    assert _names(recorder) == ["insert"] and _names(recorder, "commandSucceededEvent") == ["insert"]


@pytest.mark.parametrize("observe_sensitive", [False, True])
def test_sensitive_commands_are_hidden_unless_asked_for(client_with, observe_sensitive):
    client, recorder = client_with(observe_sensitive=observe_sensitive)
    with pytest.raises(OperationFailure):
        client.admin.command("saslStart", mechanism="SCRAM-SHA-256", payload=b"x")
    client.admin.command("ping")
    expected = ["saslStart", "ping"] if observe_sensitive else ["ping"]
    assert _names(recorder) == expected
    replies = [e.command_name for e in recorder.events if e.kind != "commandStartedEvent"]
    assert replies == expected


def test_a_plain_hello_is_observed_but_a_speculative_authentication_is_not(client_with):
    client, recorder = client_with()
    client.admin.command("hello")
    assert _names(recorder) == ["hello"]
    recorder.clear()
    recorder.started(_started("hello", {"hello": 1, "speculativeAuthenticate": {"saslStart": 1}}, request_id=7))
    assert recorder.events == []


def _started(name, command, request_id):
    from pymongo.monitoring import CommandStartedEvent

    return CommandStartedEvent(command, "admin", request_id, ("127.0.0.1", 1), 1)


def test_an_older_pymongos_event_without_server_connection_id_is_observed_not_fatal():
    """pymongo 4.6 command events have no ``server_connection_id``: the event is kept, the id is absent."""
    from types import SimpleNamespace

    recorder = CommandRecorder()
    event = SimpleNamespace(
        command_name="insert",
        command={"insert": "c", "documents": []},
        database_name="db",
        request_id=1,
        operation_id=1,
        service_id=None,
    )
    recorder.started(event)
    [observed] = recorder.events
    assert observed.command_name == "insert" and observed.server_connection_id is None
