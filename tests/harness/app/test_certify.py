"""``harness certify`` end to end on the embedded SecantusDB with pymongo: the whole main job, strictly.

The statement must account for every rule id of ``harness coverage`` exactly once, agree with the run's
records test by test, and list the pair's known deviations with their reasons. A second run plants a
failing scenario that names a rule the main job meets, and that rule must turn not met, with the planted
test's message.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections import Counter

import pytest

from harness.app.certify import expectation_entries, rule_catalogue
from harness.app.cli import main
from harness.formats.source_names import main_job_sources
from tests.conftest import require_shared_specs

PLANTED_RULE = "SRV-START-NOW"
PLANTED = f"""\
description: planted-failure
schemaVersion: "1.7"
runOnRequirements:
  - minServerVersion: "6.0"
    topologies: [ replicaset ]
createEntities:
  - client: {{ id: &client0 client0, useMultipleMongoses: false }}
  - database: {{ id: &database0 database0, client: *client0, databaseName: &db planted_failure }}
  - collection: {{ id: &collection0 collection0, database: *database0, collectionName: &coll events }}
initialData:
  - {{ collectionName: *coll, databaseName: *db, documents: [] }}
tests:
  - description: "{PLANTED_RULE}: planted, a stream reports a change made before it was opened"
    operations:
      - name: insertOne
        object: *collection0
        arguments: {{ document: {{ _id: 1 }} }}
      - name: createChangeStream
        object: *collection0
        arguments: {{ pipeline: [] }}
        saveResultAsEntity: &stream stream
      - name: insertOne
        object: *collection0
        arguments: {{ document: {{ _id: 2 }} }}
      - name: iterateUntilDocumentOrError
        object: *stream
        expectResult: {{ operationType: insert, documentKey: {{ _id: 1 }} }}
