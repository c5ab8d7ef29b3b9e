"""Conformance statements from plain data: every rule once, each verdict's reading, deviations, badge, page, files.

A tiny catalogue of six rules and hand-written rows force each row of docs/certify.md's verdict table; a
planted failure among passing tests must turn a met rule into not met, known deviation or not.
"""

from __future__ import annotations

import json
import re

import pytest

from reports.collect import TableRows
from reports.statement_files import (
    file_stem,
    matrix_statements,
    shields_endpoint,
    statements_from_report,
    write_statement,
)
from reports.statement_page import render_html
from reports.statements import (
    MET,
    NO_SKIP_REASON,
    NOT_CHECKED,
    NOT_JUDGED,
    NOT_MET,
    STATEMENT_SCHEMA,
    TestRow,
    badge_line,
    build_statement,
    deviations_for,
    rows_from_cell_tests,
    rows_from_records,
)

A1, A2, A3 = "unified/a::CS-A: one", "unified/a::CS-A: two", "unified/a::CS-A: three"
B1, C1, D1, E1 = "unified/b::CS-B: one", "unified/c::SRV-C: one", "unified/d::CS-D: one", "legacy/e::old server"


def _rule(rule_id, tests, level="MUST", not_checkable=None):
    return {
        "id": rule_id,
        "level": level,
        "kind": "server" if rule_id.startswith("SRV") else "driver",
        "catalogue": "change-streams",
        "section": "S",
        "paraphrase": f"what {rule_id} says <b>",
        "check": None if not_checkable else "whole",
        "checked_by": tests,
        "not_checkable": not_checkable,
    }


CATALOGUE = {
    "spec_text": None,
    "spec_text_compared": False,
    "tests_loaded": 6,
    "rules": [
        _rule("CS-A", [A1, A2, A3]),
        _rule("CS-B", [B1], level="SHOULD"),
        _rule("SRV-C", [C1]),
        _rule("CS-D", [D1]),
        _rule("CS-E", [E1], not_checkable="needs a server older than 4.4"),
        _rule("CS-F", []),
    ],
    "expectations": {
        "targets": {
            "secantusdb": [
                {
                    "ref": "secantusdb.yml#c",
                    "rule": "CS-X",
                    "kind": "server-bug",
                    "tests": ["unified/c::SRV-C: *"],
                    "outcome": "failed",
                    "reason": "server bug",
                }
            ]
        },
        "drivers": {
            "pymongo": [
                {
                    "ref": "drivers/pymongo.yml#b",
                    "rule": "CS-X",
                    "kind": "server-bug",
                    "tests": ["unified/b::*"],
                    "outcome": "failed",
                    "reason": "driver bug",
                    "file": "d.yml",
                },
                {
                    "ref": "drivers/pymongo.yml#zzz",
                    "rule": "CS-X",
                    "kind": "server-bug",
                    "tests": ["unified/zzz::*"],
                    "outcome": "failed",
                    "reason": "a file not run here",
                },
            ]
        },
        "pairs": {
            "secantusdb+node": [
                {
                    "ref": "pairs/secantusdb+node.yml#a",
                    "rule": "CS-X",
                    "kind": "server-bug",
                    "tests": ["unified/a::*"],
                    "outcome": "failed",
                    "reason": "not this pair",
                }
            ]
        },
    },
}
SUBJECT = {
    "driver": {"name": "pymongo", "version": "4.20.0"},
    "target": {"name": "secantusdb", "version": "0.7.0b3", "kind": "embedded"},
    "cell": None,
}


def _statement(rows, **run):
    deviations = deviations_for(CATALOGUE["expectations"], "secantusdb", "pymongo")
    return build_statement(
        CATALOGUE, rows, subject=SUBJECT, provenance={"run_id": "r1"}, deviations=deviations, run=run
    )


def _by_id(statement):
    return {rule["id"]: rule for rule in statement["rules"]}


