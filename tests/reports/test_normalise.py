"""reports.normalise: one row per verdict with the columns of docs/reports.md, derived by Spark expressions."""

from __future__ import annotations

from reports.schema import VERDICT_COLUMNS
from tests.spark_support import at, record, records_frame, rows


def one(spark, rec):
    from reports.normalise import verdicts_from_records

    frame = verdicts_from_records(records_frame(spark, [rec]))
    assert frame.columns == VERDICT_COLUMNS
    [row] = frame.collect()
    return row.asDict()


def test_a_record_becomes_one_verdict_with_its_axes(spark):
    row = one(
        spark,
        record(
            "unified/change-streams-errors::Change Stream should error",
            "failed",
            "OperationFailure, code 280 (ChangeStreamFatalError): cannot resume",
            run_id="r1",
            driver_version="4.10.0",
            target_version="0.7.0b3",
            started_at=at(0),
            labels={"matrix": "m1", "cell": "pymongo-4.10.0+secantusdb-0.7.0b3", "repeat": "2"},
            expected=True,
        ),
    )
    assert row["spec_file"] == "unified/change-streams-errors"
    assert row["format"] == "unified" and row["outcome"] == "failed" and row["source"] == "jsonl"
    assert (row["driver_name"], row["driver_version"]) == ("pymongo", "4.10.0")
    assert (row["target_name"], row["target_kind"], row["topology"]) == ("secantusdb", "embedded", "replicaset")
    assert (row["server_version"], row["target_version"]) == ("8.2.11", "0.7.0b3")
    assert row["cell"] == "pymongo 4.10.0 / secantusdb 0.7.0b3 replicaset native"
    assert (row["matrix"], row["cell_label"], row["repeat"]) == ("m1", "pymongo-4.10.0+secantusdb-0.7.0b3", 2)
    assert (row["expected"], row["expectation_kind"]) == (True, "fail")
    assert (row["error_code"], row["error_code_name"]) == (280, "ChangeStreamFatalError")
    assert row["started_at"].isoformat() == "2026-01-05T10:00:00"
    assert row["network_faults"] is False and row["faults_injected"] is None


def test_a_real_server_target_uses_the_server_version_and_network_faults_mark_the_cell(spark):
    rec = record(network_faults=True, failpoints="emulated")
    del rec["target"]["details"]["package_version"]
    row = one(spark, rec)
    assert row["target_version"] == "8.2.11" and row["network_faults"] is True
    assert row["cell"] == "pymongo 4.9.0 / secantusdb 8.2.11 replicaset emulated +netfaults"


def test_a_campaign_stays_in_the_cell_it_ran_in_although_it_brings_its_own_toxiproxy(spark):
    spec = one(spark, record())
    campaign = one(
        spark,
        record(
            "campaign/campaign::seed=7 events=300",
            fmt="campaign",
            network_faults=True,
            details={"events": 300, "resumes": 1, "faults": [], "anomalies": []},
        ),
    )
    assert campaign["network_faults"] is True
    assert campaign["cell"] == spec["cell"] == "pymongo 4.9.0 / secantusdb 0.7.0 replicaset native"


def test_campaign_details_are_counted(spark):
    row = one(
        spark,
        record(
            "campaign/campaign::seed=1 events=300",
            "failed",
            "1 gap",
            fmt="campaign",
            details={
                "events": 300,
                "resumes": 3,
                "disallowed_errors": 1,
                "faults": [{"kind": "resumable_error"}, {"kind": "restart"}],
                "anomalies": [{"kind": "gap", "seq": 7}],
            },
        ),
    )
    assert (row["faults_injected"], row["resumes"], row["anomalies"], row["disallowed_errors"], row["events"]) == (
        2,
        3,
        1,
        1,
        300,
    )


