"""The spec's verdict on an error that reached the application, from hand-made command events."""

from __future__ import annotations

from faults.campaign.classify import classify, silent_resumes
from faults.campaign.schedule import Fault
from harness.core.observations import ObservedEvent

CS_AGGREGATE = {"aggregate": "c", "pipeline": [{"$changeStream": {}}]}


def started(name, request_id, command=None):
    return ObservedEvent("commandStartedEvent", name, command=command or {name: 1}, request_id=request_id)


def failed(name, request_id, failure):
    return ObservedEvent("commandFailedEvent", name, failure=failure, request_id=request_id)


NETWORK = {"errmsg": "connection closed", "errtype": "AutoReconnect"}
LABELLED = {"ok": 0, "code": 6, "errmsg": "boom", "errorLabels": ["ResumableChangeStreamError"]}


def test_resumable_error_without_resume_attempt_is_not_allowed():
    window = [started("getMore", 1), failed("getMore", 1, LABELLED)]
    verdict = classify(
        code=6, labels=["ResumableChangeStreamError"], message="boom", is_client_error=False, window=window
    )
    assert not verdict.allowed and "no resume attempt" in verdict.reason


def test_resume_attempted_then_failed_is_allowed():
    window = [
        started("getMore", 1),
        failed("getMore", 1, NETWORK),
        started("aggregate", 2, CS_AGGREGATE),
        failed("aggregate", 2, NETWORK),
    ]
    assert classify(code=None, labels=[], message="x", is_client_error=True, window=window).allowed


def test_getmore_right_after_resume_failing_is_allowed():
    window = [
        started("getMore", 1),
        failed("getMore", 1, NETWORK),
        started("aggregate", 2, CS_AGGREGATE),
        started("getMore", 3),
        failed("getMore", 3, NETWORK),
    ]
    assert classify(code=None, labels=[], message="connection closed", is_client_error=True, window=window).allowed


def test_server_selection_failure_counts_only_during_an_outage():
    window = [started("getMore", 1), failed("getMore", 1, NETWORK)]
    args = {"code": None, "labels": [], "message": "No servers found", "is_client_error": True, "window": window}
    assert classify(**args, outage_recent=True).allowed
    assert not classify(**args, outage_recent=False).allowed


def test_non_resumable_needs_an_injected_fault():
    fault = Fault(0, "non_resumable_error", 5, (("code", 280),))
    args = {
        "code": 280,
        "labels": ["NonResumableChangeStreamError"],
        "message": "x",
        "is_client_error": False,
        "window": [],
    }
    assert classify(**args, injected=fault).allowed
    assert not classify(**args).allowed


def test_silent_resume_on_a_non_resumable_error_is_found():
    events = [
        started("aggregate", 1, CS_AGGREGATE),
        started("getMore", 2),
        failed("getMore", 2, {"ok": 0, "code": 280, "errmsg": "fatal"}),
        started("aggregate", 3, CS_AGGREGATE),
    ]
    assert silent_resumes(events, app_opens=[(0, 1)])
    assert not silent_resumes(events, app_opens=[(0, 1), (3, 4)])  # the application reopened it: fine
