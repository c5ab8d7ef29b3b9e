"""Failures clustered by error code, code name and message pattern.

A hundred failures with one cause read as one line: the pattern is the
message's first line with numbers, ids, ports and quoted values replaced
(:func:`reports.normalise.message_pattern`), so the same error from many
tests, cells and runs falls into one cluster.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from reports.frames import sorted_table
from reports.outcomes import is_failure

KEYS = ("error_code", "error_code_name", "message_pattern")
#: How many test ids a cluster lists.
LISTED_TESTS = 10


def failure_clusters(verdicts: DataFrame) -> DataFrame:
    """One row per cluster: failures, distinct tests and cells, an example, and up to 10 test ids."""
    example = F.min(F.struct("test_id", "message"))
    clusters = (
        verdicts.where(is_failure())
        .groupBy(*KEYS)
        .agg(
            F.count("*").alias("failures"),
            F.count_distinct("test_id").alias("tests"),
            F.count_distinct("cell").alias("cells"),
            example["test_id"].alias("example_test"),
            example["message"].alias("example_message"),
            F.slice(F.array_sort(F.collect_set("test_id")), 1, LISTED_TESTS).alias("test_ids"),
        )
    )
    return sorted_table(clusters, F.desc("failures"), *KEYS)
