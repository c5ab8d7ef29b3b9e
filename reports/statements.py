"""Conformance statements: every rule of the catalogue with its verdict for one driver and target pair.

A statement answers "which rules does this driver meet on this target?" in one document a team can
publish: each rule id of ``harness coverage`` exactly once, *met*, *not met* (with the failing tests,
their messages and, for a known deviation, its reason) or *not checked here* (with the reason), the
pair's known deviations with their reasons, the run's provenance, and a one-line summary for a README
badge. ``harness certify`` makes one from its own run's records; ``harness report`` makes one per
matrix cell from its ``cell_tests`` table. The schema is ``docs/certify.md``.

This module is pure: it takes the rule catalogue as plain data (the ``rules`` of ``harness coverage
--format json``, and the expected-outcomes entries) and per-test rows, so the report can use it without
importing the harness, and a test can feed it a few dicts.

How a rule reads (docs/certify.md, "Verdicts"). Where the records carry causes (docs/causes.md), a rule is judged
by the causes that name it, not by its tests' outcomes:

- a cause names it (an unexplained cause of one of its tests, or any cause an expected-outcomes entry attributes to
  it, in whatever test): **not met**, with those causes;
- its tests failed only on causes that name other rules, or on set-up errors and timeouts: **not judged**, with
  the reason (never not met from a harness error);

Without causes (a matrix report's ``cell_tests``), by its tests' outcomes:

- any of them failed or errored here (or was flaky across repeats), expected or not: **not met**;
- otherwise, at least one passed: **met**; the ones skipped or not run are listed with their reasons and
  the rule's ``complete`` is false (the pass is the verdict of what this target could exercise);
- otherwise: **not checked here**, with the skip reasons, or why none ran (``-k``, not in the sources).

A rule the catalogue marks not checkable is *not checked here* with the catalogue's reason, whatever its
tests did (their outcomes are still listed).
"""

from __future__ import annotations

import fnmatch
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from harness.record.causes import UNJUDGED_CLAUSES
from harness.record.outcomes import ERROR, FAILED, FLAKY, PASSED, SKIPPED, STATUS_OUTCOME, outcome_of
from harness.record.schema import PER_TEST_FIELDS

STATEMENT_SCHEMA = "cs-harness.statement/1"
MET, NOT_MET, NOT_CHECKED, NOT_JUDGED = "met", "not-met", "not-checked", "not-judged"
VERDICTS = (NOT_MET, NOT_JUDGED, NOT_CHECKED, MET)
#: A test's outcome in a statement: a record's four, and ``flaky`` (a test that both passed and failed: across a run's
#: attempts, or a matrix cell's repeats); its status in the report's ``cell_tests`` as a statement's outcome.
FAILING = (FAILED, ERROR, FLAKY)
#: A matrix cell's skipped test when the report's ``cell_tests`` table has no ``skip_reason`` column.
#: How the report names a Python driver run through an executor (:func:`reports.normalise.driver_name`): its
#: expected outcomes are still the driver's own (``drivers/pymongo.yml``).
EXECUTOR_SUFFIX = "-executor"
NO_SKIP_REASON = "skipped (the report's cell_tests table carries no skip reason)"
#: What coverage_map appends to a mapping entry whose tests were not loaded.
NOT_LOADED = " (not loaded)"


@dataclass(frozen=True)
class TestRow:
    """One test's outcome in the run (or matrix cell) a statement is about."""

    __test__ = False  # not a pytest test class

    test_id: str
    outcome: str
    #: The failure message (failed, error, flaky), or why it was skipped.
    message: str = ""
    #: The expected-outcomes entry's reason, when the test is a listed deviation (None: not known to be one).
    deviation_reason: str | None = None
    #: The record's classification (``known-failure``, ``unexpected-failure``, ``skip``...), when known.
    expectation: str | None = None
    #: The record's causes (docs/causes.md); None where the source has none (a matrix report's table).
    causes: tuple[dict[str, Any], ...] | None = None


