"""Plug-in: the fail-point backends, by the modes ``--failpoints`` takes.

``native``    ``configureFailPoint`` sent to the target by the harness's admin client;
``emulated``  a wire proxy (:mod:`faults.wire`) in front of the target fails commands
              itself, and drivers under test connect through it;
``auto``      native when the target accepts it (probed with a harmless ``off``), else emulated.

Each mode turns a started target into a
:class:`~harness.engine.plugins.FailPointSetup`: the backend, the URI drivers
use, and what to stop when the run ends.
"""

from __future__ import annotations

from typing import Any

from harness.core.ports import TargetUnavailable
from harness.engine.plugins import FailPointSetup


def native(target: Any) -> FailPointSetup:
    from faults.failpoints import NativeFailPoints

    return FailPointSetup(NativeFailPoints(target.admin), target.uri)


def emulated(target: Any) -> FailPointSetup:
    from faults.failpoints import EmulatedFailPoints
    from faults.wire import WireProxy

    host, port = driver_facing_address(target)
    proxy = WireProxy(host, port)
    proxy.start()
    return FailPointSetup(EmulatedFailPoints(proxy), proxy.uri, proxy.stop)


def auto(target: Any) -> FailPointSetup:
    setup = native(target)
    return setup if setup.backend.supported() else emulated(target)


def driver_facing_address(target: Any) -> tuple[str, int]:
    """Where the wire proxy forwards: through Toxiproxy when the run has one, else the primary."""
    if getattr(target, "faults", None) is not None:
        from harness.targets.uris import ConnectionStringError, first_host

        try:
            return first_host(target.uri)
        except ConnectionStringError as exc:
            raise TargetUnavailable(f"cannot tell which server the wire proxy should front: {exc}") from None
    address = target.admin.address if target.admin is not None else None
    if address is None:
        raise TargetUnavailable("cannot tell which server the wire proxy should front")
    return address


#: ``--failpoints`` modes, in the order help lists them.
MODES = {"native": native, "emulated": emulated, "auto": auto}


def install(registry: Any) -> None:
    for name, mode in MODES.items():
        registry.add_failpoint_mode(name, mode)
