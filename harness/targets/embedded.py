"""SecantusDB embedded in the harness process: the default target, in each shape a user deploys.

One server with in-memory storage serves the whole run: it starts and
stops in a fraction of a second (see :func:`stop_server`), once per run. The shapes:

- storage: in memory (the default), on disk at ``storage_path``, or on disk in a scratch directory the
  target makes and removes (``scratch_storage``); only on-disk servers can be restarted
  (:meth:`EmbeddedSecantus.restart_in_place`: fault campaigns restart them and resume across the restart);
- topology: a single-node replica-set primary (the default) or a standalone (``standalone``: no set name in
  ``hello``, so the ``single``-topology tests run and change streams are refused as mongod refuses them);
- test commands on (the default) or off.

Each shape is recorded in the provenance (``details``: ``storage``, ``standalone``, ``test_commands``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import socket
import tempfile
import time
from typing import Any

from harness.core.ports import TargetInfo, TargetUnavailable
from harness.shared.target_base import TargetBase, discard_log, secantus_package, secantus_package_version


class EmbeddedSecantus(TargetBase):
    kind = "embedded"

    def __init__(
        self,
        name: str = "secantusdb",
        *,
        storage_path: str = ":memory:",
        enable_test_commands: bool = True,
        standalone: bool = False,
        scratch_storage: bool = False,
        **server_options: Any,
    ) -> None:
        super().__init__(name)
        self.storage_path = storage_path
        self.enable_test_commands = enable_test_commands
        #: On disk in a directory this target makes at start and removes at stop (``storage_path`` is set then).
        self.scratch_storage = scratch_storage
        self._scratch_dir = ""
        if standalone:
            server_options = {**server_options, "replica_set_name": None}
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
        if self.scratch_storage and not self._scratch_dir:
            self._scratch_dir = tempfile.mkdtemp(prefix="secantus-embedded-data-")
            self.storage_path = os.path.join(self._scratch_dir, "data")
        test_commands_configurable = _accepts(SecantusDBServer, "enable_test_commands")
        if not test_commands_configurable and not self.enable_test_commands:
            raise TargetUnavailable(
                f"secantusdb {secantus_package_version()} cannot turn test commands off "
                "(its server takes no enable_test_commands option)"
            )
        self.server = SecantusDBServer(**self._server_arguments(port=0))
        self.server.start()
        self.uri = self.server.uri
        self.connect_admin()
        self.info.details.update(secantus_package())
        # Releases before 0.7 have no switch: whether they accept configureFailPoint is probed by the run.
        self.info.details["test_commands"] = (
            self.enable_test_commands if test_commands_configurable else "release default"
        )
        self.info.details.update(self.shape())
        self.info.details["log"] = self.log_path
        return self.info

    def _server_arguments(self, port: int) -> dict[str, Any]:
        """``SecantusDBServer``'s keywords for this shape (the same at start and at every restart)."""
        from secantus import SecantusDBServer

        options = {"port": port, "storage_path": self.storage_path, **self.server_options}
        if _accepts(SecantusDBServer, "enable_test_commands"):
            options["enable_test_commands"] = self.enable_test_commands
        return options

    @property
    def standalone(self) -> bool:
        """Started without a replica-set name: ``hello`` says standalone, change streams are refused."""
        return "replica_set_name" in self.server_options and not self.server_options["replica_set_name"]

    def shape(self) -> dict[str, Any]:
        """The deployment shape, for the provenance: storage and topology persona as configured, not inferred."""
        on_disk = self.storage_path != ":memory:"
        return {
            "storage": "on-disk" if on_disk else "in-memory",
            "storage_path": self.storage_path if on_disk else None,
            "standalone": self.standalone,
        }

    def restart_problem(self) -> str | None:
        """Why this target cannot be restarted in place, or None when it can (fault campaigns ask first)."""
        if self.server is None:
            return f"target {self.name!r} is not running"
        if self.storage_path == ":memory:":
            return "the embedded target uses in-memory storage; a restart would lose every event"
        return None

    def restart_in_place(self, down_s: float = 0.0) -> float:
        """Stop the server, wait ``down_s``, start a new one on the same port and storage; returns seconds taken.

        The same port keeps every client's seed list and any proxy's upstream valid: what a driver sees is a
        server that went away and came back.
        """
        problem = self.restart_problem()
        if problem:
            raise TargetUnavailable(problem)
        from secantus import SecantusDBServer

        began = time.perf_counter()
        port = self.server.port
        stop_server(self.server)
        self.server = None
        if down_s > 0:
            time.sleep(down_s)
        last_error: Exception | None = None
        for _ in range(50):  # the old listener's port may take a moment to be free again
            fresh = SecantusDBServer(**self._server_arguments(port=port))
            try:
                fresh.start()
            except OSError as exc:
                last_error = exc
                time.sleep(0.1)
                continue
            self.server = fresh
            return time.perf_counter() - began
        raise TargetUnavailable(f"SecantusDB would not start again on port {port}: {last_error}")

    def _capture_server_log(self) -> None:
        """The server runs in our process: its log goes to a file named in the provenance, not our terminal.

        The file is made in the temporary folder at start and removed at stop when the server wrote nothing
        to it (the usual case), so a run leaves no empty log behind; one with something in it is kept.
        """
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
            discard_log(self.log_path, keep_if_written=True)
        if self._scratch_dir:
            shutil.rmtree(self._scratch_dir, ignore_errors=True)
            self._scratch_dir = ""


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
