"""A warm Spark for reports (issue 33): ``harness report --remote`` on a warm server against the cold local report.

    python benchmarks/bench_spark_connect.py /tmp/perf/main.jsonl --repeat 5

Everything runs as a user runs it, each report in a fresh process measured by
:mod:`process_meter` (wall time, peak RSS of the process tree), in a harness
cache of the benchmark's own (``HARNESS_CACHE_DIR``). Sides, alternating run
by run so that load on the shared machine falls on all alike:

* ``cold``: ``harness report INPUT --out DIR``, what a report costs without a server (the JVM class archive
  recorded beforehand by a first report, measured and reported on its own): the baseline;
* ``warm``: ``harness report INPUT --out DIR --remote URL`` against the server ``harness spark start`` started
  (after ``--warm-ups`` reports that warm its JIT, each measured and reported on its own: the first is slow);
* ``bare``: :mod:`bare_session`, the cold report's Spark start, 10 rows counted and stop, nothing of the job:
  the floor of the cold path.

Goals (issue 33): warm at most 3 s, cold at most 12 s; the ratios against ``cold``, measured in the same run,
are what does not depend on the machine. The server's own CPU during a warm report is measured apart and not
counted as other load. Figures go to ``RESULTS-spark-connect.json`` and the table of ``RESULTS-spark-connect.md``
(its text after the table is kept).
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
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil

from benchmarks.bench_report import reports_fingerprint
from benchmarks.bench_small import verdict_count
from benchmarks.process_meter import GIB, run_measured

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS_JSON = HERE / "RESULTS-spark-connect.json"
RESULTS_MD = HERE / "RESULTS-spark-connect.md"
GOALS_S = {"warm": 3.0, "cold": 12.0}
SIDES = ("cold", "warm", "bare")
FINDINGS = "## Findings"


def harness(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "harness.app.cli", *arguments]


def command(side: str, inputs: Path, out: Path, url: str, cache: Path) -> list[str]:
    if side == "cold":
        return harness("report", str(inputs), "--out", str(out))
    if side == "warm":
        return harness("report", str(inputs), "--out", str(out), "--remote", url)
    return [sys.executable, str(HERE / "bare_session.py"), "--class-archive", str(cache / "spark-classes")]


def server_cpu_s(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system + times.children_user + times.children_system)


def run_once(side: str, n: int, inputs: Path, work: Path, env: dict[str, str], server: dict[str, Any]) -> dict:
    """One side once, in a fresh process, measured; the server's CPU meanwhile is not other load."""
    out = work / f"{side}-{n}"
    shutil.rmtree(out, ignore_errors=True)
    before = server_cpu_s(server["pid"])
    result = run_measured(
        command(side, inputs, out, server["url"], work / "cache"),
        cap_bytes=8 * GIB,
        log_path=work / f"{side}-{n}.log",
        cwd=str(REPO),
        env=env,
    )
    served = server_cpu_s(server["pid"]) - before
    others = (result.machine_busy_cpu_s - result.tree_cpu_s - served) / max(result.wall_s, 1e-9)
    print(
        f"  {side} #{n + 1}: exit {result.returncode}, wall {result.wall_s:5.1f} s, tree RSS "
        f"{result.peak_tree_rss / GIB:4.2f} GiB, server CPU {served:4.1f} s, other load {others:.2f} cores",
        flush=True,
    )
    return {
        "returncode": result.returncode,
        "wall_s": round(result.wall_s, 2),
        "peak_tree_rss": result.peak_tree_rss,
        "server_cpu_s": round(served, 2),
        "other_load_cores": round(max(others, 0.0), 2),
    }


def start_server(env: dict[str, str], work: Path) -> dict[str, Any]:
    """``harness spark start`` in the benchmark's cache; its URL and pid, and how long it took."""
    began = datetime.now(timezone.utc)
    done = subprocess.run(harness("spark", "start"), env=env, cwd=REPO, capture_output=True, text=True, timeout=600)
    seconds = (datetime.now(timezone.utc) - began).total_seconds()
    if done.returncode != 0:
        raise SystemExit(f"harness spark start failed: {done.stdout}{done.stderr}")
    record = json.loads((work / "cache" / "spark-connect" / "server.json").read_text())
    print(f"server: {done.stdout.splitlines()[0]} in {seconds:.1f} s", flush=True)
    return {"url": f"sc://127.0.0.1:{record['port']}", "pid": record["pid"], "start_s": round(seconds, 1)}


def summary(runs: list[dict]) -> dict[str, Any]:
    walls = [r["wall_s"] for r in runs]
    return {
        "runs": runs,
        "wall_s_median": statistics.median(walls),
        "wall_s_min": min(walls),
        "other_load_median": statistics.median(r["other_load_cores"] for r in runs),
    }


