"""What the harness knows about a deployment under test, and how it learns it.

A :class:`TargetBase` (the shared implementation of the target port,
:class:`harness.core.ports.Target`) owns the deployment's lifetime (if the harness started it),
the connection string drivers under test use, and one *admin* client the
harness itself uses for set-up, fail points and detection. It is never the
client under test.
"""

from __future__ import annotations

from typing import Any

from pymongo import MongoClient
from pymongo.errors import PyMongoError

from harness.core.ports import TargetInfo, TargetUnavailable
from harness.targets import connection_strings

TOPOLOGIES = ("single", "replicaset", "sharded", "load-balanced")


def secantus_package() -> dict[str, str]:
    """Which SecantusDB release is installed, for the provenance of targets that run it (what ran, not a label)."""
    return {"package": "secantusdb", "package_version": secantus_package_version()}


def secantus_package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("secantusdb")
    except PackageNotFoundError:
        return "unknown"


def detect_topology(hello: dict[str, Any], load_balanced: bool = False) -> str:
    if load_balanced or hello.get("serviceId") is not None:
        return "load-balanced"
    if hello.get("msg") == "isdbgrid":
        return "sharded"
    if hello.get("setName"):
        return "replicaset"
    return "single"


def describe(admin: MongoClient, kind: str, name: str, uri: str) -> TargetInfo:
    """Ask the deployment what it is: server version, topology, wire version."""
    try:
        hello = admin.admin.command("hello")
        build = admin.admin.command("buildInfo")
    except PyMongoError as exc:
        raise TargetUnavailable(
            f"target {name} ({connection_strings.redact(uri)}) did not answer hello/buildInfo: {exc}"
        ) from exc
    load_balanced = bool(admin.options.load_balanced)
    return TargetInfo(
        kind=kind,
        name=name,
        version=str(build.get("version", "unknown")),
        topology=detect_topology(hello, load_balanced),
        uri=connection_strings.redact(uri),
        max_wire_version=hello.get("maxWireVersion"),
        details={"setName": hello.get("setName"), "hosts": hello.get("hosts"), "gitVersion": build.get("gitVersion")},
    )


class TargetBase:
    """The base of this project's targets (each a :class:`harness.core.ports.Target`): subclasses start and
    stop the deployment; all share detection through the admin client."""

    kind = "abstract"

    def __init__(self, name: str) -> None:
        self.name = name
        self.uri = ""
        self.admin: MongoClient | None = None
        self.info = TargetInfo(kind=self.kind, name=name)

    def start(self) -> TargetInfo:
        raise NotImplementedError

    def stop(self) -> None:
        if self.admin is not None:
            self.admin.close()
            self.admin = None

    def connect_admin(self, timeout_ms: int = 10_000) -> None:
        """The harness's own client: bounded timeouts, unless the connection string sets its own."""
        defaults = {"serverSelectionTimeoutMS": timeout_ms, "connectTimeoutMS": timeout_ms, "socketTimeoutMS": 60_000}
        in_uri = self.uri.lower()
        options = {k: v for k, v in defaults.items() if f"{k.lower()}=" not in in_uri}
        self.admin = MongoClient(self.uri, **options)
        self.info = describe(self.admin, self.kind, self.name, self.uri)
        if self.info.topology == "sharded" and connection_strings.single_host_uri(self.uri) != self.uri:
            # Fail points live on one mongos: arm them on the one the clients under test use
            # (useMultipleMongoses: false and the legacy global client both take the first host).
            self.admin.close()
            self.admin = MongoClient(connection_strings.single_host_uri(self.uri), **options)

    def server_parameter(self, name: str) -> Any:
        """A server parameter's value (``runOnRequirements.serverParameters``), or None if unknown."""
        assert self.admin is not None
        try:
            return self.admin.admin.command("getParameter", 1, **{name: 1}).get(name)
        except PyMongoError:
            return None

    def __enter__(self) -> TargetBase:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
