"""pymongo adapter: one :class:`PyMongoScope` (entity map and event recorders) per test."""

from __future__ import annotations

import threading
import weakref
from typing import Any

import pymongo
import pymongo.common as pymongo_common
from pymongo import MongoClient
from pymongo.server_api import ServerApi

from harness.core.constants import ALL_COMMAND_EVENTS, CMAP_EVENTS
from harness.core.model import EntitySpec, Operation
from harness.core.observations import SDAM_EVENTS, DriverOperationError, ObservedEvent
from harness.core.ports import DRIVER_CAPABILITIES, DriverLacksFeature, UnsupportedOperation, chosen_iteration_mode
from harness.drivers.pymongo.api_shims import ITERABLES, SESSIONS, SYNC, SyncApi
from harness.drivers.pymongo.apm import CommandRecorder, PoolRecorder, ScopeCommandLog, SdamRecorder
from harness.drivers.pymongo.errors import DRIVER_EXCEPTIONS, error_info, raised_by_driver
from harness.drivers.pymongo.iteration import UNTIL_DOCUMENT
from harness.drivers.pymongo.logs import TAP, ClientLogs
from harness.drivers.pymongo.operations import OPERATIONS
from harness.drivers.pymongo.spec_options import collection_options
from harness.drivers.pymongo.stream_clock import StreamClock
from harness.drivers.pymongo.timeouts import client_timeout, remember
from harness.shared.connection_strings import single_host_uri

#: Client entity options this adapter implements; any other is refused by name rather than
#: ignored (ignoring, say, ``awaitMinPoolSizeMS`` would silently change what a test observes).
_CLIENT_KEYS = {
    "id",
    "uriOptions",
    "useMultipleMongoses",
    "observeEvents",
    "ignoreCommandMonitoringEvents",
    "observeSensitiveCommands",
    "serverApi",
    "observeLogMessages",
}


class PyMongoAdapter:
    name = "pymongo"
    version = pymongo.version
    language = "python"
    executor = None  # in process
    #: Its scopes answer every capability the port defines (in process, the driver's internals are at hand).
    capabilities = DRIVER_CAPABILITIES
    #: pymongo refuses a heartbeatFrequencyMS under its minHeartbeatFrequencyMS (a module constant,
    #: 500 ms), so fast heartbeats lower both, as pymongo's own test runner does.
    fast_heartbeat_ms = 100
    #: The oldest server wire version this pymongo supports: rules only older servers reach do not apply to it.
    min_wire_version = pymongo_common.MIN_SUPPORTED_WIRE_VERSION

    #: pymongo's public ways to consume a change stream, ``next()`` first (docs/executor-protocol.md 6.4.1); how
    #: each is driven: :mod:`harness.drivers.pymongo.iteration`.
    iteration_modes = tuple(UNTIL_DOCUMENT)
    #: Its scopes end an iteration early once a change can no longer come, when given the target's token format
    #: (:mod:`harness.drivers.pymongo.stream_clock`, docs/causes.md section 4).
    early_no_change = True
    #: A busy in-process driver cannot be stopped: a test's timeout abandons it (its scope is closed).
    restartable = False

    #: The scope this adapter's tests get (the asynchronous adapter's differs only in its API shim).
    scope_class: type[PyMongoScope]

    def open_scope(
        self,
        uri: str,
        *,
        iteration_timeout_s: float,
        fast_heartbeats: bool = False,
        iteration_mode: str | None = None,
        resume_token_format: str | None = None,
    ) -> PyMongoScope:
        return self.scope_class(
            uri,
            iteration_timeout_s,
            self.fast_heartbeat_ms if fast_heartbeats else None,
            chosen_iteration_mode(self, iteration_mode),
            resume_token_format,
        )

    def restart(self) -> None:
        """Nothing to restart in process: closing the timed-out test's scope already unblocks its thread."""


