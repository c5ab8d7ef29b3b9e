"""Expected-outcome files: classification of results, and clear errors for bad files."""

from __future__ import annotations

import pytest

from harness.core.expectations import ExpectationsError
from harness.engine.run import EXPECTATIONS_DIR
from harness.formats.expectations_file import load_expectations


def _load(tmp_path, text):
    path = tmp_path / "e.yml"
    path.write_text(text)
    return load_expectations(path)


def test_classification(tmp_path):
    e = _load(
        tmp_path, 'known:\n  - {test: "legacy/a::t*", reason: "why"}\n  - {test: "x::e", outcome: error, reason: "r"}\n'
    )
    assert e.classify("legacy/a::t1", "failed").kind == "known-failure"
    assert e.classify("legacy/a::t1", "passed").kind == "unexpected-pass"
    assert not e.classify("legacy/a::t1", "error").expected
    assert e.classify("x::e", "error").expected
    assert e.classify("other", "failed").kind == "unexpected-failure"
    assert e.classify("other", "passed").expected and e.classify("other", "skipped").expected
    skipped = e.classify("legacy/a::t1", "skipped")  # a listed deviation this target cannot exercise
    assert skipped.expected and skipped.kind == "skip" and skipped.reason == "not run here; listed as failed: why"


@pytest.mark.parametrize(
    "text, message",
    [
        ("known: 3", "'known' must be a list"),
        ("known:\n  - {reason: r}", "needs a 'test'"),
        ("known:\n  - {test: t}", "'reason' is required"),
        ("known:\n  - {test: t, reason: r, outcome: weird}", "outcome must be one of"),
    ],
)
def test_bad_files_are_named(tmp_path, text, message):
    with pytest.raises(ExpectationsError, match=message):
        _load(tmp_path, text)


def test_project_expectation_files_load():
    files = sorted(EXPECTATIONS_DIR.glob("**/*.yml"))
    assert files, f"no expected-outcomes files in {EXPECTATIONS_DIR}"
    for path in files:  # Expectations.load refuses entries without a one-line reason
        load_expectations(path)


def test_entries_that_match_no_test_are_found(tmp_path):
    e = _load(
        tmp_path, 'known:\n  - {test: "legacy/a::t*", reason: "why"}\n  - {test: "legacy/gone::x", reason: "old"}\n'
    )
    assert [k.pattern for k in e.unmatched(["legacy/a::t1", "legacy/b::u"])] == ["legacy/gone::x"]


def test_auto_reads_the_targets_and_the_drivers_known_outcomes(tmp_path, monkeypatch):
    from harness.engine import run as run_module

    (tmp_path / "drivers").mkdir()
    (tmp_path / "secantusdb.yml").write_text(
        'known:\n  - {test: "unified/a::server bug", reason: "the server drops ns"}\n'
    )
    (tmp_path / "drivers" / "pymongo.yml").write_text(
        'known:\n  - {test: "unified/b::driver bug", reason: "the driver sends one start point of two"}\n'
    )
    monkeypatch.setattr(run_module, "EXPECTATIONS_DIR", tmp_path)
    both = run_module.expectations_for("auto", "secantusdb", "pymongo")
    assert both.classify("unified/a::server bug", "failed").kind == "known-failure"
    assert both.classify("unified/b::driver bug", "failed").reason == "the driver sends one start point of two"
    assert both.classify("unified/b::driver bug", "passed").kind == "unexpected-pass"
    assert "secantusdb.yml" in both.source and "pymongo.yml" in both.source
    other_driver = run_module.expectations_for("auto", "secantusdb", "node")
    assert other_driver.classify("unified/b::driver bug", "failed").kind == "unexpected-failure"
    assert run_module.expectations_for("none", "secantusdb", "pymongo").known == []


def test_a_pair_file_adjusts_the_driver_s_uri_and_needs_a_reason(tmp_path):
    from harness.core.expectations import with_uri_options

    e = _load(tmp_path, 'adjust: {uriOptions: {serverMonitoringMode: poll, retryReads: false}, reason: "why"}\n')
    assert e.uri_options == {"serverMonitoringMode": "poll", "retryReads": "false"}
    assert e.adjustments[0].reason == "why" and e.adjustments[0].source.endswith("e.yml")
    assert (
        with_uri_options("mongodb://h:1", e.uri_options) == "mongodb://h:1/?serverMonitoringMode=poll&retryReads=false"
    )
    assert with_uri_options("mongodb://h:1/?serverMonitoringMode=stream", {"serverMonitoringMode": "poll"}) == (
        "mongodb://h:1/?serverMonitoringMode=stream"
    ), "an option the connection string sets is left as it is"
    assert with_uri_options("mongodb://h:1/db?w=1", {"a": "b"}) == "mongodb://h:1/db?w=1&a=b"
    with pytest.raises(ExpectationsError, match="'adjust' needs 'uriOptions'"):
        _load(tmp_path, "adjust: {uriOptions: {serverMonitoringMode: poll}}\n")


def test_auto_reads_the_target_s_the_driver_s_and_the_pair_s_files(tmp_path, monkeypatch):
    from harness.engine import run

    (tmp_path / "drivers").mkdir()
    (tmp_path / "pairs").mkdir()
    (tmp_path / "t.yml").write_text('known: [{test: "a", reason: "target"}]\n')
    (tmp_path / "drivers" / "d.yml").write_text('known: [{test: "b", reason: "driver"}]\n')
    (tmp_path / "pairs" / "t+d.yml").write_text('adjust: {uriOptions: {x: "1"}, reason: "pair"}\nknown: []\n')
    monkeypatch.setattr(run, "EXPECTATIONS_DIR", tmp_path)
    both = run.expectations_for("auto", "t", "d")
    assert [k.reason for k in both.known] == ["target", "driver"] and both.uri_options == {"x": "1"}
    assert run.expectations_for("auto", "t", "other").uri_options == {}
