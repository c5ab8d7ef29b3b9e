"""The SparkSession the job runs in: ``local[*]`` by default, ``--master URL`` for a cluster.

Everything binds to 127.0.0.1 (the job never listens on a public address),
the web UI is off, shuffles use a modest number of partitions (the final
tables are small), and time is UTC in SQL and in the JVM so timestamps read
the same on every machine. The same job runs unchanged on a cluster: only
the master differs. A session already running in this process (a test's,
or a notebook's) is reused and left running.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pyspark.sql import SparkSession

#: The JVM's own logging: warnings and errors only, to stderr (Spark's default prints INFO and a banner).
LOG4J2 = """rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.hadoop.name = org.apache.hadoop.util.NativeCodeLoader
logger.hadoop.level = error
"""
LOCAL = "local[*]"
DRIVER_MEMORY = "2g"
SHUFFLE_PARTITIONS = 8
LOOPBACK = "127.0.0.1"
_UTC = "-Duser.timezone=UTC"


def _log_config() -> str:
    """A log4j2 configuration file for the driver JVM (written once per process, in the temp directory)."""
    path = Path(tempfile.gettempdir()) / f"harness-report-log4j2-{os.getpid()}.properties"
    if not path.exists():
        path.write_text(LOG4J2)
    return str(path)


def session_settings(master: str, driver_memory: str = DRIVER_MEMORY) -> dict[str, str]:
    """Every Spark setting the job relies on, as one table (so a test can check it)."""
    return {
        "spark.master": master,
        "spark.app.name": "harness report",
        "spark.driver.host": LOOPBACK,
        "spark.driver.bindAddress": LOOPBACK,
        "spark.driver.memory": driver_memory,
        "spark.executor.memory": "1g",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.log.level": "ERROR",
        "spark.sql.shuffle.partitions": str(SHUFFLE_PARTITIONS),
        # Tables are computed side by side (reports.write), each in a pool of its own: a small table's job
        # is not queued behind every task of a large one, as it is in FIFO order.
        "spark.scheduler.mode": "FAIR",
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.extraJavaOptions": f"{_UTC} -Dlog4j2.configurationFile=file:{_log_config()}",
        "spark.executor.extraJavaOptions": _UTC,
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
    }


def build_session(master: str | None = None, driver_memory: str = DRIVER_MEMORY) -> SparkSession:
    """A new (or the process's existing) SparkSession with :func:`session_settings`."""
    os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)
    builder = SparkSession.builder
    for key, value in session_settings(master or LOCAL, driver_memory).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


@contextmanager
def report_session(master: str | None = None, driver_memory: str = DRIVER_MEMORY) -> Iterator[SparkSession]:
    """A session for one report: an active one is reused (and left running) when its master fits."""
    active = SparkSession.getActiveSession()
    if active is not None and (master is None or active.sparkContext.master == master):
        yield active
        return
    if active is not None:
        raise RuntimeError(
            f"a SparkSession on {active.sparkContext.master} is already running in this process; "
            f"it cannot also run on {master}"
        )
    spark = build_session(master, driver_memory)
    try:
        yield spark
    finally:
        spark.stop()