def measure(inputs: Path, work: Path, repeat: int, warm_ups: int) -> dict[str, Any]:
    env = {**os.environ, "HARNESS_CACHE_DIR": str(work / "cache")}
    env.pop("HARNESS_SPARK_REMOTE", None)
    shutil.rmtree(work / "cache", ignore_errors=True)
    report: dict[str, Any] = {
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "reports_source": reports_fingerprint(),
        "input": str(inputs),
        "verdicts": verdict_count(inputs),
        "machine": f"{os.cpu_count()} CPUs, {psutil.virtual_memory().total / GIB:.1f} GiB, {platform.platform()}",
        "python": platform.python_version(),
    }
    server = start_server(env, work)
    report["server_start_s"] = server["start_s"]
    try:
        print("first cold report (records the class archive):", flush=True)
        report["first_cold"] = run_once("cold", -1, inputs, work, env, server)
        print(f"{warm_ups} warm-up reports on the server (its JIT compiles the planner's code as it goes):", flush=True)
        report["warm_ups"] = [run_once("warm", -1 - n, inputs, work, env, server) for n in range(warm_ups)]
        runs: dict[str, list[dict]] = {side: [] for side in SIDES}
        for n in range(repeat):
            for side in SIDES:
                runs[side].append(run_once(side, n, inputs, work, env, server))
    finally:
        stopped = subprocess.run(harness("spark", "stop"), env=env, cwd=REPO, capture_output=True, text=True)
        print(stopped.stdout.strip(), flush=True)
    report["sides"] = {side: summary(measured) for side, measured in runs.items()}
    cold = report["sides"]["cold"]["wall_s_median"]
    for figures in report["sides"].values():
        figures["against_cold"] = round(figures["wall_s_median"] / cold, 2)
    report["finished"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return report


def markdown_table(report: dict[str, Any]) -> str:
    lines = [
        "# A warm Spark for reports: `harness report --remote` against the cold local report",
        "",
        "Written by `benchmarks/bench_spark_connect.py` (the table; the findings below it are kept when it reruns).",
        "",
        (
            f"Run {report['started']} to {report['finished']}, job source {report['reports_source']}, on "
            f"{report['machine']}, Python {report['python']}. Input: {report['input']} ({report['verdicts']:,} "
            f"verdicts). Server started by `harness spark start` in {report['server_start_s']} s."
        ),
        "",
        "| side | wall, median (min) | against cold | runs | peak RSS (tree) | server CPU | other load | goal |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for side, figures in report["sides"].items():
        runs = figures["runs"]
        goal = GOALS_S.get(side)
        met = (
            "-"
            if goal is None
            else (f"**met** (<= {goal:g} s)" if figures["wall_s_median"] <= goal else f"not met (<= {goal:g} s)")
        )
        lines.append(
            f"| {side} | {figures['wall_s_median']:.1f} s ({figures['wall_s_min']:.1f} s) | "
            f"{figures['against_cold']:.2f}x | {len(runs)} | {max(r['peak_tree_rss'] for r in runs) / GIB:.2f} GiB | "
            f"{statistics.median(r['server_cpu_s'] for r in runs):.1f} s | "
            f"{', '.join(str(r['other_load_cores']) for r in runs)} | {met} |"
        )
    first = report["first_cold"]
    lines.append(
        f"- first cold report (records the class archive): {first['wall_s']} s (exit {first['returncode']}, "
        f"other load {first['other_load_cores']} cores)."
    )
    walls = ", ".join(f"{run['wall_s']:.1f} s" for run in report["warm_ups"])
    lines.append(f"- the server's first {len(report['warm_ups'])} reports, in order (warming it): {walls}.")
    return "\n".join(lines) + "\n"


def write_results(report: dict[str, Any]) -> None:
    RESULTS_JSON.write_text(json.dumps(report, indent=1) + "\n")
    kept = ""
    if RESULTS_MD.exists():
        text = RESULTS_MD.read_text()
        kept = text[text.index(FINDINGS) :] if FINDINGS in text else ""
    RESULTS_MD.write_text(markdown_table(report) + "\n" + (kept or f"{FINDINGS}\n"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", type=Path, help="the main job's results (harness run ... --results FILE)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--warm-ups", type=int, default=5, help="reports run on the new server before measuring")
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench-report/spark-connect"))
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    report = measure(args.input.resolve(), args.work, args.repeat, args.warm_ups)
    if args.no_write:
        print(markdown_table(report))
    else:
        write_results(report)
        print(f"written: {RESULTS_MD}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
