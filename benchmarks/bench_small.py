"""``harness report`` on small inputs, as a user runs it: wall time with the JVM's start, peak RSS of the tree.

    python benchmarks/bench_small.py main=/tmp/perf/main.jsonl matrix=/tmp/perf/matrix --repeat 3

Each ``NAME=INPUT`` is reported on ``--repeat`` times per side, each time in a
fresh process (``python -m harness.app.cli report INPUT --out ...``) measured
by :mod:`process_meter`, so the figure includes the interpreter, the imports,
the JVM and Spark's start, the job and the page. Two sides, alternating run by
run so that load on the shared machine falls on both alike:

* ``baseline``: Spark's default settings and no class archive (``--spark-profile large``, ``HARNESS_NO_CACHE=1``):
  the job as it ran before the small-input settings;
* ``default``: what ``harness report`` does by default (the small profile, the class archive in a cache of
  this benchmark's own, recorded by a first run that is measured and reported on its own).

The goal (issue 24) is at most 15 s for the main job's results and for a matrix of a few thousand verdicts;
the ratio default / baseline is the figure that does not depend on the machine. Every run records the CPU
other processes used meanwhile. Figures go to ``benchmarks/RESULTS-small.json``; ``results_page.py`` shows them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_report import reports_fingerprint
from benchmarks.process_meter import GIB, run_measured

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "RESULTS-small.json"


def verdict_count(path: Path) -> int:
    files = sorted(path.rglob("*.jsonl")) if path.is_dir() else [path]
    return sum(1 for f in files for line in f.open() if '"cs-harness.result/1"' in line)


#: How each side runs the report: extra arguments and environment.
SIDES: dict[str, tuple[list[str], dict[str, str]]] = {
    "baseline": (["--spark-profile", "large"], {"HARNESS_NO_CACHE": "1"}),
    "default": ([], {}),
}


def run_once(name: str, side: str, inputs: Path, work: Path, n: int) -> dict[str, Any]:
    """One ``harness report`` in a fresh process, measured."""
    extra, env = SIDES[side]
    out = work / f"{name}-{side}-{n}"
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "harness.app.cli", "report", str(inputs), "--out", str(out), *extra]
    environment = {**os.environ, "HARNESS_CACHE_DIR": str(work / "cache"), **env}
    result = run_measured(
        command, cap_bytes=8 * GIB, log_path=work / f"{name}-{side}-{n}.log", cwd=str(REPO), env=environment
    )
    others = (result.machine_busy_cpu_s - result.tree_cpu_s) / max(result.wall_s, 1e-9)
    print(
        f"  {name} {side} #{n + 1}: exit {result.returncode}, wall {result.wall_s:5.1f} s, peak tree RSS "
        f"{result.peak_tree_rss / GIB:4.2f} GiB, other processes {others:.2f} cores",
        flush=True,
    )
    return {
        "returncode": result.returncode,
        "wall_s": round(result.wall_s, 2),
        "peak_tree_rss": result.peak_tree_rss,
        "other_load_cores": round(others, 2),
    }


def measure(name: str, inputs: Path, work: Path, repeat: int) -> dict[str, Any]:
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in SIDES}
    for n in range(repeat):
        for side in SIDES:
            runs[side].append(run_once(name, side, inputs, work, n))
    figures: dict[str, Any] = {"input": str(inputs), "verdicts": verdict_count(inputs), "sides": {}}
    for side, measured in runs.items():
        walls = [r["wall_s"] for r in measured]
        figures["sides"][side] = {
            "runs": measured,
            "wall_s_median": statistics.median(walls),
            "wall_s_min": min(walls),
        }
    sides = figures["sides"]
    ratio = sides["default"]["wall_s_median"] / sides["baseline"]["wall_s_median"]
    figures["ratio_default_to_baseline"] = round(ratio, 2)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="+", metavar="NAME=INPUT")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench-report/small"))
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "reports_source": reports_fingerprint(),
        "cpus": os.cpu_count(),
        "inputs": {},
    }
    shutil.rmtree(args.work / "cache", ignore_errors=True)
    items = [item.partition("=")[::2] for item in args.inputs]
    first_name, first_path = items[0]
    print("recording the class archive (the first report on a machine):", flush=True)
    report["first_report"] = {"input": first_name, **run_once(first_name, "default", Path(first_path), args.work, -1)}
    for name, path in items:
        report["inputs"][name] = measure(name, Path(path), args.work, args.repeat)
    if not args.no_write:
        RESULTS.write_text(json.dumps(report, indent=1) + "\n")
        print(f"written: {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
