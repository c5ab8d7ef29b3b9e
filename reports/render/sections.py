"""The page's sections, one function each, in page order (:data:`SECTIONS`).

Each takes the collected tables (small, capped) and returns its HTML. A
section with nothing to say still appears, saying so ("no regressions"),
so an empty list is never mistaken for a missing one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from reports.collect import TableRows
from reports.render import svg
from reports.render.html import Column, listed, msg, num, pct, section, shown, table, when
from reports.render.timelines import flip_flops_section, scores_section, timelines_section
from reports.summary import rate_text

Tables = dict[str, TableRows]
#: Most tests the heat map draws (those with failures first).
HEATMAP_TESTS = 200
TABLE_ROWS = 300
#: Most failing cell x test rows the Blame section lists (every one is in blame.csv).
BLAME_ROWS = 1_000


def _rows(tables: Tables, name: str) -> TableRows:
    return tables.get(name, TableRows())


def _table_section(
    element_id: str,
    title: str,
    intro: str,
    rows: list[dict],
    total: int,
    columns: list[Column],
    noun: str,
    empty: str = "nothing to show",
    before: str = "",
    limit: int = TABLE_ROWS,
) -> str:
    """A section holding one table (``<id>-table``), capped at ``limit`` rows with a "showing N of M" note."""
    shown_rows = rows[:limit]
    content = table(shown_rows, columns, f"{element_id}-table", empty) + shown(
        len(shown_rows), max(total, len(rows)), noun
    )
    return section(element_id, title, intro, before + content)


def cells_section(tables: Tables) -> str:
    cells = _rows(tables, "cells")
    bars = [
        (row["cell"], row["pass_rate"], f"{rate_text(row['pass_rate'])} ({row['passed']}/{row['decided']})")
        for row in cells.rows
    ]
    columns = [
        Column("cell", "cell"),
        pct("pass_rate", "pass rate"),
        num("runs", "runs"),
        num("verdicts", "verdicts"),
        num("passed", "passed"),
        num("failed", "failed"),
        num("error", "error"),
        num("skipped", "skipped"),
        Column("target_kinds", "target kind"),
        Column("server_versions", "server version"),
    ]
    return _table_section(
        "cells",
        "Pass rate per cell",
        "A cell is one configuration: driver and version / target and version, topology, fail "
        "points. Pass rate = passed / decided (passed, failed, error).",
        cells.rows,
        cells.total,
        columns,
        "cells",
        "no verdicts",
        before=svg.bar_chart(bars) if bars else "",
    )


def heatmap_section(tables: Tables) -> str:
    cell_tests = _rows(tables, "cell_tests").rows
    cells = [row["cell"] for row in _rows(tables, "cells").rows]
    status: dict[tuple[str, str], tuple[str, str]] = {}
    trouble: dict[str, int] = defaultdict(int)
    seen: dict[str, set[str]] = defaultdict(set)
    for row in cell_tests:
        note = f"{row['passed']}/{row['decided']} passed" if row["decided"] else "skipped"
        status[(row["test_id"], row["cell"])] = (row["status"], note)
        trouble[row["test_id"]] += row["status"] in ("fail", "flaky")
        seen[row["test_id"]].add(row["status"])
    # failures first, then tests whose status differs between cells, then the rest
    ordered = sorted(trouble, key=lambda test: (-trouble[test], -len(seen[test]), test))
    tests = ordered[:HEATMAP_TESTS]
    cells = cells or sorted({cell for _, cell in status})
    content = (
        svg.legend() + '<div class="scroll">' + svg.heat_map(tests, cells, status) + "</div>"
        if tests
        else '<p class="empty">no tests</p>'
    )
    return section(
        "heatmap",
        "Tests x cells",
        "Each square is one test in one cell: green passes, red fails, orange is flaky (both seen), "
        "grey skipped, white not run. Tests with failures come first, then tests whose status differs "
        "between cells; hover for the counts.",
        content + shown(len(tests), len(ordered), "tests"),
    )


def _expectation(expected: bool | None) -> str:
    if expected is None:  # no expected-outcomes file was used
        return ""
    return "known deviation" if expected else "unexpected"


def _cause_said(row: dict) -> str:
    """A blame row's cause in a few lines: its clause and rule(s), the entry that explains it, the latest fact."""
    rules = ", ".join(row.get("rules") or [])
    head = f"{row.get('clause') or ''}" + (f" ({rules})" if rules else "")
    known = f"known: {row['known']}" if row.get("known") else "unexplained"
    return "\n".join(part for part in (head, known, row.get("fact") or "") if part)


