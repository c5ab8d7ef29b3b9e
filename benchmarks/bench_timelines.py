"""The history's tables at scale: timelines, first changes, flip-flops and scores against the report's own tables.

    python benchmarks/bench_timelines.py                                   # the 100M-row history of bench_history.py
    python benchmarks/bench_timelines.py --history-rows 10000000 --distinct-rows 1000000   # what fits a loaded hour

The history is the one :mod:`bench_history` reads (:mod:`synthetic_history`, reused when already written). One
Spark session (the report's own settings for a large input, ``local[*]``) reads it and computes, each to the end
and written nowhere (Spark's ``noop`` sink: every row is produced, none is kept or collected), first the
*baseline*: two tables the report already makes over a whole history, ``flakiness`` (the verdicts of each
cell x test in time order, a window function like the timelines') and ``runs``; then the history's tables:
``first_changes`` (which ``flip_flops`` is made from; the two together are what a report adds), ``flip_flops``
(with ``first_changes`` computed again inside it), ``rule_scores``, ``exclusive_failures``, and the full
``timelines`` view (every configuration x test x run: what ``harness query`` orders when it is asked for). Each
figure is a wall time on this machine and its ratio to the baseline's in the same run, so the load on a shared
machine moves both. The figures go to ``benchmarks/RESULTS-timelines.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_report import machine, reports_fingerprint
from benchmarks.synthetic_history import existing_history, generate_history

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS-timelines.json"


def timed(frame: Any) -> float:
    """Seconds to compute every row of ``frame`` (the noop sink: nothing collected, nothing written)."""
    started = time.perf_counter()
    frame.write.format("noop").mode("overwrite").save()
    return round(time.perf_counter() - started, 2)


def measure(spark: Any, verdicts_dir: Path) -> dict[str, Any]:
    from reports import flakiness, history, scores, timelines
    from reports.read import read_verdicts

    verdicts = read_verdicts(spark, [str(verdicts_dir)])
    baseline: dict[str, Callable[[], Any]] = {
        "flakiness": lambda: flakiness.flakiness(verdicts),
        "runs": lambda: history.runs(verdicts),
    }
    added: dict[str, Callable[[], Any]] = {
        "first_changes": lambda: timelines.first_changes(verdicts),
        "flip_flops": lambda: timelines.flip_flops(timelines.first_changes(verdicts), timelines.latest_run(verdicts)),
        "rule_scores": lambda: scores.rule_scores(verdicts),
        "exclusive_failures": lambda: scores.exclusive_failures(verdicts),
        "timelines": lambda: timelines.timelines(verdicts),
    }
    figures: dict[str, Any] = {"baseline": {}, "added": {}}
    for group, tables in (("baseline", baseline), ("added", added)):
        for name, make in tables.items():
            figures[group][name] = timed(make())
            print(f"  {group:<8} {name:<20} {figures[group][name]:8.1f} s", flush=True)
    base = sum(figures["baseline"].values())
    figures["baseline_s"] = round(base, 2)
    figures["ratios"] = {name: round(seconds / base, 2) for name, seconds in figures["added"].items()}
    report_adds = figures["added"]["first_changes"] + figures["added"]["flip_flops"]
    figures["ratios"]["first_changes + flip_flops (what a report adds)"] = round(report_adds / base, 2)
    counts = {
        "first_changes": timelines.first_changes(verdicts).count(),
        "configuration x tests that can change": timelines.can_change(timelines.with_configuration(verdicts)).count(),
    }
    figures["rows"] = counts
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--history-rows", type=int, default=100_000_000)
    parser.add_argument("--distinct-rows", type=int, default=10_000_000, help="see synthetic_history.py")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench-report"))
    parser.add_argument("--driver-memory", default="3g")
    parser.add_argument("--no-write", action="store_true", help=f"print only; leave {RESULTS.name} alone")
    args = parser.parse_args(argv)

    history = args.work / f"history-{args.history_rows}"
    made = existing_history(history, args.history_rows, args.seed)
    if made is None:
        made = generate_history(args.history_rows, args.seed, history, distinct_rows=args.distinct_rows)
    print(f"history: {made.rows:,} verdicts, {made.bytes / 2**30:.2f} GiB Parquet ({history})", flush=True)
    from reports.session import build_session

    spark = build_session(driver_memory=args.driver_memory)
    try:
        figures = measure(spark, history / "verdicts")
    finally:
        spark.stop()
    report = {
        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "command": " ".join(sys.argv),
        "reports_source": reports_fingerprint(),
        "history": {**made.__dict__, "path": str(history)},
        **figures,
    }
    print(json.dumps(figures["ratios"], indent=1))
    if not args.no_write:
        RESULTS.write_text(json.dumps(report, indent=1) + "\n")
        print(f"written: {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
