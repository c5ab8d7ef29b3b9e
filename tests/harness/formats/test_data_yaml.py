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
