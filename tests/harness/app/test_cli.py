"""The ``harness`` command: exit status CI can trust, records with provenance, clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import FAILING, LEGACY_HEADER, PASSING, known_yaml

REQUIRED_FIELDS = {
    "run_id",
    "format",
    "file",
    "test",
    "outcome",
    "message",
    "duration_s",
    "started_at",
    "target",
    "driver",
    "harness",
    "python",
    "rules",
}


def harness(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "harness.app.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def _spec(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "cli.yml"
    path.write_text(LEGACY_HEADER + body)
    return path


def test_all_expected_exits_zero_and_records_have_provenance(tmp_path):
    spec, results = _spec(tmp_path, PASSING), tmp_path / "out.jsonl"
    done = harness("run", "--specs", str(spec), "--results", str(results), "--expected", "none", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 tests: 1 passed" in done.stdout
    [record] = [json.loads(line) for line in results.read_text().splitlines()]
    assert REQUIRED_FIELDS <= set(record)
    assert record["format"] == "legacy" and record["outcome"] == "passed" and record["test"] == "passes"
    assert record["target"]["kind"] == "embedded" and record["target"]["topology"] == "replicaset"
    assert record["target"]["version"] and record["driver"]["name"] == "pymongo"


def test_an_unexpected_failure_exits_one_and_a_listed_one_exits_zero(tmp_path):
    spec, results = _spec(tmp_path, PASSING + FAILING), tmp_path / "out.jsonl"
    done = harness("run", "--specs", str(spec), "--results", str(results), "--expected", "none", cwd=tmp_path)
    assert done.returncode == 1
    assert "UNEXPECTED unexpected-failure: legacy/cli::fails" in done.stdout
    assert "success[0].operationType" in done.stdout

    expected = tmp_path / "expected.yml"
    expected.write_text(known_yaml("legacy/cli::fails", "made up for this test"))
    done = harness("run", "--specs", str(spec), "--expected", str(expected), cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert "1 known deviation(s), 0 unexpected" in done.stdout


def test_an_unexpected_pass_is_reported_and_fails_the_run(tmp_path):
    spec = _spec(tmp_path, PASSING)
    expected = tmp_path / "expected.yml"
    expected.write_text(known_yaml("legacy/cli::passes", "stale entry"))
    done = harness("run", "--specs", str(spec), "--expected", str(expected), cwd=tmp_path)
    assert done.returncode == 1 and "UNEXPECTED unexpected-pass: legacy/cli::passes" in done.stdout


def test_an_unreachable_target_is_a_clear_error(tmp_path):
    spec = _spec(tmp_path, PASSING)
    done = harness(
        "run",
        "--specs",
        str(spec),
        "--target",
        "uri=mongodb://127.0.0.1:9/?serverSelectionTimeoutMS=300&connectTimeoutMS=300",
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert "did not answer" in done.stderr and "127.0.0.1:9" in done.stderr


def test_the_uri_target_runs_against_a_running_server(tmp_path):
    """``uri=`` against SecantusDB started outside the harness: detection and verdicts."""
    from secantus import SecantusDBServer

    server = SecantusDBServer(port=0, storage_path=":memory:")
    server.start()
    try:
        spec, results = _spec(tmp_path, PASSING), tmp_path / "out.jsonl"
        done = harness(
            "run", "--specs", str(spec), "--target", f"uri={server.uri}", "--results", str(results), cwd=tmp_path
        )
    finally:
        server.stop()
    assert done.returncode == 0, done.stdout + done.stderr
    [record] = [json.loads(line) for line in results.read_text().splitlines()]
    assert record["target"]["kind"] == "uri" and record["target"]["topology"] == "replicaset"


def test_a_broken_file_does_not_stop_the_run(tmp_path):
    good = _spec(tmp_path, PASSING)
    (tmp_path / "broken.yml").write_text("tests: [unclosed\n")
    done = harness("run", "--specs", str(tmp_path), "--expected", "none", cwd=tmp_path)
    assert done.returncode == 1
    assert "ERROR" in done.stdout and "broken.yml" in done.stdout and "invalid YAML" in done.stdout
    assert "PASS  legacy/cli::passes" in done.stdout and good.exists()
