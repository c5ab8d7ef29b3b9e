"""Pinned corpora: a loader that quietly drops a test fails the run; a newer corpus runs, said to be unpinned.

The checked-in manifests (``specs/pins/``) are checked against the files that are here, and the
project's own scenario folders must be pinned as they are (edit a scenario: ``harness specs pin`` it).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.app import cli, pin_writer
from harness.app.spec_sources import SpecSourceError, resolve
from harness.formats import loaders, pins
from harness.formats.loaders import load_file
from harness.formats.pins import CHANGED, MISCOUNTED, PIN_ERROR, PINNED, UNPINNED, PinIndex
from harness.formats.source_names import is_source
from tests.harness.app.test_cli import FAILING, PASSING
from tests.helpers import LEGACY_HEADER, UNIFIED_RUNNER_DATA
from tests.paths import REPO

#: The project's own corpora: every spec file in them is pinned, as it is now.
OWN_CORPORA = (REPO / "specs" / "scenarios", UNIFIED_RUNNER_DATA)


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _drop_last_test(monkeypatch, format_name: str) -> None:
    """A broken loader: the format's files load with their last test missing."""
    table = [
        (name, recognise, (lambda f, d, lines, load=load: load(f, d, lines)[:-1]) if name == format_name else load)
        for name, recognise, load in loaders.FORMAT_LOADERS
    ]
    monkeypatch.setattr(loaders, "FORMAT_LOADERS", table)


@pytest.fixture
def pin_folder(tmp_path, monkeypatch):
    """An empty ``specs/pins/`` of the test's own, for pinning and for runs."""
    folder = tmp_path / "pins"
    monkeypatch.setattr(pins, "pins_folder", lambda: folder)
    monkeypatch.setattr(pin_writer, "pins_folder", lambda: folder)
    return folder


def test_a_loader_that_drops_a_test_of_a_pinned_file_fails_the_run_naming_the_file_and_both_counts(
    tmp_path, monkeypatch, capsys
):
    spec = UNIFIED_RUNNER_DATA / "with-transaction.yml"  # pinned in specs/pins/tests-data-unified-runner.yml: 3
    results = tmp_path / "r.jsonl"
    run = ["run", "--specs", str(spec), "--expected", "none", "-k", PIN_ERROR, "--results", str(results), "-q"]
    assert cli.main(run) == 2  # the loaders as they are: no pin error, so -k finds nothing to run
    _drop_last_test(monkeypatch, "unified")
    assert cli.main(run) == 1
    out = capsys.readouterr().out
    assert f"ERROR unified/with-transaction::{PIN_ERROR}" in out
    assert f"{spec}: the loaders made 2 test(s) of it, but its pin says 3" in out
    [record] = _records(results)
    assert record["outcome"] == "error" and record["file"] == str(spec) and record["test"] == PIN_ERROR
    assert "made 2 test(s)" in record["message"] and "pin says 3" in record["message"]
    assert record["pins"] == {"pinned": 0, MISCOUNTED: [str(spec)]}


def test_a_pinned_file_the_loader_makes_no_test_of_fails_the_run_naming_the_file_and_both_counts(
    tmp_path, monkeypatch, capsys
):
    spec = UNIFIED_RUNNER_DATA / "with-transaction.yml"  # pinned in specs/pins/tests-data-unified-runner.yml: 3
    table = [
        (name, recognise, (lambda f, d, lines: []) if name == "unified" else load)
        for name, recognise, load in loaders.FORMAT_LOADERS
    ]
    monkeypatch.setattr(loaders, "FORMAT_LOADERS", table)
    results = tmp_path / "r.jsonl"
    assert cli.main(["run", "--specs", str(spec), "--expected", "none", "--results", str(results), "-q"]) == 1
    out = capsys.readouterr().out
    assert f"ERROR unified/with-transaction::{PIN_ERROR}" in out
    assert f"{spec}: the loaders made 0 test(s) of it, but its pin says 3" in out
    [record] = _records(results)
    assert record["outcome"] == "error" and record["file"] == str(spec) and record["test"] == PIN_ERROR
    assert record["pins"] == {"pinned": 0, MISCOUNTED: [str(spec)]}


def test_the_pin_error_stays_with_any_selected_test_of_its_file(monkeypatch):
    from types import SimpleNamespace

    from harness.app import compose

    _drop_last_test(monkeypatch, "unified")
    args = SimpleNamespace(suite="spec", specs=[UNIFIED_RUNNER_DATA], keyword="withTransaction")
    loaded, selected = compose.selection(args)
    assert [t.description for t in loaded if t.file.endswith("with-transaction.yml")][-1] == PIN_ERROR
    assert len(selected) < len(loaded) and any(t.description == PIN_ERROR for t in selected)


def test_an_unknown_file_is_run_and_said_to_be_unpinned(tmp_path, capsys):
    spec = tmp_path / "newer.yml"
    spec.write_text(LEGACY_HEADER + PASSING)
    results = tmp_path / "r.jsonl"
    assert cli.main(["run", "--specs", str(spec), "--expected", "none", "--results", str(results), "-q"]) == 0
    assert (
        f"1 spec file(s) not pinned in specs/pins/ (a newer corpus?): run, their test counts unchecked: {spec}"
        in capsys.readouterr().err
    )
    [record] = _records(results)
    assert record["outcome"] == "passed" and record["pins"] == {"pinned": 0, UNPINNED: [str(spec)]}


