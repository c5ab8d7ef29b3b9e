"""Expected-outcome files: classification of results, and clear errors for bad files."""

from __future__ import annotations

import pytest

from harness.expectations import Expectations, ExpectationsError
from harness.session import EXPECTATIONS_DIR


def _load(tmp_path, text):
    path = tmp_path / "e.yml"
    path.write_text(text)
    return Expectations.load(path)


def test_classification(tmp_path):
    e = _load(tmp_path, 'known:\n  - {test: "legacy/a::t*", reason: "why"}\n  - {test: "x::e", outcome: error, reason: "r"}\n')
    assert e.classify("legacy/a::t1", "failed").kind == "known-failure"
    assert e.classify("legacy/a::t1", "passed").kind == "unexpected-pass"
    assert not e.classify("legacy/a::t1", "error").expected
    assert e.classify("x::e", "error").expected
    assert e.classify("other", "failed").kind == "unexpected-failure"
    assert e.classify("other", "passed").expected and e.classify("other", "skipped").expected


@pytest.mark.parametrize("text, message", [
    ("known: 3", "'known' must be a list"),
    ("known:\n  - {reason: r}", "needs a 'test'"),
    ("known:\n  - {test: t}", "'reason' is required"),
    ("known:\n  - {test: t, reason: r, outcome: weird}", "outcome must be one of"),
])
def test_bad_files_are_named(tmp_path, text, message):
    with pytest.raises(ExpectationsError, match=message):
        _load(tmp_path, text)


def test_project_expectation_files_are_valid_and_reasoned():
    for path in EXPECTATIONS_DIR.glob("*.yml"):
        for entry in Expectations.load(path).known:
            assert len(entry.reason) > 10 and "\n" not in entry.reason
