"""``harness matrix plan``: the cells as a CI job matrix, and ``--cell``, which runs some of them on a machine.

``plan`` builds nothing (no environment, no output directory), so every test here runs the real command.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.matrix.cells import expand
from harness.matrix.cli import add_matrix_arguments, command_matrix
from harness.matrix.definition import load_definition
from tests.paths import REPO

MATRIX = (
    "--driver",
    "pymongo@4.20.0,node@6.10.0",
    "--secantusdb",
    "0.7.0b2,0.7.0b3",
    "--target",
    "embedded,mongo-java-server=1.47.0,server=6.0",
    "--repeat",
    "3",
)


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="harness matrix")
    add_matrix_arguments(parser)
    return parser.parse_args(list(argv))


def plan(capsys, *argv: str) -> tuple[int, str, str]:
    status = command_matrix(parse("plan", *argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_plan_prints_one_include_list_with_an_object_per_cell(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing is written to the working directory either
    status, out, err = plan(capsys, *MATRIX)
    assert status == 0 and err == "" and out.count("\n") == 1  # one line, as a CI job matrix takes it
    included = json.loads(out)["include"]
    definition = load_definition(None, parse(*MATRIX), tmp_path)
    cells = expand(definition)
    assert [entry["cell"] for entry in included] == [cell.id for cell in cells] and len(cells) == 6
    assert included == [cell.planned(definition.matrix_id, 3) for cell in cells]
    assert included[0] == {
        "cell": "pymongo-4.20.0__embedded__secantusdb-0.7.0b2",
        "matrix": definition.matrix_id,
        "driver": "pymongo@4.20.0",
        "target": "embedded",
        "secantusdb": "0.7.0b2",
        "repeats": 3,
    }
    assert included[2]["cell"] == "pymongo-4.20.0__mongo-java-server-1.47.0-server-6.0"
    assert included[2]["secantusdb"] is None
    assert list(tmp_path.iterdir()) == []


def test_cell_picks_cells_by_id_in_the_order_given_once_each(capsys):
    ids = [cell.id for cell in expand(load_definition(None, parse(*MATRIX), Path.cwd()))]
    status, out, _ = plan(capsys, *MATRIX, "--cell", f"{ids[4]},{ids[1]}", "--cell", ids[4])
    assert status == 0 and [entry["cell"] for entry in json.loads(out)["include"]] == [ids[4], ids[1]]


def test_an_unknown_cell_is_an_error_listing_the_cells_there_are(capsys):
    ids = [cell.id for cell in expand(load_definition(None, parse(*MATRIX), Path.cwd()))]
    status, out, err = plan(capsys, *MATRIX, "--cell", f"{ids[0]},pymongo-4.19.0__embedded__secantusdb-0.7.0b2")
    assert status == 2 and out == ""
    assert err.startswith("harness matrix: --cell: no cell pymongo-4.19.0__embedded__secantusdb-0.7.0b2 in this matrix")
    assert f"(its cells: {', '.join(ids)})" in err


def test_a_run_of_an_unknown_cell_stops_before_building_anything(capsys, tmp_path):
    envs, out_dir = tmp_path / "envs", tmp_path / "out"
    argv = ("run", *MATRIX, "--cell", "nope", "--envs", str(envs), "--out", str(out_dir))
    assert command_matrix(parse(*argv)) == 2
    assert "--cell: no cell nope in this matrix" in capsys.readouterr().err
    assert not envs.exists() and not out_dir.exists()


def test_plan_as_a_command_from_anywhere_gives_the_same_matrix(tmp_path):
    """Two machines, two working directories: the same definition is the same matrix id and the same cells."""
    plans = []
    for cwd in (REPO, tmp_path):
        done = subprocess.run(
            [sys.executable, "-m", "harness.app.cli", "matrix", "plan", *MATRIX],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        plans.append(json.loads(done.stdout))
    assert plans[0] == plans[1] and len(plans[0]["include"]) == 6
    assert len({entry["matrix"] for entry in plans[0]["include"]}) == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "argv",
    [
        ("--driver", "node@6.10.0,pymongo"),
        ("--driver", "node@6.10.0", "--suites", "prose"),
        ("--driver", "node@6.10.0", "--target", "embedded-on-disk"),
        ("--driver", "node@6.10.0", "--specs-supplementary", "project:scenarios/supplementary"),
    ],
)
def test_another_definition_is_another_matrix_id(capsys, argv):
    _, base, _ = plan(capsys, "--driver", "node@6.10.0", "--repeat", "2", "--workers", "2")
    _, same, _ = plan(capsys, "--driver", "node@6.10.0")
    _, other, _ = plan(capsys, *argv)
    matrix_id = json.loads(base)["include"][0]["matrix"]
    assert json.loads(same)["include"][0]["matrix"] == matrix_id  # repeats and workers are not in the id
    assert json.loads(other)["include"][0]["matrix"] != matrix_id


def test_plan_takes_the_definition_file_as_its_argument_as_the_readme_shows_it(capsys):
    path = str(REPO / "specs" / "matrices" / "drivers-x-targets.yml")
    status, positional, _ = plan(capsys, path)
    assert status == 0 and (positional, "") == plan(capsys, "--matrix", path)[1:]
    status, out, err = plan(capsys, path, "--matrix", path)
    assert status == 2 and out == "" and "give the definition once" in err