def blame_section(tables: Tables) -> str:
    """Per cell, its causes counted by where they lie; then each cause of each failing test with where it lies, why
    and the evidence."""
    cells, blamed = _rows(tables, "blame_cells"), _rows(tables, "blame")
    cell_columns = [
        Column("cell", "cell"),
        num("failing_tests", "failing tests"),
        num("causes", "causes"),
        num("cause_target", "target"),
        num("cause_driver", "driver"),
        num("cause_pair", "pair"),
        num("cause_everywhere", "everywhere"),
        num("cause_undecided", "undecided"),
        num("known_causes", "known"),
        Column("summary", "in words"),
    ]
    cause_rows = [dict(row, said=_cause_said(row)) for row in blamed.rows[:BLAME_ROWS]]
    cause_columns = [
        Column("cell", "cell"),
        Column("test_id", "test"),
        msg("said", "cause (clause, rule, entry, fact)"),
        Column("status", "status"),
        Column("cause", "lies with"),
        Column("reason", "why"),
        Column("evidence", "evidence (other cells)", listed, "msg"),
        Column("expected", "expected outcome", _expectation),
        msg("message", "latest failure"),
    ]
    content = (
        table(cells.rows, cell_columns, "blame-cells-table", "no cells")
        + shown(len(cells.rows), max(cells.total, len(cells.rows)), "cells")
        + table(cause_rows, cause_columns, "blame-table", "no failing tests")
        + shown(len(cause_rows), max(blamed.total, len(blamed.rows)), "causes of failing tests")
    )
    return section(
        "blame",
        "Blame",
        "Each cause of each failing (or flaky) test in a cell, grouped across cells by its signature (its clause and "
        "rule and the expected-outcomes entry that explains it, or its clause and fact pattern when none does), and "
        "where it lies: the target (every driver that decided it there, at least two, shows it, and each is clear "
        "of it on another target), the driver (it shows it on every target that decided it, at least two, and "
        "another driver is clear of it on each), the pair (another driver is clear of it on that target and that "
        "driver is clear of it on another target), everywhere (every cell that decided it shows it, across at least "
        "two drivers and two targets), or undecided (the reason says what is missing). A cell is clear of a cause "
        "when the test passed there, or failed there without it having run everything (and, for an event's cause, "
        "having compared every event); a skip, or a failure that stopped the test early, is no evidence. The "
        "target is everything after the driver in the cell's name (topology and fail points included).",
        content,
    )


def _transition_section(
    tables: Tables,
    changes: tuple[str, ...],
    element_id: str,
    title: str,
    intro: str,
    message: str = "failure message",
    noun: str = "",
) -> str:
    rows = [
        dict(row, step=f"{row['previous_version']} \u2192 {row['version']}")
        for row in _rows(tables, "transitions").rows
        if row["change"] in changes
    ]
    columns = [
        Column("test_id", "test"),
        Column("axis", "axis"),
        Column("step", "versions"),
        Column("context", "in"),
        Column("status", "status"),
        msg("message", message),
    ]
    if len(changes) > 1:
        columns.insert(3, Column("change", "change"))
    noun = noun or changes[0] + "s"
    return _table_section(element_id, title, intro, rows, len(rows), columns, noun, f"no {noun}")


def regressions_section(tables: Tables) -> str:
    return _transition_section(
        tables,
        ("regression",),
        "regressions",
        "Regressions",
        "The test passed at the previous version on this axis (in version order) and fails "
        "or is flaky at this one, everything else in the cell being equal.",
    )


