"""The matrix manifest: atomic rewrites, and resuming a matrix that was killed or interrupted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.matrix.cells import Cell
from harness.matrix.definition import Driver, MatrixDefinition
from harness.matrix.files import atomic_write_json
from harness.matrix.manifest import (
    DONE,
    FAILED,
    INCOMPATIBLE,
    INCOMPATIBLE_STAGE,
    PENDING,
    RUNNING,
    Manifest,
    ManifestError,
    repeat_status,
)

CELLS = [
    Cell(Driver("pymongo", "4.19.0"), "embedded", "0.7.0b3"),
    Cell(Driver("pymongo", "4.20.0"), "embedded", "0.7.0b3"),
]


def definition(repeat: int = 2, pymongo: tuple[str, ...] = ("4.19.0", "4.20.0")) -> MatrixDefinition:
    return MatrixDefinition(
        drivers=tuple(Driver("pymongo", release) for release in pymongo),
        secantusdb=("0.7.0b3",),
        targets=("embedded",),
        servers=(),
        suites=("prose",),
        repeat=repeat,
    )


def envs(key: str = "k1") -> dict:
    return {cell.id: (Path(f"/envs/{key}-{cell.pymongo}"), f"{key}-{cell.pymongo}") for cell in CELLS}


def open_manifest(out: Path, repeat: int = 2, key: str = "k1", **options):
    return Manifest.open(out, definition(repeat), CELLS, envs(key), **options)


def on_disk(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


def set_status(manifest: Manifest, cell: Cell, n: int, status: str, **fields) -> None:
    manifest.update(lambda: manifest.repeat(cell.id, n).update(status=status, **fields))


def test_a_new_manifest_lists_every_cell_and_repeat_pending(tmp_path):
    manifest, notes = open_manifest(tmp_path)
    data = on_disk(tmp_path)
    assert notes == [] and data["matrix"] == definition().matrix_id and data["record"] == "cs-harness.matrix/1"
    assert [c["id"] for c in data["cells"]] == [c.id for c in CELLS]
    first = data["cells"][0]
    assert first["requested"] == {
        "driver": "pymongo",
        "driver_release": "4.19.0",
        "pymongo": "4.19.0",
        "target": "embedded",
        "secantusdb": "0.7.0b3",
    }
    assert first["labels"] == CELLS[0].labels(definition().matrix_id) and first["failure"] is None
    assert first["env"]["path"] == "/envs/k1-4.19.0" and first["env"]["status"] == PENDING
    assert [(r["repeat"], r["status"], r["results"]) for r in first["repeats"]] == [
        (1, PENDING, f"cells/{CELLS[0].id}/r1.jsonl"),
        (2, PENDING, f"cells/{CELLS[0].id}/r2.jsonl"),
    ]
    assert manifest.pending(CELLS[0].id) == [1, 2]


def test_every_change_is_on_disk_at_once(tmp_path):
    manifest, _ = open_manifest(tmp_path)
    set_status(manifest, CELLS[1], 2, RUNNING, pid=4242)
    repeat = on_disk(tmp_path)["cells"][1]["repeats"][1]
    assert repeat["status"] == RUNNING and repeat["pid"] == 4242
    assert not list(tmp_path.glob(".manifest.json.*"))  # no temporary file left behind


def test_atomic_write_never_leaves_a_torn_file(tmp_path, monkeypatch):
    path = tmp_path / "state.json"
    atomic_write_json(path, {"v": 1})

    def crash(*args, **kwargs):
        raise OSError("disk gone")

    monkeypatch.setattr("os.replace", crash)
    with pytest.raises(OSError):
        atomic_write_json(path, {"v": 2})
    assert json.loads(path.read_text()) == {"v": 1}


def test_resume_after_a_kill_reruns_the_running_repeat_and_keeps_its_partial_results(tmp_path):
    manifest, _ = open_manifest(tmp_path)
    cell = CELLS[0]
    set_status(manifest, cell, 1, DONE, counts={"passed": 3})
    set_status(manifest, cell, 2, RUNNING, pid=None)
    set_status(manifest, CELLS[1], 1, FAILED, failure={"stage": "run", "reason": "exit 2"})
    partial = tmp_path / manifest.repeat(cell.id, 2)["results"]
    partial.parent.mkdir(parents=True, exist_ok=True)
    partial.write_text('{"record": "cs-harness.result/1", "outcome": "passed"}\n{"record": "cs-harn')
    finished = tmp_path / manifest.repeat(cell.id, 1)["results"]
    finished.write_text('{"record": "cs-harness.result/1"}\n')

    resumed, notes = open_manifest(tmp_path)  # the same command again, as after a SIGKILL
    assert resumed.pending(cell.id) == [2] and resumed.pending(CELLS[1].id) == [2]
    assert resumed.repeat(cell.id, 1)["status"] == DONE and resumed.repeat(cell.id, 1)["counts"] == {"passed": 3}
    assert resumed.repeat(CELLS[1].id, 1)["status"] == FAILED  # failed repeats stay failed ...
    assert finished.exists() and not partial.exists()
    [kept] = partial.parent.glob("r2.jsonl.interrupted-*")
    assert kept.read_text().startswith('{"record": "cs-harness.result/1", "outcome": "passed"}')
    assert resumed.repeat(cell.id, 2)["set_aside"] == [str(kept.relative_to(tmp_path))]
    assert len(notes) == 1 and "r2: was running, runs again" in notes[0] and kept.name in notes[0]

    again, _ = open_manifest(tmp_path, retry_failed=True)  # ... unless asked
    assert again.pending(CELLS[1].id) == [1, 2]


def test_resume_kills_the_children_a_killed_matrix_left_running(tmp_path):
    manifest, _ = open_manifest(tmp_path)
    results = tmp_path / manifest.repeat(CELLS[0].id, 1)["results"]
    orphan = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", str(results)], start_new_session=True
    )
    bystander = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", "unrelated"], start_new_session=True
    )
    try:
        set_status(manifest, CELLS[0], 1, RUNNING, pid=orphan.pid)
        set_status(manifest, CELLS[0], 2, RUNNING, pid=bystander.pid)  # a reused pid: not ours, left alone
        _, notes = open_manifest(tmp_path)
        assert orphan.wait(timeout=10) < 0
        assert bystander.poll() is None
        assert any(f"killed pid {orphan.pid}" in note for note in notes)
    finally:
        for process in (orphan, bystander):
            process.kill()
            process.wait()


def test_an_interrupted_repeat_runs_again(tmp_path):
    manifest, _ = open_manifest(tmp_path)
    set_status(manifest, CELLS[1], 1, "interrupted")
    resumed, notes = open_manifest(tmp_path)
    assert resumed.pending(CELLS[1].id) == [1, 2] and "was interrupted" in notes[0]


def test_another_definition_in_the_same_out_directory_is_refused(tmp_path):
    open_manifest(tmp_path)
    with pytest.raises(ManifestError, match=r"holds matrix m-.* with another definition"):
        Manifest.open(tmp_path, definition(pymongo=("4.20.0",)), CELLS[1:], envs())


def test_more_repeats_extend_a_finished_matrix_and_fewer_keep_finished_ones(tmp_path):
    manifest, _ = open_manifest(tmp_path, repeat=2)
    for cell in CELLS:
        for n in (1, 2):
            set_status(manifest, cell, n, DONE)
    extended, _ = open_manifest(tmp_path, repeat=3)
    assert extended.pending(CELLS[0].id) == [3]
    assert on_disk(tmp_path)["definition"]["repeat"] == 3
    shrunk, _ = open_manifest(tmp_path, repeat=1)
    assert [r["repeat"] for r in shrunk.cell(CELLS[0].id)["repeats"]] == [1, 2]  # done: kept; pending r3: dropped


def test_a_changed_environment_key_rebuilds_and_retries_cells_that_could_not_be_built(tmp_path):
    manifest, _ = open_manifest(tmp_path)
    failure = {"stage": "install", "reason": "no solution"}
    manifest.update(lambda: manifest.cell(CELLS[0].id).update(failure=failure))
    set_status(manifest, CELLS[0], 1, FAILED, failure=failure)
    set_status(manifest, CELLS[0], 2, FAILED, failure={"stage": "run", "reason": "exit 2"})
    same, _ = open_manifest(tmp_path)
    assert same.pending(CELLS[0].id) == []
    repinned, _ = open_manifest(tmp_path, key="k2")  # e.g. the harness's pins changed
    assert repinned.pending(CELLS[0].id) == [1] and repinned.cell(CELLS[0].id)["failure"] is None
    assert repinned.cell(CELLS[0].id)["env"]["key"] == "k2-4.19.0"


def test_an_unreadable_manifest_is_an_error_not_a_fresh_start(tmp_path):
    (tmp_path / "manifest.json").write_text('{"matrix": ')
    with pytest.raises(ManifestError, match="not a readable manifest"):
        open_manifest(tmp_path)


def test_new_repeats_of_a_cell_that_cannot_be_built_fail_as_it_did_without_another_build(tmp_path):
    manifest, _ = open_manifest(tmp_path, repeat=1)
    failure = {"stage": "install", "reason": "no solution", "at": "then"}
    manifest.update(lambda: manifest.cell(CELLS[0].id).update(failure=failure))
    set_status(manifest, CELLS[0], 1, FAILED, failure=failure)
    extended, _ = open_manifest(tmp_path, repeat=2)
    assert extended.pending(CELLS[0].id) == [] and extended.repeat(CELLS[0].id, 2)["failure"] == failure
    assert extended.pending(CELLS[1].id) == [1, 2]
    retried, _ = open_manifest(tmp_path, repeat=2, retry_failed=True)
    assert retried.pending(CELLS[0].id) == [1, 2]


def _incompatible(manifest: Manifest, cell: Cell, reason: str = "node 6.10.0 needs wire version 9 or later") -> dict:
    """What the scheduler makes of a probe that says the pair cannot work: the cell's failure, its repeats'."""
    failure = {"stage": INCOMPATIBLE_STAGE, "reason": reason, "at": "then"}
    manifest.update(lambda: manifest.cell(cell.id).update(failure=failure))
    for n in manifest.pending(cell.id):
        set_status(manifest, cell, n, repeat_status(failure), failure=failure)
    return failure


def test_a_cell_s_failure_makes_its_repeats_incompatible_only_at_the_incompatible_stage():
    assert repeat_status({"stage": INCOMPATIBLE_STAGE, "reason": "x"}) == INCOMPATIBLE == "incompatible"
    for stage in ("install", "import", "probe", "driver", "target", "run"):
        assert repeat_status({"stage": stage, "reason": "x"}) == FAILED, stage


def test_incompatible_repeats_stay_as_they_are_on_resume_and_new_ones_are_incompatible_too(tmp_path):
    manifest, _ = open_manifest(tmp_path)
    failure = _incompatible(manifest, CELLS[0])
    resumed, notes = open_manifest(tmp_path)  # the same command again: nothing to run, nothing said
    assert notes == [] and resumed.pending(CELLS[0].id) == [] and resumed.pending(CELLS[1].id) == [1, 2]
    assert [r["status"] for r in resumed.cell(CELLS[0].id)["repeats"]] == [INCOMPATIBLE, INCOMPATIBLE]
    extended, _ = open_manifest(tmp_path, repeat=3)  # a new repeat of a pair that cannot work is not tried
    assert extended.pending(CELLS[0].id) == [] and extended.repeat(CELLS[0].id, 3)["status"] == INCOMPATIBLE
    assert extended.repeat(CELLS[0].id, 3)["failure"] == failure and extended.pending(CELLS[1].id) == [1, 2, 3]
    on_file = on_disk(tmp_path)["cells"][0]
    assert on_file["failure"]["stage"] == INCOMPATIBLE_STAGE and on_file["repeats"][2]["status"] == INCOMPATIBLE


def test_retry_failed_tries_an_incompatible_cell_again(tmp_path):
    manifest, _ = open_manifest(tmp_path)
    _incompatible(manifest, CELLS[0])
    retried, notes = open_manifest(tmp_path, retry_failed=True)  # e.g. the driver or the target was fixed
    assert retried.pending(CELLS[0].id) == [1, 2] and retried.cell(CELLS[0].id)["failure"] is None
    assert retried.cell(CELLS[0].id)["env"]["status"] == PENDING
    assert [note.split(": ", 1)[1] for note in notes] == ["was incompatible, runs again"] * 2
    assert all(r.get("failure") is None for r in retried.cell(CELLS[0].id)["repeats"])


def test_a_changed_environment_key_probes_an_incompatible_cell_again(tmp_path):
    """The probe runs in the cell's environment (its pymongo, its SecantusDB): a new environment may make a pair
    work, as it may install what failed to install."""
    manifest, _ = open_manifest(tmp_path)
    _incompatible(manifest, CELLS[0])
    repinned, _ = open_manifest(tmp_path, key="k2")
    assert repinned.cell(CELLS[0].id)["env"]["key"] == "k2-4.19.0" and repinned.cell(CELLS[0].id)["failure"] is None
    assert repinned.pending(CELLS[0].id) == [1, 2]


def test_running_some_cells_keeps_the_others_finished_repeats(tmp_path):
    manifest, _ = open_manifest(tmp_path)
    for n in (1, 2):
        set_status(manifest, CELLS[0], n, DONE, counts={"passed": 3})
    Manifest.open(tmp_path, definition(), CELLS[1:], envs())  # --cell <the second cell>, the same definition
    whole, _ = open_manifest(tmp_path)
    assert whole.pending(CELLS[0].id) == [] and whole.repeat(CELLS[0].id, 1)["counts"] == {"passed": 3}


def test_the_run_header_counts_the_cells_chosen_not_every_cell_of_a_shared_manifest(tmp_path):
    from types import SimpleNamespace

    from harness.matrix.cli import _header

    manifest = open_manifest(tmp_path, repeat=2)[0]
    set_status(manifest, CELLS[1], 1, DONE)
    cache = SimpleNamespace(root=tmp_path / "envs", installer=SimpleNamespace(name="uv"))
    every = _header(definition(2), manifest, CELLS, cache, tmp_path)[0]
    assert "2 cell(s) x 2 repeat(s); 3 of 4 run(s) to do" in every
    chosen = _header(definition(2), manifest, [CELLS[1]], cache, tmp_path)[0]
    assert "1 cell(s) x 2 repeat(s); 1 of 2 run(s) to do" in chosen
