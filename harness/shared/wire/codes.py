"""Server error codes the proxy needs to name and to label.

The names are the server's (``src/mongo/base/error_codes.yml``); a driver
author reading an emulated error should see the same ``codeName`` a real
server would send. The two sets decide which implied error labels a 4.4+
server would attach (see docs/wire-proxy.md, "Error labels").
"""

from __future__ import annotations

from harness.core.constants import RESUMABLE_CODES

CODE_NAMES: dict[int, str] = {
    1: "InternalError",
    2: "BadValue",
    6: "HostUnreachable",
    7: "HostNotFound",
    8: "UnknownError",
    11: "UserNotFound",
    13: "Unauthorized",
    18: "AuthenticationFailed",
    20: "IllegalOperation",
    24: "LockTimeout",
    26: "NamespaceNotFound",
    43: "CursorNotFound",
    48: "NamespaceExists",
    50: "MaxTimeMSExpired",
    59: "CommandNotFound",
    63: "StaleShardVersion",
    64: "WriteConcernFailed",
    79: "UnknownReplWriteConcern",
    89: "NetworkTimeout",
    91: "ShutdownInProgress",
    96: "OperationFailed",
    100: "UnsatisfiableWriteConcern",
    112: "WriteConflict",
    133: "FailedToSatisfyReadPreference",
    136: "CappedPositionLost",
    150: "StaleEpoch",
    175: "QueryPlanKilled",
    189: "PrimarySteppedDown",
    234: "RetryChangeStream",
    237: "CursorKilled",
    251: "NoSuchTransaction",
    262: "ExceededTimeLimit",
    280: "ChangeStreamFatalError",
    286: "ChangeStreamHistoryLost",
    9001: "SocketException",
    10107: "NotWritablePrimary",
    11000: "DuplicateKey",
    11600: "InterruptedAtShutdown",
    11601: "Interrupted",
    11602: "InterruptedDueToReplStateChange",
    13388: "StaleConfig",
    13435: "NotPrimaryNoSecondaryOk",
    13436: "NotPrimaryOrSecondary",
}

#: Codes a 4.4+ server labels ``ResumableChangeStreamError`` on a change-stream getMore
#: (the change streams spec's "Resumable Error" table).
RESUMABLE_CHANGE_STREAM_CODES = frozenset(RESUMABLE_CODES)

#: Codes a 4.4+ server labels ``RetryableWriteError`` on a retryable write (``ErrorCodes::isRetriableError``).
RETRYABLE_WRITE_CODES = frozenset({6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436})


def code_name(code: int) -> str:
    return CODE_NAMES.get(code, "UnknownError")
