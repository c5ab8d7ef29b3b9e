"""Fail points are always turned off: after failures, exceptions and timeouts (checked on the server)."""

from __future__ import annotations

import pytest
from pymongo import MongoClient
from pymongo.errors import OperationFailure

from harness.core.ports import FailPointError
from harness.engine.failpoint_manager import FailPointManager
from harness.shared.failpoint_backends import NativeFailPoints
from tests.helpers import legacy_tests

FAIL_INSERTS = """
    failPoint:
      configureFailPoint: failCommand
      mode: alwaysOn
      data: {failCommands: [insert], errorCode: 2}
"""


def _assert_inserts_work(run):
    """The fail point is really off: an insert through a fresh path succeeds."""
    run.target.admin["harness-selftest"]["probe"].insert_one({"probe": True})


def test_fail_point_is_off_after_a_test_that_raised_mid_way(embedded_run, tmp_path):
    [test] = legacy_tests(
        tmp_path,
        """
  - description: raises after arming
    target: collection
"""
        + FAIL_INSERTS
        + """
    operations:
      - {database: harness-selftest, collection: coll, name: frobnicate, arguments: {}}
    result: {success: []}
""",
    )
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "error"
    assert embedded_run.failpoints.armed == []
    _assert_inserts_work(embedded_run)


def test_fail_point_is_off_after_a_failed_test(embedded_run, tmp_path):
    [test] = legacy_tests(
        tmp_path,
        """
  - description: insert fails
    target: collection
"""
        + FAIL_INSERTS
        + """
    operations:
      - {database: harness-selftest, collection: coll, name: insertOne, arguments: {document: {x: 1}}}
    result: {success: [{operationType: insert}]}
""",
    )
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "failed" and "code 2" in verdict.message
    _assert_inserts_work(embedded_run)


def test_a_hanging_target_gives_an_error_and_the_fail_point_goes_off(embedded_run, tmp_path):
    [test] = legacy_tests(
        tmp_path,
        """
  - description: getMore blocks far beyond the deadline
    target: collection
    failPoint:
      configureFailPoint: failCommand
      mode: alwaysOn
      data: {failCommands: [getMore, insert], blockConnection: true, blockTimeMS: 20000}
    operations: []
    result: {success: [{operationType: insert}]}
""",
    )
    settings = embedded_run.runner.settings
    saved = settings.test_timeout_s
    settings.test_timeout_s = 2.0
    try:
        verdict = embedded_run.verdict(test)
    finally:
        settings.test_timeout_s = saved
    assert verdict.outcome == "error" and "timed out after 2s" in verdict.message
    assert "success[0]" in verdict.message
    _assert_inserts_work(embedded_run)


def test_manager_turns_off_everything_it_armed_and_reports_failures(embedded_run):
    manager = FailPointManager(NativeFailPoints(embedded_run.target.admin))
    manager.arm(
        {"configureFailPoint": "failCommand", "mode": "alwaysOn", "data": {"failCommands": ["insert"], "errorCode": 2}}
    )
    with pytest.raises(OperationFailure):
        embedded_run.target.admin["harness-selftest"]["probe"].insert_one({})
    assert manager.armed == ["failCommand"]
    assert manager.disarm_all() == []
    assert manager.armed == []
    _assert_inserts_work(embedded_run)


class _RefusingBackend:
    """Stands in for a target that answers configureFailPoint with an error."""

    name = "refusing"

    def __init__(self):
        self.disarmed = []

    def arm(self, command):
        raise FailPointError("target refused configureFailPoint 'failCommand': test commands are off")

    def disarm(self, fail_point):
        self.disarmed.append(fail_point)

    def leftovers(self):
        return []


def test_a_refused_fail_point_is_not_left_on_the_books():
    backend = _RefusingBackend()
    manager = FailPointManager(backend)
    with pytest.raises(FailPointError, match="refused"):
        manager.arm({"configureFailPoint": "failCommand", "mode": "alwaysOn"})
    assert manager.armed == []  # refused, so never armed: nothing to turn off later
    assert manager.disarm_all() == [] and backend.disarmed == []


