"""The unified comparator: every rule and operator, each shown to accept and to refuse.

A matcher that cannot fail is a defect, so every positive case has a
negative twin, and the failure message is checked to name the path.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from bson import Binary, Code, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp

from harness.core.matching import MISSING, UnsupportedAssertion
from harness.core.matching.table import comparator_for
from harness.core.matching.unified_matcher import bson_type, match
from harness.core.observations import CursorDocuments, ErrorInfo, ObservedEvent

LSID = {"id": Binary(b"\x01" * 16, 4)}


class Entities:
    """A stand-in for the driver scope: two entities and one session lsid."""

    def entity(self, name: str) -> Any:
        return {"objectid0": ObjectId("57e193d7a9cc81b4027498b5"), "doc0": {"a": 1}}[name]

    def session_lsid(self, name: str) -> Any:
        if name != "session0":
            raise KeyError(name)
        return LSID


def ok(expected: Any, actual: Any, **kwargs: Any) -> bool:
    return not match(expected, actual, context=Entities(), **kwargs)


# -- documents, arrays, scalars --------------------------------------------------------
def test_root_documents_allow_extra_keys_nested_ones_do_not() -> None:
    assert ok({"x": 1}, {"x": 1, "y": 1})
    assert not ok({"x": 1, "y": 1}, {"x": 1})
    assert ok({"x": {"y": 1}}, {"x": {"y": 1}})
    (found,) = match({"x": {"y": 1}}, {"x": {"y": 1, "z": 1}})
    assert found.path == "x" and "unexpected key(s) ['z']" in found.reason


def test_key_order_does_not_matter() -> None:
    assert ok({"x": {"a": 1, "b": 2}}, {"x": {"b": 2, "a": 1}})


def test_arrays_must_have_the_same_length() -> None:
    assert ok([1, 2, 3], [1, 2, 3])
    assert not ok([1, 2, 3], [1, 2, 3, 4])
    assert not ok([1, 2, 3], [1, 2])
    (found,) = match({"a": [1, 2]}, {"a": [1, 3]})
    assert found.path == "a[1]"


def test_only_cursor_documents_are_root_level_inside_an_array() -> None:
    expected = [{"x": 1}, {"x": 2}]
    rows = [{"x": 1, "y": 1}, {"x": 2, "y": 2}]
    assert ok(expected, CursorDocuments(rows))  # find, aggregate
    assert not ok(expected, rows)  # distinct: plain values
    assert not ok({"r": expected}, {"r": CursorDocuments(rows)})  # nested deeper: not a result


def test_numbers_compare_flexibly_but_decimal_and_other_types_do_not() -> None:
    assert ok(1, 1.0) and ok(1, Int64(1)) and ok(Int64(2), 2.0)
    assert not ok(1, 1.5)
    assert not ok(1, Decimal128("1"))
    assert ok(Decimal128("1.5"), Decimal128("1.5"))
    assert not ok(1, "1") and not ok(True, 1) and not ok(None, 0)
    assert not ok({"x": 1}, [1]) and not ok([1], {"0": 1})


def test_a_missing_key_fails_with_its_path() -> None:
    (found,) = match({"a": {"b": 1}}, {"a": {}})
    assert found.path == "a.b" and found.actual is MISSING


# -- special operators ---------------------------------------------------------------
def test_exists() -> None:
    assert ok({"a": {"$$exists": True}}, {"a": None})
    assert not ok({"a": {"$$exists": True}}, {})
    assert ok({"a": {"$$exists": False}}, {})
    assert not ok({"a": {"$$exists": False}}, {"a": 1})


@pytest.mark.parametrize(
    ("value", "name"),
    [
        (1.5, "double"),
        ("s", "string"),
        ({"a": 1}, "object"),
        ([1], "array"),
        (Binary(b"x", 4), "binData"),
        (b"x", "binData"),
        (ObjectId(), "objectId"),
        (True, "bool"),
        (datetime.datetime(2020, 1, 1), "date"),
        (None, "null"),
        (Regex("a"), "regex"),
        (Code("f"), "javascript"),
        (Code("f", {"a": 1}), "javascriptWithScope"),
        (1, "int"),
        (2**40, "long"),
        (Int64(1), "long"),
        (Timestamp(1, 1), "timestamp"),
        (Decimal128("1"), "decimal"),
        (MinKey(), "minKey"),
        (MaxKey(), "maxKey"),
    ],
)
def test_bson_type_names(value: Any, name: str) -> None:
    assert bson_type(value) == name
    assert ok({"$$type": name}, value)
    assert ok({"$$type": ["nothing", name]}, value)
    other = "string" if name != "string" else "int"
    assert not ok({"$$type": other}, value)


def test_type_number_alias_and_missing_values() -> None:
    for number in (1, Int64(1), 1.5, Decimal128("1")):
        assert ok({"$$type": "number"}, number)
    assert not ok({"$$type": "number"}, "1")
    assert not ok({"a": {"$$type": "null"}}, {})  # $$type requires the key to exist
    assert ok({"$$type": "array"}, [1, "x"])  # the array's elements are not examined


def test_unset_or_matches() -> None:
    assert ok({"a": {"$$unsetOrMatches": 1}}, {})
    assert ok({"a": {"$$unsetOrMatches": 1}}, {"a": 1})
    assert not ok({"a": {"$$unsetOrMatches": 1}}, {"a": 2})
    assert ok({"$$unsetOrMatches": {"n": 1}}, MISSING)
    # keeps the root-ness of what it wraps: a root result may have extra keys, a nested one may not
    assert ok({"$$unsetOrMatches": {"n": 1}}, {"n": 1, "extra": 2})
    assert not ok({"a": {"$$unsetOrMatches": {"n": 1}}}, {"a": {"n": 1, "extra": 2}})


def test_matches_entity() -> None:
    assert ok({"_id": {"$$matchesEntity": "objectid0"}}, {"_id": ObjectId("57e193d7a9cc81b4027498b5")})
    assert not ok({"_id": {"$$matchesEntity": "objectid0"}}, {"_id": ObjectId()})
    assert not ok({"a": {"$$matchesEntity": "doc0"}}, {"a": {"a": 1, "b": 2}})  # nested: no extra keys
    (found,) = match({"$$matchesEntity": "nope"}, 1, context=Entities())
    assert "no entity 'nope'" in found.reason


def test_matches_hex_bytes() -> None:
    assert ok({"$$matchesHexBytes": "12ab"}, b"\x12\xab")
    assert ok({"$$matchesHexBytes": ""}, b"")
    assert not ok({"$$matchesHexBytes": "12ab"}, b"\x12\xac")
    (found,) = match({"$$matchesHexBytes": "1"}, b"\x01")
    assert "malformed" in found.reason


def test_session_lsid() -> None:
    assert ok({"lsid": {"$$sessionLsid": "session0"}}, {"lsid": LSID})
    assert not ok({"lsid": {"$$sessionLsid": "session0"}}, {"lsid": {"id": Binary(b"\x02" * 16, 4)}})
    assert not ok({"lsid": {"$$sessionLsid": "session0"}}, {})
    assert not ok({"lsid": {"$$sessionLsid": "session9"}}, {"lsid": LSID})


def test_lte() -> None:
    assert ok({"$$lte": 2}, 2) and ok({"$$lte": 2}, 1.0) and ok({"$$lte": Int64(3)}, 3) and ok({"$$lte": 1}, 0.0)
    assert not ok({"$$lte": 1}, 1.1)
    assert not ok({"$$lte": 2}, "1")
    assert not ok({"a": {"$$lte": 2}}, {})


def test_match_as_document() -> None:
    assert ok({"$$matchAsDocument": {"x": 1.0, "y": 2}}, '{"x": 1, "y": 2.0}')
    assert ok({"$$matchAsDocument": {"x": {"$$type": "objectId"}}}, '{"x": {"$oid": "57e193d7a9cc81b4027498b5"}}')
    assert not ok({"$$matchAsDocument": {"x": 1}}, '{"x": 1, "y": 2}')  # not root-level
    assert not ok({"$$matchAsDocument": {"x": 2}}, '{"x": 1}')
    for not_a_document in ("1", '["foo"]', '{"x"}'):
        assert not ok({"$$matchAsDocument": {"$$matchAsRoot": {}}}, not_a_document)
    assert not ok({"$$matchAsDocument": {}}, {"x": 1})  # needs a string


def test_match_as_root() -> None:
    assert ok({"x": {"$$matchAsRoot": {"y": 2}}}, {"x": {"y": 2, "z": 3}})
    assert not ok({"x": {"$$matchAsRoot": {"y": 3}}}, {"x": {"y": 2, "z": 3}})
    assert not ok({"x": {"$$matchAsRoot": {"y": 2}}}, {"x": 5})
    assert ok({"$$matchAsDocument": {"$$matchAsRoot": {"x": 1}}}, '{"x": 1, "y": 2}')


def test_an_unknown_operator_is_a_runner_error_not_a_pass_or_a_target_failure() -> None:
    with pytest.raises(UnsupportedAssertion, match=r"unknown special operator \$\$nonsense"):
        match({"a": {"$$nonsense": 1}}, {"a": 1})


def test_assertions_the_runner_cannot_make_are_runner_errors() -> None:
    unified = comparator_for("unified")
    with pytest.raises(UnsupportedAssertion, match="isTeapot"):
        unified.match_error({"isTeapot": True}, ErrorInfo("x", "E"), "op", None)
    with pytest.raises(UnsupportedAssertion, match="writeErrors"):
        unified.match_error({"writeErrors": {}}, ErrorInfo("x", "E"), "op", None)
    failed = ObservedEvent("commandFailedEvent", "insert", "db", failure={"code": 1})
    with pytest.raises(UnsupportedAssertion, match="'reply'"):  # not a field of this event
        unified.match_event({"commandFailedEvent": {"reply": {}}}, failed, "e", None)


# -- expectError ---------------------------------------------------------------------
UNIFIED = comparator_for("unified")
SERVER_ERROR = ErrorInfo(
    message="E11000 Duplicate key",
    type="DuplicateKeyError",
    code=11000,
    code_name="DuplicateKey",
    labels=("RetryableWriteError",),
    details={"ok": 0, "errmsg": "E11000 Duplicate key", "code": 11000},
)
CLIENT_ERROR = ErrorInfo(message="connection closed", type="AutoReconnect", is_client_error=True)


@pytest.mark.parametrize(
    ("expected", "error", "passes"),
    [
        ({"isError": True}, CLIENT_ERROR, True),
        ({"isClientError": True}, CLIENT_ERROR, True),
        ({"isClientError": True}, SERVER_ERROR, False),
        ({"isClientError": False}, SERVER_ERROR, True),
        ({"isTimeoutError": True}, SERVER_ERROR, False),
        ({"isTimeoutError": False}, SERVER_ERROR, True),
        ({"errorContains": "duplicate KEY"}, SERVER_ERROR, True),
        ({"errorContains": "timeout"}, SERVER_ERROR, False),
        ({"errorCode": 11000}, SERVER_ERROR, True),
        ({"errorCode": 11001}, SERVER_ERROR, False),
        ({"errorCode": 11000}, CLIENT_ERROR, False),
        ({"errorCodeName": "duplicatekey"}, SERVER_ERROR, True),
        ({"errorCodeName": "NotWritablePrimary"}, SERVER_ERROR, False),
        ({"errorLabelsContain": ["RetryableWriteError"]}, SERVER_ERROR, True),
        ({"errorLabelsContain": ["ResumableChangeStreamError"]}, SERVER_ERROR, False),
        ({"errorLabelsOmit": ["ResumableChangeStreamError"]}, SERVER_ERROR, True),
        ({"errorLabelsOmit": ["RetryableWriteError"]}, SERVER_ERROR, False),
        ({"errorResponse": {"errmsg": {"$$type": "string"}}}, SERVER_ERROR, True),
        ({"errorResponse": {"code": 1}}, SERVER_ERROR, False),
        ({"errorResponse": {"errmsg": {"$$type": "string"}}}, CLIENT_ERROR, False),
        ({"expectResult": {"$$unsetOrMatches": {"insertedCount": 2}}}, CLIENT_ERROR, True),
        ({"expectResult": {"insertedCount": 2}}, CLIENT_ERROR, False),
    ],
)
def test_expect_error(expected: dict[str, Any], error: ErrorInfo, passes: bool) -> None:
    found = UNIFIED.match_error(expected, error, "operations[0].expectError", Entities())
    assert (not found) == passes, found
    if found:
        assert found[0].path.startswith("operations[0].expectError.")


def test_expect_error_result_is_matched_against_the_errors_partial_result() -> None:
    error = ErrorInfo(message="bulk", type="BulkWriteError", result={"insertedCount": 2, "deletedCount": 0})
    assert not UNIFIED.match_error({"expectResult": {"insertedCount": 2}}, error, "e", None)
    assert UNIFIED.match_error({"expectResult": {"insertedCount": 3}}, error, "e", None)


# -- expectEvents --------------------------------------------------------------------
STARTED = ObservedEvent(
    "commandStartedEvent",
    "insert",
    "db",
    command={"insert": "c", "documents": [{"_id": 1}], "lsid": LSID, "$db": "db"},
    server_connection_id=7,
)
SUCCEEDED = ObservedEvent("commandSucceededEvent", "insert", "db", reply={"ok": 1.0, "n": 1})
FAILED = ObservedEvent("commandFailedEvent", "find", "db", failure={"ok": 0})


@pytest.mark.parametrize(
    ("expected", "event", "passes"),
    [
        (
            {"commandStartedEvent": {"command": {"insert": "c"}, "commandName": "insert", "databaseName": "db"}},
            STARTED,
            True,
        ),
        ({"commandStartedEvent": {"command": {"insert": "c", "lsid": {"$$sessionLsid": "session0"}}}}, STARTED, True),
        ({"commandStartedEvent": {"command": {"documents": [{"_id": 2}]}}}, STARTED, False),
        ({"commandStartedEvent": {"command": {"documents": [{"_id": 1}, {"_id": 2}]}}}, STARTED, False),
        ({"commandStartedEvent": {"commandName": "find"}}, STARTED, False),
        ({"commandStartedEvent": {"databaseName": "other"}}, STARTED, False),
        ({"commandStartedEvent": {"hasServerConnectionId": True}}, STARTED, True),
        ({"commandStartedEvent": {"hasServerConnectionId": False}}, STARTED, False),
        ({"commandStartedEvent": {"hasServiceId": False}}, STARTED, True),
        ({"commandStartedEvent": {"hasServiceId": True}}, STARTED, False),
        ({"commandSucceededEvent": {"reply": {"ok": 1, "n": 1}}}, SUCCEEDED, True),
        ({"commandSucceededEvent": {"reply": {"ok": 1, "n": 2}}}, SUCCEEDED, False),
        ({"commandStartedEvent": {}}, SUCCEEDED, False),
        ({"commandFailedEvent": {"commandName": "find"}}, FAILED, True),
        ({"commandFailedEvent": {"commandName": "insert"}}, FAILED, False),
        ({"connectionReadyEvent": {}}, ObservedEvent("connectionReadyEvent", ""), True),
        ({"connectionReadyEvent": {}}, ObservedEvent("connectionCreatedEvent", ""), False),
        (
            {"connectionClosedEvent": {"reason": "idle"}},
            ObservedEvent("connectionClosedEvent", "", reason="stale"),
            False,
        ),
    ],
)
def test_expect_events(expected: dict[str, Any], event: ObservedEvent, passes: bool) -> None:
    found = UNIFIED.match_event(expected, event, "expectEvents[0].events[0]", Entities())
    assert (not found) == passes, found


def test_expect_result_paths_name_the_operation() -> None:
    (found,) = UNIFIED.match_result({"n": 1}, {"n": 2}, "operations[3]", None)
    assert found.path == "operations[3].expectResult.n" and "expected 1, got 2" in str(found)


def test_an_expected_error_on_a_change_stream_that_opens_fails_at_once(embedded_run, tmp_path):
    """The failure message shows the change stream that came back instead of the error, without iterating it
    (iterating would wait for a change that never comes: an ``error`` at the deadline, not a ``failed``)."""
    from harness.formats.loaders import load_file

    spec = tmp_path / "opens.yml"
    spec.write_text("""
description: opens
schemaVersion: "1.7"
createEntities:
  - client: { id: client0 }
  - database: { id: database0, client: client0, databaseName: opens }
  - collection: { id: collection0, database: database0, collectionName: coll }
initialData:
  - { collectionName: coll, databaseName: opens, documents: [] }
tests:
  - description: expects an error that never comes
    operations:
      - name: createChangeStream
        object: collection0
        arguments: { pipeline: [] }
        expectError: { isClientError: false }
""")
    [test] = load_file(spec)
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "failed", verdict.message
    assert "ChangeStream" in verdict.message, verdict.message
