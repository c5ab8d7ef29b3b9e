"""The certification bundle ``harness certify`` writes: its manifest, its hashes, its log and its archive.

A statement alone asks its reader to trust the machine that made it; the bundle carries what a third party needs
to check it offline (``harness certify --verify``, :mod:`harness.app.certify_verify`): the records, the log, the
expected-outcomes files the run read, and a manifest that names the versions the records show, every spec file
by path and SHA-256 with its pin standing, and a SHA-256 of every other file. docs/certify.md ("Certification
bundles") is the format; the facts both sides compute (a source's spec files, the versions the records show) are
computed here once, for the writer and the verifier alike.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import shutil
import sys
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

BUNDLE_SCHEMA = "cs-harness.bundle/1"
MANIFEST = "manifest.json"
#: Where the bundle keeps the expected-outcomes files, at their paths under the project's ``specs/expectations/``.
EXPECTATIONS = "expectations"
SHIPPED_EXPECTATIONS = "specs/expectations"
#: A run's file kinds, each a name in the manifest's ``runs[]`` and a suffix after the mode's stem.
RUN_FILES = {
    "statement": ".json",
    "page": ".html",
    "badge": ".badge.json",
    "results": ".results.jsonl",
    "log": ".log",
}


@dataclass
class CertifiedRun:
    """One iteration mode's run of the main job: its files' stem, its exit status, its records."""

    mode: str
    default: bool
    stem: str
    exit_status: int
    records: list[dict[str, Any]]

    def file(self, kind: str) -> str:
        return self.stem + RUN_FILES[kind]


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# -- the run's log ------------------------------------------------------------------------------------
class _Tee:
    """A text stream that writes to the console and to the log; never a terminal (no live line in a log)."""

    def __init__(self, console: TextIO, log: TextIO) -> None:
        self.console, self.log = console, log

    def write(self, text: str) -> int:
        self.log.write(text)
        return self.console.write(text)

    def flush(self) -> None:
        self.log.flush()
        self.console.flush()

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return self.log.encoding


@contextlib.contextmanager
def logged_output(path: Path) -> Iterator[None]:
    """What this process prints on stdout and stderr while inside, also written to ``path`` (the run's log)."""
    with path.open("w", encoding="utf-8") as log:
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = _Tee(saved[0], log), _Tee(saved[1], log)  # type: ignore[assignment]
        try:
            yield
        finally:
            sys.stdout, sys.stderr = saved


# -- facts the writer and the verifier compute alike ----------------------------------------------------
def observed_driver(record: dict[str, Any]) -> dict[str, Any]:
    """The driver as a record names it, as the manifest keeps it."""
    driver = record.get("driver") or {}
    return {key: driver.get(key) for key in ("name", "version", "language", "executor") if key in driver}


def observed_target(record: dict[str, Any]) -> dict[str, Any]:
    """The target as a record names it, as the manifest keeps it."""
    target = record.get("target") or {}
    return {
        "name": target.get("name"),
        "version": target.get("version"),
        "package_version": (target.get("details") or {}).get("package_version"),
        "kind": target.get("kind"),
        "topology": target.get("topology"),
    }


def expectation_files(records: list[dict[str, Any]]) -> list[Path]:
    """The expected-outcomes files the runs read, in reading order (the records' ``expectations_file``: the
    files' paths joined by `` + ``; ``<none>`` when there were none)."""
    found: dict[str, None] = {}
    for record in records:
        for part in str(record.get("expectations_file") or "").split(" + "):
            if part and part != "<none>":
                found.setdefault(part)
    return [Path(part) for part in found]


def source_files(root: Path) -> list[dict[str, Any]]:
    """Every spec file the loaders find under ``root``, as the manifest lists it: path, SHA-256, the tests made
    of it, and its standing against the project's pins (docs/pins.md)."""
    from harness.formats.pins import MISCOUNTED, PINNED, PinIndex, pin_entries

    index = PinIndex.load()
    base = root.parent if root.is_file() else root
    files = []
    for path, entry in sorted(pin_entries(root).items()):
        standing = index.status(base / path, entry["tests"])
        pins = standing.pins if standing.status in (PINNED, MISCOUNTED) else ()  # a changed file's are its path's
        pinned_by = [f"{pin.manifest}:{pin.path}" for pin in pins]
        files.append({"path": path, **entry, "pin": standing.status, "pinned_by": pinned_by})
    return files


def source_kind(source: str) -> str:
    return source.split(":", 1)[0] if source.split(":", 1)[0] in ("project", "pypi", "git") else "path"


# -- writing ------------------------------------------------------------------------------------------
def bundle_expectations(out: Path, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies the expected-outcomes files the runs read into ``out/expectations/``; their manifest entries."""
    from harness.engine.run import EXPECTATIONS_DIR

    entries = []
    for path in expectation_files(records):
        try:
            relative = path.resolve().relative_to(Path(EXPECTATIONS_DIR).resolve()).as_posix()
        except ValueError:  # a file of the user's (--expected FILE): certify never reads one, but say it as is
            relative = path.name
        copy = out / EXPECTATIONS / relative
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
        entries.append(
            {
                "file": f"{EXPECTATIONS}/{relative}",
                "shipped_as": f"{SHIPPED_EXPECTATIONS}/{relative}",
                "sha256": sha256_file(copy),
            }
        )
    return entries


def write_manifest(
    out: Path,
    runs: list[CertifiedRun],
    *,
    command: dict[str, Any],
    spec_text: str | None,
) -> Path:
    """The bundle's ``manifest.json`` for certify's ``runs`` (their statements, pages, badges, results and logs
    already in ``out``); the expected-outcomes files are copied in now."""
    from harness.app.spec_sources import resolve

    records = [record for run in runs for record in run.records]
    first = records[0]
    expectations = bundle_expectations(out, records)
    sources = [
        {
            "source": source,
            "kind": source_kind(source),
            "path": str(resolve(source, fetch=False).path.resolve()),
            "files": source_files(resolve(source, fetch=False).path),
        }
        for source in command["sources"]
    ]
    listed = [run.file(kind) for run in runs for kind in RUN_FILES] + [e["file"] for e in expectations]
    manifest = {
        "bundle": BUNDLE_SCHEMA,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "harness": first.get("harness"),
        "driver": observed_driver(first),
        "target": observed_target(first),
        "machine": {
            "python": first.get("python"),
            "host": first.get("host"),
            "cpus": os.cpu_count(),
            "machine": platform.machine(),
        },
        "command": command,
        "catalogue": {
            "spec_text": spec_text,
            "sha256": sha256_file(Path(spec_text)) if spec_text and Path(spec_text).is_file() else None,
        },
        "runs": [
            {
                "mode": run.mode,
                "default": run.default,
                "run_id": run.records[0].get("run_id"),
                "exit_status": run.exit_status,
                "records": len(run.records),
                **{kind: run.file(kind) for kind in RUN_FILES},
            }
            for run in runs
        ],
        "spec_sources": sources,
        "expectations": expectations,
        "files": {name: sha256_file(out / name) for name in sorted(listed)},
    }
    path = out / MANIFEST
    path.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return path


def write_archive(out: Path) -> Path:
    """``OUT.tar.gz`` beside the bundle's folder: the manifest and the files it lists, under one folder ``OUT``."""
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    archive = out.parent / f"{out.name}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name in [MANIFEST, *manifest["files"]]:
            tar.add(out / name, arcname=f"{out.name}/{name}", recursive=False)
    return archive
