"""Inputs are read strictly: a key twice, a number that is not finite, a special file in a spec folder.

A hostile test found each silently changing a run: a second ``result:`` replaced a failing one and the test
passed; ``1e400`` loaded as infinity; a FIFO and a link to ``/dev/zero`` in a ``--specs`` folder were skipped
without a word. Each is now an error naming the file, the line and the key (for a spec file, that file's one
``error`` test, and the run goes on), or a note naming the entries never opened. What the formats permit still
loads (a merge key overridden, a re-used anchor, a non-finite double spelled in Extended JSON).
"""

from __future__ import annotations

import json
import math
import os
import threading
from pathlib import Path

import pytest
import yaml

from harness.core.expectations import ExpectationsError
from harness.formats.data_yaml import load_data_yaml
from harness.formats.expectations_file import load_expectations
from harness.formats.loaders import load_file, load_paths
from harness.formats.pins import PinFileError, read_manifest
from harness.formats.rule_files import RuleFileError, load_catalogue
from harness.formats.spec_reader import SpecFileError, read_spec_file
from harness.matrix.definition import DefinitionError, read_matrix_file
from tests.harness.app.test_cli import harness
from tests.helpers import FAILING, LEGACY_HEADER, PASSING

DUPLICATE = "duplicate key 'outcome' (first at line {first}): a second key would silently replace the first"


@pytest.fixture(autouse=True)
def no_cache(monkeypatch):
    monkeypatch.setenv("HARNESS_NO_CACHE", "1")


def _error_of(path: Path) -> str:
    [test] = load_file(path)
    assert test.load_error, test
    return test.load_error


# -- a key twice ---------------------------------------------------------------------------------------
def test_a_key_twice_in_a_yaml_spec_file_is_that_file_s_error_naming_line_and_key(tmp_path):
    spec = tmp_path / "twice.yml"
    spec.write_text(
        "description: d\nschemaVersion: '1.0'\ntests:\n  - description: t\n    outcome: []\n    outcome: []\n"
    )
    assert _error_of(spec) == f"{spec}: line 6: {DUPLICATE.format(first=5)}"


def test_a_key_twice_in_a_json_spec_file_is_that_file_s_error_naming_line_and_key(tmp_path):
    spec = tmp_path / "twice.json"
    spec.write_text('{"tests": [\n  {"description": "t",\n   "outcome": [],\n   "outcome": []}\n]}\n')
    assert _error_of(spec) == f"{spec}: line 4: {DUPLICATE.format(first=3)}"


@pytest.mark.parametrize(
    "text, key, line",
    [
        ("a: 1\nb: {c: 1, c: 2}\n", "c", 2),
        ("a: 1\n1: x\n'1': y\n", "1", 3),  # one key once the document is JSON
        ("a: 1\n1: x\n1.0: y\n", 1.0, 3),  # one key in Python
        ("a: &x {k: 1}\nb:\n  <<: *x\n  <<: *x\n", "<<", 4),
    ],
)
def test_keys_that_would_become_one_are_refused(tmp_path, text, key, line):
    spec = tmp_path / "keys.yml"
    spec.write_text(text)
    with pytest.raises(SpecFileError) as refused:
        read_spec_file(spec)
    assert str(refused.value).startswith(f"{spec}: line {line}: duplicate key {key!r}")


def test_what_yaml_permits_still_loads_a_merged_key_overridden_and_a_re_used_anchor(tmp_path):
    spec = tmp_path / "fine.yml"
    text = "base: &b {k: 0, m: 0}\nmid: &m {<<: *b, k: 1}\nout: {x: {<<: *m, m: 2}}\nre: &b 3\nuse: *b\n"
    spec.write_text(text)
    data = read_spec_file(spec).data
    assert data["mid"] == {"k": 1, "m": 0} and data["use"] == 3
    # A merge of a mapping that itself merges: what PyYAML makes of it changed between releases (6.0.4 takes the
    # inner source's key, 6.0.3 the overriding one). Strictness must not change it: the same as PyYAML's own loader.
    merges_only = text.split("re:")[0]  # PyYAML's own loader refuses the re-used anchor the spec reader permits
    assert data["out"] == yaml.load(merges_only, Loader=yaml.SafeLoader)["out"]


def test_a_result_given_twice_no_longer_turns_a_failing_test_into_a_pass(tmp_path):
    """The hostile test's case: a second ``result:`` (a passing one) replaced the failing one."""
    spec = tmp_path / "twice.yml"
    spec.write_text(LEGACY_HEADER + _second_result(FAILING))
    assert "duplicate key 'result'" in _error_of(spec)


