"""The shared aggregates (numeric hash aggregates, messages joined back, runs from test bitmaps) equal the
straightforward ``groupBy`` of the verdicts, on data made to trip them: ties in time with different messages,
verdicts without a time, groups only skipped, a test run twice in one run, verdicts without a run id, and more
than 64 tests in a cell (test bitmaps of several words).
"""

from __future__ import annotations

import pytest

from tests.spark_support import at, record, verdicts_frame

#: More tests than one word of the bitmap holds.
MANY = 70


@pytest.fixture(scope="module")
def verdicts(spark):
    from pyspark.sql import functions as F

    tied, untimed = "unified/cs::tied", "unified/cs::untimed"
    recs = [record(f"unified/many::t{n:03}", "passed", run_id=f"r{n % 3}", started_at=at(n)) for n in range(MANY)]
    recs += [
        record(f"unified/many::t{n:03}", "passed", run_id="r0", started_at=at(n)) for n in [*range(0, MANY, 7), 62]
    ]
    recs += [
        # equal times, different messages: the greatest message of the latest time is the latest message
        record(tied, "failed", "b: late", run_id="r1", started_at=at(5)),
        record(tied, "error", "c: late", run_id="r2", started_at=at(5)),
        record(tied, "failed", "z: early", run_id="r0", started_at=at(1)),
        record(tied, "passed", run_id="r3", started_at=at(3)),
        record(tied, "passed", run_id="r4", started_at=at(5)),
        record(tied, "skipped", "skip a", run_id="r1", started_at=at(7)),
        record(tied, "skipped", "skip b", run_id="r2", started_at=at(7)),
        # the same test twice in one run, equal in time, run id and repeat: passes first in time order
        record(tied, "failed", "d: same moment", run_id="r5", started_at=at(4)),
        record(tied, "passed", run_id="r5", started_at=at(4)),
        # failing and skipped without a time (null started_at, below), beside timed ones
        record(untimed, "failed", "notime a", run_id="r1"),
        record(untimed, "failed", "notime b", run_id="r2"),
        record(untimed, "passed", run_id="r3", started_at=at(2)),
        record(untimed, "skipped", "notime skip", run_id="r3"),
        # only skipped, in two runs, one of them twice
        record("legacy/skips::only", "skipped", "needs single", run_id="r1", started_at=at(1)),
        record("legacy/skips::only", "skipped", "needs single too", run_id="r1", started_at=at(1)),
        record("legacy/skips::only", "skipped", run_id="r2", started_at=at(2)),
        # another configuration, and a verdict without a run id (no run: runs do not count it)
        record(tied, "failed", "other cell", run_id="r1", driver_version="4.10.0", started_at=at(4)),
        record(tied, "passed", run_id="norun", driver_version="4.10.0", started_at=at(6)),
    ]
    # the latest failure's causes and known-deviation reason come from the verdict its message comes from
    for rec in recs:
        if rec["test_id"] == tied and rec["message"] in ("b: late", "c: late"):
            name = rec["message"][0]
            rec["causes"] = [{"clause": "result", "step": "operations[0]", "path": "", "fact": name, "rules": ["CS-X"]}]
            rec["causes"][0]["known"] = f"t.yml#{name}" if name == "c" else None
            kind = "known-error" if name == "c" else "unexpected-failure"
            rec["expectation"] = {"expected": name == "c", "kind": kind, "reason": f"t.yml#{name}: because {name}"}
    frame = verdicts_frame(spark, recs)
    frame = frame.withColumn(
        "started_at", F.when(F.col("message").startswith("notime"), None).otherwise(F.col("started_at"))
    )
    return frame.withColumn("run_id", F.when(F.col("run_id") != "norun", F.col("run_id"))).cache()


def _straightforward(verdicts):
    """The per cell x test aggregate as one ``groupBy`` and one window over every verdict."""
    from pyspark.sql import functions as F

    from reports.conformance import CELL_AXES, CONFIGURED, in_time
    from reports.normalise import network_faults_configured
    from reports.outcomes import DECIDED, OUTCOMES, is_failure, latest_failure, latest_skip_reason

    decided = F.col("outcome").isin(*DECIDED)
    keys = ["cell", *CELL_AXES, CONFIGURED, "test_id"]
    counted = verdicts.groupBy("cell", *CELL_AXES, network_faults_configured().alias(CONFIGURED), "test_id").agg(
        F.min("spec_file").alias("spec_file"),
        F.min("test").alias("test"),
        F.count_distinct("run_id").alias("runs"),
        F.count("*").alias("verdicts"),
        *[F.count_if(F.col("outcome") == outcome).alias(outcome) for outcome in OUTCOMES],
        *latest_failure(),
        latest_skip_reason(),
        F.min(F.when(decided, F.col("test"))).alias("decided_test"),
    )
    ordered = verdicts.where(decided).select(
        *[c for c in keys if c != CONFIGURED],
        "started_at",
        "run_id",
        "repeat",
        network_faults_configured().alias(CONFIGURED),
        is_failure().alias("failure"),
    )
    changes = ordered.withColumn("changed", F.col("failure") != F.lag("failure").over(in_time(*keys)))
    transitions = changes.groupBy(*keys).agg(F.count_if("changed").alias("transitions"))
    # null-safe: an axis may be null (a verdict without an iteration mode)
    same = [counted[key].eqNullSafe(transitions[key]) for key in keys]
    joined = counted.join(transitions, same, "left").select(counted["*"], transitions["transitions"])
    return joined.withColumn("transitions", F.coalesce("transitions", F.lit(0)))


