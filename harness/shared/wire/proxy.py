"""The wire proxy's lifecycle: an asyncio server in its own thread.

The harness is synchronous, so the proxy runs its event loop in a daemon
thread and offers blocking :meth:`WireProxy.start` / :meth:`WireProxy.stop`.
Fail points live in a thread-safe :class:`FailPointSet` that both the
harness (through :meth:`configure_fail_point`) and drivers (through a
``configureFailPoint`` command sent to the proxy) arm. docs/wire-proxy.md is
the contract.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from harness.shared.wire.connection import Connection, Route
from harness.shared.wire.failcommand import FailPointSet
from harness.shared.wire.shaping import ReplyShaping, ShapingConfig

START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0


class WireProxy:
    """A MongoDB wire-protocol proxy in front of one target member, emulating fail points."""

    def __init__(
        self,
        upstream_host: str,
        upstream_port: int,
        *,
        listen_host: str = "127.0.0.1",
        listen_port: int = 0,
        seed: int | None = None,
        connect_timeout_s: float = 10.0,
        member: Any = None,
    ) -> None:
        self.upstream_host, self.upstream_port = upstream_host, int(upstream_port)
        self.listen_host, self.listen_port = listen_host, listen_port
        self.connect_timeout_s = connect_timeout_s
        self.fail_points = FailPointSet(seed)
        self.shaping = ReplyShaping()
        self.address: tuple[str, int] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.base_events.Server | None = None
        self._connections: dict[Connection, asyncio.Task[Any]] = {}
        self._route: Route | None = None  # known once listening: it carries the proxy's own address
        #: The emulated replica-set member this listener plays (harness/shared/wire/replica_set.py), or None.
        self.member = member

    # -- lifecycle ----------------------------------------------------------------------
    def start(self) -> tuple[str, int]:
        if self._loop is not None:
            raise RuntimeError("WireProxy already started")
        loop = self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=loop.run_forever, daemon=True, name=f"wire-proxy->{self.upstream_host}:{self.upstream_port}"
        )
        self._thread.start()
        try:
            self.address = asyncio.run_coroutine_threadsafe(self._listen(), loop).result(START_TIMEOUT_S)
        except BaseException:
            self._end_loop()
            raise
        return self.address

    def stop(self) -> None:
        """Close the listener and every connection pair, then end the thread. Safe to call twice."""
        if self._loop is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(STOP_TIMEOUT_S)
        finally:
            self._end_loop()

    def __enter__(self) -> WireProxy:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def uri(self) -> str:
        if self.address is None:
            raise RuntimeError("WireProxy not started")
        return f"mongodb://{self.address[0]}:{self.address[1]}/"

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    # -- fail points (thread-safe) ------------------------------------------------------
    def configure_fail_point(self, command: dict[str, Any]) -> dict[str, Any]:
        """Arm or turn off a point from a ``configureFailPoint`` document; raises FailPointConfigError."""
        return self.fail_points.configure(command)

    def disable(self, name: str) -> None:
        self.fail_points.disable(name)

    def armed(self) -> list[str]:
        return self.fail_points.armed()

    # -- reply shaping (thread-safe) ------------------------------------------------------
    def shape_replies(self, config: dict[str, Any] | ShapingConfig) -> ShapingConfig:
        """Arm reply shaping (docs/wire-proxy.md, "Reply shaping"); raises ShapingConfigError."""
        parsed = config if isinstance(config, ShapingConfig) else ShapingConfig.parse(config)
        self.shaping.arm(parsed)
        return parsed

    def clear_shaping(self, forget_held: bool = True) -> None:
        self.shaping.clear(forget_held)

    # -- event loop side ----------------------------------------------------------------
    async def _listen(self) -> tuple[str, int]:
        self._server = await asyncio.start_server(self._accept, self.listen_host, self.listen_port)
        host, port = self._server.sockets[0].getsockname()[:2]
        self._route = Route(
            self.upstream_host,
            self.upstream_port,
            f"{host}:{port}",
            self.fail_points,
            self.connect_timeout_s,
            shaping=self.shaping,
            member=self.member,
        )
        return host, port

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        assert self._route is not None
        connection = Connection(self._route, reader, writer)
        self._connections[connection] = asyncio.current_task()  # type: ignore[assignment]
        try:
            await connection.run()
        except asyncio.CancelledError:
            pass  # stop(): ending normally keeps asyncio's stream callback from logging the cancellation
        finally:
            self._connections.pop(connection, None)

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        tasks = list(self._connections.values())
        for connection, task in list(self._connections.items()):
            connection.close()
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        # A connection accepted while the listener closed may have a task that has not started yet: cancel it
        # too, or closing the loop leaves its coroutine never awaited.
        await asyncio.sleep(0)
        late = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)

    def _end_loop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(STOP_TIMEOUT_S)
        if not loop.is_running():
            loop.close()
        self._loop = self._thread = None
