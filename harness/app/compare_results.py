"""``harness compare BEFORE AFTER``: do two results files give the same verdicts, test by test?

A refactoring, a new harness release or a changed executor must leave every verdict as it was, except for time.
Comparing two runs by hand means leaving out what only one execution can have: run ids, times, durations, and
the messages and facts that quote a session id, a cursor id or a cluster time. What is compared is what a verdict
*is*: per test id, the outcome its attempts come to (:func:`harness.record.outcomes.outcome_of`, so a test that
failed then passed is ``flaky`` on both sides or on neither), and its causes as the engine classified them (clause,
step, path, the rules each cause can stand for and the expected-outcomes entry that explained it), in order; a
server address in a step keeps its host and loses its port (a harness-started target listens where it can).

Exit status: 0 when every test has the same verdict on both sides; 1 when a test differs or is on one side only
(each said in one line); 2 when a file cannot be read.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from harness.engine.results_store import read_records
from harness.record.outcomes import outcome_of

#: Lines printed per kind of difference before the rest are counted.
SHOWN = 40
#: A server's address in a step (``configureFailPoint ... on 127.0.0.1:39075``): the port is each run's own.
ADDRESS = re.compile(r"\b(\d{1,3}(?:\.\d{1,3}){3}|localhost|\[[0-9A-Fa-f:]+\]):\d{2,5}\b")


def add_compare_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("before", type=Path, help="a results file (JSON lines), the reference")
    parser.add_argument("after", type=Path, help="a results file to compare with it")


def verdicts(path: Path) -> dict[str, tuple[str, tuple[tuple[Any, ...], ...]]]:
    """Each test id's verdict: the outcome of its attempts and the causes of its last attempt."""
    attempts: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in read_records(path):
        if isinstance(record, dict) and isinstance(record.get("test_id"), str):
            attempts[record["test_id"]].append(record)
    found = {}
    for test_id, records in attempts.items():
        records.sort(key=lambda record: int(record.get("attempt") or 1))
        outcome = outcome_of(str(record.get("outcome")) for record in records)
        found[test_id] = (outcome, tuple(_cause(cause) for cause in records[-1].get("causes") or ()))
    return found


def _cause(cause: Any) -> tuple[Any, ...]:
    if not isinstance(cause, dict):
        return (repr(cause),)
    return (
        cause.get("clause"),
        ADDRESS.sub(r"\1:PORT", str(cause.get("step") or "")),
        cause.get("path") or "",
        tuple(cause.get("rules") or ()),
        cause.get("known") or "",
    )


def differences(before: dict[str, Any], after: dict[str, Any]) -> dict[str, list[str]]:
    """What differs, by kind: tests on one side only, outcomes, causes."""
    found: dict[str, list[str]] = {"only before": [], "only after": [], "outcome": [], "causes": []}
    for test_id in sorted(before.keys() | after.keys()):
        if test_id not in after:
            found["only before"].append(f"{test_id} ({before[test_id][0]})")
        elif test_id not in before:
            found["only after"].append(f"{test_id} ({after[test_id][0]})")
        elif before[test_id][0] != after[test_id][0]:
            found["outcome"].append(f"{test_id}: {before[test_id][0]} -> {after[test_id][0]}")
        elif before[test_id][1] != after[test_id][1]:
            found["causes"].append(
                f"{test_id} ({after[test_id][0]}): {_said(before[test_id][1])} -> {_said(after[test_id][1])}"
            )
    return found


def _said(causes: tuple[tuple[Any, ...], ...]) -> str:
    return "[" + "; ".join(" ".join(str(part) for part in cause if part not in ("", ())) for cause in causes) + "]"


def command_compare(args: argparse.Namespace) -> int:
    sides = {}
    for name in ("before", "after"):
        path: Path = getattr(args, name)  # argparse's namespace: plain data, the two arguments declared above
        try:
            sides[name] = verdicts(path)
        except OSError as exc:
            print(f"harness compare: cannot read {path}: {exc.strerror or exc}")
            return 2
    found = differences(sides["before"], sides["after"])
    count = sum(len(lines) for lines in found.values())
    if not count:
        print(f"same verdicts: {len(sides['before'])} tests, each with the same outcome and causes on both sides")
        return 0
    for kind, lines in found.items():
        for line in lines[:SHOWN]:
            print(f"{kind}: {line}")
        if len(lines) > SHOWN:
            print(f"{kind}: ... and {len(lines) - SHOWN} more")
    shared = len(sides["before"].keys() & sides["after"].keys())
    print(
        f"verdicts differ: {count} test(s) ({', '.join(f'{len(v)} {k}' for k, v in found.items() if v)}); "
        f"{shared} test(s) on both sides"
    )
    return 1
