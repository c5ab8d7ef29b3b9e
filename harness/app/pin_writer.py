"""``harness specs pin SOURCE``: write or refresh one source's manifest in ``specs/pins/`` (docs/pins.md).

The manifest is named after the source: ``pypi:pymongo==4.20.0`` is ``pypi-pymongo-4.20.0.yml``, a path
outside the project's data is its folders (``../shared/specs/upstream/unified``:
``shared-upstream-unified.yml``), and a folder of the project's data is its path there
(``specs/scenarios/supplementary`` or ``project:scenarios/supplementary``: ``scenarios-supplementary.yml``).
A subfolder that another manifest pins as its own source is left to that manifest, so each file has one
pin (``specs/scenarios`` pins only its top-level files while ``scenarios-supplementary`` exists).
"""

from __future__ import annotations

import re
from pathlib import Path

from harness.app.spec_sources import SpecSourceError, resolve
from harness.core.project_data import project_data
from harness.formats.pins import pin_entries, pins_folder, read_manifest, read_source, write_manifest
from harness.formats.source_names import is_source

#: What a manifest keeps of a source's origin: the facts that say which bytes it was (not when, not where).
ORIGIN_FIELDS = ("kind", "project", "version", "archive", "sha256", "url", "commit")
_NOT_A_NAME = re.compile(r"[^A-Za-z0-9.]+")


def pin_source(source: str) -> str:
    """Pin ``source`` (fetched first if need be); the line that says what was written."""
    resolved = resolve(source)
    root = resolved.path
    if not root.exists():
        raise SpecSourceError(f"{source}: no such spec file or directory")
    manifest = pins_folder() / f"{manifest_name(source, root)}.yml"
    before = {pin.path: (pin.sha256, pin.tests) for pin in read_manifest(manifest)} if manifest.exists() else {}
    entries = pin_entries(root, leave_out=_pinned_elsewhere(manifest, root))
    origin = {key: resolved.origin[key] for key in ORIGIN_FIELDS if key in resolved.origin}
    write_manifest(manifest, source, origin, (root if root.is_dir() else root.parent).name, entries)
    after = {path: (entry["sha256"], entry["tests"]) for path, entry in entries.items()}
    changed = sum(1 for path in after.keys() & before.keys() if after[path] != before[path])
    tests = sum(entry["tests"] for entry in entries.values())
    return (
        f"{source}: {manifest} ({len(entries)} spec files, {tests} tests; {len(after.keys() - before.keys())} new, "
        f"{changed} changed, {len(before.keys() - after.keys())} gone since the last pin)"
    )


def manifest_name(source: str, root: Path) -> str:
    """The manifest's file name (without ``.yml``) for ``source``, whose files are at ``root``."""
    if is_source(source) and not source.startswith("project:"):
        return _NOT_A_NAME.sub("-", source).strip("-")
    data = project_data().resolve()
    where = root.resolve()
    if where == data or data in where.parents:
        parts = where.relative_to(data).parts or ("project-data",)
    else:
        parts = tuple(part for part in Path(source).parts if part not in ("..", ".", "/", "specs"))
    return _NOT_A_NAME.sub("-", "-".join(parts)).strip("-")


def _pinned_elsewhere(manifest: Path, root: Path) -> list[Path]:
    """The folders under ``root`` that other manifests pin as their own sources."""
    folders = []
    for other in sorted(manifest.parent.glob("*.yml")):
        source = read_source(other)
        if other == manifest or not source:
            continue
        try:
            folder = resolve(source, fetch=False).path.resolve()
        except SpecSourceError:
            continue  # a source not fetched here lies in the cache, not under a path being pinned
        if root.resolve() in folder.parents and folder.is_dir():
            folders.append(folder)
    return folders
