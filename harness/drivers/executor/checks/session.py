"""What every check of ``harness executor-check`` shares: the executor's process, the problems found, the requests.

A check sends messages (docs/executor-protocol.md) through a :class:`Check` and appends what was wrong to its
``problems``; the helpers here open a scope with its entities, run one operation, read the command names a client
started, and compare values with their BSON types, so each check group says only what it asks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from bson import Binary, json_util
from pymongo import MongoClient

from harness.drivers.executor.process import ExecutorProcess

#: How long a check waits for any reply but ``hello``'s before the executor counts as hung.
REQUEST_TIMEOUT_S = 20.0


@dataclass
class Check:
    """One run of the checks against one executor process: the requests sent, the problems found so far."""

    process: ExecutorProcess
    uri: str | None
    problems: list[str] = field(default_factory=list)
    #: The executor's ``hello`` result (plain JSON), for the checks that depend on what it declared.
    hello: dict[str, Any] = field(default_factory=dict)

    def request(self, method: str, **params: Any) -> dict[str, Any]:
        reply = self.process.request(method, params, REQUEST_TIMEOUT_S)
        self.plain_envelope(method)
        stray = self.process.unexpected_output(0.05)
        if stray:
            self.problems.append(f"{method}: stdout carried lines that are not replies: {stray[:3]!r}")
        return reply

    def plain_envelope(self, method: str) -> None:
        """The reply's ``id`` and ``ok`` are plain JSON (section 2), not ``{"$numberInt": ...}``."""
        envelope = json.loads(self.process.last_line)
        request_id, ok = envelope.get("id"), envelope.get("ok")
        if isinstance(request_id, bool) or not isinstance(request_id, int) or not isinstance(ok, bool):
            self.problems.append(
                f"{method}: the reply's id and ok must be a plain JSON integer and boolean (section 2), "
                f"got id {json.dumps(request_id)}, ok {json.dumps(ok)}"
            )

    def expect_ok(self, method: str, **params: Any) -> Any:
        reply = self.request(method, **params)
        if not reply["ok"]:
            self.problems.append(f"{method}: expected success, got error {reply['error']!r}")
        return reply.get("result")


def typed(value: Any) -> tuple[str, Any, int | None]:
    """A value with its BSON type; Python decodes binary subtype 0 as ``bytes``, the same BSON value."""
    if isinstance(value, bytes) and not isinstance(value, Binary):
        return ("Binary", bytes(value), 0)
    if isinstance(value, Binary):
        return ("Binary", bytes(value), value.subtype)
    return (type(value).__name__, value, None)


def wire(value: Any) -> str:
    """A value as canonical Extended JSON, the way it crosses the pipe (so an Int64 and an int look different)."""
    return json_util.dumps(value, json_options=json_util.CANONICAL_JSON_OPTIONS)


def typed_tree(value: Any) -> Any:
    """A value with every leaf's BSON type, so ``Int64(2)`` and ``2`` differ as they do on the wire."""
    if isinstance(value, dict):
        return [(key, typed_tree(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [typed_tree(item) for item in value]
    return typed(value)


def open_scope(check: Check, scope: str, budget_ms: int, *entities: dict[str, Any], heartbeat: Any = None) -> bool:
    """``openScope`` on the server and its entities; False (with the problem said) when any of them failed."""
    assert check.uri is not None
    before = len(check.problems)
    check.expect_ok(
        "openScope", scope=scope, uri=check.uri, iterationTimeoutMS=budget_ms, heartbeatFrequencyMS=heartbeat
    )
    for entity in entities:
        check.expect_ok("createEntity", scope=scope, entity=entity)
    return len(check.problems) == before


def client_and_collection(collection: str, **client: Any) -> tuple[dict[str, Any], ...]:
    """A ``client`` observing its started commands, its ``db`` and a ``coll`` named ``collection``."""
    return (
        {"client": {"id": "client", "observeEvents": ["commandStartedEvent"], **client}},
        {"database": {"id": "db", "client": "client", "databaseName": "executor_check"}},
        {"collection": {"id": "coll", "database": "db", "collectionName": collection}},
    )


def command_names(check: Check, scope: str) -> list[str]:
    """The names of the commands the scope's ``client`` has started so far, in order."""
    events = check.expect_ok("events", scope=scope, client="client", eventType="command")
    return [event.get("commandName") for event in events or [] if isinstance(event, dict)]


def run_operation(check: Check, scope: str, name: str, obj: str, **arguments: Any) -> dict[str, Any]:
    """``run`` one operation on ``obj`` in ``scope``; the reply as it came, an error included."""
    return check.request("run", scope=scope, operation={"name": name, "object": obj, "arguments": arguments})


def server_client(check: Check) -> MongoClient[dict[str, Any]]:
    """The check's own pymongo client on the server, for what a test runner does beside the driver under test."""
    assert check.uri is not None
    return MongoClient(check.uri, serverSelectionTimeoutMS=int(REQUEST_TIMEOUT_S * 1000))
