"""What the harness knows about a deployment under test, and how it learns it.

A :class:`TargetBase` (the shared implementation of the target port,
:class:`harness.core.ports.Target`) owns the deployment's lifetime (if the harness started it),
the connection string drivers under test use, and one *admin* client the
harness itself uses for set-up, fail points and detection. It is never the
client under test.
"""

from __future__ import annotations

import threading
from typing import Any

from pymongo import MongoClient, ReadPreference, uri_parser
from pymongo.errors import CollectionInvalid, OperationFailure, PyMongoError
from pymongo.read_concern import ReadConcern
from pymongo.write_concern import WriteConcern

from harness.core.ports import FailPointError, TargetAdminError, TargetInfo, TargetUnavailable
from harness.core.resume_tokens import DETAIL as RESUME_TOKENS
from harness.core.resume_tokens import secantusdb_format
from harness.shared import connection_strings

TOPOLOGIES = ("single", "replicaset", "sharded", "load-balanced")


def secantus_package() -> dict[str, str]:
    """Which SecantusDB release is installed, for the provenance of targets that run it (what ran, not a label), and
    the format the harness reads its resume tokens in (``unread`` for a release whose format was not checked)."""
    version = secantus_package_version()
    return {"package": "secantusdb", "package_version": version, RESUME_TOKENS: secantusdb_format(version)}


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


#: The handshake commands detection tries, newest first: a server that only knows the legacy one still runs.
HANDSHAKES = ("hello", "isMaster")


def handshake(admin: MongoClient, name: str, uri: str) -> tuple[dict[str, Any], list[str]]:
    """The deployment's hello reply, and findings: ``hello`` refused and ``isMaster`` answered is a finding, not
    a stop (the driver under test may still connect with the legacy handshake, as pymongo does)."""
    findings: list[str] = []
    for command in HANDSHAKES:
        try:
            reply: dict[str, Any] = admin.admin.command(command)
        except OperationFailure as exc:  # the server answered: it does not know this command
            findings.append(f"the target refuses {command!r} ({_refusal(exc)})")
            continue
        except PyMongoError as exc:
            raise TargetUnavailable(
                f"target {name} ({connection_strings.redact(uri)}) did not answer {command!r} (the harness's "
                f"own client): {connection_strings.redact_text(str(exc))}"
            ) from exc
        if findings:
            findings[-1] += f"; detection used {command!r} instead"
        return reply, findings
    raise TargetUnavailable(
        f"target {name} ({connection_strings.redact(uri)}) answers none of {list(HANDSHAKES)}: " + "; ".join(findings)
    )


def build_info(admin: MongoClient, findings: list[str]) -> dict[str, Any]:
    """``buildInfo``, or {} with a finding when the server refuses it (the version is then unknown)."""
    try:
        reply: dict[str, Any] = admin.admin.command("buildInfo")
        return reply
    except OperationFailure as exc:
        findings.append(f"the target refuses 'buildInfo' ({_refusal(exc)}); its version is unknown")
        return {}


def _refusal(exc: OperationFailure) -> str:
    reply = exc.details or {}
    return f"code {exc.code} {reply.get('codeName', '')}: {reply.get('errmsg', exc)}".replace(":  ", ": ").strip()


def describe(admin: MongoClient, kind: str, name: str, uri: str) -> TargetInfo:
    """Ask the deployment what it is: server version, topology, wire version (needing no more than it offers)."""
    hello, findings = handshake(admin, name, uri)
    try:
        build = build_info(admin, findings)
    except PyMongoError as exc:
        raise TargetUnavailable(
            f"target {name} ({connection_strings.redact(uri)}) did not answer buildInfo: "
            f"{connection_strings.redact_text(str(exc))}"
        ) from exc
    load_balanced = bool(admin.options.load_balanced)
    details: dict[str, Any] = {
        "setName": hello.get("setName"),
        "hosts": hello.get("hosts"),
        "gitVersion": build.get("gitVersion"),
    }
    if findings:
        details["detection_findings"] = findings
    return TargetInfo(
        kind=kind,
        name=name,
        version=str(build.get("version", "unknown")),
        topology=detect_topology(hello, load_balanced),
        uri=connection_strings.redact(uri),
        max_wire_version=hello.get("maxWireVersion"),
        details=details,
    )


