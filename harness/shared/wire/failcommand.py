"""The emulated fail points as a state machine: pure logic, no I/O.

The proxy describes each command it sees as a :class:`CommandContext` and
asks :meth:`FailPointSet.decide` what to do; the answer is an :class:`Action`
(block, close, reply with an error, splice a write concern error) or
``None`` (forward untouched). Keeping I/O out means every rule of the
server's ``failCommand`` is unit-testable without sockets, and a seeded RNG
makes ``activationProbability`` replayable.

The rules follow the server (``CommandHelpers::evaluateFailCommandFailPoint``
and the ``getMore`` command); docs/wire-proxy.md lists them.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field
from typing import Any

from harness.core.constants import HANDSHAKE_COMMANDS, INTERNAL_COMMANDS, RESUMABLE_LABEL
from harness.shared.wire.codes import RESUMABLE_CHANGE_STREAM_CODES, RETRYABLE_WRITE_CODES, code_name

FAIL_COMMAND = "failCommand"
FAIL_GET_MORE = "failGetMoreAfterCursorCheckout"
EMULATED = (FAIL_COMMAND, FAIL_GET_MORE)

#: Commands no fail point may touch: the driver's monitoring and the proxy's own control channel.
EXEMPT_COMMANDS = HANDSHAKE_COMMANDS | INTERNAL_COMMANDS


class FailPointConfigError(ValueError):
    """A ``configureFailPoint`` the proxy cannot honour; ``code`` is the server code to reply with."""

    code = 2  # BadValue


@dataclass(frozen=True)
class CommandContext:
    """What the fail points need to know about one command (built by the proxy)."""

    name: str
    database: str = ""
    collection: str | None = None
    app_name: str | None = None
    retryable_write: bool = False
    change_stream_cursor: bool = False  # a getMore on a cursor opened by aggregate + $changeStream

    @property
    def namespace(self) -> str:
        return f"{self.database}.{self.collection}" if self.collection else self.database


@dataclass
class Action:
    """What the proxy must do instead of plain forwarding, in the server's order."""

    block_ms: float = 0
    close_connection: bool = False
    error: dict[str, Any] | None = None  # reply with this, do not forward
    write_concern_error: dict[str, Any] | None = None  # forward, then splice into a successful reply
    reply_labels: list[str] = field(default_factory=list)  # top-level errorLabels beside a spliced WCE
    fired: list[str] = field(default_factory=list)

    @property
    def forwards(self) -> bool:
        return not self.close_connection and self.error is None


class Mode:
    """A fail point mode; :meth:`fire` consumes it once for a command that matched."""

    def __init__(self, spec: Any) -> None:
        self.spec = spec
        self.kind, self.value = _parse_mode(spec)

    @property
    def active(self) -> bool:
        return self.kind != "off" and not (self.kind == "times" and self.value <= 0)

    def fire(self, rng: random.Random) -> bool:
        if self.kind == "alwaysOn":
            return True
        if self.kind == "times":
            if self.value <= 0:
                return False
            self.value -= 1
            return True
        if self.kind == "skip":
            if self.value > 0:
                self.value -= 1
                return False
            return True
        if self.kind == "activationProbability":
            return rng.random() < self.value
        return False


def _parse_mode(spec: Any) -> tuple[str, Any]:
    if spec in ("alwaysOn", "off"):
        return spec, None
    if isinstance(spec, dict) and len(spec) == 1:
        ((kind, value),) = spec.items()
        if kind in ("times", "skip") and isinstance(value, (int, float)) and not isinstance(value, bool):
            return kind, max(int(value), 0)
        if kind == "activationProbability" and isinstance(value, (int, float)) and 0 <= value <= 1:
            return kind, float(value)
    raise FailPointConfigError(
        f"mode {spec!r} is not one of 'alwaysOn', 'off', {{times: n}}, {{skip: n}}, "
        "{activationProbability: p} with 0 <= p <= 1"
    )


@dataclass
class FailPoint:
    name: str
    mode: Mode
    data: dict[str, Any]
    times_entered: int = 0

    def matches(self, context: CommandContext) -> bool:
        """The server's predicate: consulted before the mode, so non-matching commands consume nothing."""
        if context.name in EXEMPT_COMMANDS:
            return False
        commands = ["getMore"] if self.name == FAIL_GET_MORE else self.data.get("failCommands", [])
        if context.name not in commands:
            return False
        app_name = self.data.get("appName")
        if app_name is not None and app_name != context.app_name:
            return False
        namespace = self.data.get("namespace")
        return namespace is None or namespace == context.namespace


