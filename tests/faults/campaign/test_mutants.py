"""Small seeded campaigns: pristine pymongo passes; a driver that does not resume and a server that
drops one event are both caught; the same seed injects the same faults.

The mutants are monkeypatched inside these tests only (pymongo's ChangeStream resume; SecantusDB's
change-event projection, which the embedded server runs in this process).
"""

from __future__ import annotations

import sys

from faults.campaign.campaign import CampaignOptions, run_campaign
from faults.campaign.schedule import FAILPOINT_KINDS, KINDS, make_schedule
from faults.network import ToxiproxyUnavailable, find_binary
from harness.engine.results_store import read_records
from harness.engine.run import RunOptions


def _network_available() -> bool:
    try:
        find_binary()
        return True
    except ToxiproxyUnavailable:
        return False


ALL_KINDS = KINDS if _network_available() else tuple(k for k in KINDS if k in FAILPOINT_KINDS or k == "restart")


def test_pristine_pymongo_small_campaign_passes_and_replays(tmp_path):
    results = tmp_path / "campaign.jsonl"
    result = run_campaign(CampaignOptions(events=500, faults=10, seed=11, kinds=ALL_KINDS), RunOptions(results=results))
    assert result.outcome == "passed", (result.message, [e.as_record() for e in result.disallowed], result.problems)
    assert result.received == 500 and result.anomalies == []
    record = read_records(results)[-1]
    assert record["format"] == "campaign" and record["test"] == "seed=11 events=500"
    injected = [(f["index"], f["kind"], f["at_event"], f["params"]) for f in record["details"]["faults"]]
    expected = [(f.index, f.kind, f.at_event, dict(f.params)) for f in make_schedule(11, 500, 10, ALL_KINDS)]
    assert injected == expected  # the record's faults are the seed's schedule, applied in full


def test_same_seed_injects_the_same_faults(tmp_path):
    kinds = ("resumable_error", "close_connection", "non_resumable_error")
    runs = [run_campaign(CampaignOptions(events=120, faults=4, seed=5, kinds=kinds)) for _ in range(2)]
    lists = [
        [
            {k: v for k, v in f.items() if k in ("index", "kind", "at_event", "params")}
            for f in run.record["details"]["faults"]
        ]
        for run in runs
    ]
    assert lists[0] == lists[1] and len(lists[0]) == 4
    assert all(run.outcome == "passed" for run in runs)


def test_driver_that_does_not_resume_is_caught(monkeypatch):
    from pymongo.synchronous.change_stream import ChangeStream

    original = ChangeStream._resume

    def give_up(self):
        handling = sys.exc_info()[1]
        if handling is None:  # the cursor died without an error: not a resume on error
            return original(self)
        raise handling  # the resumable error goes to the application instead of a resume

    monkeypatch.setattr(ChangeStream, "_resume", give_up)
    kinds = ("resumable_error", "cursor_not_found", "close_connection")
    result = run_campaign(CampaignOptions(events=500, faults=10, seed=3, kinds=kinds))
    assert result.outcome == "failed"
    assert len(result.disallowed) >= 5, [e.as_record() for e in result.errors]
    assert all("no resume attempt" in e.reason for e in result.disallowed)
    assert result.anomalies == []  # the application's own reopen keeps delivery intact: the errors are the finding


def test_server_that_drops_one_event_is_caught(monkeypatch):
    from secantus import changestreams

    original = changestreams.project
    dropped = 237

    def project_dropping(seq, oplog_entry, **kwargs):
        document = oplog_entry.get("o") or {}
        if oplog_entry.get("op") == "i" and document.get("seq") == dropped:
            return None, False
        return original(seq, oplog_entry, **kwargs)

    monkeypatch.setattr(changestreams, "project", project_dropping)
    kinds = ("resumable_error", "close_connection", "restart")
    result = run_campaign(CampaignOptions(events=500, faults=6, seed=8, kinds=kinds))
    assert result.outcome == "failed"
    assert [(a.kind, a.seq) for a in result.anomalies] == [("gap", dropped)]
    assert "1 gap (seq 237)" in result.message
