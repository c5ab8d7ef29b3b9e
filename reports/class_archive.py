"""Class-data sharing for the report's driver JVM: Spark's classes mapped from an archive, not loaded from jars.

A report over a few hundred verdicts spends a third of its time in the JVM
loading, parsing and verifying the ~20,000 classes Spark uses, from some 250
jars, every time it starts (5-7 s of a 17 s report on this 2-core machine;
benchmarks/RESULTS-report.md). Java 13 and later can write the classes a run
loaded to an archive as the JVM exits (``-XX:ArchiveClassesAtExit``) and map
that archive at the next start (``-XX:SharedArchiveFile``).

The archive belongs to one Java runtime and one Spark: its name is a digest
of the ``java`` binary, its version and Spark's jars (names and sizes), so
another Java or another PySpark is another archive, never a stale one. The
first report on a machine records it: the JVM writes it while it exits,
after the report was written and printed (:meth:`ClassArchive.finish`
waits for it, about 15 s, once), and it is put in place only once a JVM
started on the report's class path has mapped it (``-Xshare:on``, which
refuses to start otherwise). Every later report maps it. The JVM checks an
archive's header before it maps it and, when it does not fit (another build,
garbage), loads classes from the jars as before (``-Xshare:auto``, the
default); an archive that passes that check and still cannot be mapped (a
file cut short by a full disk: the JVM dies of SIGBUS at start) is removed
by :func:`reports.session.report_session`, which starts the JVM again without
it. A bad archive costs speed, never a report.

Two reports that find no archive at once: one records (it holds the lock
file), the other runs without. A recording cut short (the process killed)
leaves a partial file and a lock that later reports clear once stale.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import Popen, TimeoutExpired

#: Part of every archive's name: bump it when what is recorded changes.
ARCHIVE_FORMAT = "spark-driver/1"
#: The JVM's messages about the archive (classes it cannot store, a mismatch): not the user's concern.
QUIET = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")
#: How long the JVM may take to write the archive as it exits (~15 s on this machine).
RECORD_TIMEOUT_S = 300.0
#: A lock or a partial archive older than this belongs to a recording that was cut short.
STALE_AFTER_S = 3600.0


def spark_jars() -> Path:
    """The jars the driver JVM's class path is made of (``$SPARK_HOME/jars``, else PySpark's own)."""
    import pyspark

    home = os.environ.get("SPARK_HOME") or os.path.dirname(pyspark.__file__)
    return Path(home) / "jars"


def runtime_key(java_path: str, java_version: str, jars: Path) -> str:
    """A digest of what an archive is only valid for: the Java runtime and every jar on Spark's class path."""
    digest = hashlib.sha256(ARCHIVE_FORMAT.encode())
    for part in (os.path.realpath(java_path), java_version):
        digest.update(part.encode() + b"\0")
    for jar in sorted(jars.glob("*.jar")):
        digest.update(f"{jar.name}:{jar.stat().st_size}\0".encode())
    return digest.hexdigest()[:20]


