"""What the records of a repeat say ran, checked against the cell's request: every kind of target, and driver
releases that are named, pinned, or a range only the built driver resolves (as the probe saw it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.matrix import catalogue
from harness.matrix.cells import Cell
from harness.matrix.definition import Driver
from harness.matrix.observe import (
    MISMATCH,
    OK,
    RECORDED,
    TARGET_AXES,
    UNVERIFIED,
    check_versions,
    observe,
    requested_driver,
    target_axis,
    version_problems,
)
from harness.targets.mongo_java_server import DEFAULT_RELEASE


def record(driver: str | None, details: dict | None = None, server: str = "6.0.0", name: str = "pymongo") -> dict:
    return {
        "record": "cs-harness.result/1",
        "outcome": "passed",
        "driver": {"name": name, "version": driver},
        "target": {"version": server, "details": details or {}},
    }


def check(tmp_path: Path, cell: Cell, *records: dict, installed: dict | None = None, probed: dict | None = None):
    path = tmp_path / "r1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return check_versions(cell, observe(path, cell), installed or {}, probed)


def probed(version: str) -> dict:
    """The driver part of a probe document (harness.matrix.probe)."""
    return {"driver": {"name": "node", "version": version, "language": "javascript"}, "target": None}


def test_every_target_that_names_its_release_in_its_argument_has_a_version_axis():
    assert set(catalogue.released_targets()) <= set(TARGET_AXES)
    assert target_axis("embedded") is not target_axis("uri")  # SecantusDB's, read from the installed package


@pytest.mark.parametrize("target", sorted(catalogue.secantus_targets()))
def test_every_secantusdb_shape_is_checked_against_the_installed_package(tmp_path, target):
    cell = Cell(Driver("pymongo", "4.20.0"), target, "0.7.0b3")
    assert check(tmp_path, cell, record("4.20.0", {"package_version": "0.7.0b3"}))["target"]["verdict"] == OK
    assert check(tmp_path, cell, record("4.20.0", {"package_version": "0.7.0b2"}))["target"]["verdict"] == MISMATCH


def test_mongo_java_server_is_checked_against_the_release_in_its_argument(tmp_path):
    cell = Cell(Driver("node", "6.10.0"), "mongo-java-server=1.47.0,server=6.0")
    ran = check(tmp_path, cell, record("6.10.0", {"release": "1.47.0", "artifact": "x"}, server="6.0.0", name="nodejs"))
    assert ran["target"] == {"requested": "1.47.0", "actual": ["1.47.0"], "verdict": OK}
    other = check(tmp_path, cell, record("6.10.0", {"release": "1.46.0"}))
    assert other["target"]["verdict"] == MISMATCH
    assert "target: MISMATCH (requested 1.47.0, records say 1.46.0)" in version_problems(other)
    # The server version it claims (server=6.0) is not its release: a record without the release says nothing.
    silent = check(tmp_path, cell, record("6.10.0", {}, server="6.0.0"))
    assert silent["target"] == {"requested": "1.47.0", "actual": ["not recorded"], "verdict": UNVERIFIED}


def test_mongo_java_server_without_a_release_asks_for_the_harness_s_default(tmp_path):
    cell = Cell(Driver("java"), "mongo-java-server")
    assert (
        check(tmp_path, cell, record("5.6.1", {"release": DEFAULT_RELEASE}))["target"]["requested"] == DEFAULT_RELEASE
    )
    presented = Cell(Driver("java"), "mongo-java-server=server=7.0,present=replicaset")
    assert check(tmp_path, presented, record("5.6.1", {"release": DEFAULT_RELEASE}))["target"]["verdict"] == OK


def test_a_node_range_is_checked_against_the_release_the_probe_saw_built(tmp_path):
    cell = Cell(Driver("node", "6.x"), "embedded", "0.7.0b3")
    details = {"package_version": "0.7.0b3"}
    ok = check(tmp_path, cell, record("6.10.0", details, name="nodejs"), probed=probed("6.10.0"))
    assert ok["driver"] == {"requested": "6.10.0", "actual": ["6.10.0"], "verdict": OK}
    # The records say another release than the one built for this cell: the executor is not the one probed.
    drift = check(tmp_path, cell, record("6.9.0", details, name="nodejs"), probed=probed("6.10.0"))
    assert drift["driver"]["verdict"] == MISMATCH
    assert version_problems(drift) == ["driver: MISMATCH (requested 6.10.0, records say 6.9.0)"]
    # Without a probe the range is no release: what the records say is only recorded.
    assert check(tmp_path, cell, record("6.10.0", details))["driver"]["verdict"] == RECORDED


@pytest.mark.parametrize(
    "driver, installed, probe, requested",
    [
        (Driver("node", "6.10.0"), {}, probed("6.11.0"), "6.10.0"),  # a named release is the request
        (Driver("node", "^6.1"), {}, probed("6.11.0"), "6.11.0"),  # a range: what was built
        (Driver("node", "6.x"), {}, None, None),
        (Driver("java"), {"pymongo": "4.20.0"}, probed("5.6.1"), "5.6.1"),  # an executor's pinned release
        (Driver("go"), {}, {"driver": None, "failure": {"stage": "driver"}}, None),
        (Driver("pymongo"), {"pymongo": "4.19.0"}, probed("9.9.9"), "4.19.0"),  # pymongo: the environment's
        (Driver("pymongo", "4.18.3"), {"pymongo": "4.19.0"}, None, "4.18.3"),
        (Driver("pymongo-executor"), {"pymongo": "4.19.0"}, None, "4.19.0"),
        (Driver("pymongo"), {}, probed("4.20.0"), "4.20.0"),  # an environment that did not say: the probe's
    ],
)
def test_the_requested_driver_release(driver, installed, probe, requested):
    assert requested_driver(Cell(driver, "embedded"), installed, probe) == requested


def test_a_pinned_executor_is_checked_against_the_probe(tmp_path):
    cell = Cell(Driver("go"), "embedded", "0.7.0b3")
    ran = check(tmp_path, cell, record("2.10.0", {"package_version": "0.7.0b3"}, name="go"), probed=probed("2.10.0"))
    assert ran["driver"]["verdict"] == OK and ran["target"]["verdict"] == OK
    other = check(tmp_path, cell, record("2.9.0", {"package_version": "0.7.0b3"}, name="go"), probed=probed("2.10.0"))
    assert other["driver"]["verdict"] == MISMATCH


@pytest.mark.parametrize("release, installed", [("4.20.0", {}), (None, {"pymongo": "4.20.0"})])
def test_a_pymongo_async_cell_matches_its_records(tmp_path, release, installed):
    cell = Cell(Driver("pymongo-async", release), "embedded", "0.7.0b3")
    ran = check(
        tmp_path,
        cell,
        record("4.20.0 (async)", {"package_version": "0.7.0b3"}, name="pymongo-async"),
        installed={"secantusdb": "0.7.0b3", **installed},
    )
    assert ran["driver"]["verdict"] == OK


def test_a_pymongo_async_cell_of_another_release_is_still_a_mismatch(tmp_path):
    """The other side of the test above: 4.19.0 (async) is not 4.20.0."""
    cell = Cell(Driver("pymongo-async", "4.20.0"), "embedded", "0.7.0b3")
    ran = check(tmp_path, cell, record("4.19.0 (async)", {"package_version": "0.7.0b3"}, name="pymongo-async"))
    assert ran["driver"]["verdict"] == MISMATCH