def fixes_section(tables: Tables) -> str:
    return _transition_section(
        tables,
        ("fix",),
        "fixes",
        "Fixes",
        "The test failed at the previous version and passes at this one; the message is the failure it no longer has.",
    )


def coverage_section(tables: Tables) -> str:
    return _transition_section(
        tables,
        ("now runs", "no longer runs"),
        "coverage",
        "Tests that start or stop running",
        "Skipped at the previous version on this axis and run at this one (now runs), or the "
        "reverse: what a release adds to or takes from what can be certified, with the skip "
        "reason.",
        message="skip reason",
        noun="coverage changes",
    )


def first_pass_section(tables: Tables) -> str:
    rows = [
        row
        for row in _rows(tables, "first_pass").rows
        if row["first_pass_version"] != row["first_version"] and row["versions_decided"]
    ]
    columns = [
        Column("test_id", "test"),
        Column("axis", "axis"),
        Column("context", "in"),
        Column("first_version", "first version tested"),
        Column("first_pass_version", "first passes at"),
        Column("last_version", "last version tested"),
        num("versions_decided", "versions"),
    ]
    return _table_section(
        "first-pass",
        "First version that passes",
        "Tests that did not pass at the first version tested: where each one starts to pass (blank: not yet).",
        rows,
        len(rows),
        columns,
        "tests",
        "every test passes from the first version tested",
    )


def flaky_section(tables: Tables) -> str:
    rows = [
        dict(row, interval=f"[{row['wilson_low']:.2f}, {row['wilson_high']:.2f}]")
        for row in _rows(tables, "flakiness").rows
        if row["classification"] in ("flaky", "one failed run")
    ]
    columns = [
        Column("test_id", "test"),
        Column("cell", "cell"),
        num("runs", "runs"),
        num("failures", "failures"),
        pct("flake_rate", "failure rate"),
        Column("interval", "Wilson 95%"),
        num("transitions", "transitions"),
        Column("classification", "classification"),
        msg("message", "latest failure"),
    ]
    return _table_section(
        "flaky",
        "Flaky tests",
        "Mixed outcomes for the same test in the same cell. The Wilson interval tells a real flake "
        "(3 failures in 20: [0.05, 0.36]) from one failed run (1 in 1: [0.21, 1.00], rerun to "
        "tell).",
        rows,
        len(rows),
        columns,
        "tests",
        "no flaky tests",
    )


def history_section(tables: Tables) -> str:
    runs = _rows(tables, "runs")
    in_time = sorted(runs.rows, key=lambda r: (r["started_at"] is None, r["started_at"], r["run_id"]))
    points = [
        (
            row["cell"],
            row["pass_rate"],
            (
                f"{row['run_id']}\n{when(row['started_at'])}\n{row['cell']}\n"
                f"{rate_text(row['pass_rate'])} ({row['passed']}/{row['decided']})"
            ),
        )
        for row in in_time
    ]
    columns = [
        Column("started_at", "started (UTC)", when),
        Column("run_id", "run"),
        Column("cell", "cell"),
        Column("cell_label", "matrix cell"),
        num("repeat", "repeat"),
        pct("pass_rate", "pass rate"),
        num("passed", "passed"),
        num("failed", "failed"),
        num("error", "error"),
        num("skipped", "skipped"),
        Column("sources", "from"),
    ]
    return _table_section(
        "history",
        "Run history",
        "Pass rate of each run in time order, one colour per cell; the newest runs first in the table.",
        list(reversed(in_time)),
        runs.total,
        columns,
        "runs",
        "no runs",
        before=svg.history_chart(points) if points else "",
        limit=100,
    )


@dataclass(frozen=True)
class TableSection:
    """A section that is one collected table shown as it is: what most sections are."""

    element_id: str
    table: str
    title: str
    intro: str
    columns: tuple[Column, ...]
    noun: str
    empty: str = "nothing to show"

    def __call__(self, tables: Tables) -> str:
        rows = _rows(tables, self.table)
        return _table_section(
            self.element_id, self.title, self.intro, rows.rows, rows.total, list(self.columns), self.noun, self.empty
        )


