"""The legacy loader: both encodings give one model; broken input gives named errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.core.model import NOT_GIVEN
from harness.formats.loaders import load_file, load_paths
from tests.conftest import LEGACY_DIR, require_shared_specs

LEGACY_FILES = [
    "change-streams",
    "change-streams-errors",
    "change-streams-resume-allowlist",
    "change-streams-resume-errorLabels",
]


def _comparable(test):
    fields = dataclasses.asdict(test)
    fields.pop("file")
    fields.pop("line")
    return fields


@pytest.mark.parametrize("stem", LEGACY_FILES)
def test_yaml_and_json_give_identical_models(stem):
    require_shared_specs()
    from_yaml = load_file(LEGACY_DIR / f"{stem}.yml")
    from_json = load_file(LEGACY_DIR / f"{stem}.json")
    assert len(from_yaml) == len(from_json) > 0
    for a, b in zip(from_yaml, from_json, strict=True):
        assert a.load_error is None and b.load_error is None
        assert a.test_id == b.test_id
        assert _comparable(a) == _comparable(b)
        assert a.line is not None and b.line is not None


def test_the_corpus_has_fifty_tests_in_the_shared_model():
    require_shared_specs()
    tests = load_paths([LEGACY_DIR])
    assert len(tests) == 50
    assert {t.format for t in tests} == {"legacy"} and {t.comparator for t in tests} == {"legacy"}
    consecutive = next(t for t in tests if t.description == "Test consecutive resume")
    names = [op.name for op in consecutive.operations]
    assert names[:2] == ["failPoint", "createChangeStream"]
    assert names[-1] == "close" and names.count("iterateUntilDocumentOrError") == 3
    assert [op.label for op in consecutive.operations if op.expect_result is not NOT_GIVEN] == [
        "success[0]",
        "success[1]",
        "success[2]",
    ]
    assert consecutive.expect_events[0].skip_commands == ("killCursors",)
    assert consecutive.expect_events[0].ignore_extra_events is True


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


HEADER = """
database_name: db
collection_name: coll
tests:
"""


def test_broken_yaml_is_one_error_naming_file_and_line(tmp_path):
    path = _write(tmp_path, "broken.yml", HEADER + "  - description: x\n    target: [unclosed\n")
    [test] = load_file(path)
    assert test.load_error and str(path) in test.load_error and "line" in test.load_error


def test_broken_json_is_one_error_naming_the_file(tmp_path):
    path = _write(tmp_path, "broken.json", '{"database_name": "db", ')
    [test] = load_file(path)
    assert "invalid JSON" in test.load_error and str(path) in test.load_error


def test_a_bad_test_does_not_spoil_its_neighbours(tmp_path):
    text = (
        HEADER
        + """
  - description: good
    target: collection
    operations: []
    result: {success: []}
  - description: wrong type
    target: collection
    operations: "insertOne"
    result: {success: []}
  - description: unknown target
    target: cluster
    result: {success: []}
  - description: no result
    target: collection
  - description: unknown key
    target: collection
    bogus: 1
    result: {success: []}
"""
    )
    path = _write(tmp_path, "mixed.yml", text)
    good, wrong_type, unknown_target, no_result, unknown_key = load_file(path)
    assert good.load_error is None
    assert "'operations' must be list" in wrong_type.load_error and "wrong type" in wrong_type.load_error
    assert "line 10" in wrong_type.load_error
    assert "'target'" in unknown_target.load_error and "cluster" in unknown_target.load_error
    assert "'result'" in no_result.load_error
    assert "bogus" in unknown_key.load_error


def test_unknown_operation_loads_and_is_left_to_the_runner(tmp_path):
    text = (
        HEADER
        + """
  - description: unknown op
    target: collection
    operations:
      - {database: db, collection: coll, name: frobnicate, arguments: {}}
    result: {success: []}
"""
    )
    [test] = load_file(_write(tmp_path, "op.yml", text))
    assert test.load_error is None and any(op.name == "frobnicate" for op in test.operations)


def test_a_file_of_no_known_format_is_an_error(tmp_path):
    [test] = load_file(_write(tmp_path, "other.json", '{"hello": "world"}'))
    assert "not a spec test file" in test.load_error


def test_a_missing_path_is_an_error_not_a_crash(tmp_path):
    [test] = load_paths([tmp_path / "nowhere"])
    assert "no such spec file or directory" in test.load_error


def test_redefined_yaml_anchors_are_accepted(tmp_path):
    text = """
database_name: &name db
collection_name: &name coll
tests:
  - description: uses the second anchor
    target: collection
    operations:
      - {database: db, collection: *name, name: insertOne, arguments: {document: {x: 1}}}
    result: {success: []}
"""
    [test] = load_file(_write(tmp_path, "anchors.yml", text))
    assert test.load_error is None
    insert = next(op for op in test.operations if op.name == "insertOne")
    assert insert.object.endswith("db.coll")


def test_extended_json_is_decoded_in_both_encodings(tmp_path):
    from bson import Int64

    yml = _write(
        tmp_path,
        "ejson.yml",
        HEADER
        + """
  - description: ejson
    target: collection
    operations:
      - {database: db, collection: coll, name: insertOne, arguments: {document: {n: {$numberLong: "7"}}}}
    result: {success: []}
""",
    )
    json_path = _write(
        tmp_path,
        "ejson2.json",
        """{"database_name": "db", "collection_name": "coll", "tests": [
      {"description": "ejson", "target": "collection",
       "operations": [{"database": "db", "collection": "coll", "name": "insertOne",
                       "arguments": {"document": {"n": {"$numberLong": "7"}}}}],
       "result": {"success": []}}]}""",
    )
    for path in (yml, json_path):
        [test] = load_file(path)
        insert = next(op for op in test.operations if op.name == "insertOne")
        assert isinstance(insert.arguments["document"]["n"], Int64)
