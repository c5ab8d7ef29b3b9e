"""Names and numbers the specs define, written once for every layer.

Before this module, the resumable codes, the resumable label and the handshake
command names were spelled in the APM capture, the wire proxy, the fault
campaign and the prose tests separately; a change to one could silently
miss the others. The command and event names are the executors' shared vocabulary
(``harness/core/vocabulary.json``), read here.
"""

from __future__ import annotations

from harness.core.vocabulary import command_names, event_names

#: The error label that makes an error resumable on wire version 9+ (change streams spec, "Resumable Error").
RESUMABLE_LABEL = "ResumableChangeStreamError"
#: The label a server puts on errors a change stream must never resume from.
NON_RESUMABLE_LABEL = "NonResumableChangeStreamError"
#: The spec's table of resumable server error codes (wire version < 9; servers 4.4+ label them instead).
#: A tuple in the spec's order: seeded fault schedules draw from it, so the order is part of replaying a seed.
RESUMABLE_CODES = (6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436, 63, 150, 13388, 234, 133)
CURSOR_NOT_FOUND = 43

#: The connection handshake: never part of a test's observed commands, never failed by an emulated fail point.
HANDSHAKE_COMMANDS = command_names("handshake")
#: Never part of a test's observable behaviour.
INTERNAL_COMMANDS = command_names("internal")
#: Security-sensitive commands the unified format hides unless ``observeSensitiveCommands``.
SENSITIVE_COMMANDS = command_names("sensitive")

ALL_COMMAND_EVENTS = event_names("command")
#: Connection pool (CMAP) events, by the spec's names, keyed by pymongo's listener method.
CMAP_EVENTS = {
    "pool_created": "poolCreatedEvent",
    "pool_ready": "poolReadyEvent",
    "pool_cleared": "poolClearedEvent",
    "pool_closed": "poolClosedEvent",
    "connection_created": "connectionCreatedEvent",
    "connection_ready": "connectionReadyEvent",
    "connection_closed": "connectionClosedEvent",
    "connection_check_out_started": "connectionCheckOutStartedEvent",
    "connection_check_out_failed": "connectionCheckOutFailedEvent",
    "connection_checked_out": "connectionCheckedOutEvent",
    "connection_checked_in": "connectionCheckedInEvent",
}
