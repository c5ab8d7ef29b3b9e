"""The shaped-reply scenarios tell broken drivers from sound ones.

supplementary/wire-version.yml and supplementary/missing-resume-token.yml pass on pymongo 4.20 (the
first by being skipped, see below); supplementary/resume-without-point.yml is one it fails.

These rules are about replies no modern server sends, so the wire proxy shapes
them (faults/wire/shaping.py). Each scenario must fail for a pymongo that
breaks its rule and pass for one that follows it; both are pymongo patched for
the length of one test (``monkeypatch``), never the product.

Two findings about pymongo 4.20 as shipped, which these tests pin down:

- It supports no server below wire version 9 (``pymongo.common.MIN_SUPPORTED_WIRE_VERSION``),
  and its resumable-error test reads only the ``ResumableChangeStreamError`` label,
  whatever the connection's wire version. On a connection whose handshake said 8
  (the topology still saying the target's own version, so pymongo does not refuse
  the server) it therefore breaks both wire-version scenarios. With the driver
  adapter's ``min_wire_version`` declared, those scenarios are skipped for it
  with that reason: rules for servers a driver does not support do not apply.
- When the aggregate's reply has no result, no postBatchResumeToken and no
  operationTime, it refuses to open the stream ("Expected field 'operationTime'
  missing", PYTHON-2181) where the Resume Process says to open it and, on a
  resume, send the original aggregate. A pymongo that opens the stream passes.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pymongo import common
from pymongo.errors import ConnectionFailure, CursorNotFound, InvalidOperation, OperationFailure, PyMongoError
from pymongo.synchronous import change_stream as sync_change_stream

from harness.formats.loaders import load_file

ChangeStream = sync_change_stream.ChangeStream
SCENARIOS = Path(__file__).resolve().parents[1] / "specs" / "scenarios"
WIRE_VERSION = SCENARIOS / "supplementary" / "wire-version.yml"
MISSING_TOKEN = SCENARIOS / "supplementary" / "missing-resume-token.yml"
NO_RESUME_POINT = SCENARIOS / "supplementary" / "resume-without-point.yml"
Patch = Callable[[pytest.MonkeyPatch], None]

#: The spec's table of resumable codes for servers before 4.4 (Resumable Error).
LEGACY_RESUMABLE_CODES = {6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436, 63, 150, 13388, 234, 133}
LABEL = "ResumableChangeStreamError"


def scenarios(path: Path, rule: str | None = None) -> list:
    tests = load_file(path)
    return [t for t in tests if rule is None or rule in t.description.split(":", 1)[0]]


def outcomes(run, tests) -> dict[str, Any]:
    return {test.description.split(":", 1)[1].strip(): run.verdict(test) for test in tests}


# -- resumable-error classifiers, as drivers might write them ---------------------------------------------
def _by_wire_version(wire_version: int | None, exc: PyMongoError) -> bool:
    """The spec's rule, given the wire version to judge by."""
    if isinstance(exc, (ConnectionFailure, CursorNotFound)):
        return True
    if not isinstance(exc, OperationFailure) or wire_version is None:
        return False
    return exc.has_error_label(LABEL) if wire_version >= 9 else exc.code in LEGACY_RESUMABLE_CODES


def connection_wire_version(mp: pytest.MonkeyPatch) -> None:
    """Follows the spec: the wire version of the connection that ran the command (pymongo puts it on the error)."""
    mp.setattr(sync_change_stream, "_resumable", lambda exc: _by_wire_version(exc._max_wire_version, exc))


_STREAM: contextvars.ContextVar[Any] = contextvars.ContextVar("stream")


def topology_wire_version(mp: pytest.MonkeyPatch) -> None:
    """Looks the wire version up again after the command, in the client's topology (CS-ERR-NOLATEWIRE broken)."""
    original = ChangeStream.try_next

    def try_next(self: Any) -> Any:
        token = _STREAM.set(self)
        try:
            return original(self)
        finally:
            _STREAM.reset(token)

    def resumable(exc: PyMongoError) -> bool:
        topology = _STREAM.get()._client._topology.description
        versions = [sd.max_wire_version for sd in topology.known_servers]
        return _by_wire_version(max(versions) if versions else None, exc)

    mp.setattr(ChangeStream, "try_next", try_next)
    mp.setattr(sync_change_stream, "_resumable", resumable)


