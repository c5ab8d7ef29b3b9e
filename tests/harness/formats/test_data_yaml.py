"""harness.formats.data_yaml: libyaml's parser reads every project data file as PyYAML's own does."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.formats.data_yaml import SAFE_LOADER, load_data_yaml

SPECS = Path(__file__).resolve().parents[3] / "specs"
DATA_FILES = sorted([*SPECS.rglob("*.yml"), *SPECS.rglob("*.yaml")])


def test_there_are_data_files_and_libyaml_reads_them_here():
    assert len(DATA_FILES) > 20
    assert issubclass(SAFE_LOADER, yaml.cyaml.CParser)  # PyYAML wheels ship libyaml: a slower reader would go unnoticed


@pytest.mark.parametrize("path", DATA_FILES, ids=lambda p: str(p.relative_to(SPECS)))
def test_every_project_file_reads_the_same_as_with_pyyamls_own_parser(path):
    text = path.read_text(encoding="utf-8")
    assert load_data_yaml(text) == yaml.safe_load(text)


def test_dates_stay_what_the_safe_loader_makes_and_errors_are_yaml_errors():
    assert load_data_yaml("on: 2026-11-24\nn: 0x10\nt: yes") == yaml.safe_load("on: 2026-11-24\nn: 0x10\nt: yes")
    with pytest.raises(yaml.YAMLError) as caught:
        load_data_yaml("a: [1, 2\nb: 3")
    assert caught.value.problem_mark.line >= 1
    with pytest.raises(yaml.YAMLError):
        load_data_yaml("!!python/object:os.system {}")


def test_a_value_json_keeps_exactly_comes_from_the_cache_and_one_it_would_change_never_does(tmp_path, monkeypatch):
    from harness.formats.data_yaml import CACHE_KIND

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("HARNESS_NO_CACHE", raising=False)
    kept, changed = "rules:\n  - id: CS-X\n    level: 1.0\n", "1: one\nday: 2026-11-24\n"
    for text in (kept, changed):
        assert load_data_yaml(text) == yaml.safe_load(text)
    entries = list((tmp_path / "specs" / CACHE_KIND).iterdir())
    assert len(entries) == 1  # the second's int key and date would come back as strings: not kept
    assert load_data_yaml(kept) == {"rules": [{"id": "CS-X", "level": 1.0}]}  # read from the entry
    assert isinstance(load_data_yaml(kept)["rules"][0]["level"], float)
    assert load_data_yaml(changed) == {1: "one", "day": yaml.safe_load("d: 2026-11-24")["d"]}
    entries[0].write_text("not json")  # a damaged entry is a miss, and the value is parsed again
    assert load_data_yaml(kept) == {"rules": [{"id": "CS-X", "level": 1.0}]}
