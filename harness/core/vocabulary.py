"""The executors' shared vocabulary (``harness/core/vocabulary.json``), read once for every layer and language.

The unified format's operation names and their arguments, the command names the harness treats specially
(security-sensitive, handshake, internal) and the event names were copied into the Python side and into each
executor (JavaScript, Java, Go, Rust); a new operation meant five edits that could disagree. They now live in
one JSON file (docs/executor-protocol.md section 12 describes it): the Python side reads it here, and an
executor reads it at start-up or compiles it in at build time (its build cache is keyed by the file too).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

#: The file itself: executors' build scripts hash it into their cache keys.
VOCABULARY_FILE = Path(__file__).with_name("vocabulary.json")


@cache
def vocabulary() -> dict[str, Any]:
    """The whole file, parsed (its shape: docs/executor-protocol.md section 12)."""
    loaded: dict[str, Any] = json.loads(VOCABULARY_FILE.read_text())
    return loaded


def operations(kind: str) -> dict[str, frozenset[str]]:
    """Operation name -> every argument it takes (required and optional), for entities of type ``kind``."""
    table: dict[str, dict[str, list[str]]] = vocabulary()["operations"][kind]
    return {name: frozenset(spec["required"]) | frozenset(spec["optional"]) for name, spec in table.items()}


def executor_operations() -> frozenset[str]:
    """Every operation name an executor may list in ``hello``: the entities' operations and the prose-only ones
    (the test runner's are the harness's own)."""
    table: dict[str, dict[str, Any]] = vocabulary()["operations"]
    names = {name for kind, operations in table.items() if kind != "testRunner" for name in operations}
    return frozenset(names | set(vocabulary()["proseOperations"]))


def required_arguments(kind: str, name: str) -> frozenset[str]:
    """The arguments operation ``name`` on a ``kind`` cannot do without (empty for an unknown operation)."""
    spec = vocabulary()["operations"].get(kind, {}).get(name)
    return frozenset(spec["required"]) if spec else frozenset()


def command_names(group: str) -> frozenset[str]:
    """The command names of ``group``: ``sensitive``, ``handshake`` or ``internal``."""
    return frozenset(vocabulary()["commands"][group])


def event_names(family: str) -> tuple[str, ...]:
    """The unified format's event names of ``family`` (``command``, ``cmap``, ``sdam``), in the file's order."""
    return tuple(vocabulary()["events"][family])


def sensitive_command(name: str, payload: Any) -> bool:
    """Whether a command event is security-sensitive (the unified format's list, compared case-insensitively as
    servers do, or a handshake that carries authentication: ``speculativeAuthenticate`` in its body or reply,
    or a body or reply the driver emptied because it did). ``payload`` is the started event's command or the
    succeeded event's reply (None for a failure, whose handshake is known only from its started event)."""
    lowered = name.lower()
    if lowered in {command.lower() for command in command_names("sensitive")}:
        return True
    if lowered not in {command.lower() for command in command_names("handshake")} or payload is None:
        return False
    return not payload or (isinstance(payload, dict) and "speculativeAuthenticate" in payload)
