"""Each test along each version axis: status per version, the first version it passes, regressions and fixes.

An axis is a version column; the context is everything else in the cell
(for ``driver_version``, the target; for ``target_version``, the driver), so
a test is compared only with itself in the same configuration. Versions are
ordered through :mod:`reports.versions`, never by text. A regression is a
version where the test fails (or is flaky) while it passed at the previous
decided version; a fix is the reverse. Both carry the failure message. A
test that is skipped at one version and runs at the next (``now runs``: a
server that starts reporting a newer version, say) or the reverse (``no
longer runs``) is a change too, carrying the skip reason: coverage that
appears or vanishes between releases is news a matrix must show.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from reports.conformance import CONFIGURED
from reports.frames import sorted_table
from reports.normalise import UNKNOWN, cell_name
from reports.outcomes import COUNTS, latest_failure_message, latest_skip_reason, outcome_counts, with_rates
from reports.versions import with_version_rank

#: The version axes the report follows (each one is a verdict column).
AXES = ("driver_version", "target_version")
KEYS = ("axis", "context", "test_id")


def version_status(verdicts: DataFrame, dimension: DataFrame, per_test: DataFrame | None = None) -> DataFrame:
    """One row per axis x context x test x version: counts, status and the latest failure message.

    From ``per_test`` (:func:`reports.conformance.per_cell_test` of the same verdicts) when given: a context
    and a version are one configuration, so each of its rows is one axis x context x test x version.
    """
    frames = []
    for axis in AXES:
        if per_test is None:
            known = verdicts.where(F.col(axis).isNotNull() & (F.col(axis) != UNKNOWN))
            grouped = known.groupBy(
                F.lit(axis).alias("axis"),
                cell_name(omit=axis).alias("context"),
                "test_id",
                F.col(axis).alias("version"),
            ).agg(F.min("test").alias("test"), *outcome_counts(), latest_failure_message(), latest_skip_reason())
        else:
            known = per_test.where(F.col(axis).isNotNull() & (F.col(axis) != UNKNOWN))
            context = cell_name(omit=axis, configured=F.col(CONFIGURED))
            grouped = known.select(
                F.lit(axis).alias("axis"),
                context.alias("context"),
                "test_id",
                F.col(axis).alias("version"),
                "test",
                *COUNTS,
                "message",
                "skip_reason",
            )
        frames.append(grouped)
    stacked = frames[0]
    for frame in frames[1:]:
        stacked = stacked.unionByName(frame)
    return sorted_table(with_version_rank(with_rates(stacked), "version", dimension), *KEYS, "version_rank")


def keys_fit(per_test: DataFrame) -> bool:
    """Whether every row of ``per_test`` is one cell x test and, on each axis, one context x test x version.

    It always is unless two configurations render to the same name (a name or version with spaces in it
    can make ``a b`` + ``c`` read as ``a`` + ``b c``); then the tables are counted from the verdicts instead.
    One small job over the (cached) aggregate.
    """
    known = {axis: F.col(axis).isNotNull() & (F.col(axis) != UNKNOWN) for axis in AXES}
    figures = per_test.agg(
        F.count("*").alias("rows"),
        F.count_distinct("cell", "test_id").alias("cell_tests"),
        *[F.count_if(known[axis]).alias(f"{axis}_rows") for axis in AXES],
        *[
            F.count_distinct(
                F.when(known[axis], F.struct(cell_name(omit=axis, configured=F.col(CONFIGURED)), "test_id", axis))
            ).alias(f"{axis}_keys")
            for axis in AXES
        ],
    ).first()
    return figures["rows"] == figures["cell_tests"] and all(
        figures[f"{axis}_rows"] == figures[f"{axis}_keys"] for axis in AXES
    )


def _version_where(condition: Column, pick: str = "min") -> Column:
    """The version (lowest or highest rank) among the rows meeting ``condition``; null when none does."""
    chosen = getattr(F, pick)(F.when(condition, F.struct("version_rank", "version")))
    return chosen["version"]


def first_pass(status: DataFrame) -> DataFrame:
    """One row per axis x context x test: the first version where it passes, and the versions tested."""
    return sorted_table(
        status.groupBy(*KEYS).agg(
            F.min("test").alias("test"),
            _version_where(F.col("status") == "pass").alias("first_pass_version"),
            _version_where(F.col("status") != "skip").alias("first_version"),
            _version_where(F.col("status") != "skip", "max").alias("last_version"),
            F.count_if(F.col("status") != "skip").alias("versions_decided"),
        ),
        *KEYS,
    )


#: The kinds of change between consecutive versions, in the order the table lists them.
CHANGES = ("regression", "fix", "now runs", "no longer runs")


def transitions(status: DataFrame) -> DataFrame:
    """Regressions and fixes between consecutive decided versions, and tests that start or stop running.

    Regressions and fixes compare with the previous *decided* version (skips in between are passed
    over); ``now runs`` and ``no longer runs`` compare with the previous version, whatever it did.
    """
    order = Window.partitionBy(*KEYS).orderBy("version_rank", "version")
    earlier = order.rowsBetween(Window.unboundedPreceding, -1)
    decided = F.col("status") != "skip"
    seen = F.struct("version", "status", "message", "skip_reason")
    prior_decided = F.last(F.when(decided, seen), ignorenulls=True).over(earlier)
    prior = F.lag(seen).over(order)
    marked = status.withColumn("prior_decided", prior_decided).withColumn("prior", prior)
    was, was_decided = F.col("prior"), F.col("prior_decided")
    regression = (was_decided["status"] == "pass") & F.col("status").isin("fail", "flaky")
    fix = was_decided["status"].isin("fail", "flaky") & (F.col("status") == "pass")
    now_runs = (was["status"] == "skip") & decided
    stopped = was["status"].isNotNull() & (was["status"] != "skip") & ~decided
    change = (
        F.when(regression, "regression").when(fix, "fix").when(now_runs, "now runs").when(stopped, "no longer runs")
    )
    by_decided = regression | fix
    changes = (
        marked.withColumn("change", change)
        .where(F.col("change").isNotNull())
        .select(
            *KEYS,
            "test",
            "version",
            "version_rank",
            "change",
            F.when(by_decided, was_decided["version"]).otherwise(was["version"]).alias("previous_version"),
            F.when(by_decided, was_decided["status"]).otherwise(was["status"]).alias("previous_status"),
            "status",
            F.when(regression, F.col("message"))
            .when(fix, was_decided["message"])
            .when(now_runs, was["skip_reason"])
            .otherwise(F.col("skip_reason"))
            .alias("message"),
            _change_order(F.col("change")).alias("change_order"),
        )
    )
    return sorted_table(changes, "change_order", *KEYS, "version_rank").drop("change_order")


def _change_order(change: Column) -> Column:
    ordered = F.lit(len(CHANGES))
    for index, name in reversed(list(enumerate(CHANGES))):
        ordered = F.when(change == name, index).otherwise(ordered)
    return ordered
