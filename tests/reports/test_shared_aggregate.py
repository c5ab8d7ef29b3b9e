"""The tables made from one per cell x test aggregate equal the tables counted from the verdicts directly.

``cell_tests``, both version axes of ``version_status`` (and so ``first_pass``
and ``transitions``) and ``flakiness`` are made from
:func:`reports.conformance.per_cell_test` when its rows fit their keys
(:func:`reports.axes.keys_fit`); two configurations whose names collide make
the job count from the verdicts instead.
"""

from __future__ import annotations

from tests.spark_support import at, matrix_records, record, verdicts_frame


def _tables(spark, verdicts, shared: bool):
    from reports import axes, conformance
    from reports.job import Sources, tables_from
    from reports.versions import version_dimension

    versions = version_dimension(spark, verdicts, list(axes.AXES))
    per_test = conformance.per_cell_test(verdicts).cache() if shared else None
    empty = spark.createDataFrame([], "matrix string, cell string, stage string, reason string, at string, file string")
    problems = spark.createDataFrame([], "file string, problem string, lines long, example string")
    return tables_from(Sources(verdicts, None, empty, problems, versions, per_test))


def test_tables_from_the_shared_aggregate_equal_those_counted_from_the_verdicts(spark):
    from reports import axes, conformance

    records = matrix_records(repeats=3)
    records.append(record("unified/change-streams::Test aggregate", "failed", "boom", run_id="x", started_at=at(99)))
    records.append(record("unified/change-streams::Test aggregate", "passed", run_id="x", started_at=at(99)))
    verdicts = verdicts_frame(spark, records)
    assert axes.keys_fit(conformance.per_cell_test(verdicts))
    shared, direct = _tables(spark, verdicts, True), _tables(spark, verdicts, False)
    for name in ("cell_tests", "version_status", "first_pass", "transitions", "flakiness"):
        assert shared[name].schema == direct[name].schema, name
        assert shared[name].collect() == direct[name].collect(), name
    assert any(row["transitions"] for row in shared["flakiness"].collect())
    assert any(row["runs"] < row["verdicts"] for row in shared["cell_tests"].collect())  # a run with a test twice


def test_colliding_configuration_names_do_not_fit(spark):
    from pyspark.sql import functions as F

    from reports import axes, conformance
    from reports.normalise import cell_name

    # Driver "a" at version "b 1" and driver "a b" at version "1" both render as "a b 1 / ...": one name, two
    # configurations, so a cell x test of the aggregate is not one row of cell_tests.
    verdicts = verdicts_frame(
        spark,
        [record("u/f::t", "passed", driver_version="b 1", run_id="r1"), record("u/f::t", "failed", driver_version="1")],
    )
    verdicts = verdicts.withColumn("driver_name", F.when(F.col("driver_version") == "b 1", "a").otherwise("a b"))
    verdicts = verdicts.withColumn("cell", cell_name())
    assert verdicts.select("cell").distinct().count() == 1
    assert not axes.keys_fit(conformance.per_cell_test(verdicts))
