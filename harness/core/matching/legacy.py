"""The legacy runner's MATCH comparator (upstream ``legacy/README.rst``).

``expected`` must be a subset of ``actual``: every key of an expected object
and every index of an expected array must match; ``42`` or ``"42"`` stand for
"any value that exists"; otherwise the JSON types must agree and scalars be
equal. Errors are compared as ``{code, codeName, errmsg, errorLabels}``
documents, events as ``{command, commandName, databaseName}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from bson.decimal128 import Decimal128
from bson.int64 import Int64

from harness.core.matching import MISSING, Mismatch, child_path


def json_type(value: Any) -> str:
    """The JSON type a value would have in Extended JSON's relaxed form."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float, Int64, Decimal128, Decimal)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        return "array"
    return type(value).__name__


def is_placeholder(expected: Any) -> bool:
    if isinstance(expected, bool):
        return False
    return (isinstance(expected, int) and expected == 42) or expected == "42"


def match(expected: Any, actual: Any, path: str = "") -> list[Mismatch]:
    """``actual`` MATCHES ``expected``; returns every mismatch found (empty list: it matches)."""
    if is_placeholder(expected):
        if actual is MISSING or actual is None:
            return [Mismatch(path, expected, actual, "42 requires a value to exist")]
        return []
    if actual is MISSING:
        return [Mismatch(path, expected, actual, "key is missing")]
    expected_type, actual_type = json_type(expected), json_type(actual)
    if expected_type != actual_type:
        return [Mismatch(path, expected, actual, f"type differs: expected {expected_type}, got {actual_type}")]
    if expected_type == "array":
        found: list[Mismatch] = []
        for index, item in enumerate(expected):
            other = actual[index] if index < len(actual) else MISSING
            found.extend(match(item, other, child_path(path, index)))
        return found
    if expected_type == "object":
        found = []
        for key, item in expected.items():
            found.extend(match(item, actual.get(key, MISSING), child_path(path, key)))
        return found
    if expected_type == "number":
        equal = _as_number(expected) == _as_number(actual)
    else:
        equal = expected == actual and type(expected) is type(actual)
    return [] if equal else [Mismatch(path, expected, actual, "values differ")]


def _as_number(value: Any) -> Any:
    if isinstance(value, Decimal128):
        return value.to_decimal()
    return value


def error_document(error: Any) -> dict[str, Any]:
    """A driver error as the document ``result.error`` is matched against."""
    document: dict[str, Any] = {}
    for key, attr in (("code", "code"), ("codeName", "code_name"), ("errmsg", "message")):
        value = getattr(error, attr, None)
        if value is not None:
            document[key] = value
    document["errorLabels"] = list(getattr(error, "labels", ()) or ())
    return document


def event_document(event: Any) -> dict[str, Any]:
    """An observed command event as the document ``expectations`` are matched against."""
    document = {"commandName": event.command_name, "databaseName": event.database_name}
    if event.command is not None:
        document["command"] = event.command
    if event.reply is not None:
        document["reply"] = event.reply
    return document


class LegacyComparator:
    """MATCH applied to results, errors and events."""

    def match_result(self, expected: Any, actual: Any, path: str, context: Any = None) -> list[Mismatch]:
        return match(expected, actual, path)

    def match_error(self, expected: dict[str, Any], error: Any, path: str, context: Any = None) -> list[Mismatch]:
        return match(expected, error_document(error), path)

    def match_event(self, expected: dict[str, Any], actual: Any, path: str, context: Any = None) -> list[Mismatch]:
        ((kind, body),) = expected.items()
        if kind != actual.kind:
            return [Mismatch(path, kind, actual.kind, "event kind differs")]
        return match(body, event_document(actual), child_path(path, kind))
