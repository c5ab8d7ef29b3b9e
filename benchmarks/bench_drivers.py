"""What a driver under test costs the harness: the main job per driver, and one operation's round trip.

The Java and Go executors are built (or found in the harness's cache) before the clock starts; the build
time is a column of its own.

An executor driver (another process speaking docs/executor-protocol.md) adds a JSON round trip to every
driver-port call. The number to read is the ratio to in-process pymongo measured in the same run, on the
same machine, with the rounds interleaved so drift hits every driver alike; absolute seconds on a shared
two-core machine are not. The issue's goal: the main job with ``--driver node`` within 2x of ``--driver
pymongo``'s wall time; issue 33 tightens it to 1.5x for every executor driver.

Where the time goes: every result record has its test's ``duration_s``, so the round with the best wall is split
per driver into the time outside the tests (the run's start-up and teardown: the target, the executor's process,
a JVM), the tests that waited a whole iteration budget for a change that never came (no early verdict could be
given), and what every other test took beyond the same test with pymongo. A hand-written part of the page (what
was changed, what is left) is kept across runs below :data:`NOTES_MARKER`.

    python -m benchmarks.bench_drivers                    # every driver installed here, 2 rounds
    python -m benchmarks.bench_drivers --rounds 1 --drivers pymongo,node

Writes ``benchmarks/RESULTS-drivers.md`` and ``.json`` (``--out`` to change).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from harness.core.model import EntitySpec, Operation
from harness.core.project_data import checkout_root
from harness.engine.run import HarnessRun, RunOptions

REPO = checkout_root() or Path.cwd()
SHARED = REPO.parent / "shared" / "specs" / "upstream"
#: The README's main job, less the results file.
MAIN_JOB = [
    "--specs",
    str(SHARED / "legacy"),
    "--specs",
    str(SHARED / "unified"),
    "--specs",
    "project:scenarios/supplementary",
    "--suite",
    "all",
    "--strict",
    "-q",
]
ALL_DRIVERS = ("pymongo", "pymongo-async", "pymongo-executor", "node", "java", "go", "rust")
#: Executors built on first use (a JVM classpath, a Go or Rust binary): built before the clock starts, and the build
#: measured apart (cold, or from the harness's cache).
BUILT = {"java": ("mvn", "java"), "go": ("go",), "rust": ("cargo",)}
BASELINE = "pymongo"
#: The issue's goal: an executor driver's main job within this many times pymongo's (issue 33, item 2).
GOAL_RATIO = 1.5
#: The main job's iteration budget (the spec runner's default); a test whose no-change cause waited at least
#: :data:`FULL_WAIT_SHARE` of it waited out its budget: no early verdict ended the wait.
BUDGET_S = 10.0
FULL_WAIT_SHARE = 0.9
#: A test this much slower than with pymongo is listed by name in the breakdown; the others are summed.
SLOW_TEST_S = 0.5
#: Everything below this line of the page is hand-written and kept when the benchmark rewrites the page.
NOTES_MARKER = "<!-- notes: kept by bench_drivers.py when it rewrites this page -->"


@dataclass
class DriverRow:
    """One driver's measurements across the rounds."""

    name: str
    walls_s: list[float] = field(default_factory=list)
    exit_codes: list[int] = field(default_factory=list)
    outcomes: dict[str, int] = field(default_factory=dict)
    verdicts: dict[str, str] = field(default_factory=dict)
    round_trip_ms: dict[str, float] = field(default_factory=dict)
    driver: dict[str, Any] = field(default_factory=dict)
    problem: str = ""
    #: Seconds to get a built executor's command line before the first round (0 for the others).
    build_s: float = 0.0
    #: Each test's ``duration_s`` and its full-budget no-change waits, from the round with the best wall.
    durations: dict[str, float] = field(default_factory=dict)
    budget_waits: dict[str, float] = field(default_factory=dict)


def available(name: str) -> str:
    """Why ``name`` cannot be measured here ('' when it can): an executor whose program is not installed."""
    if name == "node":
        node_modules = REPO / "harness" / "drivers" / "node" / "node_modules" / "mongodb"
        if not node_modules.is_dir():
            return (
                f"the Node executor's packages are not installed ({node_modules}: npm ci --prefix harness/drivers/node)"
            )
    missing = [tool for tool in BUILT.get(name, ()) if shutil.which(tool) is None]
    return f"{' and '.join(missing)} not installed" if missing else ""


def build(name: str) -> tuple[float, str]:
    """Seconds to build (or find in the cache) a built executor, and why it failed ('' when it did not)."""
    if name not in BUILT:
        return 0.0, ""
    from harness.engine.plugins import load_plugins

    began = time.perf_counter()
    try:
        load_plugins().executor_command(name)  # its set-up builds it (or finds it in the cache)
    except Exception as exc:  # any build failure is a row that says why, not a crashed benchmark
        return time.perf_counter() - began, f"build failed: {exc}"
    return time.perf_counter() - began, ""


