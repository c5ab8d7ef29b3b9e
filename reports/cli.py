"""``harness report``: the command line of the report job.

This module is imported by ``harness``'s parser, so it must not import
pyspark: ``harness run`` never loads Spark. The job's modules are imported
inside :func:`command_report`, after the runtime (PySpark and a Java 17+
JVM) has been checked, so a missing piece is one clear line and exit 2.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from reports.class_archive import class_archive
from reports.discover import InputFiles, discover_inputs
from reports.input_size import InputSize, directory_bytes, input_size
from reports.java import JavaMissing, JavaRuntime, check_java
from reports.spark_server import SparkServerError, token_for

if TYPE_CHECKING:
    from reports.job import ReportResult

#: ``--spark-profile``: picked by size, or either one forced.
PROFILES = ("auto", "small", "large")
PYSPARK_HINT = "install it with `pip install -e '.[reports]'` (PySpark 4, pandas, pyarrow)"
#: The default of ``--remote``: a Spark Connect server every report of this shell uses.
REMOTE_VARIABLE = "HARNESS_SPARK_REMOTE"


def add_session_arguments(parser: argparse.ArgumentParser) -> None:
    """Where a Spark job runs: ``--master`` (a session started here) or ``--remote`` (a Spark Connect server);
    the report, ``harness history`` and ``harness query`` take the same two."""
    parser.add_argument(
        "--master",
        default=None,
        metavar="URL",
        help="Spark master (default local[*]; e.g. spark://host:7077 for a standalone cluster)",
    )
    parser.add_argument(
        "--remote",
        default=os.environ.get(REMOTE_VARIABLE) or None,
        metavar="sc://HOST:PORT",
        help="run the job on this Spark Connect server instead of starting Spark here: the one `harness spark start` "
        f"runs, or any of your own (default: ${REMOTE_VARIABLE}); it reads the inputs and writes at "
        "their paths here, so it must see this machine's files",
    )


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="results files (*.jsonl), JUnit XML from the pytest plugin, or directories of them "
        "(including a verdicts directory written by --append-to)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help="where report.html and tables/ (Parquet and CSV) are written",
    )
    parser.add_argument(
        "--baseline",
        nargs="+",
        default=None,
        metavar="INPUT",
        help="runs to compare with: newly failing, passing, skipped and flaky tests",
    )
    add_session_arguments(parser)
    parser.add_argument("--spark-server-state", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--append-to",
        type=Path,
        default=None,
        metavar="DIR",
        help="add these runs to the history in DIR/verdicts (a run already there is not added "
        "twice) and report over the whole history",
    )
    parser.add_argument(
        "--rule-catalogue",
        type=Path,
        default=None,
        metavar="FILE",
        help="the rule catalogue as JSON (harness report supplies it): write a conformance statement per cell "
        "to OUT/statements/ (docs/certify.md)",
    )
    parser.add_argument(
        "--class-archive",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the driver JVM's class archive is kept (harness supplies its cache folder; "
        "HARNESS_NO_CACHE=1 turns it off): the first report records it, later ones start faster",
    )
    parser.add_argument(
        "--spark-profile",
        choices=PROFILES,
        default="auto",
        help="Spark settings for a small input (interpreted, one partition) or Spark's defaults; auto picks by "
        "the size of everything the report reads (docs/reports.md, 'When the input is small')",
    )
    parser.add_argument("--title", default=None, help="the page's title")
    parser.add_argument(
        "--driver-memory",
        default="2g",
        metavar="SIZE",
        help="memory for the Spark driver JVM in local mode (default 2g)",
    )


class PySparkMissing(RuntimeError):
    pass


def check_runtime() -> JavaRuntime:
    """PySpark importable and a Java it can run on; raises with the fix otherwise."""
    if importlib.util.find_spec("pyspark") is None:
        raise PySparkMissing(f"harness report needs PySpark, which is not installed; {PYSPARK_HINT}")
    return check_java()


class ConnectClientMissing(RuntimeError):
    pass


def check_connect_client(url: str) -> None:
    """A usable ``--remote``: an ``sc://`` URL, and PySpark's Spark Connect client (grpc and friends) installed."""
    if not url.startswith("sc://"):
        raise ConnectClientMissing(f"--remote takes a Spark Connect URL (sc://HOST:PORT), not {url!r}")
    if importlib.util.find_spec("pyspark") is None:
        raise PySparkMissing(f"harness report needs PySpark, which is not installed; {PYSPARK_HINT}")
    from pyspark.sql.connect.utils import check_dependencies

    try:
        check_dependencies()
    except ImportError as exc:
        raise ConnectClientMissing(
            f"harness report --remote needs PySpark's Spark Connect client ({exc}); {PYSPARK_HINT}"
        ) from exc


