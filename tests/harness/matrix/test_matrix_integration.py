"""``harness matrix`` for real: environments built offline from a wheelhouse, real runs, resume, Ctrl-C.

A 2 x 2 matrix (two pymongo releases x two SecantusDB releases from the
wheelhouse) plus an uninstallable pymongo (0.0.1), two repeats, two cells at
a time, a few fast tests (``-k showExpandedEvents``). Everything installs
with ``--offline --find-links .tools/wheels``: no index is reached. The
wheelhouse is filled by ``python -m harness.matrix.wheelhouse`` (see FILL),
which also writes ``matrix-versions.json``, the versions used here.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest
from packaging.version import Version

from harness.engine.results_store import read_records
from tests.conftest import LEGACY_DIR, UNIFIED_DIR, require_shared_specs
from tests.paths import REPO

WHEELS = REPO / ".tools" / "wheels"
FILL = "python -m harness.matrix.wheelhouse --dest .tools/wheels --pymongo 4.6.3,4.20.0 --secantusdb 0.7.0b0,0.7.0b3"
KEYWORD = "showExpandedEvents"
BAD_PYMONGO = "0.0.1"


@dataclass
class Matrix:
    argv: list[str]
    done: subprocess.CompletedProcess
    out: Path
    envs: Path
    pymongo: list[str]
    secantusdb: list[str]

    @property
    def manifest(self) -> dict:
        return json.loads((self.out / "manifest.json").read_text())

    def cells(self, good: bool = True) -> list[dict]:
        return [c for c in self.manifest["cells"] if (c["requested"]["pymongo"] != BAD_PYMONGO) == good]


def matrix_command(*argv: str) -> list[str]:
    return [sys.executable, "-m", "harness.app.cli", "matrix", *argv]


def run_matrix(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(matrix_command(*argv), cwd=REPO, capture_output=True, text=True, timeout=900)


def arguments(out: Path, envs: Path, pymongo: list[str], secantusdb: list[str], repeat: int = 2) -> list[str]:
    return [
        "--pymongo",
        ",".join(pymongo),
        "--secantusdb",
        ",".join(secantusdb),
        "--suites",
        "legacy,unified,prose",
        "--specs-legacy",
        str(LEGACY_DIR),
        "--specs-unified",
        str(UNIFIED_DIR),
        "-k",
        KEYWORD,
        "--repeat",
        str(repeat),
        "--jobs",
        "2",
        "--out",
        str(out),
        "--envs",
        str(envs),
        "--find-links",
        str(WHEELS),
        "--offline",
    ]


@pytest.fixture(scope="module")
def wheelhouse() -> dict:
    listing = WHEELS / "matrix-versions.json"
    if not listing.exists():
        pytest.skip(f"no offline wheelhouse at {WHEELS}; fill it (from the repository root) with: {FILL}")
    versions = json.loads(listing.read_text())
    if len(versions["pymongo"]) < 2 or len(versions["secantusdb"]) < 2:
        pytest.skip(
            f"the wheelhouse at {WHEELS} holds fewer than 2 pymongo or SecantusDB releases; fill it with: {FILL}"
        )
    return {"pymongo": versions["pymongo"][:2], "secantusdb": versions["secantusdb"][:2]}


@pytest.fixture(scope="module")
def matrix(wheelhouse, tmp_path_factory) -> Matrix:
    require_shared_specs()
    base = tmp_path_factory.mktemp("matrix")
    pymongo = wheelhouse["pymongo"] + [BAD_PYMONGO]
    argv = arguments(base / "out", base / "envs", pymongo, wheelhouse["secantusdb"])
    done = run_matrix(argv)
    return Matrix(argv, done, base / "out", base / "envs", wheelhouse["pymongo"], wheelhouse["secantusdb"])


def test_every_buildable_cell_runs_every_repeat(matrix):
    assert matrix.done.returncode == 1, matrix.done.stdout + matrix.done.stderr  # 1: two cells cannot be built
    manifest = matrix.manifest
    assert len(manifest["cells"]) == 3 * 2 and manifest["definition"]["repeat"] == 2
    good = matrix.cells()
    assert {(c["requested"]["pymongo"], c["requested"]["secantusdb"]) for c in good} == {
        (p, s) for p in matrix.pymongo for s in matrix.secantusdb
    }
    for cell in good:
        assert cell["env"]["status"] == "ready" and cell["env"]["build_s"] > 0 and not cell["env"]["cached"]
        assert Path(cell["env"]["path"]).parent == matrix.envs
        assert [r["status"] for r in cell["repeats"]] == ["done", "done"], cell["repeats"]
        for repeat in cell["repeats"]:
            assert [s["step"] for s in repeat["steps"]] == ["run"] and repeat["steps"][0]["exit"] == 0
            assert repeat["counts"]["passed"] > 0 and (matrix.out / repeat["log"]).stat().st_size > 0
    for cell in good:
        assert re.search(rf"^{re.escape(cell['id'])} +done ", matrix.done.stdout, re.MULTILINE)


def test_records_carry_the_labels_and_the_versions_that_actually_ran(matrix):
    seen = set()
    for cell in matrix.cells():
        requested = cell["requested"]
        for repeat in cell["repeats"]:
            records = read_records(matrix.out / repeat["results"])
            assert len(records) == sum(repeat["counts"].values()) > 0
            for record in records:
                assert record["labels"]["matrix"] == matrix.manifest["matrix"]
                assert record["labels"]["cell"] == cell["id"] and record["labels"]["repeat"] == str(repeat["repeat"])
                assert Version(record["driver"]["version"]) == Version(requested["pymongo"])
                assert record["target"]["details"]["package_version"] == requested["secantusdb"]
                seen.add((record["driver"]["version"], record["target"]["details"]["package_version"]))
            assert {axis: v["verdict"] for axis, v in repeat["versions"].items()} == {"driver": "ok", "target": "ok"}
            assert repeat["versions"]["driver"]["actual"] == [records[0]["driver"]["version"]]
    assert len(seen) == 4  # four cells, four different environments really used


def test_a_cell_that_cannot_be_built_is_recorded_with_its_reason_and_the_rest_go_on(matrix):
    bad = matrix.cells(good=False)
    assert len(bad) == 2
    for cell in bad:
        assert cell["failure"]["stage"] == "install" and f"pymongo=={BAD_PYMONGO}" in cell["failure"]["reason"]
        assert [r["status"] for r in cell["repeats"]] == ["failed", "failed"]
        assert not list((matrix.out / "cells" / cell["id"]).glob("r*.jsonl"))
        [line] = (matrix.out / "cells" / cell["id"] / "cell.jsonl").read_text().splitlines()
        record = json.loads(line)
        assert record["record"] == "cs-harness.cell/1" and record["stage"] == "install"
        assert record["matrix"] == matrix.manifest["matrix"] and record["cell"] == cell["id"]
        assert record["labels"]["pymongo"] == BAD_PYMONGO and f"pymongo=={BAD_PYMONGO}" in record["reason"]
        assert f"{cell['id']}: CANNOT BE BUILT (install)" in matrix.done.stdout
        assert re.search(rf"^{re.escape(cell['id'])} +failed ", matrix.done.stdout, re.MULTILINE)


def test_two_jobs_run_two_cells_at_once(matrix):
    spans = {}
    for cell in matrix.cells():
        for repeat in cell["repeats"]:
            spans[(cell["id"], repeat["repeat"])] = (
                datetime.fromisoformat(repeat["started_at"]),
                datetime.fromisoformat(repeat["finished_at"]),
            )
    overlapping = [
        (a, b) for a in spans for b in spans if a[0] < b[0] and spans[a][0] < spans[b][1] and spans[b][0] < spans[a][1]
    ]
    assert overlapping, spans


def test_the_same_command_again_skips_everything_and_rebuilds_nothing(matrix):
    markers = {p: p.stat().st_mtime_ns for p in matrix.envs.glob("*/cs-harness-env.json")}
    assert len(markers) == 4
    before = matrix.manifest
    again = run_matrix(matrix.argv)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "0 of 12 run(s) to do" in again.stdout and "environment" not in again.stdout.split("\n", 2)[2]
    after = matrix.manifest
    assert [[r | {"set_aside": []} for r in c["repeats"]] for c in after["cells"]] == [
        [r | {"set_aside": []} for r in c["repeats"]] for c in before["cells"]
    ]
    assert {p: p.stat().st_mtime_ns for p in matrix.envs.glob("*/cs-harness-env.json")} == markers


def test_another_repeat_starts_from_the_cached_environments(matrix):
    markers = {p: p.stat().st_mtime_ns for p in matrix.envs.glob("*/cs-harness-env.json")}
    argv = [
        *matrix.argv[: matrix.argv.index("--repeat")],
        "--repeat",
        "3",
        *matrix.argv[matrix.argv.index("--repeat") + 2 :],
    ]
    done = run_matrix(argv)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "4 of 18 run(s) to do" in done.stdout
    for cell in matrix.cells():
        assert cell["env"]["cached"] is True and cell["env"]["status"] == "ready"
        assert [r["status"] for r in cell["repeats"]] == ["done", "done", "done"]
        assert f"{cell['id']}: environment cached, ready in" in done.stdout
    assert {p: p.stat().st_mtime_ns for p in matrix.envs.glob("*/cs-harness-env.json")} == markers


def _wait_for_a_running_repeat(out: Path, process: subprocess.Popen) -> dict:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        try:
            manifest = json.loads((out / "manifest.json").read_text())
        except (OSError, ValueError):
            manifest = {"cells": []}
        running = [r for c in manifest["cells"] for r in c["repeats"] if r["status"] == "running" and r.get("pid")]
        if running:
            return running[0]
        time.sleep(0.05)
    pytest.fail(f"no repeat was seen running (matrix exit {process.poll()})")


def test_ctrl_c_stops_every_child_and_the_same_command_resumes(matrix, tmp_path):
    argv = arguments(tmp_path / "out", matrix.envs, matrix.pymongo, matrix.secantusdb[:1], repeat=1)
    process = subprocess.Popen(
        matrix_command(*argv), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    running = _wait_for_a_running_repeat(tmp_path / "out", process)
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 130, output
    assert "interrupted: rerun the same command to resume" in output
    with pytest.raises(ProcessLookupError):
        os.killpg(running["pid"], 0)  # the run's whole process group is gone
    statuses = [
        r["status"] for c in json.loads((tmp_path / "out" / "manifest.json").read_text())["cells"] for r in c["repeats"]
    ]
    assert "interrupted" in statuses and "running" not in statuses
    partial = tmp_path / "out" / running["results"]
    had_partial = partial.exists()

    resumed = run_matrix(argv)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "was interrupted, runs again" in resumed.stdout
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert all(r["status"] == "done" for c in manifest["cells"] for r in c["repeats"])
    kept = list(partial.parent.glob("r1.jsonl.interrupted-*"))
    assert len(kept) == (1 if had_partial else 0)
    records = read_records(partial)
    assert len({r["run_id"] for r in records}) == 1  # the rerun's records only, none of the interrupted run's


def test_without_uv_a_cell_is_built_with_venv_and_pip(wheelhouse, tmp_path):
    require_shared_specs()
    pymongo, secantusdb = wheelhouse["pymongo"][-1:], wheelhouse["secantusdb"][-1:]
    done = run_matrix(
        [*arguments(tmp_path / "out", tmp_path / "envs", pymongo, secantusdb, repeat=1), "--installer", "pip"]
    )
    assert done.returncode == 0, done.stdout + done.stderr
    [cell] = json.loads((tmp_path / "out" / "manifest.json").read_text())["cells"]
    marker = json.loads((Path(cell["env"]["path"]) / "cs-harness-env.json").read_text())
    assert marker["installer"] == "pip" and (Path(cell["env"]["path"]) / "bin" / "pip").exists()
    assert "-m pip install" in (tmp_path / "out" / cell["env"]["log"]).read_text()
    [repeat] = cell["repeats"]
    assert repeat["status"] == "done" and repeat["versions"]["driver"]["actual"] == pymongo
    assert repeat["versions"]["target"] == {"requested": secantusdb[0], "actual": secantusdb, "verdict": "ok"}
