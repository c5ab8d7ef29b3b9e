"""Render the report: one self-contained HTML page from the small collected tables.

No network is needed to view it: style inline, plots drawn as inline SVG
(:mod:`reports.render.svg`), no scripts. Sections are listed in
:data:`reports.render.sections.SECTIONS`.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from reports.collect import TableRows


def render_report(
    tables: dict[str, TableRows], path: Path | str, *, title: str = "Change-stream conformance report"
) -> Path:
    """Write the page for ``tables`` (as :func:`reports.write.write_tables` returns them) to ``path``."""
    from reports.render.html import page
    from reports.render.sections import SECTIONS
    from reports.summary import headline, rate_text

    top = headline(tables)
    figures = [
        (rate_text(top.pass_rate), "pass rate"),
        (f"{top.verdicts:,}", "verdicts"),
        (f"{top.runs:,}", "runs"),
        (f"{top.cells:,}", "cells"),
        (f"{top.regressions:,}", "regressions"),
        (f"{top.fixes:,}", "fixes"),
        (f"{top.coverage_changes:,}", "start/stop running"),
        (f"{top.flaky:,}", "flaky tests"),
        (f"{top.clusters:,}", "failure causes"),
    ]
    if top.problems:
        figures.append((f"{top.problems:,}", "input problems"))
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    html = page(
        title,
        f"generated {generated} by harness report",
        figures,
        [(element_id, name, build(tables)) for element_id, name, build in SECTIONS],
    )
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(html, encoding="utf-8")
    return target