def admin_timeouts(uri: str, timeout_ms: int) -> dict[str, int]:
    """The harness's clients' bounded timeouts, less those ``uri`` sets itself (case-insensitively)."""
    defaults = {"serverSelectionTimeoutMS": timeout_ms, "connectTimeoutMS": timeout_ms, "socketTimeoutMS": 60_000}
    in_uri = uri.lower()
    return {k: v for k, v in defaults.items() if f"{k.lower()}=" not in in_uri}


#: The specs: set-up goes through the internal client with majority write concern.
MAJORITY = WriteConcern("majority")
#: Drop-then-create attempts before a collection that keeps reappearing is a set-up error.
RECREATE_ATTEMPTS = 3


class DirectServer:
    """A fail-point backend on one server, reached by a client of its own (``directConnection``)."""

    def __init__(self, address: tuple[str, int], client: Any = None) -> None:
        host, port = address
        self.name = f"direct {host}:{port}"
        self.client = client or MongoClient(host, port, directConnection=True, serverSelectionTimeoutMS=10_000)

    def arm(self, command: dict[str, Any]) -> None:
        try:
            self.client.admin.command(command)
        except PyMongoError as exc:
            raise FailPointError(f"{self.name} refused {command.get('configureFailPoint')!r}: {exc}") from exc

    def disarm(self, fail_point: str) -> None:
        try:
            self.client.admin.command({"configureFailPoint": fail_point, "mode": "off"})
        except PyMongoError as exc:
            raise TargetAdminError(f"{self.name} could not turn {fail_point!r} off: {exc}") from exc

    def leftovers(self) -> list[str]:
        """[]: a server does not list its armed fail points; the manager turns off every one it armed."""
        return []

    def close(self) -> None:
        self.client.close()


#: How long closing the harness's own client may take: a live server ends its sessions at once, a dead one would
#: hold ``close()`` for the whole server-selection timeout (pymongo selects a server to send endSessions).
CLOSE_WAIT_S = 2.0


def close_bounded(client: MongoClient) -> None:
    """Close ``client`` in the background and wait for it at most :data:`CLOSE_WAIT_S` (a target that died
    mid-run must not hold the run's end, or a worker's restart, for ten seconds)."""
    closing = threading.Thread(target=client.close, name="close-admin-client", daemon=True)
    closing.start()
    closing.join(CLOSE_WAIT_S)


class AdminTasks:
    """The target port's :class:`~harness.core.ports.TargetAdmin` on pymongo: the engine's jobs for the
    harness's own client (``target.admin``, looked up at each call: a target connects it when it starts)."""

    def __init__(self, target: TargetBase) -> None:
        self._target = target

    @property
    def _client(self) -> MongoClient:
        refusal = self._target.refusal()
        if refusal is not None:
            raise TargetAdminError(refusal)
        admin = self._target.admin
        if admin is None:
            raise TargetAdminError(f"target {self._target.name} is not started (no admin client)")
        return admin

    def drop_database(self, name: str) -> None:
        try:
            self._client.drop_database(name)
        except PyMongoError as exc:
            raise TargetAdminError(f"dropping database {name}: {exc}") from exc

    def recreate_collection(
        self, database: str, collection: str, options: dict[str, Any], documents: list[dict[str, Any]]
    ) -> None:
        """Drop and create one collection, as the formats' set-up says, then insert ``documents``.

        A write of the previous test that the server is still finishing (one a fail point blocked, after the
        driver gave up on it client-side) can recreate the collection between the drop and the create; that is
        the previous test's leftover, not this test's failure, so the pair is tried again.
        """
        try:
            handle = self._client.get_database(database, write_concern=MAJORITY)
            for attempt in range(1, RECREATE_ATTEMPTS + 1):
                handle.drop_collection(collection)
                try:
                    handle.create_collection(collection, **options)
                    break
                except CollectionInvalid:  # pymongo's own "already exists", from its listCollections check
                    if attempt == RECREATE_ATTEMPTS:
                        raise
            if documents:
                handle[collection].insert_many(documents)
        except PyMongoError as exc:
            raise TargetAdminError(f"recreating {database}.{collection}: {exc}") from exc

    def collection_documents(self, database: str, collection: str) -> list[dict[str, Any]]:
        handle = self._client[database].get_collection(
            collection, read_preference=ReadPreference.PRIMARY, read_concern=ReadConcern("local")
        )
        try:
            return list(handle.find({}, sort=[("_id", 1)]))
        except PyMongoError as exc:
            raise TargetAdminError(f"reading {database}.{collection}: {exc}") from exc

    def collection_names(self, database: str) -> list[str]:
        try:
            names: list[str] = self._client[database].list_collection_names()
            return names
        except PyMongoError as exc:
            raise TargetAdminError(f"listCollections failed: {exc}") from exc

    def index_names(self, database: str, collection: str) -> list[str]:
        try:
            return [index["name"] for index in self._client[database][collection].list_indexes()]
        except PyMongoError as exc:
            raise TargetAdminError(f"listIndexes failed: {exc}") from exc

    def only_server(self, uri: str) -> tuple[str, int] | None:
        nodes = uri_parser.parse_uri(uri)["nodelist"]
        return (nodes[0][0], int(nodes[0][1])) if len(nodes) == 1 else None

    def direct_failpoints(self, address: tuple[str, int]) -> DirectServer:
        """A client of the harness's own on one server (a driver's pinned mongos): the target's guard says first
        whether the harness may reach it."""
        refusal = self._target.refusal(address)
        if refusal is not None:
            raise TargetAdminError(refusal)
        return DirectServer(address)


