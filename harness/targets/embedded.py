"""SecantusDB embedded in the harness process: the default target.

One server with in-memory storage serves the whole run: it starts and
stops in a fraction of a second (see :func:`stop_server`), once per run. ``storage_path`` gives an on-disk server
instead (fault campaigns restart it and resume across the restart).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import tempfile
from typing import Any

from harness.core.ports import TargetInfo, TargetUnavailable
from harness.targets.target_base import TargetBase, secantus_package, secantus_package_version


class EmbeddedSecantus(TargetBase):
    kind = "embedded"

    def __init__(
        self,
        name: str = "secantusdb",
        *,
        storage_path: str = ":memory:",
        enable_test_commands: bool = True,
        **server_options: Any,
    ) -> None:
        super().__init__(name)
        self.storage_path = storage_path
        self.enable_test_commands = enable_test_commands
        self.server_options = server_options
        self.server: Any = None
        self.log_path = ""
        self._log_handler: logging.Handler | None = None

    def start(self) -> TargetInfo:
        self._capture_server_log()
        try:
            from secantus import SecantusDBServer
        except ImportError as exc:  # pragma: no cover - a dependency of the package
            raise TargetUnavailable(f"the embedded target needs the 'secantusdb' package: {exc}") from exc
        options = {"port": 0, "storage_path": self.storage_path, **self.server_options}
        test_commands_configurable = _accepts(SecantusDBServer, "enable_test_commands")
        if test_commands_configurable:
            options["enable_test_commands"] = self.enable_test_commands
        elif not self.enable_test_commands:
            raise TargetUnavailable(
                f"secantusdb {secantus_package_version()} cannot turn test commands off "
                "(its server takes no enable_test_commands option)"
            )
        self.server = SecantusDBServer(**options)
        self.server.start()
        self.uri = self.server.uri
        self.connect_admin()
        self.info.details.update(secantus_package())
        # Releases before 0.7 have no switch: whether they accept configureFailPoint is probed by the run.
        self.info.details["test_commands"] = (
            self.enable_test_commands if test_commands_configurable else "release default"
        )
        self.info.details["log"] = self.log_path
        return self.info

    def _capture_server_log(self) -> None:
        """The server runs in our process: its log goes to a file named in the provenance, not our terminal."""
        if self._log_handler is not None:
            return
        handle, self.log_path = tempfile.mkstemp(prefix="secantus-embedded-", suffix=".log")
        os.close(handle)
        self._log_handler = logging.FileHandler(self.log_path)
        self._log_handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        server_logger = logging.getLogger("secantus")
        server_logger.addHandler(self._log_handler)
        server_logger.propagate = False

    def stop(self) -> None:
        super().stop()
        if self.server is not None:
            stop_server(self.server)
            self.server = None
        if self._log_handler is not None:
            server_logger = logging.getLogger("secantus")
            server_logger.removeHandler(self._log_handler)
            server_logger.propagate = True
            self._log_handler.close()
            self._log_handler = None


def warm_up() -> None:
    """Open and close an in-memory storage engine, before forking workers that each start a server.

    The first storage open in a process pays a one-time cost (about 0.1 s,
    in the storage library); forked after it, each worker's own open takes
    about 0.02 s. Nothing is left open: no listener, no storage, no thread.
    """
    from secantus import SecantusDBServer

    stop_server(SecantusDBServer(port=0, storage_path=":memory:"))


def stop_server(server: Any) -> None:
    """Stop a SecantusDB server without its two-second wait for the accept loop.

    ``SecantusDBServer.stop`` closes the listening socket and joins the accept
    thread for up to 2 s, because closing a socket does not wake an
    ``accept()`` blocked on it. Shutting the socket down first does (Linux
    returns from ``accept`` at once), so the join returns immediately; the
    rest of ``stop`` (draining connections, closing storage) is unchanged.
    """
    listener = getattr(server, "_socket", None)
    if listener is not None:
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)
    server.stop()


def _accepts(cls: type, keyword: str) -> bool:
    """Whether ``cls(...)`` takes ``keyword``: server options differ between SecantusDB releases."""
    import inspect

    parameters = inspect.signature(cls.__init__).parameters
    return keyword in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())