def command_report(args: argparse.Namespace) -> int:
    """Run the report; 0 on success, 2 when the runtime is missing or an input could not be used."""
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
    remote, token = getattr(args, "remote", None), None
    if remote is not None and args.master is not None:
        print("harness report: --master and --remote exclude each other", file=sys.stderr)
        return 2
    try:
        if remote is None:
            java: JavaRuntime | None = check_runtime()
        else:
            java = None  # no JVM here: the server runs Spark
            check_connect_client(remote)
            token = token_for(remote, getattr(args, "spark_server_state", None))
    except (PySparkMissing, JavaMissing, ConnectClientMissing, SparkServerError) as exc:
        print(f"harness report: {exc}", file=sys.stderr)
        return 2
    found = discover_inputs(args.inputs)
    if found.empty:
        for path, problem in found.problems:
            print(f"harness report: {path}: {problem}", file=sys.stderr)
        print("harness report: no results to report on", file=sys.stderr)
        return 2
    from reports.job import run_report
    from reports.session import report_session

    archive = None if java is None else class_archive(args.class_archive, java.path, java.version)
    small = reads(args, found).small if args.spark_profile == "auto" else args.spark_profile == "small"
    session = (
        report_session(args.master, args.driver_memory, small=small, class_archive=archive)
        if remote is None
        else report_session(small=small, remote=remote, token=token)
    )
    try:
        with session as spark:
            result = run_report(
                spark, args.inputs, args.out, baseline=args.baseline, append_to=args.append_to, title=args.title
            )
        return _print_outcome(args, result)
    finally:
        if archive is not None:
            if archive.pending:
                print(f"harness report: recording the JVM's class archive, once ({archive.path})", file=sys.stderr)
            archive.finish()


def reads(args: argparse.Namespace, found: InputFiles) -> InputSize:
    """Everything the report will read: its inputs, the baseline's and the history it appends to."""
    from reports.history import verdicts_directory

    size = input_size(found)
    if args.baseline:
        size = size + input_size(discover_inputs(args.baseline))
    if args.append_to is not None:
        size = size + InputSize(0, directory_bytes(verdicts_directory(args.append_to)))
    return size


def _print_outcome(args: argparse.Namespace, result: ReportResult) -> int:
    """What the report wrote and found, and its exit status."""
    from reports.summary import headline, summary_lines

    print(f"report: {result.page}")
    print(f"tables: {result.tables_dir} (Parquet and CSV)")
    if result.runs_added is not None:
        print(f"history: {result.runs_added} new run(s) appended to {args.append_to}")
    if result.duplicates:
        print(
            f"duplicates: {result.duplicates} verdict(s) dropped, records another input holds too "
            f"({result.runs_read_twice} run(s) read from more than one input, each counted once)"
        )
    for line in summary_lines(result.tables):
        print(line)
    if getattr(args, "rule_catalogue", None) is not None:
        from reports.statement_files import statements_from_report

        print(statements_from_report(args.rule_catalogue, result.tables, Path(args.out) / "statements"))
    unusable = headline(result.tables).file_problems
    if unusable:
        print(
            f"harness report: {len(unusable)} input(s) could not be used (named above); the report covers the rest",
            file=sys.stderr,
        )
        return 2
    return 0