def any_error_on_old_connections(mp: pytest.MonkeyPatch) -> None:
    """Every server error resumable below wire version 9 (the code table ignored)."""
    mp.setattr(sync_change_stream, "_resumable", lambda exc: (
        isinstance(exc, OperationFailure) and (exc._max_wire_version or 0) < 9) or
        _by_wire_version(exc._max_wire_version, exc))


def supports_wire_version_8(mp: pytest.MonkeyPatch, run) -> None:
    """The adapter declares no minimum (or 8), as for a driver that still supports 4.2 servers."""
    mp.setattr(type(run.driver), "min_wire_version", 8, raising=False)


# -- resumable errors by the connection's wire version ----------------------------------------------------
def test_pymongo_as_shipped_judges_by_the_label_on_a_wire_version_8_connection(embedded_run, monkeypatch):
    """The finding: on a connection whose handshake said 8, pymongo 4.20 still wants the label."""
    supports_wire_version_8(monkeypatch, embedded_run)
    results = outcomes(embedded_run, scenarios(WIRE_VERSION))
    assert {name: v.outcome for name, v in results.items()} == {
        "on a wire version 8 connection, a listed code without the label is resumed": "failed",
        "on a wire version 8 connection, the label alone does not make an unlisted code resumable": "failed",
        "on a wire version 8 connection, an unlisted code without the label is not resumed": "passed",
    }, {name: v.message for name, v in results.items()}
    for verdict in results.values():  # the proxy really told the connection 8
        assert verdict.details["reply_shaping"]["applied"].get("handshakeMaxWireVersion", 0) >= 1


def test_a_driver_that_judges_by_the_connections_wire_version_passes(embedded_run, monkeypatch):
    supports_wire_version_8(monkeypatch, embedded_run)
    connection_wire_version(monkeypatch)
    results = outcomes(embedded_run, scenarios(WIRE_VERSION))
    assert all(v.outcome == "passed" for v in results.values()), {n: v.message for n, v in results.items()}


@pytest.mark.parametrize("breakage", [topology_wire_version, any_error_on_old_connections],
                         ids=lambda b: b.__name__)
def test_a_driver_that_breaks_the_wire_version_rules_fails(embedded_run, monkeypatch, breakage):
    supports_wire_version_8(monkeypatch, embedded_run)
    breakage(monkeypatch)
    results = outcomes(embedded_run, scenarios(WIRE_VERSION))
    assert any(v.outcome == "failed" for v in results.values())
    assert all(v.outcome in ("passed", "failed") for v in results.values()), {n: v.message for n, v in results.items()}


def test_the_topology_lookup_fails_every_rule_it_breaks(embedded_run, monkeypatch):
    """The proxy leaves the monitor's view at the target's version: a driver that looks there fails both ways."""
    supports_wire_version_8(monkeypatch, embedded_run)
    topology_wire_version(monkeypatch)
    results = outcomes(embedded_run, scenarios(WIRE_VERSION, "CS-ERR-NOLATEWIRE"))
    assert [v.outcome for v in results.values()] == ["failed", "failed"], {n: v.message for n, v in results.items()}


def test_a_driver_that_supports_no_such_server_is_skipped_with_the_reason(embedded_run, monkeypatch):
    monkeypatch.setattr(type(embedded_run.driver), "min_wire_version", common.MIN_SUPPORTED_WIRE_VERSION,
                        raising=False)
    for verdict in outcomes(embedded_run, scenarios(WIRE_VERSION)).values():
        assert verdict.outcome == "skipped", verdict.message
        assert f"supports no server below wire version {common.MIN_SUPPORTED_WIRE_VERSION}" in verdict.message


# -- a resume with no resume point -----------------------------------------------------------------------
def opens_without_operation_time(mp: pytest.MonkeyPatch) -> None:
    """Follows the spec: no operationTime to save is no reason to refuse the stream."""
    original = ChangeStream._process_result

    def process_result(self: Any, result: Any) -> None:
        if "operationTime" in result:
            return original(self, result)
        if not result["cursor"]["firstBatch"] and "postBatchResumeToken" in result["cursor"]:
            self._resume_token = result["cursor"]["postBatchResumeToken"]

    mp.setattr(ChangeStream, "_process_result", process_result)


