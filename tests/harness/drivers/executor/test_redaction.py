"""The harness's redaction of an executor's raw command events (docs/executor-protocol.md section 7.1).

Executors send sensitive commands as their driver published them; :class:`SensitiveCommands` is what keeps
their payloads out of records and logs. Each rule is shown catching the secret and letting through what the
test may see.
"""

from __future__ import annotations

from typing import Any

from harness.drivers.executor.redaction import SensitiveCommands

SECRET = {"saslStart": 1, "payload": "c2VjcmV0"}


def _event(kind: str, name: str, request: int, payload: tuple[str, Any], client: str) -> dict[str, Any]:
    return {"kind": kind, "commandName": name, "requestId": request, payload[0]: payload[1], "client": client}


def _started(name: str, request: int, command: dict[str, Any], client: str = "c") -> dict[str, Any]:
    return _event("commandStartedEvent", name, request, ("command", command), client)


def _succeeded(name: str, request: int, reply: dict[str, Any], client: str = "c") -> dict[str, Any]:
    return _event("commandSucceededEvent", name, request, ("reply", reply), client)


def _failed(name: str, request: int, client: str = "c") -> dict[str, Any]:
    return _event("commandFailedEvent", name, request, ("failure", {"errmsg": "x"}), client)


def test_a_sensitive_command_is_left_out_of_a_client_that_does_not_observe_them() -> None:
    events = [
        _started("saslStart", 1, SECRET),
        _succeeded("saslStart", 1, {"payload": "s"}),
        _started("find", 2, {"find": "c"}),
    ]
    kept = SensitiveCommands().client_events("c", events)
    assert [e["commandName"] for e in kept] == ["find"]


def test_a_client_that_observes_sensitive_commands_keeps_them() -> None:
    redactor = SensitiveCommands()
    redactor.client_created("c", {"observeSensitiveCommands": True})
    events = [_started("saslStart", 1, SECRET), _succeeded("saslStart", 1, {"payload": "s"})]
    assert redactor.client_events("c", events) == events
    assert redactor.client_events("other", events) == []


def test_an_authenticating_hello_and_its_reply_are_paired_by_request_id() -> None:
    events = [
        _started("hello", 7, {"hello": 1, "speculativeAuthenticate": SECRET}),
        _succeeded("hello", 7, {"ok": 1}),
        _started("hello", 8, {"hello": 1}),
        _succeeded("hello", 8, {"ok": 1}),
    ]
    kept = SensitiveCommands().client_events("c", events)
    assert [e["requestId"] for e in kept] == [8, 8]


def test_a_reply_alone_is_judged_by_its_content() -> None:
    events = [
        _succeeded("hello", 3, {"ok": 1, "speculativeAuthenticate": {"payload": "s"}}),
        _succeeded("hello", 4, {"ok": 1}),
    ]
    assert [e["requestId"] for e in SensitiveCommands().client_events("c", events)] == [4]
    assert SensitiveCommands().client_events("c", [_failed("saslContinue", 5)]) == []


def test_configure_fail_point_is_always_left_out_and_case_matters_not_for_sensitive_names() -> None:
    redactor = SensitiveCommands()
    redactor.client_created("c", {"observeSensitiveCommands": True})
    events = [
        _started("configureFailPoint", 1, {"configureFailPoint": "failCommand"}),
        _succeeded("configureFailPoint", 1, {"ok": 1}),
    ]
    assert redactor.client_events("c", events) == []
    assert SensitiveCommands().client_events("c", [_started("SASLSTART", 2, SECRET)]) == []


def test_the_command_log_blanks_a_sensitive_command_across_replies_and_keeps_the_rest() -> None:
    redactor = SensitiveCommands()
    first = redactor.log_entries([_started("saslStart", 1, SECRET), _started("find", 2, {"find": "c"})])
    second = redactor.log_entries([_succeeded("hello", 1, {"ok": 1}), _succeeded("find", 2, {"ok": 1, "n": 1})])
    assert first[0]["command"] == {} and first[0]["commandName"] == "saslStart"
    assert first[1]["command"] == {"find": "c"}
    assert second[0]["reply"] == {}, "the reply of a sensitive started command, paired by client and request id"
    assert second[1]["reply"] == {"ok": 1, "n": 1}
    other_client = redactor.log_entries([_started("saslStart", 9, SECRET, "d"), _succeeded("find", 9, {"ok": 1}, "e")])
    assert other_client[0]["command"] == {} and other_client[1]["reply"] == {"ok": 1}


def test_the_executors_entries_are_not_changed_in_place() -> None:
    entry = _started("saslStart", 1, dict(SECRET))
    SensitiveCommands().log_entries([entry])
    assert entry["command"] == SECRET
