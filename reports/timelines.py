"""A test's status across runs: timelines, the first run of each change, and flip-flops.

A *configuration* is a cell without its versions (``pymongo [next] / secantusdb replicaset native``): the
versions are what changes between the runs of one configuration, so a version bump is a step of one timeline,
not the start of another (a cell names its versions, so a cell's timeline could never show one changing).
A test's status in a run is :func:`reports.outcomes.status` of its verdicts in that run (a test repeated within
a run that both passed and failed is ``flaky`` there). The *previous* status of a run is the status of the
configuration x test's latest earlier run that decided the test (a skip neither changes a status nor starts a
change); a run *changes* status when it decided the test and that differs from the previous status.

Everything is computed with window functions over (configuration, test) in time order, on the executors:
nothing is collected here. :func:`first_changes` only orders the configuration x tests that can change at all
(those with both a passing and a failing verdict: any change between ``pass``, ``fail`` and ``flaky`` needs
both), found by a hash aggregate first, as :mod:`reports.conformance` does for ``flakiness``.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from reports.frames import sorted_table
from reports.history_source import FLIP_FLOP_DAYS
from reports.normalise import UNKNOWN, network_faults_configured
from reports.outcomes import is_failure, latest_failure, status

#: The parts of a configuration's name: a cell's (reports.normalise.CELL_PARTS) without the two version axes.
CONFIGURATION_PARTS = ("driver_name", "iteration_mode", "/", "target_name", "topology", "failpoints", "network_faults")
#: The versions a timeline shows per run; a change's ``changed_versions`` names those that differ from the run before.
VERSIONS = ("driver_version", "target_version", "server_version")
FAILING_STATUSES = ("fail", "flaky")
KEYS = ("configuration", "test_id")


def configuration_name() -> Column:
    """A verdict's configuration: its cell's name without the driver and target versions."""
    rendering = {
        "/": F.lit("/"),
        "iteration_mode": F.concat(F.lit("["), F.nullif(F.col("iteration_mode"), F.lit("")), F.lit("]")),
        "failpoints": F.col("failpoints"),
        "network_faults": F.when(network_faults_configured(), F.lit("+netfaults")),
    }
    parts = [rendering.get(part, F.coalesce(F.col(part), F.lit(UNKNOWN))) for part in CONFIGURATION_PARTS]
    return F.concat_ws(" ", *parts)


def with_configuration(verdicts: DataFrame) -> DataFrame:
    """``verdicts`` with their ``configuration`` (:func:`configuration_name`)."""
    return verdicts.withColumn("configuration", configuration_name())


def run_statuses(configured: DataFrame) -> DataFrame:
    """One row per configuration x test x run of ``configured`` verdicts (:func:`with_configuration`): its status
    there, the run's versions and its latest failure."""
    failures = F.count_if(is_failure())
    grouped = configured.groupBy(*KEYS, "run_id").agg(
        F.min("started_at").alias("started_at"),
        F.max("cell").alias("cell"),
        F.max("driver_name").alias("driver_name"),
        F.max("target_name").alias("target_name"),
        *[F.max(version).alias(version) for version in VERSIONS],
        F.count_if(F.col("outcome") == "passed").alias("passed"),
        failures.alias("failed"),
        F.count_if(F.col("outcome") == "skipped").alias("skipped"),
        F.max("rules").alias("rules"),
        *latest_failure()[:2],
    )
    return grouped.withColumn("status", status(F.col("passed"), F.col("failed")))


def _in_time() -> Window:
    return Window.partitionBy(*KEYS).orderBy(F.col("started_at").asc_nulls_first(), "run_id")


def timelines(verdicts: DataFrame) -> DataFrame:
    """Every configuration x test x run in time order: ``run_number`` (1 = its first run), the run's status and
    versions, the previous decided run's status and run id, whether the run ``changed`` status, and the latest
    failure's message and causes (JSON text)."""
    return _timelines(with_configuration(verdicts))


