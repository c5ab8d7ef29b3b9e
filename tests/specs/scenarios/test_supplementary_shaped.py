"""The shaped-reply scenarios tell broken drivers from sound ones.

supplementary/wire-version.yml and supplementary/missing-resume-token.yml pass on pymongo 4.20 (the
first by being skipped, see below).

These rules are about replies no modern server sends, so the wire proxy shapes
them (harness/shared/wire/shaping.py). Each scenario must fail for a pymongo that
breaks its rule and pass for one that follows it; both are pymongo patched for
the length of one test (``monkeypatch``), never the product.

A finding about pymongo 4.20 as shipped, which these tests pin down:

- It supports no server below wire version 9 (``pymongo.common.MIN_SUPPORTED_WIRE_VERSION``),
  and its resumable-error test reads only the ``ResumableChangeStreamError`` label,
  whatever the connection's wire version. On a connection whose handshake said 8
  (the topology still saying the target's own version, so pymongo does not refuse
  the server) it therefore breaks both wire-version scenarios. With the driver
  adapter's ``min_wire_version`` declared, those scenarios are skipped for it
  with that reason: rules for servers a driver does not support do not apply.

(pymongo 4.20 also refuses a stream whose aggregate reply has no result, no postBatchResumeToken and no
operationTime, PYTHON-2181. That is no deviation: the spec's Response Format requires operationTime, so
such a reply is malformed, and the resume it would lead to, CS-RESUME-BARE-NOPOINT and
CS-RESUME-BARE-ORIGINAL, cannot arise from a reply the spec allows; the catalogue marks both not
checkable, and no scenario asserts anything about that reply.)
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
from tests.paths import REPO

ChangeStream = sync_change_stream.ChangeStream
SCENARIOS = REPO / "specs" / "scenarios"
WIRE_VERSION = SCENARIOS / "supplementary" / "wire-version.yml"
MISSING_TOKEN = SCENARIOS / "supplementary" / "missing-resume-token.yml"
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
    mp.setattr(
        sync_change_stream,
        "_resumable",
        lambda exc: (
            (isinstance(exc, OperationFailure) and (exc._max_wire_version or 0) < 9)
            or _by_wire_version(exc._max_wire_version, exc)
        ),
    )


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


@pytest.mark.parametrize("breakage", [topology_wire_version, any_error_on_old_connections], ids=lambda b: b.__name__)
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
    monkeypatch.setattr(type(embedded_run.driver), "min_wire_version", common.MIN_SUPPORTED_WIRE_VERSION, raising=False)
    for verdict in outcomes(embedded_run, scenarios(WIRE_VERSION)).values():
        assert verdict.outcome == "skipped", verdict.message
        assert f"supports no server below wire version {common.MIN_SUPPORTED_WIRE_VERSION}" in verdict.message


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
    assert verdict.outcome == "failed" and "resume token" in verdict.message, verdict.message


#: For tests/specs/scenarios/test_supplementary.py's check that every rule a scenario names has a breakage that
#: fails it: the breakage of each rule these scenarios name, as the tests above show it.
BROKEN_SHAPED: dict[str, tuple[str, Patch]] = {
    "wire version looked up in the topology": ("CS-ERR-WIREVERSION, CS-ERR-NOLATEWIRE", topology_wire_version),
    "label only on an old connection (pymongo 4.20)": ("CS-ERR-LEGACYCODES", lambda mp: None),
    "every error resumable on an old connection": ("CS-ERR-LEGACYCODES", any_error_on_old_connections),
    "bland missing-token message": ("CS-TOKEN-MISSING-MESSAGE", bland_message),
}