class FailPointSet:
    """The proxy's fail points; thread-safe, since the harness arms them from another thread."""

    def __init__(self, seed: int | None = None) -> None:
        self._points: dict[str, FailPoint] = {}
        self._entered: dict[str, int] = {}
        self._rng = random.Random(seed)
        self._lock = threading.Lock()

    def configure(self, command: dict[str, Any]) -> dict[str, Any]:
        """Apply a ``configureFailPoint`` document; returns the server's reply ``{count, ok: 1}``."""
        name = command.get("configureFailPoint")
        if name not in EMULATED:
            raise FailPointConfigError(
                f"fail point {name!r} is not emulated by the wire proxy (only {', '.join(EMULATED)})"
            )
        mode = Mode(command.get("mode"))
        data = command.get("data") or {}
        if not isinstance(data, dict):
            raise FailPointConfigError(f"configureFailPoint {name}: 'data' must be a document, not {data!r}")
        with self._lock:
            count = self._entered.get(name, 0)
            if mode.active:
                self._points[name] = FailPoint(name, mode, dict(data))
            else:
                self._points.pop(name, None)
        return {"count": count, "ok": 1.0}

    def disable(self, name: str) -> None:
        with self._lock:
            self._points.pop(name, None)

    def armed(self) -> list[str]:
        """Names of the points that can still fire."""
        with self._lock:
            return [name for name, point in self._points.items() if point.mode.active]

    def watches(self, name: str) -> bool:
        """Whether a command called ``name`` could make a point fire (lets the proxy skip decoding)."""
        points = self._points
        if not points or name in EXEMPT_COMMANDS:
            return False
        command = points.get(FAIL_COMMAND)
        if command is not None and name in command.data.get("failCommands", ()):
            return True
        return name == "getMore" and FAIL_GET_MORE in points

    def decide(self, context: CommandContext) -> Action | None:
        if context.name in EXEMPT_COMMANDS or not self._points:
            return None
        with self._lock:
            action = Action()
            point = self._points.get(FAIL_COMMAND)
            if point is not None and self._fires(point, context):
                _apply(point, context, action)
            if action.forwards and context.name == "getMore":
                point = self._points.get(FAIL_GET_MORE)
                if point is not None and self._fires(point, context):
                    _apply(point, context, action)
        return action if action.fired else None

    def _fires(self, point: FailPoint, context: CommandContext) -> bool:
        if not point.matches(context) or not point.mode.fire(self._rng):
            return False
        point.times_entered += 1
        self._entered[point.name] = self._entered.get(point.name, 0) + 1
        return True


def _apply(point: FailPoint, context: CommandContext, action: Action) -> None:
    data = point.data
    action.fired.append(point.name)
    if data.get("blockConnection"):
        action.block_ms += float(data.get("blockTimeMS", 0))
    if point.name == FAIL_COMMAND and data.get("closeConnection"):
        action.close_connection = True
        return
    if "errorCode" in data:
        code = int(data["errorCode"])
        action.error = error_reply(
            code,
            _labels(point, context, code),
            f"Failing command {context.name!r} via {point.name!r} failpoint (emulated by the wire proxy)",
        )
        return
    if point.name == FAIL_COMMAND and "writeConcernError" in data:
        action.write_concern_error = dict(data["writeConcernError"])
        action.reply_labels = _labels(point, context, action.write_concern_error.get("code"))


def _labels(point: FailPoint, context: CommandContext, code: Any) -> list[str]:
    """Explicit ``errorLabels`` win outright; otherwise the labels a 4.4+ server would add itself."""
    if "errorLabels" in point.data:
        return list(point.data["errorLabels"])
    labels = []
    # failCommand fires before the cursor is checked out, so the server cannot know it is a change stream.
    if point.name == FAIL_GET_MORE and context.change_stream_cursor and code in RESUMABLE_CHANGE_STREAM_CODES:
        labels.append(RESUMABLE_LABEL)
    if context.retryable_write and code in RETRYABLE_WRITE_CODES:
        labels.append("RetryableWriteError")
    return labels


def error_reply(code: int, labels: list[str], message: str) -> dict[str, Any]:
    reply: dict[str, Any] = {"ok": 0.0, "errmsg": message, "code": code, "codeName": code_name(code)}
    if labels:
        reply["errorLabels"] = labels
    return reply
