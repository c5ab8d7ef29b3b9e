"""``harness report --append-to`` at scale: a night of JSON lines appended to a large Parquet history, every table.

    python benchmarks/bench_history.py                         # 100M-row history + a 1M-row night (~20 min to generate)
    python benchmarks/bench_history.py --history-rows 2000000 --night-rows 100000 --no-write   # a quick look

The history is written straight to Parquet by :mod:`synthetic_history` (100M
rows of JSON lines would not fit this disk); the night is JSON lines from
:mod:`synthetic_results`, starting the night after the history, so all its
runs are new. Each measured side runs in its own process under
:mod:`process_meter` (wall time, peak RSS of the whole process tree, the JVM
included, other load on the machine):

* ``spark``: ``harness report NIGHT --append-to HISTORY --out OUT``, exactly what a nightly job runs (append,
  every table, the page), on a hard-linked copy of the history so the run can be repeated;
* ``pandas``: :mod:`pandas_baseline` over the same history and night (its five core tables), with a memory
  cap: where it stops is the finding.

The figures go to ``benchmarks/RESULTS-history.json``; ``results_page.py`` puts them in RESULTS-report.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_report import first_error, machine, reports_fingerprint
from benchmarks.process_meter import GIB, run_measured
from benchmarks.synthetic_history import existing_history, first_free_night, generate_history
from benchmarks.synthetic_results import existing, generate

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "RESULTS-history.json"


def linked_copy(history: Path, copy: Path) -> None:
    """``copy`` holds the history's files as hard links: appending adds files there, the original stays as it was."""
    shutil.rmtree(copy, ignore_errors=True)
    subprocess.run(["cp", "-al", str(history), str(copy)], check=True)


def measured(side: str, command: list[str], work: Path, cap_gib: float) -> dict[str, Any]:
    result = run_measured(
        command,
        cap_bytes=int(cap_gib * GIB),
        log_path=work / f"{side}.log",
        cwd=str(REPO),
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    figures: dict[str, Any] = {"side": side, "reports_source": reports_fingerprint(), **result.as_json()}
    if result.exceeded_cap:
        figures["status"] = f"exceeded {cap_gib:g} GiB"
    elif result.returncode != 0:
        figures["status"] = f"failed: {first_error(Path(result.log)) or f'exit {result.returncode}'}"
    else:
        figures["status"] = "ok"
    figures["other_load_cores"] = round((result.machine_busy_cpu_s - result.tree_cpu_s) / max(result.wall_s, 1e-9), 2)
    print(
        f"  {side:<7} {figures['status']:<12} wall {result.wall_s:8.1f} s  peak tree RSS "
        f"{result.peak_tree_rss / GIB:5.2f} GiB  (other processes: {figures['other_load_cores']:.2f} cores)",
        flush=True,
    )
    return figures


def carried_sides(measured_now: str, history_rows: int, night_rows: int) -> dict[str, Any]:
    """The sides of the last ``RESULTS`` over the same data that this run does not measure, marked as carried.

    pandas' figure (it exceeds its memory cap after ~30 s) does not change with the Spark job, so a run of
    the Spark side alone keeps it instead of dropping it; ``carried_from`` says when it was measured.
    """
    if not RESULTS.exists():
        return {}
    last = json.loads(RESULTS.read_text())
    if last.get("history", {}).get("rows") != history_rows or last.get("night", {}).get("rows") != night_rows:
        return {}
    return {
        name: {**side, "carried_from": side.get("carried_from") or last["finished"]}
        for name, side in last.get("sides", {}).items()
        if name not in measured_now.split(",")
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--history-rows", type=int, default=100_000_000)
    parser.add_argument("--distinct-rows", type=int, default=10_000_000, help="see synthetic_history.py")
    parser.add_argument("--night-rows", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--sides", default="spark,pandas")
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench-report"))
    parser.add_argument("--spark-cap-gib", type=float, default=8.0)
    parser.add_argument("--pandas-cap-gib", type=float, default=16.0)
    parser.add_argument("--no-write", action="store_true", help=f"print only; leave {RESULTS.name} alone")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    history = args.work / f"history-{args.history_rows}"
    made = existing_history(history, args.history_rows, args.seed)
    if made is None:
        made = generate_history(args.history_rows, args.seed, history, distinct_rows=args.distinct_rows)
    night = args.work / f"night-{args.night_rows}"
    first_night = first_free_night(made)
    night_made = existing(night, args.night_rows, args.seed, first_night) or generate(
        args.night_rows, args.seed, night, first_night=first_night
    )
    print(
        f"history: {made.rows:,} verdicts, {made.bytes / GIB:.2f} GiB Parquet; night: {night_made.rows:,} records, "
        f"{night_made.bytes / GIB:.2f} GiB JSON lines (from night {first_night})",
        flush=True,
    )
    work = args.work / f"out-history-{args.history_rows}"
    work.mkdir(parents=True, exist_ok=True)
    sides: dict[str, Any] = {}
    if "spark" in args.sides:
        copy = work / "history"
        linked_copy(history, copy)
        out = work / "spark"
        shutil.rmtree(out, ignore_errors=True)
        command = [sys.executable, "-m", "harness.app.cli", "report", str(night), "--append-to", str(copy)]
        sides["spark"] = measured("spark", [*command, "--out", str(out)], work, args.spark_cap_gib)
        shutil.rmtree(copy, ignore_errors=True)
    if "pandas" in args.sides:
        out = work / "pandas"
        command = [sys.executable, str(HERE / "pandas_baseline.py"), str(history / "verdicts"), str(night)]
        sides["pandas"] = measured("pandas", [*command, "--out", str(out)], work, args.pandas_cap_gib)
    sides = {**sides, **carried_sides(args.sides, made.rows, night_made.rows)}
    report = {
        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "command": " ".join(sys.argv),
        "history": {**made.__dict__, "path": str(history)},
        "night": {"rows": night_made.rows, "bytes": night_made.bytes, "first_night": first_night},
        "sides": sides,
    }
    if not args.no_write:
        RESULTS.write_text(json.dumps(report, indent=1) + "\n")
        print(f"written: {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
