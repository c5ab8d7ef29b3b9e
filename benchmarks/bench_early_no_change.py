"""What the early no-change verdict saves: a lost change fails when it can no longer come, not at the budget's end.

Spec tests whose awaited change never comes (a ``$match`` filters it, it is written to another collection, the driver
drops it, a second change is awaited after the only one) and control tests whose change comes, late or not, run on
the embedded SecantusDB with the pymongo adapters twice per round: with the early verdict (the default) and with
``RunSettings.early_no_change`` off, the budget baseline, in the same process, rounds interleaved so the machine's
load falls on both alike. The figure is the ratio early / baseline of the lost tests' wall time, per budget; every
test's verdict and cause clause must be the same on both sides (the run fails otherwise).

    python -m benchmarks.bench_early_no_change                   # budgets 10 s (the default) and 2 s, 2 rounds
    python -m benchmarks.bench_early_no_change --budgets 10 --rounds 1 --drivers pymongo
    python -m benchmarks.bench_early_no_change --budgets 10 --rounds 1 --drivers pymongo,node,java,go

A driver in an executor (``node``, ``java``, ``go``, ``pymongo-executor``) gets the verdict through its command log
(docs/executor-protocol.md 6.4.2); the case that patches pymongo in this process is left out for it.

Writes ``benchmarks/RESULTS-early-no-change.md`` and ``.json`` (``--out`` to change).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.engine.run import HarnessRun, RunOptions
from harness.engine.run_settings import RunSettings
from harness.formats.loaders import load_file

HERE = Path(__file__).resolve().parent

_HEAD = """
description: bench-early-no-change
schemaVersion: "1.7"
runOnRequirements:
  - topologies: [ replicaset ]
createEntities:
  - client: { id: client0, observeEvents: [ commandStartedEvent ], uriOptions: { appName: benchClient } }
  - database: { id: db0, client: client0, databaseName: bench_early }
  - collection: { id: coll0, database: db0, collectionName: coll }
  - collection: { id: other, database: db0, collectionName: other }
initialData:
  - { databaseName: bench_early, collectionName: coll, documents: [] }
  - { databaseName: bench_early, collectionName: other, documents: [] }
tests:
"""
_OPEN = """      - name: createChangeStream
        object: coll0
        arguments: {{ pipeline: {pipeline} }}
        saveResultAsEntity: stream0
"""
_INSERT = """      - name: insertOne
        object: {collection}
        arguments: {{ document: {{ _id: {id} }} }}
"""
_ITERATE = """      - name: iterateUntilDocumentOrError
        object: stream0
        expectResult: { operationType: insert }
"""
_BLOCK_GETMORE = """      - name: failPoint
        object: testRunner
        arguments:
          client: client0
          failPoint:
            configureFailPoint: failCommand
            mode: { times: 1 }
            data: { failCommands: [ getMore ], blockConnection: true, blockTimeMS: 1500, appName: benchClient }
