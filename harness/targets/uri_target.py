"""Any running deployment reached through a connection string (``--target uri=...``).

A real mongod replica set, a mongos, a load balancer or an emulator: the
harness does not start or stop it, only detects what it is. Because the
harness did not start it, :mod:`harness.targets.safety` guards it, unless the
run allows it (``--allow-destructive``), in three steps:

1. the connection string's seeds must be literally local (no name is resolved);
2. before the harness's own client exists, each seed is probed with a client
   of its own (``directConnection``, so it reaches that seed and nothing
   else, and runs no command: pymongo's handshake is the ``hello``), and every
   member the replies name (``hosts``, ``passives``, ``arbiters``,
   ``primary``, ``me``) must be local too; local members are probed in turn,
   so a chain of local servers cannot lead elsewhere. A remote one refuses the
   target with its name, before anything has connected to it;
3. the harness's own client carries a :class:`~harness.targets.safety.LoopbackWatch`:
   a host off the loopback interface appearing later (a reconfig) makes every
   further admin job refuse, and its server selector never sends a command there.

The drivers under test connect with the same connection string, so the probe
(step 2) is their check as well. What remains for them: a member that appears
mid-run is seen by the harness's client, which stops the set-up of the next
tests, but a driver's own client in a test already running may reach it first.
A seed that did not answer the probe (a member that was down) is probed by
nobody; if it comes back naming a remote host, step 3 catches it the same way.
With ``directConnection=true`` or ``loadBalanced=true`` no driver discovers
members, so there is nothing to probe beyond the seeds' names.

With ``--allow-destructive`` nothing is probed, and the record names every host
the run was allowed to reach (``details["allowed_hosts"]``: the seeds and what
the harness's client found at the start).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from pymongo import MongoClient, monitoring
from pymongo.errors import PyMongoError

from harness.core.ports import TargetInfo, TargetUnavailable
from harness.shared import connection_strings
from harness.shared.target_base import TargetBase, admin_timeouts
from harness.targets.safety import (
    ALLOWED_HOSTS,
    DestructiveTargetRefused,
    LoopbackWatch,
    address_text,
    check_destructive,
    is_loopback_host,
    is_socket_path,
    normalised_name,
    refuse_members,
    remote_members,
    reported_members,
    split_address,
)

#: How long a probe waits for a seed, unless the connection string sets its own timeouts: the admin client's wait.
PROBE_TIMEOUT_MS = 10_000
#: Once one server of a round has answered, how much longer the probe waits for the others (a member that is down
#: must not hold the start for the whole timeout).
PROBE_GRACE_S = 2.0
#: The most servers the probe asks; a deployment naming more is refused (no real replica set has 50+ voting hosts).
MAX_PROBED = 64


class _FirstHello(monitoring.ServerHeartbeatListener):
    """The reply of a probe client's first successful handshake (pymongo's monitor sends it, with no credentials)."""

    def __init__(self) -> None:
        self.reply: dict[str, Any] | None = None

    def started(self, event: monitoring.ServerHeartbeatStartedEvent) -> None:
        return None

    def succeeded(self, event: monitoring.ServerHeartbeatSucceededEvent) -> None:
        if self.reply is None:
            self.reply = dict(event.reply.document)

    def failed(self, event: monitoring.ServerHeartbeatFailedEvent) -> None:
        return None


class _Probe(threading.Thread):
    """One server's handshake, in a thread of its own (the seeds are asked at once)."""

    def __init__(self, uri: str, address: str, timeout_ms: int) -> None:
        super().__init__(name=f"guard-probe {address}", daemon=True)
        self.address = address
        self.uri = connection_strings.with_single_host(uri, address)  # directConnection=true: this server only
        self.timeout_ms = timeout_ms
        self.reply: dict[str, Any] | None = None
        self.error: str | None = None

    def run(self) -> None:
        first = _FirstHello()
        try:
            options: dict[str, Any] = {"event_listeners": [first], **admin_timeouts(self.uri, self.timeout_ms)}
            client: MongoClient[dict[str, Any]] = MongoClient(self.uri, **options)
        except (PyMongoError, ValueError) as exc:
            self.error = connection_strings.redact_text(str(exc))
            return
        try:
            client.address  # noqa: B018 (waits for the handshake: a server selection, no command)
            self.reply = first.reply
            if self.reply is None:  # answered, but its reply was not seen: unknown, so not counted as checked
                self.error = "its handshake reply was not seen"
        except PyMongoError as exc:
            self.error = connection_strings.redact_text(str(exc))
        finally:
            client.close()


def _probe_round(uri: str, addresses: list[str], timeout_ms: int) -> list[_Probe]:
    """Probe ``addresses`` at once; return when all have answered, or :data:`PROBE_GRACE_S` after the first did."""
    probes = [_Probe(uri, address, timeout_ms) for address in addresses]
    for probe in probes:
        probe.start()
    grace_ends: float | None = None
    while any(probe.is_alive() for probe in probes):
        if grace_ends is None and any(probe.reply is not None for probe in probes):
            grace_ends = time.monotonic() + PROBE_GRACE_S
        if grace_ends is not None and time.monotonic() >= grace_ends:
            break
        for probe in probes:
            probe.join(0.05)
    return probes


