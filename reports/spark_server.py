"""A warm Spark for reports: one Spark Connect server on loopback, started, found and stopped by ``harness spark``.

A report over the main job's records spends most of its time starting a JVM
and Spark, and warming them (benchmarks/RESULTS-spark-connect.md). PySpark
ships the Spark Connect server (``sbin/start-connect-server.sh``, the
connect jar): it keeps one Spark running, and ``harness report --remote
sc://...`` sends its plans there instead of starting a JVM of its own.

The server is started with PySpark's own script, daemonised, with its pid
file and log in ``state_dir`` (the harness's cache: ``spark-connect/``), and
a record beside them (``server.json``: pid, port, log, the URL, the token)
that ``status`` and ``stop`` read. It listens on 127.0.0.1 only (its gRPC
port, and Spark's own driver ports) and requires a token that only this user
can read (the record is ``0600``): on a machine shared with other users, a
loopback port is still open to every one of them, and the server reads and
writes files as the user who started it. A record whose process is gone (the
machine restarted, the JVM was killed) is stale: ``status`` says so and
``start`` and ``stop`` remove it. Plain Python, no pyspark import: the
``harness`` parser loads this module.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import secrets
import signal
import socket
import subprocess
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from importlib.util import find_spec
from pathlib import Path
from urllib.parse import urlsplit

LOOPBACK = "127.0.0.1"
#: Spark Connect's own default port.
DEFAULT_PORT = 15002
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
RECORD = "server.json"
#: Daemon scripts name their pid file and log after this (``SPARK_IDENT_STRING``).
IDENT = "harness"
#: A JVM, Spark and the connect service take ~10 s here; on a loaded machine several times that.
START_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 30.0
#: Server settings: loopback everywhere, no web UI, UTC, fair scheduling between a report's tables.
SERVER_CONF = {
    "spark.master": "local[*]",
    "spark.connect.grpc.binding.address": LOOPBACK,
    "spark.driver.host": LOOPBACK,
    "spark.driver.bindAddress": LOOPBACK,
    "spark.driver.memory": "2g",
    "spark.ui.enabled": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.extraJavaOptions": "-Duser.timezone=UTC",
    "spark.executor.extraJavaOptions": "-Duser.timezone=UTC",
    "spark.scheduler.mode": "FAIR",
    "spark.log.level": "WARN",
}


class SparkServerError(RuntimeError):
    """The server could not be started or stopped; the message says why (and where its log is)."""


@dataclass(frozen=True)
class ServerRecord:
    """What ``harness spark start`` wrote: enough for ``status``, ``stop`` and a report to find the server."""

    pid: int
    port: int
    log: str
    started: str
    token: str

    @property
    def url(self) -> str:
        return f"sc://{LOOPBACK}:{self.port}"


@dataclass(frozen=True)
class ServerStatus:
    record: ServerRecord | None
    #: The recorded process is gone (or is not a Spark Connect server any more): the record is stale.
    stale: bool = False

    @property
    def running(self) -> bool:
        return self.record is not None and not self.stale


def spark_home() -> Path:
    """``$SPARK_HOME``, else the installed PySpark's folder (it holds ``sbin/`` and ``jars/``)."""
    if os.environ.get("SPARK_HOME"):
        return Path(os.environ["SPARK_HOME"])
    spec = find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise SparkServerError("PySpark is not installed; install it with `pip install -e '.[reports]'`")
    return Path(spec.origin).parent


def connect_jar(home: Path) -> Path | None:
    """The Spark Connect server's jar, None when this Spark has none."""
    return next(iter(sorted((home / "jars").glob("spark-connect_*.jar"))), None)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind_address(host: str) -> None:
    """Refuse to start a server anywhere but on the loopback interface."""
    if host != LOOPBACK:
        raise SparkServerError(
            f"harness spark binds 127.0.0.1 only, not {host}: a server on another interface must be run by you "
            "(then give its sc:// URL to harness report --remote)"
        )


def read_status(state_dir: Path) -> ServerStatus:
    """The recorded server and whether its process is still the Spark Connect server it started."""
    path = Path(state_dir) / RECORD
    try:
        record = ServerRecord(**json.loads(path.read_text()))
    except FileNotFoundError:
        return ServerStatus(None)
    except (ValueError, TypeError) as exc:
        raise SparkServerError(f"{path} is not a server record ({exc}); remove it") from exc
    return ServerStatus(record, stale=not _is_server(record.pid))


