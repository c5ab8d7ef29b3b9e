"""Every result record names the rules its test checks (``rules``), and the report can group verdicts by rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.app import compose
from harness.engine.run import RunOptions
from harness.formats.loaders import load_paths
from harness.formats.rule_files import load_mapping
from tests.paths import REPO
from tests.spark_support import record, records_frame

PROJECT = REPO
SUPPLEMENTARY = PROJECT / "specs" / "scenarios" / "supplementary" / "change-streams-options.yml"
UPSTREAM_UNIFIED = PROJECT.parent / "shared" / "specs" / "upstream" / "unified" / "change-streams.yml"


@pytest.fixture
def mapped_run(embedded_run, monkeypatch):
    """The shared embedded run, with the project's mapping as the composition root gives it."""
    monkeypatch.setattr(embedded_run.options, "rules", load_mapping())
    return embedded_run


def _one(path: Path, description: str):
    return next(t for t in load_paths([path]) if t.description == description)


def test_a_supplementary_record_names_the_rule_of_its_description(mapped_run):
    test = _one(
        SUPPLEMENTARY, "CS-OPT-MAXAWAIT: maxAwaitTimeMS is the getMore's maxTimeMS and never goes on the aggregate"
    )
    result = mapped_run.run_test(test)
    assert result.record["rules"] == ["CS-OPT-MAXAWAIT"]


def test_a_prose_record_names_the_rules_the_mapping_gives_it(mapped_run):
    from prose_tests import load_prose_checks

    check = next(c for c in load_prose_checks() if c.name.startswith("4: "))
    result = mapped_run.run_test(check)
    assert result.record["format"] == "prose" and result.record["rules"] == ["CS-ERR-AGGREGATE"]


def test_an_upstream_record_names_the_rules_the_mapping_gives_it(mapped_run):
    if not UPSTREAM_UNIFIED.is_file():
        pytest.skip(f"upstream unified files not at {UPSTREAM_UNIFIED.parent}")
    result = mapped_run.run_test(_one(UPSTREAM_UNIFIED, "Test that comment is set on getMore"))
    assert result.record["rules"] == ["CS-OPT-AGGREGATE", "CS-OPT-COMMENT-ANYTYPE", "CS-OPT-COMMENT-GETMORE"]
    server_side = mapped_run.run_test(_one(UPSTREAM_UNIFIED, "Test array truncation"))
    assert server_side.record["rules"] == ["SRV-SPEC-TRUNCATED"], "a server rule of the spec's catalogue"


def test_a_run_without_the_mapping_still_records_description_ids(embedded_run):
    assert embedded_run.options.rules is None
    test = _one(SUPPLEMENTARY, "CS-OPT-BATCHSIZE: no batchSize is sent when none was asked for")
    assert embedded_run.run_test(test).record["rules"] == ["CS-OPT-BATCHSIZE"]


def test_the_composition_root_gives_runs_the_mapping():
    options = RunOptions(target="embedded", expected="none")
    compose.new_run(options)  # not entered: nothing starts
    assert options.rules is not None
    assert options.rules.rules_for(
        "prose/change-streams-prose::4: an error from the aggregate command is never resumed"
    ) == ["CS-ERR-AGGREGATE"]


def test_a_broken_mapping_is_said_and_recorded(monkeypatch, tmp_path, capsys):
    from harness.formats import rule_files

    broken = tmp_path / "test-rules.yml"
    broken.write_text("tests: [1]\n")
    monkeypatch.setattr(rule_files, "TEST_MAPPING", broken)
    options = RunOptions(target="embedded", expected="none")
    compose.new_run(options)
    assert options.rules is not None and options.rules.entries == []
    assert "test-rules.yml: entry 1" in options.provenance["rules_problem"]
    assert "WARNING" in capsys.readouterr().err


def test_verdicts_group_by_rule(spark):
    from pyspark.sql import functions as F

    from reports.normalise import verdicts_by_rule, verdicts_from_records
    from reports.schema import RULE_VERDICT_COLUMNS

    records = [
        record("unified/a::one", "passed"),
        record("unified/a::two", "failed"),
        record("prose/p::3", "passed"),
        record("unified/a::none", "passed"),
    ]
    rules_of_each = (["CS-RESUME-ONCE", "SRV-ORDER"], ["CS-RESUME-ONCE"], ["CS-RESUME-ATTEMPT"], [])
    for rec, rules in zip(records, rules_of_each, strict=True):
        rec["rules"] = rules
    old = record("unified/a::old", "passed")
    del old["rules"]  # a record written before the field existed
    verdicts = verdicts_from_records(records_frame(spark, [*records, old]))
    assert {r["test_id"]: r["rules"] for r in verdicts.collect()}["unified/a::old"] == []
    by_rule = verdicts_by_rule(verdicts)
    assert by_rule.columns == RULE_VERDICT_COLUMNS
    counts = {
        (r["rule"], r["rule_area"], r["outcome"]): r["count"]
        for r in by_rule.groupBy("rule", "rule_area", "outcome").count().collect()
    }
    assert counts == {
        ("CS-RESUME-ONCE", "CS-RESUME", "passed"): 1,
        ("CS-RESUME-ONCE", "CS-RESUME", "failed"): 1,
        ("SRV-ORDER", "SRV", "passed"): 1,
        ("CS-RESUME-ATTEMPT", "CS-RESUME", "passed"): 1,
    }
    assert by_rule.where(F.col("test_id") == "unified/a::none").count() == 0