def _key(address: str) -> str:
    """One spelling per server, so a member reported twice (``LOCALHOST:27017``, ``localhost``) is asked once."""
    if is_socket_path(address):
        return address
    name, port = split_address(address)
    return address_text(normalised_name(name), port or connection_strings.DEFAULT_PORT)


def discovers_members(uri: str) -> bool:
    """Whether a driver given ``uri`` connects to the members its seeds report (not with ``directConnection=true`` or
    ``loadBalanced=true``)."""
    parsed = connection_strings.parse(uri)
    return not any((parsed.option(name) or "").lower() == "true" for name in ("directConnection", "loadBalanced"))


def probe_members(uri: str, name: str = "uri", timeout_ms: int = PROBE_TIMEOUT_MS) -> list[str]:
    """Every server the harness or a driver given ``uri`` would reach, each checked before anything connects to it.

    Breadth-first from the seeds (which :func:`~harness.targets.safety.check_destructive` has found local): each
    server's handshake reply names members; a remote one refuses the target (:class:`DestructiveTargetRefused`),
    a local one not yet asked is asked in the next round. Returns the servers found, in the order found; raises
    :class:`TargetUnavailable` when no seed answered at all.
    """
    found = {_key(seed): seed for seed in connection_strings.parse(uri).hosts}
    asked: set[str] = set()
    answered, silent = 0, []
    while True:
        pending = [address for key, address in found.items() if key not in asked]
        if not pending:
            break
        if len(found) > MAX_PROBED:
            raise DestructiveTargetRefused(
                f"refusing to run against {connection_strings.redact(uri)}: its servers name more than {MAX_PROBED} "
                "members; give --allow-destructive to run anyway"
            )
        asked.update(_key(address) for address in pending)
        for probe in _probe_round(uri, pending, timeout_ms):
            if probe.reply is None:
                silent.append(f"{probe.address}: {probe.error or 'no answer within the probe wait'}")
                continue
            answered += 1
            remote = remote_members(probe.reply)
            if remote:
                raise refuse_members(uri, f"the local server {probe.address}", remote)
            for _, member in reported_members(probe.reply):
                found.setdefault(_key(member), member)
    if not answered:
        raise TargetUnavailable(
            f"target {name} ({connection_strings.redact(uri)}) did not answer the guard's probe (each seed's hello, "
            f"before the harness's own client connects): {'; '.join(silent)}"
        )
    return list(found.values())


class UriTarget(TargetBase):
    kind = "uri"

    def __init__(self, uri: str, name: str | None = None, *, allow_destructive: bool = False) -> None:
        if not uri.startswith(("mongodb://", "mongodb+srv://")):
            raise TargetUnavailable(
                f"--target uri=... needs a mongodb:// connection string, got {connection_strings.redact(uri)!r}"
            )
        super().__init__(name or "uri")
        self.uri = uri
        #: Set from the run's ``--allow-destructive`` (the targets plug-in's wrapper); off by default.
        self.allow_destructive = allow_destructive
        self.watch: LoopbackWatch | None = None

    def start(self) -> TargetInfo:
        try:
            check_destructive(self.uri, self.allow_destructive)
            discovers = discovers_members(self.uri)
            if not self.allow_destructive and discovers:
                probe_members(self.uri, self.name)
        except connection_strings.ConnectionStringError as exc:
            raise TargetUnavailable(str(exc)) from None
        self.watch = LoopbackWatch(self.uri, record_only=self.allow_destructive, discovers=discovers)
        self.connect_admin(event_listeners=[self.watch], server_selector=self.watch.loopback_only)
        refusal = self.refusal()
        if refusal is not None:
            self.stop()
            raise DestructiveTargetRefused(refusal)
        self.info.details["allow_destructive"] = self.allow_destructive
        if self.allow_destructive:
            self.info.details[ALLOWED_HOSTS] = self.reached_hosts()
        return self.info

    def reached_hosts(self) -> list[str]:
        """The seeds and every host the harness's client has reached or learnt of, each once."""
        hosts: dict[str, str] = {}
        for host in [*connection_strings.parse(self.uri).hosts, *(self.watch.seen() if self.watch else [])]:
            hosts.setdefault(_key(host), host)
        return list(hosts.values())

    def refusal(self, address: tuple[str, int] | None = None) -> str | None:
        """The watch's refusal, or, for ``address`` (a server a harness client would reach directly), a refusal of
        a host off the loopback interface unless the run allows it."""
        if self.watch is not None:
            found = self.watch.refusal()
            if found is not None:
                return found
        if address is not None and not self.allow_destructive and not is_loopback_host(address_text(*address)):
            return (
                f"refusing to reach {address_text(*address)} of {connection_strings.redact(self.uri)}: it is not on "
                "the loopback interface; give --allow-destructive to run anyway"
            )
        return None