PASSING = [
    TestRow(A1, "passed"),
    TestRow(A2, "passed"),
    TestRow(A3, "skipped", "topology replicaset not in ['single']"),
    TestRow(B1, "passed"),
    TestRow(C1, "failed", "expected 2 events, got 3", "server bug", "known-failure"),
    TestRow(D1, "skipped", "needs sharded"),
    TestRow(E1, "failed", "not judged"),
]


def test_every_rule_appears_once_and_the_counts_add_up():
    statement = _statement(PASSING)
    ids = [rule["id"] for rule in statement["rules"]]
    assert ids == [rule["id"] for rule in CATALOGUE["rules"]]
    summary = statement["summary"]
    assert summary["met"] + summary["not_met"] + summary["not_checked"] == summary["rules"] == 6
    assert statement["statement"] == STATEMENT_SCHEMA


def test_each_verdict_reads_as_documented():
    rules = _by_id(_statement(PASSING))
    # passed and skipped: met, not complete, the skip listed with its reason
    assert rules["CS-A"]["verdict"] == MET and rules["CS-A"]["complete"] is False and rules["CS-A"]["reason"] is None
    assert rules["CS-A"]["tests"]["skipped"] == [{"test_id": A3, "reason": "topology replicaset not in ['single']"}]
    assert rules["CS-B"]["verdict"] == MET and rules["CS-B"]["complete"] is True
    # a known deviation still makes the rule not met, with the entry's reason and the message
    assert rules["SRV-C"]["verdict"] == NOT_MET
    assert rules["SRV-C"]["tests"]["failed"] == [
        {
            "test_id": C1,
            "outcome": "failed",
            "message": "expected 2 events, got 3",
            "known_deviation": "server bug",
            "causes": None,
        }
    ]
    assert rules["SRV-C"]["reason"] == "1 of 1 test(s) failed (1 listed as known deviations)"
    # every test skipped: not checked, with the skip reason
    assert rules["CS-D"]["verdict"] == NOT_CHECKED and "needs sharded" in rules["CS-D"]["reason"]
    # not checkable wins over a failing test, whose outcome is still listed
    assert rules["CS-E"]["verdict"] == NOT_CHECKED
    assert rules["CS-E"]["reason"] == "not checkable: needs a server older than 4.4"
    assert rules["CS-E"]["tests"]["failed"][0]["test_id"] == E1
    assert rules["CS-F"]["verdict"] == NOT_CHECKED and rules["CS-F"]["reason"] == "no test checks this rule"


def test_a_planted_failure_turns_a_met_rule_not_met():
    before = _by_id(_statement(PASSING))["CS-A"]
    planted = [row if row.test_id != A2 else TestRow(A2, "error", "set-up: boom") for row in PASSING]
    after = _by_id(_statement(planted))["CS-A"]
    assert before["verdict"] == MET and after["verdict"] == NOT_MET
    assert after["tests"]["failed"] == [
        {"test_id": A2, "outcome": "error", "message": "set-up: boom", "known_deviation": None, "causes": None}
    ]
    assert after["tests"]["passed"] == [A1] and after["reason"] == "1 of 3 test(s) failed"


def test_a_failing_should_rule_is_not_met_and_counted_apart():
    rows = [
        row if row.test_id != B1 else TestRow(B1, "failed", "no", None, "recommendation-not-followed")
        for row in PASSING
    ]
    statement = _statement(rows)
    rule = _by_id(statement)["CS-B"]
    # the row carries no reason, the pair's deviation entry gives it
    assert rule["verdict"] == NOT_MET and rule["tests"]["failed"][0]["known_deviation"] == "driver bug"
    assert statement["summary"]["not_met_should"] == 1 and statement["summary"]["not_met_must"] == 1


def test_tests_that_did_not_run_say_why():
    rules = _by_id(_statement([TestRow(B1, "passed")], selection="-k CS-B"))
    assert rules["CS-A"]["verdict"] == NOT_CHECKED
    assert rules["CS-A"]["reason"] == "none of its 3 test(s) ran: not selected (-k CS-B)"
    assert rules["CS-A"]["tests"]["not_run"][0] == {"test_id": A1, "reason": "not selected (-k CS-B)"}
    unselected = _by_id(_statement([TestRow(B1, "passed")]))["SRV-C"]
    assert unselected["reason"] == "none of its 1 test(s) ran: not in this run's spec sources"


