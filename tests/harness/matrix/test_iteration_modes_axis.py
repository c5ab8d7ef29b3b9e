"""The matrix's iteration-mode axis: each driver x target cell once per mode listed, the mode in the cell's id,
labels and plan, and passed to the cell's ``harness run``; a definition without modes is the one it was."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from harness.matrix.cells import expand
from harness.matrix.cli import add_matrix_arguments
from harness.matrix.definition import DefinitionError, load_definition
from harness.matrix.steps import repeat_steps


def define(cwd: Path, *argv: str):
    parser = argparse.ArgumentParser()
    add_matrix_arguments(parser)
    args = parser.parse_args(["--specs-legacy", str(cwd), "--specs-unified", str(cwd), *argv])
    return load_definition(args.matrix, args, cwd)


def test_each_cell_runs_once_per_mode_listed(tmp_path: Path) -> None:
    definition = define(tmp_path, "--driver", "pymongo,node@6.10.0", "--iteration-modes", "next,tryNext")
    cells = expand(definition)
    assert [cell.id for cell in cells] == [
        "pymongo-pinned__embedded__secantusdb-pinned__mode-next",
        "pymongo-pinned__embedded__secantusdb-pinned__mode-tryNext",
        "node-6.10.0__embedded__secantusdb-pinned__mode-next",
        "node-6.10.0__embedded__secantusdb-pinned__mode-tryNext",
    ]
    cell = cells[1]
    labels = cell.labels(definition.matrix_id)
    assert labels["iteration_mode"] == "tryNext" and cell.requested()["iteration_mode"] == "tryNext"
    assert cell.planned(definition.matrix_id, 1)["iteration_mode"] == "tryNext"
    (run,) = repeat_steps(definition, cell, Path("/env/bin/python"), Path("/out/r1.jsonl"), labels)
    assert run.command[run.command.index("--iteration-mode") + 1] == "tryNext"
    assert definition.identity()["iteration_modes"] == ["next", "tryNext"]


def test_without_modes_nothing_changes(tmp_path: Path) -> None:
    definition = define(tmp_path, "--driver", "pymongo")
    (cell,) = expand(definition)
    assert cell.iteration_mode is None and cell.id == "pymongo-pinned__embedded__secantusdb-pinned"
    assert "iteration_mode" not in cell.labels(definition.matrix_id) and "iteration_mode" not in cell.requested()
    assert "iteration_modes" not in definition.identity()
    (run,) = repeat_steps(definition, cell, Path("/env/bin/python"), Path("/out/r1.jsonl"), {})
    assert "--iteration-mode" not in run.command
    with_modes = define(tmp_path, "--driver", "pymongo", "--iteration-modes", "next")
    assert with_modes.matrix_id != definition.matrix_id


@pytest.mark.parametrize(
    ("modes", "message"),
    [
        (
            "next,push",
            "--iteration-modes: unknown iteration mode(s) push; modes: next, tryNext, iterator, emitter, stream",
        ),
        ("next,next", "--iteration-modes: listed more than once: next"),
    ],
)
def test_a_mode_outside_the_vocabulary_is_refused_up_front(tmp_path: Path, modes: str, message: str) -> None:
    with pytest.raises(DefinitionError) as caught:
        define(tmp_path, "--driver", "pymongo", "--iteration-modes", modes)
    assert str(caught.value) == message


def test_the_file_takes_the_same_key(tmp_path: Path) -> None:
    matrix = tmp_path / "m.yml"
    matrix.write_text("drivers: [pymongo]\niteration_modes: [iterator]\n")
    cells = expand(define(tmp_path, "--matrix", str(matrix)))
    assert [cell.iteration_mode for cell in cells] == ["iterator"]
