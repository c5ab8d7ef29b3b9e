"""One server presented as an N-member replica set: an emulation, through N wire proxies.

Some driver rules only show when there are several members to choose from
(a resume selects a server with the stream's original read preference; the
old cursor is killed on the member that served it). A single SecantusDB has
one member. :class:`EmulatedReplicaSet` starts N :class:`~harness.shared.wire.WireProxy`
listeners on loopback ports, all forwarding to that one server, and rewrites
every ``hello``/``isMaster`` reply per listener (:func:`member_hello`) so a
driver's SDAM sees a replica set of N members: one primary, secondaries, and
members the harness marks ``recovering`` (neither primary nor secondary).

**It is an emulation.** Every member is the same server: a cursor opened on
one member is valid on every port, and a command a driver sends to the wrong
member succeeds. Only the per-member log of arrived commands
(:meth:`EmulatedReplicaSet.arrivals`) says where a command went; a check can
claim no more than that. Each member has its own fail points (a ``getMore``
can fail on one member only). Secondaries and recovering members refuse
writes with ``NotWritablePrimary`` (:data:`PRIMARY_ONLY_COMMANDS`), as a
real one would.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from harness.shared.wire.codes import CODE_NAMES
from harness.shared.wire.proxy import WireProxy

#: Roles a member can play, and what its hello says about it: (isWritablePrimary, secondary).
ROLES: dict[str, tuple[bool, bool]] = {
    "primary": (True, False),
    "secondary": (False, True),
    "recovering": (False, False),
}
#: Commands only a primary accepts: refused by the others with NotWritablePrimary (as a real member does).
PRIMARY_ONLY_COMMANDS = frozenset(
    {
        "insert",
        "update",
        "delete",
        "findAndModify",
        "create",
        "drop",
        "dropDatabase",
        "createIndexes",
        "dropIndexes",
        "renameCollection",
        "collMod",
    }
)
NOT_WRITABLE_PRIMARY = 10107
#: hello fields only a primary reports.
_PRIMARY_ONLY_FIELDS = ("electionId",)


class ReplicaSetConfigError(ValueError):
    """A bad emulated replica-set request (names the field)."""


@dataclass(frozen=True)
class Arrival:
    """One command that arrived on one member's listener."""

    member: int
    name: str
    cursor_ids: tuple[int, ...] = ()  # getMore's cursor, killCursors' cursors
    namespace: str = ""  # <db>.<collection> where the command names one

    def describe(self) -> str:
        cursors = f" cursors={list(self.cursor_ids)}" if self.cursor_ids else ""
        return f"{self.name}@member{self.member}{cursors}"