@dataclass
class ClassArchive:
    """One runtime's archive in ``directory``: its JVM options, and the recording of it on first use."""

    directory: Path
    key: str
    #: The ``java`` the report's JVM runs (the recorded archive is checked with it).
    java: str = "java"
    #: Set by :meth:`jvm_options` when this report records the archive (the file the JVM writes).
    recording: Path | None = field(default=None, init=False)
    _jvm: Popen | None = field(default=None, init=False, repr=False)
    _class_path: str = field(default="", init=False, repr=False)

    @property
    def path(self) -> Path:
        return self.directory / f"spark-driver-{self.key}.jsa"

    @property
    def lock(self) -> Path:
        return self.directory / f"spark-driver-{self.key}.lock"

    def jvm_options(self) -> tuple[str, ...]:
        """Map the archive when there is one; otherwise record it, unless another report is recording it."""
        if self.path.is_file():
            return (f"-XX:SharedArchiveFile={self.path}", *QUIET)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._clear_stale()
            descriptor = os.open(self.lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except OSError:  # another report records it, or the cache cannot be written: run without
            return ()
        with os.fdopen(descriptor, "w") as handle:
            handle.write(f"{os.getpid()}\n")
        self.recording = self.directory / f"spark-driver-{self.key}.{os.getpid()}.partial"
        return (f"-XX:ArchiveClassesAtExit={self.recording}", *QUIET)

    @property
    def pending(self) -> bool:
        """This report records the archive, and its JVM is still to write it (:meth:`finish`)."""
        return self.recording is not None and self._jvm is not None

    @property
    def mapped(self) -> bool:
        """Whether :meth:`jvm_options` had the JVM map the archive (rather than record it, or run without)."""
        return self.recording is None and self.path.is_file()

    def stopped(self, jvm: Popen | None, class_path: str) -> None:
        """The report's Spark is stopped: remember its JVM, which writes the archive when it exits, and the
        class path it ran with (an archive is valid for that class path only)."""
        self._jvm, self._class_path = jvm, class_path

    def discard(self) -> None:
        """The archive stopped a JVM from starting: remove it (the next report records a new one)."""
        self.path.unlink(missing_ok=True)

    def finish(self, timeout_s: float = RECORD_TIMEOUT_S) -> bool:
        """If this report records the archive: let the JVM exit, wait for it, and put the archive in place.

        Call it last (the report is written and printed): the JVM writes the archive as it exits. True when
        an archive was recorded. The JVM exits when its standard input closes (PySpark's gateway does so
        when the Python process that started it goes away); closing it here is that, earlier.
        """
        if self.recording is None:
            return False
        recording, jvm, self.recording, self._jvm = self.recording, self._jvm, None, None
        try:
            if jvm is None:
                return False
            _release_gateway(jvm)
            if jvm.stdin is not None:
                jvm.stdin.close()
            try:
                status = jvm.wait(timeout_s)
            except TimeoutExpired:
                jvm.kill()
                return False
            if status != 0 or not recording.is_file() or not self._maps(recording):
                return False
            os.replace(recording, self.path)
            self._remove_others()
            return True
        finally:
            recording.unlink(missing_ok=True)
            self.lock.unlink(missing_ok=True)

    def _maps(self, archive: Path) -> bool:
        """Whether a JVM on the report's class path maps ``archive`` (``-Xshare:on`` fails to start otherwise)."""
        check = [self.java, f"-XX:SharedArchiveFile={archive}", "-Xshare:on", f"-XX:ErrorFile={os.devnull}"]
        try:
            done = subprocess.run(
                [*check, *QUIET, "-cp", self._class_path, "-version"], capture_output=True, timeout=60
            )
        except (OSError, subprocess.TimeoutExpired):
            return False
        return done.returncode == 0

    def _clear_stale(self) -> None:
        now = time.time()
        for leftover in (self.lock, *self.directory.glob(f"spark-driver-{self.key}.*.partial")):
            try:
                if now - leftover.stat().st_mtime > STALE_AFTER_S:
                    leftover.unlink()
            except FileNotFoundError:
                pass

    def _remove_others(self) -> None:
        """Archives of other runtimes (an older Java or Spark) are dead weight of ~200 MB each."""
        for other in self.directory.glob("spark-driver-*.jsa"):
            if other != self.path:
                other.unlink(missing_ok=True)


def _release_gateway(jvm: Popen) -> None:
    """Forget PySpark's gateway if it is the one to ``jvm``, about to exit: a later session in this process then
    starts a JVM of its own. A gateway to another JVM (a session that was already running) is left alone."""
    from pyspark import SparkContext

    if getattr(SparkContext._gateway, "proc", None) is jvm:
        SparkContext._gateway = None
        SparkContext._jvm = None


def class_archive(directory: Path | None, java_path: str, java_version: str) -> ClassArchive | None:
    """The archive for this Java and this Spark in ``directory`` (None: no directory, no archive)."""
    if directory is None:
        return None
    return ClassArchive(Path(directory), runtime_key(java_path, java_version, spark_jars()), java_path)
