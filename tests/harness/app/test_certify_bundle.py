"""A certification bundle from a real ``harness certify`` run verifies, and every part tampered with is caught.

One small certify (the embedded SecantusDB, pymongo in its default iteration mode, two of the project's
supplementary spec files copied into a temporary folder at run time, ``-k unified/``) makes the bundle; each test
tampers with a copy of it and runs ``harness certify --verify``. A tamper is tried twice where it matters: as is
(the hashes catch it) and with the manifest's hashes rewritten to match (a forger's bundle: the check behind the
hashes must catch it).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import shutil
from pathlib import Path

import pytest

from harness.app.cli import main
from harness.core.project_data import project_data

SPEC_FILES = ("server-pipeline.yml", "driver-optime.yml")
STEM = "pymongo-on-embedded"
RESULTS = f"{STEM}.results.jsonl"


def _main(argv: list[str]) -> tuple[int, str]:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = main(argv)
    return status, printed.getvalue()


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """The certify run's bundle (folder and archive), its spec files, and the jobs certify handed the run."""
    import harness.app.cli as cli

    root = tmp_path_factory.mktemp("bundle")
    specs = root / "specs" / "supplementary"
    specs.mkdir(parents=True)
    for name in SPEC_FILES:
        shutil.copyfile(project_data("scenarios", "supplementary", name), specs / name)
    jobs = []
    real_run_job = cli.run_job

    def recording(job):
        jobs.append(job)
        return real_run_job(job)

    argv = ["certify", "--specs", str(specs), "--iteration-mode", "next", "-k", "unified/"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cli, "run_job", recording)
        status, printed = _main([*argv, "--out", str(root / "out"), "--archive"])
    assert status == 0, printed
    return {"out": root / "out", "archive": root / "out.tar.gz", "specs": specs, "jobs": jobs}


def _copy(bundle, tmp_path) -> Path:
    copy = tmp_path / "out"
    shutil.copytree(bundle["out"], copy)
    return copy


def _verify(folder: Path) -> tuple[int, str]:
    return _main(["certify", "--verify", str(folder)])


def _manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


def _write_manifest(folder: Path, manifest: dict) -> None:
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1))


def _rehash(folder: Path) -> None:
    """What a forger does after a tamper: the manifest's hashes made to match the files again."""
    manifest = _manifest(folder)
    digest = {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in manifest["files"]}
    manifest["files"] = digest
    for entry in manifest["expectations"]:
        entry["sha256"] = digest[entry["file"]]
    _write_manifest(folder, manifest)


def _records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / RESULTS).read_text().splitlines()]


def _write_records(folder: Path, records: list[dict]) -> None:
    (folder / RESULTS).write_text("".join(json.dumps(r) + "\n" for r in records))


def _refused(folder: Path, *expected: str) -> str:
    status, printed = _verify(folder)
    assert status == 1, printed
    assert "not verified:" in printed and "verified: " not in printed.replace("not verified:", "")
    for words in expected:
        assert words in printed, printed
    return printed


# -- what it accepts ------------------------------------------------------------------------------------
def test_certify_hands_the_run_a_typed_job_not_a_command_line(bundle):
    from harness.app.run_job import RunJob

    [job] = bundle["jobs"]
    assert isinstance(job, RunJob)
    assert (job.suite, job.keyword, job.options.notes.strict, job.options.expected) == ("all", "unified/", True, "auto")
    assert job.options.settings.iteration_mode is None  # the driver's default mode: the main job's own run
    assert job.options.results == bundle["out"] / RESULTS


def test_a_fresh_bundle_verifies_as_a_folder_and_as_an_archive(bundle, tmp_path):
    out = bundle["out"]
    assert {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()} == {
        "manifest.json",
        *(STEM + suffix for suffix in (".json", ".html", ".badge.json", ".results.jsonl", ".log")),
        "expectations/secantusdb.yml",
        "expectations/drivers/pymongo.yml",
    }
    manifest = _manifest(out)
    assert manifest["driver"]["name"] == "pymongo" and manifest["target"]["name"] == "secantusdb"
    assert [f["path"] for f in manifest["spec_sources"][0]["files"]] == sorted(SPEC_FILES)
    assert {f["pin"] for f in manifest["spec_sources"][0]["files"]} == {"pinned"}
    for where in (out, bundle["archive"]):
        status, printed = _verify(where)
        assert status == 0, printed
        assert printed.startswith(f"verified: {where} (pymongo ") and "1 run(s), 2 records, 2 spec files" in printed
    moved = tmp_path / "elsewhere.tar.gz"
    shutil.copyfile(bundle["archive"], moved)
    assert _verify(moved)[0] == 0


def test_a_file_the_manifest_does_not_list_is_a_note_not_a_failure(bundle, tmp_path):
    folder = _copy(bundle, tmp_path)
    (folder / "notes.txt").write_text("mine")
    status, printed = _verify(folder)
    assert status == 0, printed
    assert "note: notes.txt: not listed in the manifest" in printed


# -- what it catches ------------------------------------------------------------------------------------
@pytest.mark.parametrize("forged", [False, True], ids=["as-is", "rehashed"])
def test_a_changed_record_is_caught(bundle, tmp_path, forged):
    folder = _copy(bundle, tmp_path)
    records = _records(folder)
    passed = next(r for r in records if r["outcome"] == "passed")
    passed["outcome"], passed["message"] = "failed", "forged"
    _write_records(folder, records)
    if forged:
        _rehash(folder)
        _refused(folder, f"{STEM}.json: differs from the statement recomputed from the records")
    else:
        _refused(folder, f"{RESULTS}: changed: its SHA-256 is")


