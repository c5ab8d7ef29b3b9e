"""The Node.js executor (``--driver node``, harness/drivers/node/): executor-check passes it, spec tests run
through it with the driver named in every record, and it loads the driver release it is pointed at."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.app.executor_check import run_checks
from harness.drivers.executor.process import ExecutorProcess
from tests.conftest import LEGACY_DIR, UNIFIED_DIR, require_shared_specs
from tests.paths import REPO

NODE_DIR = REPO / "harness" / "drivers" / "node"
DRIVER_DIR = NODE_DIR / "node_modules" / "mongodb"
EXECUTOR = ["node", str(NODE_DIR / "executor.js")]


def require_installed(missing: str | None) -> None:
    """Skip, saying what is missing, on a developer's machine; fail on CI (``CI`` set), where .ci/run installs
    Node and the executor's packages, so a missing one is a broken set-up, never a reason to test nothing."""
    if missing is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{missing}, but CI is set and .ci/run installs it", pytrace=False)
    pytest.skip(missing)


def _node_missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed"
    if not DRIVER_DIR.is_dir():
        return "the Node executor's packages are not installed (npm ci --prefix harness/drivers/node)"
    return None


@pytest.fixture(autouse=True)
def _node_installed() -> None:
    require_installed(_node_missing())


def _pinned_version() -> str:
    return str(json.loads((DRIVER_DIR / "package.json").read_text())["version"])


def _hello(process: ExecutorProcess) -> dict:
    reply = process.request("hello", {"protocolVersion": 1}, 30.0)
    assert reply["ok"], reply
    return reply["result"]


def test_executor_check_passes_the_node_executor(embedded_run, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_checks(EXECUTOR, embedded_run.target.uri) == 0
    out = capsys.readouterr().out
    assert "0 failed" in out and "SKIP" not in out, out


def test_spec_tests_run_through_the_node_driver(tmp_path: Path) -> None:
    require_shared_specs()
    results = tmp_path / "node.jsonl"
    specs = [
        LEGACY_DIR / "change-streams-errors.yml",
        UNIFIED_DIR / "change-streams-clusterTime.yml",
        UNIFIED_DIR / "change-streams-errors.yml",
        REPO / "specs" / "scenarios" / "supplementary" / "timeouts.yml",
    ]
    command = [sys.executable, "-m", "harness.app.cli", "run", "--driver", "node", "--results", str(results)]
    for spec in specs:
        command += ["--specs", str(spec)]
    finished = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]
    records = [json.loads(line) for line in results.read_text().splitlines()]
    named = {(r["driver"]["name"], r["driver"]["language"], r["driver"]["version"]) for r in records}
    assert named == {("node", "javascript", _pinned_version())}
    outcomes = {r["test_id"]: r["outcome"] for r in records}
    assert list(outcomes.values()).count("error") == 0, outcomes
    assert outcomes["unified/change-streams-clusterTime::clusterTime is present"] == "passed"
    errors_files = ("legacy/", "unified/change-streams-errors")
    passed = [t for t, o in outcomes.items() if o == "passed" and t.startswith(errors_files)]
    assert len(passed) >= 4, outcomes
    # The Node driver's real deviation (specs/expectations/drivers/node.yml): timeoutMS is a no-op on watch().
    timeouts = [o for t, o in outcomes.items() if t.startswith("unified/timeouts::")]
    assert timeouts and set(timeouts) == {"failed"}, outcomes


def test_node_at_a_release_spec_installs_it_once_and_runs_it(tmp_path: Path) -> None:
    """``--driver node@6.x``: npm's 6.x release, installed into the harness's cache folder, named in the records."""
    npm_missing = "npm is not installed (node@SPEC installs the release with it)"
    require_installed(None if shutil.which("npm") else npm_missing)
    require_shared_specs()
    results = tmp_path / "node6.jsonl"
    command = [sys.executable, "-m", "harness.app.cli", "run", "--driver", "node@6.x", "--results", str(results)]
    command += ["--specs", str(UNIFIED_DIR / "change-streams-clusterTime.yml")]
    finished = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert records and {r["outcome"] for r in records} == {"passed"}, records
    drivers = {(r["driver"]["name"], r["driver"]["version"].split(".")[0]) for r in records}
    assert drivers == {("node", "6")}, drivers
    assert "--driver-module" in records[0]["driver"]["executor"] and "node-drivers" in records[0]["driver"]["executor"]
    module = Path(records[0]["driver"]["executor"].split("--driver-module ", 1)[1])
    assert module.is_dir() and json.loads((module / "package.json").read_text())["version"].startswith("6.")


def test_node_at_a_path_loads_that_driver_folder() -> None:
    """``--driver node=PATH``: the Node driver in a ``node_modules/mongodb`` folder of one's own."""
    from harness.app import compose

    adapter = compose.plugins().make_driver(f"node={DRIVER_DIR}")
    try:
        assert (adapter.name, adapter.version) == ("node", _pinned_version())
        assert adapter.executor is not None and adapter.executor.endswith(f"--driver-module {DRIVER_DIR}")
    finally:
        adapter.close()


def test_the_executor_loads_the_driver_release_it_is_pointed_at(tmp_path: Path) -> None:
    other = tmp_path / "mongodb"
    other.mkdir()
    (other / "package.json").write_text(json.dumps({"name": "mongodb", "version": "0.0.0-matrix", "main": "index.js"}))
    (other / "index.js").write_text(f"module.exports = require({json.dumps(str(DRIVER_DIR))});\n")
    by_argument = ExecutorProcess([*EXECUTOR, "--driver-module", str(other)])
    by_environment = ExecutorProcess(EXECUTOR, env={"HARNESS_NODE_DRIVER_MODULE": str(other)})
    pinned = ExecutorProcess(EXECUTOR)
    try:
        assert _hello(by_argument)["driver"]["version"] == "0.0.0-matrix"
        assert _hello(by_environment)["driver"]["version"] == "0.0.0-matrix"
        assert _hello(pinned)["driver"] == {"name": "node", "version": _pinned_version(), "language": "javascript"}
    finally:
        for process in (by_argument, by_environment, pinned):
            assert process.finish() == 0


def test_an_operation_the_executor_lacks_is_not_implemented() -> None:
    process = ExecutorProcess(EXECUTOR)
    try:
        assert "listSearchIndexes" not in _hello(process)["operations"]
        scope = {"scope": "s1"}
        open_params = {**scope, "uri": "mongodb://127.0.0.1:1/", "iterationTimeoutMS": 1000}
        opened = process.request("openScope", open_params, 10)
        assert opened["ok"], opened
        reply = process.request(
            "run", {**scope, "operation": {"name": "listSearchIndexes", "object": "collection0", "arguments": {}}}, 10
        )
        assert reply["error"]["kind"] == "notImplemented" and "listSearchIndexes" in reply["error"]["message"]
    finally:
        assert process.finish() == 0
