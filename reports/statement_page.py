"""A conformance statement's page: one self-contained HTML file (inline style, no scripts, nothing to fetch).

The statement itself (:mod:`reports.statements`) is the data a team publishes; this is how it reads in a
browser, in the report's house style (:mod:`reports.render.html`): the rules not met with each failing test
and its message first, then the rules not checked here and why, the rules met, the pair's known deviations
and the provenance. Long messages are shortened on the page only (the JSON keeps them whole).
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from reports.statements import MET, NOT_CHECKED, NOT_JUDGED, NOT_MET, VERDICTS, named

# -- the page -------------------------------------------------------------------------------------------------------


def render_html(statement: dict[str, Any]) -> str:
    """One self-contained page (inline style, no scripts or links to fetch), in the report's house style."""
    from reports.render.html import Column, msg, page, section, table

    summary, rules = statement["summary"], statement["rules"]
    by_verdict = {verdict: [r for r in rules if r["verdict"] == verdict] for verdict in VERDICTS}
    rule_says = [Column("id", "rule"), Column("level", "level"), Column("paraphrase", "rule says")]
    parts = [  # (id, title, intro, rows, columns, said when empty)
        (
            "not-met",
            f"Not met ({summary['not_met']} rules)",
            (
                "each failing test of each rule with its message and the causes that break the rule (clause, fact, "
                "and the expected-outcomes entry that knows it), and each cause an entry gives the rule in another "
                "rule's test; a known deviation gives its listed reason"
            ),
            [row for r in by_verdict[NOT_MET] for row in _not_met_rows(r)],
            [
                Column("rule", "rule"),
                Column("test_id", "test"),
                Column("outcome", "outcome"),
                msg("causes", "causes"),
                msg("message", "message"),
                msg("known", "known deviation"),
            ],
            "every rule judged here is met",
        ),
        (
            "not-judged",
            f"Not judged ({summary.get('not_judged', 0)} rules)",
            "rules whose tests failed only on set-up errors or on causes of other rules: neither met nor not met",
            [{**r, "failing": _failing_tests(r)} for r in by_verdict[NOT_JUDGED]],
            [*rule_says, msg("failing", "failing tests"), msg("reason", "reason (the causes)")],
            "every rule with a failing test was judged",
        ),
        (
            "not-checked",
            f"Not checked here ({summary['not_checked']} rules)",
            "rules nothing can check (the catalogue's reason) and rules whose tests did not run here",
            by_verdict[NOT_CHECKED],
            [*rule_says, msg("reason", "reason")],
            "every rule was judged here",
        ),
        (
            "met",
            f"Met ({summary['met']} rules)",
            "every test of the rule that ran passed; tests that did not run here are named with their reason",
            [
                {
                    **r,
                    "passed": len(r["tests"]["passed"]),
                    "not_here": "\n".join(
                        f"{t['test_id']}: {t['reason']}" for t in r["tests"]["skipped"] + r["tests"]["not_run"]
                    ),
                }
                for r in by_verdict[MET]
            ],
            [*rule_says, Column("passed", "tests passed"), msg("not_here", "not run here"), msg("check", "checked")],
            "no rule is met",
        ),
        (
            "deviations",
            "Known deviations",
            (
                "the expected-outcomes entries for this pair: each a known cause, the rule it breaks, its reason and "
                "the tests whose causes it explained here"
            ),
            [{**d, "matched": len(d["tests"])} for d in statement["deviations"]],
            [
                Column("ref", "entry"),
                Column("rule", "rule"),
                Column("kind", "kind"),
                msg("signature", "signature"),
                Column("outcome", "outcome"),
                Column("status", "here"),
                Column("matched", "tests"),
                msg("reason", "reason"),
                msg("reproduction", "reproduction"),
            ],
            "no known deviation is listed for this pair",
        ),
        (
            "provenance",
            "Provenance",
            "what ran, where, with which sources, as the run's records say",
            [{"key": k, "value": _plain(v)} for k, v in _provenance_items(statement)],
            [Column("key", "what"), msg("value", "value")],
            "no provenance",
        ),
    ]
    sections = [
        (key, title.split(" (")[0], section(key, title, intro, table(rows, columns, f"{key}-table", empty)))
        for key, title, intro, rows, columns, empty in parts
    ]
    figures = [
        (str(summary["met"]), "rules met"),
        (str(summary["not_met"]), "not met"),
        (str(summary["not_checked"]), "not checked here"),
        (str(summary["rules"]), "rules"),
        (str(statement["run"]["tests"]), "tests"),
    ]
    run_id = statement["provenance"].get("run_id")
    said = (
        f"generated {statement['generated_at']}" if statement.get("generated_at") else "",
        f"from run {run_id}" if run_id else "",
        statement["subject"].get("cell") or "",
    )
    title = f"Conformance statement: {named(statement['subject'].get('driver') or {})}"
    html = page(title, "; ".join(part for part in said if part), figures, sections)
    return html.replace("<main>", f'<main><p id="badge">{escape(summary["badge"])}</p>', 1)