def saves_the_cluster_time_instead(mp: pytest.MonkeyPatch) -> None:
    """With no operationTime, the reply's $clusterTime is saved as the resume point (CS-RESUME-BARE-NOPOINT)."""
    original = ChangeStream._process_result

    def process_result(self: Any, result: Any) -> None:
        if "operationTime" in result or "$clusterTime" not in result:
            return original(self, result)
        original(self, {**result, "operationTime": result["$clusterTime"]["clusterTime"]})

    mp.setattr(ChangeStream, "_process_result", process_result)


def resumes_without_the_users_stages(mp: pytest.MonkeyPatch) -> None:
    """The resume sends only the $changeStream stage, not the original pipeline (CS-RESUME-BARE-ORIGINAL)."""
    opens_without_operation_time(mp)
    original_resume, original_pipeline = ChangeStream._resume, ChangeStream._aggregation_pipeline

    def resume(self: Any) -> None:
        self._resuming = True
        original_resume(self)

    def pipeline(self: Any) -> list:
        full = original_pipeline(self)
        return full[:1] if getattr(self, "_resuming", False) else full

    mp.setattr(ChangeStream, "_resume", resume)
    mp.setattr(ChangeStream, "_aggregation_pipeline", pipeline)


def test_pymongo_as_shipped_refuses_a_stream_with_no_operation_time(embedded_run):
    (verdict,) = outcomes(embedded_run, scenarios(NO_RESUME_POINT, "CS-RESUME-BARE-NOPOINT")).values()
    assert verdict.outcome == "failed" and "Expected field 'operationTime' missing" in verdict.message, verdict.message
    assert verdict.details["reply_shaping"]["applied"].get("removeOperationTime", 0) >= 1


def test_a_driver_that_opens_the_stream_resumes_with_the_original_aggregate(embedded_run, monkeypatch):
    opens_without_operation_time(monkeypatch)
    (verdict,) = outcomes(embedded_run, scenarios(NO_RESUME_POINT, "CS-RESUME-BARE-NOPOINT")).values()
    assert verdict.outcome == "passed", verdict.message


@pytest.mark.parametrize("breakage,rule", [
    (lambda mp: (opens_without_operation_time(mp), saves_the_cluster_time_instead(mp)), "CS-RESUME-BARE-NOPOINT"),
    (resumes_without_the_users_stages, "CS-RESUME-BARE-ORIGINAL"),
], ids=["saves the cluster time", "drops the user's stages"])
def test_a_driver_that_resumes_from_a_point_it_made_up_or_another_pipeline_fails(embedded_run, monkeypatch,
                                                                                   breakage, rule):
    breakage(monkeypatch)
    (verdict,) = outcomes(embedded_run, scenarios(NO_RESUME_POINT, rule)).values()
    assert verdict.outcome == "failed", verdict.message
    assert "aggregate" in verdict.message, verdict.message


# -- the error for a change without its _id -----------------------------------------------------------------
def bland_message(mp: pytest.MonkeyPatch) -> None:
    """The error is raised and the stream closed, but the message does not say why resuming is impossible."""
    original = ChangeStream.try_next

    def try_next(self: Any) -> Any:
        try:
            return original(self)
        except InvalidOperation as exc:
            raise InvalidOperation("unexpected change document") from exc

    mp.setattr(ChangeStream, "try_next", try_next)


def test_the_missing_token_message_passes_as_shipped_and_fails_when_bland(embedded_run, monkeypatch):
    (test,) = scenarios(MISSING_TOKEN, "CS-TOKEN-MISSING-MESSAGE")
    assert embedded_run.verdict(test).outcome == "passed"
    bland_message(monkeypatch)
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "failed" and "resume token is missing" in verdict.message, verdict.message


#: For tests/test_supplementary.py's check that every rule a scenario names has a breakage that fails it:
#: the breakage of each rule these scenarios name, as the tests above show it.
BROKEN_SHAPED: dict[str, tuple[str, Patch]] = {
    "wire version looked up in the topology": ("CS-ERR-WIREVERSION, CS-ERR-NOLATEWIRE", topology_wire_version),
    "label only on an old connection (pymongo 4.20)": ("CS-ERR-LEGACYCODES", lambda mp: None),
    "every error resumable on an old connection": ("CS-ERR-LEGACYCODES", any_error_on_old_connections),
    "cluster time saved as the resume point": ("CS-RESUME-BARE-NOPOINT", saves_the_cluster_time_instead),
    "resume without the user's stages": ("CS-RESUME-BARE-ORIGINAL", resumes_without_the_users_stages),
    "bland missing-token message": ("CS-TOKEN-MISSING-MESSAGE", bland_message),
}
