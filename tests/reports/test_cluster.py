"""``harness report --master spark://...`` on a real standalone Spark cluster gives the same tables as local mode.

A master and two workers are started from PySpark's own launcher
(``bin/spark-class``, in the foreground, so each is one process this test
owns by its id and always stops), bound to 127.0.0.1 on free ports, web UIs
included. The report runs in a separate process (one SparkContext per
process), exactly as a user runs it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.paths import REPO
from tests.spark_support import matrix_records, write_jsonl

STARTUP_S = 90


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def wait_for(log: Path, text: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            break
        time.sleep(0.5)
    pytest.fail(f"{text!r} not seen within {STARTUP_S}s (exit {process.poll()}):\n{log.read_text()[-3000:]}")


@pytest.fixture
def cluster(spark, tmp_path):
    """A standalone master and two workers on loopback; yields the master URL; all are stopped afterwards."""
    home = spark_home()
    env = dict(
        os.environ,
        SPARK_HOME=str(home),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_NO_DAEMONIZE="1",
        SPARK_WORKER_DIR=str(tmp_path / "worker"),
        PYSPARK_PYTHON=sys.executable,
    )
    master_port = free_port()
    url = f"spark://127.0.0.1:{master_port}"
    commands = {
        "master": [
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(master_port),
            "--webui-port",
            str(free_port()),
        ],
        **{
            f"worker-{n}": [
                "org.apache.spark.deploy.worker.Worker",
                url,
                "--host",
                "127.0.0.1",
                "--port",
                str(free_port()),
                "--webui-port",
                str(free_port()),
                "--cores",
                "1",
                "--memory",
                "1g",
                "--work-dir",
                str(tmp_path / f"worker-{n}"),
            ]
            for n in (1, 2)
        },
    }
    ready = dict.fromkeys(commands, "Successfully registered with master") | {"master": "I have been elected leader"}
    started: list[subprocess.Popen] = []
    try:
        for role, arguments in commands.items():
            log = tmp_path / f"{role}.log"
            with open(log, "w") as sink:
                started.append(
                    subprocess.Popen(
                        [str(home / "bin" / "spark-class"), *arguments],
                        env=env,
                        stdout=sink,
                        stderr=subprocess.STDOUT,
                        cwd=tmp_path,
                    )
                )
            wait_for(log, ready[role], started[-1])
        yield url
    finally:
        for process in reversed(started):
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=30)


def table_rows(spark, out: Path, name: str) -> list[str]:
    return sorted(repr(tuple(row)) for row in spark.read.parquet(str(out / "tables" / name)).collect())


def test_the_same_tables_on_a_standalone_cluster_as_in_local_mode(spark, cluster, tmp_path):
    from reports.job import TABLES, run_report

    runs = tmp_path / "runs"
    write_jsonl(runs / "results.jsonl", matrix_records(repeats=2), ['{"torn'])
    local = run_report(spark, [str(runs)], tmp_path / "local")

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.app.cli",
            "report",
            str(runs),
            "--out",
            str(tmp_path / "remote"),
            "--master",
            cluster,
            "--driver-memory",
            "1g",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-5000:]
    assert f"report: {tmp_path / 'remote' / 'report.html'}" in done.stdout
    assert "3 regression(s)" in done.stdout
    for n in (1, 2):  # both workers ran executors
        assert (tmp_path / f"worker-{n}").is_dir() and any((tmp_path / f"worker-{n}").iterdir()), n

    for name in TABLES:
        assert table_rows(spark, tmp_path / "remote", name) == table_rows(spark, tmp_path / "local", name), name
    assert local.tables["transitions"].total == 7
