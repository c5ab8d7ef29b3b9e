"""Loading spec files is cached by content: same models from the cache, never a stale one."""

from __future__ import annotations

import pytest

from harness.formats import cache
from harness.formats.loaders import load_file, load_paths
from tests.conftest import UNIFIED_DIR, require_shared_specs
from tests.harness.app.test_cli import FAILING, PASSING
from tests.helpers import LEGACY_HEADER


@pytest.fixture
def cache_in(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("HARNESS_NO_CACHE", raising=False)
    return tmp_path / "cache"


def test_the_cache_gives_the_models_a_fresh_load_gives(cache_in, monkeypatch):
    require_shared_specs()
    first = load_paths([UNIFIED_DIR])
    assert any((cache_in / "specs" / "documents").iterdir())
    assert any((cache_in / "specs" / "schema-verdicts").iterdir())
    again = load_paths([UNIFIED_DIR])
    monkeypatch.setenv("HARNESS_NO_CACHE", "1")
    fresh = load_paths([UNIFIED_DIR])
    assert repr(first) == repr(again) == repr(fresh)


def test_an_edited_file_is_read_again(cache_in, tmp_path):
    spec = tmp_path / "edit.yml"
    spec.write_text(LEGACY_HEADER + PASSING)
    assert [t.description for t in load_file(spec)] == ["passes"]
    spec.write_text(LEGACY_HEADER + PASSING + FAILING)
    assert [t.description for t in load_file(spec)] == ["passes", "fails"]


def test_a_torn_entry_is_a_miss_and_the_cache_can_be_turned_off(cache_in, tmp_path, monkeypatch):
    spec = tmp_path / "torn.yml"
    spec.write_text(LEGACY_HEADER + PASSING)
    load_file(spec)
    for entry in (cache_in / "specs" / "documents").iterdir():
        entry.write_bytes(b"not a pickle")
    assert [t.description for t in load_file(spec)] == ["passes"]
    monkeypatch.setenv("HARNESS_NO_CACHE", "1")
    assert cache.get("documents", cache.key(b"x"), lambda value: value) is cache.MISSING
