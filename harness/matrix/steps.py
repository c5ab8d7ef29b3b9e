"""What one repeat of a cell runs, and what each exit status means for the matrix.

A repeat is one ``harness run`` of the chosen suites (legacy and unified are
``--specs`` paths, prose is ``--suite prose``; together they are one run, so
the target starts once), then the optional seeded ``harness campaign``, both
appending to the repeat's results file and both labelled with the matrix, the
cell and the repeat. The run is ``--strict``, as certifications are: a stale expected-outcomes
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
from harness.matrix.definition import SPEC_SUITES, MatrixDefinition
from harness.matrix.process import Finished

#: ``harness run --suite`` for (any spec suite chosen, prose chosen).
RUN_SUITE = {(True, True): "all", (True, False): "spec", (False, True): "prose"}
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
    name: str
    command: list[str]


def _label_arguments(labels: dict[str, Any]) -> list[str]:
    return [arg for key, value in labels.items() for arg in ("--label", f"{key}={value}")]


def repeat_steps(
    definition: MatrixDefinition, cell: Cell, python: Path, results: Path, labels: dict[str, Any]
) -> list[Step]:
    harness = [str(python), "-m", "harness.app.cli"]
    specs = [
        arg for suite in SPEC_SUITES if suite in definition.specs for arg in ("--specs", str(definition.specs[suite]))
    ]
    suite = RUN_SUITE[(bool(specs), "prose" in definition.suites)]
    run = [
        *harness,
        "run",
        *specs,
        "--suite",
        suite,
        "--target",
        cell.target,
        "--results",
        str(results),
        *_label_arguments(labels),
        "-q",
        "--strict",
    ]
    if definition.keyword:
        run += ["-k", definition.keyword]
    if definition.timeout:
        run += ["--timeout", f"{definition.timeout:g}"]
    steps = [Step("run", run)]
    if cell.campaign and definition.campaign is not None:
        steps.append(
            Step(
                "campaign",
                [
                    *harness,
                    "campaign",
                    *definition.campaign.arguments(),
                    "--results",
                    str(results),
                    *_label_arguments(labels),
                    "--quiet",
                ],
            )
        )
    return steps


def judge(step: str, finished: Finished, records_written: int) -> str | None:
    """None when the step finished (whatever its verdicts), else why the repeat failed."""
    if finished.signal is not None:
        return f"{step} crashed: killed by {_signal_name(finished.signal)}" + _tail(finished)
    completed, meaning = EXITS[step].get(finished.returncode, (False, f"{step} exited with {finished.returncode}"))
    if not completed:
        return f"{meaning} (exit {finished.returncode})" + _tail(finished)
    if records_written == 0:
        return f"{step} exited {finished.returncode} without writing any result record" + _tail(finished)
    return None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _tail(finished: Finished) -> str:
    return f": {finished.stderr_tail}" if finished.stderr_tail else ""
