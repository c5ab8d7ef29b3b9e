"""Turn one report-benchmark run into ``RESULTS-report.md`` (for people) and ``.json`` (for tools).

Kept apart from the runner so the page can be re-rendered from the JSON
(``python benchmarks/results_page.py benchmarks/RESULTS-report.json``) after
a wording change, without rerunning an hour of benchmark.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

GIB = 1024**3
RERUN = """\
```sh
pip install -e . psutil pandas pyarrow pyspark      # and a Java 17+ runtime for Spark
python benchmarks/bench_report.py                   # 1M and 10M rows; ~14 GiB of data under /tmp/bench-report
python benchmarks/bench_report.py --rows 1000000 --sides spark-core,pandas   # the like-for-like pair only
python benchmarks/synthetic_results.py --rows 1000000 --seed 7 --out /tmp/synth   # just the data
python benchmarks/report_crosscheck.py /tmp/bench-report/out-1000000/spark-core /tmp/bench-report/out-1000000/pandas
```"""


def _others(side: dict[str, Any]) -> str:
    """CPU cores other processes kept busy meanwhile (a shared machine's noise, in the figures' own units)."""
    if "machine_busy_cpu_s" not in side:
        return "-"
    return f"{max(0.0, side['machine_busy_cpu_s'] - side['tree_cpu_s']) / side['wall_s']:.2f}"


def _side_cells(side: dict[str, Any]) -> tuple[str, str, str, str, str]:
    """(job time, rows/s, wall, peak RSS, others' CPU) of one side, or its failure in the first cell."""
    rss = f"{side['peak_tree_rss'] / GIB:.2f} GiB"
    if side["status"] != "ok":
        return side["status"], "-", f"{side['wall_s']:.0f} s", rss, _others(side)
    timings = side["timings"]
    job = timings["job_s"]
    return f"{job:.1f} s", f"{timings['rows'] / job:,.0f}", f"{side['wall_s']:.1f} s", rss, _others(side)


def _ratio(numerator: dict[str, Any] | None, denominator: dict[str, Any] | None, key: str) -> str:
    if not numerator or not denominator or numerator["status"] != "ok" or denominator["status"] != "ok":
        return "-"
    a = numerator["timings"]["job_s"] if key == "job" else numerator[key]
    b = denominator["timings"]["job_s"] if key == "job" else denominator[key]
    return f"{a / b:.2f}x"


def findings(report: dict[str, Any]) -> list[str]:
    """Failures with their cause and sides close to their memory cap, one line each."""
    lines = []
    for size in report["sizes"]:
        for name, side in size["sides"].items():
            memory = f" (driver memory {side['driver_memory']})" if "driver_memory" in side else ""
            if side["status"] != "ok":
                lines.append(
                    f"- {size['rows']:,} rows, {name}{memory}: **{side['status']}** after {side['wall_s']:.0f} s"
                )
            elif side["peak_tree_rss"] > 0.8 * side["cap_bytes"]:
                lines.append(
                    f"- {size['rows']:,} rows, {name}: peaked at {side['peak_tree_rss'] / GIB:.2f} GiB, "
                    f"{side['peak_tree_rss'] / side['cap_bytes']:.0%} of its {side['cap_bytes'] / GIB:g} GiB "
                    f"cap"
                )
    return lines or ["- every side finished, each well under its memory cap"]


def _load(name: str) -> dict[str, Any] | None:
    path = Path(__file__).with_name(name)
    return json.loads(path.read_text()) if path.exists() else None


def _goal(met: bool) -> str:
    return "**met**" if met else "**not met**"


def _small_rows(small: dict[str, Any]) -> list[str]:
    """One row per input and side (bench_small: the job's defaults against Spark's, measured alternately)."""
    rows = []
    for name, figures in small["inputs"].items():
        for side, measured in figures["sides"].items():
            runs = measured["runs"]
            loads = ", ".join(f"{run['other_load_cores']:.2f}" for run in runs)
            peak = max(run["peak_tree_rss"] for run in runs) / GIB
            goal = _goal(measured["wall_s_median"] <= 15) if side == "default" else "-"
            ratio = f"{figures['ratio_default_to_baseline']:.2f}x" if side == "default" else "1x"
            rows.append(
                f"| {name} | {figures['verdicts']:,} | {side} | {measured['wall_s_median']:.1f} s "
                f"({measured['wall_s_min']:.1f} s) | {ratio} | {len(runs)} | {peak:.2f} GiB | {loads} | {goal} |"
            )
    return rows


def _first_report(small: dict[str, Any]) -> list[str]:
    first = small.get("first_report")
    if not first:
        return []
    return [
        (
            "- The first report on a machine records the class archive as its JVM exits: measured on "
            f"`{first['input']}`, {first['wall_s']:.1f} s wall (exit {first['returncode']}), its output printed "
            "before the recording starts."
        )
    ]


def scale_and_small(small: dict[str, Any] | None, history: dict[str, Any] | None) -> list[str]:
    """The issue-24 figures: ``harness report`` on small inputs (bench_small), over a large history (bench_history)."""
    lines = ["## When small, and at 100M rows (issue 24)", ""]
    if small:
        lines += [
            (
                f"`benchmarks/bench_small.py`, started {small['started']}, job source {small['reports_source']}: "
                "`harness report INPUT --out DIR` in a fresh process each time (interpreter, JVM and Spark start "
                "included); `baseline` is Spark's default settings without the class archive, `default` what the "
                "report does by default, run alternately. Goal: at most 15 s wall."
            ),
            "",
            (
                "| input | verdicts | side | wall, median (min) | against baseline | runs | peak RSS (tree) "
                "| other load (cores) | goal |"
            ),
            "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |",
            *_small_rows(small),
            *_first_report(small),
        ]
        lines += [f"- {note}" for note in small.get("notes", [])]
        lines.append("")
    if history:
        h, night = history["history"], history["night"]
        lines += [
            (
                f"`benchmarks/bench_history.py`, finished {history['finished']}: a {h['rows']:,}-row Parquet "
                f"history ({h['bytes'] / GIB:.2f} GiB; {h['distinct_rows']:,} rows generated, the rest re-dated "
                f"copies of them, see `synthetic_history.py`) plus a {night['rows']:,}-row night of JSON lines "
                f"({night['bytes'] / GIB:.2f} GiB). Spark: `harness report NIGHT --append-to HISTORY --out DIR` "
                "(append, every table, the page). pandas: `pandas_baseline.py` over the same history and night "
                "(its five tables). Goal: at most 10 minutes with the process tree under 4 GiB."
            ),
            "",
            "| side | status | wall | peak RSS (tree) | other load (cores) | goal |",
            "| --- | --- | ---: | ---: | ---: | --- |",
        ]
        for name, side in history["sides"].items():
            met = side["status"] == "ok" and side["wall_s"] <= 600 and side["peak_tree_rss"] < 4 * GIB
            status = side["status"] + (f" (measured {side['carried_from']})" if side.get("carried_from") else "")
            lines.append(
                f"| {name} | {status} | {side['wall_s']:.1f} s | {side['peak_tree_rss'] / GIB:.2f} GiB "
                f"| {side.get('other_load_cores', '-')} | {_goal(met) if name == 'spark' else '-'} |"
            )
        lines += [f"- {note}" for note in history.get("notes", [])]
        lines.append("")
    return lines


def render(report: dict[str, Any]) -> str:
    m = report["machine"]
    lines = [
        "# Report job benchmark: Spark vs plain pandas",
        "",
        (
            "Written by `benchmarks/bench_report.py` (do not edit by hand; rerun it, or re-render with "
            "`python benchmarks/results_page.py benchmarks/RESULTS-report.json`)."
        ),
        "",
        *scale_and_small(_load("RESULTS-small.json"), _load("RESULTS-history.json")),
        (
            f"Run {report['started']} to {report['finished']} on {m['cpus']} CPUs, {m['memory_gib']} GiB RAM, "
            f"{m['platform']}; Python {m['python']}, PySpark {m['pyspark']} ({m['java']}), pandas {m['pandas']}, "
            f"pyarrow {m['pyarrow']}. "
            f"Memory caps: {', '.join(f'{k} {v:g} GiB' for k, v in report['caps_gib'].items())}."
        ),
        "",
        "## Figures",
        "",
        (
            "| rows | data | side | job time | rows/s (job) | process wall "
            "| peak RSS (process tree) | other load (cores) |"
        ),
        "| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for size in report["sizes"]:
        for name, side in size["sides"].items():
            job, rate, wall, rss, others = _side_cells(side)
            lines.append(
                f"| {size['rows']:,} | {size['data_bytes'] / GIB:.2f} GiB | {name} | {job} | {rate} | "
                f"{wall} | {rss} | {others} |"
            )
    lines += [
        "",
        "Ratios (pandas / Spark on the same five tables; above 1 means Spark is faster or leaner):",
        "",
        "| rows | Spark side | job time | process wall | peak RSS |",
        "| ---: | --- | ---: | ---: | ---: |",
    ]
    for size in report["sizes"]:
        pandas = size["sides"].get("pandas")
        for name, spark in size["sides"].items():
            if name.startswith("spark-core"):
                lines.append(
                    f"| {size['rows']:,} | {name} | {_ratio(pandas, spark, 'job')} | "
                    f"{_ratio(pandas, spark, 'wall_s')} | {_ratio(pandas, spark, 'peak_tree_rss')} |"
                )
    lines += ["", "## Findings read off the figures", "", *findings(report)]
    lines += ["", "## Cross-check (Spark's tables against pandas')", ""]
    for size in report["sizes"]:
        check = size.get("crosscheck")
        if check is None:
            lines.append(f"- {size['rows']:,} rows: not checked (a side did not finish)")
            continue
        h = check["headline"]
        lines.append(
            f"- {size['rows']:,} rows ({check.get('spark_side', 'spark-core')} vs pandas): "
            f"**{'agree' if check['agree'] else 'DISAGREE'}** -- "
            f"{h['cells_spark']} cells, {h['flaky_spark']} flaky cell x test pairs "
            f"({h['flaky_pandas']} in pandas), {h['clusters_spark']} failure clusters "
            f"({h['clusters_pandas']} in pandas); per table: "
            + ", ".join(f"{n} {'ok' if t['agree'] else 'DIFFERS'}" for n, t in check["tables"].items())
            + (
                " (reports/ changed between the Spark and the pandas run)"
                if check.get("same_reports_source") is False
                else ""
            )
        )
    lines += [
        "",
        "## Against the planted truth",
        "",
        (
            "The generator knows which cell x test pairs always fail, which may flake, and so which "
            "regressions and fixes each version axis must show (`planted_truth.py`)."
        ),
        "",
    ]
    for size in report["sizes"]:
        for side, truth in size.get("planted", {}).items():
            transitions = (
                f", transitions {truth['transitions_seen']} of {truth['transitions_expected']} expected"
                f" ({len(truth['transitions_differ'])} differ)"
                if "transitions_seen" in truth
                else ""
            )
            lines.append(
                f"- {size['rows']:,} rows, {side}: **{'as planted' if truth['agree'] else 'DIFFERS'}** -- "
                f"failing {truth['failing_seen']} of {truth['failing_expected']}, flaky "
                f"{truth['flaky_seen']} ({len(truth['flaky_unplanted'])} outside the "
                f"{truth['flaky_planted']} planted){transitions}"
            )
    lines += [
        "",
        "## How it is measured",
        "",
        (
            "- **Data**: `benchmarks/synthetic_results.py`, seed "
            f"{report['sizes'][0]['seed'] if report['sizes'] else '-'}: real `cs-harness.result/1` records "
            "(byte-identical to what `harness.core.records` writes) for the 155 real spec and prose test ids, "
            "8 pymongo releases x 8 targets x 3 repeats a night, plus one campaign record per cell per night; "
            "~70% passed, ~28% skipped by the real requirements, ~2% failed or errors (planted regressions, "
            "fixes, target bugs and flakes at 2-15%). About 1.4 KiB a row."
        ),
        (
            "- **Sides** run one after the other, each in its own process (`process_meter.py`): `spark-core` "
            "is the job (`reports.job.compute_tables` + `write_tables`, `local[*]`, the job's own session "
            "settings) writing the five tables pandas also makes; `spark-all` writes every table of the job; "
            "`pandas` is `pandas_baseline.py` (pyarrow JSON reader with an explicit schema, then pandas "
            "groupby). Every side writes Parquet and CSV."
        ),
        (
            "- **Job time** is measured inside the process from the first read to the last table written "
            "(Spark's session start is excluded: it is a fixed ~5-10 s); **process wall** includes "
            "interpreter, imports and JVM start."
        ),
        (
            "- **Peak RSS** is the largest sum of RSS over the side's process and all its descendants "
            "(the JVM included), sampled every 0.1 s by psutil from the runner; it counts shared pages once "
            "per process. The kernel's own high-water mark of the largest single process is in the JSON "
            "(`maxrss_largest`). A side whose tree passes its cap is killed and recorded as `exceeded N GiB`."
        ),
        (
            "- **Other load** is the CPU (in cores, of 2) that processes outside the side kept busy while it "
            "ran: the machine is shared with other work, and a side that ran beside a busy neighbour is slower "
            "by about that share."
        ),
        "- The page cache is warmed by reading the data once before each side; the data are removed after each size.",
        "",
        "## Rerun",
        "",
        RERUN,
        "",
    ]
    return "\n".join(lines)


def write_results(report: dict[str, Any], markdown: Path, data: Path) -> None:
    data.write_text(json.dumps(report, indent=1, default=str) + "\n")
    markdown.write_text(render(report))


if __name__ == "__main__":
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("RESULTS-report.json")
    report = json.loads(source.read_text())
    source.with_suffix(".md").write_text(render(report))
