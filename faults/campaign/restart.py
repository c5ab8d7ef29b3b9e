"""Restarting the target in place: the same port, the same on-disk storage.

Every target declares whether it can (the target port's ``restart_problem()``, ``None`` when it can:
SecantusDB on disk, embedded or as a daemon, see ``harness.targets``); a campaign asks it before it
schedules a restart and calls ``restart_in_place(down_s)`` for each. The same port matters: the Toxiproxy
upstream and every client's seed list stay valid, so the only thing the driver
sees is a server that went away and came back.
"""

from __future__ import annotations

from harness.core.ports import Target


class RestartUnsupported(Exception):
    """The target cannot be restarted in place (not started by the harness, or in-memory storage)."""


def restartable(target: Target) -> str | None:
    """Why ``target`` cannot be restarted, or None when it can (the target port's ``restart_problem``)."""
    return target.restart_problem()


def restart_target(target: Target, down_s: float = 0.0) -> float:
    """Restart ``target`` in place after ``down_s`` of downtime; returns seconds taken."""
    problem = restartable(target)
    if problem:
        raise RestartUnsupported(problem)
    seconds: float = target.restart_in_place(down_s)
    return seconds
