"""The spec cache holds data, not code: a planted entry never runs, a bad one is a miss and is rewritten.

A hostile test planted a pickle in ``~/.cache/cs-harness/specs`` that ran a shell command on the next run, and an
entry of the wrong type crashed it. Entries are now JSON (docs/spec-loading.md): a planted pickle, valid JSON of
another shape, a truncated or binary file, a link, a FIFO, are each ignored and replaced by a good entry. What a
warm load gives is what a cold one gives, type for type and key for key (Int64 against int, datetime, ObjectId,
Decimal128, Binary, regex...), on every upstream file and on a file of every Extended JSON type.
"""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path
from typing import Any

import pytest

from harness.formats import cache, spec_reader
from harness.formats.loaders import load_file
from harness.formats.spec_reader import read_spec_file
from tests.harness.formats.test_strict_inputs import finishes
from tests.helpers import LEGACY_HEADER, PASSING
from tests.paths import SHARED_SPECS

UPSTREAM = SHARED_SPECS / "upstream"
UPSTREAM_FILES = sorted(p for p in UPSTREAM.rglob("*") if p.suffix in (".yml", ".json") and "schema-" not in p.name)


@pytest.fixture
def cache_in(tmp_path, monkeypatch) -> Path:
    """An isolated cache (``HARNESS_CACHE_DIR``), on; its folder of decoded documents."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("HARNESS_NO_CACHE", raising=False)
    return tmp_path / "cache" / "specs" / "documents"


def _spec(tmp_path: Path) -> Path:
    spec = tmp_path / "spec.yml"
    spec.write_text(LEGACY_HEADER + PASSING)
    return spec


def _only_entry(folder: Path) -> Path:
    [entry] = [p for p in folder.iterdir() if not p.name.startswith(".")]
    return entry


def _is_data(entry: Path) -> bool:
    envelope = json.loads(entry.read_bytes())
    return envelope["format"] == cache.CACHE_FORMAT and envelope["kind"] == entry.parent.name


class _Planted:
    """A pickle that runs a shell command when loaded."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> Any:
        return (os.system, (f"touch {self.marker}",))


def test_a_planted_pickle_never_runs_and_its_entry_is_rewritten_as_data(tmp_path, cache_in):
    spec, pwned = _spec(tmp_path), tmp_path / "pwned"
    fresh = repr(load_file(spec))
    entry = _only_entry(cache_in)
    entry.write_bytes(pickle.dumps(_Planted(pwned)))
    assert repr(load_file(spec)) == fresh
    assert not pwned.exists()
    assert _is_data(entry)


_GOOD_SHAPE_WRONG_VALUE = {"document": {"tests": []}, "lines": [1]}  # a line for a test the document has not


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(lambda good: pickle.dumps(42), id="a pickle of another type"),
        pytest.param(lambda good: b"[1, 2, 3]", id="JSON of another shape"),
        pytest.param(lambda good: json.dumps({**json.loads(good), "format": "x"}).encode(), id="another format"),
        pytest.param(lambda good: json.dumps({**json.loads(good), "kind": "schema-verdicts"}).encode(), id="kind"),
        pytest.param(lambda good: json.dumps({**json.loads(good), "value": None}).encode(), id="no value"),
        pytest.param(
            lambda good: json.dumps({**json.loads(good), "value": _GOOD_SHAPE_WRONG_VALUE}).encode(), id="lines"
        ),
        pytest.param(
            lambda good: json.dumps({**json.loads(good), "value": {"document": {"$oid": "zz"}, "lines": []}}).encode(),
            id="Extended JSON that does not decode",
        ),
        pytest.param(lambda good: good[: len(good) // 2], id="truncated"),
        pytest.param(lambda good: bytes(range(256)) * 4, id="binary garbage"),
        pytest.param(lambda good: b"", id="empty"),
        pytest.param(lambda good: b"[" * 100_000, id="deep"),
    ],
)
def test_a_bad_entry_is_ignored_and_rewritten(tmp_path, cache_in, bad):
    spec = _spec(tmp_path)
    fresh = repr(load_file(spec))
    entry = _only_entry(cache_in)
    entry.write_bytes(bad(entry.read_bytes()))
    assert repr(load_file(spec)) == fresh
    assert _is_data(entry)


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero", "link to a good entry", "directory"])
def test_an_entry_that_is_not_a_regular_file_is_never_read_and_is_replaced(tmp_path, cache_in, kind):
    spec = _spec(tmp_path)
    fresh = repr(load_file(spec))
    entry = _only_entry(cache_in)
    good = tmp_path / "good-entry"
    entry.rename(good)
    if kind == "fifo":
        os.mkfifo(entry)
    elif kind == "directory":
        entry.mkdir()
    else:
        entry.symlink_to("/dev/zero" if "zero" in kind else good)
    assert repr(finishes(lambda: load_file(spec))) == fresh  # before: the FIFO waited for ever, /dev/zero read on
    assert entry.is_file() and not entry.is_symlink() and _is_data(entry)


