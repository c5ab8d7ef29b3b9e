"""The Go executor (``--driver go``, harness/drivers/go/): built once per source digest into the harness's cache,
rebuilt when a source or the driver release changes, passed by executor-check, and running spec tests through
the Go driver with the driver named in every record."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.drivers.executor.checks.runner import run_checks
from harness.drivers.executor.process import ExecutorFailure, ExecutorProcess
from harness.drivers.go import build
from tests.conftest import LEGACY_DIR, UNIFIED_DIR, require_shared_specs
from tests.paths import REPO

#: The oldest driver release the Go module proxy serves here besides the pinned one.
OTHER_RELEASE = "2.8.0"


def _pinned_release() -> str:
    found = re.search(r"go\.mongodb\.org/mongo-driver/v2 v(\S+)", (build.SOURCE_DIR / "go.mod").read_text())
    assert found, "go.mod pins no driver release"
    return found.group(1)


@pytest.fixture(autouse=True)
def _go_installed() -> None:
    if shutil.which("go") is None:
        pytest.skip("the Go toolchain (`go`) is not installed; the Go executor cannot be built")


@dataclass(frozen=True)
class GoBuild:
    cache: Path  # the HARNESS_CACHE_DIR the executor was built into
    binary: Path


@pytest.fixture(scope="session")
def go_build(tmp_path_factory: pytest.TempPathFactory) -> GoBuild:
    """The pinned executor, built once for the session into a cache folder of its own."""
    if shutil.which("go") is None:
        pytest.skip("the Go toolchain (`go`) is not installed; the Go executor cannot be built")
    cache = tmp_path_factory.mktemp("go-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HARNESS_CACHE_DIR", str(cache))
        binary = build.built_executor("")
    return GoBuild(cache, binary)


@pytest.fixture
def in_build_cache(go_build: GoBuild, monkeypatch: pytest.MonkeyPatch) -> GoBuild:
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(go_build.cache))
    return go_build


def _module_copy(where: Path) -> Path:
    where.mkdir()
    for path in build.module_files():
        shutil.copy2(path, where / path.name)
    return where


def _no_builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make any build fail the test; the list names the builds attempted (none, on a cache hit)."""
    attempted: list[str] = []

    def refuse(go: str, release: str, source_dir: Path, staging: Path) -> None:
        attempted.append(f"{release or 'pinned'} in {source_dir}")
        raise AssertionError("the cache should have answered")

    monkeypatch.setattr(build, "_build", refuse)
    return attempted


def _hello(command: list[str]) -> dict:
    process = ExecutorProcess(command)
    try:
        reply = process.request("hello", {"protocolVersion": 1}, 30.0)
        assert reply["ok"], reply
        return reply["result"]
    finally:
        assert process.finish() == 0


def test_the_pinned_build_is_named_by_its_digest_and_reports_the_pinned_release(in_build_cache: GoBuild) -> None:
    binary = in_build_cache.binary
    assert binary.is_file() and binary.parent.parent == in_build_cache.cache / "go-executors"
    assert binary.parent.name.startswith("pinned-")
    assert _hello([str(binary)])["driver"] == {"name": "go", "version": _pinned_release(), "language": "go"}


