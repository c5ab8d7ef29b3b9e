"""One repeat of a cell: its commands, what exit statuses mean, the versions read back from the records,
the child processes (logged, stoppable group and all) and the matrix's exit status."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from harness.matrix.cells import Cell
from harness.matrix.definition import Campaign, Driver, MatrixDefinition
from harness.matrix.definition import suites as all_suites
from harness.matrix.observe import MISMATCH, OK, RECORDED, UNVERIFIED, check_versions, observe, version_problems
from harness.matrix.process import Children, Finished, Interrupted
from harness.matrix.steps import Step, judge, repeat_steps, run_suite
from harness.matrix.summary import exit_status, summary_lines

LEGACY, UNIFIED, SUPPLEMENTARY = "/specs/legacy", "/specs/unified", "project:scenarios/supplementary"
PYMONGO = Driver("pymongo", "4.20.0")


def definition(suites=None, **fields) -> MatrixDefinition:
    suites = all_suites() if suites is None else suites
    sources = {"legacy": LEGACY, "unified": UNIFIED, "supplementary": SUPPLEMENTARY}
    return MatrixDefinition(
        drivers=(PYMONGO,),
        secantusdb=("0.7.0b3",),
        targets=("embedded",),
        servers=(),
        suites=suites,
        specs={name: source for name, source in sources.items() if name in suites},
        **fields,
    )


LABELS = {"matrix": "m-1", "cell": "c", "repeat": 2}


def test_a_repeat_of_the_main_job_is_one_harness_run_of_every_suite_with_labels_then_the_campaign():
    cell = Cell(PYMONGO, "secantusdb-daemon", "0.7.0b3", campaign=True)
    run, campaign = repeat_steps(
        definition(keyword="resume", timeout=12.0, campaign=Campaign(300, 5, 7), workers=3),
        cell,
        Path("/env/bin/python"),
        Path("/out/r2.jsonl"),
        LABELS,
    )
    assert (run.name, campaign.name) == ("run", "campaign")
    assert run.command == [
        "/env/bin/python",
        "-m",
        "harness.app.cli",
        "run",
        "--specs",
        LEGACY,
        "--specs",
        UNIFIED,
        "--specs",
        SUPPLEMENTARY,
        "--suite",
        "all",
        "--driver",
        "pymongo",
        "--target",
        "secantusdb-daemon",
        "--results",
        "/out/r2.jsonl",
        "--label",
        "matrix=m-1",
        "--label",
        "cell=c",
        "--label",
        "repeat=2",
        "-q",
        "--strict",
        "-k",
        "resume",
        "--timeout",
        "12",
        "-j",
        "3",
    ]
    assert campaign.command == [
        "/env/bin/python",
        "-m",
        "harness.app.cli",
        "campaign",
        "--events",
        "300",
        "--faults",
        "5",
        "--seed",
        "7",
        "--driver",
        "pymongo",
        "--results",
        "/out/r2.jsonl",
        "--label",
        "matrix=m-1",
        "--label",
        "cell=c",
        "--label",
        "repeat=2",
        "--quiet",
    ]


@pytest.mark.parametrize(
    "suites, suite",
    [
        (all_suites(), "all"),
        (("legacy", "prose", "checks"), "all"),  # a spec suite and both named ones: the main job's --suite
        (("legacy",), "spec"),
        (("unified", "prose"), "spec,prose"),
        (("legacy", "unified", "supplementary", "prose"), "spec,prose"),
        (("prose", "checks"), "prose,checks"),
        (("checks",), "checks"),
    ],
)
def test_the_suites_are_one_run_the_main_job_s_is_all_and_a_part_names_its_suites(suites, suite):
    assert run_suite(definition(suites)) == suite
    [run] = repeat_steps(definition(suites), Cell(PYMONGO, "embedded"), Path("/py"), Path("/r.jsonl"), LABELS)
    assert run.command[run.command.index("--suite") + 1] == suite and run.command.count("--suite") == 1


@pytest.mark.parametrize(
    "suites, specs",
    [
        (("legacy",), [LEGACY]),
        (("unified", "prose"), [UNIFIED]),
        (("supplementary", "checks"), [SUPPLEMENTARY]),
        (all_suites(), [LEGACY, UNIFIED, SUPPLEMENTARY]),
    ],
)
def test_the_spec_suites_are_the_run_s_specs_sources(suites, specs):
    [run] = repeat_steps(definition(suites), Cell(PYMONGO, "embedded"), Path("/py"), Path("/r.jsonl"), LABELS)
    assert [run.command[i + 1] for i, arg in enumerate(run.command) if arg == "--specs"] == specs


@pytest.mark.parametrize(
    "driver, argument",
    [
        (Driver("pymongo", "4.19.0"), "pymongo"),  # the release is the environment's
        (Driver("pymongo-async", "4.19.0"), "pymongo-async"),
        (Driver("node", "6.10.0"), "node@6.10.0"),  # built by the harness at the release named
        (Driver("java"), "java"),
        (Driver("go", "2.10.0"), "go@2.10.0"),
    ],
)
def test_every_step_runs_the_cell_s_driver(driver, argument):
    cell = Cell(driver, "embedded", "0.7.0b3", campaign=True)
    steps = repeat_steps(
        definition(("prose", "checks"), campaign=Campaign(10, 1, 1)), cell, Path("/py"), Path("/r.jsonl"), LABELS
    )
    assert [step.command[step.command.index("--driver") + 1] for step in steps] == [argument] * 2
    assert "-j" not in steps[0].command  # one worker unless asked


def test_no_campaign_on_a_real_server_or_on_mongo_java_server():
    for target in ("uri=mongodb://db/", "mongo-java-server=1.47.0"):
        cell = Cell(PYMONGO, target, None, campaign=False)
        steps = repeat_steps(definition(campaign=Campaign(300, 5, 7)), cell, Path("/py"), Path("/r.jsonl"), LABELS)
        assert [step.name for step in steps] == ["run"]


@pytest.mark.parametrize(
    "step, returncode, records, failed_with",
    [
        ("run", 0, 10, None),
        ("run", 1, 10, None),  # unexpected outcomes: a result, not a failure
        ("run", 2, 0, "the run could not start (exit 2): boom"),
        ("run", 1, 0, "run exited 1 without writing any result record: boom"),  # a traceback exits 1 too
        ("run", -9, 3, "run crashed: killed by SIGKILL: boom"),
        ("run", 3, 3, "run exited with 3 (exit 3): boom"),
        ("campaign", 1, 1, None),
        ("campaign", 2, 0, "the campaign could not start (exit 2): boom"),
    ],
)
def test_what_an_exit_status_means(step, returncode, records, failed_with):
    assert judge(Step(step, ["harness"]), Finished(returncode, 1.0, "boom"), records) == failed_with


def _record(driver: str | None, package: str | None, outcome: str = "passed", server: str = "8.2.11") -> dict:
    details = {"package_version": package} if package else {}
    return {
        "record": "cs-harness.result/1",
        "outcome": outcome,
        "driver": {"name": "pymongo", "version": driver},
        "target": {"version": server, "details": details},
    }


def _results(tmp_path: Path, *records: dict, torn: bool = False) -> Path:
    path = tmp_path / "r1.jsonl"
    lines = [json.dumps(r) for r in records] + [json.dumps({"record": "cs-harness.cell/1"})]
    path.write_text("\n".join(lines) + ('\n{"record": "cs-har' if torn else "\n"))
    return path


def test_versions_are_read_from_the_records_and_checked_against_the_request(tmp_path):
    cell = Cell(Driver("pymongo", "4.19.0"), "embedded", "0.7.0b3")
    path = _results(
        tmp_path,
        _record("4.19.0", "0.7.0b3"),
        _record("4.19.0", "0.7.0b3", "failed"),
        _record("4.19.0", "0.7.0b3", "skipped"),
        torn=True,
    )
    seen = observe(path, cell)
    assert seen.records == 3 and seen.counts == {"passed": 1, "failed": 1, "error": 0, "skipped": 1}
    check = check_versions(cell, seen, {})
    assert check["driver"] == {"requested": "4.19.0", "actual": ["4.19.0"], "verdict": OK}
    assert check["target"]["verdict"] == OK and version_problems(check) == []


def test_a_version_other_than_requested_is_a_mismatch(tmp_path):
    cell = Cell(Driver("pymongo", "4.19.0"), "embedded", "0.7.0b2")
    check = check_versions(cell, observe(_results(tmp_path, _record("4.20.0", "0.7.0b3")), cell), {})
    assert check["driver"]["verdict"] == MISMATCH and check["target"]["verdict"] == MISMATCH
    assert version_problems(check) == [
        "driver: MISMATCH (requested 4.19.0, records say 4.20.0)",
        "target: MISMATCH (requested 0.7.0b2, records say 0.7.0b3)",
    ]


def test_records_that_do_not_say_leave_the_axis_unverified(tmp_path):
    cell = Cell(PYMONGO, "secantusdb-daemon", "0.7.0b3")  # e.g. run records without package_version ...
    path = _results(tmp_path, _record("4.20.0", None), _record("4.20.0", "0.7.0b3"))  # ... beside a campaign's
    check = check_versions(cell, observe(path, cell), {})
    assert check["target"]["verdict"] == UNVERIFIED and check["target"]["actual"] == ["0.7.0b3", "not recorded"]


def test_release_spellings_and_server_versions(tmp_path):
    # SecantusDB "the pinned release": what the environment installed is the request; 4.9 is 4.9.0
    pinned = Cell(Driver("pymongo", "4.9"), "embedded", None)
    check = check_versions(
        pinned, observe(_results(tmp_path, _record("4.9.0", "0.7.0b3")), pinned), {"secantusdb": "0.7.0b3"}
    )
    assert check["driver"]["verdict"] == OK and check["target"]["verdict"] == OK
    container = Cell(PYMONGO, "testcontainers=mongo:8.0")
    assert (
        check_versions(container, observe(_results(tmp_path, _record("4.20.0", None, server="8.0.4")), container), {})[
            "target"
        ]["verdict"]
        == OK
    )
    assert (
        check_versions(container, observe(_results(tmp_path, _record("4.20.0", None, server="8.2.1")), container), {})[
            "target"
        ]["verdict"]
        == MISMATCH
    )
    uri = Cell(PYMONGO, "uri=mongodb://db/")
    assert check_versions(uri, observe(_results(tmp_path, _record("4.20.0", None, server="7.0.2")), uri), {})[
        "target"
    ] == {"requested": None, "actual": ["7.0.2"], "verdict": RECORDED}


def test_a_child_s_output_goes_to_its_log_and_its_stderr_tail_is_kept(tmp_path):
    log = tmp_path / "r1.log"
    code = "import sys; print('to stdout'); print('line 1', file=sys.stderr); sys.exit('fatal: it broke')"
    finished = Children().run([sys.executable, "-c", code], log)
    assert finished.returncode == 1 and finished.stderr_tail == "line 1\nfatal: it broke"
    text = log.read_text()
    assert text.startswith("$ ") and "to stdout" in text and "fatal: it broke" in text and "# exit 1 after" in text
    assert Children().run([sys.executable, "-c", "import os; os.kill(os.getpid(), 9)"], log).signal == 9


def test_children_do_not_see_python_path_variables(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/somewhere/else")
    log = tmp_path / "env.log"
    Children().run(
        [sys.executable, "-c", "import os; print(repr(os.environ.get('PYTHONPATH')), os.environ['PYTHONNOUSERSITE'])"],
        log,
    )
    assert "None 1" in log.read_text()


def test_stopping_ends_a_child_and_the_processes_it_started(tmp_path):
    """The child starts a grandchild in its own process group (as harness run starts a SecantusDB daemon)."""
    children = Children()
    pids = tmp_path / "pids"
    code = (
        "import subprocess, sys, time\n"
        "grandchild = subprocess.Popen([sys.executable, '-c', 'import signal, time; "
        "signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(60)'])\n"
        f"open({str(pids)!r}, 'w').write(str(grandchild.pid))\n"
        "time.sleep(60)\n"
    )
    outcome = {}
    worker = threading.Thread(
        target=lambda: outcome.update(f=children.run([sys.executable, "-c", code], tmp_path / "r.log"))
    )
    worker.start()
    for _ in range(200):
        if pids.exists() and pids.read_text():
            break
        time.sleep(0.05)
    grandchild = int(pids.read_text())
    children.stop_all(grace_s=1.0)
    worker.join(10)
    assert outcome["f"].stopped and outcome["f"].returncode != 0
    for _ in range(100):  # the grandchild ignored SIGINT: the SIGKILL after the grace period ended it
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        os.kill(grandchild, signal.SIGKILL)
        pytest.fail("the grandchild outlived stop_all")
    with pytest.raises(Interrupted):
        children.run([sys.executable, "-c", "pass"], tmp_path / "r.log")  # no new child once stopping


def _cell(status: str, verdict: str = OK, failure: dict | None = None) -> dict:
    repeat = {
        "repeat": 1,
        "status": status,
        "counts": {"passed": 4, "skipped": 1},
        "seconds": 2.0,
        "versions": {"driver": {"verdict": verdict}},
        "failure": failure,
    }
    return {
        "id": f"cell-{status}-{verdict}",
        "env": {"build_s": 3.0, "cached": False},
        "failure": None,
        "repeats": [repeat],
    }


def test_the_exit_status_and_the_summary_table():
    assert exit_status({"cells": [_cell("done"), _cell("done", RECORDED)]}) == 0
    assert exit_status({"cells": [_cell("done"), _cell("failed", failure={"stage": "run", "reason": "x"})]}) == 1
    assert exit_status({"cells": [_cell("done", MISMATCH)]}) == 1
    assert exit_status({"cells": [_cell("done", UNVERIFIED)]}) == 1
    assert exit_status({"cells": [_cell("pending")]}) == 1
    header, done, failed = summary_lines(
        {
            "cells": [
                _cell("done"),
                _cell("failed", failure={"stage": "run", "reason": "Traceback\n  ...\nValueError: bad"}),
            ]
        }
    )
    assert header.split() == ["cell", "status", "passed", "failed", "error", "skipped", "runs", "versions", "seconds"]
    assert done.split() == ["cell-done-ok", "done", "4", "0", "0", "1", "1/1", "ok", "5.0"]
    assert failed.split()[:2] == ["cell-failed-ok", "failed"] and failed.endswith("run: ValueError: bad")
