"""The guard in front of deployments the harness did not start.

The runners drop and recreate the databases and collections each test names
(``database_name``, ``initialData``...). Against SecantusDB or a container the
harness started that is the point; against someone's deployment reached by
``--target uri=...`` it could destroy data. So a target the harness did not
start is refused unless every host the harness or a driver will reach is on
the loopback interface, or the run says ``--allow-destructive``.

Every host, not the connection string's names: a loopback server may report a
remote member (``hello``'s ``hosts``, ``passives``, ``arbiters``, ``primary``,
``me``), and a driver then connects to it. This module answers which host
names are local and which reported members are not; the ``uri=`` target
(:mod:`harness.targets.uri_target`) probes the seeds before its own client
exists, and :class:`LoopbackWatch` keeps watching that client afterwards.

Nothing here resolves a name. Local means *literally* local:

- ``localhost`` in any case (RFC 6761 reserves it; a resolver is still asked,
  but for the one name that must answer with loopback);
- IP literals in ``127.0.0.0/8`` and ``::1``, however written (``[::1]``,
  ``[0:0:0:0:0:0:0:1]``), and IPv4-mapped IPv6 of those (``::ffff:127.0.0.1``);
- Unix domain sockets.

Anything else is remote, even one that would resolve to a loopback address,
because finding out would already be traffic. That includes ``localhost.``: a
trailing dot makes the name fully qualified, it no longer matches the hosts
file's ``localhost`` entry, and pymongo hands it to the resolver, which may
send it to a DNS server (so it is refused, and the message says to write
``localhost`` or ``127.0.0.1``). Shorthand IPv4 (``127.1``) and the wildcard
addresses (``0.0.0.0``, ``::``) are refused too: the safe answer for a name
that is not one of the forms above. Every ``mongodb+srv://`` record is remote.
"""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Iterable
from typing import Any

from pymongo import monitoring

from harness.core.ports import TargetUnavailable
from harness.shared import connection_strings

#: The run option's name (``--allow-destructive``), and its key in the provenance every record carries.
ALLOW_DESTRUCTIVE = "allow_destructive"
#: The key of ``TargetInfo.details`` naming every host a ``--allow-destructive`` run was allowed to reach.
ALLOWED_HOSTS = "allowed_hosts"

#: The one host name that means this machine without being an address (RFC 6761), compared case-insensitively.
LOCAL_NAME = "localhost"
#: What the hello reply's fields mean, for messages: each names members a driver connects to (or, ``me``, one the
#: server says it is).
MEMBER_FIELDS = {
    "hosts": "a member",
    "passives": "a passive member",
    "arbiters": "an arbiter",
    "primary": "the primary",
    "me": "itself",
}


class DestructiveTargetRefused(TargetUnavailable):
    """A target the harness did not start, not on the loopback interface, without ``--allow-destructive``."""


