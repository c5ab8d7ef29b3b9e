"""``--strict``: every note of a run is a failure (exit 1), in the same words; the records say the run was strict.

The notes: an expected-outcomes entry that matched no test of a file the run loaded, pinned tests that
produced no result, a unified file run with no schema, a plug-in that failed to install. An entry for a
test that ``-k`` left out, or for a file the run did not load, stays a note (docs/pins.md).
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.app import cli, compose
from harness.app.reporting import ConsoleReporter
from harness.core.expectations import Classification, Expectations, ExpectationsError
from harness.core.run_notes import RunNotes
from tests.conftest import UNIFIED_DIR, require_shared_specs
from tests.harness.app.test_cli import FAILING, PASSING, harness
from tests.helpers import LEGACY_HEADER, known_entry, known_yaml

STALE = "legacy/strict::a test renamed since"
KNOWN = known_yaml("legacy/strict::fails", "known here")


def entry(test: str, reason: str, id: str) -> str:
    """One more entry for ``KNOWN``'s file, limited to ``test``."""
    return (
        f"  - {{id: {id}, rule: CS-X, kind: server-bug, signature: {{message: operationType}}, tests: [{test!r}],"
        f" reason: {reason!r}, reproduction: planted}}\n"
    )


def unused(test: str, id: str) -> str:
    """The words of the note for an entry that explained no cause."""
    return (
        f"expected-outcomes entry explained no cause in this run: expected.yml#{id} "
        f"(CS-X; message='operationType'; tests [{test!r}])"
    )


def _spec_and_expectations(tmp_path: Path, stale: bool = True) -> tuple[Path, Path]:
    spec = tmp_path / "strict.yml"
    spec.write_text(LEGACY_HEADER + PASSING + FAILING)
    expected = tmp_path / "expected.yml"
    expected.write_text(KNOWN + (entry(STALE, "went stale", "stale") if stale else ""))
    return spec, expected


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_stale_entry_is_a_note_and_under_strict_a_failure_in_the_same_words(tmp_path, capsys):
    spec, expected = _spec_and_expectations(tmp_path)
    words = unused(STALE, "stale")
    plain, strict = tmp_path / "plain.jsonl", tmp_path / "strict.jsonl"
    assert cli.main(["run", "--specs", str(spec), "--expected", str(expected), "--results", str(plain), "-q"]) == 0
    assert f"  note: {words}" in capsys.readouterr().out
    assert (
        cli.main(["run", "--specs", str(spec), "--expected", str(expected), "--results", str(strict), "-q", "--strict"])
        == 1
    )
    out = capsys.readouterr().out
    assert f"  STRICT: {words}" in out and "--strict: 1 note(s) fail this run" in out and "note: " not in out
    assert {r["strict"] for r in _records(plain)} == {False} and {r["strict"] for r in _records(strict)} == {True}


def test_strict_passes_when_k_leaves_out_a_listed_test_and_fails_in_parallel_runs_too(tmp_path):
    spec, expected = _spec_and_expectations(tmp_path, stale=False)
    narrowed = harness(
        "run", "--specs", str(spec), "--expected", str(expected), "-k", "passes", "--strict", cwd=tmp_path
    )
    assert narrowed.returncode == 0, narrowed.stdout + narrowed.stderr  # 'fails' was loaded, then not selected
    assert "  note: " + unused("legacy/strict::fails", "planted") in narrowed.stdout
    spec, expected = _spec_and_expectations(tmp_path)
    parallel = harness(
        "run",
        "--specs",
        str(spec),
        "--expected",
        str(expected),
        "-j",
        "2",
        "--strict",
        "--results",
        str(tmp_path / "j.jsonl"),
        cwd=tmp_path,
    )
    assert parallel.returncode == 1, parallel.stdout + parallel.stderr
    assert "STRICT: " + unused(STALE, "stale") in parallel.stdout
    assert {r["strict"] for r in _records(tmp_path / "j.jsonl")} == {True}


