"""The unified loader: both encodings give the same model; bad files become one clear error test.

The upstream files are read where the team keeps them (``../shared/specs``),
never copied into this repository.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from bson import json_util
from bson.json_util import CANONICAL_JSON_OPTIONS

from harness.core.model import NOT_GIVEN, EntitySpec, Requirement, SpecTest
from harness.formats.loaders import load_file, load_paths
from harness.formats.unified_schema import RUNNER_SCHEMA_VERSION
from tests.paths import SHARED_SPECS

SPECS = SHARED_SPECS / "upstream"
UNIFIED = SPECS / "unified"
SELFTESTS = SPECS / "unified-format-selftests"

pytestmark = pytest.mark.skipif(not UNIFIED.is_dir(), reason=f"upstream spec files not found at {SPECS}")

STEMS = sorted(p.stem for p in UNIFIED.glob("*.yml"))


def canonical(test: SpecTest) -> str:
    """Everything but where the test came from, with BSON types spelled out (Int64 is not int)."""
    neutral = dataclasses.replace(test, file="", line=None)
    return json_util.dumps(dataclasses.asdict(neutral), json_options=CANONICAL_JSON_OPTIONS, default=repr)


def test_the_corpus_has_nine_files_and_89_tests() -> None:
    assert len(STEMS) == 9
    tests = load_paths([UNIFIED])
    assert len(tests) == 89
    assert all(t.load_error is None and t.format == "unified" and t.comparator == "unified" for t in tests)


@pytest.mark.parametrize("stem", STEMS)
def test_yml_and_json_load_to_the_same_tests(stem: str) -> None:
    from_yml = load_file(UNIFIED / f"{stem}.yml")
    from_json = load_file(UNIFIED / f"{stem}.json")
    assert [t.test_id for t in from_yml] == [t.test_id for t in from_json]
    assert [canonical(t) for t in from_yml] == [canonical(t) for t in from_json]
    assert all(t.line for t in from_yml) and all(t.line for t in from_json)


def test_a_test_maps_onto_the_model() -> None:
    tests = {t.description: t for t in load_file(UNIFIED / "change-streams.yml")}
    test = tests["Test with document comment"]
    assert test.test_id == "unified/change-streams::Test with document comment"
    # file-level and test-level runOnRequirements are two groups, each any-of
    assert test.requirements[0] == [
        Requirement(min_server_version="3.6", topologies=("replicaset",), serverless="forbid")
    ]
    assert test.requirements[1][0].min_server_version == "4.4"
    kinds = [(e.kind, e.id) for e in test.entities]
    assert ("client", "client0") in kinds and ("collection", "collection0") in kinds
    client = next(e for e in test.entities if e.id == "client0")
    assert "id" not in client.options and client.options["observeEvents"] == ["commandStartedEvent"]
    assert [d.collection for d in test.initial_data] == ["collection0"]
    first = test.operations[0]
    assert (first.name, first.object, first.label) == ("createChangeStream", "collection0", "operations[0]")
    assert first.save_result_as_entity == "changeStream0" and first.expect_result is NOT_GIVEN
    assert test.expect_events[0].client == "client0" and test.expect_events[0].label == "expectEvents[0]"


def test_skip_reason_outcome_and_create_entities_are_loaded() -> None:
    crud = {t.description: t for t in load_file(SELFTESTS / "valid-pass" / "poc-crud.yml")}
    outcome = crud["BulkWrite with mixed ordered operations"].expected_data[0]
    assert (outcome.collection, outcome.documents[0]) == ("coll0", {"_id": 2, "x": 24})
    created = load_file(SELFTESTS / "valid-pass" / "createEntities-operation.yml")[0].operations[0]
    assert created.name == "createEntities"
    assert all(isinstance(e, EntitySpec) for e in created.arguments["entities"])


def test_every_invalid_selftest_is_rejected_as_one_error_naming_file_and_path() -> None:
    files = sorted((SELFTESTS / "invalid").glob("*.yml"))
    assert len(files) == 266
    for path in files:
        tests = load_file(path)
        assert len(tests) == 1, path.name
        assert tests[0].load_error and str(path) in tests[0].load_error, path.name
        assert "$" in tests[0].load_error, path.name  # a JSON path into the file


@pytest.mark.parametrize(
    ("name", "path", "words"),
    [
        (
            "entity-client-ignoreCommandMonitoringEvents-items",
            "$.createEntities[0].client.ignoreCommandMonitoringEvents[0]",
            "not of type 'string'",
        ),
        ("collectionData-createOptions-type", "$.initialData[0].createOptions", "not of type 'object'"),
        (
            "expectedError-errorResponse-type",
            "$.tests[0].operations[0].expectError.errorResponse",
            "not of type 'object'",
        ),
        ("schemaVersion-required", "$.schemaVersion", "the key is required"),
    ],
)
def test_schema_rejections_name_the_offending_path(name: str, path: str, words: str) -> None:
    (test,) = load_file(SELFTESTS / "invalid" / f"{name}.yml")
    assert f"{path}: " in test.load_error and words in test.load_error


@pytest.mark.parametrize("version", ["1.99", "2.0", "0.1"])
def test_a_schema_version_this_runner_does_not_implement_is_an_error(tmp_path: Path, version: str) -> None:
    spec = tmp_path / "too-new.yml"
    spec.write_text(
        f'description: too-new\nschemaVersion: "{version}"\ntests:\n  - description: t\n    operations: []\n'
    )
    (test,) = load_file(spec)
    assert test.test_id == "unified/too-new::<file>"
    assert str(spec) in test.load_error and "$.schemaVersion" in test.load_error and version in test.load_error


def test_the_newest_implemented_version_is_accepted(tmp_path: Path) -> None:
    major, minor = RUNNER_SCHEMA_VERSION
    spec = tmp_path / "newest.json"
    spec.write_text(
        f'{{"description": "n", "schemaVersion": "{major}.{minor}", '
        '"tests": [{"description": "t", "operations": []}]}'
    )
    (test,) = load_file(spec)
    assert test.load_error is None and test.description == "t"


def test_assertions_this_runner_cannot_make_are_an_error_not_a_silent_pass(tmp_path: Path) -> None:
    spec = tmp_path / "tracing.yml"
    spec.write_text(
        'description: tracing\nschemaVersion: "1.28"\ncreateEntities:\n  - client: {id: c0}\n'
        "tests:\n  - description: t\n    operations: []\n"
        "    expectTracingMessages: [{client: c0, spans: [{name: find, attributes: {}}]}]\n"
    )
    (test,) = load_file(spec)
    assert "$.tests[0]" in test.load_error and "expectTracingMessages" in test.load_error
