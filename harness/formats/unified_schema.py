"""Is a unified test file one this runner may process? ``schemaVersion`` and the JSON schema.

The spec asks runners to refuse files whose ``schemaVersion`` they do not
implement (another major version, or a newer minor one) and lets them
validate files against the published JSON schema. Both refusals become a
:class:`SchemaProblem` whose message names the offending JSON path, so the
loader can turn the file into one ``error`` test and the run goes on.

The schema files are upstream material under a non-commercial licence and
are not copied into this repository: they are looked up beside the spec
files (any ``schema-<version>.json`` in an ancestor directory or its
``unified-format-selftests`` folder), in ``$HARNESS_UNIFIED_SCHEMA_DIR``,
and, when the harness runs from a checkout, in the team's shared folder
beside it (an installed wheel looks nowhere else). Where none is found, only
the version is checked.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from bson import json_util
from bson.json_util import JSONMode, JSONOptions

from harness.core.project_data import shared_specs
from harness.formats import cache
from harness.formats.special_files import irregular
from harness.formats.strict_reader import InputError, load_json

#: The newest format version this runner implements; files of major 1 up to it are accepted.
RUNNER_SCHEMA_VERSION = (1, 28)

_VERSION = re.compile(r"^\d+(\.\d+){0,2}$")
_SCHEMA_NAME = re.compile(r"^schema-(\d+)\.(\d+)\.json$")
_SCHEMA_FOLDER = "unified-format-selftests"
_AS_JSON = JSONOptions(json_mode=JSONMode.RELAXED)


class SchemaProblem(ValueError):
    """A file this runner must not process; the message names the JSON path at fault."""


def parse_version(value: Any) -> tuple[int, int, int] | None:
    """``"1.7"`` -> ``(1, 7, 0)``; anything that is not a version string -> None."""
    if not isinstance(value, str) or not _VERSION.match(value):
        return None
    parts = [int(p) for p in value.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))  # type: ignore[return-value]


def check_version(data: Any) -> None:
    """Refuse a ``schemaVersion`` that is missing, malformed, or not implemented here."""
    if not isinstance(data, dict) or "schemaVersion" not in data:
        raise SchemaProblem('$.schemaVersion: the key is required (a version string like "1.7")')
    raw = data["schemaVersion"]
    version = parse_version(raw)
    if version is None:
        raise SchemaProblem(f'$.schemaVersion: expected a version string like "1.7", got {raw!r}')
    major, minor = RUNNER_SCHEMA_VERSION
    if version[0] != major or version[:2] > (major, minor):
        raise SchemaProblem(
            f"$.schemaVersion: {raw!r} is not supported; this runner implements "
            f"schema versions {major}.0 to {major}.{minor}"
        )


#: What :func:`validate` returns when no schema was found: the file was loaded unchecked.
NO_SCHEMA = "none"


def validate(path: Path, data: Any) -> str:
    """Check the version, then the file against the newest schema of the same major version.

    Returns the schema's file name, or :data:`NO_SCHEMA` when none was found
    (the run then says so, and ``--require-schema`` refuses the file's tests).
    """
    check_version(data)
    schema_file = find_schema(path, parse_version(data["schemaVersion"])[0])  # type: ignore[index]
    if schema_file is None:
        return NO_SCHEMA
    text = json_util.dumps(data, json_options=_AS_JSON)
    entry = cache.key(text.encode(), _schema_bytes(schema_file))
    problem = cache.get("schema-verdicts", entry, _cached_verdict)
    if problem is cache.MISSING:
        problem = _problem(schema_file, json.loads(text))
        cache.put("schema-verdicts", entry, problem)
    if problem is not None:
        raise SchemaProblem(problem)
    return schema_file.name


def _cached_verdict(value: Any) -> str | None:
    """A ``schema-verdicts`` cache entry: None (valid) or the problem's words; ValueError for anything else."""
    if value is not None and not isinstance(value, str):
        raise ValueError("not a schema verdict")
    return value


def find_schema(spec_file: Path, major: int) -> Path | None:
    """The newest ``schema-<major>.<minor>.json`` near the spec file or in a known folder."""
    folders: list[Path] = []
    override = os.environ.get("HARNESS_UNIFIED_SCHEMA_DIR")
    if override:
        folders.append(Path(override))
    for ancestor in Path(spec_file).resolve().parents:
        folders.extend((ancestor, ancestor / _SCHEMA_FOLDER, ancestor / "unified-test-format"))
    if not override and (shared := _shared_schemas()) is not None:  # an explicit folder replaces it
        folders.append(shared)
    for folder in folders:
        found = _schemas_in(folder, major)
        if found:
            return found[-1]
    return None


def _shared_schemas() -> Path | None:
    """A checkout's convenience: the schemas in the team's shared spec folder beside it; None for a wheel."""
    shared = shared_specs()
    return None if shared is None else shared / "upstream" / _SCHEMA_FOLDER


@lru_cache(maxsize=64)
def _schemas_in(folder: Path, major: int) -> list[Path]:
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    versioned = []
    for name in names:
        match = _SCHEMA_NAME.match(name)
        if match and int(match.group(1)) == major and irregular(folder / name) is None:  # never a FIFO or device
            versioned.append((int(match.group(2)), folder / name))
    return [p for _, p in sorted(versioned)]


def _problem(schema_file: Path, document: Any) -> str | None:
    """None for a valid document, else the most relevant error, as jsonschema words it.

    jsonschema-rs answers "valid?" about fifty times faster; the wording of an
    error always comes from jsonschema, so messages do not depend on which is
    installed (tests/harness/formats/test_spec_reader.py checks the two agree on every
    upstream file).
    """
    fast = _fast_validator(schema_file)
    if fast is not None and fast.is_valid(document):
        return None
    import jsonschema.exceptions  # here, not at the top: a cached verdict needs no validator (start-up)

    error = jsonschema.exceptions.best_match(_validator(schema_file).iter_errors(document))
    return None if error is None else f"{error.json_path}: {error.message} (schema {schema_file.name})"


@lru_cache(maxsize=8)
def _fast_validator(schema_file: Path) -> Any:
    try:
        import jsonschema_rs
    except ImportError:
        return None
    return jsonschema_rs.validator_for(_schema_document(schema_file))


@lru_cache(maxsize=8)
def _schema_bytes(schema_file: Path) -> bytes:
    return schema_file.read_bytes()


def _schema_document(schema_file: Path) -> Any:
    """The schema file's JSON, read strictly (a key twice in a schema would drop a constraint without a word)."""
    try:
        return load_json(_schema_bytes(schema_file).decode("utf-8"))
    except (InputError, UnicodeDecodeError) as exc:
        raise SchemaProblem(f"{schema_file}: not a usable schema: {exc}") from None


@lru_cache(maxsize=8)
def _validator(schema_file: Path) -> Any:
    schema = _schema_document(schema_file)
    import jsonschema

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft201909Validator)
    return cls(schema)
