"""The Java executor (``--driver java``, harness/drivers/java/): built with Maven into the harness's cache once and
again only when its sources or its driver release change; executor-check passes it; spec tests run through it with
the Java driver named in every record, and its known deviations are expected outcomes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.drivers.executor.checks.runner import run_checks
from harness.drivers.executor.process import ExecutorFailure, ExecutorProcess
from harness.drivers.java import build
from tests.conftest import UNIFIED_DIR, require_shared_specs
from tests.paths import REPO

#: A release other than the pinned one (Maven Central serves 5.7.1 to 5.14.0 here).
OTHER_RELEASE = "5.13.0"


def _java_missing() -> str | None:
    for tool in ("java", "javac", "mvn"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not installed (the Java executor is built with Maven and run on a JVM)"
    return None


def require_java() -> None:
    """Skip, saying what is missing, on a developer's machine; fail on CI (``CI`` set), where .ci/run installs a
    JDK and Maven, so a missing one is a broken set-up, never a reason to test nothing."""
    missing = _java_missing()
    if missing is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{missing}, but CI is set and .ci/run installs it", pytrace=False)
    pytest.skip(missing)


@pytest.fixture(scope="session")
def java_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A harness cache folder of the session's own, with the pinned executor built into it once."""
    require_java()
    cache = tmp_path_factory.mktemp("java-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HARNESS_CACHE_DIR", str(cache))
        build.executor_command("")
    return cache


@pytest.fixture
def executor(java_cache: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(java_cache))
    return build.executor_command("")