"""


def _certify(argv: list[str]) -> tuple[int, str]:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = main(["certify", *argv])
    return status, printed.getvalue()


@pytest.fixture(scope="module")
def certified(tmp_path_factory):
    require_shared_specs()
    out = tmp_path_factory.mktemp("certify")
    status, printed = _certify(["--driver", "pymongo", "--target", "embedded", "-j", "2", "--out", str(out)])
    statement = json.loads((out / "pymongo-on-embedded.json").read_text())
    records = [json.loads(line) for line in (out / "pymongo-on-embedded.results.jsonl").read_text().splitlines()]
    return {"out": out, "status": status, "printed": printed, "statement": statement, "records": records}


def test_certify_runs_the_main_job_strictly_and_writes_the_statement(certified):
    assert certified["status"] == 0, certified["printed"]
    out, statement = certified["out"], certified["statement"]
    # One statement per iteration mode pymongo offers, the default one (next) under the pair's plain name.
    stems = ("pymongo-on-embedded", "pymongo-tryNext-on-embedded", "pymongo-iterator-on-embedded")
    suffixes = (".json", ".html", ".badge.json", ".results.jsonl", ".log")
    bundle = {"manifest.json", "expectations"}  # the bundle's own (tests/harness/app/test_certify_bundle.py)
    assert {p.name for p in out.iterdir()} == {stem + suffix for stem in stems for suffix in suffixes} | bundle
    assert [mode["mode"] for mode in statement["run"]["iteration_modes"]] == ["next", "tryNext", "iterator"]
    assert {mode["exit_status"] for mode in statement["run"]["iteration_modes"]} == {0}
    run = statement["run"]
    assert run["strict"] is True and run["exit_status"] == 0 and run["selection"] is None
    assert run["sources"] == main_job_sources()
    assert len(certified["records"]) == run["tests"] == 404
    assert {r["strict"] for r in certified["records"]} == {True}
    assert statement["provenance"]["run_id"] == certified["records"][0]["run_id"]
    assert statement["subject"]["driver"]["name"] == "pymongo"
    assert statement["subject"]["target"]["name"] == "secantusdb"
    last = certified["printed"].strip().splitlines()[-1]
    assert last == statement["summary"]["badge"]
    assert re.fullmatch(
        r"pymongo \S+ on secantusdb \S+ \(embedded\): \d+/\d+ rules met, \d+ not met, "
        r"(\d+ not judged, )?\d+ not checked",
        last,
    )


def test_every_rule_id_of_harness_coverage_appears_exactly_once(certified):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        main(["coverage", "--format", "json", "--report-only"])
    coverage_ids = [rule["id"] for rule in json.loads(printed.getvalue())["rules"]]
    statement_ids = [rule["id"] for rule in certified["statement"]["rules"]]
    assert Counter(statement_ids) == Counter(coverage_ids) and len(set(statement_ids)) == len(statement_ids)
    summary = certified["statement"]["summary"]
    judged = summary["met"] + summary["not_met"] + summary["not_judged"]
    assert judged + summary["not_checked"] == summary["rules"] == len(coverage_ids)


def test_the_verdicts_agree_with_the_records(certified):
    records = {r["test_id"]: r for r in certified["records"]}
    for rule in certified["statement"]["rules"]:
        failed = rule["tests"]["failed"]
        if rule["verdict"] == "not-met":
            assert failed or rule["causes"], rule["id"]
        for entry in failed:
            record = records[entry["test_id"]]
            assert record["outcome"] in ("failed", "error") and entry["message"] == record["message"]
            kind = record["expectation"]["kind"]
            listed = record["expectation"]["reason"] if kind.startswith("known-") else None
            assert entry["known_deviation"] == listed
        if rule["verdict"] == "met":  # a failing test of a met rule failed only on causes of other rules
            assert rule["tests"]["passed"] and all(not entry["causes"] for entry in failed), rule["id"]
            assert all(records[t]["outcome"] == "passed" for t in rule["tests"]["passed"])
            assert rule["complete"] is False or not failed
        if rule["verdict"] == "not-met":  # every cause that breaks it names it
            assert all(rule["id"] in cause["rules"] for entry in failed for cause in entry["causes"] or [])
        for skipped in rule["tests"]["skipped"]:
            assert skipped["reason"] == records[skipped["test_id"]]["message"] != ""
    known = [r for r in certified["records"] if r["expectation"]["kind"].startswith("known-")]
    assert known, "the main job has known deviations of pymongo and SecantusDB"
    failing_ids = {f["test_id"] for rule in certified["statement"]["rules"] for f in rule["tests"]["failed"]}
    assert {r["test_id"] for r in known if r["rules"]} <= failing_ids


def test_not_checked_rules_give_their_reason(certified):
    rules = [r for r in certified["statement"]["rules"] if r["verdict"] == "not-checked"]
    assert rules
    for rule in rules:
        assert rule["reason"]
    catalogue = rule_catalogue(main_job_sources())
    not_checkable = {r["id"] for r in catalogue["rules"] if r["not_checkable"]}
    assert not_checkable <= {r["id"] for r in rules}
    topology = [r for r in rules if r["id"] not in not_checkable]
    assert all(r["reason"].startswith("every test of this rule was skipped here: ") for r in topology)


def test_the_known_deviations_are_listed_with_their_reasons(certified):
    entries = expectation_entries()
    expected = entries["targets"]["secantusdb"] + entries["drivers"]["pymongo"]
    listed = certified["statement"]["deviations"]
    assert [(d["ref"], d["reason"]) for d in listed] == [(e["ref"], e["reason"]) for e in expected]
    assert all(d["status"] == "seen" for d in listed)


def test_the_page_shows_the_badge_and_every_rule(certified):
    page = (certified["out"] / "pymongo-on-embedded.html").read_text()
    assert certified["statement"]["summary"]["badge"] in page.replace("&#x27;", "'")
    for rule in certified["statement"]["rules"]:
        assert rule["id"] in page
    badge = json.loads((certified["out"] / "pymongo-on-embedded.badge.json").read_text())
    assert badge["schemaVersion"] == 1 and badge["message"].endswith("rules met")


def test_a_planted_failing_test_turns_its_rule_not_met(certified, tmp_path):
    met = {r["id"]: r for r in certified["statement"]["rules"]}[PLANTED_RULE]
    assert met["verdict"] == "met"
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / "planted-failure.yml").write_text(PLANTED)
    sources = [*main_job_sources(), str(planted)]
    argv = ["--driver", "pymongo", "--out", str(tmp_path / "out"), "-k", "planted-failure"]
    status, printed = _certify([*argv, *[a for s in sources for a in ("--specs", s)]])
    assert status == 1, printed  # an unexpected failure: the statement is written all the same
    statement = json.loads((tmp_path / "out" / "pymongo-on-embedded.json").read_text())
    rule = {r["id"]: r for r in statement["rules"]}[PLANTED_RULE]
    assert rule["verdict"] == "not-met"
    [failure] = rule["tests"]["failed"]
    assert failure["test_id"].startswith("unified/planted-failure::") and failure["known_deviation"] is None
    assert "_id" in failure["message"]
    assert all(t["reason"] == "not selected (-k planted-failure)" for t in rule["tests"]["not_run"])
    assert statement["run"]["exit_status"] == 1 and statement["run"]["selection"] == "-k planted-failure"
    others = [r for r in statement["rules"] if r["id"] != PLANTED_RULE]
    assert {r["verdict"] for r in others} == {"not-checked"}


def test_harness_report_writes_the_same_statement_for_the_cell(certified, tmp_path):
    """The matrix path: ``harness report`` over the run's results file gives its one cell the verdicts certify
    gave, from the report's tables and the catalogue the harness hands it."""
    from tests.spark_support import _available

    missing = _available()
    if missing:
        pytest.skip(missing)
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / "run.jsonl").write_bytes((certified["out"] / "pymongo-on-embedded.results.jsonl").read_bytes())
    out = tmp_path / "report"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = main(["report", str(inputs), "--out", str(out), "--driver-memory", "1g"])
    assert status == 0, printed.getvalue()
    assert json.loads((out / "statements" / "rule-catalogue.json").read_text())["expectations"]["targets"]
    [path] = [p for p in (out / "statements").glob("*.json") if not p.name.endswith((".badge.json", "catalogue.json"))]
    cell = json.loads(path.read_text())
    assert cell["subject"]["cell"] and cell["summary"]["badge"] in printed.getvalue()
    ours = {r["id"]: r for r in certified["statement"]["rules"]}
    assert [r["id"] for r in cell["rules"]] == list(ours)
    for rule in cell["rules"]:
        assert rule["verdict"] == ours[rule["id"]]["verdict"], rule["id"]
        assert rule["tests"]["failed"] == ours[rule["id"]]["tests"]["failed"], rule["id"]
    assert cell["deviations"] == certified["statement"]["deviations"]
