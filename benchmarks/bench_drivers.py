"""What a driver under test costs the harness: the main job per driver, and one operation's round trip.

The Java and Go executors are built (or found in the harness's cache) before the clock starts; the build
time is a column of its own.

An executor driver (another process speaking docs/executor-protocol.md) adds a JSON round trip to every
driver-port call. The number to read is the ratio to in-process pymongo measured in the same run, on the
same machine, with the rounds interleaved so drift hits every driver alike; absolute seconds on a shared
two-core machine are not. The issue's goal: the main job with ``--driver node`` within 2x of ``--driver
pymongo``'s wall time.

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
ALL_DRIVERS = ("pymongo", "pymongo-async", "pymongo-executor", "node", "java", "go")
#: Executors built on first use (a JVM classpath, a Go binary): built before the clock starts, and the build
#: measured apart (cold, or from the harness's cache).
BUILT = {"java": ("mvn", "java"), "go": ("go",)}
BASELINE = "pymongo"


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
    from harness.drivers.executor.known import BUILT_EXECUTORS

    began = time.perf_counter()
    try:
        BUILT_EXECUTORS[name]()
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
            f"to `--driver {BASELINE}` in the same run; the goal for an executor driver is at most 2."
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
    return "\n".join(lines) + "\n"


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
    args.out.with_suffix(".md").write_text(page)
    args.out.with_suffix(".json").write_text(json.dumps([row.__dict__ for row in rows], indent=1, default=str))
    print(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