def test_a_mapping_entry_that_was_not_loaded_is_a_test_not_run():
    catalogue = {**CATALOGUE, "rules": [_rule("CS-A", ["unified/gone::* (not loaded)"])]}
    statement = build_statement(catalogue, PASSING, subject=SUBJECT, provenance={})
    assert statement["rules"][0]["tests"]["not_run"][0]["test_id"] == "unified/gone::*"


def test_deviations_of_the_pair_in_run_order_with_what_they_matched():
    deviations = deviations_for(CATALOGUE["expectations"], "secantusdb", "pymongo")
    assert [d.reason for d in deviations] == ["server bug", "driver bug", "a file not run here"]
    entries = _statement(PASSING)["deviations"]
    assert [(e["reason"], e["status"]) for e in entries] == [
        ("server bug", "seen"),
        ("driver bug", "not-exercised"),
        ("a file not run here", "no-test-here"),
    ]
    assert entries[0]["tests"] == [{"test_id": C1, "outcome": "failed"}]
    assert deviations_for(CATALOGUE["expectations"], "secantusdb", "node")[-1].reason == "not this pair"


def test_rows_from_records_keep_a_reason_only_for_a_listed_deviation():
    records = [
        {"test_id": C1, "outcome": "failed", "message": "m", "expectation": {"kind": "known-failure", "reason": "r"}},
        {"test_id": A3, "outcome": "skipped", "message": "why", "expectation": {"kind": "skip", "reason": "listed"}},
    ]
    rows = {row.test_id: row for row in rows_from_records(records)}
    assert rows[C1].deviation_reason == "r" and rows[C1].expectation == "known-failure"
    assert rows[A3].deviation_reason is None and rows[A3].message == "why"


def test_rows_from_cell_tests():
    table = [
        {"cell": "x", "test_id": A1, "status": "flaky", "failed": 1, "error": 0, "message": "sometimes"},
        {"cell": "x", "test_id": A2, "status": "fail", "failed": 0, "error": 2, "message": "boom"},
        {"cell": "x", "test_id": A3, "status": "skip", "message": None},
        {"cell": "x", "test_id": B1, "status": "skip", "message": None, "skip_reason": "no sharding"},
        {"cell": "y", "test_id": C1, "status": "pass", "message": None},
    ]
    rows = {row.test_id: row for row in rows_from_cell_tests(table, "x")}
    assert set(rows) == {A1, A2, A3, B1}
    assert (rows[A1].outcome, rows[A2].outcome) == ("flaky", "error")
    assert rows[A3].message == NO_SKIP_REASON and rows[B1].message == "no sharding"
    rule = _by_id(build_statement(CATALOGUE, list(rows.values()), subject=SUBJECT, provenance={}))["CS-A"]
    assert rule["verdict"] == NOT_MET and [f["outcome"] for f in rule["tests"]["failed"]] == ["flaky", "error"]


def test_badge_line_and_shields_endpoint():
    statement = _statement(PASSING)
    assert badge_line(statement) == statement["summary"]["badge"]
    assert re.fullmatch(
        r"pymongo 4\.20\.0 on secantusdb 0\.7\.0b3 \(embedded\): 2/3 rules met, 1 not met, 3 not checked",
        statement["summary"]["badge"],
    )
    assert shields_endpoint(statement) == {
        "schemaVersion": 1,
        "label": "change streams",
        "message": "2/3 rules met",
        "color": "red",
    }
    should_only = _statement([r for r in PASSING if r.test_id != C1] + [TestRow(B1, "failed", "x")])
    assert shields_endpoint(should_only)["color"] == "yellow"


