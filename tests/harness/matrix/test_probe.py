"""The probe before a cell's repeats (build the driver, start the target once, can the two work together?),
``pair_incompatibility`` behind it, and what the scheduler makes of an incompatible pair.

The probes here start real things: pymongo and the embedded SecantusDB in this process, mongo-java-server's
wire-version check (it refuses before it resolves any jar), and npm for a Node release that does not exist.
"""

from __future__ import annotations

import importlib.metadata
import io
import json
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pymongo
import pytest

from harness.core.ports import TargetInfo
from harness.engine.run import pair_incompatibility
from harness.matrix.cells import Cell
from harness.matrix.definition import Driver, MatrixDefinition
from harness.matrix.envs import EnvOutcome
from harness.matrix.manifest import INCOMPATIBLE, INCOMPATIBLE_STAGE, Manifest, cell_dir
from harness.matrix.probe import probe
from harness.matrix.process import Children
from harness.matrix.scheduler import CELL_RECORD_SCHEMA, MatrixRun, Printer
from harness.matrix.summary import exit_status, summary_lines

REFUSED = "mongo-java-server=1.47.0,server=4.2"  # reports wire version 8; pymongo 4.20 needs 9
#: npm's words for a registry it cannot reach (as opposed to one that says the release does not exist).
UNREACHABLE = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ENETUNREACH", "ECONNRESET", "network")


def needs_java() -> None:
    if shutil.which("java") is None:
        pytest.skip("mongo-java-server needs java on PATH")


@dataclass
class FakeDriver:
    """The two fields of a DriverAdapter that pair_incompatibility reads, and the two its message names."""

    min_wire_version: int | None
    name: str = "node"
    version: str = "6.10.0"


def target(max_wire_version: int | None) -> TargetInfo:
    return TargetInfo(
        kind="mongo-java-server", name="mongo-java-server", version="4.2.0", max_wire_version=max_wire_version
    )


def test_a_driver_refusing_the_target_s_wire_version_is_an_incompatible_pair():
    assert pair_incompatibility(FakeDriver(9), target(8)) == (
        "node 6.10.0 needs wire version 9 or later, and target mongo-java-server 4.2.0 reports 8: the pair cannot work"
    )
    assert pair_incompatibility(FakeDriver(21), target(17)) is not None


def test_a_target_new_enough_for_the_driver_is_no_reason():
    assert pair_incompatibility(FakeDriver(9), target(9)) is None
    assert pair_incompatibility(FakeDriver(9), target(25)) is None
    assert pair_incompatibility(FakeDriver(0), target(8)) is None


@pytest.mark.parametrize("needs, has", [(None, 8), (9, None), (None, None)])
def test_an_unknown_wire_version_on_either_side_is_no_reason(needs, has):
    assert pair_incompatibility(FakeDriver(needs), target(has)) is None


def test_pymongo_and_mongo_java_server_claiming_4_2_are_incompatible():
    needs_java()
    outcome = probe("pymongo", REFUSED)
    assert outcome["failure"] is None and outcome["target"] is None
    assert outcome["driver"] == {
        "name": "pymongo",
        "version": pymongo.version,
        "language": "python",
        "executor": None,
        "min_wire_version": pymongo.common.MIN_SUPPORTED_WIRE_VERSION,
    }
    assert "server=4.2 reports wire version 8" in outcome["incompatible"]
    assert "choose server= one of" in outcome["incompatible"]


def test_pymongo_and_the_embedded_secantusdb_work_together_and_say_their_versions():
    outcome = probe("pymongo", "embedded")
    assert outcome["incompatible"] is None and outcome["failure"] is None
    assert outcome["driver"]["version"] == pymongo.version and outcome["driver"]["language"] == "python"
    started = outcome["target"]
    assert started["probed"] is True and started["name"] == "secantusdb" and started["topology"] == "replicaset"
    assert started["release"] == importlib.metadata.version("secantusdb")
    assert started["max_wire_version"] >= outcome["driver"]["min_wire_version"]


def test_a_real_server_is_not_started_by_the_probe():
    outcome = probe("pymongo", "uri=mongodb://127.0.0.1:9/")  # nothing listens there: it is never reached
    assert outcome["target"] == {"probed": False, "name": "uri"} and outcome["failure"] is None
    assert outcome["driver"]["name"] == "pymongo" and outcome["incompatible"] is None


def test_a_node_release_that_does_not_exist_fails_at_the_driver_stage():
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    outcome = probe("node@99.0.0", "embedded")
    failure = outcome["failure"]
    assert failure is not None and failure["stage"] == "driver", outcome
    if any(word in failure["reason"] for word in UNREACHABLE) and "ETARGET" not in failure["reason"]:
        pytest.skip(f"the npm registry cannot be reached: {failure['reason'][-300:]}")
    assert "99.0.0" in failure["reason"] and "ETARGET" in failure["reason"]  # npm: no matching version
    assert outcome["driver"] is None and outcome["target"] is None  # the target was never started


