"""reports.versions: versions ordered as versions (not text), through a small broadcast dimension table."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark", reason="the report job needs PySpark (pip install -e '.[reports]')")

from reports.versions import ordered_versions, version_key
from tests.spark_support import record, records_frame, rows


def test_pre_releases_come_before_the_release():
    assert sorted(["0.7.0", "0.7.0b3", "0.7.0b2"], key=version_key) == ["0.7.0b2", "0.7.0b3", "0.7.0"]


def test_numeric_parts_compare_as_numbers():
    assert sorted(["4.10", "4.9", "4.9.1", "4.11.0"], key=version_key) == ["4.9", "4.9.1", "4.10", "4.11.0"]


def test_pep440_phases_and_server_versions():
    versions = [
        "1.0.post1",
        "1.0",
        "1.0rc1",
        "1.0a1",
        "1.0.dev1",
        "1.0b2",
        "8.2.11",
        "8.0.0-rc1",
        "8.0.0",
        "7.0.0-alpha0",
    ]
    assert sorted(versions, key=version_key) == [
        "1.0.dev1",
        "1.0a1",
        "1.0b2",
        "1.0rc1",
        "1.0",
        "1.0.post1",
        "7.0.0-alpha0",
        "8.0.0-rc1",
        "8.0.0",
        "8.2.11",
    ]


def test_unparseable_versions_sort_last_and_equal_versions_share_a_rank():
    assert ordered_versions(["unknown", "1.0.0", "1.0", "0.9"]) == [
        ("0.9", 1),
        ("1.0", 2),
        ("1.0.0", 2),
        ("unknown", 3),
    ]


def test_dimension_is_joined_back_with_a_broadcast(spark):
    from reports.normalise import verdicts_from_records
    from reports.versions import version_dimension, with_version_rank

    verdicts = verdicts_from_records(
        records_frame(
            spark,
            [
                record(driver_version=v, target_version=t, run_id=f"{v}-{t}")
                for v, t in [("4.10", "0.7.0"), ("4.9", "0.7.0b3"), ("4.9", "0.7.0b2")]
            ],
        )
    )
    dimension = version_dimension(spark, verdicts, ["driver_version", "target_version"])
    ranked = with_version_rank(verdicts, "driver_version", dimension, "driver_rank")
    ranked = with_version_rank(ranked, "target_version", dimension, "target_rank")
    assert "BroadcastHashJoin" in ranked._jdf.queryExecution().executedPlan().toString()
    got = rows(ranked, "driver_version", "driver_rank", "target_version", "target_rank")
    by_driver = {d: r for d, r, _, _ in got}
    by_target = {t: r for _, _, t, r in got}
    assert by_driver["4.9"] < by_driver["4.10"]
    assert by_target["0.7.0b2"] < by_target["0.7.0b3"] < by_target["0.7.0"]
