"""Restarting the target in place: the same port, the same on-disk storage.

The targets that can do it (SecantusDB on disk, embedded or as a daemon, see
``harness.targets``) declare it with two methods, :class:`RestartableTarget`;
a campaign asks ``restart_problem()`` before it schedules a restart and calls
``restart_in_place(down_s)`` for each. The same port matters: the Toxiproxy
upstream and every client's seed list stay valid, so the only thing the driver
sees is a server that went away and came back.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


class RestartUnsupported(Exception):
    """The target cannot be restarted in place (not started by the harness, or in-memory storage)."""


@runtime_checkable
class RestartableTarget(Protocol):
    """A target that declares it can be restarted in place."""

    def restart_problem(self) -> str | None:
        """Why it cannot be restarted now (in-memory storage, not running), or None when it can."""
        ...

    def restart_in_place(self, down_s: float = 0.0) -> float:
        """Stop the server, wait ``down_s``, start it again on the same port and storage; seconds taken."""
        ...


def restartable(target: Any) -> str | None:
    """Why ``target`` cannot be restarted, or None when it can."""
    if not isinstance(target, RestartableTarget):
        return (
            f"target {getattr(target, 'name', target)!r} cannot be restarted by the harness "
            "(restartable: embedded, embedded-on-disk, secantusdb-daemon=on-disk)"
        )
    return target.restart_problem()


def restart_target(target: Any, down_s: float = 0.0) -> float:
    """Restart ``target`` in place after ``down_s`` of downtime; returns seconds taken."""
    problem = restartable(target)
    if problem:
        raise RestartUnsupported(problem)
    seconds: float = target.restart_in_place(down_s)
    return seconds
