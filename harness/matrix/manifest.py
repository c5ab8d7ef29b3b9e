"""The durable state of one matrix: ``<out>/manifest.json``, rewritten atomically at every change.

The manifest is what makes a matrix resumable and auditable: the definition,
and per cell its labels, requested versions, environment (path, cache key,
build time, what the import check found installed) and per repeat its status
(``pending``, ``running``, ``done``, ``failed``, ``interrupted``), results and
log files, pid, timings, exit codes, outcome counts and the versions the
records say ran.

Resuming (the same command, the same ``--out``): ``done`` and ``failed``
repeats are kept as they are (``--retry-failed`` turns failed ones back to
pending); a repeat that was ``running`` (the matrix was killed) or
``interrupted`` (Ctrl-C) runs again, after its partial results file is moved
aside to ``r<N>.jsonl.interrupted-<timestamp>`` (kept for inspection, never
read by a report, which reads ``*.jsonl``) and after any child the killed
matrix left running on it is killed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness.core.records import utc_now
from harness.matrix.cells import Cell
from harness.matrix.definition import MatrixDefinition
from harness.matrix.files import atomic_write_json, read_json
from harness.matrix.process import kill_orphan

MANIFEST_SCHEMA = "cs-harness.matrix/1"
PENDING, RUNNING, DONE, FAILED, INTERRUPTED = "pending", "running", "done", "failed", "interrupted"
#: A repeat that was never run because its driver and target cannot work together (the cell's ``failure`` says
#: why): a result, not a fault of the matrix.
INCOMPATIBLE = "incompatible"
#: The ``failure`` stage of such a cell.
INCOMPATIBLE_STAGE = "incompatible"


class ManifestError(Exception):
    """The output directory holds a manifest this matrix cannot continue."""


def cell_dir(cell_id: str) -> str:
    return f"cells/{cell_id}"


def _new_repeat(cell_id: str, n: int) -> dict[str, Any]:
    return {
        "repeat": n,
        "status": PENDING,
        "results": f"{cell_dir(cell_id)}/r{n}.jsonl",
        "log": f"{cell_dir(cell_id)}/r{n}.log",
        "set_aside": [],
    }


def _new_cell(cell: Cell, matrix_id: str, env: Path, key: str) -> dict[str, Any]:
    return {
        "id": cell.id,
        "labels": cell.labels(matrix_id),
        "requested": cell.requested(),
        "env": {"path": str(env), "key": key, "status": PENDING, "log": f"{cell_dir(cell.id)}/env.log"},
        "failure": None,
        "repeats": [],
    }


def repeat_status(failure: dict[str, Any]) -> str:
    """What a cell's failure makes of the repeats it stops: ``incompatible`` for a pair that cannot work."""
    return INCOMPATIBLE if failure.get("stage") == INCOMPATIBLE_STAGE else FAILED


def set_aside(path: Path, now: datetime | None = None) -> Path | None:
    """Move a results file that no finished run wrote to ``<name>.interrupted-<UTC timestamp>``."""
    if not path.exists():
        return None
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%S%fZ")
    target = path.with_name(f"{path.name}.interrupted-{stamp}")
    path.rename(target)
    return target


def recover(data: dict[str, Any], out: Path, *, retry_failed: bool = False) -> list[str]:
    """Make a loaded manifest runnable again; returns one line per repeat it reset (for the terminal)."""
    notes = []
    for cell in data["cells"]:
        if cell["env"].get("status") == "building":
            cell["env"]["status"] = PENDING
        if retry_failed and cell.get("failure"):
            cell["failure"] = None
            cell["env"]["status"] = PENDING
        for repeat in cell["repeats"]:
            status = repeat["status"]
            if status not in (RUNNING, INTERRUPTED) and not (retry_failed and status in (FAILED, INCOMPATIBLE)):
                continue
            results = out / repeat["results"]
            if status == RUNNING and repeat.get("pid") and kill_orphan(repeat["pid"], str(results)):
                notes.append(f"{cell['id']} r{repeat['repeat']}: killed pid {repeat['pid']} left by the killed matrix")
            moved = set_aside(results)
            if moved is not None:
                repeat["set_aside"].append(str(moved.relative_to(out)))
            notes.append(
                f"{cell['id']} r{repeat['repeat']}: was {status}, runs again"
                + (f" (partial results kept as {moved.name})" if moved else "")
            )
            fresh = _new_repeat(cell["id"], repeat["repeat"])
            fresh["set_aside"] = repeat["set_aside"]
            repeat.clear()
            repeat.update(fresh)
    return notes


