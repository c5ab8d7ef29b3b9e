"""``harness report`` end to end, through ``harness.app.cli.main``, over records the harness really wrote.

Two real runs of the legacy ``errors`` tests (with different labels), the
JUnit XML the pytest plugin writes for the same tests, and a hand-edited
copy of a run that simulates a newer driver release in which one test
fails: the report must find that regression, with its message, and the
right pass rates.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.app.cli import main
from tests.conftest import LEGACY_DIR, require_shared_specs
from tests.paths import REPO

NEWER = "99.1.0"
FAILURE = "OperationFailure, code 280 (ChangeStreamFatalError): cannot resume the stream"


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """runs/r1.jsonl, runs/r2.jsonl (real), runs/junit.xml (real, pytest plugin), runs/newer.jsonl (edited)."""
    require_shared_specs()
    runs = tmp_path_factory.mktemp("runs")
    for repeat in (1, 2):
        assert (
            main(
                [
                    "run",
                    "--specs",
                    str(LEGACY_DIR),
                    "-k",
                    "errors",
                    "-q",
                    "--results",
                    str(runs / f"r{repeat}.jsonl"),
                    "--label",
                    "matrix=e2e",
                    "--label",
                    f"repeat={repeat}",
                ]
            )
            == 0
        )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--specs",
            str(LEGACY_DIR),
            "-k",
            "errors",
            f"--junitxml={runs / 'junit.xml'}",
            "--rootdir",
            str(runs),
        ],
        cwd=runs,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    records = [json.loads(line) for line in (runs / "r1.jsonl").read_text().splitlines()]
    passing = next(r for r in records if r["outcome"] == "passed")
    for rec in records:
        rec["run_id"] += "-newer"
        rec["driver"]["version"] = NEWER
        if rec["test_id"] == passing["test_id"]:
            rec["outcome"], rec["message"] = "failed", FAILURE
    (runs / "newer.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return {
        "dir": runs,
        "records": records,
        "regressed": passing["test_id"],
        "driver": json.loads((runs / "r2.jsonl").read_text().splitlines()[0])["driver"]["version"],
    }


def table(spark, out: Path, name: str) -> list[dict]:
    return [row.asDict() for row in spark.read.parquet(str(out / "tables" / name)).collect()]


@pytest.fixture(scope="module")
def report(spark, results, tmp_path_factory):
    """The report over every run, against run 1 as the baseline: (out dir, exit status, what it printed)."""
    out = tmp_path_factory.mktemp("report")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = main(
            [
                "report",
                str(results["dir"]),
                "--out",
                str(out),
                "--title",
                "e2e",
                "--baseline",
                str(results["dir"] / "r1.jsonl"),
            ]
        )
    return out, status, printed.getvalue()


def test_the_report_exits_0_and_writes_the_page_and_every_table(report):
    out, status, _ = report
    assert status == 0
    assert (out / "report.html").stat().st_size > 1000
    for name in (
        "cells",
        "cell_files",
        "cell_tests",
        "version_status",
        "first_pass",
        "transitions",
        "flakiness",
        "failure_clusters",
        "fault_survival",
        "baseline_diff",
        "runs",
        "unbuilt_cells",
        "input_problems",
        "blame",
        "blame_cells",
    ):
        assert (out / "tables" / name).is_dir() and (out / "tables" / f"{name}.csv").is_file(), name


def test_cells_and_pass_rates(spark, report, results):
    out, _, _ = report
    cells = [
        (r["driver_version"], r["runs"], r["passed"], r["failed"], r["skipped"], r["pass_rate"])
        for r in table(spark, out, "cells")
    ]
    assert cells == [(results["driver"], 3, 9, 0, 3, 1.0), (NEWER, 1, 2, 1, 1, 2 / 3)]


def test_the_regression_is_found_with_the_test_and_its_message(spark, report, results):
    out, _, _ = report
    regressions = [r for r in table(spark, out, "transitions") if r["change"] == "regression"]
    assert [(r["axis"], r["test_id"], r["previous_version"], r["version"], r["message"]) for r in regressions] == [
        ("driver_version", results["regressed"], results["driver"], NEWER, FAILURE)
    ]
    [cluster] = table(spark, out, "failure_clusters")
    assert (cluster["error_code"], cluster["error_code_name"], cluster["failures"]) == (
        280,
        "ChangeStreamFatalError",
        1,
    )


def test_junit_and_json_lines_give_the_same_verdicts(spark, report, results):
    out, _, _ = report
    runs = {r["run_id"]: r for r in table(spark, out, "runs")}
    assert len(runs) == 4
    junit = [r for r in runs.values() if r["sources"] == "junit"]
    assert len(junit) == 1 and (junit[0]["passed"], junit[0]["skipped"]) == (3, 1)
    assert sorted(r["repeat"] for r in runs.values() if r["sources"] == "jsonl") == [1, 1, 2]
    tests = table(spark, out, "cell_tests")
    assert {r["test_id"] for r in tests} == {r["test_id"] for r in results["records"]}


def test_the_summary_says_where_and_what(report, results):
    out, _, printed = report
    assert f"report: {out / 'report.html'}" in printed and f"tables: {out / 'tables'}" in printed
    assert "in 2 cell(s)" in printed and "1 regression(s)" in printed and "0 flaky test(s)" in printed
    assert f"regression driver_version {results['driver']} -> {NEWER}" in printed and results["regressed"] in printed


def test_bad_inputs_are_named_the_rest_is_reported_and_the_exit_is_2(spark, results, tmp_path, capsys):
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("this is not a record\n")
    status = main(
        [
            "report",
            str(results["dir"] / "r1.jsonl"),
            str(garbage),
            str(tmp_path / "missing.jsonl"),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert status == 2
    captured = capsys.readouterr()
    assert f"input problem: {tmp_path / 'missing.jsonl'}: does not exist" in captured.out
    assert f"input problem: {garbage}: no result records in this file" in captured.out
    assert "2 input(s) could not be used" in captured.err
    problems = {(r["file"], r["problem"]) for r in table(spark, tmp_path / "out", "input_problems")}
    assert (str(garbage), "malformed line (torn, not JSON, or a field of the wrong type)") in problems
    assert [r["verdicts"] for r in table(spark, tmp_path / "out", "cells")] == [4]


def test_nothing_to_read_exits_2_before_starting_spark(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "out")]) == 2
    assert "no results to report on" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_append_to_grows_a_history_once_per_run(spark, results, tmp_path, capsys):
    history, out = tmp_path / "history", tmp_path / "out"
    r1, newer = str(results["dir"] / "r1.jsonl"), str(results["dir"] / "newer.jsonl")
    assert main(["report", r1, newer, "--out", str(out), "--append-to", str(history)]) == 0
    assert "history: 2 new run(s) appended" in capsys.readouterr().out
    assert main(["report", r1, "--out", str(out), "--append-to", str(history)]) == 0
    assert "history: 0 new run(s) appended" in capsys.readouterr().out
    assert len(table(spark, out, "runs")) == 2
    assert [r["change"] for r in table(spark, out, "transitions")] == ["regression"]
    assert 'id="history-chart"' in (out / "report.html").read_text()
    assert spark.read.parquet(str(history / "verdicts")).count() == 8


def test_baseline_diff_names_the_newly_failing_test(spark, report, results):
    out, _, _ = report
    # run 1's cell is unchanged; the newer driver is a new cell, where only the failing test is news
    diff = [
        (r["test_id"], r["cell"].split(" ")[1], r["baseline_status"], r["change"])
        for r in table(spark, out, "baseline_diff")
    ]
    assert diff == [(results["regressed"], NEWER, "absent", "newly failing")]


def test_report_cli_does_not_import_pyspark_for_harness_run():
    code = "import sys, harness.app.cli; harness.app.cli.build_parser(); print('pyspark' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.stdout.strip() == "False", done.stderr


def test_a_report_inside_its_input_directory_never_reads_its_own_output(spark, results, tmp_path, capsys):
    """The report keeps its normalised verdicts in OUT/verdicts (readable as input elsewhere); rerun with OUT
    inside the input directory, they must not be counted a second time."""
    import shutil

    inputs = tmp_path / "runs"
    inputs.mkdir()
    shutil.copy(results["dir"] / "r1.jsonl", inputs / "r1.jsonl")
    out = inputs / "report"
    for _ in range(2):
        assert main(["report", str(inputs), "--out", str(out)]) == 0
        [cell] = table(spark, out, "cells")
        assert cell["verdicts"] == len((inputs / "r1.jsonl").read_text().splitlines())
    # elsewhere, the stored verdicts are an input like any results file: the same counts
    again = tmp_path / "again"
    assert main(["report", str(out / "verdicts"), "--out", str(again)]) == 0
    assert [r["verdicts"] for r in table(spark, again, "cells")] == [cell["verdicts"]]
    capsys.readouterr()
