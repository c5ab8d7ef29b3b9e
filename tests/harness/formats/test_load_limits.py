"""Hostile spec files (from a pull request, say): each is one ``error`` naming the file and the limit it broke.

Each file is built here: nine levels of nine-fold aliases (387 million nodes
expanded), ten thousand levels of nesting in YAML (flow and block) and JSON,
a sparse gigabyte, an alias that multiplies a long string, a chain of aliases
that nests deeper than the limit, and a file that takes too long (with a
clock that advances on every look, so the outcome does not depend on the
machine). Beside each one a valid file still loads and gets its verdict, and
a refused file is never cached. Before the limits, these files crashed the
run (RecursionError), filled memory or never finished; a subprocess timeout
guards against that hang, and no test asserts on wall-clock time.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.formats import load_limits
from harness.formats.loaders import load_paths
from tests.harness.app.test_cli import PASSING, harness
from tests.helpers import LEGACY_HEADER


def _billion_laughs(path: Path) -> None:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    path.write_text("\n".join(lines) + "\ntests: [*a9]\n")


def _deep_flow_yaml(path: Path) -> None:
    path.write_text("tests: " + "[" * 10_000 + "]" * 10_000 + "\n")


def _deep_block_yaml(path: Path) -> None:
    path.write_text("tests:\n" + "- " * 10_000 + "x\n")


def _deep_json(path: Path) -> None:
    path.write_text('{"tests": ' + "[" * 10_000 + "]" * 10_000 + "}\n")


def _sparse_gigabyte(path: Path) -> None:
    path.write_bytes(b"")
    os.truncate(path, 1 << 30)  # sparse: nothing is written, and nothing may be read


def _text_bomb(path: Path) -> None:
    """A short file whose aliases repeat a 200,000-character string 27 times."""
    path.write_text(f"a: &a {'x' * 200_000}\nb: &b [*a, *a, *a]\nc: &c [*b, *b, *b]\ntests: [*c, *c, *c]\n")


def _alias_chain(path: Path) -> None:
    """Each anchor holds the one before it: 300 levels deep once expanded, two levels as written."""
    path.write_text("x0: &x0 []\n" + "".join(f"x{i}: &x{i} [*x{i - 1}]\n" for i in range(1, 300)) + "tests: [*x299]\n")


def _many_json_nodes(path: Path) -> None:
    path.write_text(json.dumps({"tests": [0] * (load_limits.MAX_NODES + 1)}))


NODES = f"more than {load_limits.MAX_NODES} nodes after alias expansion (limit {load_limits.MAX_NODES})"
JSON_NODES = f"more than {load_limits.MAX_NODES} nodes (limit {load_limits.MAX_NODES})"  # JSON has no aliases
DEPTH = f"more than {load_limits.MAX_DEPTH} levels of nesting (limit {load_limits.MAX_DEPTH})"
BYTES = f"{1 << 30} bytes, more than {load_limits.MAX_FILE_BYTES} bytes (limit {load_limits.MAX_FILE_BYTES})"
TEXT = (
    f"more than {load_limits.MAX_TEXT_BYTES} bytes of text after alias expansion (limit {load_limits.MAX_TEXT_BYTES})"
)
TIME = f"more than {load_limits.MAX_LOAD_SECONDS:g} s to load (limit {load_limits.MAX_LOAD_SECONDS:g} s)"

#: file name -> (how to write it, the limit its error names)
HOSTILE: dict[str, tuple[Callable[[Path], None], str]] = {
    "laughs.yml": (_billion_laughs, NODES),
    "deep-flow.yml": (_deep_flow_yaml, DEPTH),
    "deep-block.yml": (_deep_block_yaml, DEPTH),
    "deep.json": (_deep_json, DEPTH),
    "huge.yml": (_sparse_gigabyte, BYTES),
    "text-bomb.yml": (_text_bomb, TEXT),
    "alias-chain.yml": (_alias_chain, DEPTH),
    "many-nodes.json": (_many_json_nodes, JSON_NODES),
}


@pytest.fixture
def cache_in(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("HARNESS_NO_CACHE", raising=False)
    return tmp_path / "cache" / "specs" / "documents"


def _specs_with(tmp_path: Path, names: list[str]) -> Path:
    """A folder of the named hostile files and one valid legacy file, ``good.yml``."""
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "good.yml").write_text(LEGACY_HEADER + PASSING)
    for name in names:
        HOSTILE[name][0](specs / name)
    return specs


def _errors_by_file(tests) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    for test in tests:
        if test.load_error:
            errors.setdefault(Path(test.file).name, []).append(test.load_error)
    return errors


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_file_is_one_error_naming_it_and_the_limit(tmp_path, cache_in, name):
    specs = _specs_with(tmp_path, [name])
    tests = load_paths([specs])
    assert _errors_by_file(tests) == {name: [f"{specs / name}: {HOSTILE[name][1]}"]}
    assert [t.description for t in tests if Path(t.file).name == "good.yml"] == ["passes"]
    assert len(list(cache_in.iterdir())) == 1  # the valid file's document only
    assert _errors_by_file(load_paths([specs])) == {name: [f"{specs / name}: {HOSTILE[name][1]}"]}


def test_a_file_that_loads_too_long_is_an_error_and_the_file_beside_it_gets_its_verdict(
    tmp_path, cache_in, monkeypatch, embedded_run
):
    """Every look at the clock finds it a tenth of a second later: the 20,000-node file looks at it 80 times."""
    ticks = iter(range(10**9))
    monkeypatch.setattr(load_limits, "clock", lambda: next(ticks) / 10)
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "good.yml").write_text(LEGACY_HEADER + PASSING)
    (specs / "slow.yml").write_text(f"tests: [{', '.join(['0'] * 20_000)}]\n")
    tests = load_paths([specs])
    assert _errors_by_file(tests) == {"slow.yml": [f"{specs / 'slow.yml'}: {TIME}"]}
    outcomes = {(Path(t.file).name, embedded_run.run_test(t).outcome) for t in tests}
    assert outcomes == {("good.yml", "passed"), ("slow.yml", "error")}
    assert len(list(cache_in.iterdir())) == 1


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_a_file_with_no_end_is_never_opened():
    """A device is not a regular file: refused before it is opened (before the limits, reading never ended; then it
    was read on to the limit; tests/harness/formats/test_strict_inputs.py has the FIFO and the link to it)."""
    from harness.formats.spec_reader import SpecFileError, read_spec_file

    with pytest.raises(SpecFileError) as refused:
        read_spec_file(Path("/dev/zero"))
    assert str(refused.value) == "/dev/zero: cannot read file: a character device, not a regular file: not opened"


def test_an_alias_inside_its_own_anchor_is_refused_at_its_line(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "cycle.yml").write_text("database_name: d\ntests: &t\n  - *t\n")
    [test] = load_paths([specs])
    assert test.load_error.startswith(f"{specs / 'cycle.yml'}: line 3: invalid YAML: found an alias (*t) inside")


def test_anchors_and_aliases_within_the_limits_still_load(tmp_path):
    """Re-used anchors, merge keys and an alias nested as deep as the limit allows are all fine."""
    deep = "[" * (load_limits.MAX_DEPTH - 3) + "x" + "]" * (load_limits.MAX_DEPTH - 3)
    path = tmp_path / "fine.yml"
    path.write_text(f"a: &x 1\nb: &x {{k: 2}}\nc: {{<<: *x, m: 3}}\nd: &d {deep}\ne: [*d, *d]\n")
    from harness.formats.spec_reader import read_spec_file

    data = read_spec_file(path).data
    assert data["c"] == {"k": 2, "m": 3} and data["e"] == [data["d"], data["d"]]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_cli_reports_each_hostile_file_and_runs_the_rest(tmp_path, workers):
    specs = _specs_with(tmp_path, sorted(HOSTILE))
    results = tmp_path / "out.jsonl"
    done = harness(
        "run",
        "--specs",
        str(specs),
        "--results",
        str(results),
        "--expected",
        "none",
        "-j",
        workers,
        cwd=tmp_path,
        timeout=300,
    )  # a hang guard only: before the limits, laughs.yml never finished
    assert done.returncode == 1, done.stdout + done.stderr  # the hostile files are unexpected errors
    records = [json.loads(line) for line in results.read_text().splitlines()]
    outcomes = {Path(r["file"]).name: (r["outcome"], r["message"]) for r in records}
    assert outcomes.pop("good.yml") == ("passed", "")
    assert outcomes == {name: ("error", f"{specs / name}: {limit}") for name, (_, limit) in HOSTILE.items()}
    assert len(records) == len(HOSTILE) + 1


def test_a_yaml_integer_python_cannot_build_is_one_error_naming_the_file(tmp_path, cache_in):
    """PyYAML raises ValueError (not a YAMLError) for an integer past Python's digit limit: still one error."""
    specs = _specs_with(tmp_path, [])
    (specs / "bigint.yml").write_text("tests: [" + "9" * 5000 + "]\n")
    errors = _errors_by_file(load_paths([specs]))
    assert list(errors) == ["bigint.yml"]
    assert errors["bigint.yml"][0].startswith(f"{specs / 'bigint.yml'}: invalid YAML: ")


def test_a_json_file_past_a_limit_is_refused_before_its_extended_json_is_decoded(tmp_path, cache_in, monkeypatch):
    from harness.formats import spec_reader

    decoded = []
    monkeypatch.setattr(spec_reader.json_util, "loads", lambda text, **k: decoded.append(text[:40]))
    path = tmp_path / "decimals.json"
    path.write_text(json.dumps({"tests": [{"$numberDecimal": "1"}] * load_limits.MAX_NODES}))
    assert _errors_by_file(load_paths([path])) == {"decimals.json": [f"{path}: {JSON_NODES}"]}
    assert decoded == []
