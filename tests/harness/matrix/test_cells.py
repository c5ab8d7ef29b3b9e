"""The cells a matrix expands to: drivers x targets, their ids (directory names, ``--cell`` values), labels,
requested versions, what their environments install and their entry in ``harness matrix plan``."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from harness.matrix.cells import Cell, expand
from harness.matrix.cli import add_matrix_arguments
from harness.matrix.definition import Driver, load_definition

PYMONGO = Driver("pymongo", "4.20.0")


def define(*argv: str):
    parser = argparse.ArgumentParser()
    add_matrix_arguments(parser)
    args = parser.parse_args(list(argv))
    return load_definition(args.matrix, args, Path.cwd())


def test_cells_are_drivers_by_targets_with_readable_ids_and_labels():
    definition = define(
        "--pymongo",
        "4.19.0,4.20.0",
        "--secantusdb",
        "0.7.0b2,0.7.0b3",
        "--target",
        "embedded,secantusdb-daemon",
        "--server",
        "testcontainers=mongo:8.0",
        "--server",
        "uri=mongodb://admin:hunter2@db:27017/",
        "--campaign",
        "events=50",
    )
    cells = expand(definition)
    assert len(cells) == 2 * (2 * 2 + 2) and len({c.id for c in cells}) == len(cells)
    first = cells[0]
    assert first.id == "pymongo-4.19.0__embedded__secantusdb-0.7.0b2"
    assert first.requirements == ("pymongo==4.19.0", "secantusdb==0.7.0b2") and first.extras == ("faults",)
    assert first.labels("m-1") == {
        "matrix": "m-1",
        "cell": first.id,
        "driver": "pymongo@4.19.0",
        "pymongo": "4.19.0",
        "target": "embedded",
        "secantusdb": "0.7.0b2",
    }
    servers = [c for c in cells if c.pymongo == "4.20.0" and c.secantusdb is None]
    container, uri = servers
    assert container.id == "pymongo-4.20.0__testcontainers-mongo-8.0" and container.extras == ("containers",)
    assert not container.campaign and container.requirements == ("pymongo==4.20.0",)  # the pinned SecantusDB
    assert uri.id.startswith("pymongo-4.20.0__uri-") and "hunter2" not in uri.id
    assert "hunter2" not in str(uri.labels("m-1")) and "admin:***@db" in uri.labels("m-1")["target"]
    assert "hunter2" not in str(uri.requested()) and "hunter2" not in str(uri.planned("m-1", 2))


def test_without_secantusdb_versions_cells_use_the_pinned_release():
    [cell] = expand(define("--pymongo", "4.20.0"))
    assert cell == Cell(PYMONGO, "embedded", secantusdb=None)
    assert cell.id == "pymongo-4.20.0__embedded__secantusdb-pinned" and cell.requirements == ("pymongo==4.20.0",)
    assert expand(define("--pymongo", "4.20.0", "--server", "uri=mongodb://h/"))[0].target == "uri=mongodb://h/"


def test_the_order_is_drivers_outermost_then_targets_then_releases_then_servers():
    cells = expand(
        define(
            "--driver",
            "node@6.10.0,pymongo",
            "--secantusdb",
            "0.7.0b2,0.7.0b3",
            "--target",
            "mongo-java-server=1.47.0,embedded,uri=mongodb://db/",
            "--campaign",
            "events=10",
        )
    )
    assert [c.id for c in cells[:4]] == [
        "node-6.10.0__mongo-java-server-1.47.0",
        "node-6.10.0__embedded__secantusdb-0.7.0b2",
        "node-6.10.0__embedded__secantusdb-0.7.0b3",
        cells[3].id,
    ]
    assert cells[3].target == "uri=mongodb://db/" and cells[3].id.startswith("node-6.10.0__uri-")
    assert [c.driver for c in cells] == [Driver("node", "6.10.0")] * 4 + [Driver("pymongo")] * 4
    # The campaign runs on SecantusDB targets only; mongo-java-server has no SecantusDB release.
    assert [(c.campaign, c.secantusdb) for c in cells[:4]] == [
        (False, None),
        (True, "0.7.0b2"),
        (True, "0.7.0b3"),
        (False, None),
    ]


@pytest.mark.parametrize(
    "cell, cell_id",
    [
        (Cell(PYMONGO, "embedded", "0.7.0b3"), "pymongo-4.20.0__embedded__secantusdb-0.7.0b3"),
        (Cell(Driver("node"), "mongo-java-server=1.47.0"), "node-pinned__mongo-java-server-1.47.0"),
        (Cell(Driver("go"), "embedded"), "go-pinned__embedded__secantusdb-pinned"),
        (Cell(Driver("java", "5.14.0"), "mongo-java-server"), "java-5.14.0__mongo-java-server"),
        (
            Cell(Driver("pymongo-async", "4.19.0"), "mongo-java-server=1.47.0,server=6.0,present=replicaset"),
            "pymongo-async-4.19.0__mongo-java-server-1.47.0-server-6.0-present-replicaset",
        ),
        (
            Cell(Driver("node", "6.x"), "secantusdb-daemon=test-commands,on-disk", "0.7.0b3"),
            "node-6.x__secantusdb-daemon-test-commands-on-disk__secantusdb-0.7.0b3",
        ),
        (
            Cell(Driver("pymongo-executor"), "testcontainers=mongo:7.0"),
            "pymongo-executor-pinned__testcontainers-mongo-7.0",
        ),
    ],
)
def test_cell_ids_are_safe_directory_names(cell, cell_id):
    assert cell.id == cell_id
    assert "/" not in cell.id and " " not in cell.id


def test_different_driver_releases_never_share_an_id():
    ids = {Cell(Driver("node", release), "embedded").id for release in ("6.1", "^6.1", "~6.1", ">=6.1")}
    assert len(ids) == 4


def test_a_python_driver_s_release_is_the_environment_s_others_are_built_by_the_harness():
    python = Cell(Driver("pymongo-async", "4.19.0"), "embedded", "0.7.0b3")
    assert python.pymongo == "4.19.0" and python.driver_argument == "pymongo-async"
    assert python.requirements == ("pymongo==4.19.0", "secantusdb==0.7.0b3")
    node = Cell(Driver("node", "6.10.0"), "embedded", "0.7.0b3")
    assert node.pymongo is None and node.driver_argument == "node@6.10.0"
    assert node.requirements == ("secantusdb==0.7.0b3",)  # the harness's own pymongo pins
    java = Cell(Driver("java"), "mongo-java-server")
    assert java.driver_argument == "java" and java.requirements == () and java.extras == ()
    assert not java.secantus_target and node.secantus_target


def test_labels_requested_and_planned_say_the_driver_and_the_target():
    node = Cell(Driver("node", "6.10.0"), "mongo-java-server=1.47.0,server=6.0")
    assert node.labels("m-1") == {
        "matrix": "m-1",
        "cell": "node-6.10.0__mongo-java-server-1.47.0-server-6.0",
        "driver": "node@6.10.0",
        "target": "mongo-java-server=1.47.0,server=6.0",
    }
    assert node.requested() == {
        "driver": "node",
        "driver_release": "6.10.0",
        "pymongo": None,
        "target": "mongo-java-server=1.47.0,server=6.0",
        "secantusdb": None,
    }
    pinned = Cell(Driver("pymongo"), "embedded", "0.7.0b3")
    assert pinned.labels("m-2")["driver"] == "pymongo" and "pymongo" not in pinned.labels("m-2")  # no release asked
    assert pinned.requested() == {
        "driver": "pymongo",
        "driver_release": None,
        "pymongo": None,
        "target": "embedded",
        "secantusdb": "0.7.0b3",
    }
    assert pinned.planned("m-2", 3) == {
        "cell": "pymongo-pinned__embedded__secantusdb-0.7.0b3",
        "matrix": "m-2",
        "driver": "pymongo",
        "target": "embedded",
        "secantusdb": "0.7.0b3",
        "repeats": 3,
    }
