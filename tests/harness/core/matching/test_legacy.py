"""MATCH, the legacy comparator: examples from the README's rule, then properties."""

from __future__ import annotations

from bson import Int64, ObjectId
from hypothesis import given
from hypothesis import strategies as st

from harness.core.matching import MISSING
from harness.core.matching.legacy import LegacyComparator, match
from harness.core.observations import ErrorInfo, ObservedEvent


def test_subset_of_object_matches():
    assert match({"a": 1}, {"a": 1, "b": 2}) == []


def test_placeholder_42_means_any_existing_value():
    assert match({"_id": 42}, {"_id": {"_data": "82AB"}}) == []
    assert match({"_id": "42"}, {"_id": ObjectId()}) == []
    [mismatch] = match({"_id": 42}, {})
    assert mismatch.path == "_id" and mismatch.actual is MISSING
    [mismatch] = match({"x": 42}, {"x": None})
    assert mismatch.path == "x"


def test_types_must_agree():
    [mismatch] = match({"x": 1}, {"x": "1"})
    assert "type differs" in mismatch.reason and mismatch.path == "x"
    assert match({"x": True}, {"x": 1}) != []  # booleans are not numbers
    assert match({"x": 1}, {"x": Int64(1)}) == []  # both JSON numbers
    assert match({"x": 1}, {"x": 1.0}) == []


def test_arrays_compare_by_index_and_allow_extra_tail():
    assert match([1, 2], [1, 2, 3]) == []
    [mismatch] = match([1, 2], [2, 1])[:1]
    assert mismatch.path == "[0]"
    [mismatch] = match({"a": [1, 2, 3]}, {"a": [1, 2]})
    assert mismatch.path == "a[2]" and mismatch.actual is MISSING


def test_failure_points_at_the_nested_path():
    expected = {"fullDocument": {"x": {"y": 1}}}
    actual = {"fullDocument": {"x": {"y": 2}}}
    [mismatch] = match(expected, actual, "success[1]")
    assert mismatch.path == "success[1].fullDocument.x.y"
    assert "expected 1, got 2" in str(mismatch)


def test_error_matching_uses_code_and_labels():
    comparator = LegacyComparator()
    error = ErrorInfo("boom", "OperationFailure", code=280, labels=("ResumableChangeStreamError",))
    assert comparator.match_error({"code": 280}, error, "result.error") == []
    assert comparator.match_error({"code": 280, "errorLabels": ["ResumableChangeStreamError"]}, error, "e") == []
    [mismatch] = comparator.match_error({"code": 40324}, error, "result.error")
    assert mismatch.path == "result.error.code"


def test_event_matching_names_the_event_kind_and_field():
    comparator = LegacyComparator()
    event = ObservedEvent("commandStartedEvent", "aggregate", "db", command={"aggregate": "c", "pipeline": []})
    expected = {"commandStartedEvent": {"commandName": "aggregate", "command": {"aggregate": "c"}}}
    assert comparator.match_event(expected, event, "expectations[0]") == []
    wrong = {"commandStartedEvent": {"commandName": "getMore"}}
    [mismatch] = comparator.match_event(wrong, event, "expectations[0]")
    assert mismatch.path == "expectations[0].commandStartedEvent.commandName"
    assert comparator.match_event({"commandSucceededEvent": {}}, event, "e") != []


# -- properties ---------------------------------------------------------------
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1000, 1000).filter(lambda i: i != 42),
    st.text(max_size=5).filter(lambda s: s != "42"),
)
documents = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text("abcxyz", min_size=1, max_size=3), children, max_size=4)
    ),
    max_leaves=12,
)


@given(documents)
def test_every_value_matches_itself(value):
    assert match(value, value) == []


@given(st.dictionaries(st.text("abc", min_size=1, max_size=2), documents, min_size=1, max_size=5), st.data())
def test_any_subset_of_a_document_matches(document, data):
    keys = data.draw(st.lists(st.sampled_from(sorted(document)), unique=True))
    subset = {k: document[k] for k in keys}
    assert match(subset, document) == []


@given(
    st.dictionaries(st.text("abc", min_size=1, max_size=2), st.integers(0, 100).filter(lambda i: i != 42), min_size=1),
    st.data(),
)
def test_changing_one_value_is_reported_at_its_key(document, data):
    key = data.draw(st.sampled_from(sorted(document)))
    actual = {**document, key: document[key] + 1}
    mismatches = match(document, actual)
    assert [m.path for m in mismatches] == [key]


@given(documents)
def test_placeholder_matches_anything_but_absence(value):
    if value is None:
        assert match(42, value) != []
    else:
        assert match(42, value) == [] and match("42", value) == []