"""

#: name -> (lost: the change never comes, operations). ``driver drops the change`` runs with pymongo patched.
CASES: dict[str, tuple[bool, str]] = {
    "filtered by $match": (
        True,
        _OPEN.format(pipeline="[ { $match: { operationType: delete } } ]") + _INSERT.format(collection="coll0", id=1),
    ),
    "written to another collection": (True, _OPEN.format(pipeline="[]") + _INSERT.format(collection="other", id=1)),
    "a second change after the only one": (
        True,
        _OPEN.format(pipeline="[]") + _INSERT.format(collection="coll0", id=1) + _ITERATE,
    ),
    "driver drops the change": (True, _OPEN.format(pipeline="[]") + _INSERT.format(collection="coll0", id=1)),
    "control: the change comes": (False, _OPEN.format(pipeline="[]") + _INSERT.format(collection="coll0", id=1)),
    "control: a held-back getMore delays it": (
        False,
        _OPEN.format(pipeline="[]") + _INSERT.format(collection="coll0", id=1) + _BLOCK_GETMORE,
    ),
}


def spec_file(folder: Path) -> Path:
    text = _HEAD + "".join(
        f'  - description: "{name}"\n    operations:\n{operations}{_ITERATE}' for name, (_, operations) in CASES.items()
    )
    path = folder / "bench-early-no-change.yml"
    path.write_text(text, encoding="utf-8")
    return path


@contextlib.contextmanager
def dropping_first_change(driver: str) -> Iterator[None]:
    """pymongo (or its async API) whose ``try_next`` drops the first change the server delivers."""
    if driver == "pymongo":
        from pymongo.change_stream import ChangeStream as Stream
    else:
        from pymongo.asynchronous.change_stream import AsyncChangeStream as Stream
    original = Stream.try_next
    dropped: list[Any] = []
    if driver == "pymongo":

        def lossy(self: Any) -> Any:
            change = original(self)
            if change is not None and not dropped:
                dropped.append(change)
                return None
            return change
    else:

        async def lossy(self: Any) -> Any:  # type: ignore[misc]
            change = await original(self)
            if change is not None and not dropped:
                dropped.append(change)
                return None
            return change

    Stream.try_next = lossy  # type: ignore[method-assign]
    try:
        yield
    finally:
        Stream.try_next = original  # type: ignore[method-assign]


#: The drivers whose pymongo runs in this process, so that ``driver drops the change`` can patch it; an executor's
#: driver runs in another process (docs/executor-protocol.md 6.4.2) and skips that case.
IN_PROCESS = ("pymongo", "pymongo-async")


def one_side(run: HarnessRun, tests: list[Any], driver: str, early: bool, budget_s: float) -> dict[str, Any]:
    """Every case once (but the patched one for a driver in an executor); its wall time, verdict and cause clauses."""
    assert run.runner is not None
    run.runner.settings.early_no_change, run.runner.settings.iteration_timeout_s = early, budget_s
    results: dict[str, Any] = {}
    for test in tests:
        if test.description == "driver drops the change" and driver not in IN_PROCESS:
            continue
        patch = (
            dropping_first_change(driver) if test.description == "driver drops the change" else contextlib.nullcontext()
        )
        started = time.monotonic()
        with patch:
            result = run.run_test(test)
        results[test.description] = {
            "wall_s": round(time.monotonic() - started, 3),
            "outcome": result.outcome,
            "clauses": [c["clause"] for c in result.record["causes"]],
            "waited_s": [c["waited_s"] for c in result.record["causes"] if c["clause"] == "no-change"],
            "fact": next((c["fact"] for c in result.record["causes"]), ""),
        }
    return results


def measure(drivers: list[str], budgets: list[float], rounds: int) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-early-") as folder:
        tests = load_file(spec_file(Path(folder)))
        for driver in drivers:
            settings = RunSettings(test_timeout_s=60.0)
            with HarnessRun(RunOptions(target="embedded", expected="none", driver=driver, settings=settings)) as run:
                for budget in budgets:
                    sides: dict[str, list[dict[str, Any]]] = {"early": [], "budget": []}
                    for n in range(rounds):
                        order = ("early", "budget") if n % 2 == 0 else ("budget", "early")
                        for side in order:
                            sides[side].append(one_side(run, tests, driver, side == "early", budget))
                            print(f"  {driver} budget {budget:g}s round {n + 1} {side}: done", flush=True)
                    figures[f"{driver} @ {budget:g}s"] = summarise(sides, budget)
    return figures


def summarise(sides: dict[str, list[dict[str, Any]]], budget: float) -> dict[str, Any]:
    ran = [name for name in CASES if name in sides["early"][0]]
    lost = [name for name in ran if CASES[name][0]]
    differing = sorted(
        name
        for name in ran
        for a in sides["early"]
        for b in sides["budget"]
        if (a[name]["outcome"], a[name]["clauses"]) != (b[name]["outcome"], b[name]["clauses"])
    )

    def lost_wall(side: str) -> float:
        return statistics.median(sum(r[name]["wall_s"] for name in lost) for r in sides[side])

    early, baseline = lost_wall("early"), lost_wall("budget")
    return {
        "budget_s": budget,
        "lost_tests": len(lost),
        "lost_wall_s": {"early": round(early, 2), "budget": round(baseline, 2)},
        "ratio": round(early / baseline, 3),
        "per_test_wall_s": {
            name: {side: statistics.median(r[name]["wall_s"] for r in sides[side]) for side in sides} for name in ran
        },
        "outcomes": {name: sides["early"][0][name]["outcome"] for name in ran},
        "verdicts_differing": sorted(set(differing)),
        "facts": {name: sides["early"][0][name]["fact"] for name in lost},
    }


def render(figures: dict[str, Any], args: argparse.Namespace) -> str:
    lines = [
        "# The early no-change verdict: lost changes against the budget baseline",
        "",
        (
            f"Measured {datetime.now().isoformat(timespec='seconds')} by `python -m benchmarks.bench_early_no_change "
            f"--rounds {args.rounds}`, on {os.cpu_count()} CPUs, Python {platform.python_version()}, the embedded "
            "SecantusDB. Each side ran the same spec tests in the same process, rounds interleaved; the ratio is the "
            "lost tests' wall time with the early verdict over the same tests with `RunSettings.early_no_change` "
            "off (the median of the rounds). A lost change's early verdict waits for one empty getMore after the "
            "write (SecantusDB holds an empty getMore 1 s when pymongo sends no `maxAwaitTimeMS`)."
        ),
        "",
        "| driver @ budget | lost tests | early (s) | budget baseline (s) | ratio | verdicts differing |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for key, row in figures.items():
        lines.append(
            f"| {key} | {row['lost_tests']} | {row['lost_wall_s']['early']:.2f} | {row['lost_wall_s']['budget']:.2f} "
            f"| {row['ratio']:.3f} | {len(row['verdicts_differing'])} |"
        )
    for key, row in figures.items():
        lines += ["", f"Per test, {key} (median wall time, s):", "", "| test | outcome | early | budget |"]
        lines.append("| --- | --- | ---: | ---: |")
        for name, walls in row["per_test_wall_s"].items():
            lines.append(f"| {name} | {row['outcomes'][name]} | {walls['early']:.2f} | {walls['budget']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--drivers", default="pymongo,pymongo-async")
    parser.add_argument("--budgets", default="10,2", help="iteration budgets in seconds, comma-separated")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS-early-no-change")
    args = parser.parse_args(argv)
    figures = measure(args.drivers.split(","), [float(b) for b in args.budgets.split(",")], args.rounds)
    args.out.with_suffix(".json").write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(render(figures, args), encoding="utf-8")
    print(render(figures, args))
    differing = [key for key, row in figures.items() if row["verdicts_differing"]]
    if differing:
        print(f"verdicts differ between the sides: {differing}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