def split_address(address: str) -> tuple[str, int | None]:
    """``(name, port)`` of ``address`` as a connection string or a ``hello`` reply writes it (``h:port``,
    ``[v6]:port``, a bare IPv6 literal, a socket path); the name without brackets, the port None when absent."""
    if address.startswith("["):
        name, _, rest = address[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif address.count(":") == 1:
        name, _, port = address.partition(":")
    else:
        name, port = address, ""  # a bare name, a bare IPv6 literal, or a socket path
    return name, int(port) if port.isdigit() else None


def is_socket_path(address: str) -> bool:
    """A Unix domain socket as pymongo reads a host: a name ending in ``.sock`` (percent-encoded or not), the one
    rule its parser and its connection code share; any other path-like name goes to the resolver."""
    return address.endswith(".sock")


def normalised_name(name: str) -> str:
    """``name`` in one spelling: lower case, no brackets, an IP literal in its compressed form, an IPv4-mapped IPv6
    literal as its IPv4 address. No resolution: a host name stays the name it is, trailing dot included."""
    bare = name.strip().lower()
    if bare.startswith("[") and bare.endswith("]"):
        bare = bare[1:-1]
    try:
        address = ipaddress.ip_address(bare)
    except ValueError:
        return bare
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return str(mapped if mapped is not None else address)


def is_loopback_name(name: str) -> bool:
    """Whether a host name (no port) is literally local: ``localhost`` or a loopback IP literal (module docstring)."""
    bare = normalised_name(name)
    if bare == LOCAL_NAME:
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False  # any other name: not resolved, so not known to be local


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (``h:port``, ``[v6]:port``, a socket path, as a connection string writes it) is local."""
    if is_socket_path(host):
        return True  # on this machine by construction
    return is_loopback_name(split_address(host)[0])


def address_text(host: str, port: int | None) -> str:
    """``host:port`` as messages and records write an address (IPv6 in brackets)."""
    shown = f"[{host}]" if ":" in host else host
    return shown if port is None else f"{shown}:{port}"


def remote_hosts(uri: str) -> list[str]:
    """The hosts of ``uri`` that are not known to be on the loopback interface (an SRV name always is one)."""
    parsed = connection_strings.parse(uri)
    if parsed.is_srv:
        return list(parsed.hosts)
    return [host for host in parsed.hosts if not is_loopback_host(host)]


def _why_remote(hosts: Iterable[str]) -> str:
    """The hint for a refused name that is nearly local (``localhost.``, ``127.1``), or ''."""
    near = [h for h in hosts if normalised_name(split_address(h)[0]).rstrip(".") == LOCAL_NAME]
    if near:
        return (
            f" ({', '.join(near)}: a name with a trailing dot is resolved through DNS, not the hosts file; "
            "write localhost or 127.0.0.1)"
        )
    return ""


def check_destructive(uri: str, allowed: bool) -> None:
    """Refuse a deployment the harness did not start unless its seeds are local or the run allows it; no I/O.

    The seeds only: the members they report are checked by the ``uri=`` target's probe, before its client exists.
    """
    if allowed:
        return
    remote = remote_hosts(uri)
    if remote:
        raise DestructiveTargetRefused(
            f"refusing to run against {connection_strings.redact(uri)}: {', '.join(remote)} "
            f"is not on the loopback interface{_why_remote(remote)} and the harness did not start it, and the tests "
            "drop and recreate the databases and collections they name; give --allow-destructive to run anyway"
        )


def reported_members(hello: dict[str, Any]) -> list[tuple[str, str]]:
    """``(field, address)`` for every member a ``hello`` (or ``isMaster``) reply names, in the reply's order."""
    found: list[tuple[str, str]] = []
    for field in MEMBER_FIELDS:
        value = hello.get(field)
        for address in value if isinstance(value, list) else [value]:
            if isinstance(address, str) and address:
                found.append((field, address))
    return found


def remote_members(hello: dict[str, Any]) -> list[tuple[str, str]]:
    """The members of :func:`reported_members` that are not literally local (a socket path never is reported)."""
    return [(field, address) for field, address in reported_members(hello) if not is_loopback_host(address)]


def refuse_members(uri: str, reporter: str, remote: list[tuple[str, str]]) -> DestructiveTargetRefused:
    """The refusal of a deployment whose local ``reporter`` named ``remote`` members (``(field, address)``)."""
    named = "; ".join(f"{address} (as {MEMBER_FIELDS.get(field, field)}, in {field!r})" for field, address in remote)
    addresses = [address for _, address in remote]
    return DestructiveTargetRefused(
        f"refusing to run against {connection_strings.redact(uri)}: {reporter} reports {named}, which is not on the "
        f"loopback interface{_why_remote(addresses)}; the harness's client and the drivers under test would connect "
        "there, and the tests drop and recreate the databases and collections they name. Nothing has connected to "
        "it; give --allow-destructive to run anyway, or directConnection=true to reach the named server alone"
    )


def allowed_by(options: Any) -> bool:
    """Whether a run's options allow a destructive run (the app records the flag in the provenance)."""
    return bool(options.provenance.get(ALLOW_DESTRUCTIVE, False))


class LoopbackWatch(monitoring.ServerHeartbeatListener, monitoring.TopologyListener):
    """Watches the harness's own client of a ``uri=`` target for hosts off the loopback interface found mid-run.

    The probe checked every member before the client existed; this catches what appears later (a reconfig, a seed
    that was down during the probe). pymongo publishes a heartbeat's start and its reply synchronously in the
    monitor's thread, before it opens a server it has just learnt of, so a remote member is recorded before anything
    of this client connects to it; topology changes (published later, from a queue) add the hosts they list. The
    target then refuses every further admin job (:meth:`refusal`), and :meth:`loopback_only` keeps the client's
    commands off such a host even in the moment between. What remains: recording does not prevent the client's
    monitor from then sending its unauthenticated ``hello`` to the new host (pymongo offers no public hook to veto
    a monitor), and drivers under test, which have their own clients, are stopped only by the next tests' set-up
    failing on the refused admin jobs.

    With ``record_only`` (a run given ``--allow-destructive``) it only collects the hosts, for the record. Without
    ``discovers`` (``directConnection=true``, ``loadBalanced=true``) the members a reply names are not reached, so
    only the servers the client itself contacts count.
    """

    def __init__(self, uri: str, record_only: bool = False, discovers: bool = True) -> None:
        self.uri = uri
        self.record_only = record_only
        self.discovers = discovers
        self._lock = threading.Lock()
        self._seen: dict[str, None] = {}
        self._remote: list[str] = []

    # -- what it found -------------------------------------------------------------------------------------
    def seen(self) -> list[str]:
        """Every host the client has reached or learnt of, in the order it did."""
        with self._lock:
            return list(self._seen)

    def refusal(self) -> str | None:
        """Why the target may no longer be used (a host off the loopback interface appeared), or None."""
        with self._lock:
            remote = list(self._remote)
        if not remote or self.record_only:
            return None
        return (
            f"refusing to go on with {connection_strings.redact(self.uri)}: the deployment now names "
            f"{', '.join(remote)}, which is not on the loopback interface (found by the harness's own client after "
            "the start); the tests drop and recreate the databases they name, so the harness sends nothing more; "
            "give --allow-destructive to run anyway"
        )

    def _saw(self, address: str) -> None:
        with self._lock:
            if address in self._seen:
                return
            self._seen[address] = None
            if not is_loopback_host(address):
                self._remote.append(address)

    def _saw_node(self, node: tuple[str, int | None]) -> None:
        self._saw(address_text(node[0], node[1]))

    # -- pymongo's listener interface ----------------------------------------------------------------------
    def started(self, event: monitoring.ServerHeartbeatStartedEvent) -> None:
        self._saw_node(event.connection_id)

    def succeeded(self, event: monitoring.ServerHeartbeatSucceededEvent) -> None:
        self._saw_node(event.connection_id)
        if self.discovers:
            for _, address in reported_members(event.reply.document):
                self._saw(address)

    def failed(self, event: monitoring.ServerHeartbeatFailedEvent) -> None:
        self._saw_node(event.connection_id)

    def opened(self, event: monitoring.TopologyOpenedEvent) -> None:
        return None

    def description_changed(self, event: monitoring.TopologyDescriptionChangedEvent) -> None:
        for node in event.new_description.server_descriptions():
            self._saw_node(node)

    def closed(self, event: monitoring.TopologyClosedEvent) -> None:
        return None

    def loopback_only(self, servers: list[Any]) -> list[Any]:
        """A pymongo ``server_selector``: the servers of a selection that are on the loopback interface (all of them
        when the run allows a remote target)."""
        if self.record_only:
            return servers
        return [server for server in servers if is_loopback_host(address_text(*server.address))]
