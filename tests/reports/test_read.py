"""reports.discover and reports.read: every input kind read with its schema; nothing dropped silently."""

from __future__ import annotations

import json
from html import escape

from harness.core.records import record_line
from reports.discover import VERDICTS_MARKER, discover_inputs
from tests.spark_support import record, write_jsonl

CELL = {
    "record": "cs-harness.cell/1",
    "matrix": "m1",
    "cell": "pymongo-4.8.0+secantusdb-0.7.0",
    "labels": {},
    "stage": "install",
    "reason": "pymongo 4.8.0 does not install",
    "at": "2026-01-05T09:00:00+00:00",
}
TORN = '{"record": "cs-harness.result/1", "run_id": "r9", "outcome": "pas'


def test_discovery_sorts_inputs_by_kind_and_names_what_it_cannot_use(tmp_path):
    write_jsonl(tmp_path / "runs" / "a" / "r1.jsonl", [record()])
    (tmp_path / "runs" / "junit.xml").write_text("<testsuites/>")
    (tmp_path / "runs" / "manifest.json").write_text("{}")
    history = tmp_path / "runs" / "history" / "verdicts"
    history.mkdir(parents=True)
    (history / VERDICTS_MARKER).write_text("")
    (history / "part-0.jsonl").write_text("not read: the verdicts directory is taken whole")
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "empty").mkdir()
    found = discover_inputs(
        [str(tmp_path / "runs"), str(tmp_path / "missing.jsonl"), str(tmp_path / "notes.txt"), str(tmp_path / "empty")]
    )
    assert found.jsonl == [str(tmp_path / "runs" / "a" / "r1.jsonl")]
    assert found.junit == [str(tmp_path / "runs" / "junit.xml")]
    assert found.parquet == [str(history)]
    assert [(p.rsplit("/", 1)[-1], problem.split(" (")[0]) for p, problem in found.problems] == [
        ("missing.jsonl", "does not exist"),
        ("notes.txt", "not a results file"),
        ("empty", "directory holds no results"),
    ]


def test_json_lines_are_records_cells_or_counted_problems(spark, tmp_path):
    from reports.read import read_inputs

    good = write_jsonl(
        tmp_path / "good.jsonl",
        [record(run_id="r1"), record(run_id="r2"), CELL],
        [
            "",
            TORN,
            "not json at all",
            '{"foo": 1}',
            '{"record": "cs-harness.other/1"}',
            '{"record": "cs-harness.result/1", "run_id": "r3"}',
        ],
    )
    junk = write_jsonl(tmp_path / "junk.jsonl", [], ["garbage"])
    raw = read_inputs(spark, discover_inputs([str(good), str(junk)]))
    assert sorted(r["r"]["run_id"] for r in raw.results.collect()) == ["r1", "r2"]
    assert [(c["cell"], c["stage"]) for c in raw.cells.collect()] == [(CELL["cell"], "install")]
    problems = sorted(
        (r["file"].rsplit("/", 1)[-1], r["problem"], r["lines"], r["example"]) for r in raw.problems.collect()
    )
    assert problems == [
        ("good.jsonl", "malformed line (torn, not JSON, or a field of the wrong type)", 2, TORN),
        ("good.jsonl", 'not a record (no "record" field)', 1, '{"foo": 1}'),
        (
            "good.jsonl",
            "result record without test_id or outcome",
            1,
            '{"record": "cs-harness.result/1", "run_id": "r3"}',
        ),
        ("good.jsonl", "unknown record type cs-harness.other/1", 1, '{"record": "cs-harness.other/1"}'),
        ("junk.jsonl", "malformed line (torn, not JSON, or a field of the wrong type)", 1, "garbage"),
        ("junk.jsonl", "no result records in this file", None, None),
    ]


def junit_xml(harness_records: list[dict], *, timestamp: str = "2026-01-05T11:00:00.123456+00:00") -> str:
    """A JUnit file as pytest writes it: harness items carry the record property; plain tests do not."""
    harness_cases = "".join(
        f'<testcase classname="x.yml" name="{escape(r["test"])}" time="0.5"><properties>'
        f'<property name="cs-harness.result" value="{escape(record_line(r))}" /></properties>'
        + ('<skipped type="pytest.xfail" message="fail: known" />' if r["outcome"] == "failed" else "")
        + "</testcase>"
        for r in harness_records
    )
    plain = (
        '<testcase classname="tests.test_a" name="test_ok" time="0.1" />'
        '<testcase classname="tests.test_a" name="test_bad" time="0.2">'
        '<failure message="assert 1 == 2">trace\nmore</failure></testcase>'
        '<testcase classname="tests.test_a" name="test_err" time="0.0"><error message="fixture boom">t</error>'
        '</testcase><testcase classname="tests.test_a" name="test_skip" time="0.0">'
        '<skipped type="pytest.skip" message="no db">x.py:3: no db</skipped></testcase>'
        '<testcase classname="tests.test_a" name="test_xfail" time="0.0">'
        '<skipped type="pytest.xfail" message="known bug" /></testcase>'
    )
    return (
        f'<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" '
        f'errors="1" failures="1" skipped="2" tests="7" time="1.0" timestamp="{timestamp}" hostname="ci-7">'
        f"{harness_cases}{plain}</testsuite></testsuites>"
    )


