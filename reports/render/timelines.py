"""The page's Timelines, Flip-flops and Scores sections (docs/reports.md, "Timelines" and "Scores").

A test's timeline on the page is the list of its status changes in one configuration (``first_changes``: the
first run of each change, the versions that changed since the run before, the causes), under an anchor of its
own, ``#timeline-<digest of configuration and test>``; each row of Flip-flops links to it, and each block says
the ``harness history`` command that prints every run. Every run of every test is not on the page: that is
runs x tests rows (``harness history``, ``harness query "SELECT ... FROM timelines"``).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from html import escape
from typing import Any

from reports.collect import TableRows
from reports.render.html import Column, msg, num, pct, section, shown, table, when

Tables = dict[str, TableRows]
#: Most configuration x test blocks the Timelines section shows (every change is in first_changes.csv).
TIMELINE_BLOCKS = 200


def timeline_anchor(configuration: str, test_id: str) -> str:
    """The element id of a configuration x test's timeline block."""
    digest = hashlib.sha1(f"{configuration}\n{test_id}".encode()).hexdigest()[:12]
    return f"timeline-{digest}"


def history_command(configuration: str, test_id: str) -> str:
    return f"harness history '{test_id}' --cell '{configuration}' --history DIR"


def _causes(text: Any) -> str:
    if not text:
        return ""
    return "\n".join(f"{c.get('clause')}: {c.get('fact')}" for c in json.loads(text))


CHANGE_COLUMNS = [
    Column("started_at", "first run (UTC)", when),
    Column("run_id", "run"),
    Column("change", "change"),
    Column("changed_versions", "versions changed since the run before"),
    Column("previous_run_id", "run before"),
    Column("causes", "causes", _causes, "msg"),
    msg("message", "message"),
]


def timelines_section(tables: Tables) -> str:
    changes = tables.get("first_changes", TableRows())
    blocks: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in changes.rows:
        blocks[(row["configuration"], row["test_id"])].append(row)
    ordered = sorted(blocks, key=lambda key: (-len(blocks[key]), key))
    parts = []
    for configuration, test_id in ordered[:TIMELINE_BLOCKS]:
        anchor = timeline_anchor(configuration, test_id)
        parts.append(
            f'<div id="{anchor}"><h3>{escape(test_id)} <span class="note">on {escape(configuration)}</span></h3>'
            f'<p class="note">every run: <code>{escape(history_command(configuration, test_id))}</code></p>'
            + table(blocks[(configuration, test_id)], CHANGE_COLUMNS, f"{anchor}-table")
            + "</div>"
        )
    content = "".join(parts) or '<p class="empty">no test changed status</p>'
    return section(
        "timelines",
        "Timelines: where a test changed status",
        "Per configuration (a cell without its versions) and test, the first run of each status change, the "
        "versions that changed since the run before it and the causes of a failure; a skip changes nothing.",
        content
        + shown(min(len(ordered), TIMELINE_BLOCKS), len(ordered), "tests that changed")
        + shown(len(changes.rows), changes.total, "changes"),
    )


def flip_flops_section(tables: Tables) -> str:
    flips = tables.get("flip_flops", TableRows())
    rows = "".join(
        "<tr>"
        f'<td><a href="#{timeline_anchor(row["configuration"], row["test_id"])}">{escape(row["test_id"])}</a></td>'
        f'<td>{escape(row["configuration"])}</td><td class="num">{row["changes"]}</td>'
        f"<td>{escape(when(row['first_change_at']))}</td><td>{escape(when(row['last_change_at']))}</td>"
        f'<td class="msg">{escape(row["sequence"])}</td><td>{escape(", ".join(row["rules"] or []))}</td>'
        "</tr>"
        for row in flips.rows
    )
    head = "".join(
        f"<th>{name}</th>"
        for name in ("test (its timeline)", "configuration", "changes", "first", "last", "changes in order", "rules")
    )
    window = flips.rows[0]["window_days"] if flips.rows else None
    content = (
        f'<div class="scroll"><table id="flip-flops-table"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody>'
        "</table></div>"
        if rows
        else '<p class="empty" id="flip-flops-table">no test changed status more than once</p>'
    )
    return section(
        "flip-flops",
        "Flip-flops",
        "Tests that changed status more than once"
        + (f" in the {window} days up to the latest run." if window else " in the window.")
        + " Each links to its timeline.",
        content + shown(len(flips.rows), flips.total, "tests"),
    )


def scores_section(tables: Tables) -> str:
    rules = tables.get("rule_scores", TableRows())
    exclusive = tables.get("exclusive_failures", TableRows())
    rule_columns = [
        Column("cell", "cell"),
        Column("rule_area", "rule area"),
        pct("share_met", "rules met"),
        num("rules_met", "met"),
        num("rules_not_met", "not met"),
        num("rules_neutral", "neutral"),
    ]
    exclusive_columns = [
        Column("axis", "axis"),
        Column("name", "name"),
        num("compared_within", "compared on"),
        num("exclusive_causes", "causes only it shows"),
        num("exclusive_tests", "tests"),
        num("score", "score"),
    ]
    return section(
        "scores",
        "Scores",
        "Share of rules met per cell and rule area (a rule with nothing decided is neutral), and per driver "
        "(target) the failure causes no other driver on that target (target with that driver) shows: "
        "docs/reports.md, 'Scores'.",
        table(rules.rows, rule_columns, "rule-scores-table", "no rules named by the verdicts")
        + shown(len(rules.rows), rules.total, "rows")
        + table(exclusive.rows, exclusive_columns, "exclusive-failures-table", "no verdicts")
        + shown(len(exclusive.rows), exclusive.total, "rows"),
    )
