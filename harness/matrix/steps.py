"""What one repeat of a cell runs, and what each exit status means for the matrix.

A repeat is one ``harness run`` of the chosen suites with the cell's
``--driver`` and ``--target`` (legacy, unified and supplementary are
``--specs`` sources, prose and checks are ``--suite`` names; all of them, the
main job, are ``--suite all``; a part of them is ``--suite spec,prose``:
one run either way, so the target starts once), then the optional seeded ``harness
campaign``, all appending to the repeat's results file and all labelled with
the matrix, the cell and the repeat. The run is ``--strict``, as certifications are: a stale expected-outcomes
entry, a pinned test that produced no result, a file without its schema or a plug-in not installed
exits 1 (docs/pins.md). The campaign runs on an on-disk SecantusDB of its own
(``harness campaign`` has no ``--target``), so it is run only in cells whose
target is SecantusDB: on a real server it would not test that server.

Exit status 1 is a finished run with unexpected outcomes, which is a result;
2 is a run that could not start, and a signal is a crash: those fail the
repeat. So does an exit 0 or 1 that wrote no record at all (a Python traceback
exits 1 too).
"""

from __future__ import annotations

import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.matrix.cells import Cell
from harness.matrix.definition import MatrixDefinition, run_suites, spec_suites
from harness.matrix.process import Finished

#: Exit status -> (the step finished and its records are results, what the status means).
EXITS: dict[str, dict[int, tuple[bool, str]]] = {
    "run": {
        0: (True, "every outcome expected"),
        1: (True, "some outcome unexpected, or a --strict note"),
        2: (False, "the run could not start"),
    },
    "campaign": {
        0: (True, "campaign passed"),
        1: (True, "campaign found anomalies"),
        2: (False, "the campaign could not start"),
    },
}


@dataclass(frozen=True)
class Step:
    #: ``run`` or ``campaign``: what its exit status means (:data:`EXITS`).
    name: str
    command: list[str]


def run_suite(definition: MatrixDefinition) -> str:
    """``harness run --suite``'s value: ``all`` for the main job's suites, else the chosen ones (``spec,prose``)."""
    spec = any(suite in definition.suites for suite in spec_suites())
    named = [suite for suite in run_suites() if suite in definition.suites]
    if spec and len(named) == len(run_suites()):
        return "all"
    return ",".join((["spec"] if spec else []) + named)


def _label_arguments(labels: dict[str, Any]) -> list[str]:
    return [arg for key, value in labels.items() for arg in ("--label", f"{key}={value}")]


def repeat_steps(
    definition: MatrixDefinition, cell: Cell, python: Path, results: Path, labels: dict[str, Any]
) -> list[Step]:
    harness = [str(python), "-m", "harness.app.cli"]
    specs = [
        arg for suite in spec_suites() if suite in definition.specs for arg in ("--specs", definition.specs[suite])
    ]
    common = [
        "--driver",
        cell.driver_argument,
        "--target",
        cell.target,
        "--results",
        str(results),
        *_label_arguments(labels),
        "-q",
        "--strict",
    ]
    if definition.keyword:
        common += ["-k", definition.keyword]
    if definition.timeout:
        common += ["--timeout", f"{definition.timeout:g}"]
    if definition.workers > 1:
        common += ["-j", str(definition.workers)]
    if cell.iteration_mode is not None:
        common += ["--iteration-mode", cell.iteration_mode]
    steps = [Step("run", [*harness, "run", *specs, "--suite", run_suite(definition), *common])]
    if cell.campaign and definition.campaign is not None:
        steps.append(
            Step(
                "campaign",
                [
                    *harness,
                    "campaign",
                    *definition.campaign.arguments(),
                    "--driver",
                    cell.driver_argument,
                    "--results",
                    str(results),
                    *_label_arguments(labels),
                    "--quiet",
                ],
            )
        )
    return steps


def judge(step: Step, finished: Finished, records_written: int) -> str | None:
    """None when the step finished (whatever its verdicts), else why the repeat failed."""
    if finished.signal is not None:
        return f"{step.name} crashed: killed by {_signal_name(finished.signal)}" + _tail(finished)
    completed, meaning = EXITS[step.name].get(
        finished.returncode, (False, f"{step.name} exited with {finished.returncode}")
    )
    if not completed:
        return f"{meaning} (exit {finished.returncode})" + _tail(finished)
    if records_written == 0:
        return f"{step.name} exited {finished.returncode} without writing any result record" + _tail(finished)
    return None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _tail(finished: Finished) -> str:
    return f": {finished.stderr_tail}" if finished.stderr_tail else ""
