"""``harness spark start`` and ``harness report --remote``: a warm Spark Connect server gives the local tables.

A server is started with the project's own command on a free loopback port,
in a cache folder of the test's own (so a server of the user's is never
touched), and always stopped, leaving no process behind. The same small
results file (a matrix with a regression, a fix, a flake and a torn line) is
reported in local mode in this process and with ``--remote`` in a separate
process, as a user runs it (one Spark Connect client per process), and every
table must be the same row for row, in order, in Parquet and in CSV.

The test is skipped, with the reason, only when this PySpark has no connect
jar, the Spark Connect client libraries are missing, or there is no Java.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reports import spark_server
from reports.spark_server import ServerRecord, read_status, token_for
from tests.paths import REPO
from tests.reports.history_agreement_support import assert_agree, history_local, other_side  # noqa: F401
from tests.reports.test_cluster import free_port
from tests.spark_support import matrix_records, write_jsonl

STARTUP_S = 300


def harness(*arguments: str, env: dict[str, str], timeout: float = STARTUP_S) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.app.cli", *arguments],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def connect_unavailable() -> str | None:
    """Why a Spark Connect server cannot run here (None when it can)."""
    try:
        home = spark_server.spark_home()
    except spark_server.SparkServerError as exc:
        return str(exc)
    if spark_server.connect_jar(home) is None:
        return f"this PySpark has no Spark Connect jar in {home / 'jars'}"
    try:
        from pyspark.sql.connect.utils import check_dependencies

        check_dependencies()
    except ImportError as exc:
        return f"the Spark Connect client is not installed ({exc}); pip install -e '.[reports]'"
    from reports.java import JavaMissing, check_java

    try:
        check_java()
    except JavaMissing as exc:
        return str(exc)
    return None


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state != b"Z"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A server started by ``harness spark start`` in a cache of its own; stopped (and checked gone) afterwards."""
    reason = connect_unavailable()
    if reason:
        pytest.skip(reason)
    cache = tmp_path_factory.mktemp("cache")
    env = {**os.environ, "HARNESS_CACHE_DIR": str(cache)}
    env.pop("HARNESS_SPARK_REMOTE", None)
    port = free_port()
    try:
        started = harness("spark", "start", "--port", str(port), env=env)
        assert started.returncode == 0, started.stdout + started.stderr
        url = f"sc://127.0.0.1:{port}"
        assert f"started: {url}" in started.stdout
        status = read_status(cache / "spark-connect")
        assert status.running and status.record is not None
        yield url, env, status.record
    finally:
        pid = read_status(cache / "spark-connect").record
        stopped = harness("spark", "stop", env=env)
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        assert pid is None or not alive(pid.pid), f"the server (pid {pid.pid}) is still running after stop"


def test_the_server_listens_on_loopback_only_and_says_so(server):
    url, env, record = server
    listening = harness("spark", "status", env=env)
    assert listening.returncode == 0 and f"running: {url} (pid {record.pid}" in listening.stdout
    again = harness("spark", "start", env=env)
    assert again.returncode == 0 and f"already running: {url}" in again.stdout
    sockets = set(Path(f"/proc/{record.pid}/net/tcp").read_text().splitlines()[1:])
    sockets |= set(Path(f"/proc/{record.pid}/net/tcp6").read_text().splitlines()[1:])
    listening_on = {line.split()[1] for line in sockets if line.split()[3] == "0A"}  # 0A: LISTEN
    port = f"{record.port:04X}"
    ours = [address for address in listening_on if address.endswith(":" + port)]
    assert ours, listening_on
    loopback = ("0100007F:", "0000000000000000FFFF00000100007F:")  # 127.0.0.1, as IPv4 and IPv4-mapped IPv6
    assert all(address.startswith(loopback) for address in ours), ours


def table_in_order(out: Path, name: str) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(out / "tables" / name).to_pylist()