def main_job(name: str, jobs: int) -> tuple[float, int, list[dict[str, Any]]]:
    """Wall seconds, exit status and records of one main job with ``--driver name``."""
    with tempfile.TemporaryDirectory(prefix="bench-drivers-") as scratch:
        results = Path(scratch) / "results.jsonl"
        command = ["harness", "run", *MAIN_JOB, "-j", str(jobs), "--driver", name, "--results", str(results)]
        began = time.perf_counter()
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - began
        records = [json.loads(line) for line in results.read_text().splitlines()] if results.exists() else []
        if done.returncode not in (0, 1):
            sys.stderr.write(done.stdout[-2000:] + done.stderr[-2000:])
        return wall, done.returncode, records


def round_trips(name: str, count: int) -> dict[str, float]:
    """Median milliseconds of one ``find`` and one ``insertOne`` through the driver port, on the embedded target."""
    options = RunOptions(target="embedded", driver=name, expected="none")
    with HarnessRun(options) as run:
        scope = run.driver.open_scope(run.driver_uri, iteration_timeout_s=10.0)
        try:
            scope.create_entity(
                EntitySpec("client", "client0", {"id": "client0", "observeEvents": ["commandStartedEvent"]})
            )
            scope.create_entity(
                EntitySpec("database", "db0", {"id": "db0", "client": "client0", "databaseName": "bench_drivers"})
            )
            scope.create_entity(
                EntitySpec("collection", "coll0", {"id": "coll0", "database": "db0", "collectionName": "rt"})
            )
            timings: dict[str, list[float]] = {"find": [], "insertOne": []}
            for index in range(count):
                for operation in (
                    Operation("insertOne", "coll0", {"document": {"_id": index}}),
                    Operation("find", "coll0", {"filter": {"_id": index}}),
                ):
                    began = time.perf_counter()
                    scope.run(operation)
                    timings[operation.name].append((time.perf_counter() - began) * 1000)
            return {op: statistics.median(values) for op, values in timings.items()}
        finally:
            scope.close()


def budget_waits(records: list[dict[str, Any]]) -> dict[str, float]:
    """test id -> seconds, for the tests that waited out a whole iteration budget for a change: a no-change cause
    that waited that long, or a test that took that long (a prose check may fail on what it sent before it reports
    the change it waited for; nothing else in the main job takes as long as a budget)."""
    full = FULL_WAIT_SHARE * BUDGET_S
    waits: dict[str, float] = {}
    for record in records:
        waited = sum(
            float(cause.get("waited_s") or 0.0)
            for cause in record.get("causes") or []
            if cause.get("clause") == "no-change" and float(cause.get("waited_s") or 0.0) >= full
        )
        took = float(record.get("duration_s") or 0.0)
        if waited or took >= full:
            waits[record["test_id"]] = max(waited, took)
    return waits


def measure(drivers: list[str], rounds: int, jobs: int, trips: int) -> list[DriverRow]:
    rows = {name: DriverRow(name) for name in drivers}
    for name, row in rows.items():
        row.problem = available(name)
        if not row.problem:
            row.build_s, row.problem = build(name)
    for _ in range(rounds):  # interleaved: every driver once per round
        for name, row in rows.items():
            if row.problem:
                continue
            wall, code, records = main_job(name, jobs)
            if not row.walls_s or wall < min(row.walls_s):
                row.durations = {r["test_id"]: float(r.get("duration_s") or 0.0) for r in records}
                row.budget_waits = budget_waits(records)
            row.walls_s.append(wall)
            row.exit_codes.append(code)
            row.outcomes = dict(Counter(r["outcome"] for r in records))
            row.verdicts = {r["test_id"]: r["outcome"] for r in records}
            row.driver = records[0].get("driver", {}) if records else {}
    for name, row in rows.items():
        if not row.problem:
            row.round_trip_ms = round_trips(name, trips)
    return list(rows.values())


