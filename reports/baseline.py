"""What changed against a baseline set of runs (``--baseline``), per test x cell.

Both sides are summarised to a status per cell x test first (the
``cell_tests`` status: pass, fail, flaky, skip), then compared. A test the
baseline never ran counts as ``absent`` there, so a new failing test is
"newly failing"; tests that are the same on both sides are not listed.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from reports.frames import sorted_table

ABSENT = "absent"

#: change -> (current status, baseline statuses it is a change from).
CHANGES = {
    "newly failing": ("fail", ("pass", "flaky", "skip", ABSENT)),
    "newly passing": ("pass", ("fail", "flaky", "skip")),
    "newly skipped": ("skip", ("pass", "fail", "flaky")),
    "newly flaky": ("flaky", ("pass", "fail", "skip", ABSENT)),
}


def baseline_diff(current_tests: DataFrame, baseline_tests: DataFrame | None) -> DataFrame:
    """One row per test x cell whose status changed; both inputs are ``cell_tests`` tables.

    Without a baseline (``None``) the table is empty, with its columns: nothing was compared.
    """
    compared = baseline_tests is not None
    if baseline_tests is None:
        baseline_tests = current_tests.limit(0)
    baseline = baseline_tests.select(
        "cell", "test_id", F.col("status").alias("baseline_status"), F.col("test").alias("baseline_test")
    )
    joined = current_tests.select("cell", "test_id", "test", "status", "message").join(
        baseline, ["cell", "test_id"], "left"
    )
    was = F.coalesce(F.col("baseline_status"), F.lit(ABSENT))
    change = F.lit(None).cast("string")
    for name, (now, before) in reversed(CHANGES.items()):
        change = F.when((F.col("status") == now) & was.isin(*before), name).otherwise(change)
    changed = joined.select(
        "test_id",
        "cell",
        F.coalesce("test", "baseline_test").alias("test"),
        was.alias("baseline_status"),
        "status",
        change.alias("change"),
        "message",
    ).where(F.col("change").isNotNull() & F.lit(compared))
    return sorted_table(changed, "change", "cell", "test_id")
