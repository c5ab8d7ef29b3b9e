"""The summary table and the matrix's exit status with cells whose driver and target cannot work together:
an ``incompatible`` cell is a reasoned result, shown as such, that does not fail the matrix."""

from __future__ import annotations

from harness.matrix.manifest import DONE, FAILED, INCOMPATIBLE, INCOMPATIBLE_STAGE, PENDING
from harness.matrix.observe import MISMATCH, OK
from harness.matrix.summary import cell_status, exit_status, summary_lines

WHY = "pymongo 4.20.0 needs wire version 9 or later, and target mongo-java-server 4.2.0 reports 8: the pair cannot work"


def ran(cell_id: str, verdict: str = OK, status: str = DONE) -> dict:
    """A cell as the scheduler leaves it after two repeats that ran."""
    return {
        "id": cell_id,
        "env": {"build_s": 3.0, "cached": False},
        "failure": None,
        "repeats": [
            {
                "repeat": n,
                "status": status,
                "counts": {"passed": 4, "skipped": 1},
                "seconds": 2.0,
                "versions": {"driver": {"verdict": verdict}, "target": {"verdict": OK}},
                "failure": None,
            }
            for n in (1, 2)
        ],
    }


def incompatible(cell_id: str, stage: str = INCOMPATIBLE_STAGE) -> dict:
    """A cell whose probe failed (its repeats never ran): ``_fail_cell`` in the scheduler."""
    failure = {"stage": stage, "reason": WHY, "at": "2026-11-24T10:00:00Z"}
    status = INCOMPATIBLE if stage == INCOMPATIBLE_STAGE else FAILED
    return {
        "id": cell_id,
        "env": {"cached": True, "ready_s": 0.1},
        "failure": failure,
        "probe": {"incompatible": WHY if stage == INCOMPATIBLE_STAGE else None},
        "repeats": [{"repeat": n, "status": status, "failure": failure} for n in (1, 2)],
    }


def test_a_cell_whose_repeats_are_all_incompatible_is_incompatible():
    assert cell_status(incompatible("c")) == INCOMPATIBLE
    assert cell_status(incompatible("c", stage="target")) == FAILED  # a target that cannot start is a failure
    partly = incompatible("c")
    partly["repeats"][0].update(status=DONE, failure=None)  # a repeat that ran before is not undone
    assert cell_status(partly) == FAILED


def test_an_incompatible_cell_does_not_fail_the_matrix_and_anything_else_still_does():
    assert exit_status({"cells": [ran("a"), incompatible("b")]}) == 0
    assert exit_status({"cells": [incompatible("a"), incompatible("b")]}) == 0
    assert exit_status({"cells": [incompatible("a"), incompatible("b", stage="driver")]}) == 1
    assert exit_status({"cells": [ran("a", MISMATCH), incompatible("b")]}) == 1
    assert exit_status({"cells": [ran("a", status=PENDING), incompatible("b")]}) == 1


def test_the_table_shows_an_incompatible_cell_and_why():
    header, done, pair = summary_lines({"cells": [ran("pymongo-4.20.0__embedded"), incompatible("pymongo__mjs-4.2")]})
    assert header.split() == ["cell", "status", "passed", "failed", "error", "skipped", "runs", "versions", "seconds"]
    assert done.split() == ["pymongo-4.20.0__embedded", "done", "8", "0", "0", "2", "2/2", "ok", "7.0"]
    assert pair.split()[:9] == ["pymongo__mjs-4.2", "incompatible", "0", "0", "0", "0", "0/2", "-", "0.0"]
    assert pair.endswith(f"incompatible: {WHY}"[:160])
    assert len(header) == len(done.rstrip()) and pair.index("incompatible") == done.index("done")  # one grid