def test_the_page_is_self_contained_and_names_every_rule():
    page = render_html(_statement(PASSING))
    assert "<script" not in page and "http" not in page and "<link" not in page
    for rule in CATALOGUE["rules"]:
        assert rule["id"] in page
    assert "what CS-A says &lt;b&gt;" in page and "what CS-A says <b>" not in page
    assert "expected 2 events, got 3" in page and "server bug" in page
    assert "pymongo 4.20.0 on secantusdb 0.7.0b3 (embedded): 2/3 rules met" in page


def test_write_statement_and_file_stems(tmp_path):
    paths = write_statement(_statement(PASSING), tmp_path, file_stem("pymongo-async+embedded"))
    assert {p.name for p in paths.values()} == {
        "pymongo-async_embedded.json",
        "pymongo-async_embedded.html",
        "pymongo-async_embedded.badge.json",
    }
    assert json.loads(paths["json"].read_text())["summary"]["rules"] == 6
    assert file_stem("pymongo 4.20.0 / secantusdb 0.7.0b3 replicaset native") == (
        "pymongo-4.20.0_secantusdb-0.7.0b3-replicaset-native"
    )


CELLS = [
    {"cell": "pymongo 4.20.0 / secantusdb 0.7.0b3 replicaset native", "driver_name": "pymongo"},
    {"cell": "node 7.9.0 / secantusdb 0.7.0b3 replicaset native", "driver_name": "node"},
]


def _cell_tests():
    rows = []
    for cell in CELLS:
        for test_id in (A1, A2, C1):
            failing = (cell["driver_name"] == "node" and test_id == A2) or test_id == C1
            rows.append(
                {"cell": cell["cell"], "test_id": test_id, "status": "fail" if failing else "pass", "failed": 1}
            )
    return rows


@pytest.mark.parametrize("truncated", [False, True])
def test_one_statement_per_matrix_cell(tmp_path, truncated):
    cells = [
        {**c, "driver_version": c["cell"].split()[1], "target_name": "secantusdb", "target_kinds": "embedded"}
        for c in CELLS
    ]
    catalogue = tmp_path / "catalogue.json"
    catalogue.write_text(json.dumps(CATALOGUE))
    tables = {"cells": TableRows(cells, 2), "cell_tests": TableRows(_cell_tests(), 7 if truncated else 6)}
    said = statements_from_report(catalogue, tables, tmp_path / "statements")
    if truncated:
        assert "none written" in said and not (tmp_path / "statements").exists()
        return
    assert said.splitlines()[0] == f"statements: 2 in {tmp_path / 'statements'}"
    written = {p.name for p in (tmp_path / "statements").iterdir()}
    assert "node-7.9.0_secantusdb-0.7.0b3-replicaset-native.json" in written and len(written) == 7
    assert json.loads((tmp_path / "statements" / "rule-catalogue.json").read_text()) == CATALOGUE
    node = json.loads((tmp_path / "statements" / "node-7.9.0_secantusdb-0.7.0b3-replicaset-native.json").read_text())
    pymongo = json.loads(
        (tmp_path / "statements" / "pymongo-4.20.0_secantusdb-0.7.0b3-replicaset-native.json").read_text()
    )
    assert _by_id(node)["CS-A"]["verdict"] == NOT_MET and _by_id(pymongo)["CS-A"]["verdict"] == MET
    assert node["subject"]["cell"] == CELLS[1]["cell"] and node["subject"]["target"]["kind"] == "embedded"
    # the target's deviation applies to both cells; the failure reads with its reason
    assert _by_id(node)["SRV-C"]["tests"]["failed"][0]["known_deviation"] == "server bug"