@dataclass(frozen=True)
class Deviation:
    """One expected-outcomes entry that applies to the pair: a known cause (docs/causes.md), the rule it breaks,
    the tests it is limited to (none: any), its outcome and why."""

    ref: str
    rule: str
    kind: str
    tests: tuple[str, ...]
    outcome: str
    reason: str
    file: str
    reproduction: str = ""
    signature: str = ""

    def matches(self, test_id: str) -> bool:
        return not self.tests or any(t == test_id or fnmatch.fnmatchcase(test_id, t) for t in self.tests)


def rows_from_records(records: Iterable[dict[str, Any]]) -> list[TestRow]:
    """The rows of a results file's records (``cs-harness.result/1``), one per test: a test run more than once
    (``--retry-unexpected``, ``--repeat``) has the outcome of all its attempts (``flaky`` when some passed and some
    failed: :func:`harness.record.outcomes.outcome_of`), and the last failing attempt's message, classification
    and causes (the last attempt's when none failed)."""
    attempts: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        attempts.setdefault(record["test_id"], []).append(record)
    return [_row(test_id, found) for test_id, found in attempts.items()]


def _row(test_id: str, attempts: list[dict[str, Any]]) -> TestRow:
    outcome = outcome_of(record["outcome"] for record in attempts)
    failing = [record for record in attempts if record["outcome"] in FAILING]
    record = (failing or attempts)[-1]
    expectation = record.get("expectation") or {}
    kind = expectation.get("kind")
    known = isinstance(kind, str) and kind.startswith("known-")
    return TestRow(
        test_id,
        outcome,
        record.get("message") or "",
        expectation.get("reason") if known else None,
        kind,
        tuple(record["causes"]) if isinstance(record.get("causes"), list) else None,
    )


