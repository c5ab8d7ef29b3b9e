"""Restarting an on-disk embedded SecantusDB on the same port and storage path.

Kept in the campaign package, not on the target class: only campaigns need
it, and it uses nothing but the target's public attributes. The same port
matters: the Toxiproxy upstream and every client's seed list stay valid, so
the only thing the driver sees is a server that went away and came back.
"""

from __future__ import annotations

import time
from typing import Any


class RestartUnsupported(Exception):
    """The target cannot be restarted in place (not embedded, or in-memory storage)."""


def restartable(target: Any) -> str | None:
    """Why ``target`` cannot be restarted, or None when it can."""
    server = getattr(target, "server", None)
    if server is None or not hasattr(target, "storage_path"):
        return f"target {getattr(target, 'name', target)!r} is not an embedded SecantusDB started by the harness"
    if target.storage_path == ":memory:":
        return "the embedded target uses in-memory storage; a restart would lose every event"
    return None


def restart_embedded(target: Any, down_s: float = 0.0) -> float:
    """Stop the server, wait ``down_s``, start a new one on the same port and path; returns seconds taken."""
    problem = restartable(target)
    if problem:
        raise RestartUnsupported(problem)
    from secantus import SecantusDBServer

    from harness.targets.embedded import stop_server

    began = time.perf_counter()
    old = target.server
    port = old.port
    stop_server(old)
    if down_s > 0:
        time.sleep(down_s)
    last_error: Exception | None = None
    for _ in range(50):  # the old listener's port may take a moment to be free again
        fresh = SecantusDBServer(
            port=port,
            storage_path=target.storage_path,
            enable_test_commands=target.enable_test_commands,
            **target.server_options,
        )
        try:
            fresh.start()
        except OSError as exc:
            last_error = exc
            time.sleep(0.1)
            continue
        target.server = fresh
        return time.perf_counter() - began
    raise RestartUnsupported(f"SecantusDB would not start again on port {port}: {last_error}")
