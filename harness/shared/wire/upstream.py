"""Where a wire proxy put in front of a target forwards: the one answer for every proxy the harness starts.

The run's emulated fail points (:mod:`faults.failpoints.plugin`), a test's own reply-shaping proxy and an emulated
replica set (:mod:`harness.shared.wire.shaping_route`) all front the same server, so they ask here. When the run
has network faults, the proxy forwards through Toxiproxy (the target's first host), so a network fault reaches
the drivers behind the proxy too; else it forwards to the server the admin client talks to.
"""

from __future__ import annotations

from typing import Any

from harness.core.ports import TargetUnavailable
from harness.shared.connection_strings import ConnectionStringError, first_host


def driver_facing_address(target: Any) -> tuple[str, int]:
    """Where the wire proxy forwards: through Toxiproxy when the run has one, else the primary."""
    if target.faults is not None:
        try:
            return first_host(target.uri)
        except ConnectionStringError as exc:
            raise TargetUnavailable(f"cannot tell which server the wire proxy should front: {exc}") from None
    address = target.admin.address if target.admin is not None else None
    if address is None:
        raise TargetUnavailable("cannot tell which server the wire proxy should front")
    return address
