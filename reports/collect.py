"""The one place rows come to the Python process: each final table, streamed once.

A written table is read back and streamed a partition at a time
(``toLocalIterator``): every row goes to the table's CSV file, and the first
rows (up to a cap per table; the page says "showing N of M") are kept for the
page and the summary. The tables are bounded by tests x cells, never by the
number of verdicts, and even they are never held whole, so the driver's
memory does not grow with the inputs. Raw verdicts are never collected.
"""

from __future__ import annotations

import csv
import json
from collections import deque
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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


def stream_table(name: str, table: DataFrame, csv_path: Path) -> TableRows:
    """Write every row of ``table`` to ``csv_path`` (with a header) and keep the capped rows for the page."""
    cap = CAPS.get(name, DEFAULT_CAP)
    kept: deque[dict[str, Any]] = deque(maxlen=cap) if name in KEEP_LAST else deque()
    total = 0
    with open(csv_path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(table.columns)
        for row in table.toLocalIterator():
            record = row.asDict(recursive=True)
            writer.writerow([csv_value(record[column]) for column in table.columns])
            total += 1
            if name in KEEP_LAST or len(kept) < cap:
                kept.append(record)
    return TableRows(list(kept), total)
