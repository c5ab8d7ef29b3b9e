"""One test's timeline, as ``harness history TEST`` prints it.

The test is found by its id, else by its name, else by a part of its id; its timeline
(:func:`reports.timelines.timelines`, of that test's verdicts only) is collected: one row per configuration x
run, bounded by the runs of one test. ``--cell`` keeps the configurations whose name, or one of whose cells'
names, contains the text. A run that changed status is marked, with the versions that changed since the
previous decided run and the failure's causes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from reports import timelines
from reports.text_table import text_table

#: How many candidate tests an ambiguous TEST lists.
CANDIDATES = 20
COLUMNS = ("run", "started_at", "run_id", "status", "driver_version", "target_version", "server_version", "change")


class UnknownTest(LookupError):
    pass


def find_test(verdicts: DataFrame, test: str) -> str:
    """The test id ``test`` names (an id, a name, or a part of one id); raises :class:`UnknownTest`."""
    matches = (
        verdicts.where((F.col("test_id") == test) | (F.col("test") == test) | F.col("test_id").contains(test))
        .select("test_id", "test")
        .distinct()
        .limit(CANDIDATES + 1)
        .collect()
    )
    for exact in ("test_id", "test"):
        named = sorted({row["test_id"] for row in matches if row[exact] == test})
        if len(named) == 1:
            return named[0]
    ids = sorted({row["test_id"] for row in matches})
    if len(ids) == 1:
        return ids[0]
    if not ids:
        raise UnknownTest(f"no test {test!r} in the history")
    listed = "\n  ".join(ids[:CANDIDATES]) + ("\n  ..." if len(ids) > CANDIDATES else "")
    raise UnknownTest(f"{test!r} names {len(ids) if len(ids) <= CANDIDATES else 'more than 20'} tests:\n  {listed}")


@dataclass
class Timeline:
    test_id: str
    configuration: str
    runs: list[dict[str, Any]] = field(default_factory=list)


def test_timelines(verdicts: DataFrame, test_id: str, cell: str | None = None) -> list[Timeline]:
    """The timelines of ``test_id``, one per configuration (those ``cell`` names, when given)."""
    rows = (
        timelines.timelines(verdicts.where(F.col("test_id") == test_id))
        .orderBy("configuration", "run_number")
        .collect()
    )
    found: dict[str, Timeline] = {}
    for row in rows:
        found.setdefault(row["configuration"], Timeline(test_id, row["configuration"])).runs.append(row.asDict())
    return [
        line
        for line in found.values()
        if cell is None or cell in line.configuration or any(cell in (run["cell"] or "") for run in line.runs)
    ]


def _change(run: dict[str, Any]) -> str:
    if not run["changed"]:
        return ""
    said = f"{run['previous_status']} -> {run['status']}"
    if run["previous_status"] == "pass" and run["status"] in timelines.FAILING_STATUSES:
        said += " (first bad run)"
    versions = [
        f"{version} {run[f'previous_{version}']} -> {run[version]}"
        for version in timelines.VERSIONS
        if run[version] != run[f"previous_{version}"]
    ]
    return said + (f"; changed: {', '.join(versions)}" if versions else "; no version changed")


def _causes(run: dict[str, Any]) -> list[str]:
    if not run["changed"] or run["status"] not in timelines.FAILING_STATUSES:
        return []
    causes = json.loads(run["causes"]) if run["causes"] else []
    if not causes:
        return [f"    message: {run['message']}"] if run["message"] else []
    return [
        f"    cause: {c.get('clause')} at {c.get('step') or '-'}: {c.get('fact')} [{', '.join(c.get('rules') or [])}]"
        for c in causes
    ]


def timeline_text(line: Timeline) -> str:
    """A configuration's timeline of one test: a heading, one line per run, causes under each first bad run."""
    rows = [
        [
            run["run_number"],
            run["started_at"],
            run["run_id"],
            run["status"],
            run["driver_version"],
            run["target_version"],
            run["server_version"],
            _change(run),
        ]
        for run in line.runs
    ]
    table = text_table(COLUMNS, rows).splitlines()
    out = [f"{line.test_id} on {line.configuration}", *table[:2]]
    for run, text in zip(line.runs, table[2:], strict=True):
        out += [text, *_causes(run)]
    return "\n".join(out)
