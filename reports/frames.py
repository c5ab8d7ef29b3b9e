"""Small helpers every aggregation shares.

The report's tables are small (bounded by tests x cells), so they are
sorted in one partition: ``orderBy`` on a tiny table costs an extra Spark job
(a sample to range-partition it), which is most of the time of a small report.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F


def sorted_table(table: DataFrame, *order: str | Column) -> DataFrame:
    """``table`` in one partition, sorted by ``order`` (for the final, small tables only)."""
    return table.coalesce(1).sortWithinPartitions(*order)


def distinct_values(column: str, separator: str = ", ") -> Column:
    """Every distinct value of ``column`` in a group, sorted and joined into one text."""
    return F.array_join(F.array_sort(F.collect_set(column)), separator)
