"""Conformance statements as files: the JSON document, its page and a shields.io badge, per pair or matrix cell.

:mod:`reports.statements` decides every rule's verdict; this module writes
what it decides where ``harness certify`` and ``harness report`` put it
(``docs/certify.md``, "Files").
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from reports.statements import EXECUTOR_SUFFIX, build_statement, deviations_for, rows_from_cell_tests

#: Beside a report's statements: the rule catalogue they were judged against.
CATALOGUE_FILE = "rule-catalogue.json"


def _joined(value: Any) -> str | None:
    """A table's list-or-text value (``distinct_values`` gives ``a, b``) as text; None when empty."""
    text = ", ".join(value) if isinstance(value, list) else value
    return text or None


def shields_endpoint(statement: dict[str, Any]) -> dict[str, Any]:
    """A shields.io endpoint document (``https://img.shields.io/endpoint?url=...``): green when every rule judged
    here is met, yellow when only SHOULD-level rules are not, red when a MUST is not."""
    summary = statement["summary"]
    color = "brightgreen" if not summary["not_met"] else "yellow" if not summary["not_met_must"] else "red"
    judged = summary["met"] + summary["not_met"]
    return {
        "schemaVersion": 1,
        "label": "change streams",
        "message": f"{summary['met']}/{judged} rules met",
        "color": color,
    }


def write_statement(statement: dict[str, Any], directory: Path, stem: str) -> dict[str, Path]:
    """``<stem>.json`` (the statement), ``<stem>.html`` (the page), ``<stem>.badge.json`` (shields.io endpoint)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": directory / f"{stem}.json",
        "html": directory / f"{stem}.html",
        "badge": directory / f"{stem}.badge.json",
    }
    paths["json"].write_text(json.dumps(statement, indent=1, default=str) + "\n", encoding="utf-8")
    from reports.statement_page import render_html

    paths["html"].write_text(render_html(statement), encoding="utf-8")
    paths["badge"].write_text(json.dumps(shields_endpoint(statement)) + "\n", encoding="utf-8")
    return paths


def file_stem(text: str) -> str:
    """A file name for a pair or a cell: ``pymongo 4.20.0 / secantusdb ...`` -> ``pymongo-4.20.0_secantusdb-...``.

    Letters, digits, ``.`` and ``-`` only: Spark names an input file by its URL, so a ``+`` in a results file's name
    comes back as ``%2B`` and ``harness report`` says the file held no records."""
    kept = "".join(ch if ch.isalnum() or ch in ".-" else "-" if ch == " " else "_" for ch in text.strip())
    while "--" in kept or "_-" in kept or "-_" in kept:
        kept = kept.replace("--", "-").replace("_-", "_").replace("-_", "_")
    return kept.strip("-_") or "statement"


def matrix_statements(
    catalogue: dict[str, Any],
    cells: Iterable[dict[str, Any]],
    cell_tests: Iterable[dict[str, Any]],
    out_dir: Path,
    generated_at: str | None = None,
) -> list[dict[str, Any]]:
    """One statement per matrix cell, written to ``out_dir/<cell>.{json,html,badge.json}``; returns them.

    ``cells`` and ``cell_tests`` are the report's tables of those names (all their rows); the catalogue brings the
    rules and the expected-outcomes entries (``expectations``), which the harness side supplies. A cell of one
    iteration mode (its ``iteration_mode``) is judged with the entries that apply in that mode; a cell without one
    (records written before the mode) with every entry, as before.
    """
    tests = list(cell_tests)
    written = []
    for cell in cells:
        mode = cell.get("iteration_mode")  # None: a cell of records written before the mode, or of pytest testcases
        subject = {
            "driver": {
                "name": cell.get("driver_name"),
                "version": cell.get("driver_version"),
                **({"iteration_mode": mode} if mode else {}),
            },
            "target": {
                "name": cell.get("target_name"),
                "version": cell.get("target_version"),
                "kind": _joined(cell.get("target_kinds")),
                "topology": cell.get("topology"),
                "server_versions": cell.get("server_versions"),
            },
            "cell": cell["cell"],
        }
        driver = str(cell.get("driver_name")).removesuffix(EXECUTOR_SUFFIX)
        deviations = deviations_for(
            catalogue.get("expectations") or {}, str(cell.get("target_name")), driver, mode or None
        )
        provenance = {key: value for key, value in cell.items() if key != "cell"}
        statement = build_statement(
            catalogue,
            rows_from_cell_tests(tests, cell["cell"]),
            subject=subject,
            provenance={"from": "harness report (matrix cell)", **provenance},
            deviations=deviations,
            run={"runs": cell.get("runs"), "strict": None},
            generated_at=generated_at,
        )
        write_statement(statement, out_dir, file_stem(cell["cell"]))
        written.append(statement)
    return written


def statements_from_report(catalogue_file: Path, tables: dict[str, Any], out_dir: Path) -> str:
    """``harness report``'s statements: one per cell of its ``cells`` table, from ``cell_tests``, with the catalogue
    they were judged against beside them (``rule-catalogue.json``); returns the lines it prints.

    A table the report cut short (``TableRows.truncated``) would leave rules without their tests, so then no
    statement is written and the line says why.
    """
    from datetime import datetime, timezone

    catalogue = json.loads(Path(catalogue_file).read_text(encoding="utf-8"))
    cells, cell_tests = tables.get("cells"), tables.get("cell_tests")
    if cells is None or cell_tests is None:
        return "statements: none (the report has no cells or cell_tests table)"
    cut = [name for name, table in (("cells", cells), ("cell_tests", cell_tests)) if table.truncated]
    if cut:
        return f"statements: none written: the report kept only part of {', '.join(cut)} (too many cells x tests)"
    generated = datetime.now(timezone.utc).isoformat(timespec="seconds")
    written = matrix_statements(catalogue, cells.rows, cell_tests.rows, out_dir, generated)
    (Path(out_dir) / CATALOGUE_FILE).write_text(json.dumps(catalogue, indent=1) + "\n", encoding="utf-8")
    lines = [f"statements: {len(written)} in {out_dir}"]
    lines += [f"  {s['summary']['badge']}" for s in written]
    return "\n".join(lines)
