"""Rows as a text table for a terminal, or as CSV: what ``harness history`` and ``harness query`` print.

Values are shown as the report's CSV shows them (:func:`reports.collect.csv_value`: lists as ``a; b``,
timestamps in ISO 8601, nested values as JSON, null empty), so the two forms of one answer say the same.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from reports.collect import csv_value

#: Longest value a text table shows in full (the CSV always has all of it).
WIDEST = 80


def shown(value: Any) -> str:
    text = str(csv_value(value)).replace("\n", " ")
    return text if len(text) <= WIDEST else text[: WIDEST - 3] + "..."


def text_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """``columns`` and ``rows`` aligned in columns, a rule under the heading; "(no rows)" when there are none."""
    cells = [[shown(value) for value in row] for row in rows]
    widths = [max([len(name), *(len(row[i]) for row in cells)]) for i, name in enumerate(columns)]
    lines = ["  ".join(name.ljust(width) for name, width in zip(columns, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * width for width in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    if not rows:
        lines.append("(no rows)")
    return "\n".join(lines)


def csv_text(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """``columns`` and ``rows`` as CSV (a heading line, values as the report's CSV writes them)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([[csv_value(value) for value in row] for row in rows])
    return out.getvalue()
