"""Result records: one self-describing JSON object per test (per attempt of a test run more than once).

Records are self-describing: ``record`` names the schema, and each carries the full
provenance of the run (target, driver, harness, Python, host), so files from
many runs can be concatenated and aggregated without side tables. The fields, their
order and which are left out when empty are the record's description
(:data:`harness.record.schema.RESULT`, docs/record.md), which the report reads too.
"""

from __future__ import annotations

import platform
import socket
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from bson import json_util
from bson.json_util import JSONMode, JSONOptions

from harness import __version__
from harness.core.credentials import redact_text
from harness.record.schema import RESULT, RESULT_KIND

RECORD_SCHEMA = RESULT_KIND
#: The test's own fields, in the order a record has them (the run's provenance follows).
_PER_TEST = tuple(f for f in RESULT.fields if f.per_test)
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
            "target": redacted_target(self.target),
            "driver": self.driver,
            "failpoints": self.failpoints,
            "harness": {"name": "cs-conformance-harness", "version": __version__},
            "python": {"implementation": platform.python_implementation(), "version": platform.python_version()},
            "host": {"name": socket.gethostname(), "platform": platform.platform()},
            **self.extra,
        }


def redacted_target(target: dict[str, Any]) -> dict[str, Any]:
    """A target's provenance with its connection string's secrets hidden: a record is written to a file and shared,
    whichever target built the provenance (the targets redact it too; this is where it leaves the process)."""
    if not isinstance(target.get("uri"), str):
        return target
    return {**target, "uri": redact_text(target["uri"])}


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
    rules: list[str] | None = None,
    causes: list[dict[str, Any]] | None = None,
    not_reached: list[str] | None = None,
    attempt: int = 1,
) -> dict[str, Any]:
    """One result record; ``rules`` are the ids of the rules the test checks (``harness coverage``), always a list;
    ``attempt`` counts the runs of the test in this run, from 1. A field the description does not require is left
    out when it has no value (``expectation``, ``details``)."""
    values: dict[str, Any] = {
        "record": RECORD_SCHEMA,
        "format": format,
        "file": file,
        "test": test,
        "test_id": test_id,
        "line": line,
        "rules": list(rules or []),
        "outcome": outcome,
        "attempt": attempt,
        "message": message,
        "mismatches": mismatches or [],
        #: Why it failed, one object per broken check (docs/causes.md); [] for a pass or a skip.
        "causes": causes or [],
        "not_reached": not_reached or [],
        "started_at": started_at,
        "duration_s": round(duration_s, 6),
        "expectation": expectation,
        "details": details or None,
    }
    record = {f.name: values[f.name] for f in _PER_TEST if f.required or values[f.name] is not None}
    return {**record, **provenance.as_fields()}


def record_line(record: dict[str, Any]) -> str:
    """A record as the one line of JSON a results file holds (also a JUnit property's value)."""
    return json_util.dumps(record, json_options=RELAXED_JSON, sort_keys=False)
