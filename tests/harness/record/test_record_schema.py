"""One record: what the writer writes, what the report's Spark schema reads and docs/record.md are the one
description of ``harness/record/schema.py``.

Records come from the real writer (:func:`harness.engine.run.result_of` over real verdicts and causes, and a
provenance with every optional field a run can add), are checked against the description, and are parsed by
Spark with the report's schema. The check itself is proven twice: each kind of break is caught, and a record
written before ``attempt`` existed is accepted.
"""

from __future__ import annotations

import json

import pytest

from harness.core.causes import Cause, check, from_error
from harness.core.expectations import Expectations
from harness.core.observations import ErrorInfo
from harness.core.records import RunProvenance, record_line
from harness.core.verdicts import ERROR, FAILED, PASSED, SKIPPED, Verdict
from harness.engine.run import CodeDefinedTest, result_of
from harness.record import fields
from harness.record.causes import CAUSE
from harness.record.describe import field_table
from harness.record.schema import PER_TEST_FIELDS, RESULT
from tests.paths import REPO

T0 = "2026-11-28T01:00:00.000+00:00"


def _provenance() -> RunProvenance:
    """A run's provenance with every field a run can add (a network-faults target, an executor driver...)."""
    return RunProvenance(
        run_id="20261128T010000Z-abcdef12",
        target={
            "kind": "daemon",
            "name": "secantusdb",
            "version": "8.0.0-rc1",
            "topology": "replicaset",
            "uri": "mongodb://127.0.0.1:27017/",
            "max_wire_version": 25,
            "details": {"package": "secantusdb", "package_version": "0.7.0b3", "pid": 12, "network_faults": {}},
        },
        driver={"name": "node", "version": "6.10.0", "language": "javascript", "iteration_mode": "next"},
        extra={
            "expectations_file": "specs/expectations/secantusdb.yml",
            "labels": {"cell": "c1", "repeat": "2"},
            "strict": True,
            "plugin_problems": ["campaign: no module named requests"],
            "adjustments": [{"uri_options": {"w": "1"}, "reason": "why", "source": "pairs/x.yml"}],
            "spec_sources": [{"path": "/specs", "files": 3}],
            "schema": ["1.21"],
            "pins": {"pinned": 3},
            "rules_problem": "no mapping",
            "rule_levels_problem": "no catalogue",
            "allow_destructive": True,
            "target_restarted_after": "target exited",
            "retries": 2,
            "repeat": 3,
        },
    )


def _written() -> list[dict]:
    """Records of the real writer: a pass, a failure with a mismatch and an error cause, an error, a skip, a
    campaign's details, a second attempt."""
    error = ErrorInfo("cannot resume", "OperationFailure", 280, "ChangeStreamFatalError", ("ResumableError",))
    causes = [
        Cause("result", step="operations[1]", path="x", expected="1", actual="2", fact="differs"),
        from_error("error-raised", "operations[2]", error, "raised"),
        check("no event", step="watch", expected=1, actual=None),
    ]
    verdicts = [
        (Verdict(PASSED), 1),
        (Verdict(FAILED, "differs", ["x: 1 != 2"], causes=causes, not_reached=["outcome"]), 1),
        (Verdict(ERROR, "set-up: boom"), 1),
        (Verdict(SKIPPED, "not here"), 1),
        (Verdict(PASSED, details={"events": 10, "resumes": 1, "disallowed_errors": 0, "faults": [{"k": 1}]}), 2),
    ]
    test = CodeDefinedTest("prose", "selftest", "a check", open=lambda run: None)  # type: ignore[arg-type, return-value]
    return [
        result_of(test, verdict, _provenance(), Expectations.empty(), None, T0, 0.5, attempt).record
        for verdict, attempt in verdicts
    ]


def test_every_written_record_has_exactly_the_described_fields_and_types():
    for record in _written():
        assert fields.problems(json.loads(record_line(record)), RESULT) == [], record
    assert {r["attempt"] for r in _written()} == {1, 2}


def test_the_writer_writes_the_described_fields_in_their_order_the_test_s_own_first():
    for record in _written():
        names = list(record)
        described = [name for name in RESULT.names if name in record]
        assert names[: len(PER_TEST_FIELDS & set(names))] == [n for n in described if n in PER_TEST_FIELDS]


@pytest.mark.parametrize(
    "change, problem",
    [
        (lambda r: r.update(attemp=1), "record.attemp: not a field of the record schema"),
        (lambda r: r.pop("outcome"), "record.outcome: missing"),
        (lambda r: r.update(attempt="1"), "record.attempt: expected long, got str"),
        (lambda r: r.update(line=None), None),  # a code-defined check's line is null: accepted
        (lambda r: r.update(message=None), "record.message: null, and the field is not nullable"),
        (lambda r: r["driver"].update(colour="red"), "record.driver.colour: not a field of the record schema"),
        (lambda r: r["target"]["details"].update(colour="red"), None),  # a target's own facts: accepted
        (lambda r: r["causes"][0].update(clause=3), "record.causes[0].clause: expected string, got int"),
        (lambda r: r["causes"][1]["error"].update(code="x"), "record.causes[1].error.code: expected long, got str"),
        (lambda r: r.pop("attempt"), "record.attempt: missing"),
    ],
)
def test_the_description_catches_each_kind_of_break(change, problem):
    record = json.loads(record_line(_written()[1]))
    change(record)
    assert fields.problems(record, RESULT) == ([problem] if problem else [])


def test_the_report_s_spark_schema_is_the_description_s_reported_fields(spark):
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from reports.schema import CAUSE as SPARK_CAUSE
    from reports.schema import CORRUPT, JSON_LINE, RESULT_RECORD

    def reported(kind: fields.Type) -> set[str]:
        return {f.name for f in kind.fields if f.reported}

    assert set(RESULT_RECORD.fieldNames()) == reported(RESULT)
    assert set(SPARK_CAUSE.fieldNames()) == reported(CAUSE)
    spark_types = {"string": T.StringType(), "long": T.LongType(), "double": T.DoubleType()}
    for name in ("outcome", "attempt", "duration_s", "line"):
        assert RESULT_RECORD[name].dataType == spark_types[RESULT.field(name).type.kind]
    # What the writer wrote, parsed as the report parses it: nothing corrupt, every reported value read back.
    lines = [(record_line(record),) for record in _written()]
    parsed = spark.createDataFrame(lines, "value string").select(
        F.from_json("value", JSON_LINE, {"columnNameOfCorruptRecord": CORRUPT}).alias("r")
    )
    rows = [row["r"] for row in parsed.collect()]
    assert [row[CORRUPT] for row in rows] == [None] * len(rows)
    for row, record in zip(rows, _written(), strict=True):
        for name in RESULT_RECORD.fieldNames():
            if record.get(name) is not None and not isinstance(record[name], (dict, list)):
                assert row[name] == record[name], name
        assert len(row["causes"]) == len(record["causes"])
    assert [row["attempt"] for row in rows] == [1, 1, 1, 1, 2]
    assert rows[1]["causes"][1]["clause"] == "error-raised" and rows[4]["details"]["events"] == 10


def test_docs_record_md_is_the_description():
    page = (REPO / "docs" / "record.md").read_text()
    assert field_table(RESULT) in page
    assert field_table(CAUSE) in page
