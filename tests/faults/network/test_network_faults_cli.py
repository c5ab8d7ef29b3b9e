"""``harness run --network-faults``: scenario files inject faults through a real Toxiproxy."""

from __future__ import annotations

import json

import pytest

from faults.network.ops import NO_NETWORK_FAULTS
from faults.network.server import find_binary
from tests.harness.app.test_cli import harness
from tests.paths import REPO

SCENARIOS = REPO / "specs" / "scenarios"
#: The scenario files that inject network faults (the folder also holds reply shaping and the supplementary suite).
NETWORK_SCENARIOS = sorted(SCENARIOS.glob("network-*.yml"))


def _network_specs() -> list[str]:
    assert len(NETWORK_SCENARIOS) >= 3, NETWORK_SCENARIOS
    return [arg for path in NETWORK_SCENARIOS for arg in ("--specs", str(path))]


def test_scenarios_are_skipped_with_the_reason_without_network_faults(tmp_path):
    done = harness("run", "--specs", str(SCENARIOS), cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert f"uses networkFault: {NO_NETWORK_FAULTS}" in done.stdout


def test_scenarios_run_through_toxiproxy_with_network_faults(tmp_path):
    try:
        find_binary()
    except Exception as exc:
        pytest.skip(f"no toxiproxy-server: {exc}")
    results = tmp_path / "out.jsonl"
    done = harness("run", *_network_specs(), "--network-faults", "--results", str(results), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(records) >= 6 and {r["outcome"] for r in records} == {"passed"}


def test_network_faults_and_emulated_fail_points_share_one_path(tmp_path):
    """driver -> wire proxy -> Toxiproxy -> target: toxics must reach the driver's traffic."""
    try:
        find_binary()
    except Exception as exc:
        pytest.skip(f"no toxiproxy-server: {exc}")
    done = harness("run", *_network_specs(), "--network-faults", "--target", "embedded-no-test-commands", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 failed, 0 errors" in done.stdout