def test_strict_fails_on_a_unified_file_run_without_its_schema(tmp_path, monkeypatch, capsys):
    require_shared_specs()
    spec = tmp_path / "specs" / "change-streams-clusterTime.yml"
    spec.parent.mkdir()
    shutil.copy(UNIFIED_DIR / "change-streams-clusterTime.yml", spec)
    (tmp_path / "no-schema").mkdir()
    monkeypatch.setenv("HARNESS_UNIFIED_SCHEMA_DIR", str(tmp_path / "no-schema"))
    monkeypatch.setenv("HARNESS_NO_CACHE", "1")
    assert cli.main(["run", "--specs", str(spec), "-q"]) == 0
    assert cli.main(["run", "--specs", str(spec), "-q", "--strict"]) == 1
    captured = capsys.readouterr()
    assert f"harness: WARNING: no unified-format JSON schema found for 1 file(s) (e.g. {spec})" in captured.err
    assert f"  STRICT: no unified-format JSON schema found for 1 file(s) (e.g. {spec})" in captured.out


def test_strict_fails_on_a_plug_in_that_failed_to_install(tmp_path, monkeypatch, capsys):
    spec = tmp_path / "one.yml"
    spec.write_text(LEGACY_HEADER + PASSING)
    monkeypatch.setattr(compose.plugins(), "problems", ["broken (x.plugin): ImportError: no module named x"])
    assert cli.main(["run", "--specs", str(spec), "--expected", "none", "-q"]) == 0
    assert cli.main(["run", "--specs", str(spec), "--expected", "none", "-q", "--strict"]) == 1
    out = capsys.readouterr().out
    assert out.count("  STRICT: plug-in not installed: broken (x.plugin): ImportError: no module named x") == 1


def test_a_pinned_test_that_produced_no_result_fails_a_strict_run():
    stream = io.StringIO()
    reporter = ConsoleReporter(total=1, stream=stream, notes=RunNotes(strict=True, pinned={"a.yml": 2}))
    info = SimpleNamespace(name="t", kind="k", version="1", topology="single")
    reporter.start(
        SimpleNamespace(
            run_id="r",
            expectations=Expectations.empty(),
            target=SimpleNamespace(info=info),
            driver=SimpleNamespace(name="d", version="1"),
        )
    )
    reporter.report(
        SimpleNamespace(
            test_id="legacy/a::t1",
            file="a.yml",
            outcome="passed",
            message="",
            duration_s=0.1,
            classification=Classification(True, "pass"),
            record={},
        )
    )
    assert reporter.finish() == 1
    assert "  STRICT: a.yml: 1 of the 2 pinned test(s) the run selected produced no result" in stream.getvalue()


def test_which_unmatched_entries_are_stale():
    patterns = (
        "legacy/a::gone",
        "legacy/a::t2",
        "legacy/elsewhere::x",
        "unified/elsewh*::y",
        "unified/elsewere::z",
        "legacy/a::t*",
        "legacy/a::t3",
    )
    entries = Expectations([known_entry(pattern) for pattern in patterns])
    notes = RunNotes(loaded=["legacy/a::t1", "legacy/a::t2", "legacy/a::t3"], pinned_stems={"a", "elsewhere"})
    produced = [("legacy/a::t1", "a.yml"), ("legacy/a::t3", "a.yml")]
    closing = notes.close(entries, produced, {"t.yml#legacy/a::t*"}, {"legacy/a::t3"})
    assert [(note.kind, note.words.split(": ", 1)[1].split(" (")[0]) for note in closing] == [
        ("stale-expectation", "t.yml#legacy/a::gone"),  # its file was loaded; no test of it matches
        ("expectation-not-selected", "t.yml#legacy/a::t2"),  # loaded, then left out (-k)
        ("expectation-not-selected", "t.yml#legacy/elsewhere::x"),  # a pinned file this run did not load
        ("expectation-not-selected", "t.yml#unified/elsewh*::y"),
        ("stale-expectation", "t.yml#unified/elsewere::z"),  # a file no corpus and no pin knows (misspelt)
        ("expectation-not-exercised", "t.yml#legacy/a::t3"),  # its one test was skipped here
    ]
    assert notes.failures() == []  # a plain run: notes only
    notes.strict = True
    assert [note.kind for note in notes.failures()] == ["stale-expectation", "stale-expectation"]