def member_hello(
    reply: dict[str, Any],
    *,
    me: str,
    hosts: list[str],
    primary: str | None,
    role: str,
    tags: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The server's ``hello`` reply as member ``me`` of the emulated set, playing ``role``.

    ``setName`` and everything else stay the server's; the member lists name
    the emulated members only; ``primary`` is omitted when no member is primary.
    """
    if role not in ROLES:
        raise ReplicaSetConfigError(f"role: unknown {role!r} (one of {sorted(ROLES)})")
    if not reply.get("setName"):
        raise ReplicaSetConfigError(
            "the target's hello has no setName: it is not a replica-set member, so it cannot be presented as one"
        )
    writable, secondary = ROLES[role]
    rewritten = {k: v for k, v in reply.items() if k not in ("compression", "passives", "arbiters")}
    rewritten.update(me=me, hosts=list(hosts), secondary=secondary, isWritablePrimary=writable, ismaster=writable)
    if "isWritablePrimary" not in reply and "ismaster" in reply:  # a legacy isMaster reply keeps its own key
        rewritten.pop("isWritablePrimary")
    if primary is not None:
        rewritten["primary"] = primary
    else:
        rewritten.pop("primary", None)
    if not writable:
        for key in _PRIMARY_ONLY_FIELDS:
            rewritten.pop(key, None)
    if tags:
        rewritten["tags"] = dict(tags)
    else:
        rewritten.pop("tags", None)
    return rewritten


@dataclass
class Member:
    """One emulated member: its listener, its role, and what arrived on it (thread-safe through the set)."""

    index: int
    role: str
    tags: dict[str, str] = field(default_factory=dict)
    proxy: WireProxy | None = None
    owner: EmulatedReplicaSet | None = None

    @property
    def address(self) -> str:
        assert self.proxy is not None and self.proxy.address is not None, "member not started"
        return f"{self.proxy.address[0]}:{self.proxy.address[1]}"

    # -- the hooks the proxy's connections call (harness/shared/wire/connection.py) ----------------
    def hello(self, reply: dict[str, Any]) -> dict[str, Any]:
        assert self.owner is not None
        return self.owner.hello_for(self, reply)

    def arrived(self, name: str, document: dict[str, Any]) -> None:
        assert self.owner is not None
        self.owner.record(self, name, document)

    def refusal(self, name: str) -> dict[str, Any] | None:
        """The error a non-primary gives a primary-only command (None: forward it)."""
        assert self.owner is not None
        if name not in PRIMARY_ONLY_COMMANDS or self.owner.role_of(self.index) == "primary":
            return None
        return {
            "ok": 0.0,
            "errmsg": f"not primary: emulated member {self.index} is {self.owner.role_of(self.index)}",
            "code": NOT_WRITABLE_PRIMARY,
            "codeName": CODE_NAMES.get(NOT_WRITABLE_PRIMARY, "NotWritablePrimary"),
        }


def _arrival(member: int, name: str, document: dict[str, Any]) -> Arrival:
    database = document.get("$db") or ""
    if name == "getMore":
        cursor = document.get("getMore")
        collection = document.get("collection")
        return Arrival(
            member,
            name,
            (int(cursor),) if isinstance(cursor, int) else (),
            f"{database}.{collection}" if isinstance(collection, str) else "",
        )
    target = document.get(name)
    cursors = document.get("cursors") if name == "killCursors" else None
    ids = tuple(int(c) for c in cursors if isinstance(c, int)) if isinstance(cursors, list) else ()
    return Arrival(member, name, ids, f"{database}.{target}" if isinstance(target, str) else "")


class EmulatedReplicaSet:
    """N proxy listeners in front of one server, each answering hello as a different member."""

    def __init__(
        self,
        upstream_host: str,
        upstream_port: int,
        roles: list[str] | tuple[str, ...] = ("primary", "secondary", "secondary"),
        *,
        tags: list[dict[str, str]] | None = None,
        listen_host: str = "127.0.0.1",
    ) -> None:
        if not roles:
            raise ReplicaSetConfigError("roles: an emulated replica set needs at least one member")
        for role in roles:
            if role not in ROLES:
                raise ReplicaSetConfigError(f"roles: unknown {role!r} (one of {sorted(ROLES)})")
        if list(roles).count("primary") > 1:
            raise ReplicaSetConfigError("roles: at most one primary")
        if tags is not None and len(tags) != len(roles):
            raise ReplicaSetConfigError(f"tags: {len(tags)} tag sets for {len(roles)} members")
        self._lock = threading.Lock()
        self._log: list[Arrival] = []
        self.members = [
            Member(i, role, dict((tags or [{}] * len(roles))[i]), owner=self) for i, role in enumerate(roles)
        ]
        for member in self.members:
            member.proxy = WireProxy(upstream_host, upstream_port, listen_host=listen_host, member=member)

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> list[str]:
        """Start every listener (all addresses are known before any driver can connect)."""
        try:
            for member in self.members:
                assert member.proxy is not None
                member.proxy.start()
        except BaseException:
            self.stop()
            raise
        return self.addresses

    def stop(self) -> None:
        for member in self.members:
            if member.proxy is not None:
                member.proxy.stop()

    def __enter__(self) -> EmulatedReplicaSet:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def addresses(self) -> list[str]:
        return [member.address for member in self.members]

    def uri(self, set_name: str) -> str:
        """A seed list of every member with ``replicaSet`` (the driver discovers the set, never one member)."""
        return f"mongodb://{','.join(self.addresses)}/?replicaSet={set_name}"

    # -- roles -----------------------------------------------------------------------------
    def role_of(self, index: int) -> str:
        with self._lock:
            return self.members[index].role

    def set_role(self, index: int, role: str) -> None:
        """Change what member ``index``'s hello replies say from now on (its commands still reach the server)."""
        if role not in ROLES:
            raise ReplicaSetConfigError(f"role: unknown {role!r} (one of {sorted(ROLES)})")
        with self._lock:
            if role == "primary" and any(m.role == "primary" and m.index != index for m in self.members):
                raise ReplicaSetConfigError("role: the set already has a primary")
            self.members[index].role = role

    def indexes(self, role: str) -> list[int]:
        with self._lock:
            return [m.index for m in self.members if m.role == role]

    def hello_for(self, member: Member, reply: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            primary = next((m.address for m in self.members if m.role == "primary"), None)
            role, tags = member.role, dict(member.tags)
        return member_hello(reply, me=member.address, hosts=self.addresses, primary=primary, role=role, tags=tags)

    # -- fail points per member --------------------------------------------------------------
    def configure_fail_point(self, index: int, command: dict[str, Any]) -> dict[str, Any]:
        proxy = self.members[index].proxy
        assert proxy is not None
        return proxy.configure_fail_point(command)

    def armed(self) -> dict[int, list[str]]:
        """Fail points that can still fire, by member (members with none left out)."""
        found = {m.index: m.proxy.armed() for m in self.members if m.proxy is not None}
        return {index: names for index, names in found.items() if names}

    # -- the per-member log ------------------------------------------------------------------
    def record(self, member: Member, name: str, document: dict[str, Any]) -> None:
        arrival = _arrival(member.index, name, document)
        with self._lock:
            self._log.append(arrival)

    def arrivals(self, name: str | None = None, since: int = 0) -> list[Arrival]:
        """Commands that arrived (handshakes excluded), in arrival order, from position ``since``."""
        with self._lock:
            log = self._log[since:]
        return [a for a in log if name is None or a.name == name]

    def mark(self) -> int:
        """A position in the log, for :meth:`arrivals` ``since``."""
        with self._lock:
            return len(self._log)


__all__ = [
    "PRIMARY_ONLY_COMMANDS",
    "ROLES",
    "Arrival",
    "EmulatedReplicaSet",
    "Member",
    "ReplicaSetConfigError",
    "member_hello",
]