def test_the_probe_command_writes_its_document_and_exits_0(tmp_path):
    needs_java()
    out = tmp_path / "probe.json"
    done = subprocess.run(
        [sys.executable, "-m", "harness.matrix.probe", "--driver", "pymongo", "--target", REFUSED, str(out)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_text())
    assert set(document) == {"driver", "target", "incompatible", "failure"}
    assert "wire version 8" in document["incompatible"]


# -- the scheduler: an incompatible pair is probed once, recorded, and its repeats never run


class ThisInterpreter:
    """An environment cache whose every environment is this interpreter (the harness is installed in it)."""

    def __init__(self, root: Path) -> None:
        (root / "bin").mkdir(parents=True)
        # A wrapper, not a symlink: a symlink to a virtualenv's interpreter finds no pyvenv.cfg beside it and
        # starts without the virtualenv's packages (the harness among them).
        wrapper = root / "bin" / "python"
        wrapper.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
        wrapper.chmod(0o755)
        self.root = root

    def ensure(self, cell: Cell, log: Path) -> EnvOutcome:
        return EnvOutcome(self.root, "this", cached=True, installed={"pymongo": pymongo.version})


def test_the_scheduler_records_an_incompatible_cell_without_running_it(tmp_path):
    needs_java()
    cell = Cell(Driver("pymongo"), REFUSED)
    definition = MatrixDefinition(
        drivers=(cell.driver,), secantusdb=(), targets=(REFUSED,), servers=(), suites=("checks",), repeat=2
    )
    out = tmp_path / "out"
    manifest, _ = Manifest.open(out, definition, [cell], {cell.id: (tmp_path / "env", "this")})
    cache = ThisInterpreter(tmp_path / "env")
    terminal = io.StringIO()
    assert MatrixRun(definition, [cell], manifest, cache, Children(), out, Printer(terminal)).run() is None

    entry = json.loads((out / "manifest.json").read_text())["cells"][0]
    assert entry["failure"]["stage"] == INCOMPATIBLE_STAGE and "wire version 8" in entry["failure"]["reason"]
    assert [r["status"] for r in entry["repeats"]] == [INCOMPATIBLE, INCOMPATIBLE]
    assert "steps" not in entry["repeats"][0]  # no run was started
    assert entry["probe"]["incompatible"] == entry["failure"]["reason"]
    [line] = (out / cell_dir(cell.id) / "cell.jsonl").read_text().splitlines()
    said = json.loads(line)
    assert said["record"] == CELL_RECORD_SCHEMA and said["stage"] == INCOMPATIBLE_STAGE
    assert (
        said["cell"] == cell.id
        and said["labels"]["driver"] == "pymongo"
        and said["reason"] == entry["failure"]["reason"]
    )
    assert said["requested"] == cell.requested()
    assert f"{cell.id}: INCOMPATIBLE: mongo-java-server: server=4.2 reports wire version 8" in terminal.getvalue()
    data = json.loads((out / "manifest.json").read_text())
    assert exit_status(data) == 0 and summary_lines(data)[1].split()[1] == INCOMPATIBLE


def test_a_repeat_the_matrix_stops_before_its_run_starts_is_recorded_interrupted_not_running(tmp_path):
    """Ctrl-C between a repeat marked running and its process's start: the manifest must not keep it running."""
    from harness.matrix.manifest import INTERRUPTED
    from harness.matrix.process import Interrupted

    cell = Cell(Driver("pymongo"), "embedded", "0.7.0b3")
    definition = MatrixDefinition(
        drivers=(cell.driver,), secantusdb=("0.7.0b3",), targets=("embedded",), servers=(), suites=("checks",), repeat=1
    )
    out = tmp_path / "out"
    manifest, _ = Manifest.open(out, definition, [cell], {cell.id: (tmp_path / "env", "this")})
    children = Children()
    children.stopping.set()  # the Ctrl-C arrived: no new process may start
    cache = ThisInterpreter(tmp_path / "env")
    run = MatrixRun(definition, [cell], manifest, cache, children, out, Printer(io.StringIO()))
    env = EnvOutcome(tmp_path / "env", "this", cached=True, installed={})
    with pytest.raises(Interrupted):
        run._repeat(cell, env, 1, {})
    repeat = json.loads((out / "manifest.json").read_text())["cells"][0]["repeats"][0]
    assert repeat["status"] == INTERRUPTED and repeat["pid"] is None