def test_a_file_is_known_by_its_content_and_a_changed_one_by_its_path(tmp_path, pin_folder):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.yml").write_text(LEGACY_HEADER + PASSING + FAILING)
    assert "1 spec files, 2 tests; 1 new, 0 changed, 0 gone" in pin_writer.pin_source(str(corpus))
    index = PinIndex.load()
    copy = tmp_path / "elsewhere" / "renamed.yml"  # the same bytes anywhere are the same pinned file
    copy.parent.mkdir()
    shutil.copy(corpus / "a.yml", copy)
    assert index.status(copy, 2).status == PINNED
    assert index.status(copy, 1).status == MISCOUNTED
    edited = tmp_path / "newer" / "corpus" / "a.yml"  # the pinned path (folder/name), other content
    edited.parent.mkdir(parents=True)
    edited.write_text(LEGACY_HEADER + PASSING)
    assert index.status(edited, 1).status == CHANGED
    assert index.status(tmp_path / "elsewhere" / "renamed.yml", None).pins[0].path == "a.yml"
    (tmp_path / "other.yml").write_text(LEGACY_HEADER + FAILING)
    assert index.status(tmp_path / "other.yml", 1).status == UNPINNED


def test_pinning_again_says_what_changed_and_a_subfolder_with_a_pin_of_its_own_is_left_to_it(tmp_path, pin_folder):
    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    (corpus / "top.yml").write_text(LEGACY_HEADER + PASSING)
    (corpus / "sub" / "inner.yml").write_text(LEGACY_HEADER + FAILING)
    pin_writer.pin_source(str(corpus / "sub"))
    pin_writer.pin_source(str(corpus))
    manifest = pin_folder / f"{pin_writer.manifest_name(str(corpus), corpus)}.yml"
    assert [pin.path for pin in pins.read_manifest(manifest)] == ["top.yml"]
    assert "1 spec files, 1 tests; 0 new, 0 changed, 0 gone" in pin_writer.pin_source(str(corpus / "sub"))
    (corpus / "top.yml").write_text(LEGACY_HEADER + PASSING + FAILING)
    assert "1 spec files, 2 tests; 0 new, 1 changed, 0 gone" in pin_writer.pin_source(str(corpus))


def test_a_manifest_that_cannot_be_read_names_itself_and_the_run_does_not_start(tmp_path, pin_folder, capsys):
    pin_folder.mkdir()
    (pin_folder / "broken.yml").write_text("source: x\nfiles:\n  a.yml: {sha256: 1}\n")
    spec = tmp_path / "a.yml"
    spec.write_text(LEGACY_HEADER + PASSING)
    assert cli.main(["run", "--specs", str(spec), "--expected", "none", "-q"]) == 2
    assert "broken.yml: files['a.yml'] needs 'sha256' (text) and 'tests' (a whole number)" in capsys.readouterr().err


@pytest.mark.parametrize(
    "source, root, name",
    [
        ("pypi:pymongo==4.20.0", None, "pypi-pymongo-4.20.0"),
        ("pypi:pymongo==4.20.0#selftests", None, "pypi-pymongo-4.20.0-selftests"),
        (
            "git:https://github.com/mongodb/specifications@51ca03b#source/change-streams/tests/legacy",
            None,
            "git-https-github.com-mongodb-specifications-51ca03b-source-change-streams-tests-legacy",
        ),
        ("../shared/specs/upstream/unified", Path("/elsewhere/unified"), "shared-upstream-unified"),
        ("specs/scenarios/supplementary", REPO / "specs" / "scenarios" / "supplementary", "scenarios-supplementary"),
        ("project:scenarios/supplementary", REPO / "specs" / "scenarios" / "supplementary", "scenarios-supplementary"),
    ],
)
def test_a_manifest_is_named_after_its_source(source, root, name):
    assert pin_writer.manifest_name(source, root or Path("/cache/x")) == name


def _checked_in() -> list[tuple[str, Path, list[pins.PinnedFile]]]:
    found = []
    for manifest in sorted(pins.pins_folder().glob("*.yml")):
        source = pins.read_source(manifest)
        if is_source(source):
            try:
                root = resolve(source, fetch=False).path
            except SpecSourceError:
                continue  # not fetched on this machine (pypi:, git:): nothing here to check it against
        else:
            root = REPO / source
        found.append((manifest.name, root, pins.read_manifest(manifest)))
    return found


def test_the_checked_in_pins_give_the_counts_the_loaders_make_of_the_files_here():
    checked = 0
    for manifest, root, pinned in _checked_in():
        for pin in pinned:
            path = root / pin.path
            if path.is_file() and pins.sha256_of(path) == pin.sha256:
                assert pins.count_tests(load_file(path)) == pin.tests, f"{manifest}: {pin.path}"
                checked += 1
    assert checked >= 40  # the project's own corpora at least


def test_the_project_s_own_corpora_are_pinned_as_they_are():
    index = PinIndex.load()
    for corpus in OWN_CORPORA:
        for path in sorted(p for p in corpus.rglob("*") if p.suffix in (".yml", ".json")):
            standing = index.status(path)
            refresh = standing.pins[0].source if standing.pins else "its folder"
            assert standing.status == PINNED, f"{path} is {standing.status}: harness specs pin {refresh}"