class _MinHeartbeat:
    """pymongo's minHeartbeatFrequencyMS is process-wide: lowered while any fast scope is open, then restored."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._saved = pymongo_common.MIN_HEARTBEAT_INTERVAL

    def lower(self, seconds: float) -> None:
        with self._lock:
            if self._users == 0:
                self._saved = pymongo_common.MIN_HEARTBEAT_INTERVAL
                pymongo_common.MIN_HEARTBEAT_INTERVAL = min(seconds, self._saved)
            self._users += 1

    def restore(self) -> None:
        with self._lock:
            self._users -= 1
            if self._users == 0:
                pymongo_common.MIN_HEARTBEAT_INTERVAL = self._saved


_MIN_HEARTBEAT = _MinHeartbeat()


class PyMongoScope:
    """Entities of one test, created lazily in declaration order, closed together."""

    #: The API's shim (:mod:`harness.drivers.pymongo.api_shims`): the synchronous one here, the
    #: asynchronous one in :class:`harness.drivers.pymongo.async_scope.AsyncPyMongoScope`.
    api: SyncApi = SYNC

    def __init__(
        self,
        uri: str,
        iteration_timeout_s: float,
        heartbeat_ms: int | None = None,
        iteration_mode: str = "next",
        resume_token_format: str | None = None,
    ) -> None:
        self.uri = uri
        self.iteration_timeout_s = iteration_timeout_s
        #: Every command of every client of the scope, for the early no-change verdict (None format: no verdict).
        self.clock = StreamClock(resume_token_format)
        #: How ``iterateUntilDocumentOrError`` consumes the scope's change streams (a key of ``UNTIL_DOCUMENT``).
        self.iteration_mode = iteration_mode
        #: Change stream -> the one iterator the ``iterator`` mode steps (a new one per call may restart a stream).
        self.iterators: dict[Any, Any] = {}
        #: heartbeatFrequencyMS for clients that do not set it (None: the driver's default).
        self.heartbeat_ms = heartbeat_ms
        if heartbeat_ms is not None:
            _MIN_HEARTBEAT.lower(heartbeat_ms / 1000)
        self._entities: dict[str, Any] = {}
        self._recorders: dict[str, CommandRecorder] = {}
        self._pools: dict[str, PoolRecorder] = {}
        self._sdam: dict[str, SdamRecorder] = {}
        self._logs: dict[str, ClientLogs] = {}
        self._log_topologies: list[Any] = []
        #: Client-side operation timeouts (CSOT) the driver has no object for: entity id -> timeoutMS of a
        #: database or collection entity (``timeoutMS`` in its options), or a session's ``defaultTimeoutMS``;
        #: and a change stream or cursor -> the timeout it was created with, for its iterations.
        self.timeouts: dict[str, int] = {}
        self.iteration_timeouts: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
        self._clients: list[MongoClient] = []
        #: Session entity -> its lsid, kept from creation since an ended session no longer tells.
        self._lsids: dict[str, Any] = {}
        self._closed = False
        #: The scope's unfiltered command log, kept only when the reference executor asks for it (its
        #: ``command_log``, docs/executor-protocol.md 6.4.2); every client created after it is set is in it.
        self.command_log: ScopeCommandLog | None = None

    # -- entities --------------------------------------------------------
    def create_entity(self, spec: EntitySpec) -> None:
        if self._closed:  # the test was torn down (timeout): a new client would leak
            raise UnsupportedOperation(f"cannot create {spec.id!r}: the test's driver scope is closed")
        if spec.id in self._entities:
            raise UnsupportedOperation(f"entity {spec.id!r} is defined twice")
        factory = _ENTITY_FACTORIES.get(spec.kind)
        if factory is None:
            raise DriverLacksFeature(f"entity type {spec.kind!r} is not supported by the pymongo adapter")
        self._entities[spec.id] = factory(self, spec)

    def entity(self, entity_id: str) -> Any:
        try:
            return self._entities[entity_id]
        except KeyError:
            raise UnsupportedOperation(f"no entity named {entity_id!r}") from None

    def set_entity(self, entity_id: str, value: Any) -> None:
        if entity_id in self._entities:
            raise UnsupportedOperation(f"entity {entity_id!r} already exists")
        self._entities[entity_id] = value

    def _client(self, spec: EntitySpec) -> MongoClient:
        unknown = set(spec.options) - _CLIENT_KEYS
        if unknown:
            raise DriverLacksFeature(f"client {spec.id!r}: unsupported option(s) {sorted(unknown)}")
        # The driver's own defaults: the specs' procedures create plain clients, and
        # the runner's per-test deadline, not client options, bounds a hung target.
        options = dict(spec.options.get("uriOptions", {}))
        if self.heartbeat_ms is not None and not any(k.lower() == "heartbeatfrequencyms" for k in options):
            options["heartbeatFrequencyMS"] = self.heartbeat_ms
        if "serverApi" in spec.options:
            api = spec.options["serverApi"]
            options["server_api"] = ServerApi(
                api["version"], strict=api.get("strict"), deprecation_errors=api.get("deprecationErrors")
            )
        recorder = CommandRecorder(
            observe=[e for e in spec.options.get("observeEvents", []) if e in ALL_COMMAND_EVENTS],
            ignore_commands=spec.options.get("ignoreCommandMonitoringEvents", []),
            observe_sensitive=bool(spec.options.get("observeSensitiveCommands", False)),
        )
        pool = PoolRecorder(observe=[e for e in spec.options.get("observeEvents", []) if e in CMAP_EVENTS.values()])
        sdam = SdamRecorder(observe=[e for e in spec.options.get("observeEvents", []) if e in SDAM_EVENTS])
        logs = self._client_logs(spec)
        uri = self.uri
        if spec.options.get("useMultipleMongoses") is False:
            uri = single_host_uri(uri)
        if logs is not None:  # not connected until the log tap knows the client, so its first messages are kept
            options["connect"] = False
        try:
            # An SDAM listener makes pymongo run an event thread that costs ~0.3 s at close: only when observed.
            listeners: list[Any] = [recorder, pool, self.clock, sdam] if sdam.observe else [recorder, pool, self.clock]
            if self.command_log is not None:
                listeners.append(self.command_log.listener(spec.id))
            client = self.api.new_client(uri, event_listeners=listeners, **options)
        except DRIVER_EXCEPTIONS as exc:
            if not raised_by_driver(exc):
                raise
            raise DriverOperationError(error_info(exc)) from exc
        self._clients.append(client)
        self._recorders[spec.id] = recorder
        self._pools[spec.id] = pool
        self._sdam[spec.id] = sdam
        if logs is not None:
            topology_id = client._topology_settings._topology_id
            TAP.observe(topology_id, logs)
            self._log_topologies.append(topology_id)
            self._logs[spec.id] = logs
            self.api.wait(client._get_topology())
        return client

    def _client_logs(self, spec: EntitySpec) -> ClientLogs | None:
        levels = spec.options.get("observeLogMessages")
        if levels is None:
            return None
        try:
            return ClientLogs(levels)
        except (ValueError, KeyError) as exc:
            raise DriverLacksFeature(f"client {spec.id!r}: {exc}") from exc

    def _database(self, spec: EntitySpec) -> Any:
        client = self.entity(spec.options["client"])
        options = self._entity_timeout(spec.id, spec.options.get("databaseOptions"), None)
        return client.get_database(spec.options["databaseName"], **collection_options(options))

    def _collection(self, spec: EntitySpec) -> Any:
        database = self.entity(spec.options["database"])
        options = self._entity_timeout(spec.id, spec.options.get("collectionOptions"), spec.options["database"])
        return database.get_collection(spec.options["collectionName"], **collection_options(options))

    def _entity_timeout(self, entity_id: str, options: dict[str, Any] | None, parent: str | None) -> dict[str, Any]:
        """Take ``timeoutMS`` out of database/collection options (pymongo has it per client or per block of
        code only): remembered for the entity's operations, inherited by a collection from its database."""
        rest = dict(options or {})
        if "timeoutMS" in rest:
            self.timeouts[entity_id] = rest.pop("timeoutMS")
        elif parent in self.timeouts:
            self.timeouts[entity_id] = self.timeouts[parent]
        return rest

    def _session(self, spec: EntitySpec) -> Any:
        client = self.entity(spec.options["client"])
        options = dict(spec.options.get("sessionOptions", {}))
        kwargs: dict[str, Any] = {}
        if "causalConsistency" in options:
            kwargs["causal_consistency"] = options.pop("causalConsistency")
        if "snapshot" in options:
            kwargs["snapshot"] = options.pop("snapshot")
        if "defaultTimeoutMS" in options:  # pymongo's sessions have no such option: applied by the scope
            self.timeouts[spec.id] = options.pop("defaultTimeoutMS")
        if options:
            raise DriverLacksFeature(f"session {spec.id!r}: unsupported option(s) {sorted(options)}")
        session = client.start_session(**kwargs)
        self._lsids[spec.id] = session.session_id
        return session

    # -- what only the driver knows (test-runner assertions) -------------------------
    def session_lsid(self, entity_id: str) -> Any:
        """The logical session id of a session entity (``$$sessionLsid``)."""
        try:
            return self._lsids[entity_id]
        except KeyError:
            raise UnsupportedOperation(f"no session entity named {entity_id!r}") from None

    def session_state(self, entity_id: str) -> dict[str, Any]:
        """``transactionState``, ``pinned`` and ``dirty`` of a session entity, as the spec names them."""
        session = self.entity(entity_id)
        if not isinstance(session, SESSIONS):
            raise UnsupportedOperation(f"entity {entity_id!r} is not a session")
        transaction = getattr(session, "_transaction", None)
        state = getattr(getattr(transaction, "state", None), "name", "NONE").lower()
        server_session = getattr(session, "_server_session", None)
        return {
            "transactionState": _TRANSACTION_STATES.get(state, state),
            "pinned": getattr(session, "_pinned_address", None) is not None,
            "dirty": bool(getattr(server_session, "dirty", False)),
        }

    # -- operations -------------------------------------------------------
    def run(self, operation: Operation) -> Any:
        implementation = OPERATIONS.get(operation.name)
        if implementation is None:
            raise DriverLacksFeature(f"operation {operation.name!r} is not implemented by the pymongo adapter")
        target = self.entity(operation.object)
        # A deep copy: pymongo writes into what it is given (insert_one adds an _id to the document), and the
        # test's own arguments must stay as loaded, or a second run of the test (a repeat, a campaign) inserts
        # the first run's _id again.
        arguments = _copied(dict(operation.arguments))
        try:
            with client_timeout(self, operation, target, arguments) as milliseconds:
                result = implementation(self, target, arguments)
            remember(self, result, milliseconds)
            return result
        except DRIVER_EXCEPTIONS as exc:
            if not raised_by_driver(exc):
                raise UnsupportedOperation(
                    f"{operation.name}: the adapter called pymongo wrongly: {type(exc).__name__}: {exc}"
                ) from exc
            raise DriverOperationError(error_info(exc)) from exc

    def events(self, client_id: str, event_type: str = "command") -> list[ObservedEvent]:
        """What one client published: command monitoring events, or ``cmap`` connection pool events."""
        recorders = {"command": self._recorders, "cmap": self._pools, "sdam": self._sdam}.get(event_type)
        if recorders is None:
            raise DriverLacksFeature(f"event type {event_type!r} is not observed by the pymongo adapter")
        try:
            return recorders[client_id].events
        except KeyError:
            raise UnsupportedOperation(f"no monitored client named {client_id!r}") from None

    def log_messages(self, client_id: str) -> list[Any]:
        """The structured log messages a client with ``observeLogMessages`` emitted, in order."""
        try:
            return self._logs[client_id].messages
        except KeyError:
            raise UnsupportedOperation(
                f"client {client_id!r} does not observe log messages "
                "(no observeLogMessages), or there is no such client"
            ) from None

    def session_pinned_address(self, entity_id: str) -> tuple[str, int] | None:
        """The ``(host, port)`` of the mongos a session entity is pinned to, or None (``targetedFailPoint``)."""
        session = self.entity(entity_id)
        if not isinstance(session, SESSIONS):
            raise UnsupportedOperation(f"entity {entity_id!r} is not a session")
        return getattr(session, "_pinned_address", None)

    def connections_checked_out(self, client_id: str) -> int:
        """Connections the client's pool has lent out right now (``assertNumberConnectionsCheckedOut``)."""
        try:
            return self._pools[client_id].checked_out
        except KeyError:
            raise UnsupportedOperation(f"no client named {client_id!r}") from None

    def close(self) -> None:
        """Close every cursor, session and client; safe to call twice or from another thread."""
        if self._closed:
            return
        self._closed = True
        for value in list(self._entities.values()):
            if isinstance(value, ITERABLES):
                self._settle(value.close)
            if hasattr(value, "end_session"):
                self._settle(value.end_session)
        for client in self._clients:
            self._settle(client.close)
        for topology_id in self._log_topologies:
            TAP.forget(topology_id)
        if self.heartbeat_ms is not None:
            _MIN_HEARTBEAT.restore()
        self.api.close()

    def _settle(self, action: Any) -> None:
        """Call a closing method and wait for it (an awaitable for the asynchronous API); errors ignored."""
        _quietly(lambda: self.api.wait(action()))


_ENTITY_FACTORIES = {
    "client": PyMongoScope._client,
    "database": PyMongoScope._database,
    "collection": PyMongoScope._collection,
    "session": PyMongoScope._session,
}


#: pymongo's transaction state names -> the spec's (``assertSessionTransactionState``).
_TRANSACTION_STATES = {
    "none": "none",
    "starting": "starting",
    "in_progress": "in_progress",
    "committed": "committed",
    "committed_empty": "committed",
    "aborted": "aborted",
}


def _quietly(action: Any) -> None:
    try:
        action()
    except Exception:
        pass


#: Set here because the scope class is defined after the adapter.
PyMongoAdapter.scope_class = PyMongoScope


def _copied(value: Any) -> Any:
    """``value`` with every dict and list copied, all the way down; other values (a callback's nested operations,
    an entity) are shared: only the documents a test gives are copied."""
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    return value
