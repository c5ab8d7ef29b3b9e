"""``harness run -j N`` and ``pytest -n N``: same verdicts, one record per test, one run id, nothing lost.

Assertions are on records and their order, never on wall-clock time: speed
is measured in benchmarks/bench_runner.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from harness.app.durations import Durations
from harness.app.parallel import run_parallel, schedule, worker_targets
from harness.core.verdicts import Verdict
from harness.engine.lifecycle import Case
from harness.engine.plugins import load_plugins
from harness.engine.run import Check, RunOptions
from tests.helpers import LEGACY_HEADER
from tests.test_cli import FAILING, PASSING

MORE = "".join(PASSING.replace("description: passes", f"description: passes {n}") for n in range(4))


def _harness(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness.app.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "HARNESS_CACHE_DIR": str(cwd / "cache"), **(env or {})})


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _summary(stdout: str) -> list[str]:
    """The per-file table and the totals line (the per-test lines come in completion order)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("file "))
    return [line for line in lines[start:] if not line.startswith("slowest:")]


def test_parallel_and_sequential_runs_agree_record_for_record(tmp_path):
    spec = tmp_path / "par.yml"
    spec.write_text(LEGACY_HEADER + PASSING + FAILING + MORE)
    selection = ["--specs", str(spec), "--suite", "all", "--expected", "none"]
    one = _harness("run", *selection, "--results", str(tmp_path / "one.jsonl"), cwd=tmp_path)
    three = _harness("run", *selection, "-j", "3", "--results", str(tmp_path / "three.jsonl"), cwd=tmp_path)
    assert one.returncode == three.returncode == 1, three.stdout + three.stderr
    assert "in 3 workers" in three.stdout
    sequential, parallel = _records(tmp_path / "one.jsonl"), _records(tmp_path / "three.jsonl")
    assert len(parallel) == len(sequential) == len({r["test_id"] for r in parallel})  # one record per test
    assert {r["test_id"]: r["outcome"] for r in parallel} == {r["test_id"]: r["outcome"] for r in sequential}
    assert len({r["run_id"] for r in parallel}) == 1
    assert _summary(three.stdout) == _summary(one.stdout)


def test_a_shared_target_gets_one_worker_unless_more_deployments_are_listed():
    said: list[str] = []
    plugins = load_plugins()
    assert worker_targets(plugins, "embedded", 4, [], said.append) == ["embedded"] * 4
    assert worker_targets(plugins, "uri=mongodb://127.0.0.1:1", 4, [], said.append) == ["uri=mongodb://127.0.0.1:1"]
    assert "not started by the harness" in said[0]
    listed = worker_targets(plugins, "uri=mongodb://127.0.0.1:1", 2, ["uri=mongodb://127.0.0.1:2"], said.append)
    assert listed == ["uri=mongodb://127.0.0.1:1", "uri=mongodb://127.0.0.1:2"]


def test_the_slowest_tests_known_from_earlier_runs_go_first(tmp_path):
    class Named:
        def __init__(self, test_id):
            self.test_id = test_id

    tests = [Named(name) for name in ("quick", "slow", "unknown", "slowest")]
    durations = Durations({"quick": 0.01, "slow": 2.0, "slowest": 9.0}, tmp_path / "d.json")
    assert [tests[i].test_id for i in schedule(tests, durations)] == ["slowest", "slow", "unknown", "quick"]


class _Dies(Case):
    def body(self):
        os._exit(3)  # the worker process dies under this test


class _Passes(Case):
    def body(self):
        return Verdict("passed")


def test_a_worker_that_dies_costs_only_its_test(tmp_path, capsys):
    checks = [Check("prose", "selftest", f"passes {n}", open=lambda run: _Passes()) for n in range(4)]
    checks.insert(1, Check("prose", "selftest", "kills its worker", open=lambda run: _Dies()))
    options = RunOptions(expected="none", results=tmp_path / "r.jsonl")
    status = run_parallel(["run", "--expected", "none"], checks, options, ["embedded", "embedded"], quiet=True)
    records = {r["test"]: r for r in _records(tmp_path / "r.jsonl")}
    assert status == 1 and len(records) == 5
    assert records["kills its worker"]["outcome"] == "error"
    assert "exited with status 3" in records["kills its worker"]["message"]
    assert Counter(r["outcome"] for r in records.values()) == {"passed": 4, "error": 1}


def test_pytest_xdist_workers_share_one_results_file_and_run_id(tmp_path):
    pytest.importorskip("xdist")
    spec = tmp_path / "xd.yml"
    spec.write_text(LEGACY_HEADER + PASSING + MORE)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--specs",
                           str(spec), "--expected", "none", "--results", str(tmp_path / "r.jsonl")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    records = _records(tmp_path / "r.jsonl")
    assert len(records) == 5 and {r["outcome"] for r in records} == {"passed"}
    assert len({r["run_id"] for r in records}) == 1
    assert len({r["target"]["uri"] for r in records}) == 2  # each worker had a server of its own