def _unified_shaped(operations):
    from harness.core.model import EntitySpec, SpecTest

    return SpecTest(
        file="selftest.yml",
        format="unified",
        description="late arming",
        comparator="unified",
        entities=[EntitySpec("client", "client0", {})],
        operations=operations,
    )


def test_a_timed_out_test_never_touches_the_next_tests_fail_points(embedded_run):
    """The worker of a timed-out test wakes up later: it must neither arm nor turn off anything."""
    import time

    from harness.core.model import TEST_RUNNER, Operation

    late = {
        "configureFailPoint": "failCommand",
        "mode": "alwaysOn",
        "data": {"failCommands": ["insert"], "errorCode": 2},
    }
    test = _unified_shaped(
        [
            Operation("wait", TEST_RUNNER, {"ms": 2500}, label="operations[0]"),
            Operation("failPoint", TEST_RUNNER, {"client": "client0", "failPoint": late}, label="operations[1]"),
        ]
    )
    settings = embedded_run.runner.settings
    saved, settings.test_timeout_s = settings.test_timeout_s, 0.5
    try:
        verdict = embedded_run.verdict(test)
    finally:
        settings.test_timeout_s = saved
    assert verdict.outcome == "error" and "timed out after 0.5s during operations[0]" in verdict.message

    # The next test arms its own point while the stale worker sleeps ...
    next_tests_point = {
        "configureFailPoint": "failCommand",
        "mode": "alwaysOn",
        "data": {"failCommands": ["find"], "errorCode": 2},
    }
    embedded_run.failpoints.arm(next_tests_point)
    time.sleep(3)  # ... the stale worker wakes, is refused at operations[1], and its teardown does nothing
    try:
        assert embedded_run.failpoints.armed == ["failCommand"]
        assert embedded_run.failpoints.history[-1] == next_tests_point  # the late point was never sent
        _assert_inserts_work(embedded_run)  # the late insert fail point is not armed on the server
        with pytest.raises(OperationFailure):
            embedded_run.target.admin["harness-selftest"]["probe"].find_one()  # the next test's point is
    finally:
        assert embedded_run.failpoints.disarm_all() == []


def test_a_teardown_step_that_raises_is_an_error_result_not_a_crash(embedded_run):
    from harness.core.model import TEST_RUNNER, Operation

    def broken_check(target):
        raise RuntimeError("toxiproxy went away")

    embedded_run.plugins.teardown_checks.append(broken_check)
    try:
        verdict = embedded_run.verdict(_unified_shaped([Operation("wait", TEST_RUNNER, {"ms": 1})]))
    finally:
        embedded_run.plugins.teardown_checks.remove(broken_check)
    assert verdict.outcome == "error"
    assert "clean-up failed" in verdict.message and "toxiproxy went away" in verdict.message


def test_an_emulated_point_armed_behind_the_managers_back_is_found_and_turned_off():
    """A driver may send configureFailPoint through the wire proxy itself: teardown asks the proxy."""
    from secantus import SecantusDBServer

    from harness.shared.failpoint_backends import EmulatedFailPoints
    from harness.shared.wire import WireProxy

    server = SecantusDBServer(port=0, storage_path=":memory:", enable_test_commands=False)
    server.start()
    try:
        with WireProxy(*server.address) as proxy:
            manager = FailPointManager(EmulatedFailPoints(proxy))
            manager.arm(
                {
                    "configureFailPoint": "failCommand",
                    "mode": "alwaysOn",
                    "data": {"failCommands": ["insert"], "errorCode": 2},
                }
            )
            with MongoClient(proxy.uri) as client:  # armed by a client, not the manager
                client.admin.command(
                    {
                        "configureFailPoint": "failGetMoreAfterCursorCheckout",
                        "mode": "alwaysOn",
                        "data": {"errorCode": 43},
                    }
                )
            problems = manager.disarm_all()
            assert problems == [
                "fail point 'failGetMoreAfterCursorCheckout' is still armed on the emulated backend; turned off now"
            ]
            assert proxy.armed() == [] and manager.disarm_all() == []
    finally:
        server.stop()
