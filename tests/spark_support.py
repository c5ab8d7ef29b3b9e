"""Shared fixtures for the report job's tests: one local SparkSession and record builders.

The session is started once per test session (a JVM takes seconds to
start) with the report's own settings (:func:`reports.session.build_session`).
Records are built with the harness's own ``make_record``, so the tests read
exactly the shape ``harness run`` writes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.core.records import RunProvenance, make_record

T0 = "2026-01-05T10:00:00.000+00:00"


def _available() -> str | None:
    try:
        import pyspark  # noqa: F401 - imported only to learn whether it is installed
    except ImportError:
        return "pyspark is not installed (pip install -e '.[reports]')"
    from reports.java import JavaMissing, check_java

    try:
        check_java()
    except JavaMissing as exc:
        return str(exc)
    return None


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession (2 threads) for every report test; stopped at the end."""
    reason = _available()
    if reason:
        pytest.skip(reason)
    from reports.session import build_session

    session = build_session("local[2]", driver_memory="1g")
    yield session
    session.stop()


def at(minutes: float) -> str:
    """A UTC timestamp ``minutes`` after T0, as the harness writes it."""
    from datetime import datetime, timedelta

    moment = datetime.fromisoformat(T0) + timedelta(minutes=minutes)
    return moment.isoformat(timespec="milliseconds")


def record(
    test_id: str = "unified/change-streams::first test",
    outcome: str = "passed",
    message: str = "",
    *,
    run_id: str = "run-1",
    driver_version: str = "4.9.0",
    target_version: str = "0.7.0",
    server_version: str = "8.2.11",
    started_at: str = T0,
    labels: dict[str, str] | None = None,
    fmt: str | None = None,
    details: dict[str, Any] | None = None,
    expected: bool | None = None,
    network_faults: bool = False,
    topology: str = "replicaset",
    failpoints: str = "native",
) -> dict[str, Any]:
    """A ``cs-harness.result/1`` record as ``harness run`` writes it, with the axes the tests vary."""
    target_details = {"setName": "secantus", "package": "secantusdb", "package_version": target_version}
    if network_faults:
        target_details["network_faults"] = {"toxiproxy": "127.0.0.1:8474"}
    provenance = RunProvenance(
        run_id=run_id,
        target={
            "kind": "embedded",
            "name": "secantusdb",
            "version": server_version,
            "topology": topology,
            "uri": "mongodb://127.0.0.1:27017/",
            "details": target_details,
        },
        driver={"name": "pymongo", "version": driver_version},
        failpoints=failpoints,
        extra={"labels": labels or {}},
    )
    spec = test_id.split("::")[0]
    expectation = (
        None if expected is None else {"expected": expected, "kind": "fail" if expected else "pass", "reason": ""}
    )
    return make_record(
        provenance,
        format=fmt or spec.split("/")[0],
        file=f"{spec}.yml",
        test=test_id.split("::")[-1],
        test_id=test_id,
        outcome=outcome,
        message=message,
        started_at=started_at,
        duration_s=0.01,
        expectation=expectation,
        details=details,
    )


def write_jsonl(path: Path, records: list[dict[str, Any]], extra_lines: list[str] = ()) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + "".join(line + "\n" for line in extra_lines))
    return path


def records_frame(spark, records: list[dict[str, Any]]):
    """A tiny DataFrame of records as the reader makes them (column ``r`` in the record schema)."""
    from pyspark.sql import functions as F

    from reports.schema import RESULT_RECORD

    lines = spark.createDataFrame([(json.dumps(r),) for r in records], "value string")
    return lines.select(F.from_json("value", RESULT_RECORD).alias("r"), F.lit("jsonl").alias("source"))


def verdicts_frame(spark, records: list[dict[str, Any]]):
    """Normalised verdicts of ``records`` (the input every aggregation takes)."""
    from reports.normalise import verdicts_from_records

    return verdicts_from_records(records_frame(spark, records))


def rows(frame, *columns: str) -> list[tuple]:
    """A small result table's rows as tuples of ``columns`` (sorted, for comparisons)."""
    return sorted(tuple(row[c] for c in columns) for row in frame.select(*columns).collect())


DRIVERS = ("4.9.0", "4.10.0", "4.11.0")
TARGETS = ("0.7.0b3", "0.7.0")
REGRESSED = "unified/change-streams-resume::resumes after a ChangeStreamFatalError"
REGRESSION_MESSAGE = (
    "OperationFailure, code 280 (ChangeStreamFatalError): cannot resume stream at "
    "127.0.0.1:27017: resume token 8263A1F2000000012B was not found"
)
FIXED = "legacy/change-streams::Test with document comparison"
FLAKY = "unified/change-streams::Test getMore with postBatchResumeToken"


def matrix_records(repeats: int = 3) -> list[dict[str, Any]]:
    """A small, realistic matrix: 3 drivers x 2 targets x ``repeats``, with a regression, a fix and a flake.

    - ``REGRESSED`` passes on driver 4.9.0 and fails from 4.10.0 on (with ``REGRESSION_MESSAGE``);
    - ``FIXED`` fails on target 0.7.0b3 and passes on 0.7.0;
    - ``FLAKY`` fails once (the second repeat) on 4.11.0 / 0.7.0b3;
    - one campaign per cell and repeat.
    """
    tests = [
        f"unified/change-streams::Test {name}"
        for name in ("aggregate", "watch on a database", "resume token", "split large event")
    ]
    tests += [
        REGRESSED,
        FIXED,
        FLAKY,
        "legacy/change-streams-errors::Change Stream should error when _id is projected out",
        "legacy/change-streams::Test single server topology",
    ]
    out, minute = [], 0
    for driver in DRIVERS:
        for target in TARGETS:
            for repeat in range(1, repeats + 1):
                run_id, minute = f"run-{driver}-{target}-r{repeat}", minute + 10
                labels = {"matrix": "m1", "cell": f"pymongo-{driver}+secantusdb-{target}", "repeat": str(repeat)}
                for index, test_id in enumerate(tests):
                    outcome, message = "passed", ""
                    if test_id == REGRESSED and driver != "4.9.0":
                        outcome, message = "failed", REGRESSION_MESSAGE
                    elif test_id == FIXED and target == "0.7.0b3":
                        outcome, message = "failed", "expected 2 events, got 1 at $.events[1]"
                    elif test_id == FLAKY and driver == "4.11.0" and target == "0.7.0b3" and repeat == 2:
                        outcome, message = "error", "timed out after 10.0s waiting for a change"
                    elif test_id.endswith("single server topology"):
                        outcome, message = "skipped", "topology replicaset not in ['single']"
                    out.append(
                        record(
                            test_id,
                            outcome,
                            message,
                            run_id=run_id,
                            driver_version=driver,
                            target_version=target,
                            labels=labels,
                            started_at=at(minute + index / 60),
                        )
                    )
                out.append(
                    record(
                        "campaign/campaign::seed=42 events=1000",
                        "passed",
                        "",
                        run_id=run_id + "-c",
                        fmt="campaign",
                        driver_version=driver,
                        target_version=target,
                        labels=labels,
                        started_at=at(minute + 1),
                        details={
                            "events": 1000,
                            "resumes": 4,
                            "disallowed_errors": 0,
                            "faults": [{"kind": "resumable_error"}] * 5,
                            "anomalies": [],
                        },
                    )
                )
    return out