def _second_result(test: str) -> str:
    """``test`` with a passing ``result:`` after its own."""
    own = next(line for line in test.splitlines() if line.startswith("    result:"))
    return test.replace(own, own + "\n    result: {success: [{operationType: insert}]}")


def test_an_expectations_file_with_a_key_twice_is_refused_naming_file_line_and_key(tmp_path):
    path = tmp_path / "expected.yml"
    path.write_text("target: t\nknown:\n  - id: a\n    rule: CS-X\n    outcome: failed\n    outcome: passed\n")
    with pytest.raises(ExpectationsError) as refused:
        load_expectations(path)
    assert str(refused.value) == f"{path}: cannot read expected outcomes: line 6: {DUPLICATE.format(first=5)}"


def test_a_matrix_file_with_a_key_twice_is_refused_naming_file_line_and_key(tmp_path):
    path = tmp_path / "matrix.yml"
    path.write_text("repeat: 1\ndriver: [pymongo]\nrepeat: 3\n")
    with pytest.raises(DefinitionError) as refused:
        read_matrix_file(path)
    assert str(refused.value).startswith(f"{path}: line 3: duplicate key 'repeat' (first at line 1)")


def test_a_rule_catalogue_and_a_pin_manifest_with_a_key_twice_are_refused(tmp_path):
    catalogue = tmp_path / "x-rules.yml"
    catalogue.write_text("text: a.md\nrules:\n  - id: CS-A-B\n    level: MUST\n    level: SHOULD\n")
    with pytest.raises(RuleFileError) as refused:
        load_catalogue(catalogue, "x")
    assert str(refused.value).startswith(f"{catalogue}: line 5: duplicate key 'level' (first at line 4)")
    manifest = tmp_path / "pins.yml"
    manifest.write_text(
        "source: s\nfolder: f\nfiles:\n  a.yml: {sha256: x, tests: 1}\n  a.yml: {sha256: y, tests: 2}\n"
    )
    with pytest.raises(PinFileError) as refused_pin:
        read_manifest(manifest)
    assert "line 5: duplicate key 'a.yml' (first at line 4)" in str(refused_pin.value)


# -- numbers that are not finite -----------------------------------------------------------------------
@pytest.mark.parametrize("number", ["1e400", "-1e400", "NaN", "Infinity", "-Infinity"])
def test_a_json_number_with_no_finite_value_is_an_error_at_its_line(tmp_path, number):
    spec = tmp_path / "number.json"
    spec.write_text('{"tests": [\n  {"x": ' + number + "}\n]}\n")
    assert _error_of(spec) == (
        f"{spec}: line 2: {number} is not a finite number: "
        'numbers must be finite (a spec file spells a non-finite double {"$numberDouble": "Infinity"})'
    )


@pytest.mark.parametrize("number", [".inf", "-.inf", ".NaN", "1.0e+400"])
def test_a_yaml_number_with_no_finite_value_is_an_error_at_its_line(tmp_path, number):
    from harness.formats.strict_reader import InputError

    spec = tmp_path / "number.yml"
    spec.write_text(f"tests:\n  - x: {number}\n")
    assert _error_of(spec).startswith(f"{spec}: line 2: {number} is not a finite number")
    with pytest.raises(InputError):
        load_data_yaml(f"timeout: {number}\n")  # the project's data files too


def test_a_non_finite_double_spelled_in_extended_json_is_what_it_says(tmp_path):
    """The one way a spec file holds one, the same in both encodings; and YAML 1.1 reads ``1e400`` as text."""
    (tmp_path / "x.yml").write_text('a: {$numberDouble: "Infinity"}\nb: 1e400\n')
    (tmp_path / "x.json").write_text('{"a": {"$numberDouble": "Infinity"}, "b": "1e400"}')
    yml, jsn = (read_spec_file(tmp_path / name).data for name in ("x.yml", "x.json"))
    assert yml == jsn and math.isinf(yml["a"]) and yml["b"] == "1e400"


def test_the_json_reader_finds_the_line_of_a_problem_deep_inside(tmp_path):
    from harness.formats.strict_reader import InputError, load_json

    text = json.dumps({"a": [1, {"b": {"c": 1}}]}, indent=1).replace('"c": 1', '"c": 1,\n"x": 2, "c": 3')
    with pytest.raises(InputError) as refused:
        load_json(text)
    assert refused.value.line == text.splitlines().index('"x": 2, "c": 3') + 1
    assert load_json('{"c": "\\"c\\": 1", "d": {"c": 1}}') == {"c": '"c": 1', "d": {"c": 1}}


