"""The unified format's "Evaluating Matches" rules and its ``$$`` special operators.

``match(expected, actual)`` returns every :class:`~harness.core.matching.Mismatch`
(empty: they match). The rules, as the spec states them:

* a root-level document may have keys the expectation does not name; a
  nested document may not (``$$matchAsRoot`` makes a nested one root-level);
* arrays match element by element and must be of the same length; the
  documents of a cursor's result (:class:`~harness.core.observations.CursorDocuments`)
  are each root-level, the documents of a plain array (``distinct``) are not;
* numbers compare by value across int32, int64 and double; Decimal128 only
  with Decimal128; other scalars must have the same BSON type and be equal;
* an expected document whose first and only key starts with ``$$`` is an
  operator, found in :data:`OPERATORS` by name. Operators see a missing key
  as :data:`~harness.core.matching.MISSING`, so ``$$exists`` and
  ``$$unsetOrMatches`` need no special path.

``context`` is the test's driver scope; operators that name entities
(``$$matchesEntity``, ``$$sessionLsid``) look them up there.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bson import json_util
from bson.binary import Binary
from bson.code import Code
from bson.dbref import DBRef
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.regex import Regex
from bson.timestamp import Timestamp

from harness.core.matching import MISSING, Mismatch, UnsupportedAssertion, child_path, show
from harness.core.observations import CursorDocuments
from harness.core.ports import DriverLacksFeature

Operator = Callable[["Matcher", Any, Any, str, bool], list[Mismatch]]
OPERATORS: dict[str, Operator] = {}

_INT32 = range(-(2**31), 2**31)
#: ``$$type: number`` is the query language's alias for these.
_NUMBER_TYPES = ("int", "long", "double", "decimal")


def operator(name: str) -> Callable[[Operator], Operator]:
    def register(fn: Operator) -> Operator:
        OPERATORS[name] = fn
        return fn

    return register


def bson_type(value: Any) -> str:
    """The ``$type`` alias of a decoded BSON value (``"int"``, ``"objectId"``...)."""
    if value is MISSING:
        return "missing"
    for kind, name in _TYPE_NAMES:
        if isinstance(value, kind):
            if isinstance(value, Code) and value.scope is not None:
                return "javascriptWithScope"
            if name == "int" and not isinstance(value, Int64) and value not in _INT32:
                return "long"
            return name
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return "array"
    return type(value).__name__


# Order matters: bool before int, Int64 before int, Code (a str) before str, Binary (bytes) before bytes.
_TYPE_NAMES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "bool"),
    (Int64, "long"),
    (int, "int"),
    (float, "double"),
    (Decimal128, "decimal"),
    (Code, "javascript"),
    (str, "string"),
    ((Binary, bytes), "binData"),
    (ObjectId, "objectId"),
    (datetime.datetime, "date"),
    (type(None), "null"),
    ((Regex, re.Pattern), "regex"),
    (DBRef, "dbPointer"),
    (Timestamp, "timestamp"),
    (MinKey, "minKey"),
    (MaxKey, "maxKey"),
)


def is_number(value: Any) -> bool:
    return bson_type(value) in ("int", "long", "double")


def operator_of(expected: Any) -> tuple[str, Any] | None:
    """``{"$$type": "int"}`` -> ``("$$type", "int")``; anything else -> None."""
    if isinstance(expected, Mapping) and len(expected) == 1:
        ((key, operand),) = expected.items()
        if isinstance(key, str) and key.startswith("$$"):
            return key, operand
    return None


class Matcher:
    """The rules above, bound to one test's entities."""

    def __init__(self, context: Any = None) -> None:
        self.context = context

    def match(self, expected: Any, actual: Any, path: str = "", root: bool = True) -> list[Mismatch]:
        special = operator_of(expected)
        if special is not None:
            name, operand = special
            implementation = OPERATORS.get(name)
            if implementation is None:
                raise UnsupportedAssertion(f"{path}: unknown special operator {name}")
            return implementation(self, operand, actual, path, root)
        if actual is MISSING:
            return [Mismatch(path, expected, actual, "key is missing")]
        if isinstance(expected, Mapping):
            return self._document(expected, actual, path, root)
        if isinstance(expected, list):
            return self._array(expected, actual, path, root)
        return self._scalar(expected, actual, path)

    def _document(self, expected: Mapping[str, Any], actual: Any, path: str, root: bool) -> list[Mismatch]:
        if not isinstance(actual, Mapping):
            return [Mismatch(path, expected, actual, f"expected a document, got {bson_type(actual)}")]
        found: list[Mismatch] = []
        for key, value in expected.items():
            found.extend(self.match(value, actual.get(key, MISSING), child_path(path, key), root=False))
        if not root:
            extra = [k for k in actual if k not in expected]
            if extra:
                found.append(Mismatch(path, expected, actual, f"unexpected key(s) {extra} in a nested document"))
        return found

    def _array(self, expected: list[Any], actual: Any, path: str, root: bool) -> list[Mismatch]:
        if not isinstance(actual, list):
            return [Mismatch(path, expected, actual, f"expected an array, got {bson_type(actual)}")]
        if len(expected) != len(actual):
            return [
                Mismatch(
                    path, expected, actual, f"arrays differ in length: expected {len(expected)}, got {len(actual)}"
                )
            ]
        elements_are_roots = root and isinstance(actual, CursorDocuments)
        found: list[Mismatch] = []
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            found.extend(self.match(want, got, child_path(path, index), root=elements_are_roots))
        return found

    def _scalar(self, expected: Any, actual: Any, path: str) -> list[Mismatch]:
        if is_number(expected) and is_number(actual):
            equal = expected == actual
        else:
            expected_type, actual_type = bson_type(expected), bson_type(actual)
            if expected_type != actual_type:
                return [Mismatch(path, expected, actual, f"type differs: expected {expected_type}, got {actual_type}")]
            equal = expected == actual
        return [] if equal else [Mismatch(path, expected, actual, "values differ")]