def _not_met_rows(rule: dict[str, Any]) -> list[dict[str, Any]]:
    """A not-met rule's rows: each failing test with its causes naming the rule, then each cause an entry gives
    the rule in a test that is not its own (a server's missing field breaks its rule wherever it stops a test)."""
    said = f"{rule['id']} ({rule['level']}): {rule['paraphrase']}"
    rows = [
        {
            "rule": said,
            **failed,
            "causes": _causes_text(failed.get("causes")),
            "message": _shortened(failed["message"]),
            "known": failed["known_deviation"] or "",
        }
        for failed in rule["tests"]["failed"]
    ]
    own = {failed["test_id"] for failed in rule["tests"]["failed"]}
    elsewhere: dict[str, list[dict[str, Any]]] = {}
    for cause in rule.get("causes") or []:
        if cause["test_id"] not in own:
            elsewhere.setdefault(cause["test_id"], []).append(cause)
    rows += [
        {
            "rule": said,
            "test_id": test_id,
            "outcome": "a cause of another rule's test",
            "causes": _causes_text(causes),
            "message": "",
            "known": "",
        }
        for test_id, causes in elsewhere.items()
    ]
    return rows


def _causes_text(causes: list[dict[str, Any]] | None) -> str:
    """Causes as the page lists them, one a line: ``clause at step: fact [known: entry]`` (or ``[unexplained]``).

    None (a row read by its outcome: a report's table from before causes) says so rather than showing nothing."""
    if causes is None:
        return "(no causes recorded: judged by the outcome)"
    if not causes:
        return "(none of its causes names this rule)"
    return "\n".join(_cause_line(cause) for cause in causes)


def _cause_line(cause: dict[str, Any]) -> str:
    """One cause in a line: where it broke, what was seen, and which entry knows it (or that none does)."""
    where = f" at {cause['step']}" if cause.get("step") else ""
    known = f"known: {cause['known']}" if cause.get("known") else "unexplained"
    return f"{cause.get('clause')}{where}: {_shortened(str(cause.get('fact') or ''))} [{known}]"


def _failing_tests(rule: dict[str, Any]) -> str:
    """A not-judged rule's failing tests, one a line, with their outcomes."""
    return "\n".join(f"{f['test_id']} ({f['outcome']})" for f in rule["tests"]["failed"])


#: How much of a failure message the page shows (the statement's JSON has it whole).
PAGE_MESSAGE_CHARS = 700


def _shortened(message: str) -> str:
    if len(message) <= PAGE_MESSAGE_CHARS:
        return message
    return message[:PAGE_MESSAGE_CHARS] + f" ... ({len(message):,} characters; the whole message is in the .json)"


def _provenance_items(statement: dict[str, Any]) -> list[tuple[str, Any]]:
    items: list[tuple[str, Any]] = [(f"subject.{k}", v) for k, v in statement["subject"].items()]
    items += [(f"run.{k}", v) for k, v in statement["run"].items()]
    items += [(f"catalogue.{k}", v) for k, v in statement["catalogue"].items()]
    items += [(k, v) for k, v in statement["provenance"].items()]
    return items


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
