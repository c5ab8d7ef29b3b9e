"""SecantusDB in each shape a user deploys, chosen with ``--target`` and recorded in the provenance.

Replica-set primary or standalone, in memory or on disk, test commands on or off; embedded or as a daemon.
Every server here listens on the loopback interface.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pymongo.errors import OperationFailure

from faults.campaign.campaign import _restartable_target
from faults.campaign.restart import RestartUnsupported, restart_target, restartable
from harness.core.ports import TargetUnavailable
from harness.engine.plugins import load_plugins
from harness.engine.run import expectations_for
from harness.shared.target_base import TargetBase
from harness.targets.plugin import STANDALONE_NAME, daemon_switches
from tests.helpers import LEGACY_HEADER, PASSING


@pytest.fixture(scope="module")
def registry():
    return load_plugins()


def _started(registry, spec):
    target = registry.make_target(spec)
    target.start()
    return target


def test_the_standalone_shape_says_single_and_refuses_change_streams_as_mongod_does(registry):
    target = _started(registry, "embedded-standalone")
    try:
        assert target.info.topology == "single" and target.info.name == STANDALONE_NAME
        assert target.info.details["standalone"] is True and target.info.details["storage"] == "in-memory"
        with pytest.raises(OperationFailure) as refused:
            target.admin["d"]["c"].watch()
        assert refused.value.code == 40573  # IllegalOperation, mongod's answer on a standalone
    finally:
        target.stop()


def test_the_standalone_shape_has_its_own_expected_outcomes_file():
    source = expectations_for("auto", STANDALONE_NAME).source
    assert source.endswith(f"{STANDALONE_NAME}.yml")


def test_the_on_disk_shape_keeps_data_across_a_restart_on_the_same_port_and_cleans_up(registry):
    target = _started(registry, "embedded-on-disk")
    try:
        details = target.info.details
        assert details["storage"] == "on-disk" and target.info.topology == "replicaset"
        data = Path(details["storage_path"])
        assert data.exists() and target.info.name == "secantusdb"  # the replica-set shape's expected outcomes
        target.admin["d"]["c"].insert_one({"_id": 1})
        port = target.server.port
        assert restartable(target) is None
        restart_target(target)
        assert target.server.port == port
        assert target.admin["d"]["c"].find_one() == {"_id": 1}
    finally:
        target.stop()
    assert not data.exists()  # the scratch directory went with the target


def test_an_in_memory_server_is_not_restartable_and_says_why(registry):
    target = _started(registry, "embedded")
    try:
        assert "in-memory" in restartable(target)
        with pytest.raises(RestartUnsupported, match="in-memory"):
            restart_target(target)
    finally:
        target.stop()
    # A deployment the harness did not start declares that it cannot be restarted (the target base's default).
    assert "cannot be restarted" in restartable(TargetBase("uri"))


def test_the_on_disk_shape_at_a_path_keeps_the_path(registry, tmp_path):
    target = _started(registry, f"embedded-on-disk={tmp_path / 'data'}")
    try:
        assert target.info.details["storage_path"] == str(tmp_path / "data")
    finally:
        target.stop()
    assert (tmp_path / "data").exists()  # the user's path is the user's


@pytest.mark.parametrize(
    ("argument", "switches"),
    [
        (None, set()),
        ("test-commands", {"test-commands"}),
        ("standalone,on-disk", {"standalone", "on-disk"}),
        ("on-disk, test-commands", {"on-disk", "test-commands"}),
    ],
)
def test_daemon_switches(argument, switches):
    assert daemon_switches(argument) == switches


@pytest.mark.parametrize("argument", ["replica-set", "on-disk,on-disk", "test_commands"])
def test_an_unknown_or_repeated_daemon_switch_is_refused_before_anything_starts(registry, argument):
    with pytest.raises(TargetUnavailable, match="secantusdb-daemon takes any of test-commands, standalone, on-disk"):
        registry.make_target(f"secantusdb-daemon={argument}")


def test_the_daemon_as_a_standalone_on_disk_with_test_commands(registry):
    target = _started(registry, "secantusdb-daemon=standalone,on-disk,test-commands")
    try:
        details = target.info.details
        assert target.info.topology == "single" and target.info.name == STANDALONE_NAME
        assert details["standalone"] is True and details["storage"] == "on-disk" and details["test_commands"] is True
        target.admin.admin.command({"configureFailPoint": "failCommand", "mode": "off"})  # test commands on
    finally:
        target.stop()


def test_the_daemon_on_disk_restarts_in_place_with_a_new_process(registry):
    target = _started(registry, "secantusdb-daemon=on-disk")
    try:
        assert target.info.details["test_commands"] is False and target.info.topology == "replicaset"
        target.admin["d"]["c"].insert_one({"_id": 1})
        before, uri = target.process.pid, target.uri
        restart_target(target)
        assert target.process.pid != before and target.uri == uri
        assert target.admin["d"]["c"].find_one() == {"_id": 1}
        data = Path(target.info.details["storage_path"])
    finally:
        target.stop()
    assert not data.exists()


@pytest.mark.parametrize(
    ("given", "campaign_target"),
    [
        ("embedded", "embedded={scratch}/data"),
        ("embedded-no-test-commands", "embedded-no-test-commands={scratch}/data"),
        ("embedded-on-disk", "embedded-on-disk"),
        ("secantusdb-daemon", "secantusdb-daemon=on-disk"),
        ("secantusdb-daemon=test-commands", "secantusdb-daemon=test-commands,on-disk"),
        ("secantusdb-daemon=on-disk", "secantusdb-daemon=on-disk"),
        ("uri=mongodb://127.0.0.1:1/", "uri=mongodb://127.0.0.1:1/"),
    ],
)
def test_a_campaign_moves_secantusdb_targets_to_disk_so_they_can_restart(tmp_path, given, campaign_target):
    assert _restartable_target(given, tmp_path) == campaign_target.format(scratch=tmp_path)


def _harness(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "harness.app.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=180
    )


def test_a_campaign_on_a_standalone_is_skipped_with_why(tmp_path):
    done = _harness(
        "campaign", "--target", "embedded-standalone", "--kinds", "restart", "--events", "20", "--faults", "1",
        "--results", str(tmp_path / "out.jsonl"), cwd=tmp_path,
    )  # fmt: skip
    [record] = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert done.returncode == 1 and record["outcome"] == "skipped"
    assert "needs a replica set" in record["message"] and record["target"]["details"]["standalone"] is True


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("embedded-standalone", {"topology": "single", "standalone": True, "storage": "in-memory"}),
        ("embedded-on-disk", {"topology": "replicaset", "standalone": False, "storage": "on-disk"}),
    ],
)
def test_the_cli_and_pytest_front_ends_record_the_shape(tmp_path, spec, expected):
    (tmp_path / "shape.yml").write_text(LEGACY_HEADER + PASSING)
    cli_results, pytest_results = tmp_path / "cli.jsonl", tmp_path / "pytest.jsonl"
    done = _harness("run", "--specs", "shape.yml", "--target", spec, "--results", str(cli_results), cwd=tmp_path)
    pytest_args = ["-p", "no:cacheprovider", "-q", "shape.yml", "--specs", "shape.yml", "--target", spec]
    by_pytest = subprocess.run(
        [sys.executable, "-m", "pytest", *pytest_args, "--results", str(pytest_results)],
        cwd=tmp_path, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    for finished, results in ((done, cli_results), (by_pytest, pytest_results)):
        records = [json.loads(line) for line in results.read_text().splitlines()]
        assert records, finished.stdout + finished.stderr
        target = records[0]["target"]
        shape = {"topology": target["topology"], **{k: target["details"][k] for k in ("standalone", "storage")}}
        assert shape == expected
