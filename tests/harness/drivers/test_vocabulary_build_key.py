"""The Rust executor compiles the shared vocabulary in, so its build cache key covers the file (a change rebuilds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.core.vocabulary import VOCABULARY_FILE
from harness.drivers.rust import build


def test_the_rust_build_copies_the_vocabulary_and_is_keyed_by_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert build.project_files()["vocabulary.json"] == VOCABULARY_FILE
    copy = tmp_path / "vocabulary.json"
    copy.write_text(VOCABULARY_FILE.read_text())
    monkeypatch.setattr(build, "VOCABULARY_FILE", copy)
    before = build.build_digest("", "cargo 1.0")
    assert build.build_digest("", "cargo 1.0") == before, "the same files give the same key"
    copy.write_text(copy.read_text().replace('"getResumeToken"', '"getResumeToken", "newOperation"'))
    assert build.build_digest("", "cargo 1.0") != before, "a changed vocabulary is another build"
