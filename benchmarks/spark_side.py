"""The Spark side of the report benchmark: the real job, run as its own process so it is measured alone.

    python benchmarks/spark_side.py /tmp/synth-1m --out /tmp/spark-1m --tables core --timings t.json

It calls the job's own API (``reports.job.compute_tables`` and
``write_tables``) in a session from ``reports.session`` (``local[*]``, the
job's default driver memory unless ``--driver-memory`` says otherwise), so what is measured is what ``harness report``
does, minus the HTML page. Writing the tables is what forces the lazy plan
to run. ``--tables core`` writes the tables the pandas baseline also makes
(the like-for-like ratio); ``--tables all`` writes every table of the job.
Timings: session start, then the job (compute + write) apart, because the
JVM's start is a fixed cost that says nothing about rows per second.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.pandas_baseline import CORE_TABLES
from benchmarks.side_timings import emit_timings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--tables", choices=("core", "all"), default="core")
    parser.add_argument("--master", default=None, help="default: the job's own (local[*])")
    parser.add_argument("--driver-memory", default=None, help="default: the job's own (reports.session)")
    parser.add_argument("--timings", type=Path)
    args = parser.parse_args(argv)

    began = time.perf_counter()
    from reports.session import DRIVER_MEMORY, build_session

    spark = build_session(args.master, args.driver_memory or DRIVER_MEMORY)
    from reports.job import compute_tables, write_tables

    started = time.perf_counter()
    tables = compute_tables(spark, args.inputs)
    if args.tables == "core":
        tables = {name: tables[name] for name in CORE_TABLES}
    write_tables(tables, args.out)
    done = time.perf_counter()
    rows = spark.read.parquet(str(args.out / "tables" / "cells")).agg({"verdicts": "sum"}).first()[0]
    timings = {
        "rows": int(rows or 0),
        "session_s": started - began,
        "job_s": done - started,
        "tables": sorted(tables),
        "master": spark.sparkContext.master,
        "driver_memory": spark.conf.get("spark.driver.memory"),
        "spark_version": spark.version,
    }
    spark.stop()
    emit_timings(timings, args.timings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
