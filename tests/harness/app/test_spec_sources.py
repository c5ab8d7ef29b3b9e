"""Spec sources a user can reach, with their origin in every record; and no silent loss of schema checking.

Nothing here leaves the machine: the git source is a repository made in the
test, and the PyPI source is a source distribution built in the test and
handed to the fetcher in place of pip's download.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from harness.app import spec_sources
from tests.conftest import UNIFIED_DIR, require_shared_specs
from tests.helpers import harness_cli
from tests.paths import SHARED_SPECS

SCHEMA = SHARED_SPECS / "upstream" / "unified-format-selftests" / "schema-1.28.json"


def _harness(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return harness_cli(*args, cwd=cwd, **env)


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _git(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def _specifications_repo(tmp_path: Path) -> tuple[Path, str]:
    """A repository laid out like mongodb/specifications: one unified change-stream file and the schema."""
    require_shared_specs()
    repo = tmp_path / "specifications"
    unified = repo / "source" / "change-streams" / "tests" / "unified"
    unified.mkdir(parents=True)
    shutil.copy(UNIFIED_DIR / "change-streams-clusterTime.yml", unified)
    (repo / "source" / "unified-test-format").mkdir()
    shutil.copy(SCHEMA, repo / "source" / "unified-test-format")
    _git("init", "-q", cwd=repo)
    _git("add", ".", cwd=repo)
    _git("commit", "-q", "-m", "specs", cwd=repo)
    return repo, _git("rev-parse", "HEAD", cwd=repo)


def test_a_git_source_at_a_commit_runs_and_every_record_names_it(tmp_path):
    repo, commit = _specifications_repo(tmp_path)
    source = f"git:{repo}@{commit[:12]}#source/change-streams/tests/unified"
    (tmp_path / "empty").mkdir()  # an explicit, empty schema folder: the checkout's own schema must be found
    env = {"HARNESS_CACHE_DIR": str(tmp_path / "cache"), "HARNESS_UNIFIED_SCHEMA_DIR": str(tmp_path / "empty")}
    fetched = _harness("specs", "fetch", source, cwd=tmp_path, **env)
    assert fetched.returncode == 0, fetched.stderr
    assert "1 spec files; git " + commit in fetched.stdout
    done = _harness(
        "run", "--specs", source, "--results", str(tmp_path / "r.jsonl"), "--require-schema", cwd=tmp_path, **env
    )
    assert done.returncode == 0, done.stdout + done.stderr
    records = _records(tmp_path / "r.jsonl")
    assert records and all(r["spec_sources"][0]["commit"] == commit for r in records)
    assert all(r["schema"] == ["schema-1.28.json"] for r in records)  # found in the checkout itself


def test_an_unknown_commit_is_a_clear_error(tmp_path):
    repo, _ = _specifications_repo(tmp_path)
    done = _harness("run", "--specs", f"git:{repo}@deadbeef0", cwd=tmp_path, HARNESS_CACHE_DIR=str(tmp_path / "c"))
    assert done.returncode == 2 and "deadbeef0" in done.stderr and "git checkout failed" in done.stderr


def _sdist(tmp_path: Path) -> Path:
    require_shared_specs()
    archive = tmp_path / "pymongo-9.9.9.tar.gz"
    with tarfile.open(archive, "w:gz") as sdist:
        for name, path in (
            (
                "pymongo-9.9.9/test/change_streams/unified/change-streams-clusterTime.json",
                UNIFIED_DIR / "change-streams-clusterTime.json",
            ),
            (
                "pymongo-9.9.9/test/unified-test-format/valid-pass/probe.json",
                UNIFIED_DIR / "change-streams-clusterTime.json",
            ),
            ("pymongo-9.9.9/pymongo/__init__.py", None),
        ):
            data = path.read_bytes() if path else b""
            info = tarfile.TarInfo(name)
            info.size = len(data)
            sdist.addfile(info, io.BytesIO(data))
    return archive


def test_a_pypi_source_unpacks_the_sdists_tests_and_records_its_digest(tmp_path, cache, monkeypatch):
    archive = _sdist(tmp_path)
    calls = []

    def pip_download(command, **kwargs):
        calls.append(command)
        shutil.copy(archive, command[command.index("-d") + 1])
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(spec_sources.child_processes, "run", pip_download)
    unified = spec_sources.resolve("pypi:pymongo==9.9.9")
    selftests = spec_sources.resolve("pypi:pymongo==9.9.9#selftests")
    assert len(calls) == 1 and "pymongo==9.9.9" in calls[0] and "--no-binary" in calls[0]
    assert [p.name for p in unified.path.iterdir()] == ["change-streams-clusterTime.json"]
    assert (selftests.path / "valid-pass" / "probe.json").is_file()
    import hashlib

    assert unified.origin["sha256"] == hashlib.sha256(archive.read_bytes()).hexdigest()
    assert spec_sources.provenance([unified.path])[0]["version"] == "9.9.9"
    assert spec_sources.provenance([tmp_path])[0] == {"source": str(tmp_path), "kind": "path"}


def test_without_a_schema_every_run_says_so_and_require_schema_refuses(tmp_path):
    require_shared_specs()
    spec = tmp_path / "specs" / "change-streams-clusterTime.yml"
    spec.parent.mkdir()
    shutil.copy(UNIFIED_DIR / "change-streams-clusterTime.yml", spec)
    empty = tmp_path / "no-schema"
    empty.mkdir()
    env = {"HARNESS_UNIFIED_SCHEMA_DIR": str(empty), "HARNESS_NO_CACHE": "1"}
    done = _harness(
        "run", "--specs", str(spec), "--suite", "all", "--results", str(tmp_path / "r.jsonl"), cwd=tmp_path, **env
    )  # with the prose and code-defined checks too, which have no schema of their own
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING: no unified-format JSON schema found for 1 file(s)" in done.stderr
    records = _records(tmp_path / "r.jsonl")
    assert {r["format"] for r in records} == {"unified", "prose", "check"} and {r["schema"] for r in records} == {
        "none"
    }
    refused = _harness("run", "--specs", str(spec), "--require-schema", cwd=tmp_path, **env)
    assert refused.returncode == 1 and "--require-schema asks for one" in refused.stdout
    checked = _harness(
        "run",
        "--specs",
        str(spec),
        "--require-schema",
        "--results",
        str(tmp_path / "c.jsonl"),
        cwd=tmp_path,
        HARNESS_UNIFIED_SCHEMA_DIR=str(SCHEMA.parent),
    )
    assert checked.returncode == 0 and "WARNING" not in checked.stderr
    assert {r["schema"] == ["schema-1.28.json"] for r in _records(tmp_path / "c.jsonl")} == {True}
