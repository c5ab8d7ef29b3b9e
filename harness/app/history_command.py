"""``harness history TEST``: a test's status in every run of a history, and the runs where it changed.

What a timeline is and how it is computed: docs/reports.md ("Timelines"), reports/timelines.py. This module
only parses the command line and prints; Spark is imported when the command runs, never while parsing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reports.history_source import NoHistory, add_history_arguments


def add_history_command_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("test", metavar="TEST", help="the test: its id, its name, or a part of its id")
    parser.add_argument(
        "--cell",
        default=None,
        metavar="TEXT",
        help="only the configurations whose name (a cell without its versions), or a cell's name, contains TEXT",
    )
    add_history_arguments(parser)


def command_history(args: argparse.Namespace, server_state: Path | None = None) -> int:
    """Print the test's timelines; 0 when printed, 1 when no configuration matches, 2 on bad input."""
    from reports.cli import ConnectClientMissing, PySparkMissing
    from reports.java import JavaMissing

    try:
        from reports.history_source import history_session

        with history_session(args, server_state) as (_, verdicts):
            from reports.one_timeline import UnknownTest, find_test, test_timelines, timeline_text

            try:
                test_id = find_test(verdicts, args.test)
            except UnknownTest as exc:
                print(f"harness history: {args.history}: {exc}", file=sys.stderr)
                return 2
            lines = test_timelines(verdicts, test_id, args.cell)
    except (NoHistory, PySparkMissing, JavaMissing, ConnectClientMissing) as exc:
        print(f"harness history: {exc}", file=sys.stderr)
        return 2
    if not lines:
        print(f"harness history: {test_id}: no configuration matches --cell {args.cell!r}", file=sys.stderr)
        return 1
    print("\n\n".join(timeline_text(line) for line in lines))
    return 0
