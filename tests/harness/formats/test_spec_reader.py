"""libyaml reads spec files fast; the pure-Python loader is the reference, and the two must agree.

Where libyaml refuses a file (a flow mapping it scans differently) the
reference loader reads it; where libyaml accepts one, it
must give the very data and test lines the reference gives.
"""

from __future__ import annotations

import math

import pytest
import yaml

from harness.formats import spec_reader
from tests.conftest import require_shared_specs
from tests.paths import SHARED_SPECS


def _yaml_files():
    return sorted(SHARED_SPECS.glob("upstream/**/*.yml")) if SHARED_SPECS.is_dir() else []


@pytest.mark.skipif(spec_reader._FastSpecYamlLoader is None, reason="PyYAML was built without libyaml")
def test_libyaml_and_the_reference_loader_agree_on_every_upstream_file(monkeypatch):
    from harness.formats import load_limits

    require_shared_specs()
    # The loaders are compared here, not timed: the pure-Python one on a loaded machine may pass the time limit.
    monkeypatch.setattr(load_limits, "MAX_LOAD_SECONDS", 60.0)
    files = _yaml_files()
    assert len(files) > 300
    refused = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        try:
            reference = spec_reader._compose(spec_reader._SpecYamlLoader, text)
        except yaml.YAMLError:
            continue  # an invalid file: read_spec_file reports the reference loader's error
        try:
            fast = spec_reader._compose(spec_reader._FastSpecYamlLoader, text)
        except yaml.YAMLError:
            refused += 1
            continue
        assert fast[1] == reference[1], path
        assert spec_reader._yaml_test_lines(fast[0]) == spec_reader._yaml_test_lines(reference[0]), path
    assert refused < len(files) // 10


def test_a_re_used_anchor_rebinds_with_either_loader(tmp_path):
    path = tmp_path / "anchors.yml"
    path.write_text("a: &x 1\nb: &x 2\nc: *x\n")  # YAML 1.2 allows re-using an anchor name
    assert spec_reader.read_spec_file(path).data == {"a": 1, "b": 2, "c": 2}


def test_a_flow_mapping_libyaml_refuses_is_read_by_the_reference_loader(tmp_path):
    path = tmp_path / "flow.yml"
    path.write_text("spans: [ { name: x, nested:[] } ]\n")
    with pytest.raises(yaml.YAMLError):
        spec_reader._compose(spec_reader._FastSpecYamlLoader, path.read_text())
    assert spec_reader.read_spec_file(path).data == {"spans": [{"name": "x", "nested": []}]}


def _expanded_size(value) -> int:
    """Nodes of the built data, each alias's share counted again wherever it appears (mapping keys count)."""
    if isinstance(value, dict):
        return 1 + len(value) + sum(_expanded_size(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(_expanded_size(v) for v in value)
    return 1


def test_the_composers_node_count_is_the_size_of_what_it_builds_on_every_upstream_file():
    """The load limits count nodes without expanding aliases; the count must be what expanding builds."""
    from harness.formats.load_limits import LoadBudget

    require_shared_specs()
    counted = with_aliases = 0
    for path in _yaml_files():
        text = path.read_text(encoding="utf-8")
        for loader in filter(None, (spec_reader._FastSpecYamlLoader, spec_reader._SpecYamlLoader)):
            budget = LoadBudget(deadline=math.inf)  # counts, not time: a busy CI machine may take longer than a run may
            try:
                _, data = spec_reader._compose(loader, text, budget)
            except yaml.YAMLError:
                continue
            assert budget.nodes == _expanded_size(data), (path, loader.__name__)
            counted += 1
            with_aliases += "*" in text
    assert counted > 300 and with_aliases > 150


def test_the_fast_schema_check_and_jsonschema_agree_on_every_upstream_file():
    """jsonschema-rs says "valid?"; jsonschema words the errors: they must agree on every upstream file."""
    import json

    import jsonschema
    from bson import json_util

    from harness.formats import unified_schema

    require_shared_specs()
    schema_file = SHARED_SPECS / "upstream" / "unified-format-selftests" / "schema-1.28.json"
    fast = unified_schema._fast_validator(schema_file)
    if fast is None:
        pytest.skip("jsonschema-rs is not installed")
    schema = json.loads(schema_file.read_text())
    reference = jsonschema.validators.validator_for(schema, default=jsonschema.Draft201909Validator)(schema)
    checked = invalid = 0
    for path in sorted(SHARED_SPECS.glob("upstream/**/*.json")):
        try:
            data = spec_reader.read_spec_file(path).data
        except spec_reader.SpecFileError:
            continue
        if not isinstance(data, dict) or "schemaVersion" not in data:
            continue
        document = json.loads(json_util.dumps(data, json_options=unified_schema._AS_JSON))
        assert fast.is_valid(document) == reference.is_valid(document), path
        checked += 1
        invalid += not reference.is_valid(document)
    assert checked > 250 and invalid > 100  # the invalid self-tests are in there