COUNTS = (num("passed", "passed"), num("failed", "failed"), num("error", "error"), num("skipped", "skipped"))
clusters_section = TableSection(
    "clusters",
    "failure_clusters",
    "Failures by cause",
    "Failures grouped by error code, code name and message pattern (numbers, ids, ports and quoted values replaced), "
    "so many failures with one cause read as one line.",
    (
        num("failures", "failures"),
        num("tests", "tests"),
        num("cells", "cells"),
        num("error_code", "code"),
        Column("error_code_name", "code name"),
        msg("message_pattern", "message pattern"),
        Column("example_test", "example test"),
        Column("test_ids", "tests (up to 10)", listed, "msg"),
    ),
    "clusters",
    "no failures",
)
files_section = TableSection(
    "files",
    "cell_files",
    "Pass rate per spec file",
    "",
    (Column("cell", "cell"), Column("spec_file", "spec file"), pct("pass_rate", "pass rate"), *COUNTS),
    "rows",
)
fault_section = TableSection(
    "fault-survival",
    "fault_survival",
    "Fault survival (campaigns)",
    "Seeded fault campaigns: faults injected while a change stream was consumed, the driver's resumes, and what went "
    "wrong (lost, duplicated or reordered events; errors the spec does not allow to reach the application).",
    (
        Column("cell", "cell"),
        num("campaigns", "campaigns"),
        num("passed", "passed"),
        num("faults_injected", "faults injected"),
        num("resumes", "resumes"),
        num("events", "events"),
        num("anomalies", "anomalies"),
        num("disallowed_errors", "disallowed errors"),
    ),
    "cells",
    "no campaign records",
)
baseline_section = TableSection(
    "baseline",
    "baseline_diff",
    "Against the baseline",
    "Status per test and cell now and in the --baseline runs (absent: the baseline did not run it).",
    (
        Column("change", "change"),
        Column("test_id", "test"),
        Column("cell", "cell"),
        Column("baseline_status", "baseline"),
        Column("status", "now"),
        msg("message", "latest failure"),
    ),
    "changes",
    "no baseline given, or nothing changed",
)
unbuilt_section = TableSection(
    "unbuilt",
    "unbuilt_cells",
    "Cells that could not be built or run",
    "",
    (
        Column("matrix", "matrix"),
        Column("cell", "cell"),
        Column("stage", "stage"),
        msg("reason", "reason"),
        Column("at", "at"),
    ),
    "cells",
    "none",
)
problems_section = TableSection(
    "input-problems",
    "input_problems",
    "Input problems",
    "Lines and files that are not result records: counted and named, never dropped silently.",
    (Column("file", "file"), Column("problem", "problem"), num("lines", "lines"), msg("example", "example")),
    "problems",
    "none: every line was a record",
)


#: The page, in order: (element id, contents-bar name, section builder).
SECTIONS: list[tuple[str, str, Callable[[Tables], str]]] = [
    ("cells", "Cells", cells_section),
    ("heatmap", "Heat map", heatmap_section),
    ("blame", "Blame", blame_section),
    ("regressions", "Regressions", regressions_section),
    ("fixes", "Fixes", fixes_section),
    ("flaky", "Flaky", flaky_section),
    ("timelines", "Timelines", timelines_section),
    ("flip-flops", "Flip-flops", flip_flops_section),
    ("scores", "Scores", scores_section),
    ("clusters", "Failure causes", clusters_section),
    ("baseline", "Baseline", baseline_section),
    ("coverage", "Coverage changes", coverage_section),
    ("first-pass", "First pass", first_pass_section),
    ("fault-survival", "Fault survival", fault_section),
    ("history", "History", history_section),
    ("files", "Spec files", files_section),
    ("unbuilt", "Unbuilt cells", unbuilt_section),
    ("input-problems", "Input problems", problems_section),
]