def _sorted(frame, *order):
    return sorted((row.asDict() for row in frame.collect()), key=lambda row: tuple(str(row[c]) for c in order))


def test_the_shared_aggregate_equals_the_straightforward_group_by(verdicts):
    from reports.conformance import per_cell_test

    shared = per_cell_test(verdicts)
    expected = _straightforward(verdicts).select(*shared.columns)
    got, want = _sorted(shared, "cell", "test_id"), _sorted(expected, "cell", "test_id")
    assert got == want
    by_test = {(row["cell"].split(" ")[1], row["test_id"]): row for row in got}
    tied = by_test[("4.9.0", "unified/cs::tied")]
    # the greatest message among the latest failures, the greatest skip reason of the latest skips
    assert (tied["message"], tied["skip_reason"], tied["runs"], tied["verdicts"]) == ("c: late", "skip b", 6, 9)
    assert '"fact":"c"' in tied["causes"] and tied["known_deviation"] == "t.yml#c: because c"
    assert tied["transitions"] == 3  # in time order: z(1) pass(3) pass, d(4, one moment) b, c, pass(5, by run)
    untimed = by_test[("4.9.0", "unified/cs::untimed")]
    assert (untimed["message"], untimed["skip_reason"]) == ("notime b", "notime skip")
    only_skipped = by_test[("4.9.0", "legacy/skips::only")]
    assert (only_skipped["runs"], only_skipped["message"], only_skipped["decided_test"]) == (2, None, None)
    assert by_test[("4.10.0", "unified/cs::tied")]["runs"] == 1  # the verdict without a run id is no run
    many = {
        n: (
            by_test[("4.9.0", f"unified/many::t{n:03}")]["runs"],
            by_test[("4.9.0", f"unified/many::t{n:03}")]["verdicts"],
        )
        for n in (7, 8, 62, 63)
    }
    assert many == {7: (2, 2), 8: (1, 1), 62: (2, 2), 63: (1, 2)}  # 62 and 63 are in the bitmap's second word


def test_tables_from_run_parts_equal_those_from_the_verdicts(spark, verdicts):
    from reports import axes, conformance, history
    from reports.versions import version_dimension

    counts = conformance.per_key_counts(verdicts)
    parts = conformance.run_parts(verdicts, conformance.test_index(counts))
    versions = version_dimension(spark, verdicts, list(axes.AXES))
    assert version_dimension(spark, parts, list(axes.AXES)).collect() == versions.collect()
    pairs = [
        (conformance.cells(verdicts, versions, parts), conformance.cells(verdicts, versions)),
        (conformance.cell_files(verdicts, parts), conformance.cell_files(verdicts)),
        (history.runs(verdicts, parts), history.runs(verdicts)),
    ]
    for from_parts, direct in pairs:
        assert from_parts.schema == direct.schema
        assert from_parts.collect() == direct.collect()
    assert parts.count() < verdicts.count()


def test_blame_from_the_shared_aggregate_equals_blame_from_the_verdicts(spark, verdicts):
    from reports import blame, conformance

    per_test = conformance.per_cell_test(verdicts)
    shared, direct = blame.cell_statuses(verdicts, per_test), blame.cell_statuses(verdicts)
    assert shared.schema == direct.schema
    assert _sorted(shared, "cell", "test_id") == _sorted(direct, "cell", "test_id")
    assert blame.blame(verdicts, per_test).collect() == blame.blame(verdicts).collect()


def test_the_large_inputs_aggregate_by_hashing(verdicts):
    """The aggregates that read every verdict (the ones that count them) hash: no sort-based or object aggregate.

    (The roll-up of :func:`per_key_counts`' few rows takes the smallest name, and may sort them.)
    """
    from reports import conformance

    counts = conformance.per_key_counts(verdicts)
    parts = conformance.run_parts(verdicts, conformance.test_index(counts))
    for frame in (counts, parts):
        plan = frame._jdf.queryExecution().executedPlan().toString()
        counting = [line.strip(" +-:") for line in plan.splitlines() if "Aggregate(" in line and "count(" in line]
        assert counting, plan
        assert all(line.startswith("HashAggregate(") for line in counting), plan
