"""Reply shaping: change-stream cursor replies rewritten the way older servers wrote them.

A modern server never sends a change without its ``_id``, always sends
``postBatchResumeToken`` and fills batches as far as it can, so a driver's
code paths for the other cases are never run against it. The proxy can
reshape the replies of change-stream cursors (``aggregate`` with
``$changeStream`` and the ``getMore`` commands on its cursor) so that they
are. This module is the pure state (no I/O): :class:`ReplyShaping` is armed
with a :class:`ShapingConfig`, rewrites decoded reply documents and keeps the
documents it held back, per cursor, for the next ``getMore``. Shaped replies
*emulate* server behaviour; they are not a real older server (docs/wire-proxy.md).

The shapings, by the names a scenario uses:

``removePostBatchResumeToken``  no ``cursor.postBatchResumeToken`` (servers before 4.0.7);
``removeEventIds``              no ``_id`` in the change events of a batch (before wire version 8
                                the server did not refuse such a change; the driver must);
``splitBatches: N``             at most N documents per reply, the rest served on the next
                                ``getMore`` commands without asking the server;
``emptyBatchFirst``             every non-empty batch is answered first by an empty one, and the
                                real documents come with the next ``getMore``;
``removeOperationTime``         no ``operationTime`` in those replies (with ``removePostBatchResumeToken``,
                                a stream that has seen no change has no resume point at all);
``maxWireVersion: N``           every ``hello``/``isMaster`` reply says ``maxWireVersion`` N (monitoring
                                connections too: the driver's view of the server is N);
``handshakeMaxWireVersion: N``  only the first ``hello``/``isMaster`` reply of each connection (its
                                handshake) says N: a connection opened while this is armed has wire
                                version N, while the heartbeats of a monitoring connection opened
                                before keep the server's own. The two views then differ.

The hello shapings apply to every client unless ``appName`` names one; the
others apply to change-stream cursor replies only.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

REMOVE_PBRT = "removePostBatchResumeToken"
REMOVE_IDS = "removeEventIds"
SPLIT = "splitBatches"
EMPTY_FIRST = "emptyBatchFirst"
REMOVE_OPTIME = "removeOperationTime"
WIRE = "maxWireVersion"
HANDSHAKE_WIRE = "handshakeMaxWireVersion"
SHAPINGS = (REMOVE_PBRT, REMOVE_IDS, SPLIT, EMPTY_FIRST, REMOVE_OPTIME, WIRE, HANDSHAKE_WIRE)
_FLAGS = (REMOVE_PBRT, REMOVE_IDS, EMPTY_FIRST, REMOVE_OPTIME)
_NUMBERS = {SPLIT: 1, WIRE: 0, HANDSHAKE_WIRE: 0}  # shapings that take an integer, and its least value

#: Named bundles of shapings: what one kind of older server's replies looked like.
PROFILES: dict[str, dict[str, Any]] = {
    "pre-4.0.7-cursor-replies": {REMOVE_PBRT: True},
    "unchecked-event-ids": {REMOVE_IDS: True},
    "small-batches": {SPLIT: 1},
    "slow-first-batch": {EMPTY_FIRST: True},
    "pre-4.0.7-small-batches": {REMOVE_PBRT: True, SPLIT: 1},
    # neither a postBatchResumeToken nor an operationTime to save: nothing to resume from but the start
    "no-resume-point": {REMOVE_PBRT: True, REMOVE_OPTIME: True},
    # a 4.2 server (wire version 8), as every connection sees it
    "wire-version-8": {WIRE: 8},
    # connections opened from now on were handshaken by a 4.2 server; the monitor still sees the real one
    "wire-version-8-connections": {HANDSHAKE_WIRE: 8},
}


class ShapingConfigError(ValueError):
    """A shaping request the proxy cannot honour (unknown name, profile or value)."""


@dataclass(frozen=True)
class ShapingConfig:
    """What to do to change-stream cursor replies, and for which client (``appName``, None: all)."""

    remove_post_batch_resume_token: bool = False
    remove_event_ids: bool = False
    split_batches: int | None = None
    empty_batch_first: bool = False
    remove_operation_time: bool = False
    max_wire_version: int | None = None
    handshake_max_wire_version: int | None = None
    app_name: str | None = None
    profile: str | None = None

    @classmethod
    def parse(cls, document: dict[str, Any]) -> ShapingConfig:
        """``{profile?: NAME, shapings?: {NAME: value}, appName?: str}``; a profile and shapings merge."""
        unknown = set(document) - {"profile", "shapings", "appName"}
        if unknown:
            raise ShapingConfigError(f"unknown field(s) {sorted(unknown)}; expected profile, shapings, appName")
        chosen: dict[str, Any] = {}
        profile = document.get("profile")
        if profile is not None:
            if profile not in PROFILES:
                raise ShapingConfigError(f"unknown profile {profile!r}; known profiles: {sorted(PROFILES)}")
            chosen.update(PROFILES[profile])
        shapings = document.get("shapings", {})
        if not isinstance(shapings, dict):
            raise ShapingConfigError(f"shapings must be a document of name: value, got {shapings!r}")
        bad = set(shapings) - set(SHAPINGS)
        if bad:
            raise ShapingConfigError(f"unknown shaping(s) {sorted(bad)}; known shapings: {list(SHAPINGS)}")
        chosen.update(shapings)
        if not chosen:
            raise ShapingConfigError("nothing to shape: give a profile or at least one shaping")
        for name, least in _NUMBERS.items():
            value = chosen.get(name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < least):
                kind = "a positive integer" if least else "a non-negative integer"
                raise ShapingConfigError(f"{name} must be {kind}, got {value!r}")
        for flag in _FLAGS:
            if not isinstance(chosen.get(flag, False), bool):
                raise ShapingConfigError(f"{flag} must be true or false, got {chosen[flag]!r}")
        app_name = document.get("appName")
        if app_name is not None and not isinstance(app_name, str):
            raise ShapingConfigError(f"appName must be a string, got {app_name!r}")
        return cls(
            bool(chosen.get(REMOVE_PBRT)),
            bool(chosen.get(REMOVE_IDS)),
            chosen.get(SPLIT),
            bool(chosen.get(EMPTY_FIRST)),
            bool(chosen.get(REMOVE_OPTIME)),
            chosen.get(WIRE),
            chosen.get(HANDSHAKE_WIRE),
            app_name,
            profile,
        )

    def _values(self) -> dict[str, Any]:
        """Every shaping by name, with its value (False or None: not armed)."""
        return {
            REMOVE_PBRT: self.remove_post_batch_resume_token,
            REMOVE_IDS: self.remove_event_ids,
            SPLIT: self.split_batches,
            EMPTY_FIRST: self.empty_batch_first,
            REMOVE_OPTIME: self.remove_operation_time,
            WIRE: self.max_wire_version,
            HANDSHAKE_WIRE: self.handshake_max_wire_version,
        }

    @property
    def names(self) -> list[str]:
        return [name for name, value in self._values().items() if value is not None and value is not False]

    def hello_wire_version(self, first_reply: bool) -> int | None:
        """The ``maxWireVersion`` a hello reply must say (None: leave it), by whether it is the handshake."""
        if first_reply and self.handshake_max_wire_version is not None:
            return self.handshake_max_wire_version
        return self.max_wire_version

    def describe(self) -> dict[str, Any]:
        """For result records: what was armed."""
        values = self._values()
        shown: dict[str, Any] = {"shapings": {name: values[name] for name in self.names}}
        if self.profile:
            shown["profile"] = self.profile
        if self.app_name:
            shown["appName"] = self.app_name
        return shown


@dataclass
class HeldBatch:
    """Documents of one server reply the driver has not been given yet, and how to give them."""

    documents: deque[Any]
    per_reply: int
    final_post_batch_resume_token: Any  # the server's, for the last piece (None: none to give)
    remove_post_batch_resume_token: bool
    namespace: str
    extras: dict[str, Any] = field(default_factory=dict)  # operationTime, $clusterTime of the real reply


#: Reply fields copied from the server's reply into the replies the proxy makes up from held documents.
_COPIED_FIELDS = ("operationTime", "$clusterTime")


class ReplyShaping:
    """The armed shaping of one proxy, and the documents it holds back per cursor. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._config: ShapingConfig | None = None
        self._held: dict[int, HeldBatch] = {}
        self._last_token: dict[int, Any] = {}  # the postBatchResumeToken last given to the driver, per cursor
        self.applied: Counter[str] = Counter()

    # -- arming (the harness's thread) -------------------------------------------------------------
    def arm(self, config: ShapingConfig) -> None:
        with self._lock:
            self._config = config

    def clear(self, forget_held: bool = True) -> None:
        """Turn shaping off; after a test, also forget held documents (its clients are closed).

        During a test (``forget_held=False``) documents already held back are
        still served to the next ``getMore``: dropping them would lose changes.
        """
        with self._lock:
            self._config = None
            if forget_held:
                self._held.clear()
                self._last_token.clear()
                self.applied.clear()

    def armed(self) -> list[str]:
        """Names of what is still in effect: the armed shapings, and held documents per cursor."""
        with self._lock:
            names = list(self._config.names) if self._config else []
            names += [f"held documents of cursor {cursor_id}" for cursor_id in self._held]
            return names

    @property
    def config(self) -> ShapingConfig | None:
        return self._config

    def applies_to(self, app_name: str | None) -> bool:
        config = self._config
        return config is not None and (config.app_name is None or config.app_name == app_name)

    # -- the proxy's thread ---------------------------------------------------------------------
    def holds(self, cursor_id: int) -> bool:
        with self._lock:
            return int(cursor_id) in self._held

    def forget(self, cursor_ids: list[Any]) -> None:
        """A killCursors: nothing held for these cursors will be asked for."""
        with self._lock:
            for cursor_id in cursor_ids:
                if isinstance(cursor_id, int):
                    self._held.pop(int(cursor_id), None)
                    self._last_token.pop(int(cursor_id), None)

    def shape(self, reply: dict[str, Any]) -> dict[str, Any] | None:
        """A change-stream cursor reply rewritten by the armed shaping; ``None`` when nothing changes."""
        config = self._config
        cursor = reply.get("cursor")
        if config is None or not reply.get("ok") or not isinstance(cursor, dict):
            return None
        key = "firstBatch" if "firstBatch" in cursor else "nextBatch"
        documents = list(cursor.get(key) or [])
        token = cursor.get("postBatchResumeToken")
        cursor_id = cursor.get("id") or 0
        with self._lock:
            if config.remove_event_ids and any(isinstance(d, dict) and "_id" in d for d in documents):
                documents = [
                    {k: v for k, v in d.items() if k != "_id"} if isinstance(d, dict) else d for d in documents
                ]
                self.applied[REMOVE_IDS] += 1
            if config.remove_post_batch_resume_token and "postBatchResumeToken" in cursor:
                token = None
                self.applied[REMOVE_PBRT] += 1
            dropped = ("operationTime",) if config.remove_operation_time and "operationTime" in reply else ()
            if dropped:
                self.applied[REMOVE_OPTIME] += 1
            given, rest = documents, []
            if cursor_id:  # a closed cursor gets no getMore, so nothing may be held for it
                per_reply = config.split_batches or len(documents) or 1
                if config.empty_batch_first and documents:
                    given, rest = [], documents
                    self.applied[EMPTY_FIRST] += 1
                elif len(documents) > per_reply:
                    given, rest = documents[:per_reply], documents[per_reply:]
                    self.applied[SPLIT] += 1
                if rest:
                    self._held[int(cursor_id)] = HeldBatch(
                        deque(rest),
                        per_reply,
                        token,
                        config.remove_post_batch_resume_token,
                        str(cursor.get("ns", "")),
                        {f: reply[f] for f in _COPIED_FIELDS if f in reply and f not in dropped},
                    )
                    token = self._piece_token(int(cursor_id), given, config.remove_post_batch_resume_token)
            shaped_cursor = {k: v for k, v in cursor.items() if k not in (key, "postBatchResumeToken")}
            shaped_cursor[key] = given
            if token is not None:
                shaped_cursor["postBatchResumeToken"] = token
                if cursor_id:
                    self._last_token[int(cursor_id)] = token
        if (
            given == list(cursor.get(key) or [])
            and token == cursor.get("postBatchResumeToken")
            and ("postBatchResumeToken" in cursor) == (token is not None)
            and not dropped
        ):
            return None
        return {**{k: v for k, v in reply.items() if k not in dropped}, "cursor": shaped_cursor}

    def shape_hello(self, reply: dict[str, Any], app_name: str | None, first_reply: bool) -> dict[str, Any] | None:
        """A ``hello``/``isMaster`` reply with the armed wire version; None when nothing changes.

        ``first_reply``: this is the connection's handshake (its wire version is
        this reply's). ``minWireVersion`` is lowered with it if it would exceed it.
        """
        config = self._config
        if config is None or not reply.get("ok") or not self.applies_to(app_name):
            return None
        wire_version = config.hello_wire_version(first_reply)
        if wire_version is None or reply.get("maxWireVersion") == wire_version:
            return None
        shaped = {**reply, "maxWireVersion": wire_version}
        if isinstance(reply.get("minWireVersion"), int) and reply["minWireVersion"] > wire_version:
            shaped["minWireVersion"] = wire_version
        with self._lock:
            self.applied[HANDSHAKE_WIRE if first_reply and config.handshake_max_wire_version is not None else WIRE] += 1
        return shaped

    def held_reply(self, cursor_id: Any) -> dict[str, Any] | None:
        """The next piece of what is held for ``cursor_id``, as a ``getMore`` reply; None if nothing is held."""
        with self._lock:
            held = self._held.get(int(cursor_id))
            if held is None:
                return None
            piece = [held.documents.popleft() for _ in range(min(held.per_reply, len(held.documents)))]
            if held.documents:
                token = self._piece_token(int(cursor_id), piece, held.remove_post_batch_resume_token)
            else:
                del self._held[int(cursor_id)]
                token = held.final_post_batch_resume_token
            cursor: dict[str, Any] = {"id": cursor_id, "ns": held.namespace, "nextBatch": piece}
            if token is not None:
                cursor["postBatchResumeToken"] = token
                self._last_token[int(cursor_id)] = token
            self.applied["heldRepliesServed"] += 1
            return {"cursor": cursor, "ok": 1.0, **held.extras}

    def _piece_token(self, cursor_id: int, piece: list[Any], removed: bool) -> Any:
        """The postBatchResumeToken of a reply the proxy cut short: what a server would send there.

        A server that stops a batch early gives the last document's resume token; an
        empty batch repeats the token it last gave on that cursor (or none yet).
        """
        if removed:
            return None
        if piece:
            last = piece[-1]
            return last.get("_id") if isinstance(last, dict) else None
        return self._last_token.get(cursor_id)

    def report(self) -> dict[str, Any]:
        """For result records: what is armed and how many replies each shaping changed."""
        config = self._config
        return {**(config.describe() if config else {}), "applied": dict(self.applied)}
