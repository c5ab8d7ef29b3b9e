"""The guard in front of deployments the harness did not start.

The runners drop and recreate the databases and collections each test names
(``database_name``, ``initialData``...). Against SecantusDB or a container the
harness started that is the point; against someone's deployment reached by
``--target uri=...`` it could destroy data. So a target the harness did not
start, whose hosts are not all on the loopback interface, is refused before
anything connects to it, unless the run says ``--allow-destructive``.

Nothing here resolves a name: ``localhost`` and loopback literals
(``127.0.0.0/8``, ``::1``) and Unix domain sockets are local; any other name,
and every ``mongodb+srv://`` record, counts as remote, even one that would
resolve to a loopback address (asking DNS would already be traffic).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from harness.core.ports import TargetUnavailable
from harness.targets import connection_strings

#: The run option's name (``--allow-destructive``), and its key in the provenance every record carries.
ALLOW_DESTRUCTIVE = "allow_destructive"

#: Names that mean this machine without asking a resolver (RFC 6761 reserves ``localhost``).
LOCAL_NAMES = ("localhost", "localhost.")


class DestructiveTargetRefused(TargetUnavailable):
    """A target the harness did not start, not on the loopback interface, without ``--allow-destructive``."""


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (as a connection string writes it: ``h:port``, ``[v6]:port``, a socket path) is local."""
    if host.endswith(".sock") or host.startswith(("%2F", "%2f", "/")):
        return True  # a Unix domain socket: on this machine by construction
    name = host
    if name.startswith("["):
        name = name[1 : name.find("]")]
    elif name.count(":") == 1:
        name = name.rpartition(":")[0]
    if name.lower() in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False  # a host name other than localhost: not resolved, so not known to be local


def remote_hosts(uri: str) -> list[str]:
    """The hosts of ``uri`` that are not known to be on the loopback interface (an SRV name always is one)."""
    parsed = connection_strings.parse(uri)
    if parsed.is_srv:
        return list(parsed.hosts)
    return [host for host in parsed.hosts if not is_loopback_host(host)]


def check_destructive(uri: str, allowed: bool) -> None:
    """Refuse a deployment the harness did not start unless it is local or the run allows it; no I/O."""
    if allowed:
        return
    remote = remote_hosts(uri)
    if remote:
        raise DestructiveTargetRefused(
            f"refusing to run against {connection_strings.redact(uri)}: {', '.join(remote)} "
            "is not on the loopback interface and the harness did not start it, and the tests drop and "
            "recreate the databases and collections they name; give --allow-destructive to run anyway"
        )


def allowed_by(options: Any) -> bool:
    """Whether a run's options allow a destructive run (the app records the flag in the provenance)."""
    return bool(options.provenance.get(ALLOW_DESTRUCTIVE, False))