def test_a_cell_of_one_iteration_mode_is_judged_with_the_entries_of_that_mode(tmp_path):
    """Two cells of one driver differing only in mode: an entry limited to ``emitter`` explains the emitter cell's
    failure and not the next cell's; a cell without a mode (records from before it) reads every entry."""
    catalogue = json.loads(json.dumps(CATALOGUE))
    catalogue["expectations"]["pairs"]["secantusdb+node"][0]["iteration_modes"] = ["emitter"]
    target = "secantusdb 0.7.0b3 replicaset native"
    cells = [
        {
            "cell": f"node 7.9.0{f' [{mode}]' if mode else ''} / {target}",
            "driver_name": "node",
            "driver_version": "7.9.0",
            "iteration_mode": mode,
            "target_name": "secantusdb",
        }
        for mode in ("next", "emitter", None)
    ]
    tests = [{"cell": c["cell"], "test_id": A2, "status": "fail", "failed": 1} for c in cells]
    written = matrix_statements(catalogue, cells, tests, tmp_path)
    known = {s["subject"]["cell"]: _by_id(s)["CS-A"]["tests"]["failed"][0]["known_deviation"] for s in written}
    assert known == {
        f"node 7.9.0 [next] / {target}": None,
        f"node 7.9.0 [emitter] / {target}": "not this pair",
        f"node 7.9.0 / {target}": "not this pair",
    }
    assert [s["subject"]["driver"].get("iteration_mode") for s in written] == ["next", "emitter", None]
    assert len(list(tmp_path.glob("*.html"))) == 3  # a page each: the mode is in the file name


def test_matrix_statements_returns_what_it_wrote(tmp_path):
    written = matrix_statements(CATALOGUE, CELLS, _cell_tests(), tmp_path)
    assert [s["subject"]["cell"] for s in written] == [c["cell"] for c in CELLS]
    assert all(s["summary"]["rules"] == len(CATALOGUE["rules"]) for s in written)


def _cause(clause, rules, fact="f", known=None, step="operations[0]"):
    return {"clause": clause, "rules": rules, "fact": fact, "known": known, "step": step, "path": ""}


def test_with_causes_a_rule_is_judged_by_the_causes_that_name_it():
    """docs/causes.md: not met only by a cause naming the rule; a harness error or another rule's cause leaves it
    not judged; an entry's cause makes its own rule not met wherever it stood."""
    rows = [
        TestRow(A1, "failed", "m", causes=(_cause("result", ["CS-A"], "expected 1, got 2"),)),
        TestRow(A2, "passed", causes=()),
        TestRow(A3, "passed", causes=()),
        TestRow(B1, "error", "set-up: boom", causes=(_cause("set-up", ["CS-B"], "set-up: boom"),)),
        TestRow(C1, "failed", "m", "r", "known-failure", (_cause("error-raised", ["CS-D"], "no opTime", "t.yml#x"),)),
    ]
    rules = _by_id(_statement(rows))
    assert rules["CS-A"]["verdict"] == NOT_MET and "expected 1, got 2" in rules["CS-A"]["reason"]
    assert rules["CS-A"]["tests"]["failed"][0]["causes"][0]["fact"] == "expected 1, got 2"
    assert rules["CS-B"]["verdict"] == NOT_JUDGED and "set-up: boom" in rules["CS-B"]["reason"]
    # SRV-C's only test failed on a cause an entry gives to CS-D: SRV-C is not judged, CS-D (no test of its own
    # here) is not met, with the entry named
    assert rules["SRV-C"]["verdict"] == NOT_JUDGED
    assert rules["CS-D"]["verdict"] == NOT_MET and "[t.yml#x]" in rules["CS-D"]["reason"]
    assert rules["CS-D"]["causes"][0]["test_id"] == C1


def test_with_causes_a_harness_error_beside_a_pass_leaves_the_rule_met_but_incomplete():
    rows = [
        TestRow(A1, "passed", causes=()),
        TestRow(A2, "error", "timed out", causes=(_cause("timeout", ["CS-A"], "timed out"),)),
    ]
    rule = _by_id(_statement(rows))["CS-A"]
    assert rule["verdict"] == MET and rule["complete"] is False