def match(expected: Any, actual: Any, path: str = "", context: Any = None, root: bool = True) -> list[Mismatch]:
    return Matcher(context).match(expected, actual, path, root)


# -- special operators ----------------------------------------------------------
@operator("$$exists")
def _exists(matcher: Matcher, operand: Any, actual: Any, path: str, root: bool) -> list[Mismatch]:
    if not isinstance(operand, bool):
        return [Mismatch(path, {"$$exists": operand}, actual, "$$exists needs a boolean")]
    if operand == (actual is not MISSING):
        return []
    return [Mismatch(path, {"$$exists": operand}, actual, "key is missing" if operand else "key must not exist")]


@operator("$$type")
def _type(matcher: Matcher, operand: Any, actual: Any, path: str, root: bool) -> list[Mismatch]:
    wanted = [operand] if isinstance(operand, str) else list(operand)
    allowed = {alias for name in wanted for alias in (_NUMBER_TYPES if name == "number" else (name,))}
    actual_type = bson_type(actual)
    if actual is not MISSING and actual_type in allowed:
        return []
    return [Mismatch(path, {"$$type": operand}, actual, f"actual type is {actual_type}")]


@operator("$$unsetOrMatches")
def _unset_or_matches(matcher: Matcher, operand: Any, actual: Any, path: str, root: bool) -> list[Mismatch]:
    if actual is MISSING:
        return []
    return matcher.match(operand, actual, path, root)


@operator("$$matchesEntity")
def _matches_entity(matcher: Matcher, operand: Any, actual: Any, path: str, root: bool) -> list[Mismatch]:
    try:
        entity = matcher.context.entity(operand)
    except Exception as exc:
        return [Mismatch(path, {"$$matchesEntity": operand}, actual, f"no entity {operand!r}: {exc}")]
    return matcher.match(entity, actual, path, root)


@operator("$$matchesHexBytes")
def _matches_hex_bytes(matcher: Matcher, operand: Any, actual: Any, path: str, root: bool) -> list[Mismatch]:
    expected = {"$$matchesHexBytes": operand}
    if not isinstance(operand, str) or len(operand) % 2 or re.fullmatch(r"[0-9A-Fa-f]*", operand) is None:
        return [
            Mismatch(path, expected, actual, "malformed $$matchesHexBytes operand (needs an even number of hex digits)")
        ]
    if isinstance(actual, str):
        actual_bytes: bytes | None = actual.encode("latin-1", errors="replace")
    else:
        actual_bytes = bytes(actual) if isinstance(actual, (bytes, bytearray)) else None
    if actual_bytes is not None and actual_bytes == bytes.fromhex(operand):
        return []
    return [Mismatch(path, expected, actual, "bytes differ")]


@operator("$$sessionLsid")
def _session_lsid(matcher: Matcher, operand: Any, actual: Any, path: str, root: bool) -> list[Mismatch]:
    try:
        lsid = matcher.context.session_lsid(operand)
    except DriverLacksFeature:  # the adapter does not declare session_lsid: the test is skipped, not failed
        raise
    except Exception as exc:
        return [Mismatch(path, {"$$sessionLsid": operand}, actual, f"no session entity {operand!r}: {exc}")]
    if actual is not MISSING and actual == lsid:
        return []
    return [Mismatch(path, {"$$sessionLsid": operand}, actual, f"not the lsid of {operand} ({show(lsid)})")]


@operator("$$lte")
def _lte(matcher: Matcher, operand: Any, actual: Any, path: str, root: bool) -> list[Mismatch]:
    if is_number(operand) and is_number(actual) and actual <= operand:
        return []
    return [Mismatch(path, {"$$lte": operand}, actual, "not a number less than or equal to the operand")]


@operator("$$matchAsDocument")
def _match_as_document(matcher: Matcher, operand: Any, actual: Any, path: str, root: bool) -> list[Mismatch]:
    expected = {"$$matchAsDocument": operand}
    if not isinstance(actual, str):
        return [Mismatch(path, expected, actual, "actual value is not an Extended JSON string")]
    try:
        document = json_util.loads(actual)
    except (ValueError, TypeError) as exc:
        return [Mismatch(path, expected, actual, f"actual string is not valid Extended JSON: {exc}")]
    if not isinstance(document, Mapping):
        return [Mismatch(path, expected, actual, "actual string does not hold a document")]
    return matcher.match(operand, document, path, root=False)


@operator("$$matchAsRoot")
def _match_as_root(matcher: Matcher, operand: Any, actual: Any, path: str, root: bool) -> list[Mismatch]:
    if not isinstance(actual, Mapping) or not isinstance(operand, Mapping):
        return [Mismatch(path, {"$$matchAsRoot": operand}, actual, "$$matchAsRoot compares two documents")]
    return matcher.match(operand, actual, path, root=True)