@pytest.fixture
def java_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The executor's pom, lock and sources copied to a folder of the test's own, which build.py then builds."""
    require_java()
    copy = tmp_path / "java"
    copy.mkdir()
    shutil.copy2(build.POM, copy / "pom.xml")
    shutil.copy2(build.LOCK, copy / "dependencies.lock")
    shutil.copytree(build.SOURCES, copy / "src")
    monkeypatch.setattr(build, "JAVA_DIR", copy)
    monkeypatch.setattr(build, "POM", copy / "pom.xml")
    monkeypatch.setattr(build, "LOCK", copy / "dependencies.lock")
    monkeypatch.setattr(build, "SOURCES", copy / "src")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    yield copy


def _hello(process: ExecutorProcess) -> dict:
    reply = process.request("hello", {"protocolVersion": 1}, 30.0)
    assert reply["ok"], reply
    return reply["result"]


def test_the_build_is_kept_and_redone_only_when_a_source_changes(
    java_copy: Path, java_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy's sources are the committed ones, so the session's build is found by content, with no Maven run;
    an edited source is another build."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(java_cache))
    builds: list[str] = []
    real_build = build._build

    def counted(release: str, staging: Path) -> None:
        builds.append(release)
        real_build(release, staging)

    monkeypatch.setattr(build, "_build", counted)
    pinned = build.pinned_release()
    first = build.built(pinned)
    assert builds == [] and (first / "classes" / "csharness" / "executor" / "Main.class").is_file()
    main = java_copy / "src" / "main" / "java" / "csharness" / "executor" / "Main.java"
    main.write_text(main.read_text() + "// an edit\n")
    second = build.built(pinned)
    assert second != first and builds == [pinned]
    assert build.built(pinned) == second and builds == [pinned]
    assert first.is_dir() and second.is_dir()  # each source state keeps its own build
    assert build.build_folder(OTHER_RELEASE) != second  # another release is another build
    leftovers = [path.name for path in second.parent.iterdir() if path.name.startswith(".") and path.is_dir()]
    assert leftovers == []  # staging folders are renamed into place or removed


def test_a_maven_failure_names_the_release_and_quotes_maven(java_copy: Path) -> None:
    broken = java_copy / "src" / "main" / "java" / "csharness" / "executor" / "Broken.java"
    broken.write_text("package csharness.executor; final class Broken { int missingSemicolon }\n")
    with pytest.raises(ExecutorFailure, match=r"(?s)java@5\.14\.0: the Maven build failed:.*Broken\.java"):
        build.built("5.14.0")


def test_jars_are_checked_against_the_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    jar = tmp_path / "bson-5.14.0.jar"
    jar.write_bytes(b"not the real jar")
    lock = tmp_path / "dependencies.lock"
    monkeypatch.setattr(build, "LOCK", lock)
    lock.write_text(f"# comment\n{build.sha256_file(jar)}  bson-5.14.0.jar\n")
    assert build.check_lock(build.pinned_release(), [jar]) == {"bson-5.14.0.jar": build.sha256_file(jar)}
    lock.write_text("0" * 64 + "  bson-5.14.0.jar\n")
    with pytest.raises(ExecutorFailure, match=r"bson-5\.14\.0\.jar: SHA-256 .* the lock says 0000"):
        build.check_lock(OTHER_RELEASE, [jar])  # a listed jar is checked for any release
    lock.write_text("")
    with pytest.raises(ExecutorFailure, match=r"bson-5\.14\.0\.jar .* is not in the lock"):
        build.check_lock(build.pinned_release(), [jar])  # the pinned release's jars must all be listed
    assert build.check_lock(OTHER_RELEASE, [jar])  # another release's unlisted jars are recorded, not refused


def test_the_committed_lock_holds_the_pinned_release() -> None:
    names = set(build.read_lock())
    assert f"mongodb-driver-sync-{build.pinned_release()}.jar" in names
    assert f"bson-{build.pinned_release()}.jar" in names


def test_executor_check_passes_the_java_executor(
    executor: list[str], embedded_run, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_checks(executor, embedded_run.target.uri) == 0
    out = capsys.readouterr().out
    assert "0 failed" in out and "SKIP" not in out, out


def test_hello_names_the_java_driver_release_loaded(executor: list[str]) -> None:
    process = ExecutorProcess(executor)
    try:
        result = _hello(process)
    finally:
        assert process.finish() == 0
    assert result["driver"] == {"name": "java", "version": build.pinned_release(), "language": "java"}
    assert "createChangeStream" in result["operations"] and "failPoint" not in result["operations"]


def test_driver_java_at_a_release_builds_and_loads_that_release(java_cache: Path, monkeypatch) -> None:
    from harness.app import compose

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(java_cache))
    adapter = compose.plugins().make_driver(f"java@{OTHER_RELEASE}")
    try:
        assert (adapter.name, adapter.version) == ("java", OTHER_RELEASE)
        assert adapter.executor is not None and f"java-executor/{OTHER_RELEASE}-" in adapter.executor
    finally:
        adapter.close()


def test_uri_options_the_driver_does_not_parse_are_refused(executor: list[str]) -> None:
    process = ExecutorProcess(executor)
    try:
        _hello(process)
        opened = process.request(
            "openScope", {"scope": "s", "uri": "mongodb://127.0.0.1:1/", "iterationTimeoutMS": 1000}, 10
        )
        assert opened["ok"], opened
        unknown = {"client": {"id": "c0", "uriOptions": {"notAnOption": 1}}}
        known = {"client": {"id": "c1", "uriOptions": {"appName": "a b", "retryReads": False, "w": "majority"}}}
        refused = process.request("createEntity", {"scope": "s", "entity": unknown}, 10)
        created = process.request("createEntity", {"scope": "s", "entity": known}, 10)
        assert refused["error"]["kind"] == "notImplemented" and "notAnOption" in refused["error"]["message"]
        assert created["ok"], created
        assert process.request("closeScope", {"scope": "s"}, 10)["ok"]
    finally:
        assert process.finish() == 0


def _run(java_cache: Path, tmp_path: Path, *arguments: str) -> tuple[subprocess.CompletedProcess[str], list[dict]]:
    results = tmp_path / "java.jsonl"
    command = [sys.executable, "-m", "harness.app.cli", "run", "--driver", "java", "--results", str(results)]
    env = {**os.environ, "HARNESS_CACHE_DIR": str(java_cache)}
    finished = subprocess.run(
        [*command, *arguments], cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    records = [json.loads(line) for line in results.read_text().splitlines()] if results.is_file() else []
    return finished, records


def test_spec_tests_run_through_the_java_driver(java_cache: Path, tmp_path: Path) -> None:
    require_shared_specs()
    specs = ["--specs", str(UNIFIED_DIR / "change-streams-clusterTime.yml")]
    specs += ["--specs", str(UNIFIED_DIR / "change-streams-nsType.yml")]
    finished, records = _run(java_cache, tmp_path, *specs)
    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]
    assert {(r["driver"]["name"], r["driver"]["language"], r["driver"]["version"]) for r in records} == {
        ("java", "java", build.pinned_release())
    }
    outcomes = {r["test_id"]: r["outcome"] for r in records}
    assert len(outcomes) >= 3 and set(outcomes.values()) == {"passed"}, outcomes
    assert "java-executor" in records[0]["driver"]["executor"]


def test_a_known_deviation_of_the_java_driver_is_an_expected_failure(java_cache: Path, tmp_path: Path) -> None:
    api = REPO / "specs" / "scenarios" / "supplementary" / "change-streams-api.yml"
    finished, records = _run(java_cache, tmp_path, "--specs", str(api), "-k", "CS-OPT-FULLDOC-UNKNOWN")
    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]
    assert len(records) == 1 and records[0]["outcome"] == "failed", records
    assert records[0]["expectation"]["kind"] == "known-failure", records[0]["expectation"]
    assert "IllegalArgumentException" in records[0]["message"]