def _timelines(configured: DataFrame) -> DataFrame:
    runs = run_statuses(configured)
    earlier = _in_time().rowsBetween(Window.unboundedPreceding, -1)
    decided = F.when(F.col("status") != "skip", F.struct("status", "run_id", "started_at", *VERSIONS))
    previous = F.last(decided, ignorenulls=True).over(earlier)
    with_previous = runs.select("*", F.row_number().over(_in_time()).alias("run_number"), previous.alias("previous"))
    changed = (
        (F.col("status") != "skip") & F.col("previous").isNotNull() & (F.col("status") != F.col("previous.status"))
    )
    return with_previous.select(
        *KEYS,
        "run_number",
        "run_id",
        "started_at",
        "cell",
        "driver_name",
        "target_name",
        *VERSIONS,
        "status",
        "passed",
        "failed",
        "skipped",
        F.col("previous.status").alias("previous_status"),
        F.col("previous.run_id").alias("previous_run_id"),
        F.col("previous.started_at").alias("previous_at"),
        *[F.col(f"previous.{version}").alias(f"previous_{version}") for version in VERSIONS],
        F.coalesce(changed, F.lit(False)).alias("changed"),
        "message",
        "causes",
        "rules",
    )


def can_change(configured: DataFrame) -> DataFrame:
    """The configuration x tests with both a passing and a failing verdict (a hash aggregate, numeric buffers)."""
    counts = configured.groupBy(*KEYS).agg(
        F.count_if(F.col("outcome") == "passed").alias("passed"), F.count_if(is_failure()).alias("failed")
    )
    return counts.where((F.col("passed") > 0) & (F.col("failed") > 0)).select(*KEYS)


def changed_versions() -> Column:
    """``driver_version 4.9.0 -> 4.10.0; server_version ...``: the versions that differ from the previous run's
    (null when none did)."""
    parts = [
        F.when(
            ~F.col(version).eqNullSafe(F.col(f"previous_{version}")),
            F.concat_ws(
                " ",
                F.lit(version),
                F.coalesce(F.col(f"previous_{version}"), F.lit(UNKNOWN)),
                F.lit("->"),
                F.coalesce(F.col(version), F.lit(UNKNOWN)),
            ),
        )
        for version in VERSIONS
    ]
    return F.nullif(F.concat_ws("; ", *parts), F.lit(""))


def first_changes(verdicts: DataFrame) -> DataFrame:
    """One row per change of a configuration x test's status: the first run with the new status (``change``:
    ``pass -> fail``), whether it ``started_failing`` (from ``pass`` to ``fail`` or ``flaky``), the run before it,
    the versions that changed between them, and this run's failure message and causes."""
    configured = with_configuration(verdicts)
    changing = configured.join(F.broadcast(can_change(configured)), list(KEYS), "left_semi")
    changes = _timelines(changing).where("changed")
    return sorted_table(
        changes.select(
            *KEYS,
            "run_id",
            "started_at",
            "run_number",
            F.concat_ws(" -> ", "previous_status", "status").alias("change"),
            ((F.col("previous_status") == "pass") & F.col("status").isin(*FAILING_STATUSES)).alias("started_failing"),
            "previous_run_id",
            "previous_at",
            changed_versions().alias("changed_versions"),
            "cell",
            *VERSIONS,
            *[f"previous_{version}" for version in VERSIONS],
            "message",
            "causes",
            "rules",
        ),
        *KEYS,
        "started_at",
        "run_id",
    )


def flip_flops(changes: DataFrame, latest: Column, days: int = FLIP_FLOP_DAYS) -> DataFrame:
    """The configuration x tests that changed status more than once in the ``days`` up to ``latest`` (the time of
    the history's latest run, one row's value): how many changes, the first and last, the changes in order."""
    since = latest - F.make_interval(days=F.lit(days))
    recent = changes.where(F.col("started_at") >= since)
    in_order = F.array_sort(F.collect_list(F.struct("started_at", "run_id", "change")))
    grouped = recent.groupBy(*KEYS).agg(
        F.count("*").alias("changes"),
        F.min("started_at").alias("first_change_at"),
        F.max("started_at").alias("last_change_at"),
        F.array_join(F.transform(in_order, lambda change: change["change"]), ", ").alias("sequence"),
        F.max("rules").alias("rules"),
    )
    return sorted_table(
        grouped.where(F.col("changes") > 1).withColumn("window_days", F.lit(days)),
        F.col("changes").desc(),
        *KEYS,
    )


def latest_run(verdicts: DataFrame) -> Column:
    """The time of the latest verdict, as a column of one value (a scalar subquery)."""
    return verdicts.select(F.max("started_at")).scalar()
