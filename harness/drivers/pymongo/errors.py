"""pymongo exceptions -> :class:`~harness.core.observations.ErrorInfo`."""

from __future__ import annotations

import os

from bson.errors import BSONError
from pymongo import errors

from harness.core.observations import ErrorInfo


def bulk_write_result(raw: dict) -> dict:
    """pymongo's ``bulk_api_result`` (also a ``BulkWriteError``'s details) in the spec's result shape."""
    return {
        "deletedCount": raw.get("nRemoved", 0),
        "insertedCount": raw.get("nInserted", 0),
        "matchedCount": raw.get("nMatched", 0),
        "modifiedCount": raw.get("nModified", 0),
        "upsertedCount": raw.get("nUpserted", 0),
        "upsertedIds": {str(u["index"]): u["_id"] for u in raw.get("upserted", [])},
    }


#: Exceptions that may mean "the driver or server refused" rather than "the harness broke".
DRIVER_EXCEPTIONS: tuple[type[BaseException], ...] = (errors.PyMongoError, BSONError, TypeError, ValueError)

_DRIVER_PACKAGES = (f"{os.sep}pymongo{os.sep}", f"{os.sep}bson{os.sep}", f"{os.sep}gridfs{os.sep}")


def raised_by_driver(exc: BaseException) -> bool:
    """Whether the driver itself rejected the call (its validation raised), not the harness.

    pymongo's own errors always count. A ``TypeError``/``ValueError`` counts only
    when it was raised inside the driver's code: one raised where the harness
    called the driver (say, an unexpected keyword argument) is a harness defect
    and must not satisfy a test's ``isClientError``.
    """
    if isinstance(exc, (errors.PyMongoError, BSONError)):
        return True
    traceback, innermost = exc.__traceback__, None
    while traceback is not None:
        innermost, traceback = traceback, traceback.tb_next
    return innermost is not None and any(p in innermost.tb_frame.f_code.co_filename for p in _DRIVER_PACKAGES)


def error_info(exc: BaseException) -> ErrorInfo:
    details = getattr(exc, "details", None)
    details = dict(details) if isinstance(details, dict) else None
    labels = tuple(getattr(exc, "_error_labels", ()) or ())
    # A server's "not primary" reply comes back as NotPrimaryError (a ConnectionFailure), not as an
    # OperationFailure; it is still the server's error, with the server's code.
    server_reply = isinstance(exc, errors.NotPrimaryError) and details is not None and "code" in details
    is_server = isinstance(exc, errors.OperationFailure) or server_reply
    code = exc.code if isinstance(exc, errors.OperationFailure) else None
    if server_reply:
        code = details["code"]  # type: ignore[index]
    code_name = details.get("codeName") if details else None
    message = details.get("errmsg") if details and details.get("errmsg") else str(exc)
    # pymongo's own answer (4.2+): a client-side timeout, a network or server selection timeout, or the
    # server's MaxTimeMSExpired; never a write concern's wtimeout or any other error.
    timeout = isinstance(exc, errors.PyMongoError) and exc.timeout is True
    return ErrorInfo(
        message=message,
        type=type(exc).__name__,
        code=code,
        code_name=code_name,
        labels=labels,
        is_client_error=not is_server,
        is_timeout_error=bool(timeout),
        details=details,
        result=bulk_write_result(details) if isinstance(exc, errors.BulkWriteError) and details else None,
        exception=exc,
    )
