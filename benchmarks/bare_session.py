"""The floor of a cold ``harness report``: start Spark as the report does, count 10 rows, stop.

    python benchmarks/bare_session.py --class-archive DIR

The same session the report starts on a small input (the small profile, the
JVM class archive in DIR when one was recorded there), and nothing of the
job: what a cold report cannot go below without a warm Spark
(:mod:`bench_spark_connect` runs it as a side).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--class-archive", type=Path, default=None)
    args = parser.parse_args(argv)
    began = time.perf_counter()
    from reports.class_archive import class_archive
    from reports.java import check_java
    from reports.session import report_session

    java = check_java()
    archive = class_archive(args.class_archive, java.path, java.version)
    imported = time.perf_counter()
    with report_session(small=True, class_archive=archive) as spark:
        started = time.perf_counter()
        rows = spark.range(10).count()
        counted = time.perf_counter()
    stopped = time.perf_counter()
    print(
        f"rows {rows}: imports {imported - began:.2f} s, Spark start {started - imported:.2f} s, "
        f"count {counted - started:.2f} s, stop {stopped - counted:.2f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
