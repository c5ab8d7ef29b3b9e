"""The one place rows come to the Python process: each final table, collected once as Arrow.

A table is computed by one Spark action (``DataFrame.toArrow``: the rows
travel as Arrow batches, not pickled one by one), and everything else is
made from that Arrow table in this process: its Parquet file and its CSV
(:mod:`reports.write`), and the first rows (up to a cap per table; the page
says "showing N of M") kept for the page and the summary. A table computed
once is never read back or recomputed by a second Spark job. The tables are
bounded by tests x cells, never by the number of verdicts; raw verdicts are
never collected.
"""

from __future__ import annotations

import csv
import json
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

DEFAULT_CAP = 2_000
#: Tables the page needs more of (the heat map reads cell_tests; the history plot reads runs).
CAPS = {"cell_tests": 30_000, "version_status": 10_000, "transitions": 10_000, "flakiness": 10_000, "runs": 5_000}
#: Tables whose newest rows matter most: the last rows are kept instead of the first.
KEEP_LAST = {"runs"}


@dataclass
class TableRows:
    """A table's rows as dicts (the first ones, or the last for :data:`KEEP_LAST`) and how many it has in all."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    total: int = 0

    @property
    def truncated(self) -> bool:
        return self.total > len(self.rows)


def csv_value(value: Any) -> Any:
    """A value as a CSV cell: lists as ``a; b``, timestamps in ISO 8601, nested values as JSON, null empty."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "; ".join(value)
    if isinstance(value, (list, dict)):
        return json.dumps(value, default=str)
    return value


def collect_arrow(table: DataFrame) -> pa.Table:
    """The table's rows as one Arrow table: a single Spark action."""
    return table.toArrow()


def python_rows(table: pa.Table) -> Iterator[dict[str, Any]]:
    """Each row as a dict of Python values, as ``DataFrame.collect`` gives them.

    Arrow gives timestamps as aware UTC datetimes; ``collect`` gives naive ones in the process's local
    time, which the page and the CSV have always shown, so they are converted the same way.
    """
    import pyarrow as pa

    stamps = [f.name for f in table.schema if pa.types.is_timestamp(f.type)]
    for batch in table.to_batches():
        for row in batch.to_pylist():
            for name in stamps:
                if row[name] is not None:
                    row[name] = row[name].astimezone().replace(tzinfo=None)
            yield row


def write_csv_and_keep(name: str, table: pa.Table, csv_path: Path) -> TableRows:
    """Write every row of ``table`` to ``csv_path`` (with a header) and keep the capped rows for the page."""
    cap = CAPS.get(name, DEFAULT_CAP)
    kept: deque[dict[str, Any]] = deque(maxlen=cap) if name in KEEP_LAST else deque()
    columns = table.column_names
    with open(csv_path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for record in python_rows(table):
            writer.writerow([csv_value(record[column]) for column in columns])
            if name in KEEP_LAST or len(kept) < cap:
                kept.append(record)
    return TableRows(list(kept), table.num_rows)


def stream_table(name: str, table: DataFrame, csv_path: Path) -> TableRows:
    """Compute ``table`` once, write all of it to ``csv_path`` and keep the capped rows for the page."""
    return write_csv_and_keep(name, collect_arrow(table), csv_path)
