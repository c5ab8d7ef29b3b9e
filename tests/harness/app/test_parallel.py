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
from harness.engine.run import CodeDefinedTest, RunOptions
from tests.harness.app.test_cli import FAILING, PASSING
from tests.helpers import LEGACY_HEADER, harness_cli
from tests.paths import REPO

MORE = "".join(PASSING.replace("description: passes", f"description: passes {n}") for n in range(4))


def _harness(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return harness_cli(*args, cwd=cwd, HARNESS_CACHE_DIR=str(cwd / "cache"), **(env or {}))


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


def dying_run(results: str) -> int:
    """Run in a fresh interpreter (a forked worker must not inherit this pytest process's threads)."""
    checks = [CodeDefinedTest("prose", "selftest", f"passes {n}", open=lambda run: _Passes()) for n in range(4)]
    checks.insert(1, CodeDefinedTest("prose", "selftest", "kills its worker", open=lambda run: _Dies()))
    options = RunOptions(
        expected="none",
        results=Path(results),
        labels={"front": "none"},
        provenance={"spec_sources": [{"source": "selftest", "kind": "code"}]},
    )
    return run_parallel(checks, options, ["embedded", "embedded"], quiet=True)


def test_a_worker_that_dies_costs_only_its_test(tmp_path):
    script = (
        "import sys; from tests.harness.app.test_parallel import dying_run; "
        f"sys.exit(dying_run({str(tmp_path / 'r.jsonl')!r}))"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300)
    records = {r["test"]: r for r in _records(tmp_path / "r.jsonl")}
    assert done.returncode == 1 and len(records) == 5, done.stdout + done.stderr
    lost, normal = records["kills its worker"], records["passes 0"]
    assert lost["outcome"] == "error"
    assert "exited with status 3" in lost["message"]
    assert Counter(r["outcome"] for r in records.values()) == {"passed": 4, "error": 1}
    # the workers ran with the run's own options (nothing re-parsed): its labels and provenance are in every record
    assert normal["labels"] == {"front": "none"} and normal.get("spec_sources") == [
        {"source": "selftest", "kind": "code"}
    ]
    assert set(lost) == set(normal)  # the lost test's record has every field a normal one has
    provenance = ("run_id", "driver", "failpoints", "labels", "spec_sources", "expectations_file")
    assert {key: lost[key] for key in provenance} == {key: normal[key] for key in provenance}
    assert lost["expectation"] == {
        "expected": False,
        "kind": "unexpected-error",
        "reason": "",
        "entries": [],
        "unexplained": 1,
    }
    assert [cause["clause"] for cause in lost["causes"]] == ["set-up"] and lost["causes"][0]["rules"] == lost["rules"]


def spawned_run(spec: str, results: str) -> int:
    """A front end of its own, no command line anywhere: workers are spawned and collect the tests again."""
    import multiprocessing
    from functools import partial

    from harness.app import compose, parallel

    parallel._context = lambda: multiprocessing.get_context("spawn")  # as where fork is not available
    collect = partial(compose.collect, "spec", [Path(spec)])
    options = RunOptions(expected="none", results=Path(results), labels={"front": "spawned"})
    return run_parallel(collect(), options, ["embedded", "embedded"], quiet=True, collect=collect)


def test_spawned_workers_take_the_run_options_and_collect_with_the_front_ends_collect(tmp_path):
    spec = tmp_path / "sp.yml"
    spec.write_text(LEGACY_HEADER + PASSING + MORE)
    script = (
        f"import sys; from tests.harness.app.test_parallel import spawned_run; "
        f"sys.exit(spawned_run({str(spec)!r}, {str(tmp_path / 'r.jsonl')!r}))"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    records = _records(tmp_path / "r.jsonl")
    assert len(records) == 5 and {r["outcome"] for r in records} == {"passed"}
    assert {r["labels"]["front"] for r in records} == {"spawned"} and len({r["run_id"] for r in records}) == 1


def test_pytest_xdist_workers_share_one_results_file_and_run_id(tmp_path):
    pytest.importorskip("xdist")
    spec = tmp_path / "xd.yml"
    spec.write_text(LEGACY_HEADER + PASSING + MORE)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "--specs",
            str(spec),
            "--expected",
            "none",
            "--results",
            str(tmp_path / "r.jsonl"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    records = _records(tmp_path / "r.jsonl")
    assert len(records) == 5 and {r["outcome"] for r in records} == {"passed"}
    assert len({r["run_id"] for r in records}) == 1
    assert len({r["target"]["uri"] for r in records}) == 2  # each worker had a server of its own


def test_deployments_the_harness_did_not_start_each_serve_one_worker(tmp_path):
    """``-j 2`` with ``uri=`` and ``--worker-target``: two servers started outside the harness, one per worker."""
    from secantus import SecantusDBServer

    from harness.targets.embedded import stop_server

    servers = [SecantusDBServer(port=0, storage_path=":memory:") for _ in range(2)]
    for server in servers:
        server.start()
    uris = [server.uri for server in servers]
    try:
        spec = tmp_path / "uri.yml"
        spec.write_text(LEGACY_HEADER + PASSING + MORE)
        done = _harness(
            "run",
            "--specs",
            str(spec),
            "-j",
            "2",
            "--target",
            f"uri={servers[0].uri}",
            "--worker-target",
            f"uri={servers[1].uri}",
            "--results",
            str(tmp_path / "r.jsonl"),
            "--expected",
            "none",
            cwd=tmp_path,
        )
        alone = _harness(
            "run",
            "--specs",
            str(spec),
            "-j",
            "2",
            "--target",
            f"uri={servers[0].uri}",
            "--expected",
            "none",
            cwd=tmp_path,
        )
    finally:
        for server in servers:
            stop_server(server)
    assert done.returncode == 0, done.stdout + done.stderr
    records = _records(tmp_path / "r.jsonl")
    assert len(records) == 5 and {r["outcome"] for r in records} == {"passed"}
    assert {r["target"]["uri"] for r in records} == set(uris)
    assert alone.returncode == 0 and "not started by the harness" in alone.stderr
