"""Synthetic fault-campaign records, built by the campaign code's own pieces.

The schedule comes from :func:`faults.campaign.schedule.make_schedule` and the
delivery verdict from :func:`faults.campaign.checker.check_delivery`, so the
``details`` of a synthetic campaign record have exactly the shapes a real
``harness campaign`` writes (``faults/campaign/campaign.py`` ``_record``).
They are rare (one per cell per night), so they are built field by field
with ``make_record`` rather than from the writer's fast templates.
"""

from __future__ import annotations

from random import Random
from typing import Any

from faults.campaign.checker import check_delivery, summarise
from faults.campaign.schedule import FAILPOINT_KINDS, KINDS, NETWORK_KINDS, SURFACING_KINDS, make_schedule
from harness.core.records import RunProvenance, make_record

EVENTS = 2000
FAULTS = 10


def campaign_record(
    provenance: RunProvenance, rng: Random, *, started_at: str, network: bool, anomaly_rate: float
) -> dict[str, Any]:
    """One ``format: campaign`` record: a seeded schedule, resumes, and now and then a delivery anomaly."""
    seed = rng.randrange(1, 2**31)
    kinds = KINDS if network else tuple(k for k in KINDS if k not in NETWORK_KINDS)
    schedule = make_schedule(seed, EVENTS, FAULTS, kinds)
    clock = 0.4
    faults, errors = [], []
    for fault in schedule:
        window = fault.param("window_ms", fault.param("down_ms", 200)) / 1000
        faults.append(
            {
                **fault.as_record(),
                "started_s": round(clock, 3),
                "window_s": round(window + 0.01, 3),
                "fired": 1 if fault.kind in FAILPOINT_KINDS else 0,
                "problems": [],
            }
        )
        if fault.kind in SURFACING_KINDS:
            code = fault.param("code")
            errors.append(
                {
                    "received": fault.at_event,
                    "stream": "next",
                    "operation": "next",
                    "error": f"OperationFailure, code {code}: Failing command via 'failCommand' failpoint",
                    "code": code,
                    "labels": [],
                    "allowed": True,
                    "reason": "not resumable: the spec says the error reaches the application",
                    "fault": fault.describe(),
                    "at_s": round(clock + 0.05, 3),
                }
            )
        clock += window + rng.uniform(0.2, 1.2)
    received = list(range(EVENTS))
    if rng.random() < anomaly_rate:  # a resume from a stale token delivers one event twice
        seq = rng.randrange(EVENTS // 2, EVENTS)
        received.insert(seq + 1, seq)
    anomalies = check_delivery(received, EVENTS)
    duration = clock + EVENTS * 0.004
    name = f"seed={seed} events={EVENTS}"
    details = {
        "seed": seed,
        "events": EVENTS,
        "faults_requested": FAULTS,
        "kinds": list(kinds),
        "skipped_kinds": [],
        "faults": faults,
        "received": len(received),
        "resumes": sum(1 for f in schedule if f.kind not in SURFACING_KINDS and f.kind != "latency"),
        "aggregates": 1 + len(errors) + sum(1 for f in schedule if f.kind not in SURFACING_KINDS),
        "errors": errors,
        "disallowed_errors": 0,
        "anomalies": [a.as_record() for a in anomalies],
        "problems": [],
        "duration_s": round(duration, 3),
    }
    return make_record(
        provenance,
        format="campaign",
        file="campaign",
        test=name,
        test_id=f"campaign/campaign::{name}",
        outcome="failed" if anomalies else "passed",
        message=summarise(anomalies),
        started_at=started_at,
        duration_s=duration,
        details=details,
    )
