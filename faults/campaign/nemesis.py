"""Applying one :class:`~faults.campaign.schedule.Fault`, through the project's own machinery only.

Fail points go through a :class:`~harness.engine.failpoint_manager.FailPointManager`, scoped
with ``appName`` to the consumer's client so the writer and the harness never
see them; network faults through :class:`~faults.network.NetworkFaults` on the
consumer's proxy; restarts through :mod:`faults.campaign.restart`. Each fault
is put in place, left for its window, and removed before :meth:`Nemesis.apply`
returns, so faults never overlap and a failed removal is known at once.
:meth:`Nemesis.clean_up` removes everything and asks the servers that nothing
is left (``disarm_all``, ``reset`` + ``verify_clean``).

The consumer asks two questions while classifying an error: was a
non-resumable error of this code injected and not yet seen
(:meth:`claim_surfacing`), and has the target been unreachable lately
(:meth:`outage_recent`)?
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from faults.campaign.restart import restart_target
from faults.campaign.schedule import FAILPOINT_KINDS, NETWORK_KINDS, OUTAGE_KINDS, SURFACING_KINDS, Fault
from faults.network import NetworkFaults, Toxic
from harness.core.constants import RESUMABLE_LABEL
from harness.engine.failpoint_manager import FailPointManager


@dataclass
class AppliedFault:
    """What happened to one fault: when it was in place, and any problem putting it there or taking it away."""

    fault: Fault
    started: float = 0.0
    ended: float = 0.0
    problems: list[str] = field(default_factory=list)
    #: For surfacing kinds: whether the consumer has seen the error it caused.
    surfaced: bool = False
    #: For fail-point kinds: whether a getMore of the consumer failed while it was armed.
    fired: bool | None = None

    def as_record(self, origin: float) -> dict[str, Any]:
        return {
            **self.fault.as_record(),
            "started_s": round(self.started - origin, 3),
            "window_s": round(self.ended - self.started, 3),
            "fired": self.fired,
            "problems": self.problems,
        }


def fail_command(fault: Fault, app_name: str) -> dict[str, Any]:
    """The ``configureFailPoint`` command for a fail-point kind: one getMore of the consumer fails."""
    data: dict[str, Any] = {"failCommands": ["getMore"], "appName": app_name}
    if fault.kind == "resumable_error":
        data.update(errorCode=fault.param("code"), errorLabels=[RESUMABLE_LABEL])
    elif fault.kind == "cursor_not_found":
        data.update(errorCode=fault.param("code"))  # resumable by code alone, whatever the labels
    elif fault.kind == "close_connection":
        data.update(closeConnection=True)
    elif fault.kind == "unlabelled_error":
        data.update(errorCode=fault.param("code"), errorLabels=[])  # [] is authoritative: no label added
    elif fault.kind == "non_resumable_error":
        data.update(errorCode=fault.param("code"))
    else:
        raise ValueError(f"{fault.describe()} is not a fail-point fault")
    return {"configureFailPoint": "failCommand", "mode": {"times": 1}, "data": data}


def toxic_for(fault: Fault) -> Toxic:
    name = f"campaign_{fault.index}"
    if fault.kind == "reset_peer":
        return Toxic("reset_peer", fault.param("stream"), {"timeout": 0}, name=name)
    if fault.kind == "timeout":
        return Toxic("timeout", "downstream", {"timeout": fault.param("timeout_ms")}, name=name)
    if fault.kind == "latency":
        return Toxic(
            "latency",
            "downstream",
            {"latency": fault.param("latency_ms"), "jitter": fault.param("jitter_ms")},
            name=name,
        )
    if fault.kind == "limit_data":
        return Toxic("limit_data", "downstream", {"bytes": fault.param("bytes")}, name=name)
    raise ValueError(f"{fault.describe()} is not a toxic")


class Nemesis:
    def __init__(
        self,
        failpoints: FailPointManager,
        network: NetworkFaults | None,
        target: Any,
        app_name: str,
        *,
        getmore_failures: Callable[[], int] = lambda: 0,
        fire_wait_s: float = 5.0,
        sleep: Callable[[float], None] = time.sleep,
        outage_grace_s: float = 8.0,
    ) -> None:
        self.failpoints = failpoints
        #: How many getMores of the consumer have failed so far: tells when a fail point has fired.
        self.getmore_failures = getmore_failures
        self.fire_wait_s = fire_wait_s
        #: True while an armed fail point waits for the consumer's next getMore (the consumer must not pause then).
        self.awaiting_getmore = False
        self.network = network
        self.target = target
        self.app_name = app_name
        self.sleep = sleep
        self.outage_grace_s = outage_grace_s
        self.applied: list[AppliedFault] = []
        self.current: Fault | None = None
        self._lock = threading.Lock()
        self._last_outage_end = float("-inf")
        self._in_place: Callable[[], None] = lambda: None

    # -- applying ----------------------------------------------------------------
    def apply(self, fault: Fault, in_place: Callable[[], None] = lambda: None) -> AppliedFault:
        """Put ``fault`` in place, call ``in_place``, wait its window, remove it.

        Never raises for a fault's own failure: that is a recorded problem.
        """
        applied = AppliedFault(fault, started=time.monotonic())
        self._in_place = in_place
        with self._lock:
            self.applied.append(applied)
            self.current = fault
        try:
            if fault.kind in FAILPOINT_KINDS:
                self._fail_point(fault, applied)
            elif fault.kind in NETWORK_KINDS:
                self._network(fault, applied)
            elif fault.kind == "restart":
                in_place()
                restart_target(self.target, fault.param("down_ms", 0) / 1000)
            else:
                applied.problems.append(f"unknown fault kind {fault.kind!r}")
        except Exception as exc:
            applied.problems.append(f"{type(exc).__name__}: {exc}")
        finally:
            applied.ended = time.monotonic()
            with self._lock:
                self.current = None
                if fault.kind in OUTAGE_KINDS:
                    self._last_outage_end = applied.ended
        return applied

    def _fail_point(self, fault: Fault, applied: AppliedFault) -> None:
        before = self.getmore_failures()
        self.failpoints.arm(fail_command(fault, self.app_name))
        try:
            self._in_place()
            self.sleep(fault.param("window_ms") / 1000)
            # A ``times: 1`` fail point proves nothing until it fires: wait for the consumer's getMore to fail.
            self.awaiting_getmore = True
            give_up = time.monotonic() + self.fire_wait_s
            while self.getmore_failures() <= before and time.monotonic() < give_up:
                self.sleep(0.01)
            applied.fired = self.getmore_failures() > before
        finally:
            self.awaiting_getmore = False
            applied.problems.extend(self.failpoints.disarm_all())

    def _network(self, fault: Fault, applied: AppliedFault) -> None:
        if self.network is None:
            raise RuntimeError("network fault scheduled without a Toxiproxy server")
        window = fault.param("window_ms") / 1000
        if fault.kind == "proxy_down":
            self.network.down()
            self._in_place()
            try:
                self.sleep(window)
            finally:
                self.network.up()
            return
        name = self.network.add_toxic(toxic_for(fault))
        self._in_place()
        try:
            self.sleep(window)
        finally:
            self.network.remove_toxic(name)

    # -- questions from the consumer --------------------------------------------------
    def claim_surfacing(self, code: int | None) -> Fault | None:
        """The earliest injected non-resumable fault with this code not yet matched to an error (marks it)."""
        with self._lock:
            for applied in self.applied:
                if (
                    applied.fault.kind in SURFACING_KINDS
                    and not applied.surfaced
                    and applied.fault.param("code") == code
                ):
                    applied.surfaced = True
                    return applied.fault
        return None

    def outage_recent(self) -> bool:
        """Whether the target is, or was within the grace period, unreachable from the consumer."""
        with self._lock:
            if self.current is not None and self.current.kind in OUTAGE_KINDS:
                return True
            return time.monotonic() - self._last_outage_end <= self.outage_grace_s

    # -- the end -------------------------------------------------------------------
    def clean_up(self) -> list[str]:
        """Remove every fault and check with the servers; returns problems (empty when clean)."""
        problems = list(self.failpoints.disarm_all())
        if self.network is not None:
            try:
                self.network.reset()
                self.network.verify_clean()
            except Exception as exc:
                problems.append(str(exc))
        return problems
