"""Result records and the append-only results store.

One JSON object per line, written and flushed (and fsynced) the moment a
test ends, so a run killed at any point keeps every finished test. Records
are self-describing: ``record`` names the schema, and each carries the full
provenance of the run (target, driver, harness, Python, host), so files from
many runs can be concatenated and aggregated without side tables.
"""

from __future__ import annotations

import json
import os
import platform
import socket
import threading
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from bson import json_util
from bson.json_util import JSONOptions, JSONMode

from harness import __version__

RECORD_SCHEMA = "cs-harness.result/1"
#: How records are written: relaxed Extended JSON (plain numbers, ``{"$oid": ...}`` for ObjectIds).
RELAXED_JSON = JSONOptions(json_mode=JSONMode.RELAXED)


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:8]


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@dataclass
class RunProvenance:
    """Facts about the run that every record repeats."""

    run_id: str
    target: dict[str, Any]
    driver: dict[str, Any]
    failpoints: str = "native"
    extra: dict[str, Any] = field(default_factory=dict)

    def as_fields(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "target": self.target,
            "driver": self.driver,
            "failpoints": self.failpoints,
            "harness": {"name": "cs-conformance-harness", "version": __version__},
            "python": {"implementation": platform.python_implementation(), "version": platform.python_version()},
            "host": {"name": socket.gethostname(), "platform": platform.platform()},
            **self.extra,
        }


def make_record(
    provenance: RunProvenance,
    *,
    format: str,
    file: str,
    test: str,
    test_id: str,
    outcome: str,
    message: str,
    started_at: str,
    duration_s: float,
    line: int | None = None,
    mismatches: list[str] | None = None,
    expectation: dict[str, Any] | None = None,
    details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    record = {
        "record": RECORD_SCHEMA,
        "format": format,
        "file": file,
        "test": test,
        "test_id": test_id,
        "line": line,
        "outcome": outcome,
        "message": message,
        "mismatches": mismatches or [],
        "started_at": started_at,
        "duration_s": round(duration_s, 6),
        **provenance.as_fields(),
    }
    if expectation is not None:
        record["expectation"] = expectation
    if details:
        record["details"] = details
    return record


def record_line(record: dict[str, Any]) -> str:
    """A record as the one line of JSON a results file holds (also a JUnit property's value)."""
    return json_util.dumps(record, json_options=RELAXED_JSON, sort_keys=False)


class ResultsStore:
    """Appends records to a JSON-lines file; each write is durable before it returns."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._file = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the store
            if _ends_mid_line(path):  # a run killed mid-write: keep its torn line apart from ours
                self._file.write("\n")
                self._file.flush()

    def append(self, record: dict[str, Any]) -> None:
        if self._file is None:
            return
        line = record_line(record)
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()
            os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _ends_mid_line(path: Path) -> bool:
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        if handle.tell() == 0:
            return False
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) != b"\n"


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every complete record in a results file (a torn last line, from a kill mid-write, is ignored)."""
    records = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return records
