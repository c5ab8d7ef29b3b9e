"""What a test's checks can report (``clauses_of``), which ``harness coverage`` shows per rule."""

from __future__ import annotations

from harness.core.causes import CHECK, ERROR_RAISED, clauses_of
from harness.formats.loaders import load_file
from tests.harness.engine.test_causes import _spec


def test_the_clauses_follow_what_the_test_asserts(tmp_path):
    independent, flow = load_file(_spec(tmp_path))
    assert clauses_of(independent) == ("result", "error-raised", "event", "event-missing", "extra-events")
    assert clauses_of(flow) == ("result", "error-raised", "event", "event-missing", "extra-events")
    assert clauses_of(None) == (CHECK, ERROR_RAISED)  # a code-defined check


def test_coverage_lists_the_clauses_a_rule_s_checks_can_report():
    import contextlib
    import io
    import json

    from harness.app.cli import main

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        main(["coverage", "--format", "json", "--report-only"])
    rules = {rule["id"]: rule for rule in json.loads(printed.getvalue())["rules"]}
    assert {"error-match", "error-not-raised"} <= set(rules["CS-CURSOR-TIMEOUTS"]["clauses"])
    assert rules["SRV-START-EXCLUSIVE"]["clauses"] and CHECK in rules["SRV-START-EXCLUSIVE"]["clauses"]