def _is_server(pid: int) -> bool:
    """Whether ``pid`` is alive and is a Spark Connect server (a pid reused by another process is not)."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state != b"Z" and SERVER_CLASS.encode() in command


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return int(probe.getsockname()[1])


def start(state_dir: Path, port: int | None = None, *, timeout: float = START_TIMEOUT_S) -> tuple[ServerRecord, bool]:
    """Start the server (or find the one running); returns its record and whether this call started it."""
    state_dir = Path(state_dir)
    status = read_status(state_dir)
    if status.running:
        assert status.record is not None
        if port is not None and port != status.record.port:
            raise SparkServerError(
                f"a server is already running on port {status.record.port} (pid {status.record.pid}); "
                "stop it first (harness spark stop)"
            )
        return status.record, False
    forget(state_dir)
    home = spark_home()
    if connect_jar(home) is None:
        raise SparkServerError(f"this Spark has no Spark Connect jar in {home / 'jars'}")
    port = port or free_port()
    if not 0 < port < 65536:
        raise SparkServerError(f"not a port: {port}")
    state_dir.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    launched = subprocess.run(
        ["bash", str(home / "sbin" / "start-connect-server.sh"), *_conf_arguments(port)],
        env=_environment(home, state_dir, token),
        cwd=state_dir,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        start_new_session=True,  # not in the terminal's process group: Ctrl-C on a later command leaves it running
    )
    pid = _pid_from_file(state_dir)
    log = _log_file(state_dir)
    if launched.returncode != 0 or pid is None:
        said = (launched.stdout + launched.stderr)[-2000:]
        raise SparkServerError(f"start-connect-server.sh failed (exit {launched.returncode}): {said}")
    record = ServerRecord(pid, port, str(log), datetime.now(timezone.utc).isoformat(timespec="seconds"), token)
    _write_record(state_dir, record)
    try:
        _wait_until_accepting(record, timeout)
    except SparkServerError:
        stop(state_dir)
        raise
    return record, True


def _conf_arguments(port: int) -> list[str]:
    settings = SERVER_CONF | {"spark.connect.grpc.binding.port": str(port)}
    return [part for key, value in settings.items() for part in ("--conf", f"{key}={value}")]


def _environment(home: Path, state_dir: Path, token: str) -> dict[str, str]:
    """The daemon scripts' settings: pid file and log in ``state_dir``, loopback, the token (never on a command
    line, where every user could read it)."""
    environment = {k: v for k, v in os.environ.items() if k not in ("SPARK_NO_DAEMONIZE", "SPARK_REMOTE")}
    return environment | {
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": LOOPBACK,
        "SPARK_PID_DIR": str(state_dir),
        "SPARK_LOG_DIR": str(state_dir),
        "SPARK_IDENT_STRING": IDENT,
        "SPARK_CONNECT_AUTHENTICATE_TOKEN": token,
    }


def _pid_file(state_dir: Path) -> Path:
    return state_dir / f"spark-{IDENT}-{SERVER_CLASS}-1.pid"


def _pid_from_file(state_dir: Path) -> int | None:
    try:
        return int(_pid_file(state_dir).read_text().strip())
    except (OSError, ValueError):
        return None


def _log_file(state_dir: Path) -> Path:
    """The daemon script's log (``spark-IDENT-CLASS-1-HOST.out``)."""
    found = sorted(state_dir.glob(f"spark-{IDENT}-{SERVER_CLASS}-1-*.out"))
    return found[0] if found else state_dir / "server.out"


def _write_record(state_dir: Path, record: ServerRecord) -> None:
    """The record, readable by this user only (it holds the token)."""
    path = state_dir / RECORD
    descriptor = os.open(path.with_suffix(".tmp"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        json.dump(asdict(record), handle, indent=1)
    os.replace(path.with_suffix(".tmp"), path)


def _wait_until_accepting(record: ServerRecord, timeout: float) -> None:
    """Until the gRPC port takes connections (the service is started last, once Spark is up)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _is_server(record.pid):
            raise SparkServerError(f"the server exited while starting; its log: {record.log}\n{_tail(record.log)}")
        with contextlib.suppress(OSError), socket.create_connection((LOOPBACK, record.port), timeout=1):
            return
        time.sleep(0.25)
    raise SparkServerError(f"the server did not accept connections within {timeout:.0f} s; its log: {record.log}")


def _tail(log: str, lines: int = 15) -> str:
    try:
        return "\n".join(Path(log).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def stop(state_dir: Path, *, timeout: float = STOP_TIMEOUT_S) -> ServerStatus:
    """Stop the recorded server (SIGTERM, then SIGKILL after ``timeout``) and remove its record; the status before."""
    state_dir = Path(state_dir)
    status = read_status(state_dir)
    if status.running:
        assert status.record is not None
        _end(status.record.pid, timeout)
    forget(state_dir)
    return status


def _end(pid: int, timeout: float) -> None:
    """What ``stop-connect-server.sh`` does (SIGTERM to the JVM), and then wait until it is gone."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    for final in (signal.SIGKILL, None):
        deadline = time.monotonic() + timeout
        while _is_server(pid):
            if time.monotonic() > deadline:
                if final is None:
                    raise SparkServerError(f"the server (pid {pid}) did not exit, even after SIGKILL")
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, final)
                break
            time.sleep(0.1)


def forget(state_dir: Path) -> None:
    """Remove the record and the daemon's pid file (the log stays, for a post-mortem)."""
    for path in (Path(state_dir) / RECORD, _pid_file(Path(state_dir))):
        path.unlink(missing_ok=True)


def token_for(url: str, state_dir: Path | None) -> str | None:
    """The token of the server ``harness spark start`` recorded, when ``url`` names it (loopback, its port)."""
    if state_dir is None:
        return None
    parts = urlsplit(url)
    status = read_status(state_dir)
    if not status.running or parts.hostname is None or not is_loopback(parts.hostname):
        return None
    assert status.record is not None
    return status.record.token if parts.port == status.record.port else None
