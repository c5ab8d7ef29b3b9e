"""The fail-point plug-in names how a run's fail points are applied, as every record repeats it (``failpoints``).

``native`` only when the server itself answers the harness's admin client; a target whose admin client goes
through a wire proxy that answers ``configureFailPoint`` (the presented replica set) makes the backend say so.
"""

from __future__ import annotations

from types import SimpleNamespace

from faults.failpoints import plugin
from harness.shared.target_base import TargetBase
from harness.shared.wire.presented_topology import FAILPOINTS_BY_PRESENTATION, PresentedReplicaSet


def _target(admin_failpoints: str = "native") -> SimpleNamespace:
    """What the plug-in reads of a target: its admin client, its URI, and how its admin's fail points are applied
    (declared on the port: ``harness.core.ports.Target.admin_failpoints``)."""
    return SimpleNamespace(admin=object(), uri="mongodb://127.0.0.1:1/", admin_failpoints=admin_failpoints)


def test_a_target_of_the_base_class_has_native_fail_points():
    assert plugin.native(_target()).backend.name == "native"
    assert TargetBase("t").admin_failpoints == "native"


def test_fail_points_answered_by_a_presenting_proxy_are_named_so():
    setup = plugin.native(_target(admin_failpoints=FAILPOINTS_BY_PRESENTATION))
    assert setup.backend.name == "emulated-by-presenting-proxy"
    assert setup.driver_uri == "mongodb://127.0.0.1:1/"  # still through the target: the proxy is the target's


def test_auto_keeps_the_presenting_proxys_name_when_it_accepts_the_probe(monkeypatch):
    from harness.shared.failpoint_backends import NativeFailPoints

    monkeypatch.setattr(NativeFailPoints, "supported", lambda self: True)
    setup = plugin.auto(_target(admin_failpoints=FAILPOINTS_BY_PRESENTATION))
    assert setup.backend.name == FAILPOINTS_BY_PRESENTATION


def test_the_presentations_provenance_names_what_answers_fail_points():
    presentation = PresentedReplicaSet("127.0.0.1", 1)
    presentation.member.me = "127.0.0.1:2"
    details = presentation.provenance("single")
    assert "127.0.0.1:2" in details["failpoints_answered_by"]
    assert "configureFailPoint" in details["failpoints_answered_by"]