def test_junit_harness_records_normalise_exactly_like_json_lines(spark, tmp_path):
    from reports.job import load_inputs

    records = [
        record(
            "unified/change-streams::A", "failed", "OperationFailure, code 11 (X): boom", run_id="rj", expected=True
        ),
        record("unified/change-streams::B", "passed", run_id="rj"),
    ]
    records[0]["causes"] = [{"clause": "error-raised", "step": "s", "path": "", "fact": "boom", "rules": ["CS-A"]}]
    (tmp_path / "junit.xml").write_text(junit_xml(records))
    write_jsonl(tmp_path / "same.jsonl", records)
    verdicts = load_inputs(spark, [str(tmp_path / "junit.xml")]).verdicts
    from_json_lines = load_inputs(spark, [str(tmp_path / "same.jsonl")]).verdicts
    harness_rows = {r["test_id"]: r.asDict() for r in verdicts.where("format != 'pytest'").collect()}
    for row in from_json_lines.collect():
        expected = dict(row.asDict(), source="junit")
        assert harness_rows[row["test_id"]] == expected
    assert harness_rows["unified/change-streams::A"]["outcome"] == "failed"  # an xfail is still a failed verdict
    assert '"fact":"boom"' in harness_rows["unified/change-streams::A"]["causes"]


def test_junit_testcases_without_a_record_are_pytest_rows_with_unknown_versions(spark, tmp_path):
    from reports.job import load_inputs

    (tmp_path / "junit.xml").write_text(junit_xml([]))
    rows = {r["test"]: r for r in load_inputs(spark, [str(tmp_path / "junit.xml")]).verdicts.collect()}
    assert {name: (r["outcome"], r["message"]) for name, r in rows.items()} == {
        "test_ok": ("passed", None),
        "test_bad": ("failed", "assert 1 == 2"),
        "test_err": ("error", "fixture boom"),
        "test_skip": ("skipped", "no db"),
        "test_xfail": ("failed", "known bug"),
    }
    bad = rows["test_bad"]
    assert (bad["format"], bad["test_id"], bad["spec_file"], bad["source"]) == (
        "pytest",
        "tests.test_a::test_bad",
        "tests.test_a",
        "junit",
    )
    assert (bad["driver_version"], bad["target_version"]) == ("unknown", "unknown")
    assert (bad["iteration_mode"], bad["cell"]) == (None, "unknown unknown / unknown unknown unknown")
    assert bad["run_id"] == "junit-20260105T110000Z-ci-7" and bad["started_at"].hour == 11
    assert rows["test_xfail"]["expected"] is True
    assert {(r["causes"], r["expectation_reason"], r["not_reached"]) for r in rows.values()} == {(None, None, None)}


def test_malformed_xml_and_bad_properties_are_named(spark, tmp_path):
    from reports.read import read_inputs

    (tmp_path / "broken.xml").write_text('<testsuites><testsuite><testcase name="x"><oops></testsuite>')
    bad_property = junit_xml([record()]).replace("cs-harness.result/1", "something-else/1")
    (tmp_path / "odd.xml").write_text(bad_property)
    raw = read_inputs(spark, discover_inputs([str(tmp_path)]))
    problems = sorted((r["file"].rsplit("/", 1)[-1], r["problem"]) for r in raw.problems.collect())
    assert problems == [
        ("broken.xml", "malformed XML"),
        ("broken.xml", "no result records in this file"),
        ("odd.xml", "the cs-harness.result property is not a cs-harness.result/1 record"),
    ]


def test_the_jobs_own_parquet_reads_back_unchanged(spark, tmp_path):
    from reports.history import append_verdicts
    from reports.job import load_inputs

    write_jsonl(tmp_path / "r.jsonl", [record(run_id="p1"), record("legacy/x::y", "failed", "boom", run_id="p1")])
    verdicts = load_inputs(spark, [str(tmp_path / "r.jsonl")]).verdicts
    append_verdicts(spark, verdicts, tmp_path / "history")
    again = load_inputs(spark, [str(tmp_path / "history")]).verdicts
    assert sorted(map(tuple, again.collect())) == sorted(map(tuple, verdicts.collect()))
    assert json.loads(json.dumps(again.schema.jsonValue())) == verdicts.schema.jsonValue()


def test_a_history_written_before_causes_reads_with_none_and_takes_new_verdicts(spark, tmp_path):
    """``--append-to`` a history whose Parquet has no causes columns: its verdicts read with null causes (judged by
    outcome), and a night with causes is appended beside them. The same for the iteration mode: the history's
    verdicts keep the cell names they were written with, a night with a mode is named with it."""
    from reports.discover import VERDICTS_MARKER
    from reports.history import append_verdicts
    from reports.job import load_inputs

    write_jsonl(tmp_path / "old.jsonl", [record("legacy/x::y", "failed", "boom", run_id="old")])
    old = load_inputs(spark, [str(tmp_path / "old.jsonl")]).verdicts
    target = tmp_path / "history" / "verdicts"
    old.drop("causes", "expectation_reason", "not_reached", "iteration_mode").write.parquet(str(target))
    (target / VERDICTS_MARKER).write_text("a history from before causes\n")
    night = record("legacy/x::y", "failed", "boom", run_id="new")
    night["causes"] = [{"clause": "check", "step": "s", "path": "", "fact": "boom", "rules": [], "known": None}]
    night["driver"]["iteration_mode"] = "next"
    write_jsonl(tmp_path / "new.jsonl", [night])
    new = load_inputs(spark, [str(tmp_path / "new.jsonl")]).verdicts
    added, history = append_verdicts(spark, new, tmp_path / "history")
    rows = {r["run_id"]: r for r in history.collect()}
    assert added == 1 and rows["old"]["causes"] is None and '"clause":"check"' in rows["new"]["causes"]
    cell = "secantusdb 0.7.0 replicaset native"
    assert (rows["old"]["iteration_mode"], rows["old"]["cell"]) == (None, f"pymongo 4.9.0 / {cell}")
    assert (rows["new"]["iteration_mode"], rows["new"]["cell"]) == ("next", f"pymongo 4.9.0 [next] / {cell}")
