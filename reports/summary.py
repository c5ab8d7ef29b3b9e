"""The report's headline numbers and the short text summary ``harness report`` prints.

Both the page's header figures and the terminal summary come from
:func:`headline`, computed from the small collected tables, so they agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reports.collect import TableRows

REGRESSIONS_LISTED = 5


@dataclass
class Headline:
    verdicts: int
    decided: int
    passed: int
    runs: int
    cells: int
    regressions: int
    fixes: int
    coverage_changes: int
    flaky: int
    clusters: int
    unbuilt: int
    problems: int
    file_problems: list[dict[str, Any]]

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.decided if self.decided else None


def _count(tables: dict[str, TableRows], name: str, key: str | None = None, *values: str) -> int:
    table = tables.get(name, TableRows())
    if key is None:
        return table.total
    return sum(1 for row in table.rows if row.get(key) in values)


def headline(tables: dict[str, TableRows]) -> Headline:
    cells = tables.get("cells", TableRows()).rows
    problems = tables.get("input_problems", TableRows()).rows
    return Headline(
        verdicts=sum(row["verdicts"] for row in cells),
        decided=sum(row["decided"] for row in cells),
        passed=sum(row["passed"] for row in cells),
        runs=_count(tables, "runs"),
        cells=_count(tables, "cells"),
        regressions=_count(tables, "transitions", "change", "regression"),
        fixes=_count(tables, "transitions", "change", "fix"),
        coverage_changes=_count(tables, "transitions", "change", "now runs", "no longer runs"),
        flaky=_count(tables, "flakiness", "classification", "flaky"),
        clusters=_count(tables, "failure_clusters"),
        unbuilt=_count(tables, "unbuilt_cells"),
        problems=_count(tables, "input_problems"),
        file_problems=[row for row in problems if row.get("lines") is None],
    )


def rate_text(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate * 100:.1f}%"


def summary_lines(tables: dict[str, TableRows]) -> list[str]:
    """A few lines for the terminal: cells and their pass rates, regressions, flaky tests, problems."""
    top = headline(tables)
    lines = [
        (
            f"{top.verdicts:,} verdicts from {top.runs:,} run(s) in {top.cells} cell(s); "
            f"pass rate {rate_text(top.pass_rate)} ({top.passed:,}/{top.decided:,} decided)"
        )
    ]
    lines += [
        f"  {rate_text(row['pass_rate']):>7}  {row['cell']}  ({row['passed']}/{row['decided']})"
        for row in tables["cells"].rows
    ]
    lines.append(
        f"{top.regressions} regression(s), {top.fixes} fix(es), {top.coverage_changes} test(s) starting or "
        f"stopping to run, {top.flaky} flaky test(s), {top.clusters} failure cluster(s)"
    )
    for kinds in (("regression",), ("now runs", "no longer runs")):
        changes = [row for row in tables["transitions"].rows if row["change"] in kinds]
        for row in changes[:REGRESSIONS_LISTED]:
            first_line = (row.get("message") or "").splitlines()[0:1]
            lines.append(
                f"  {row['change']} {row['axis']} {row['previous_version']} -> {row['version']} "
                f"[{row['context']}]: {row['test_id']}: {first_line[0] if first_line else ''}"
            )
        if len(changes) > REGRESSIONS_LISTED:
            lines.append(f"  ... and {len(changes) - REGRESSIONS_LISTED} more in the report")
    if top.unbuilt:
        lines.append(f"{top.unbuilt} matrix cell(s) could not be built or run (see unbuilt_cells)")
    for row in tables["input_problems"].rows:
        count = f" ({row['lines']} line(s))" if row.get("lines") is not None else ""
        lines.append(f"input problem: {row['file']}: {row['problem']}{count}")
    return lines
