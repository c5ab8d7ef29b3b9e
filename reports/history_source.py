"""Where ``harness history`` and ``harness query`` read a history from, and the Spark session they read it in.

A history is a folder written by ``harness report --append-to DIR`` (its verdicts in ``DIR/verdicts``), a
report's ``--out`` folder (``OUT/verdicts``), or a verdicts folder itself. This module is imported while the
parser is built, so it must not import pyspark: the session and the reading happen in :func:`history_session`.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from reports.cli import add_session_arguments
from reports.discover import VERDICTS_MARKER
from reports.input_size import InputSize, directory_bytes

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: The default window of a flip-flop (reports.timelines.flip_flops), in days up to the history's latest run.
FLIP_FLOP_DAYS = 30
#: The default of ``--history``.
HISTORY_VARIABLE = "HARNESS_HISTORY"


class NoHistory(RuntimeError):
    pass


def add_history_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--history",
        type=Path,
        default=os.environ.get(HISTORY_VARIABLE) or None,
        metavar="DIR",
        help=f"the history: a folder written by harness report --append-to (default: ${HISTORY_VARIABLE})",
    )
    add_session_arguments(parser)


def verdicts_folder(history: Path | None) -> Path:
    """The folder of normalised verdicts ``history`` names; raises :class:`NoHistory` saying what was looked for."""
    if history is None:
        raise NoHistory(f"no history given: --history DIR (or ${HISTORY_VARIABLE})")
    for folder in (Path(history) / "verdicts", Path(history)):
        if (folder / VERDICTS_MARKER).exists():
            return folder.resolve()
    raise NoHistory(
        f"{history}: not a history (no {VERDICTS_MARKER} in it or in its verdicts/; "
        "harness report --append-to DIR writes one)"
    )


@contextmanager
def history_session(
    args: argparse.Namespace, server_state: Path | None = None
) -> Iterator[tuple[SparkSession, DataFrame]]:
    """A session (local, ``--master`` or ``--remote``) and the history's verdicts read in it."""
    from reports.cli import check_connect_client, check_runtime
    from reports.read import read_verdicts
    from reports.session import report_session
    from reports.spark_server import token_for

    folder = verdicts_folder(args.history)
    small = InputSize(0, directory_bytes(folder)).small
    if args.remote is not None:
        if args.master is not None:
            raise NoHistory("--master and --remote exclude each other")
        check_connect_client(args.remote)
        session = report_session(small=small, remote=args.remote, token=token_for(args.remote, server_state))
    else:
        check_runtime()
        session = report_session(args.master, small=small)
    with session as spark:
        yield spark, read_verdicts(spark, [str(folder)])
