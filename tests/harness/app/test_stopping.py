"""SIGINT, SIGTERM and SIGHUP stop a run the same clean way (harness.app.stopping): the fail point a test armed on
a deployment the harness did not start is turned off, the test in flight is an ``error`` record naming the signal,
every finished record is kept, the summary says so, and the exit status is 128 + the signal's number."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from pymongo import MongoClient

from harness.targets.daemon import SecantusDaemon
from tests.paths import REPO

SPEC = """
description: stopping
schemaVersion: "1.7"
createEntities:
  - client: { id: client0 }
  - database: { id: database0, client: client0, databaseName: stopping-selftest }
  - collection: { id: collection0, database: database0, collectionName: coll }
initialData:
  - { collectionName: coll, databaseName: stopping-selftest, documents: [] }
tests:
  - description: a finished test
    operations:
      - { name: insertOne, object: collection0, arguments: { document: { _id: 1 } } }
  - description: a test in flight with a fail point armed
    operations:
      - name: failPoint
        object: testRunner
        arguments:
          client: client0
          failPoint:
            configureFailPoint: failCommand
            mode: alwaysOn
            data: { failCommands: [ insert ], errorCode: 91 }
      - { name: wait, object: testRunner, arguments: { ms: 20000 } }
"""


def _daemon():
    daemon = SecantusDaemon(test_commands=True)
    daemon.start()
    return daemon


@pytest.fixture(scope="module")
def deployments():
    """Two SecantusDB daemons the harness does not start (the user's deployments, as far as the run knows)."""
    started = [_daemon(), _daemon()]
    try:
        yield started
    finally:
        for daemon in started:
            daemon.stop()


@pytest.mark.parametrize(
    "signum, jobs",
    [(signal.SIGTERM, 1), (signal.SIGHUP, 1), (signal.SIGINT, 1), (signal.SIGTERM, 2)],
    ids=["SIGTERM", "SIGHUP", "SIGINT", "SIGTERM -j 2"],
)
def test_a_stop_signal_turns_the_fail_point_off_and_records_the_test_in_flight(deployments, tmp_path, signum, jobs):
    spec, results = tmp_path / "stopping.yml", tmp_path / "r.jsonl"
    spec.write_text(SPEC)
    first, second = (f"uri={d.uri}" for d in deployments)
    argv = ["run", "--specs", str(spec), "--target", first, "--results", str(results)]
    if jobs > 1:  # a deployment the harness did not start gets one worker unless more are listed
        argv += ["-j", str(jobs), "--worker-target", second]
    process = subprocess.Popen(
        [sys.executable, "-m", "harness.app.cli", *argv],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    clients = [MongoClient(d.uri, serverSelectionTimeoutMS=5000) for d in deployments[:jobs]]
    try:
        probes = [client["stopping-selftest"]["probe"] for client in clients]
        deadline = time.monotonic() + 60
        while not any(_armed(probe) for probe in probes):  # the test in flight has armed its fail point
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            time.sleep(0.2)
        process.send_signal(signum)
        out, err = process.communicate(timeout=90)
        assert process.returncode == 128 + signum, out + err
        assert "Traceback" not in err, err
        name = signal.Signals(signum).name
        assert f"interrupted by {name}: 0 of 2 test(s) not run" in out
        assert jobs == 1 or "in 2 workers" in out, out
        for probe in probes:
            probe.insert_one({"after": True})  # the fail point is off: inserts work again
    finally:
        for client in clients:
            client.close()
    records = {r["test"]: r for r in map(json.loads, results.read_text().splitlines())}
    assert records["a finished test"]["outcome"] == "passed"
    cut = records["a test in flight with a fail point armed"]
    assert cut["outcome"] == "error" and cut["message"].startswith(f"interrupted by {name}")
    assert [c["clause"] for c in cut["causes"]] == ["set-up"]


def _armed(collection) -> bool:
    try:
        collection.insert_one({})
    except Exception as exc:
        return "91" in str(exc) or getattr(exc, "code", None) == 91
    return False