CAUSED = [
    TestRow(A1, "failed", "m", causes=(_cause("result", ["CS-A"], "expected 1, got 2"),)),
    TestRow(A2, "passed", causes=()),
    TestRow(A3, "passed", causes=()),
    TestRow(B1, "error", "set-up: boom", causes=(_cause("set-up", ["CS-B"], "set-up: boom"),)),
    TestRow(C1, "failed", "m", "r", "known-failure", (_cause("error-raised", ["CS-D"], "no opTime", "t.yml#x"),)),
]


def _as_cell_tests(rows):
    """``rows`` as the report's cell_tests table has them: the latest failure's causes as JSON text."""
    status = {"passed": "pass", "failed": "fail", "error": "fail", "skipped": "skip"}
    return [
        {
            "cell": "x",
            "test_id": row.test_id,
            "status": status[row.outcome],
            "failed": int(row.outcome == "failed"),
            "error": int(row.outcome == "error"),
            "message": row.message if row.outcome in ("failed", "error") else None,
            "causes": json.dumps(list(row.causes)) if row.causes else None,
            "known_deviation": row.deviation_reason,
        }
        for row in rows
    ]


def test_rows_from_cell_tests_with_causes_judge_each_rule_as_the_records_do():
    rows = {row.test_id: row for row in rows_from_cell_tests(_as_cell_tests(CAUSED), "x")}
    assert rows[A1].causes == CAUSED[0].causes and rows[A2].causes == ()
    assert (rows[C1].deviation_reason, rows[C1].outcome, rows[B1].outcome) == ("r", "failed", "error")
    from_table, from_records = _statement(list(rows.values())), _statement(CAUSED)
    for table_rule, record_rule in zip(from_table["rules"], from_records["rules"], strict=True):
        assert table_rule == record_rule, record_rule["id"]
    assert from_table["deviations"] == from_records["deviations"]


def test_a_table_without_causes_is_read_by_outcome():
    old = [{k: v for k, v in row.items() if k not in ("causes", "known_deviation")} for row in _as_cell_tests(CAUSED)]
    rows = {row.test_id: row for row in rows_from_cell_tests(old, "x")}
    assert rows[A1].causes is None and rows[A2].causes is None
    rules = _by_id(_statement(list(rows.values())))
    assert rules["CS-B"]["verdict"] == NOT_MET  # by outcome: an error fails the rule; by cause it is not judged
    # a failing verdict recorded before causes, in a table that has the column: read by its outcome too
    mixed = _as_cell_tests(CAUSED)
    mixed[0]["causes"] = None
    assert rows_from_cell_tests(mixed, "x")[0].causes is None


def test_with_causes_an_unexpected_failure_gets_no_entry_reason_from_its_test_id():
    """An entry limited to a test explains causes; a failure none of whose causes it explained is not its."""
    rows = [TestRow(C1, "failed", "m", None, "unexpected-failure", (_cause("result", ["SRV-C"], "other"),))]
    [failed] = _by_id(_statement(rows))["SRV-C"]["tests"]["failed"]
    assert failed["known_deviation"] is None
    assert _by_id(_statement([TestRow(C1, "failed", "m")]))["SRV-C"]["tests"]["failed"][0]["known_deviation"] == (
        "server bug"
    )


def test_the_page_shows_each_failing_rules_causes():
    page = render_html(_statement(CAUSED)).replace("&#x27;", "'")
    not_met = page[page.index('<section id="not-met">') :]
    not_met = not_met[: not_met.index("</section>")]
    assert "result at operations[0]: expected 1, got 2 [unexplained]" in not_met
    # CS-D has no test of its own here: the cause an entry gives it in SRV-C's test is listed, with the entry
    assert "error-raised at operations[0]: no opTime [known: t.yml#x]" in not_met
    assert "a cause of another rule's test" in not_met
    not_judged = page[page.index('<section id="not-judged">') :]
    not_judged = not_judged[: not_judged.index("</section>")]
    assert f"{B1} (error)" in not_judged and "set-up: boom" in not_judged
    # a row read by its outcome says it has no causes rather than showing none
    assert "(no causes recorded: judged by the outcome)" in render_html(_statement(PASSING))