def provenance_of(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The run's provenance: every field of the first record that is not the test's own (all records repeat it)."""
    if not records:
        return {}
    return {key: value for key, value in records[0].items() if key not in PER_TEST_FIELDS}


def rows_from_cell_tests(cell_tests: Iterable[dict[str, Any]], cell: str) -> list[TestRow]:
    """A matrix cell's rows from the report's ``cell_tests`` table (status pass/fail/flaky/skip per test).

    The table keeps the latest failing verdict's message, causes and known-deviation reason, so a cell's rule is
    judged by cause as certify judges it; a skip reason comes from its ``skip_reason`` column when the report has
    one (docs/certify.md, "Matrix reports").
    """
    rows = []
    for row in cell_tests:
        if row.get("cell") != cell:
            continue
        outcome = STATUS_OUTCOME.get(row.get("status") or "", SKIPPED)
        if outcome == FAILED and not row.get("failed") and row.get("error"):
            outcome = ERROR
        if outcome != SKIPPED:
            message = row.get("message") or ""
        elif "skip_reason" in row:
            message = row["skip_reason"] or ""
        else:
            message = NO_SKIP_REASON
        deviation = row.get("known_deviation") if outcome in FAILING else None
        rows.append(TestRow(row["test_id"], outcome, message, deviation, None, _table_causes(row, outcome)))
    return rows


def _table_causes(row: dict[str, Any], outcome: str) -> tuple[dict[str, Any], ...] | None:
    """A ``cell_tests`` row's causes (the latest failing verdict's, JSON text), as a record's row has them.

    None, so the test is read by its outcome, when the table has no ``causes`` column (a report made before
    causes) or the failing verdict carried none (a record written before causes, a pytest testcase); a test
    that did not fail has none, as a passed record has ``[]``.
    """
    if "causes" not in row:
        return None
    if outcome not in FAILING:
        return ()
    text = row["causes"]
    return tuple(json.loads(text)) if isinstance(text, str) and text else None


def deviations_for(
    expectations: dict[str, Any], target: str, driver: str, iteration_mode: str | None = None
) -> list[Deviation]:
    """The entries that apply to a pair, in the order a run reads them: the target's, the driver's, the pair's;
    with ``iteration_mode``, only those that apply in that mode (an entry's ``iteration_modes``, none: every mode).

    ``expectations`` is the catalogue's ``expectations`` object: ``targets``, ``drivers`` and ``pairs``
    (``<target>+<driver>``), each a map from name to a list of entries (``harness.app.certify.expectation_entries``).
    """
    lists = (
        (expectations.get("targets") or {}).get(target, []),
        (expectations.get("drivers") or {}).get(driver, []),
        (expectations.get("pairs") or {}).get(f"{target}+{driver}", []),
    )
    return [
        Deviation(
            e["ref"],
            e["rule"],
            e["kind"],
            tuple(e.get("tests") or ()),
            e.get("outcome", FAILED),
            e["reason"],
            e.get("file", ""),
            e.get("reproduction", ""),
            e.get("signature", ""),
        )
        for part in lists
        for e in part
        if iteration_mode is None or not e.get("iteration_modes") or iteration_mode in e["iteration_modes"]
    ]


def _lookup(deviations: list[Deviation], test_id: str) -> Deviation | None:
    return next((d for d in deviations if d.tests and d.matches(test_id)), None)


def _deviation_reason(row: TestRow, deviations: list[Deviation]) -> str | None:
    """A failing test's known-deviation reason: the run's own, when it classified the test as a known deviation.

    Only a row without causes (a report's table from before causes) falls back to the first entry limited to the
    test: with causes, an entry explains causes, not tests, and the run already said which (a test with one
    unexplained cause is no known deviation, whatever entry names it).
    """
    if row.deviation_reason or row.causes is not None:
        return row.deviation_reason
    deviation = _lookup(deviations, row.test_id)
    return deviation.reason if deviation is not None else None


def _not_run_reason(selection: str | None) -> str:
    if selection:
        return f"not selected ({selection})"
    return "not in this run's spec sources"


def rule_verdict(
    rule: dict[str, Any],
    rows: dict[str, TestRow],
    deviations: list[Deviation],
    selection: str | None = None,
    attributed: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One rule's entry: its verdict, why, and each mapped test's outcome (module docstring: the reading)."""
    ids = [t[: -len(NOT_LOADED)] if t.endswith(NOT_LOADED) else t for t in rule.get("checked_by") or []]
    failing: list[dict[str, Any]] = []
    passed: list[str] = []
    skipped: list[dict[str, Any]] = []
    not_run: list[dict[str, Any]] = []
    for test_id in ids:
        row = rows.get(test_id)
        if row is None:
            not_run.append({"test_id": test_id, "reason": _not_run_reason(selection)})
        elif row.outcome in FAILING:
            reason = _deviation_reason(row, deviations)
            failing.append(
                {
                    "test_id": test_id,
                    "outcome": row.outcome,
                    "message": row.message,
                    "known_deviation": reason,
                    "causes": _causes_naming(rule["id"], row),
                }
            )
        elif row.outcome == PASSED:
            passed.append(test_id)
        else:
            skipped.append({"test_id": test_id, "reason": row.message})
    with_causes = [f for f in failing if f["causes"] is not None]
    breaking = _unique([c for f in with_causes for c in f["causes"]] + list(attributed or []))
    by_outcome = [f for f in failing if f["causes"] is None]
    if rule.get("not_checkable"):
        verdict, reason = NOT_CHECKED, f"not checkable: {rule['not_checkable']}"
    elif breaking:
        verdict = NOT_MET
        reason = f"{len(breaking)} cause(s) break it: " + "; ".join(sorted({_cause_line(c) for c in breaking}))
    elif by_outcome:
        known = sum(1 for f in by_outcome if f["known_deviation"])
        verdict = NOT_MET
        reason = f"{len(by_outcome)} of {len(ids)} test(s) failed" + (
            f" ({known} listed as known deviations)" if known else ""
        )
    elif not ids:
        verdict, reason = NOT_CHECKED, "no test checks this rule"
    elif with_causes and not passed:
        verdict = NOT_JUDGED
        reason = "its tests failed only on causes of other rules or on set-up errors: " + "; ".join(
            sorted({_cause_line(c) for f in with_causes for c in _other_causes(f, rows)})
        )
    elif passed:
        verdict, reason = MET, None
    elif skipped:
        causes = sorted({s["reason"] or "no reason given" for s in skipped})
        verdict, reason = NOT_CHECKED, "every test of this rule was skipped here: " + "; ".join(causes)
    else:
        verdict, reason = NOT_CHECKED, f"none of its {len(ids)} test(s) ran: {_not_run_reason(selection)}"
    return {
        "id": rule["id"],
        "level": rule.get("level"),
        "kind": rule.get("kind"),
        "catalogue": rule.get("catalogue"),
        "section": rule.get("section"),
        "paraphrase": rule.get("paraphrase"),
        "check": rule.get("check"),
        "verdict": verdict,
        "reason": reason,
        "complete": verdict == MET and not skipped and not not_run and not failing,
        "tests": {"failed": failing, "passed": passed, "skipped": skipped, "not_run": not_run},
        "causes": attributed,
    }


def _unique(causes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for cause in causes:
        seen.setdefault((cause["test_id"], cause["step"], cause["path"], cause["fact"]), cause)
    return list(seen.values())


def _causes_naming(rule_id: str, row: TestRow) -> list[dict[str, Any]] | None:
    """The causes of a failing test that break this rule: those naming it, that are no harness error."""
    if row.causes is None:
        return None
    return [
        _cause_view(c, row.test_id)
        for c in row.causes
        if rule_id in (c.get("rules") or []) and c.get("clause") not in UNJUDGED_CLAUSES
    ]


def _other_causes(failing: dict[str, Any], rows: dict[str, TestRow]) -> list[dict[str, Any]]:
    row = rows[failing["test_id"]]
    return [_cause_view(c, row.test_id) for c in row.causes or ()]


def _cause_view(cause: dict[str, Any], test_id: str) -> dict[str, Any]:
    """A cause as a statement shows it: the test, the rule(s), the clause, the fact and the entry that knows it."""
    return {
        "test_id": test_id,
        "rules": list(cause.get("rules") or []),
        "clause": cause.get("clause"),
        "step": cause.get("step"),
        "path": cause.get("path"),
        "fact": cause.get("fact"),
        "known": cause.get("known"),
    }


def _cause_line(cause: dict[str, Any]) -> str:
    known = f" [{cause['known']}]" if cause.get("known") else ""
    return f"{cause.get('clause')}: {str(cause.get('fact') or '')[:200]}{known}"


def attributed_causes(rows: dict[str, TestRow]) -> dict[str, list[dict[str, Any]]]:
    """Per rule, the causes an expected-outcomes entry attributes to it, in any test (an entry names one rule: a
    server's missing field breaks that rule wherever it stops a test)."""
    found: dict[str, list[dict[str, Any]]] = {}
    for row in sorted(rows.values(), key=lambda r: r.test_id):  # the same order from records and from a table
        for cause in row.causes or ():
            rules = cause.get("rules") or []
            if cause.get("known") and len(rules) == 1 and cause.get("clause") not in UNJUDGED_CLAUSES:
                found.setdefault(rules[0], []).append(_cause_view(cause, row.test_id))
    return found


def _deviation_entries(deviations: list[Deviation], rows: dict[str, TestRow]) -> list[dict[str, Any]]:
    """Each entry with the tests whose causes it explained here and whether it was seen. Rows without causes (a
    matrix report's table) count a failing test the entry is limited to as seen."""
    entries = []
    for deviation in deviations:
        matched = []
        for row in sorted(rows.values(), key=lambda r: r.test_id):
            if row.causes is not None:
                explained = sum(1 for c in row.causes if c.get("known") == deviation.ref)
                if explained:
                    matched.append({"test_id": row.test_id, "outcome": row.outcome, "causes": explained})
            elif deviation.tests and deviation.matches(row.test_id):
                matched.append({"test_id": row.test_id, "outcome": row.outcome})
        seen = any(m["outcome"] == deviation.outcome or m["outcome"] == FLAKY for m in matched)
        status = "seen" if seen else ("not-exercised" if matched else "no-test-here")
        entries.append(
            {
                "ref": deviation.ref,
                "rule": deviation.rule,
                "kind": deviation.kind,
                "signature": deviation.signature,
                "tests_limited_to": list(deviation.tests),
                "outcome": deviation.outcome,
                "reason": deviation.reason,
                "reproduction": deviation.reproduction,
                "file": deviation.file,
                "status": status,
                "tests": matched,
            }
        )
    return entries


def build_statement(
    catalogue: dict[str, Any],
    rows: list[TestRow],
    *,
    subject: dict[str, Any],
    provenance: dict[str, Any],
    deviations: list[Deviation] | None = None,
    run: dict[str, Any] | None = None,
    generated_at: str | None = None,
) -> dict[str, Any]:
    """The statement (``cs-harness.statement/1``) for ``rows`` against every rule of ``catalogue``.

    ``catalogue`` is ``harness coverage --format json``'s document (its ``rules``, ``spec_text``);
    ``subject`` names the pair (``driver`` and ``target``: name, version...; ``cell`` for a matrix cell);
    ``run`` says how the run was made (``selection``: the ``-k`` that narrowed it, ``exit_status``...).
    """
    run = dict(run or {})
    deviations = list(deviations or [])
    by_id = {row.test_id: row for row in rows}
    by_rule = attributed_causes(by_id)
    rules = [
        rule_verdict(rule, by_id, deviations, run.get("selection"), by_rule.get(rule["id"], []))
        for rule in catalogue.get("rules", [])
    ]
    counts = Counter(rule["verdict"] for rule in rules)
    outcomes = Counter(row.outcome for row in rows)
    mapped = {t for rule in rules for group in rule["tests"].values() for t in _test_ids(group)}
    summary: dict[str, Any] = {
        "rules": len(rules),
        "met": counts[MET],
        "not_met": counts[NOT_MET],
        "not_checked": counts[NOT_CHECKED],
        "not_judged": counts[NOT_JUDGED],
        "not_met_must": sum(1 for r in rules if r["verdict"] == NOT_MET and r["level"] == "MUST"),
        "not_met_should": sum(1 for r in rules if r["verdict"] == NOT_MET and r["level"] == "SHOULD"),
        "met_incomplete": sum(1 for r in rules if r["verdict"] == MET and not r["complete"]),
    }
    statement: dict[str, Any] = {
        "statement": STATEMENT_SCHEMA,
        "generated_at": generated_at,
        "subject": subject,
        "summary": summary,
        "run": {
            **run,
            "tests": len(rows),
            "outcomes": {o: outcomes[o] for o in (PASSED, FAILED, ERROR, SKIPPED, FLAKY) if outcomes[o] or o != FLAKY},
            "tests_naming_no_rule": sum(1 for row in rows if row.test_id not in mapped),
        },
        "catalogue": {
            "rules": len(rules),
            "spec_text": catalogue.get("spec_text"),
            "spec_text_compared": bool(catalogue.get("spec_text_compared")),
            "tests_loaded": catalogue.get("tests_loaded"),
        },
        "rules": rules,
        "deviations": _deviation_entries(deviations, by_id),
        "provenance": provenance,
    }
    summary["badge"] = badge_line(statement)
    return statement


def _test_ids(group: list[Any]) -> list[str]:
    return [item if isinstance(item, str) else item["test_id"] for item in group]


def named(part: dict[str, Any]) -> str:
    return " ".join(str(part[k]) for k in ("name", "version") if part.get(k)) or "unknown"


def badge_line(statement: dict[str, Any]) -> str:
    """``pymongo 4.20.0 on secantusdb 0.7.0b3 (embedded): 176/189 rules met, 13 not met, 24 not checked`` (and
    ``N not judged, `` before the last when any rule could not be judged: docs/certify.md)."""
    subject, summary = statement["subject"], statement["summary"]
    target = subject.get("target") or {}
    kind = f" ({target['kind']})" if target.get("kind") else ""
    judged = summary["met"] + summary["not_met"]
    not_judged = summary.get("not_judged", 0)
    return (
        f"{named(subject.get('driver') or {})} on {named(target)}{kind}: {summary['met']}/{judged} rules met, "
        f"{summary['not_met']} not met, "
        + (f"{not_judged} not judged, " if not_judged else "")
        + f"{summary['not_checked']} not checked"
    )