def reconcile(
    data: dict[str, Any], definition: MatrixDefinition, cells: list[Cell], envs: dict[str, tuple[Path, str]]
) -> None:
    """Bring the manifest to the definition: every cell, ``repeat`` repeats each (finished ones are never dropped)."""
    data["definition"] = definition.describe()
    by_id = {cell["id"]: cell for cell in data["cells"]}
    ordered = []
    for cell in cells:
        path, key = envs[cell.id]
        entry = by_id.get(cell.id) or _new_cell(cell, definition.matrix_id, path, key)
        if entry["env"]["key"] != key:  # the pins or the interpreter changed: a new environment, a new build
            entry["env"] = {**_new_cell(cell, definition.matrix_id, path, key)["env"]}
            entry["failure"] = None
            entry["repeats"] = [
                _new_repeat(cell.id, r["repeat"])
                if r["status"] == INCOMPATIBLE
                or (r["status"] == FAILED and (r.get("failure") or {}).get("stage") in ("install", "import"))
                else r
                for r in entry["repeats"]
            ]
        have = {repeat["repeat"] for repeat in entry["repeats"]}
        entry["repeats"] += [_new_repeat(cell.id, n) for n in range(1, definition.repeat + 1) if n not in have]
        entry["repeats"] = [r for r in entry["repeats"] if r["repeat"] <= definition.repeat or r["status"] != PENDING]
        entry["repeats"].sort(key=lambda r: r["repeat"])
        if entry["failure"]:  # new repeats of a cell that cannot be built fail as it did (--retry-failed tries again)
            for repeat in entry["repeats"]:
                if repeat["status"] == PENDING:
                    repeat.update(status=repeat_status(entry["failure"]), failure=entry["failure"])
        ordered.append(entry)
    chosen = {cell.id for cell in cells}  # a --cell run keeps the other cells' entries as they are
    data["cells"] = ordered + [entry for entry in by_id.values() if entry["id"] not in chosen]


class Manifest:
    """The manifest in memory, shared by the cell workers; every change is written through at once."""

    def __init__(self, path: Path, data: dict[str, Any]) -> None:
        self.path = path
        self.data = data
        self._lock = threading.RLock()
        self._cells = {cell["id"]: cell for cell in data["cells"]}

    @classmethod
    def open(
        cls,
        out: Path,
        definition: MatrixDefinition,
        cells: list[Cell],
        envs: dict[str, tuple[Path, str]],
        *,
        retry_failed: bool = False,
    ) -> tuple[Manifest, list[str]]:
        path = out / "manifest.json"
        data = read_json(path) if path.exists() else None
        notes: list[str] = []
        if path.exists() and not isinstance(data, dict):
            raise ManifestError(f"{path} is not a readable manifest; move it away or use another --out")
        if data is None:
            data = {
                "record": MANIFEST_SCHEMA,
                "matrix": definition.matrix_id,
                "created_at": utc_now(),
                "out": str(out),
                "cells": [],
            }
        elif data.get("matrix") != definition.matrix_id:
            raise ManifestError(
                f"{out} holds matrix {data.get('matrix')} with another definition "
                f"(this one is {definition.matrix_id}); use another --out, or the same definition "
                f"to resume it (see {path})"
            )
        else:
            notes = recover(data, out, retry_failed=retry_failed)
        reconcile(data, definition, cells, envs)
        manifest = cls(path, data)
        manifest.write()
        return manifest, notes

    def write(self) -> None:
        with self._lock:
            self.data["updated_at"] = utc_now()
            atomic_write_json(self.path, self.data)

    def cell(self, cell_id: str) -> dict[str, Any]:
        return self._cells[cell_id]

    def repeat(self, cell_id: str, n: int) -> dict[str, Any]:
        return next(r for r in self._cells[cell_id]["repeats"] if r["repeat"] == n)

    def update(self, change: Callable[[], None]) -> None:
        """Apply ``change`` (which edits dicts obtained from this manifest) and write the manifest."""
        with self._lock:
            change()
            self.write()

    def pending(self, cell_id: str) -> list[int]:
        with self._lock:
            return [r["repeat"] for r in self._cells[cell_id]["repeats"] if r["status"] == PENDING]
