"""``harness query "SELECT ..."``: Spark SQL over named views of a history, printed as a table or CSV.

The views and their columns: docs/reports.md ("Questions in SQL"), reports/query_views.py. This module only
parses the command line and prints; Spark is imported when the command runs, never while parsing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reports.history_source import FLIP_FLOP_DAYS, NoHistory, add_history_arguments

#: Most rows printed as a table (``--csv`` prints every row).
TABLE_ROWS = 1_000


def add_query_command_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "sql",
        metavar="SQL",
        help="a Spark SQL query over the views verdicts, runs, cells, cell_tests, causes, timelines, first_changes, "
        "flip_flops, rule_scores, exclusive_failures (docs/reports.md, 'Questions in SQL')",
    )
    parser.add_argument("--csv", action="store_true", help="print CSV (every row) instead of a table")
    parser.add_argument(
        "--window-days",
        type=int,
        default=FLIP_FLOP_DAYS,
        metavar="N",
        help=f"flip_flops: changes within N days of the history's latest run (default {FLIP_FLOP_DAYS})",
    )
    add_history_arguments(parser)


def command_query(args: argparse.Namespace, server_state: Path | None = None) -> int:
    """Print the answer; 0 when printed, 2 on bad input or a query Spark refuses (its message said)."""
    from pyspark.errors import PySparkException

    from reports.cli import ConnectClientMissing, PySparkMissing
    from reports.java import JavaMissing

    try:
        from reports.history_source import history_session

        with history_session(args, server_state) as (spark, verdicts):
            from reports.query_views import query

            try:
                answer = query(spark, verdicts, args.sql, args.window_days)
                columns = answer.columns
                taken = answer if args.csv else answer.limit(TABLE_ROWS + 1)
                rows = [tuple(row) for row in taken.collect()]
            except PySparkException as exc:
                said = next((line for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
                print(f"harness query: {said}", file=sys.stderr)
                return 2
    except (NoHistory, PySparkMissing, JavaMissing, ConnectClientMissing) as exc:
        print(f"harness query: {exc}", file=sys.stderr)
        return 2
    from reports.text_table import csv_text, text_table

    if args.csv:
        sys.stdout.write(csv_text(columns, rows))
        return 0
    print(text_table(columns, rows[:TABLE_ROWS]))
    if len(rows) > TABLE_ROWS:
        print(f"(the first {TABLE_ROWS} rows; --csv prints every one)")
    return 0