def test_a_pattern_over_every_file_is_stale_only_when_every_pinned_file_was_loaded():
    # "*RULE-ID*" names tests in any file: a run that loaded only some of the pinned files (--specs one folder)
    # cannot say it is misspelt (a rust certify re-run of one prose test once failed three such entries).
    entries = Expectations([known_entry("*RULE-X*")])
    partial = RunNotes(loaded=["prose/p::t1"], pinned_stems={"a", "p"})
    closing = partial.close(entries, [("prose/p::t1", "p.py")], set())
    assert [note.kind for note in closing] == ["expectation-not-selected"]
    whole = RunNotes(loaded=["prose/p::t1", "legacy/a::t1"], pinned_stems={"a", "p"})
    closing = whole.close(entries, [("prose/p::t1", "p.py"), ("legacy/a::t1", "a.yml")], set())
    assert [note.kind for note in closing] == ["stale-expectation"]


def test_strict_fails_on_an_entry_for_a_file_no_corpus_or_pin_knows_and_not_on_a_pinned_file_left_out(tmp_path, capsys):
    spec, expected = _spec_and_expectations(tmp_path, stale=False)
    entries = {
        "unified/resume-without-point::CS-RESUME-BARE-NOPOINT": "a deleted file",
        "unified/start-optoins::x": "a misspelt file",
        "unified/start-options::x": "a pinned file (specs/pins/scenarios-supplementary.yml) this run did not load",
    }
    expected.write_text(KNOWN + "".join(entry(t, r, f"e{i}") for i, (t, r) in enumerate(entries.items())))
    run = ["run", "--specs", str(spec), "--expected", str(expected), "-q"]
    assert cli.main(run) == 0
    assert cli.main([*run, "--strict"]) == 1
    out = capsys.readouterr().out
    for test in list(entries)[:2]:
        number = list(entries).index(test)
        assert out.count(unused(test, f"e{number}")) == 2
        assert "  STRICT: " + unused(test, f"e{number}") in out
    pinned = unused("unified/start-options::x", f"e{list(entries).index('unified/start-options::x')}")
    assert out.count(f"  note: {pinned}") == 2 and f"STRICT: {pinned}" not in out
    assert "--strict: 2 note(s) fail this run" in out


