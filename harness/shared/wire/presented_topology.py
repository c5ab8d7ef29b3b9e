"""A standalone server PRESENTED as a single-member replica set, through one wire proxy (opt-in, recorded).

Most change-stream tests name ``replicaset`` (or ``sharded``) in ``runOnRequirements``: against a
server that reports itself standalone (an emulator such as mongo-java-server) they are all skipped,
so its change streams are never judged. A :class:`PresentedReplicaSet` is one
:class:`~harness.shared.wire.WireProxy` in front of that server whose every ``hello``/``isMaster`` reply
(:func:`presented_hello`) names a replica set of one member, the proxy itself, as primary. Every
other command and reply passes as the server sent it (``configureFailPoint`` aside, below): nothing a
change stream returns is changed.

**It is a presentation, not a replica set.** The server replicates nothing, elects nothing, and
answers ``readConcern``/``writeConcern`` as it always does; only what a driver's SDAM reads is
changed. A target that uses it says so in its provenance (``topology_presented``,
``topology_native``), and so does every record of the run.

**Fail points are the proxy's.** Like every :class:`~harness.shared.wire.WireProxy`, the presenting proxy answers
``configureFailPoint`` itself and fails the commands that pass through it: a fail point armed through it
never reaches the server. So a run through it records ``failpoints:``
:data:`FAILPOINTS_BY_PRESENTATION` (not ``native``), the target's provenance names the proxy
(``failpoints_answered_by``), and whether the server itself supports fail points is a server check of its
own (``SRV-TEST-FAILPOINTS``), asked past the proxy.
"""

from __future__ import annotations

from typing import Any

from harness.shared.wire.proxy import WireProxy

#: The set name a presented replica set reports (and the connection string's ``replicaSet``).
PRESENTED_SET_NAME = "presented-rs0"
#: How a run's fail points are applied when its admin client goes through the presenting proxy (the record's
#: ``failpoints``, beside ``native`` and ``emulated``): the proxy answers configureFailPoint, not the server.
FAILPOINTS_BY_PRESENTATION = "emulated-by-presenting-proxy"
#: What a record says about a presented topology (the note beside ``topology_presented``).
PRESENTATION_NOTE = (
    "the target reports itself standalone; a wire proxy presented it to every client as a one-member "
    "replica set (hello/isMaster replies rewritten, nothing else): replication, elections and majority "
    "commit are not the server's"
)


def presented_hello(reply: dict[str, Any], *, me: str, set_name: str = PRESENTED_SET_NAME) -> dict[str, Any]:
    """The server's handshake reply as the one (primary) member ``me`` of the replica set ``set_name``.

    The server's own fields (wire versions, sizes, ``logicalSessionTimeoutMinutes`` or its absence,
    ``topologyVersion``) stay as they came: a presentation adds topology, never capabilities. An error reply
    (a server that does not know ``hello``) stays the server's error.
    """
    if not reply.get("ok"):
        return reply
    rewritten = {k: v for k, v in reply.items() if k not in ("compression", "passives", "arbiters", "msg")}
    rewritten.update(setName=set_name, setVersion=1, me=me, hosts=[me], primary=me, secondary=False)
    rewritten["ismaster"] = True
    if "isWritablePrimary" in reply or "ismaster" not in reply:
        rewritten["isWritablePrimary"] = True
    return rewritten


class PresentedMember:
    """The member hooks a proxy connection calls (as :class:`harness.shared.wire.replica_set.Member` has): the
    handshake reply is rewritten; nothing is logged or refused (the one member is the primary)."""

    def __init__(self, set_name: str) -> None:
        self.set_name = set_name
        self.me = ""
        #: handshake replies rewritten so far (a record can say the presentation was in the path)
        self.hello_replies = 0

    def hello(self, reply: dict[str, Any]) -> dict[str, Any]:
        self.hello_replies += 1
        return presented_hello(reply, me=self.me, set_name=self.set_name)

    def arrived(self, name: str, document: dict[str, Any]) -> None:
        """Nothing to log: there is one member."""

    def refusal(self, name: str) -> dict[str, Any] | None:
        return None


class PresentedReplicaSet:
    """One listener in front of ``upstream``: what connects through it sees a one-member replica set."""

    def __init__(
        self,
        upstream_host: str,
        upstream_port: int,
        *,
        set_name: str = PRESENTED_SET_NAME,
        listen_host: str = "127.0.0.1",
    ) -> None:
        self.set_name = set_name
        self.member = PresentedMember(set_name)
        self.proxy = WireProxy(upstream_host, upstream_port, listen_host=listen_host, member=self.member)

    def start(self) -> str:
        host, port = self.proxy.start()
        self.member.me = f"{host}:{port}"
        return self.uri

    def stop(self) -> None:
        self.proxy.stop()

    @property
    def uri(self) -> str:
        """The connection string clients use: the one member, with ``replicaSet`` (so SDAM expects a set)."""
        return f"mongodb://{self.member.me}/?replicaSet={self.set_name}"

    def provenance(self, native_topology: str) -> dict[str, Any]:
        """What every record of a run through it says: presented, not native."""
        return {
            "topology_presented": "replicaset",
            "topology_native": native_topology,
            "topology_presented_by": f"wire proxy {self.member.me} (setName {self.set_name!r})",
            "topology_note": PRESENTATION_NOTE,
            "failpoints_answered_by": f"the presenting wire proxy {self.member.me}: it answers configureFailPoint "
            "itself and fails the commands that pass through it; the server behind it is not asked",
        }

    def __enter__(self) -> PresentedReplicaSet:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = [
    "FAILPOINTS_BY_PRESENTATION",
    "PRESENTATION_NOTE",
    "PRESENTED_SET_NAME",
    "PresentedMember",
    "PresentedReplicaSet",
    "presented_hello",
]