def test_the_remote_report_gives_the_local_tables_row_for_row(spark, server, tmp_path):
    from reports.job import TABLES, run_report

    url, env, _ = server
    runs = tmp_path / "runs"
    write_jsonl(runs / "results.jsonl", matrix_records(repeats=2), ['{"torn'])
    run_report(spark, [str(runs)], tmp_path / "local")

    done = harness("report", str(runs), "--out", str(tmp_path / "remote"), "--remote", url, env=env, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr[-5000:]
    assert "3 regression(s)" in done.stdout

    for name in TABLES:
        local, remote = table_in_order(tmp_path / "local", name), table_in_order(tmp_path / "remote", name)
        assert remote == local, name
        csv = f"tables/{name}.csv"
        assert (tmp_path / "remote" / csv).read_text() == (tmp_path / "local" / csv).read_text(), name
    assert table_in_order(tmp_path / "local", "input_problems"), "the torn line is an input problem on both sides"


def test_a_report_without_the_token_is_refused(server, tmp_path):
    url, env, _ = server
    write_jsonl(tmp_path / "r.jsonl", matrix_records(repeats=1))
    other = {**env, "HARNESS_CACHE_DIR": str(tmp_path / "no-record")}  # the token is not known there
    done = harness("report", str(tmp_path / "r.jsonl"), "--out", str(tmp_path / "out"), "--remote", url, env=other)
    assert done.returncode != 0
    assert not (tmp_path / "out" / "report.html").exists()


def test_start_refuses_any_address_but_loopback(tmp_path):
    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path)}
    refused = harness("spark", "start", "--host", "0.0.0.0", env=env, timeout=60)
    assert refused.returncode == 2 and "127.0.0.1 only" in refused.stderr
    assert not (tmp_path / "spark-connect" / spark_server.RECORD).exists()


def stale_record(state: Path) -> ServerRecord:
    """A record whose process is gone: a child of this test that has exited and been reaped."""
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    record = ServerRecord(int(gone.stdout), 15002, str(state / "x.out"), "2026-01-01T00:00:00+00:00", "t")
    state.mkdir(parents=True)
    (state / spark_server.RECORD).write_text(json.dumps(record.__dict__))
    return record


def test_a_stale_record_is_named_and_removed(tmp_path):
    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path)}
    record = stale_record(tmp_path / "spark-connect")
    assert read_status(tmp_path / "spark-connect").stale
    status = harness("spark", "status", env=env, timeout=60)
    assert status.returncode == 1 and f"pid {record.pid}) is gone" in status.stdout
    assert not (tmp_path / "spark-connect" / spark_server.RECORD).exists()
    stale_record(tmp_path / "again")
    stopped = spark_server.stop(tmp_path / "again")
    assert stopped.stale and not (tmp_path / "again" / spark_server.RECORD).exists()


def test_the_token_goes_only_to_the_recorded_loopback_server(tmp_path):
    record = ServerRecord(os.getpid(), 41234, "x.out", "2026-01-01T00:00:00+00:00", "secret")
    state = tmp_path / "spark-connect"
    state.mkdir()
    (state / spark_server.RECORD).write_text(json.dumps(record.__dict__))
    running = spark_server.ServerStatus(record)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(spark_server, "read_status", lambda _: running)
        assert token_for("sc://127.0.0.1:41234", state) == "secret"
        assert token_for("sc://localhost:41234", state) == "secret"
        assert token_for("sc://127.0.0.1:41235", state) is None
        assert token_for("sc://spark.example:41234", state) is None
    assert token_for("sc://127.0.0.1:41234", None) is None


def test_remote_takes_only_a_spark_connect_url(tmp_path):
    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path)}
    write_jsonl(tmp_path / "r.jsonl", matrix_records(repeats=1))
    done = harness(
        "report", str(tmp_path / "r.jsonl"), "--out", str(tmp_path / "o"), "--remote", "spark://x:7077", env=env
    )
    assert done.returncode == 2 and "sc://HOST:PORT" in done.stderr
    both = harness(
        "report",
        str(tmp_path / "r.jsonl"),
        "--out",
        str(tmp_path / "o"),
        "--remote",
        "sc://x",
        "--master",
        "local[1]",
        env=env,
    )
    assert both.returncode == 2 and "exclude each other" in both.stderr


def test_a_connect_session_takes_the_runtime_settings_only_and_the_token_goes_to_localhost():
    from reports.session import SMALL_INPUT, connect_settings, connect_url, session_settings

    small = connect_settings(small=True)
    assert {key: small[key] for key in SMALL_INPUT} == SMALL_INPUT
    assert small["spark.sql.session.timeZone"] == "UTC"
    assert all(key.startswith("spark.sql.") for key in small), "the JVM, master and UI are the server's"
    assert set(connect_settings()) < set(session_settings("local[*]"))
    assert connect_url("sc://127.0.0.1:41234", None) == "sc://127.0.0.1:41234"
    assert connect_url("sc://127.0.0.1:41234", "t0k") == "sc://localhost:41234/;token=t0k"


@pytest.mark.slow
def test_spark_connect_gives_the_local_tables(history_local, server, tmp_path):  # noqa: F811
    url, env, _ = server
    history, local_out = history_local
    other_side(history, tmp_path / "connect", "--remote", url, env=env)
    assert_agree(local_out, tmp_path / "connect")
