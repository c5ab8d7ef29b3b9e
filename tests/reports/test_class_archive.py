"""reports.class_archive: one archive per Java and Spark, recorded once (one recorder at a time), mapped after.

The lifecycle is tested with a stand-in for the JVM (a process that writes
the archive when its standard input closes, as the JVM does when PySpark's
gateway goes away) and for the check that a JVM maps what it wrote; the last
test runs ``harness report`` on a real JVM: it records, maps (``-Xshare:on``:
the JVM refuses to start rather than run without it) and survives an archive
cut short (which kills a JVM that maps it: the report starts it again without,
and removes the archive).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reports.class_archive import QUIET, STALE_AFTER_S, ClassArchive, class_archive, runtime_key, spark_jars
from tests.spark_support import matrix_records, write_jsonl

#: Stands in for the JVM: waits for its standard input to close, then writes the file it was asked to record.
FAKE_JVM = "import sys; sys.stdin.read(); open(sys.argv[1], 'wb').write(b'archive'); sys.exit(int(sys.argv[2]))"


def _jars(folder: Path, **sizes: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, size in sizes.items():
        (folder / f"{name}.jar").write_bytes(b"x" * size)
    return folder


def test_the_key_changes_with_the_java_runtime_and_with_any_jar(tmp_path):
    jars = _jars(tmp_path / "jars", spark_core=10, scala=20)
    key = runtime_key("/usr/bin/java", "17.0.15", jars)
    assert key == runtime_key("/usr/bin/java", "17.0.15", jars)
    assert key != runtime_key("/usr/bin/java", "21.0.2", jars)
    assert key != runtime_key("/opt/other/java", "17.0.15", jars)
    _jars(jars, scala=21)
    assert key != runtime_key("/usr/bin/java", "17.0.15", jars)


def test_no_directory_no_archive():
    assert class_archive(None, "/usr/bin/java", "17") is None
    archive = class_archive(Path("/tmp/x"), "/usr/bin/java", "17")
    assert archive is not None and archive.key == runtime_key("/usr/bin/java", "17", spark_jars())


@pytest.fixture
def maps(monkeypatch):
    """Stands in for the check that a JVM maps the recorded archive: what it answers, and what it was asked."""
    checked: list[tuple[bytes, str]] = []
    answer = {"maps": True}

    def check(archive: ClassArchive, recorded: Path) -> bool:
        checked.append((recorded.read_bytes(), archive._class_path))
        return answer["maps"]

    monkeypatch.setattr(ClassArchive, "_maps", check)
    return answer, checked


def _recording(archive: ClassArchive, status: int = 0) -> subprocess.Popen:
    options = archive.jvm_options()
    assert options[0] == f"-XX:ArchiveClassesAtExit={archive.recording}" and options[1:] == QUIET
    jvm = subprocess.Popen([sys.executable, "-c", FAKE_JVM, str(archive.recording), str(status)], stdin=subprocess.PIPE)
    archive.stopped(jvm, "/spark/conf/:/spark/jars/*")
    return jvm


def test_the_first_report_records_a_second_one_meanwhile_runs_without_and_later_ones_map_it(tmp_path, maps):
    first, second = ClassArchive(tmp_path, "k1"), ClassArchive(tmp_path, "k1")
    assert not first.pending
    jvm = _recording(first)
    assert first.pending and first.lock.is_file() and not first.path.exists()
    assert second.jvm_options() == () and second.recording is None  # the first one holds the lock
    assert second.finish() is False
    assert first.finish() is True and jvm.returncode == 0 and not first.pending
    assert first.path.read_bytes() == b"archive"
    assert maps[1] == [(b"archive", "/spark/conf/:/spark/jars/*")]  # checked on the report's class path
    assert not first.lock.exists() and not list(tmp_path.glob("*.partial"))
    later = ClassArchive(tmp_path, "k1")
    assert later.jvm_options() == (f"-XX:SharedArchiveFile={first.path}", *QUIET) and later.mapped
    later.discard()
    assert not first.path.exists() and not later.mapped


def test_finishing_a_recording_leaves_a_session_of_another_jvm_running(spark, tmp_path, maps):
    archive = ClassArchive(tmp_path, "k1")
    _recording(archive)
    assert archive.finish() is True
    assert spark.range(3).count() == 3  # the gateway PySpark holds is to another JVM: not forgotten


def test_an_archive_no_jvm_maps_is_not_put_in_place(tmp_path, maps):
    maps[0]["maps"] = False
    archive = ClassArchive(tmp_path, "k1")
    _recording(archive)
    assert archive.finish() is False
    assert list(tmp_path.iterdir()) == [] and maps[1]


def test_a_failed_recording_leaves_nothing_and_the_next_report_records_again(tmp_path, maps):
    archive = ClassArchive(tmp_path, "k1")
    _recording(archive, status=1)
    assert archive.finish() is False
    assert list(tmp_path.iterdir()) == [] and maps[1] == []  # a JVM that failed: its file is not even checked
    assert ClassArchive(tmp_path, "k1").jvm_options()[0].startswith("-XX:ArchiveClassesAtExit=")


def test_a_new_archive_replaces_those_of_other_runtimes(tmp_path, maps):
    (tmp_path / "spark-driver-old.jsa").write_bytes(b"old")
    (tmp_path / "unrelated.txt").write_text("kept")
    archive = ClassArchive(tmp_path, "new")
    _recording(archive)
    assert archive.finish() is True
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spark-driver-new.jsa", "unrelated.txt"]


def test_a_lock_left_by_a_killed_recording_is_cleared_once_stale(tmp_path):
    archive = ClassArchive(tmp_path, "k1")
    archive.directory.mkdir(exist_ok=True)
    archive.lock.write_text("12345\n")
    partial = tmp_path / "spark-driver-k1.12345.partial"
    partial.write_bytes(b"half")
    assert archive.jvm_options() == ()  # fresh: someone may be recording
    old = time.time() - STALE_AFTER_S - 60
    for leftover in (archive.lock, partial):
        os.utime(leftover, (old, old))
    assert archive.jvm_options()[0].startswith("-XX:ArchiveClassesAtExit=")
    assert not partial.exists()
    archive.recording.write_bytes(b"")  # nothing recorded (no JVM): no archive
    assert archive.finish() is False and not archive.lock.exists()


def _report(inputs: Path, out: Path, cache: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "HARNESS_CACHE_DIR": str(cache), "PYTHONWARNINGS": "ignore", **env}
    environment.pop("HARNESS_NO_CACHE", None)
    return subprocess.run(
        [sys.executable, "-m", "harness.app.cli", "report", str(inputs), "--out", str(out), "--driver-memory", "1g"],
        capture_output=True,
        text=True,
        timeout=600,
        env=environment,
        cwd=out.parent,  # a JVM killed by a bad archive leaves its crash log (hs_err_pid*.log) there
    )


def test_harness_report_records_the_archive_once_maps_it_after_and_survives_a_damaged_one(spark, tmp_path):
    """``spark`` only to skip where PySpark or Java is missing (the reports run in processes of their own)."""
    inputs = write_jsonl(tmp_path / "results.jsonl", matrix_records(repeats=1))
    cache = tmp_path / "cache"
    first = _report(inputs, tmp_path / "r1", cache)
    assert first.returncode == 0, first.stderr[-2000:]
    assert "recording the JVM's class archive, once" in first.stderr
    (archive,) = (cache / "spark-classes").iterdir()
    assert archive.suffix == ".jsa" and archive.stat().st_size > 10_000_000

    # -Xshare:on: the JVM refuses to start when it cannot map the archive, and the report would start it again
    # without and remove the archive: a report here that keeps it is one whose JVM mapped it.
    removed = f"the JVM could not start with {archive}; removed it"
    mapped = _report(inputs, tmp_path / "r2", cache, JAVA_TOOL_OPTIONS="-Xshare:on")
    assert mapped.returncode == 0, mapped.stderr[-2000:]
    assert "Picked up JAVA_TOOL_OPTIONS: -Xshare:on" in mapped.stderr  # the JVM took it
    assert "recording" not in mapped.stderr and removed not in mapped.stderr and archive.is_file()
    assert (tmp_path / "r2" / "tables" / "cell_tests.csv").read_text() == (
        tmp_path / "r1" / "tables" / "cell_tests.csv"
    ).read_text()

    recorded = archive.read_bytes()
    archive.chmod(0o644)
    archive.write_bytes(recorded[: len(recorded) // 4])  # a valid header over a file cut short: it kills the JVM
    cut_short = _report(inputs, tmp_path / "r5", cache)
    assert cut_short.returncode == 0, cut_short.stderr[-2000:]
    assert removed in cut_short.stderr and not archive.exists()
    assert (tmp_path / "r5" / "report.html").is_file()


@pytest.mark.parametrize("value", ["1", "true"])
def test_harness_no_cache_turns_the_archive_off(monkeypatch, value, tmp_path):
    import argparse

    from harness.app.cli import with_class_archive

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("HARNESS_NO_CACHE", value)
    assert with_class_archive(argparse.Namespace(class_archive=None)).class_archive is None
    monkeypatch.delenv("HARNESS_NO_CACHE")
    assert with_class_archive(argparse.Namespace(class_archive=None)).class_archive == tmp_path / "spark-classes"
    given = tmp_path / "elsewhere"
    assert with_class_archive(argparse.Namespace(class_archive=given)).class_archive == given