def test_schema_verdicts_are_data_too(tmp_path, cache_in):
    unified = UPSTREAM / "unified" / "change-streams.yml"
    if not unified.exists():
        pytest.skip(f"upstream spec files not found at {UPSTREAM}")
    fresh = repr(load_file(unified))
    verdicts = cache_in.parent / "schema-verdicts"
    entry = _only_entry(verdicts)
    assert _is_data(entry) and json.loads(entry.read_bytes())["value"] is None
    entry.write_bytes(json.dumps({**json.loads(entry.read_bytes()), "value": {"not": "a verdict"}}).encode())
    assert repr(load_file(unified)) == fresh
    assert json.loads(entry.read_bytes())["value"] is None


# -- a warm load is a cold load, type for type ---------------------------------------------------------
def typed(value: Any) -> Any:
    """``value`` with every type and every mapping's key order made part of what ``==`` compares."""
    if isinstance(value, dict):
        return ("dict", type(value).__name__, [(typed(k), typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [typed(v) for v in value])
    if isinstance(value, float) and value != value:
        return ("float", "nan")
    return (type(value).__module__, type(value).__name__, repr(value), value)


def _cold_then_warm(path: Path, monkeypatch) -> tuple[Any, Any]:
    cold = read_spec_file(path)
    with monkeypatch.context() as warm_only:  # a warm load that parsed the file again would prove nothing
        for reader in ("_read_yaml", "_read_json"):
            warm_only.setattr(spec_reader, reader, _not_parsed)
        warm = read_spec_file(path)
    return (typed(cold.data), cold.test_lines), (typed(warm.data), warm.test_lines)


def _not_parsed(*args: Any) -> Any:
    raise AssertionError("parsed again: the cache was not used")


EVERY_TYPE = """
tests:
  - description: every type
    values:
      int: 1
      past_int32: 3000000000
      past_int64: 1180591620717411303424
      long: {$numberLong: "5"}
      long_big: {$numberLong: "3000000000"}
      int32: {$numberInt: "7"}
      double: 1.0
      negative_zero: -0.0
      infinity: {$numberDouble: "Infinity"}
      nan: {$numberDouble: "NaN"}
      decimal: {$numberDecimal: "1.10"}
      date: {$date: "2020-01-02T03:04:05.678Z"}
      date_ms: {$date: {$numberLong: "1577934245678"}}
      oid: {$oid: "57e193d7a9cc81b4027498b5"}
      bytes: {$binary: {base64: "AAEC", subType: "00"}}
      uuid: {$binary: {base64: "c//SZESzTGmQ6OfR38A11A==", subType: "04"}}
      old_uuid: {$binary: {base64: "c//SZESzTGmQ6OfR38A11A==", subType: "03"}}
      regex: {$regularExpression: {pattern: "^a.*b$", options: "imx"}}
      query_regex: {$regex: "x", $options: "i"}
      timestamp: {$timestamp: {t: 1, i: 2}}
      code: {$code: "function () {}"}
      scoped: {$code: "f", $scope: {a: 1}}
      min: {$minKey: 1}
      max: {$maxKey: 1}
      symbol: {$symbol: "s"}
      dbref: {$ref: "c", $id: 1}
      text: "2020-01-02"
      yaml_date_stays_text: 2020-01-02
      unicode: "\u00e9\U0001f600"
      "": empty key
      1: an integer key
      order: {z: 1, a: 2, m: {y: 1, b: 2}}
      none: null
      bools: [true, false]
"""


@pytest.mark.parametrize("suffix", [".yml", ".json"])
def test_every_extended_json_type_comes_back_from_the_cache_as_it_was_read(tmp_path, cache_in, monkeypatch, suffix):
    path = tmp_path / f"every{suffix}"
    if suffix == ".yml":
        path.write_text(EVERY_TYPE)
    else:
        import yaml

        path.write_text(json.dumps(yaml.safe_load(EVERY_TYPE.replace("2020-01-02\n", "'2020-01-02'\n")), indent=1))
    cold, warm = _cold_then_warm(path, monkeypatch)
    assert warm == cold and _is_data(_only_entry(cache_in))
    values = read_spec_file(path).data["tests"][0]["values"]
    assert type(values["past_int32"]) is int and type(values["long_big"]).__name__ == "Int64"


def test_every_upstream_file_loads_the_same_models_cold_and_warm(cache_in, monkeypatch):
    if not UPSTREAM_FILES:
        pytest.skip(f"upstream spec files not found at {UPSTREAM}")
    cold = {path: load_file(path) for path in UPSTREAM_FILES}
    with monkeypatch.context() as warm_only:
        for reader in ("_read_yaml", "_read_json"):
            warm_only.setattr(spec_reader, reader, _not_parsed)
        warm = {path: load_file(path) for path in UPSTREAM_FILES}
    assert len(cold) > 600
    assert all(_is_data(entry) for entry in cache_in.iterdir())  # warm loads come from data, not pickles
    for path in UPSTREAM_FILES:
        assert warm[path] == cold[path] and repr(warm[path]) == repr(cold[path]), path
    documents = [read_spec_file(path) for path in UPSTREAM_FILES]  # warm: typed the same as a fresh read
    monkeypatch.setenv("HARNESS_NO_CACHE", "1")
    for path, document in zip(UPSTREAM_FILES, documents, strict=True):
        fresh = read_spec_file(path)
        assert (typed(document.data), document.test_lines) == (typed(fresh.data), fresh.test_lines), path