class TargetBase:
    """The base of this project's targets (each a :class:`harness.core.ports.Target`): subclasses start and
    stop the deployment; all share detection through the admin client."""

    kind = "abstract"
    #: How ``configureFailPoint`` sent through ``admin`` is applied: ``native`` (by the server itself), or the name
    #: of what answers it on the way (a wire proxy that presents the server, ``emulated-by-presenting-proxy``). The
    #: fail-point plug-in names the run's backend after it, so a record never says native for an emulation.
    admin_failpoints = "native"
    #: The port's ``faults`` and ``inner``: a deployment has no network faults in front of it and wraps nothing
    #: (:class:`faults.network.target.ThroughToxiproxy` sets both).
    faults: Any = None
    inner: TargetBase | None = None

    def __init__(self, name: str) -> None:
        self.name = name
        self.uri = ""
        self.admin: MongoClient | None = None
        self.admin_tasks = AdminTasks(self)
        self.info = TargetInfo(kind=self.kind, name=name)

    def server_address(self) -> tuple[str, int] | None:
        """Where the server itself listens, beneath anything that presents it (None before the start): where a
        check asks what the server supports (its admin client's server, unless a subclass knows better)."""
        if self.admin is None:
            return None
        address: tuple[str, int] | None = self.admin.address
        return address

    def start(self) -> TargetInfo:
        raise NotImplementedError

    def restart_problem(self) -> str | None:
        """Why this target cannot be restarted in place: a deployment is not restartable unless its class says how
        (the targets that can override this and :meth:`restart_in_place`)."""
        return (
            f"target {self.name!r} cannot be restarted by the harness "
            "(restartable: embedded, embedded-on-disk, secantusdb-daemon=on-disk)"
        )

    def restart_in_place(self, down_s: float = 0.0) -> float:
        raise TargetUnavailable(self.restart_problem() or f"target {self.name!r} cannot be restarted in place")

    def stop(self) -> None:
        if self.admin is not None:
            close_bounded(self.admin)
            self.admin = None

    def connect_admin(self, timeout_ms: int = 10_000, **client_options: Any) -> None:
        """The harness's own client: bounded timeouts, unless the connection string sets its own; ``client_options``
        (a subclass's listeners and server selector) go to every client built here."""
        options: dict[str, Any] = {**admin_timeouts(self.uri, timeout_ms), **client_options}
        self.admin = MongoClient(self.uri, **options)
        self.info = describe(self.admin, self.kind, self.name, self.uri)
        if self.info.topology == "sharded" and connection_strings.single_host_uri(self.uri) != self.uri:
            # Fail points live on one mongos: arm them on the one the clients under test use
            # (useMultipleMongoses: false and the legacy global client both take the first host).
            self.admin.close()
            self.admin = MongoClient(connection_strings.single_host_uri(self.uri), **options)

    def refusal(self, address: tuple[str, int] | None = None) -> str | None:
        """Why the harness must not use this deployment any more, or reach ``address`` on it (a guard's answer; the
        targets the harness starts have none): every admin job asks first."""
        return None

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


def discard_log(path: str, *, keep_if_written: bool) -> None:
    """Remove a server's log file at stop, so runs leave nothing in the temporary folder: always when the server
    stopped as asked and its log holds only start-up noise (``keep_if_written=False``), or only when empty
    (``keep_if_written=True``: whatever the server wrote is kept, and named in the provenance)."""
    import contextlib
    import os

    with contextlib.suppress(OSError):
        if not keep_if_written or os.path.getsize(path) == 0:
            os.remove(path)
