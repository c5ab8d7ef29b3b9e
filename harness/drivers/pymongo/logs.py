"""pymongo's structured logging, captured per client (the unified format's ``observeLogMessages``).

pymongo (4.6+) logs spec-shaped messages on the loggers ``pymongo.command``,
``pymongo.connection``, ``pymongo.serverSelection`` and ``pymongo.topology``: a
message object whose text is a JSON document (``message``, ``clientId`` or
``topologyId``, ``commandName``, ...), built only when the logger is enabled for
DEBUG. One :class:`_LogTap` on the ``pymongo`` logger, attached and set to DEBUG
while any scope observes log messages (and put back as it was afterwards), hands
each record to the client whose topology id it carries; nothing from another
client, or from the harness's own client, can reach a test's list.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from bson import json_util

from harness.core.observations import ObservedLogMessage

#: The logging spec's severity names -> Python's levels (trace has none: it is taken as debug).
LEVELS = {
    "emergency": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "critical": logging.CRITICAL,
    "error": logging.ERROR,
    "warning": logging.WARNING,
    "notice": logging.INFO,
    "info": logging.INFO,
    "debug": logging.DEBUG,
    "trace": logging.DEBUG,
}
_NAMES = {
    logging.CRITICAL: "critical",
    logging.ERROR: "error",
    logging.WARNING: "warning",
    logging.INFO: "info",
    logging.DEBUG: "debug",
}
#: The logging spec's components -> pymongo's loggers.
COMPONENTS = {
    "command": "pymongo.command",
    "connection": "pymongo.connection",
    "serverSelection": "pymongo.serverSelection",
    "topology": "pymongo.topology",
}
_COMPONENT_OF = {logger: component for component, logger in COMPONENTS.items()}


class ClientLogs:
    """The messages one client emitted, at or above the severity the test set per component."""

    def __init__(self, levels: dict[str, str]) -> None:
        unknown = sorted(set(levels) - set(COMPONENTS) - {"all"})
        if unknown:
            raise ValueError(f"observeLogMessages: unknown component(s) {unknown} (known: {sorted(COMPONENTS)})")
        self._minimum = {component: LEVELS[level] for component, level in levels.items()}
        self._lock = threading.Lock()
        self._messages: list[ObservedLogMessage] = []

    def wants(self, component: str, level: int) -> bool:
        minimum = self._minimum.get(component, self._minimum.get("all"))
        return minimum is not None and level >= minimum

    def add(self, message: ObservedLogMessage) -> None:
        with self._lock:
            self._messages.append(message)

    @property
    def messages(self) -> list[ObservedLogMessage]:
        with self._lock:
            return list(self._messages)


class _LogTap(logging.Handler):
    """Routes pymongo's log records to the observing clients, by topology id."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self._clients: dict[Any, ClientLogs] = {}
        self._guard = threading.Lock()
        self._saved_level: int | None = None

    def observe(self, topology_id: Any, logs: ClientLogs) -> None:
        with self._guard:
            if not self._clients:
                logger = logging.getLogger("pymongo")
                self._saved_level = logger.level
                logger.setLevel(logging.DEBUG)
                logger.addHandler(self)
            self._clients[topology_id] = logs

    def forget(self, topology_id: Any) -> None:
        with self._guard:
            if self._clients.pop(topology_id, None) is not None and not self._clients:
                logger = logging.getLogger("pymongo")
                logger.removeHandler(self)
                logger.setLevel(self._saved_level or logging.NOTSET)

    def emit(self, record: logging.LogRecord) -> None:
        component = _COMPONENT_OF.get(record.name)
        if component is None:
            return
        try:
            data = json_util.loads(record.getMessage())
        except ValueError:
            return  # not a structured message (a plain warning text)
        if not isinstance(data, dict):
            return
        owner = data.pop("clientId", None) or data.get("topologyId")
        logs = self._clients.get(owner)
        if logs is not None and logs.wants(component, record.levelno):
            level = _NAMES.get(record.levelno, record.levelname.lower())
            logs.add(ObservedLogMessage(level, component, data))


TAP = _LogTap()