def render(rows: list[DriverRow], args: argparse.Namespace) -> str:
    base = next((r for r in rows if r.name == BASELINE and r.walls_s), None)
    base_wall = min(base.walls_s) if base else None
    lines = [
        "# The drivers under test: main job and round trip, per driver",
        "",
        (
            f"Measured {datetime.now().isoformat(timespec='seconds')} by `python -m benchmarks.bench_drivers "
            f"--rounds {args.rounds} -j {args.jobs}`, on {os.cpu_count()} CPUs, Python {platform.python_version()}, "
            "the embedded SecantusDB. Wall is the best of the rounds (rounds interleave the drivers); the ratio is "
            f"to `--driver {BASELINE}` in the same run; the goal for an executor driver is at most {GOAL_RATIO:g} "
            "(issue 33)."
        ),
        "",
        (
            "| driver | reported as | wall (s) | ratio | exit | outcomes | verdicts differing from pymongo "
            "| find (ms) | insertOne (ms) | build (s) |"
        ),
        "| --- | --- | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        if row.problem:
            lines.append(f"| {row.name} | not measured: {row.problem} | | | | | | | | |")
            continue
        wall = min(row.walls_s)
        ratio = f"{wall / base_wall:.2f}" if base_wall else ""
        differing = sum(1 for t, o in row.verdicts.items() if base and base.verdicts.get(t) != o) if base else ""
        reported = " ".join(str(row.driver.get(k, "")) for k in ("name", "version", "language")).strip()
        outcomes = ", ".join(f"{n} {o}" for o, n in sorted(row.outcomes.items()))
        lines.append(
            f"| {row.name} | {reported} | {wall:.2f} | {ratio} | {','.join(map(str, row.exit_codes))} | {outcomes} "
            f"| {differing} | {row.round_trip_ms.get('find', 0):.2f} | {row.round_trip_ms.get('insertOne', 0):.2f} "
            f"| {row.build_s:.1f} |"
        )
    lines.extend(breakdown(rows, base))
    return "\n".join(lines) + "\n"


def breakdown(rows: list[DriverRow], base: DriverRow | None) -> list[str]:
    """The best round of each driver, split: outside the tests, whole-budget waits, and the other tests' extra over
    the same test with pymongo (by name when one is :data:`SLOW_TEST_S` slower, else summed)."""
    if base is None:
        return []
    lines = [
        "",
        "## Where the time goes (measured in this run)",
        "",
        (
            "The round with the best wall of each driver, from its results' `duration_s`: *outside tests* is the wall "
            "less the tests' durations (start-up: the target, the executor's process and runtime, the handshake; "
            f"teardown); *budget waits* are the tests whose no-change cause waited {FULL_WAIT_SHARE:.0%} or more of "
            f"the {BUDGET_S:g} s iteration budget, or took that long (a change the driver lost, and no early verdict); "
            f"*extra over "
            f"{BASELINE}* compares each other test with the same test in the {BASELINE} run."
        ),
        "",
        (
            "| driver | wall (s) | outside tests (s) | in tests (s) | budget waits (s, tests) "
            f"| tests >= {SLOW_TEST_S:g} s slower than {BASELINE} (s, tests) | every other test (s, ms per test) |"
        ),
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    slow_tests: dict[str, list[str]] = {}
    for row in rows:
        if row.problem or not row.durations:
            continue
        wall = min(row.walls_s)
        in_tests = sum(row.durations.values())
        waits = sum(row.durations[t] for t in row.budget_waits)
        extra = {
            test: took - base.durations[test]
            for test, took in row.durations.items()
            if test in base.durations and test not in row.budget_waits
        }
        slow = {t: e for t, e in extra.items() if e >= SLOW_TEST_S}
        rest = [e for t, e in extra.items() if t not in slow]
        slow_tests[row.name] = [f"{short(t)} (+{e:.2f} s)" for t, e in sorted(slow.items(), key=lambda te: -te[1])]
        per_test = 1000 * sum(rest) / len(rest) if rest else 0.0
        lines.append(
            f"| {row.name} | {wall:.2f} | {wall - in_tests:.2f} | {in_tests:.2f} "
            f"| {waits:.2f} ({len(row.budget_waits)}) | {sum(slow.values()):+.2f} ({len(slow)}) "
            f"| {sum(rest):+.2f} ({per_test:+.1f}) |"
        )
    for name, tests in slow_tests.items():
        waited = next(r for r in rows if r.name == name).budget_waits
        if tests or waited:
            lines.append("")
            listed = "; ".join(f"{short(t)} ({s:.1f} s)" for t, s in waited.items())
            lines.append(f"- **{name}**: budget waits: {listed or 'none'}")
            if tests:
                lines.append(f"  - slower by {SLOW_TEST_S:g} s or more: {'; '.join(tests)}")
    return lines


def short(test_id: str) -> str:
    """A test id short enough for a list: its file and the description's first words (rule ids, prose number)."""
    head, _, rest = test_id.partition("::")
    words = rest.split(": ")[0]
    return f"{head}::{words[:70]}{'...' if len(words) > 70 else ''}"


def kept_notes(page: Path) -> str:
    """The hand-written part of an existing page (from :data:`NOTES_MARKER` on), '' when there is none."""
    if not page.exists():
        return ""
    text = page.read_text()
    at = text.find(NOTES_MARKER)
    return "" if at < 0 else "\n" + text[at:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drivers", default=",".join(ALL_DRIVERS))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("-j", "--jobs", type=int, default=1)
    parser.add_argument("--round-trips", type=int, default=200)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "RESULTS-drivers")
    args = parser.parse_args(argv)
    rows = measure(args.drivers.split(","), args.rounds, args.jobs, args.round_trips)
    page = render(rows, args)
    args.out.with_suffix(".md").write_text(page + kept_notes(args.out.with_suffix(".md")))
    args.out.with_suffix(".json").write_text(json.dumps([row.__dict__ for row in rows], indent=1, default=str))
    print(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
