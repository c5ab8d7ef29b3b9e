"""reports.java: the Java runtime PySpark needs is found, checked, and its absence said clearly (exit 2)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from reports.java import MINIMUM_JAVA, JavaMissing, check_java, find_java, major_version


def fake_java(directory: Path, version: str) -> Path:
    """A ``java`` that reports ``version`` the way the real one does (on stderr)."""
    directory.mkdir(parents=True, exist_ok=True)
    java = directory / "java"
    java.write_text(f"#!/bin/sh\necho 'openjdk version \"{version}\" 2021-01-19' >&2\n")
    java.chmod(java.stat().st_mode | stat.S_IXUSR)
    return java


@pytest.mark.parametrize(
    ("text", "major"), [("17.0.15", 17), ("21", 21), ("1.8.0_292", 8), ("11.0.2", 11), ("17-ea", 17)]
)
def test_major_version_reads_old_and_new_numbering(text, major):
    assert major_version(text) == major


def test_java_on_path_new_enough_is_accepted(tmp_path):
    java = fake_java(tmp_path / "bin", "17.0.9")
    runtime = check_java({"PATH": str(java.parent)})
    assert (runtime.path, runtime.major) == (str(java), 17)


def test_java_home_wins_over_path(tmp_path):
    on_path = fake_java(tmp_path / "path", "11.0.2")
    home = fake_java(tmp_path / "jdk" / "bin", "21.0.1").parent.parent
    assert check_java({"PATH": str(on_path.parent), "JAVA_HOME": str(home)}).major == 21


def test_too_old_java_is_named_with_its_version_and_the_fix(tmp_path):
    java = fake_java(tmp_path / "bin", "11.0.2")
    with pytest.raises(JavaMissing) as caught:
        check_java({"PATH": str(java.parent)})
    message = str(caught.value)
    assert f"Java {MINIMUM_JAVA} or newer" in message and "11.0.2" in message and str(java) in message
    assert "apt-get install -y openjdk-17-jre-headless" in message


def test_no_java_at_all_says_what_is_missing(tmp_path):
    with pytest.raises(JavaMissing, match=r"no `java` on PATH and JAVA_HOME is not set; install one"):
        find_java({"PATH": str(tmp_path)})


def test_java_home_without_java_is_named(tmp_path):
    with pytest.raises(JavaMissing, match=f"JAVA_HOME={tmp_path} has no bin/java"):
        find_java({"JAVA_HOME": str(tmp_path), "PATH": ""})


def test_the_real_java_here_is_new_enough():
    if not any(
        os.access(Path(p) / "java", os.X_OK) for p in os.environ.get("PATH", "").split(os.pathsep)
    ) and not os.environ.get("JAVA_HOME"):
        pytest.skip("no java on this machine")
    assert check_java().major >= MINIMUM_JAVA


def test_harness_report_without_java_exits_2_with_the_message(tmp_path, monkeypatch, capsys):
    from harness.app.cli import main

    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    results = tmp_path / "r.jsonl"
    results.write_text("{}\n")
    assert main(["report", str(results), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "harness report needs Java 17 or newer" in err and "openjdk-17-jre-headless" in err
    assert not (tmp_path / "out").exists()
