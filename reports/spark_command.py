"""``harness spark start|stop|status``: the command line of :mod:`reports.spark_server`.

Imported by ``harness``'s parser, so plain Python: it starts a JVM through
PySpark's own script and never imports pyspark. The harness supplies the
folder the server's record, pid file and log live in (its cache).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reports.spark_server import (
    LOOPBACK,
    START_TIMEOUT_S,
    SparkServerError,
    check_bind_address,
    read_status,
    start,
    stop,
)


def add_spark_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="spark_action", required=True)
    begin = actions.add_parser(
        "start", help="start a Spark Connect server on 127.0.0.1 (harness report --remote sc://127.0.0.1:PORT)"
    )
    begin.add_argument("--port", type=int, default=None, help="its port (default: a free one)")
    begin.add_argument(
        "--host",
        default=LOOPBACK,
        help="the address to bind: 127.0.0.1, the only one accepted (run a server elsewhere yourself)",
    )
    begin.add_argument("--timeout", type=float, default=START_TIMEOUT_S, help="seconds to wait for it to accept")
    actions.add_parser("stop", help="stop the server harness spark start started (nothing left running)")
    actions.add_parser("status", help="whether it runs, its URL, pid and log; a stale record is named and removed")


def command_spark(args: argparse.Namespace, state_dir: Path) -> int:
    """0 on success; 1 from ``status`` when no server runs; 2 when it could not be started or stopped."""
    try:
        if args.spark_action == "start":
            return _start(args, state_dir)
        if args.spark_action == "stop":
            return _stop(state_dir)
        return _status(state_dir)
    except SparkServerError as exc:
        print(f"harness spark: {exc}", file=sys.stderr)
        return 2


def _start(args: argparse.Namespace, state_dir: Path) -> int:
    check_bind_address(args.host)
    before = read_status(state_dir)
    if before.stale and before.record is not None:
        print(f"harness spark: removed a stale record (pid {before.record.pid} is gone)", file=sys.stderr)
    record, started = start(state_dir, args.port, timeout=args.timeout)
    print(f"{'started' if started else 'already running'}: {record.url} (pid {record.pid}, log {record.log})")
    print(f"use it: harness report --remote {record.url} ...  (or export HARNESS_SPARK_REMOTE={record.url})")
    return 0


def _stop(state_dir: Path) -> int:
    status = stop(state_dir)
    if status.record is None:
        print("no Spark Connect server recorded; nothing to stop")
    elif status.stale:
        print(f"the recorded server (pid {status.record.pid}) was not running; its record is removed")
    else:
        print(f"stopped: {status.record.url} (pid {status.record.pid})")
    return 0


def _status(state_dir: Path) -> int:
    status = read_status(state_dir)
    if status.record is None:
        print("not running (start one with: harness spark start)")
        return 1
    if status.stale:
        stop(state_dir)
        print(f"not running: the recorded server (pid {status.record.pid}) is gone; its record is removed")
        return 1
    record = status.record
    print(f"running: {record.url} (pid {record.pid}, since {record.started}, log {record.log})")
    return 0
