"""What the synthetic data must show, derived from the world, checked against the tables a side wrote.

    python benchmarks/planted_truth.py /tmp/bench-report/out-1000000/spark-all

The cross-check compares Spark with pandas; this compares either with the
truth, because the generator planted it (:mod:`synthetic_world`):

* **failing**: every cell x test where a behaviour always fails (and the
  test is not skipped there) is classified ``failing``, and nothing else is;
* **flaky**: every pair classified ``flaky`` is one where a flaky behaviour
  was planted (a planted flake may show no failure in a short sample, so
  this is one-way);
* **transitions** (Spark only; pandas does not make version tables): the
  changes along each version axis, counted per axis, test, version and
  change, equal the ones the world implies: regressions and fixes for tests
  whose outcome in every cell is fixed (no flake planted on them), and
  ``now runs`` / ``no longer runs`` (coverage that starts or stops with a
  version, from the real requirements) for every test.

Campaign records are left out (each seed is its own test id).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.pandas_baseline import cell_names
from benchmarks.synthetic_world import CELLS, DRIVERS, TARGETS, Cell, load_catalog, plan_for

EXAMPLES = 5


def report_cell_names() -> dict[Cell, str]:
    """Each world cell under the name the report gives it (built by the baseline's own naming)."""
    axes = pd.DataFrame(
        [
            {
                "format": "unified",
                "driver_name": "pymongo",
                "driver_version": c.driver_version,
                "target_name": c.target.name,
                "target_version": c.target.version,
                "topology": c.target.topology,
                "failpoints": c.target.failpoints,
                "network_faults": c.target.network_faults,
            }
            for c in CELLS
        ]
    )
    return dict(zip(CELLS, cell_names(axes), strict=True))


def planted() -> dict[str, Any]:
    """Statuses per (cell, test): ``skip``, ``fail`` (always), ``flaky`` (may fail) or ``pass``."""
    status: dict[tuple[Cell, str], str] = {}
    for test in load_catalog():
        for cell in CELLS:
            plan = plan_for(test, cell)
            if plan.skip:
                status[cell, test.test_id] = "skip"
            elif any(b.probability >= 1.0 for b in plan.failures):
                status[cell, test.test_id] = "fail"
            else:
                status[cell, test.test_id] = "flaky" if plan.failures else "pass"
    return status


def fixed_tests(status: dict[tuple[Cell, str], str]) -> set[str]:
    """Tests with no flake planted in any cell: their status at every version is known exactly."""
    return {t for _, t in status} - {t for (_, t), s in status.items() if s == "flaky"}


def expected_transitions(status: dict[tuple[Cell, str], str]) -> Counter:
    """(axis, test_id, version, change) -> contexts.

    Regressions and fixes (against the previous *decided* version) for the
    :func:`fixed_tests` only; ``now runs`` and ``no longer runs`` (against the
    previous version, whatever it did) for every test, since skips are fixed.
    """
    fixed = fixed_tests(status)
    counted: Counter = Counter()
    contexts: dict[tuple[str, Any], list[Cell]] = {}
    for cell in CELLS:  # driver axis: same target; target axis: same driver and the rest of the target
        t = cell.target
        contexts.setdefault(("driver_version", t), []).append(cell)
        rest = (cell.driver_version, t.name, t.topology, t.failpoints, t.network_faults)
        contexts.setdefault(("target_version", rest), []).append(cell)
    order = {**{d: i for i, d in enumerate(DRIVERS)}, **{t.version: i for i, t in enumerate(TARGETS)}}
    tests = {t for _, t in status}
    for (axis, _), cells in contexts.items():
        cells = sorted(cells, key=lambda c: order[c.driver_version if axis == "driver_version" else c.target.version])
        for test_id in tests:
            decided_before = before = None
            for cell in cells:
                now = status[cell, test_id]
                version = cell.driver_version if axis == "driver_version" else cell.target.version
                if before == "skip" and now != "skip":
                    counted[axis, test_id, version, "now runs"] += 1
                elif before not in (None, "skip") and now == "skip":
                    counted[axis, test_id, version, "no longer runs"] += 1
                before = now
                if now == "skip" or test_id not in fixed:
                    continue
                if decided_before == "pass" and now == "fail":
                    counted[axis, test_id, version, "regression"] += 1
                elif decided_before == "fail" and now == "pass":
                    counted[axis, test_id, version, "fix"] += 1
                decided_before = now
    return counted


def check(tables_dir: Path) -> dict[str, Any]:
    status = planted()
    names = report_cell_names()
    flakiness = pd.read_parquet(tables_dir / "flakiness")
    flakiness = flakiness[~flakiness["test_id"].str.startswith("campaign/")]
    seen = {
        (c, t): k for c, t, k in zip(flakiness["cell"], flakiness["test_id"], flakiness["classification"], strict=True)
    }
    want_failing = {(names[c], t) for (c, t), s in status.items() if s == "fail"}
    may_flake = {(names[c], t) for (c, t), s in status.items() if s == "flaky"}
    got_failing = {k for k, v in seen.items() if v == "failing"}
    got_flaky = {k for k, v in seen.items() if v == "flaky"}
    result: dict[str, Any] = {
        "failing_expected": len(want_failing),
        "failing_seen": len(got_failing),
        "failing_missing": sorted(want_failing - got_failing)[:EXAMPLES],
        "failing_unplanted": sorted(got_failing - want_failing)[:EXAMPLES],
        "flaky_planted": len(may_flake),
        "flaky_seen": len(got_flaky),
        "flaky_unplanted": sorted(got_flaky - may_flake)[:EXAMPLES],
    }
    ok = want_failing == got_failing and got_flaky <= may_flake
    transitions_dir = tables_dir / "transitions"
    if transitions_dir.exists():
        want = expected_transitions(status)
        table = pd.read_parquet(transitions_dir)
        coverage = table["change"].isin(["now runs", "no longer runs"])
        table = table[
            (coverage | table["test_id"].isin(fixed_tests(status))) & ~table["test_id"].str.startswith("campaign/")
        ]
        got = Counter(zip(table["axis"], table["test_id"], table["version"], table["change"], strict=True))
        result["transitions_expected"] = sum(want.values())
        result["transitions_seen"] = sum(got.values())
        result["transitions_differ"] = [
            {"key": list(k), "expected": want.get(k, 0), "seen": got.get(k, 0)}
            for k in sorted(set(want) | set(got))
            if want.get(k, 0) != got.get(k, 0)
        ]
        ok = ok and not result["transitions_differ"]
    result["agree"] = ok
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("side_out", type=Path, help="a side's output directory (holding tables/)")
    args = parser.parse_args(argv)
    result = check(args.side_out / "tables")
    print(json.dumps(result, indent=1, default=str))
    return 0 if result["agree"] else 1


if __name__ == "__main__":
    sys.exit(main())
