"""The SparkSession the job runs in: ``local[*]`` by default, ``--master URL`` for a cluster.

Everything binds to 127.0.0.1 (the job never listens on a public address),
the web UI is off, shuffles use a modest number of partitions (the final
tables are small), and time is UTC in SQL and in the JVM so timestamps read
the same on every machine. The same job runs unchanged on a cluster: only
the master differs. A session already running in this process (a test's,
or a notebook's) is reused and left running.

Two profiles, chosen before the JVM starts from the size of what the job will
read (:mod:`reports.input_size`). A small input (the main job's results, a
matrix of a few thousand verdicts) is all fixed cost: each of its ~40 jobs
would spend more time compiling generated code than running it, and the JVM's
optimising compiler never pays for itself. :data:`SMALL_INPUT` evaluates
expressions interpreted, in one shuffle partition, without adaptive
re-planning, on the JVM's quick compiler only; a large input keeps Spark's
defaults, which win from a few hundred thousand verdicts on. Both give the
same tables (tests/reports/test_session.py).

With ``remote`` (a Spark Connect URL, ``sc://HOST:PORT``) the job runs in a
session of a Spark Connect server instead (:mod:`reports.spark_server`
starts one on loopback): no JVM starts here, the server's Spark is warm.
Only the runtime SQL settings travel with the session (:func:`connect_settings`);
the JVM, the master and the class archive are the server's business.
"""

from __future__ import annotations

import atexit
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from subprocess import Popen
from urllib.parse import urlsplit

from pyspark.errors import PySparkRuntimeError
from pyspark.sql import SparkSession

from reports.class_archive import ClassArchive

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
        atexit.register(path.unlink, missing_ok=True)
    return str(path)


#: Settings for a small input, over the defaults: interpreted expressions (no code generated and compiled
#: per stage), one shuffle partition, no adaptive re-planning (each re-planned stage is one more job).
#: ``factoryMode`` is an internal setting of Spark SQL (its tests run every expression both ways).
SMALL_INPUT = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.shuffle.partitions": "1",
}
#: The driver JVM on a small input: the quick (C1) compiler only; the optimising one costs more than it saves.
SMALL_INPUT_JVM = ("-XX:TieredStopAtLevel=1",)


def session_settings(
    master: str, driver_memory: str = DRIVER_MEMORY, *, small: bool = False, jvm_options: tuple[str, ...] = ()
) -> dict[str, str]:
    """Every Spark setting the job relies on, as one table (so a test can check it).

    ``small`` picks :data:`SMALL_INPUT`; ``jvm_options`` are added to the driver JVM's (the class archive's).
    """
    driver_jvm = " ".join((_UTC, f"-Dlog4j2.configurationFile=file:{_log_config()}", *jvm_options))
    if small:
        driver_jvm = " ".join((driver_jvm, *SMALL_INPUT_JVM))
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
        "spark.driver.extraJavaOptions": driver_jvm,
        "spark.executor.extraJavaOptions": _UTC,
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
        # PySpark records the Python call site of every column function for error messages: several calls
        # into the JVM each, which is more than a small report's whole planning costs.
        "spark.python.sql.dataFrameDebugging.enabled": "false",
    } | (SMALL_INPUT if small else {})


def connect_settings(*, small: bool = False) -> dict[str, str]:
    """The settings of :func:`session_settings` a Spark Connect session may set (runtime SQL settings only)."""
    return {
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": str(SHUFFLE_PARTITIONS),
    } | (SMALL_INPUT if small else {})


def connect_url(url: str, token: str | None) -> str:
    """``url`` with the server's token; the client sends a token in clear text only to ``localhost``
    (gRPC local credentials), so a loopback address is named so."""
    if token is None:
        return url
    parts = urlsplit(url)
    if parts.port is None:
        raise ValueError(f"{url} names no port")
    return f"sc://localhost:{parts.port}/;token={token}"


def is_connect(spark: SparkSession) -> bool:
    """Whether ``spark`` is a Spark Connect session (no SparkContext, no JVM in this process)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def build_session(
    master: str | None = None,
    driver_memory: str = DRIVER_MEMORY,
    *,
    small: bool = False,
    jvm_options: tuple[str, ...] = (),
) -> SparkSession:
    """A new (or the process's existing) SparkSession with :func:`session_settings`."""
    os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)
    builder = SparkSession.builder
    for key, value in session_settings(master or LOCAL, driver_memory, small=small, jvm_options=jvm_options).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


@contextmanager
def report_session(
    master: str | None = None,
    driver_memory: str = DRIVER_MEMORY,
    *,
    small: bool = False,
    class_archive: ClassArchive | None = None,
    remote: str | None = None,
    token: str | None = None,
) -> Iterator[SparkSession]:
    """A session for one report: an active one is reused (and left running) when its master fits.

    A new one starts with ``class_archive``'s options and hands it the JVM once stopped
    (:meth:`ClassArchive.finish` then waits for the JVM to write a new archive, if it records one).
    With ``remote``, a new session of that Spark Connect server (``token``: the one it requires), closed
    at the end (the server releases what the session cached).
    """
    if remote is not None:
        with _connect_session(remote, token, small=small) as spark:
            yield spark
        return
    active = SparkSession.getActiveSession()
    if active is not None and (master is None or active.sparkContext.master == master):
        yield active
        return
    if active is not None:
        raise RuntimeError(
            f"a SparkSession on {active.sparkContext.master} is already running in this process; "
            f"it cannot also run on {master}"
        )
    options = class_archive.jvm_options() if class_archive is not None else ()
    try:
        spark = build_session(master, driver_memory, small=small, jvm_options=options)
    except PySparkRuntimeError:
        if class_archive is None or not class_archive.mapped:
            raise
        # The JVM did not start with the archive mapped (a damaged one can kill it): once more without it, and
        # if that starts, the archive was the cause.
        spark = build_session(master, driver_memory, small=small)
        class_archive.discard()
        print(f"harness report: the JVM could not start with {class_archive.path}; removed it", file=sys.stderr)
    jvm, class_path = jvm_process(spark), spark.sparkContext._jvm.System.getProperty("java.class.path")
    try:
        yield spark
    finally:
        spark.stop()
        if class_archive is not None:
            class_archive.stopped(jvm, class_path)


@contextmanager
def _connect_session(url: str, token: str | None, *, small: bool) -> Iterator[SparkSession]:
    builder = SparkSession.builder.remote(connect_url(url, token))
    for key, value in connect_settings(small=small).items():
        builder = builder.config(key, value)
    spark = builder.create()
    try:
        yield spark
    finally:
        spark.stop()


def jvm_process(spark: SparkSession) -> Popen | None:
    """The driver JVM PySpark started for ``spark`` (None when it attached to one it did not start).

    PySpark keeps it on its gateway and has no public way to it: the class archive needs it to let the
    JVM finish writing (:mod:`reports.class_archive`).
    """
    gateway = spark.sparkContext._gateway
    process = getattr(gateway, "proc", None)
    return process if isinstance(process, Popen) else None
