"""A run killed with SIGKILL keeps the record of every test it finished."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from tests.conftest import LEGACY_DIR, require_shared_specs


def test_records_survive_sigkill_mid_run(tmp_path):
    require_shared_specs()
    results = tmp_path / "out.jsonl"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness.app.cli",
            "run",
            "--specs",
            str(LEGACY_DIR / "change-streams.yml"),
            "--results",
            str(results),
            "--expected",
            "none",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if results.exists() and len(results.read_text().splitlines()) >= 4:
            break
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    output, _ = process.communicate(timeout=30)
    assert process.returncode == -signal.SIGKILL

    lines = results.read_text().splitlines()
    records = [json.loads(line) for line in lines]  # every line is a complete record
    reported = [line for line in output.splitlines() if line.startswith("[")]
    assert len(records) >= 4
    assert len(records) >= len(reported)  # a record is durable before its progress line is printed
    assert len({r["test"] for r in records}) == len(records)
    assert all(r["outcome"] in ("passed", "failed", "skipped", "error") for r in records)
    assert len(records) < 10, "the run should have been killed before it finished"


def test_a_torn_last_line_does_not_swallow_the_next_runs_first_record(tmp_path):
    from harness.engine.results_store import ResultsStore, read_records

    path = tmp_path / "out.jsonl"
    path.write_text('{"test": "finished"}\n{"test": "torn mid-wri')
    store = ResultsStore(path)
    store.append({"test": "next run"})
    store.close()
    assert [r["test"] for r in read_records(path)] == ["finished", "next run"]
