"""The report job against plain pandas, on the same synthetic data, in one run.

    python benchmarks/bench_report.py                                  # 1M and 10M rows (long: see RESULTS-report.md)
    python benchmarks/bench_report.py --rows 100000 --no-write         # a quick look, nothing recorded

For each size: generate the data (``synthetic_results.py``; reused when the
same rows and seed are already there), read it once so both sides start
from a warm page cache, then run each side in its own process, one after
the other, each measured by :mod:`process_meter` (wall time, peak RSS of
its whole process tree, the JVM included, and the kernel's own high-water
mark), with a memory cap that turns "would take the machine down" into a
recorded result. Sides:

* ``spark-core``: the job, writing the five tables pandas also makes (the like-for-like ratio);
* ``spark-all``: the job writing all of its tables (what ``harness report`` costs, page aside);
* ``pandas``: :mod:`pandas_baseline`.

A Spark side may carry a driver memory, ``spark-core@8g``; without one it
runs with the job's default (``reports.session.DRIVER_MEMORY``).

Then each side's tables are checked against what the generator planted
(:mod:`planted_truth`), the tables of the two are cross-checked
(:mod:`report_crosscheck`), and the figures go to ``benchmarks/RESULTS-report.md`` and ``.json``. Ratios are
what to read: absolute times depend on this shared 2-core machine.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import signal
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.planted_truth import check as check_planted
from benchmarks.process_meter import GIB, Measurement, run_measured
from benchmarks.report_crosscheck import crosscheck, describe
from benchmarks.results_page import write_results
from benchmarks.synthetic_results import existing, generate

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SIDES = {
    "spark-core": [str(HERE / "spark_side.py"), "--tables", "core"],
    "spark-all": [str(HERE / "spark_side.py"), "--tables", "all"],
    "pandas": [str(HERE / "pandas_baseline.py")],
}


def side_command(side: str) -> list[str]:
    """The script and options of a side; ``spark-core@8g`` is ``spark-core`` with 8g of driver memory."""
    name, _, memory = side.partition("@")
    return SIDES[name] + (["--driver-memory", memory] if memory else [])


def warm_page_cache(directory: Path) -> dict[str, float]:
    """Read every part once (both sides then start from the same cache); how fast the disk gave it."""
    started, size = time.perf_counter(), 0
    for part in sorted(directory.glob("part-*.jsonl")):
        with open(part, "rb") as handle:
            while chunk := handle.read(16 << 20):
                size += len(chunk)
    seconds = time.perf_counter() - started
    return {"bytes": size, "seconds": round(seconds, 2), "mib_per_s": round(size / 2**20 / max(seconds, 1e-9))}


def reports_fingerprint() -> str:
    """A hash of the job's source (``reports/**/*.py``): two sides compared must have run the same rules."""
    digest = hashlib.sha256()
    for path in sorted((REPO / "reports").rglob("*.py")):
        digest.update(path.relative_to(REPO).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def first_error(log: Path) -> str | None:
    """The first ``...Error: ...`` line of a failed side's log (a JVM's OutOfMemoryError, a Python exception)."""
    for line in log.read_text(errors="replace").splitlines():
        match = re.match(r"^\s*([\w.]*(Error|Exception)(: .*)?)$", line)
        if match and not line.lstrip().startswith("at "):
            return match.group(1)[:160]
    return None


def run_side(side: str, data: Path, work: Path, cap_gib: float) -> dict[str, Any]:
    """One side in its own process: its measurement plus the timings it reported itself."""
    out, timings = work / side, work / f"{side}.timings.json"
    shutil.rmtree(out, ignore_errors=True)
    timings.unlink(missing_ok=True)
    command = [sys.executable, *side_command(side), str(data), "--out", str(out), "--timings", str(timings)]
    fingerprint = reports_fingerprint()
    measured: Measurement = run_measured(
        command,
        cap_bytes=int(cap_gib * GIB),
        log_path=work / f"{side}.log",
        cwd=str(REPO),
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    result: dict[str, Any] = {"side": side, "reports_source": fingerprint, **measured.as_json()}
    if side.startswith("spark"):
        from reports.session import DRIVER_MEMORY

        result["driver_memory"] = side.partition("@")[2] or DRIVER_MEMORY
    if measured.exceeded_cap:
        result["status"] = f"exceeded {cap_gib:g} GiB"
    elif measured.returncode != 0:
        result["status"] = f"failed: {first_error(Path(measured.log)) or f'exit {measured.returncode}'}"
    else:
        result["status"] = "ok"
        result["timings"] = json.loads(timings.read_text())
    return result


def one_size(rows: int, seed: int, root: Path, sides: list[str], caps: dict[str, float], check: bool) -> dict[str, Any]:
    data = root / f"data-{rows}"
    made = existing(data, rows, seed)
    generated = None
    if made is None:
        made = generate(rows, seed, data)
        generated = {"seconds": made.seconds, "workers": made.workers}
    print(
        f"{rows:,} rows: {made.bytes / GIB:.2f} GiB in {made.parts} part(s)"
        + (f", generated in {made.seconds:.1f} s" if generated else " (reused)"),
        flush=True,
    )
    size: dict[str, Any] = {
        "rows": rows,
        "seed": seed,
        "data_bytes": made.bytes,
        "parts": made.parts,
        "generated": generated,
        "generator_seconds": made.seconds,
        "sides": {},
    }
    work = root / f"out-{rows}"
    work.mkdir(parents=True, exist_ok=True)
    for side in sides:
        size["page_cache"] = warm_page_cache(data)
        load = os.getloadavg()[0]
        result = run_side(side, data, work, caps[side])
        result["load_before"] = round(load, 2)
        size["sides"][side] = result
        rss = result["peak_tree_rss"] / GIB
        job = result.get("timings", {}).get("job_s")
        others = (result["machine_busy_cpu_s"] - result["tree_cpu_s"]) / result["wall_s"]
        print(
            f"  {side:<11} {result['status']:<10} wall {result['wall_s']:8.1f} s"
            + (f"  job {job:8.1f} s" if job else "")
            + f"  peak tree RSS {rss:5.2f} GiB"
            + f"  (other processes: {others:.2f} cores)",
            flush=True,
        )
    size["planted"] = {
        side: check_planted(work / side / "tables") for side in sides if size["sides"][side]["status"] == "ok"
    }
    for side, truth in size["planted"].items():
        print(
            f"  planted truth, {side}: {'as planted' if truth['agree'] else 'DIFFERS'} "
            f"({truth['failing_seen']}/{truth['failing_expected']} failing, {truth['flaky_seen']} of "
            f"{truth['flaky_planted']} planted flakes seen"
            + (
                f", {truth['transitions_seen']}/{truth['transitions_expected']} transitions"
                if "transitions_seen" in truth
                else ""
            )
            + ")",
            flush=True,
        )
    core = next((s for s in sides if s.startswith("spark-core") and size["sides"][s]["status"] == "ok"), None)
    if check and core and size["sides"].get("pandas", {}).get("status") == "ok":
        result = crosscheck(work / core, work / "pandas")
        result["spark_side"] = core
        sources = {size["sides"][s]["reports_source"] for s in (core, "pandas")}
        result["same_reports_source"] = len(sources) == 1
        if len(sources) > 1:
            print(
                "  WARNING: reports/ changed between the Spark and the pandas run; a disagreement may be that",
                flush=True,
            )
        size["crosscheck"] = result
        print("\n".join("  " + line for line in describe(result)), flush=True)
    return size


def machine() -> dict[str, Any]:
    import pandas
    import psutil
    import pyarrow
    import pyspark

    java = shutil.which("java")
    return {
        "cpus": os.cpu_count(),
        "memory_gib": round(psutil.virtual_memory().total / GIB, 1),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "pandas": pandas.__version__,
        "pyarrow": pyarrow.__version__,
        "java": _java_version(java),
        "disk_free_gib": round(shutil.disk_usage("/tmp").free / GIB, 1),
    }


def _java_version(java: str | None) -> str | None:
    if not java:
        return None
    import subprocess

    shown = subprocess.run([java, "-version"], capture_output=True, text=True).stderr.splitlines()
    return shown[0] if shown else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", default="1000000,10000000", help="comma-separated sizes")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--sides", default="spark-core,spark-all,pandas")
    parser.add_argument(
        "--work", type=Path, default=Path("/tmp/bench-report"), help="data and outputs (10M rows take ~14 GiB)"
    )
    parser.add_argument("--pandas-cap-gib", type=float, default=16.0)
    parser.add_argument("--spark-cap-gib", type=float, default=16.0)
    parser.add_argument(
        "--check-max-rows", type=int, default=10_000_000, help="cross-check the tables of sizes up to this many rows"
    )
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS-report.* alone")
    parser.add_argument("--keep-data", action="store_true", help="keep the generated data (default: remove it)")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the running side's process group is ended too
    sizes = [int(r) for r in args.rows.split(",")]
    sides = [s for s in args.sides.split(",") if s]
    caps = {side: args.pandas_cap_gib if side == "pandas" else args.spark_cap_gib for side in sides}
    unknown = [side for side in sides if side.partition("@")[0] not in SIDES]
    if unknown:
        parser.error(f"unknown side(s) {unknown}; known: {', '.join(SIDES)} (Spark ones may end in @MEMORY, e.g. @8g)")
    report: dict[str, Any] = {
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "caps_gib": caps,
        "command": " ".join(sys.argv),
        "sizes": [],
    }
    for rows in sizes:
        report["sizes"].append(one_size(rows, args.seed, args.work, sides, caps, rows <= args.check_max_rows))
        if not args.keep_data:
            shutil.rmtree(args.work / f"data-{rows}", ignore_errors=True)
    report["finished"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    if not args.no_write:
        write_results(report, HERE / "RESULTS-report.md", HERE / "RESULTS-report.json")
        print(f"written: {HERE / 'RESULTS-report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
