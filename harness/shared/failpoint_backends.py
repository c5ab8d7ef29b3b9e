"""The fail-point backends: the target's own ``configureFailPoint``, or the wire proxy's emulation.

Each is a :class:`~harness.core.ports.FailPointBackend`, named (``name``, the record's ``failpoints``) by
how the points are applied: ``native``, ``emulated`` (the run's wire proxy) or
``emulated-by-presenting-proxy`` (a target's presenting proxy answers them). The engine's
:class:`~harness.engine.failpoint_manager.FailPointManager` is their one owner: it
records what is armed and turns it all off after every test. Which backend a
run uses is ``--failpoints`` (``native``, ``emulated``, ``auto``), a table
the fail-point plug-in registers (:mod:`faults.failpoints.plugin`). They live in the shared layer because the
prose tests' server check (:mod:`prose_tests.failpoint_check`) arms a native one of its own.
"""

from __future__ import annotations

from typing import Any

from pymongo import MongoClient
from pymongo.errors import OperationFailure, PyMongoError

from harness.core.ports import FailPointError


class NativeFailPoints:
    """``configureFailPoint`` sent to the target through the harness's admin client.

    ``name`` is how the points are applied, for the record: ``native`` when the server answers the admin
    client, or what answers on its way (a target presented by a wire proxy says
    ``emulated-by-presenting-proxy``: :attr:`harness.shared.target_base.TargetBase.admin_failpoints`).
    """

    def __init__(self, admin: MongoClient, name: str = "native") -> None:
        self.admin = admin
        self.name = name

    def arm(self, command: dict[str, Any]) -> None:
        try:
            self.admin.admin.command(dict(command))
        except OperationFailure as exc:
            raise FailPointError(
                f"target refused configureFailPoint {command.get('configureFailPoint')!r}: "
                f"{exc.details.get('errmsg', exc) if exc.details else exc}"
            ) from exc
        except PyMongoError as exc:
            raise FailPointError(f"configureFailPoint failed: {exc}") from exc

    def disarm(self, fail_point: str) -> None:
        self.admin.admin.command({"configureFailPoint": fail_point, "mode": "off"})

    def leftovers(self) -> list[str]:
        """[]: a server does not list its armed fail points; the manager turns off every one it armed."""
        return []

    def supported(self) -> bool:
        """Whether the target accepts ``configureFailPoint`` (probed with a harmless ``off``)."""
        try:
            self.disarm("failCommand")
            return True
        except PyMongoError:
            return False


class EmulatedFailPoints:
    """Fail points emulated by a :class:`harness.shared.wire.WireProxy` in front of the target.

    For targets that refuse ``configureFailPoint``: the driver under test must
    connect through ``proxy.uri``; the proxy fails commands itself
    (docs/wire-proxy.md). The harness's admin client may go direct: it is
    never failed, since nothing it sends passes through the proxy.
    """

    name = "emulated"

    def __init__(self, proxy: Any) -> None:
        self.proxy = proxy

    def arm(self, command: dict[str, Any]) -> None:
        from harness.shared.wire import FailPointConfigError  # the wire package is only needed when emulating

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
