"""A private ``toxiproxy-server`` process: found, started on a free loopback port, stopped.

One server per harness run (it starts in well under a second). The harness
owns it outright, so ``reset`` and ``verify_clean`` may treat every proxy on
it as the harness's own. The server's log goes to a temporary file, not a
pipe: a pipe nobody reads fills up and stalls the proxy mid-test. The last
lines of that log are quoted when the server fails to start.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import tempfile
import time
import weakref
from pathlib import Path

from faults.network.api import ToxiproxyAPI
from faults.network.toxics import NetworkFaultError
from harness.core.project_data import checkout_root
from harness.engine import child_processes

_CHECKOUT = checkout_root()
#: Where ``scripts/install-toxiproxy.sh`` puts the pinned server in a checkout (None: an installed wheel has none).
PROJECT_BINARY = _CHECKOUT / ".tools" / "bin" / "toxiproxy-server" if _CHECKOUT is not None else None
BINARY_ENV = "TOXIPROXY_SERVER"
INSTALL_HINT = "run scripts/install-toxiproxy.sh (needs Go) or set TOXIPROXY_SERVER=/path/to/toxiproxy-server"


class ToxiproxyUnavailable(NetworkFaultError):
    """No ``toxiproxy-server`` binary, or it would not start."""


def find_binary() -> Path:
    """``$TOXIPROXY_SERVER``, else the checkout's ``.tools/bin``, else ``PATH``."""
    explicit = os.environ.get(BINARY_ENV)
    if explicit:
        path = Path(explicit)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise ToxiproxyUnavailable(f"{BINARY_ENV}={explicit} is not an executable file")
        return path
    if PROJECT_BINARY is not None and PROJECT_BINARY.is_file() and os.access(PROJECT_BINARY, os.X_OK):
        return PROJECT_BINARY
    on_path = shutil.which("toxiproxy-server")
    if on_path:
        return Path(on_path)
    checked = f"nothing at {PROJECT_BINARY}, " if PROJECT_BINARY is not None else ""
    raise ToxiproxyUnavailable(f"no toxiproxy-server found ({BINARY_ENV} unset, {checked}none on PATH); {INSTALL_HINT}")


def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


_LIVE_SERVERS: weakref.WeakSet[ToxiproxyServer] = weakref.WeakSet()


class ToxiproxyServer:
    """``with ToxiproxyServer() as server: server.api_url ...``; :meth:`stop` is safe to call twice."""

    def __init__(
        self,
        binary: Path | str | None = None,
        *,
        host: str = "127.0.0.1",
        start_timeout_s: float = 10.0,
        log_level: str = "warn",
    ) -> None:
        self.binary = Path(binary) if binary else None
        self.host = host
        self.port = 0
        self.start_timeout_s = start_timeout_s
        self.log_level = log_level
        self.version = "unknown"
        self.process: subprocess.Popen[bytes] | None = None
        self.api: ToxiproxyAPI | None = None
        self._log = None

    @property
    def api_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> ToxiproxyServer:
        if self.process is not None:
            return self
        binary = self.binary or find_binary()
        # The port is probed free, then handed to the server: another process may
        # take it in between, so a start that dies with "address in use" is retried.
        last_error: ToxiproxyUnavailable | None = None
        for _ in range(3):
            try:
                self._start_once(binary)
                _LIVE_SERVERS.add(self)
                return self
            except ToxiproxyUnavailable as exc:
                last_error = exc
                self.stop()
                if "address already in use" not in str(exc):
                    break
        assert last_error is not None
        raise last_error

    def _start_once(self, binary: Path) -> None:
        self.port = free_loopback_port()
        self._log = tempfile.NamedTemporaryFile(prefix="toxiproxy-", suffix=".log", delete=False)
        env = dict(os.environ, LOG_LEVEL=self.log_level)
        self.process = child_processes.popen(  # ends with the harness, however the harness ends
            [str(binary), "-host", self.host, "-port", str(self.port)],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        self.api = ToxiproxyAPI(self.api_url, timeout_s=1.0)
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            if self.process.poll() is not None:
                raise ToxiproxyUnavailable(
                    f"{binary} exited with status {self.process.returncode} while starting "
                    f"on {self.api_url}; log tail:\n{self.log_tail()}"
                )
            try:
                self.version = self.api.version()
                break
            except NetworkFaultError:
                if time.monotonic() >= deadline:
                    raise ToxiproxyUnavailable(
                        f"{binary} did not answer on {self.api_url}/version within "
                        f"{self.start_timeout_s:g}s; log tail:\n{self.log_tail()}"
                    ) from None
                time.sleep(0.02)
        self.api.timeout_s = 5.0

    def log_tail(self, lines: int = 15) -> str:
        if self._log is None:
            return ""
        try:
            return "\n".join(Path(self._log.name).read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        """Terminate, then kill after 5 s; every proxy dies with the process."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)
        if self.api is not None:
            self.api.close()
            self.api = None
        if self._log is not None:
            self._log.close()
            Path(self._log.name).unlink(missing_ok=True)
            self._log = None

    def __enter__(self) -> ToxiproxyServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@atexit.register
def _stop_every_server_at_exit() -> None:
    """A harness that dies with a server running must not leave a listening proxy behind."""
    for server in list(_LIVE_SERVERS):
        server.stop()
