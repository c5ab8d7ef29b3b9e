"""``targetedFailPoint``: a fail point on the server a session is pinned to.

Sessions are pinned only on sharded clusters (no mongos here), so the pinned path is tested at unit
level: the operation function gets a scope that reports a pinned address honestly (the embedded
server's own), and the fail point is then seen armed by a client of its own, and off after teardown.
Through the runner, an unpinned session is an ``error`` (the unified format: the runner MUST error).
"""

from __future__ import annotations

import pytest
from pymongo import MongoClient
from pymongo.errors import OperationFailure

from harness.core.model import Operation, SpecTest
from harness.engine.spec_context import SpecContext
from harness.engine.targeted_failpoint import targeted_fail_point
from harness.formats.loaders import load_file

FAIL_PING = {
    "configureFailPoint": "failCommand",
    "mode": {"times": 5},
    "data": {"failCommands": ["count"], "errorCode": 2},
}

UNPINNED = """
description: targeted
schemaVersion: "1.9"
createEntities:
  - client: { id: client0, useMultipleMongoses: true }
  - session: { id: session0, client: client0 }
tests:
  - description: an unpinned session
    operations:
      - name: targetedFailPoint
        object: testRunner
        arguments:
          session: session0
          failPoint: { configureFailPoint: failCommand, mode: { times: 1 },
                       data: { failCommands: [ insert ], errorCode: 2 } }
"""


def test_an_unpinned_session_is_an_error(embedded_run, tmp_path):
    spec = tmp_path / "targeted.yml"
    spec.write_text(UNPINNED)
    (test,) = load_file(spec)
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "error" and "not pinned" in verdict.message and "operations[0]" in verdict.message


class PinnedScope:
    """A driver scope whose session reports the server it is pinned to (the embedded one)."""

    def __init__(self, address):
        self.address = address
        self.asked: list[str] = []

    def session_pinned_address(self, session):
        self.asked.append(session)
        return self.address

    def close(self):
        pass


def _count_fails(uri: str) -> bool:
    with MongoClient(uri, directConnection=True) as client:
        try:
            client["targeted"].command("count", "coll")
        except OperationFailure as exc:
            return exc.code == 2
    return False


@pytest.mark.parametrize("spelling", ["same", "other"])
def test_a_pinned_session_arms_the_point_on_its_server_and_teardown_turns_it_off(embedded_run, spelling):
    """``same``: the address the run's clients use (the run's manager arms it); ``other``: the same server
    under another name, which the run's manager is not known to reach, so a direct client arms it."""
    runner = embedded_run.runner
    host, port = runner.target.admin.address
    address = (host, port) if spelling == "same" else ("localhost", port)
    context = SpecContext(
        SpecTest(file="unit", format="unified", description="pinned", comparator="unified"), runner.services
    )
    context.scope = PinnedScope(address)
    operation = Operation(
        "targetedFailPoint", "testRunner", {"session": "session0", "failPoint": FAIL_PING}, label="operations[0]"
    )
    try:
        targeted_fail_point(context, operation)
        assert context.scope.asked == ["session0"]
        assert _count_fails(runner.target.uri)
        if spelling == "other":
            assert context.details["targeted_failpoints"] == [f"direct localhost:{port}"]
            assert "failCommand" not in runner.services.failpoints.armed
    finally:
        problems = context.close() + runner.services.failpoints.disarm_all()
    assert problems == []
    assert not _count_fails(runner.target.uri)