def test_message_patterns_forget_numbers_ids_ports_and_quoted_values(spark):
    from pyspark.sql import functions as F

    from reports.normalise import message_pattern

    messages = [
        "OperationFailure, code 43 (CursorNotFound): cursor id 8263712 not found on 127.0.0.1:27017 'db.coll'\nstack",
        "OperationFailure, code 43 (CursorNotFound): cursor id 11 not found on 10.1.2.3:27018 'other.c'",
        'OperationFailure, code 43 (CursorNotFound): cursor id 5 not found on localhost:30001 "x"',
    ]
    frame = spark.createDataFrame([(m,) for m in messages], "message string")
    patterns = [r[0] for r in frame.select(message_pattern(F.col("message"))).collect()]
    assert (
        patterns[0]
        == patterns[1]
        == "OperationFailure, code <n> (CursorNotFound): cursor id <n> not found on <ip>:<port> '<str>'"
    )
    assert patterns[2].endswith('not found on localhost:<port> "<str>"')
    oid = spark.createDataFrame(
        [("document 65a1b2c3d4e5f60718293a4b at 0x7f3a9c and token 8263A1F2000000012B",)], "message string"
    )
    assert oid.select(message_pattern(F.col("message"))).first()[0] == "document <oid> at <hex> and token <hex>"


def test_passing_verdicts_have_no_error_code_or_pattern(spark):
    row = one(spark, record(outcome="passed", message="code 11 would not count"))
    assert row["error_code"] is None and row["message_pattern"] is None


def test_a_failing_records_causes_are_kept_as_json_text_with_its_expectation_reason(spark):
    import json

    rec = record("unified/cs::t", "failed", "boom", expected=True)
    cause = {"clause": "result", "step": "operations[1]", "path": "operations[1].expectResult.x", "fact": "1 != 2"}
    rec["causes"] = [{**cause, "expected": "1", "actual": "2", "error": None, "rules": ["CS-A"], "known": "t.yml#a"}]
    rec["not_reached"] = ["operations[2] (insertOne on collection0)", "expectEvents[0]"]
    rec["expectation"].update(kind="known-failure", reason="t.yml#a: because")
    row = one(spark, rec)
    # the fields the report judges and groups by (schema.CAUSE), in the record's order
    assert json.loads(row["causes"]) == [{**cause, "rules": ["CS-A"], "known": "t.yml#a"}]
    assert (row["expectation_reason"], row["not_reached"]) == ("t.yml#a: because", 2)
    passed = one(spark, record())
    assert (passed["causes"], passed["not_reached"]) == (None, 0)  # a pass has none, and reached everything
    before = record("unified/cs::t", "failed", "boom")
    del before["causes"], before["not_reached"]  # a record written before causes
    assert (one(spark, before)["causes"], one(spark, before)["not_reached"]) == (None, None)


def test_each_iteration_mode_is_a_cell_of_its_own_and_a_record_without_one_keeps_its_name(spark):
    """Two modes of one driver on one target are two APIs: two cells (and two contexts on the version axes); a
    record written before ``driver.iteration_mode`` keeps the name cells had before the mode was part of it."""
    from reports.conformance import cells
    from reports.normalise import cell_name, verdicts_from_records
    from reports.versions import version_dimension

    moded = []
    for n, mode in enumerate(("next", "emitter")):
        rec = record(run_id=f"m{n}", outcome=("passed", "failed")[n])
        rec["driver"]["iteration_mode"] = mode
        moded.append(rec)
    before = record(run_id="old")
    assert "iteration_mode" not in before["driver"]
    verdicts = verdicts_from_records(records_frame(spark, [*moded, before])).cache()
    target = "secantusdb 0.7.0 replicaset native"
    assert rows(
        verdicts.select("run_id", "iteration_mode", "cell", cell_name(omit="driver_version").alias("context")),
        "run_id",
        "iteration_mode",
        "cell",
        "context",
    ) == [
        ("m0", "next", f"pymongo 4.9.0 [next] / {target}", f"pymongo [next] / {target}"),
        ("m1", "emitter", f"pymongo 4.9.0 [emitter] / {target}", f"pymongo [emitter] / {target}"),
        ("old", None, f"pymongo 4.9.0 / {target}", f"pymongo / {target}"),
    ]
    table = cells(verdicts, version_dimension(spark, verdicts, ["driver_version", "target_version"]))
    assert rows(table, "cell", "iteration_mode", "runs", "passed", "failed") == [
        (f"pymongo 4.9.0 / {target}", None, 1, 1, 0),
        (f"pymongo 4.9.0 [emitter] / {target}", "emitter", 1, 0, 1),
        (f"pymongo 4.9.0 [next] / {target}", "next", 1, 1, 0),
    ]
    verdicts.unpersist()
