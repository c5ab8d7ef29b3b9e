"""Fail points, with one owner.

``configureFailPoint`` reaches a target only through a
:class:`FailPointManager`. It records every fail point it arms and turns all
of them off in :meth:`FailPointManager.disarm_all`, which the per-test
lifecycle calls after each test (failure, exception, timeout or Ctrl-C
alike). An ``atexit`` hook is the last line of defence for a process that is
exiting with fail points still armed. Where the points are armed is a
:class:`~harness.core.ports.FailPointBackend`, chosen by a plug-in.
"""

from __future__ import annotations

import atexit
import threading
import weakref
from typing import Any

from harness.core.ports import FailPointBackend, FailPointError

_LIVE_MANAGERS: weakref.WeakSet[FailPointManager] = weakref.WeakSet()


class FailPointManager:
    """Arms fail points through a backend and guarantees they are all turned off."""

    def __init__(self, backend: FailPointBackend) -> None:
        self.backend = backend
        self._armed: list[str] = []
        self._lock = threading.Lock()
        self.history: list[dict[str, Any]] = []
        _LIVE_MANAGERS.add(self)

    def arm(self, command: dict[str, Any]) -> None:
        name = command.get("configureFailPoint")
        if not isinstance(name, str):
            raise FailPointError(f"not a configureFailPoint command: {command!r}")
        with self._lock:
            newly_armed = name not in self._armed
            if newly_armed:
                self._armed.append(name)  # recorded first: a half-armed point is still turned off
            self.history.append(dict(command))
        try:
            self.backend.arm(command)
        except FailPointError:
            # The target refused it, so nothing was armed; forget it unless it was armed before.
            if newly_armed:
                with self._lock:
                    self._armed.remove(name)
            raise

    @property
    def armed(self) -> list[str]:
        with self._lock:
            return list(self._armed)

    def disarm_all(self) -> list[str]:
        """Turn off every armed fail point; returns problems (empty when all went off).

        A native ``configureFailPoint ... mode: off`` is confirmed by the server's
        reply; a backend that can list what is armed (the wire proxy) is asked
        afterwards, so a point armed behind the manager's back is found too.
        """
        with self._lock:
            names, self._armed = list(self._armed), []
        problems = []
        for name in names:
            try:
                self.backend.disarm(name)
            except Exception as exc:
                problems.append(f"could not turn off fail point {name!r} ({self.backend.name}): {exc}")
                with self._lock:
                    self._armed.append(name)
        for name in self.backend.leftovers():
            problems.append(f"fail point {name!r} is still armed on the {self.backend.name} backend; turned off now")
            self.backend.disarm(name)
        return problems


@atexit.register
def _disarm_everything_at_exit() -> None:
    for manager in list(_LIVE_MANAGERS):
        manager.disarm_all()
