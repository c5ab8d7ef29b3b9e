"""Fail points, with one owner.

``configureFailPoint`` is sent only from here. A :class:`FailPointManager`
records every fail point it arms and turns all of them off in
:meth:`FailPointManager.disarm_all`, which the runner calls in a ``finally``
after each test (failure, exception, timeout or Ctrl-C alike). An ``atexit``
hook is the last line of defence for a process that is exiting with fail
points still armed.

Where fail points are armed is a :class:`FailPointBackend`: the target's own
``configureFailPoint`` (native), or a wire proxy that emulates the command
for targets that refuse it.
"""

from __future__ import annotations

import atexit
import threading
import weakref
from typing import Any, Protocol

from pymongo import MongoClient
from pymongo.errors import OperationFailure, PyMongoError


class FailPointError(Exception):
    """A fail point could not be armed (the message says why and on what)."""


class FailPointBackend(Protocol):
    name: str

    def arm(self, command: dict[str, Any]) -> None: ...

    def disarm(self, fail_point: str) -> None: ...


class NativeFailPoints:
    """``configureFailPoint`` sent to the target through the harness's admin client."""

    name = "native"

    def __init__(self, admin: MongoClient) -> None:
        self.admin = admin

    def arm(self, command: dict[str, Any]) -> None:
        try:
            self.admin.admin.command(dict(command))
        except OperationFailure as exc:
            raise FailPointError(f"target refused configureFailPoint {command.get('configureFailPoint')!r}: "
                                 f"{exc.details.get('errmsg', exc) if exc.details else exc}") from exc
        except PyMongoError as exc:
            raise FailPointError(f"configureFailPoint failed: {exc}") from exc

    def disarm(self, fail_point: str) -> None:
        self.admin.admin.command({"configureFailPoint": fail_point, "mode": "off"})

    def supported(self) -> bool:
        """Whether the target accepts ``configureFailPoint`` (probed with a harmless ``off``)."""
        try:
            self.disarm("failCommand")
            return True
        except PyMongoError:
            return False


class EmulatedFailPoints:
    """Fail points emulated by a :class:`faults.wire.WireProxy` in front of the target.

    For targets that refuse ``configureFailPoint``: the driver under test must
    connect through ``proxy.uri``; the proxy fails commands itself
    (docs/wire-proxy.md). The harness's admin client may go direct: it is
    never failed, since nothing it sends passes through the proxy.
    """

    name = "emulated"

    def __init__(self, proxy: Any) -> None:
        self.proxy = proxy

    def arm(self, command: dict[str, Any]) -> None:
        from faults.wire import FailPointConfigError  # the wire package is only needed when emulating

        try:
            self.proxy.configure_fail_point(dict(command))
        except FailPointConfigError as exc:
            raise FailPointError(f"wire proxy cannot emulate {command.get('configureFailPoint')!r}: {exc}") from exc

    def disarm(self, fail_point: str) -> None:
        self.proxy.disable(fail_point)

    def leftovers(self) -> list[str]:
        """What the proxy itself still has armed: teardown asks rather than assumes."""
        return list(self.proxy.armed())

    def supported(self) -> bool:
        """Always: emulation needs nothing from the target."""
        return True


_LIVE_MANAGERS: "weakref.WeakSet[FailPointManager]" = weakref.WeakSet()


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
            except Exception as exc:  # noqa: BLE001 - every point must get its chance to be turned off
                problems.append(f"could not turn off fail point {name!r} ({self.backend.name}): {exc}")
                with self._lock:
                    self._armed.append(name)
        leftovers = getattr(self.backend, "leftovers", None)
        for name in leftovers() if leftovers else []:
            problems.append(f"fail point {name!r} is still armed on the {self.backend.name} backend; turned off now")
            self.backend.disarm(name)
        return problems


@atexit.register
def _disarm_everything_at_exit() -> None:
    for manager in list(_LIVE_MANAGERS):
        manager.disarm_all()
