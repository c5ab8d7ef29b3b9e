"""SecantusDB as a separate daemon process (``python -m secantus``), as an operator runs it.

Unlike the embedded target, the daemon follows ``mongod``: test commands
(``configureFailPoint``) are off unless asked for, so fail-point tests run
through the wire proxy's emulation (``--failpoints auto``). The harness
starts it on a free loopback port, waits until it answers, and stops it with
SIGTERM (SIGKILL if it lingers).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pymongo import MongoClient
from pymongo.errors import PyMongoError

from harness.core.ports import TargetInfo, TargetUnavailable
from harness.targets.target_base import TargetBase, secantus_package

_START_TIMEOUT_S = 30.0
_STOP_TIMEOUT_S = 10.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class SecantusDaemon(TargetBase):
    kind = "daemon"

    def __init__(
        self, name: str = "secantusdb", *, test_commands: bool = False, storage_path: str = ":memory:"
    ) -> None:
        super().__init__(name)
        self.test_commands = test_commands
        self.storage_path = storage_path
        self.process: subprocess.Popen | None = None
        self._log = tempfile.NamedTemporaryFile(prefix="secantus-daemon-", suffix=".log", delete=False)

    def start(self) -> TargetInfo:
        port = _free_port()
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
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT)
        self.uri = f"mongodb://127.0.0.1:{port}/"
        self._wait_until_answering()
        self.connect_admin()
        self.info.details.update(
            {"test_commands": self.test_commands, "pid": self.process.pid, "log": self._log.name, **secantus_package()}
        )
        return self.info

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
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(_STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