# -- special files in a spec folder --------------------------------------------------------------------
def _folder_with_special_files(tmp_path: Path) -> Path:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "good.yml").write_text(LEGACY_HEADER + PASSING)
    (specs / "linked.yml").symlink_to(specs / "good.yml")  # a link to a regular file: read as before
    os.mkfifo(specs / "stall.yml")
    (specs / "zero.json").symlink_to("/dev/zero")
    return specs


def finishes(action, seconds: float = 10.0):
    """``action()``'s value (or its exception, raised here), failing if it has not ended in ``seconds``: a FIFO
    opened waits for a writer for ever."""
    ended: list = []

    def run() -> None:
        try:
            ended.append((action(), None))
        except Exception as exc:  # raised again in the test's own thread
            ended.append((None, exc))

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert ended, f"still running after {seconds} s"
    value, error = ended[0]
    if error is not None:
        raise error
    return value


def test_special_files_are_never_opened_and_are_named(tmp_path):
    from harness.formats.special_files import irregular, unread_entries

    specs = _folder_with_special_files(tmp_path)
    tests = finishes(lambda: load_paths([specs]))
    assert sorted((Path(t.file).name, t.description) for t in tests) == [
        ("good.yml", "passes"),
        ("linked.yml", "passes"),
    ]
    assert unread_entries([specs]) == [
        (specs / "stall.yml", "a FIFO"),
        (specs / "zero.json", "a symbolic link to a character device"),
    ]
    for name, kind in (("stall.yml", "a FIFO"), ("zero.json", "a symbolic link to a character device")):
        with pytest.raises(SpecFileError) as refused:
            finishes(lambda name=name: read_spec_file(specs / name))
        assert str(refused.value) == f"{specs / name}: cannot read file: {kind}, not a regular file: not opened"
    [root_error] = finishes(lambda: load_paths([specs / "stall.yml"]))
    assert root_error.load_error == f"{specs / 'stall.yml'}: a FIFO, not a spec file or directory: not read"
    assert irregular(specs / "linked.yml") is None


def test_a_run_over_a_folder_with_special_files_finishes_and_its_note_names_them(tmp_path):
    specs = _folder_with_special_files(tmp_path)
    results = tmp_path / "out.jsonl"
    done = harness(
        "run", "--specs", str(specs), "--results", str(results), "--expected", "none", cwd=tmp_path, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    [note] = [line for line in done.stderr.splitlines() if "not regular files" in line]
    assert note.startswith("harness: note: 2 entries of the spec folders not read")
    assert f"{specs / 'stall.yml'} (a FIFO)" in note
    assert f"{specs / 'zero.json'} (a symbolic link to a character device)" in note
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert sorted(Path(r["file"]).name for r in records) == ["good.yml", "linked.yml"]
    [origin] = records[0]["spec_sources"]
    assert origin["not_read"] == {
        str(specs / "stall.yml"): "a FIFO",
        str(specs / "zero.json"): "a symbolic link to a character device",
    }
    strict = harness("run", "--specs", str(specs), "--expected", "none", "--strict", cwd=tmp_path, timeout=120)
    assert strict.returncode == 1, strict.stdout + strict.stderr  # a strict run fails on the entries not read
    assert "spec-entry-not-read" in strict.stdout + strict.stderr or "not regular files" in strict.stdout


def test_a_run_over_a_bad_and_a_good_file_reports_the_bad_one_and_runs_the_good_one(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "good.yml").write_text(LEGACY_HEADER + PASSING)
    (specs / "bad.yml").write_text(LEGACY_HEADER + _second_result(FAILING))
    first, second = (n for n, line in enumerate((specs / "bad.yml").read_text().splitlines(), 1) if "result:" in line)
    results = tmp_path / "out.jsonl"
    done = harness(
        "run", "--specs", str(specs), "--results", str(results), "--expected", "none", cwd=tmp_path, timeout=120
    )
    assert done.returncode == 1, done.stdout + done.stderr
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert {Path(r["file"]).name: (r["outcome"], r["message"]) for r in records} == {
        "good.yml": ("passed", ""),
        "bad.yml": (
            "error",
            (
                f"{specs / 'bad.yml'}: line {second}: duplicate key 'result' (first at line {first}): "
                "a second key would silently replace the first"
            ),
        ),
    }
    assert f"line {second}: duplicate key 'result'" in done.stdout