@pytest.mark.parametrize("forged", [False, True], ids=["as-is", "rehashed"])
def test_a_removed_record_is_caught(bundle, tmp_path, forged):
    folder = _copy(bundle, tmp_path)
    records = _records(folder)
    gone = records.pop()
    _write_records(folder, records)
    if forged:
        _rehash(folder)
        manifest = _manifest(folder)
        manifest["runs"][0]["records"] = len(records)
        _write_manifest(folder, manifest)
        _refused(folder, f"{RESULTS}: {gone['test_id']}: missing record")
    else:
        _refused(folder, f"{RESULTS}: changed", f"{RESULTS}: {gone['test_id']}: missing record")


@pytest.mark.parametrize("forged", [False, True], ids=["as-is", "rehashed"])
def test_a_changed_expectations_file_is_caught(bundle, tmp_path, forged):
    folder = _copy(bundle, tmp_path)
    path = folder / "expectations" / "secantusdb.yml"
    text = path.read_text()
    assert "reason:" in text
    path.write_text(text.replace("reason:", "reason: forged,", 1))
    if forged:
        _rehash(folder)
        _refused(folder, f"{STEM}.json: differs from the statement recomputed from the records")
    else:
        _refused(folder, "expectations/secantusdb.yml: expected-outcomes file changed")


def test_a_mismatched_driver_version_is_caught(bundle, tmp_path):
    folder = _copy(bundle, tmp_path)
    manifest = _manifest(folder)
    real = manifest["driver"]["version"]
    manifest["driver"]["version"] = "99.0.0"
    _write_manifest(folder, manifest)
    _refused(
        folder,
        f"{RESULTS}: driver.version: the manifest says '99.0.0', 2 record(s) say '{real}'",
        f"{STEM}.log: its driver version is '{real}', the manifest says '99.0.0'",
    )


def test_a_record_of_another_driver_version_is_caught(bundle, tmp_path):
    folder = _copy(bundle, tmp_path)
    records = _records(folder)
    records[0]["driver"]["version"] = "3.0.0"
    _write_records(folder, records)
    _rehash(folder)
    _refused(folder, f"{RESULTS}: driver.version: the manifest says")


def test_a_changed_spec_file_is_caught(bundle, tmp_path):
    folder = _copy(bundle, tmp_path)
    specs = tmp_path / "specs" / "supplementary"
    shutil.copytree(bundle["specs"], specs)
    manifest = _manifest(folder)
    manifest["spec_sources"][0]["path"] = str(specs)
    _write_manifest(folder, manifest)
    assert _verify(folder)[0] == 0  # the same files elsewhere: verified
    changed = specs / SPEC_FILES[0]
    changed.write_text(changed.read_text() + "\n# changed\n")
    _refused(folder, f"spec file {changed}: changed: its SHA-256 is")


def test_spec_files_that_are_not_here_are_named(bundle, tmp_path):
    folder = _copy(bundle, tmp_path)
    manifest = _manifest(folder)
    manifest["spec_sources"][0]["path"] = str(tmp_path / "nowhere")
    _write_manifest(folder, manifest)
    _refused(folder, f"not found at {tmp_path / 'nowhere'}: verification reads the spec files the bundle names")


@pytest.mark.parametrize("forged", [False, True], ids=["as-is", "rehashed"])
def test_a_changed_statement_is_caught(bundle, tmp_path, forged):
    folder = _copy(bundle, tmp_path)
    path = folder / f"{STEM}.json"
    statement = json.loads(path.read_text())
    rule = next(r for r in statement["rules"] if r["verdict"] == "not-met")
    rule["verdict"] = "met"
    path.write_text(json.dumps(statement, indent=1))
    if forged:
        _rehash(folder)
        _refused(
            folder,
            f"{STEM}.json: differs from the statement recomputed from the records: rule {rule['id']}: "
            "the bundle says met, the records give not-met",
        )
    else:
        _refused(folder, f"{STEM}.json: changed")


@pytest.mark.parametrize("forged", [False, True], ids=["as-is", "rehashed"])
def test_a_changed_log_is_caught(bundle, tmp_path, forged):
    folder = _copy(bundle, tmp_path)
    path = folder / f"{STEM}.log"
    text = path.read_text()
    assert "server 8." in text
    path.write_text(text.replace("server 8.", "server 9.", 1))
    if forged:
        _rehash(folder)
        _refused(folder, f"{STEM}.log: its server version is '9.")
    else:
        _refused(folder, f"{STEM}.log: changed")


def test_a_missing_manifest_is_caught(bundle, tmp_path):
    folder = _copy(bundle, tmp_path)
    (folder / "manifest.json").unlink()
    _refused(folder, "manifest.json: missing")


def test_an_archive_member_outside_the_bundle_folder_is_refused(bundle, tmp_path):
    import tarfile

    archive = tmp_path / "evil.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(bundle["out"] / "manifest.json", arcname="out/manifest.json")
        tar.add(bundle["out"] / RESULTS, arcname="out/../escaped.jsonl")
    _refused(archive, "archive member 'out/../escaped.jsonl' is not a plain file inside the bundle's folder")
    assert not (tmp_path / "escaped.jsonl").exists()


def test_a_manifest_missing_a_field_is_named_not_a_traceback(bundle, tmp_path):
    folder = _copy(bundle, tmp_path)
    manifest = _manifest(folder)
    del manifest["runs"][0]["results"]
    _write_manifest(folder, manifest)
    _refused(folder, "manifest.json: malformed: a field is missing or not of its type (KeyError: 'results')")