def test_a_second_request_is_answered_from_the_cache(
    in_build_cache: GoBuild, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    attempted = _no_builds(monkeypatch)
    assert build.executor_command("") == [str(in_build_cache.binary)]
    # The key is the content, not the folder: an identical copy of the module is the same build.
    assert build.built_executor("", _module_copy(tmp_path / "module")) == in_build_cache.binary
    assert attempted == []


def test_an_edited_source_is_rebuilt_into_another_folder(in_build_cache: GoBuild, tmp_path: Path) -> None:
    module = _module_copy(tmp_path / "module")
    with (module / "main.go").open("a") as source:
        source.write("\n// an edit that changes the digest\n")
    edited = build.built_executor("", module)
    assert edited != in_build_cache.binary and edited.is_file() and in_build_cache.binary.is_file()
    assert _hello([str(edited)])["driver"]["version"] == _pinned_release()


def test_another_release_is_built_in_a_copy_and_named_by_hello(in_build_cache: GoBuild) -> None:
    go_sum = (build.SOURCE_DIR / "go.sum").read_bytes()
    other = build.built_executor(OTHER_RELEASE)
    assert other != in_build_cache.binary and other.parent.name.startswith(f"v{OTHER_RELEASE}-")
    assert _hello([str(other)])["driver"] == {"name": "go", "version": OTHER_RELEASE, "language": "go"}
    assert (build.SOURCE_DIR / "go.sum").read_bytes() == go_sum, "the release copy must leave the module's go.sum alone"


def test_a_failed_build_raises_with_the_compilers_message(in_build_cache: GoBuild, tmp_path: Path) -> None:
    module = _module_copy(tmp_path / "module")
    (module / "broken.go").write_text("package main\n\nfunc broken() int { return undefinedName }\n")
    with pytest.raises(ExecutorFailure, match=r"(?s)go build.*undefinedName"):
        build.built_executor("", module)
    assert not any(p.name.startswith(".") for p in (in_build_cache.cache / "go-executors").iterdir()), "staging left"


def test_a_release_that_is_not_a_version_is_refused(in_build_cache: GoBuild) -> None:
    with pytest.raises(ExecutorFailure, match=re.escape("go@2.10.0")):
        build.executor_command("latest")


def test_executor_check_passes_the_go_executor(
    go_build: GoBuild, embedded_run, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_checks([str(go_build.binary)], embedded_run.target.uri) == 0
    out = capsys.readouterr().out
    assert "0 failed" in out and "SKIP" not in out, out


def test_iterate_once_on_a_new_stream_sends_one_getmore(go_build: GoBuild, embedded_run) -> None:
    """The unified format's iterateOnce owes a getMore when the buffer is empty; the driver's first TryNext only
    hands out the aggregate's empty first batch, so the executor asks again (harness/drivers/go/ops_stream.go)."""
    process = ExecutorProcess([str(go_build.binary)])
    scope = {"scope": "s1"}

    def call(method: str, params: dict) -> dict:
        reply = process.request(method, {**scope, **params}, 30.0)
        assert reply["ok"], reply
        return reply

    try:
        call("hello", {"protocolVersion": 1})
        call("openScope", {"uri": embedded_run.target.uri, "iterationTimeoutMS": 5000, "heartbeatFrequencyMS": None})
        call("createEntity", {"entity": {"client": {"id": "client0", "observeEvents": ["commandStartedEvent"]}}})
        call("createEntity", {"entity": {"database": {"id": "db0", "client": "client0", "databaseName": "go_tests"}}})
        call("createEntity", {"entity": {"collection": {"id": "c0", "database": "db0", "collectionName": "once"}}})
        opened = call(
            "run", {"operation": {"name": "createChangeStream", "object": "c0", "arguments": {"pipeline": []}}}
        )
        assert opened["resultKind"] == "entity" and opened["result"] is None
        once = call("run", {"operation": {"name": "iterateOnce", "object": opened["entity"], "arguments": {}}})
        assert once["result"] is None
        events = call("events", {"client": "client0", "eventType": "command"})["result"]
        assert [e["commandName"] for e in events] == ["aggregate", "getMore"], events
        call("closeScope", {})
    finally:
        assert process.finish() == 0


def test_spec_tests_run_through_the_go_driver(go_build: GoBuild, tmp_path: Path) -> None:
    require_shared_specs()
    results = tmp_path / "go.jsonl"
    specs = [
        LEGACY_DIR / "change-streams-errors.yml",
        UNIFIED_DIR / "change-streams-clusterTime.yml",
        UNIFIED_DIR / "change-streams-errors.yml",
        REPO / "specs" / "scenarios" / "supplementary" / "timeouts.yml",
    ]
    command = [sys.executable, "-m", "harness.app.cli", "run", "--driver", "go", "--results", str(results)]
    for spec in specs:
        command += ["--specs", str(spec)]
    env = {**os.environ, "HARNESS_CACHE_DIR": str(go_build.cache)}
    finished = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]
    records = [json.loads(line) for line in results.read_text().splitlines()]
    named = {(r["driver"]["name"], r["driver"]["language"], r["driver"]["version"]) for r in records}
    assert named == {("go", "go", _pinned_release())}
    assert {r["driver"]["executor"] for r in records} == {str(go_build.binary)}
    outcomes = {r["test_id"]: r["outcome"] for r in records}
    assert list(outcomes.values()).count("error") == 0, outcomes
    assert outcomes["unified/change-streams-clusterTime::clusterTime is present"] == "passed"
    errors_files = ("legacy/", "unified/change-streams-errors")
    passed = [t for t, o in outcomes.items() if o == "passed" and t.startswith(errors_files)]
    assert len(passed) >= 4, outcomes
    # The Go driver's real deviation (specs/expectations/drivers/go.yml): the stream's timeout bounds only Watch.
    timeouts = {t.split(": ", 1)[1]: o for t, o in outcomes.items() if t.startswith("unified/timeouts::")}
    assert timeouts == {
        "timeoutMS bounds the aggregate that creates the stream": "passed",
        "the stream's timeoutMS bounds an iteration whose getMore blocks": "failed",
        "a resume inside an iteration gets only the time the iteration has left": "failed",
    }, timeouts
