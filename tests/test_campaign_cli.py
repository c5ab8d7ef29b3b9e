"""``harness campaign`` end to end: exit status CI can trust, the record written, the summary printed."""

from __future__ import annotations

from harness.app.cli import main
from harness.engine.results_store import read_records


def test_campaign_command_passes_and_writes_a_record(tmp_path, capsys):
    results = tmp_path / "c.jsonl"
    status = main(["campaign", "--events", "80", "--faults", "3", "--seed", "9", "--kinds",
                   "resumable_error,non_resumable_error", "--results", str(results)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "campaign seed=9: PASSED" in out and "exactly once, in order" in out
    record = read_records(results)[-1]
    assert record["outcome"] == "passed" and record["details"]["seed"] == 9 and len(record["details"]["faults"]) == 3


def test_unknown_kind_exits_2(capsys):
    assert main(["campaign", "--events", "10", "--faults", "1", "--kinds", "bogus"]) == 2
    assert "bogus" in capsys.readouterr().err
