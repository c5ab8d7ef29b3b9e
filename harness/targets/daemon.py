"""SecantusDB as a separate daemon process (``python -m secantus``), as an operator runs it.

Unlike the embedded target, the daemon follows ``mongod``: test commands
(``configureFailPoint``) are off unless asked for, so fail-point tests run
through the wire proxy's emulation (``--failpoints auto``). The harness
starts it on a free loopback port, waits until it answers, and stops it with
SIGTERM (SIGKILL if it lingers).

Its shapes follow the daemon's own switches: ``--enable-test-commands``,
``--standalone`` (no replica-set advertisement in ``hello``) and on-disk
storage in a scratch directory the target makes and removes, which is what
lets a fault campaign restart it (:meth:`SecantusDaemon.restart_in_place`).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pymongo import MongoClient
from pymongo.errors import PyMongoError

from harness.core.ports import TargetInfo, TargetUnavailable
from harness.engine import child_processes
from harness.shared.target_base import TargetBase, discard_log, secantus_package

_START_TIMEOUT_S = 30.0
_STOP_TIMEOUT_S = 10.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class SecantusDaemon(TargetBase):
    kind = "daemon"

    def __init__(
        self,
        name: str = "secantusdb",
        *,
        test_commands: bool = False,
        storage_path: str = ":memory:",
        standalone: bool = False,
        scratch_storage: bool = False,
    ) -> None:
        super().__init__(name)
        self.test_commands = test_commands
        self.storage_path = storage_path
        self.standalone = standalone
        #: On disk in a directory this target makes at start and removes at stop.
        self.scratch_storage = scratch_storage
        self._scratch_dir = ""
        self.port = 0
        self.process: subprocess.Popen | None = None
        self._log = tempfile.NamedTemporaryFile(prefix="secantus-daemon-", suffix=".log", delete=False)

    def start(self) -> TargetInfo:
        if self.scratch_storage and not self._scratch_dir:
            self._scratch_dir = tempfile.mkdtemp(prefix="secantus-daemon-data-")
            self.storage_path = str(Path(self._scratch_dir) / "data")
        self.port = _free_port()
        self._launch()
        self.connect_admin()
        self.info.details.update(
            {
                "test_commands": self.test_commands,
                "pid": self.process.pid if self.process else None,
                "log": self._log.name,
                **self.shape(),
                **secantus_package(),
            }
        )
        return self.info

    def shape(self) -> dict[str, object]:
        """The deployment shape, for the provenance: the switches the daemon was started with."""
        on_disk = self.storage_path != ":memory:"
        return {
            "storage": "on-disk" if on_disk else "in-memory",
            "storage_path": self.storage_path if on_disk else None,
            "standalone": self.standalone,
        }

    def _launch(self) -> None:
        """Start ``python -m secantus`` on ``self.port`` and wait until it answers."""
        port = self.port
        command = [
            sys.executable,
            "-m",
            "secantus",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--storage-path",
            self.storage_path,
            "--log-level",
            "WARNING",
        ]
        if self.test_commands:
            command.append("--enable-test-commands")
        if self.standalone:
            command.append("--standalone")
        self.process = child_processes.popen(command, stdout=self._log, stderr=subprocess.STDOUT)
        self.uri = f"mongodb://127.0.0.1:{port}/"
        self._wait_until_answering()

    def restart_problem(self) -> str | None:
        """Why this target cannot be restarted in place, or None when it can (fault campaigns ask first)."""
        if self.process is None:
            return f"target {self.name!r} is not running"
        if self.storage_path == ":memory:":
            return "the daemon uses in-memory storage; a restart would lose every event (use =on-disk)"
        return None

    def restart_in_place(self, down_s: float = 0.0) -> float:
        """Stop the daemon, wait ``down_s``, start it again on the same port and storage; returns seconds taken."""
        problem = self.restart_problem()
        if problem:
            raise TargetUnavailable(problem)
        began = time.perf_counter()
        self._terminate()
        if down_s > 0:
            time.sleep(down_s)
        self._launch()
        self.info.details["pid"] = self.process.pid if self.process else None
        return time.perf_counter() - began

    def _wait_until_answering(self) -> None:
        deadline = time.monotonic() + _START_TIMEOUT_S
        with MongoClient(self.uri, serverSelectionTimeoutMS=500, directConnection=True) as probe:
            while True:
                if self.process is not None and self.process.poll() is not None:
                    raise TargetUnavailable(
                        f"the SecantusDB daemon exited with {self.process.returncode}: {self._log_tail()}"
                    )
                try:
                    probe.admin.command("ping")
                    return
                except PyMongoError:
                    if time.monotonic() > deadline:
                        self.stop()
                        raise TargetUnavailable(
                            f"the SecantusDB daemon did not answer within {_START_TIMEOUT_S:g}s: {self._log_tail()}"
                        ) from None
                    time.sleep(0.1)

    def _log_tail(self) -> str:
        return Path(self._log.name).read_text(errors="replace")[-2000:]

    def stop(self) -> None:
        super().stop()
        self._terminate()
        self._log.close()
        discard_log(self._log.name, keep_if_written=True)
        if self._scratch_dir:
            shutil.rmtree(self._scratch_dir, ignore_errors=True)
            self._scratch_dir = ""

    def _terminate(self) -> None:
        """SIGTERM, then SIGKILL if the daemon lingers past the stop timeout."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(_STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