def test_the_pytest_front_end_takes_strict_as_harness_strict(tmp_path):
    spec, expected = _spec_and_expectations(tmp_path)
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "--specs",
        str(spec),
        "--expected",
        str(expected),
        "--results",
        str(tmp_path / "r.jsonl"),
    ]
    plain = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert "harness: note: " + unused(STALE, "stale") in plain.stdout
    strict = subprocess.run([*command, "--harness-strict"], cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "harness: STRICT: " + unused(STALE, "stale") in strict.stdout
    assert [r["strict"] for r in _records(tmp_path / "r.jsonl")] == [False, False, True, True]


def test_pytest_refuses_harness_strict_split_across_xdist_workers(tmp_path):
    spec, expected = _spec_and_expectations(tmp_path, stale=False)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--specs", str(spec), "--expected"]
    done = subprocess.run(
        [*command, str(expected), "--harness-strict", "-n", "2", "--results", str(tmp_path / "r.jsonl")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert "--harness-strict cannot judge a run split across pytest-xdist workers (-n 2)" in done.stderr
    assert not (tmp_path / "r.jsonl").exists()  # nothing ran, so no record says strict: true


def test_an_entry_for_a_suite_the_run_did_not_select_is_a_note_and_one_for_no_suite_is_stale():
    entries = Expectations([known_entry(p) for p in ("check/server-checks::SRV-X: *", "check/server-chekcs::SRV-X: *")])
    notes = RunNotes(loaded=["legacy/a::t1"], unselected_files={"check/server-checks", "prose/prose"}, strict=True)
    closing = notes.close(entries, [("legacy/a::t1", "a.yml")])
    assert [(note.kind, note.words.split(": ", 1)[1].split(" (")[0]) for note in closing] == [
        ("expectation-not-selected", "t.yml#check/server-checks::SRV-X: *"),  # --suite checks was not chosen
        ("stale-expectation", "t.yml#check/server-chekcs::SRV-X: *"),  # no suite has that file (misspelt)
    ]


def test_an_entry_for_any_test_is_stale_only_when_the_whole_selection_ran():
    from harness.core.expectations import KnownCause, Signature

    anywhere = Expectations([KnownCause("x", "SRV-X", "server-bug", Signature(message="m"), "r", "p", source="t.yml")])
    whole = RunNotes(loaded=["legacy/a::t1"])
    assert [n.kind for n in whole.close(anywhere, [("legacy/a::t1", "a.yml")])] == ["stale-expectation"]
    narrowed = RunNotes(loaded=["legacy/a::t1", "legacy/a::t2"])  # -k left t2 out
    assert [n.kind for n in narrowed.close(anywhere, [("legacy/a::t1", "a.yml")])] == ["expectation-not-selected"]
    assert RunNotes(loaded=["legacy/a::t1"]).close(anywhere, [("legacy/a::t1", "a.yml")], {"t.yml#x"}) == []


def test_the_files_of_the_suites_not_chosen_are_known_to_the_run():
    from harness.app.compose import unselected_suite_files

    files = unselected_suite_files("spec,prose")
    assert "check/server-checks" in files and "check/token-kinds" in files
    assert not any(file.startswith("prose/") for file in files)
    assert unselected_suite_files("all") == set() and not any("campaign" in f for f in unselected_suite_files("spec"))


def test_a_read_ahead_entry_that_explained_nothing_is_said_but_never_fails_a_strict_run():
    """Whether a push mode's getMore goes out before a test's fail point is the driver's timing: a run may not meet
    a read-ahead entry, and a strict run says so without failing (a driver's bug entry still fails it)."""
    read_ahead = Expectations.from_data(
        {
            "driver": "node",
            "known": [
                {
                    "id": "ahead",
                    "kind": "read-ahead",
                    "iteration_modes": ["emitter"],
                    "signature": {"clause": "event", "path": "expectEvents*"},
                    "reason": "a getMore read ahead",
                    "reproduction": "docs/executor-protocol.md 6.4.1",
                },
                {
                    "id": "bug",
                    "rule": "CS-X",
                    "kind": "driver-bug",
                    "signature": {"message": "x"},
                    "reason": "r",
                    "reproduction": "p",
                },
            ],
        },
        "node.yml",
    )
    notes = RunNotes(loaded=["legacy/a::t1"], strict=True)
    closing = notes.close(read_ahead, [("legacy/a::t1", "a.yml")])
    assert [n.kind for n in closing] == ["read-ahead-not-met", "stale-expectation"]
    assert [n.kind for n in notes.failures()] == ["stale-expectation"]


def test_a_sometimes_entry_that_explained_nothing_is_said_with_why_but_a_plain_one_still_fails():
    """A cause that shows only after some server history (which the order of the tests decides) may not show in a
    run: its entry says why (``sometimes``) and is said, not failed; the same entry without it is stale."""
    entry = {
        "id": "after-drop",
        "rule": "SRV-X",
        "kind": "server-bug",
        "signature": {"message": "invalidate"},
        "tests": ["legacy/a::*"],
        "reason": "r",
        "reproduction": "p",
    }
    sometimes = Expectations.from_data(
        {"target": "t", "known": [{**entry, "sometimes": "the order decides"}, {**entry, "id": "plain"}]}, "t.yml"
    )
    notes = RunNotes(loaded=["legacy/a::t1"], strict=True)
    closing = notes.close(sometimes, [("legacy/a::t1", "a.yml")])
    assert [n.kind for n in closing] == ["sometimes-not-met", "stale-expectation"]
    assert closing[0].words.endswith("; it shows only sometimes: the order decides")
    assert [n.kind for n in notes.failures()] == ["stale-expectation"]
    with pytest.raises(ExpectationsError, match="a 'sometimes' entry names the tests"):
        Expectations.from_data(
            {"target": "t", "known": [{**entry, "tests": [], "sometimes": "the order decides"}]}, "t.yml"
        )
