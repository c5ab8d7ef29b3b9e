"""Prose test 6 on the emulated replica set: what it records, where it skips, how it cleans up.

The mutants that must make it fail (resume with primary / forgotten read
preference / on the same member, old cursor killed on the primary) are in
tests/prose_tests/test_prose_mutants.py. Here: the record says the members are an
emulation; pymongo 4.20's killCursors behaviour on both variants is pinned;
a target that is no replica-set member skips the check with the reason; the
check's member fail points never outlive it; a resume that lands on the other
secondary, whose new cursor is then read there, passes (only the resume's
aggregate is judged, as the README's test 6 says).
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest
from pymongo.errors import PyMongoError
from pymongo.synchronous import change_stream as sync_change_stream
from pymongo.synchronous import command_cursor as sync_command_cursor

import prose_tests
from harness.shared.wire.replica_set import ReplicaSetConfigError
from harness.shared.wire.shaping_route import replica_set_for_test

CHECKS = {prose_tests.check_id(check): check for check in prose_tests.CHECKS}


def _details(result) -> dict:
    record = result.record
    return (record.get("details") if isinstance(record, dict) else getattr(record, "details", None)) or {}


def test_prose_6_passes_and_its_record_says_the_members_are_emulated(embedded_run) -> None:
    result = embedded_run.run_test(CHECKS["6"])
    assert result.outcome == "passed", result.message
    details = _details(result)
    assert details["replica_set"]["members_at_start"] == {"0": "primary", "1": "secondary", "2": "secondary"}
    assert "emulated" in details["replica_set"]["note"]
    # pymongo 4.20 closes the failed cursor itself (a plain OperationFailure on getMore), on its own member.
    assert details["kill_cursors_member"].startswith("killCursors for the old cursor arrived on its own member")


def test_pymongo_sends_no_kill_cursors_after_a_state_change_error(embedded_run) -> None:
    """Pinned finding: pymongo 4.20 treats a getMore's NotPrimaryError (here 11602) like a network error.

    ``CommandCursor._send_message`` sets ``_killed`` for any ``ConnectionFailure``, and NotPrimaryError
    is one, so the old cursor (open on the server) is never killed. Killing it is a SHOULD
    (CS-KILL-RESUME's MUST half, "never on another server", holds); the record says it was not judged.
    """
    result = embedded_run.run_test(CHECKS["6-member-down"])
    assert result.outcome == "passed", result.message
    assert _details(result)["kill_cursors_member"].startswith("the driver sent no killCursors")


def test_a_target_that_is_no_replica_set_member_skips_prose_6(embedded_run, monkeypatch) -> None:
    """A standalone is skipped by every prose check's topology requirement; a replica-set target whose hello names
    no set (so no members can be presented) by prose 6's own check."""
    target = embedded_run.target
    details = {k: v for k, v in target.info.details.items() if k != "setName"}
    monkeypatch.setattr(target, "info", dataclasses.replace(target.info, topology="single", details=details))
    result = embedded_run.run_test(CHECKS["6"])
    assert result.outcome == "skipped" and "topology single not in" in result.message, result.message
    monkeypatch.setattr(target, "info", dataclasses.replace(target.info, topology="replicaset", details=details))
    result = embedded_run.run_test(CHECKS["6"])
    assert result.outcome == "skipped", result.message
    assert "needs several replica-set members" in result.message, result.message


def test_replica_set_for_test_names_why_it_cannot_start() -> None:
    target = SimpleNamespace(info=SimpleNamespace(topology="sharded", details={}))
    with pytest.raises(ReplicaSetConfigError, match=r"\(sharded\) reports no replica-set name"):
        replica_set_for_test(target)


def test_member_fail_points_never_outlive_the_test(embedded_run) -> None:
    route = replica_set_for_test(embedded_run.target)
    point = {"configureFailPoint": "failCommand", "mode": "alwaysOn", "data": {"failCommands": ["find"]}}
    route.arm_fail_point(1, point)  # the test's own: turned off quietly
    route.replica_set.configure_fail_point(2, point)  # armed behind the route's back: reported
    replica_set = route.replica_set
    problems = route.close()
    assert problems == ["fail point 'failCommand' was still armed in emulated member 2; turned off now"]
    assert replica_set.armed() == {}


def _resume_on_the_other_secondary(mp: pytest.MonkeyPatch, get_mores: list) -> None:
    """A resume whose server selection picks the secondary the old cursor was not on (the read preference allows
    either), asking for an empty first batch so that the new cursor is read by a getMore on that member.
    ``get_mores`` collects the address of every getMore the driver sends."""
    change_stream = sync_change_stream.ChangeStream
    command_cursor = sync_command_cursor.CommandCursor

    def _resume(self) -> None:
        old = self._cursor.address
        try:
            self._cursor.close()
        except PyMongoError:
            pass
        (other,) = [address for address in self._client.secondaries if address != tuple(old)]
        with self._client._tmp_session(self._session) as session:
            command = self._aggregation_command_class(
                self._target,
                command_cursor,
                self._aggregation_pipeline(),
                {**self._command_options(), "batchSize": 0},
                result_processor=self._process_result,
                comment=self._comment,
            )
            self._cursor = self._client._retryable_read(
                command.get_cursor,
                self._target._read_preference_for(session),
                session,
                operation="aggregate",
                address=other,
            )

    original_send = command_cursor._send_message

    def send_message(self, operation) -> None:
        get_mores.append(tuple(self.address))
        original_send(self, operation)

    mp.setattr(change_stream, "_resume", _resume)
    mp.setattr(command_cursor, "_send_message", send_message)


def test_a_resumed_cursor_read_on_another_secondary_passes_prose_6(embedded_run, monkeypatch) -> None:
    """Prose 6 judges where the resume's aggregate goes (a member that fits the stream's read preference), not where
    the new cursor's getMores go: they follow the new cursor to the member the resume selected."""
    get_mores: list[tuple] = []
    _resume_on_the_other_secondary(monkeypatch, get_mores)
    result = embedded_run.run_test(CHECKS["6"])
    assert result.outcome == "passed", result.message
    assert len(set(get_mores)) == 2, f"the new cursor was not read on another member: getMores to {get_mores}"
