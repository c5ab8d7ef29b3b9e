"""Reading spec files (``.yml`` or ``.json``) into Extended-JSON-decoded Python values.

Both encodings end up as the same values: YAML is composed, converted to
plain JSON and decoded with :mod:`bson.json_util`, exactly as a ``.json`` file
is. The upstream YAML redefines anchors (legal YAML 1.2, rejected by PyYAML's
composer), so the composer here lets a later anchor replace an earlier one.
Test line numbers come from the YAML node marks, or from a scan of the JSON
text for the test's description.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from bson import json_util
from bson.json_util import JSONOptions, JSONMode

from harness.formats import cache

SPEC_SUFFIXES = (".yml", ".yaml", ".json")

# Relaxed decoding keeps ints as ints and decodes $numberLong to Int64, as drivers do.
_JSON_OPTIONS = JSONOptions(json_mode=JSONMode.RELAXED, tz_aware=False)


class SpecFileError(Exception):
    """A spec file that cannot be read or parsed; the message names the file and the line."""


class _ComposerAllowingAnchorRedefinition(yaml.composer.Composer):
    """PyYAML composer where a re-used anchor name simply rebinds, as YAML 1.2 allows."""

    def compose_node(self, parent, index):  # noqa: ANN001 - PyYAML signature
        if self.check_event(yaml.events.AliasEvent):
            return super().compose_node(parent, index)
        event = self.peek_event()
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            self.anchors.pop(anchor, None)
        return super().compose_node(parent, index)


class _SpecYamlLoader(
    yaml.reader.Reader,
    yaml.scanner.Scanner,
    yaml.parser.Parser,
    _ComposerAllowingAnchorRedefinition,
    yaml.constructor.SafeConstructor,
    yaml.resolver.Resolver,
):
    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        _ComposerAllowingAnchorRedefinition.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)


_FastSpecYamlLoader: Any = None
if getattr(yaml, "__with_libyaml__", False):
    class _FastSpecYamlLoader(  # type: ignore[no-redef]
        _ComposerAllowingAnchorRedefinition,
        yaml._yaml.CParser,
        yaml.constructor.SafeConstructor,
        yaml.resolver.Resolver,
    ):
        """libyaml's scanner and parser (about five times faster) under the same composer and constructor.

        Where libyaml refuses a file (it scans a few flow mappings differently),
        the pure-Python loader above reads it, so both give the same models on
        every upstream file (tests/test_yaml_loaders.py compares them).
        """

        def __init__(self, stream: str) -> None:
            yaml._yaml.CParser.__init__(self, stream)
            _ComposerAllowingAnchorRedefinition.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)


# Timestamps stay strings: spec files mean them as text, and JSON has no date type.
for _loader in filter(None, (_SpecYamlLoader, _FastSpecYamlLoader)):
    _loader.yaml_implicit_resolvers = {
        key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for key, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
    }


@dataclass
class SpecDocument:
    """A decoded spec file and the line each test starts on (1-based, when known)."""

    path: Path
    data: Any
    test_lines: list[int | None] = field(default_factory=list)


def decode_extended_json(value: Any) -> Any:
    """Turn plain JSON-shaped data into BSON-typed values (``$oid``, ``$numberLong``...)."""
    return json_util.loads(json.dumps(value), json_options=_JSON_OPTIONS)


def read_spec_file(path: Path) -> SpecDocument:
    """Read and decode one spec file; raise :class:`SpecFileError` naming file and line.

    A file read before (the same bytes) comes from :mod:`harness.formats.cache`.
    """
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecFileError(f"{path}: cannot read file: {exc}") from exc
    entry = cache.key(path.suffix.encode(), raw)
    cached = cache.get("documents", entry)
    if cached is not cache.MISSING:
        data, lines = cached
        return SpecDocument(path, data, lines)
    document = _read_json(path, text) if path.suffix == ".json" else _read_yaml(path, text)
    cache.put("documents", entry, (document.data, document.test_lines))
    return document


def _read_json(path: Path, text: str) -> SpecDocument:
    try:
        data = json_util.loads(text, json_options=_JSON_OPTIONS)
    except ValueError as exc:
        raise SpecFileError(f"{path}: invalid JSON: {exc}") from exc
    return SpecDocument(path, data, _json_test_lines(text, data))


def _json_test_lines(text: str, data: Any) -> list[int | None]:
    tests = data.get("tests") if isinstance(data, dict) else None
    if not isinstance(tests, list):
        return []
    lines: list[int | None] = []
    cursor = 0
    for test in tests:
        desc = test.get("description") if isinstance(test, dict) else None
        pos = text.find(json.dumps(desc), cursor) if isinstance(desc, str) else -1
        if pos < 0:
            lines.append(None)
            continue
        cursor = pos + 1
        lines.append(text.count("\n", 0, pos) + 1)
    return lines


def _compose(loader_class: Any, text: str) -> tuple[Any, Any]:
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        return node, loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()


def _read_yaml(path: Path, text: str) -> SpecDocument:
    try:
        try:
            if _FastSpecYamlLoader is None:
                raise yaml.composer.ComposerError(None, None, "libyaml is not available")
            node, data = _compose(_FastSpecYamlLoader, text)
        except yaml.YAMLError:  # text libyaml reads differently: the reference loader decides
            node, data = _compose(_SpecYamlLoader, text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise SpecFileError(f"{path}:{where}: invalid YAML: {exc}") from exc
    try:
        decoded = decode_extended_json(data)
    except (TypeError, ValueError) as exc:
        raise SpecFileError(f"{path}: cannot decode Extended JSON: {exc}") from exc
    return SpecDocument(path, decoded, _yaml_test_lines(node))


def _yaml_test_lines(node: Any) -> list[int | None]:
    if not isinstance(node, yaml.MappingNode):
        return []
    for key, value in node.value:
        if getattr(key, "value", None) == "tests" and isinstance(value, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in value.value]
    return []


def discover_spec_files(roots: list[Path]) -> list[Path]:
    """Spec files under the given files or directories, sorted, one encoding per test file.

    Where a directory holds ``x.yml`` and ``x.json`` both, the YAML is used
    (it is the source upstream; the JSON is generated from it). Pass the JSON
    file explicitly to run it instead.
    """
    found: list[Path] = []
    for root in roots:
        if root.is_file():
            found.append(root)
            continue
        if not root.is_dir():
            raise SpecFileError(f"{root}: no such spec file or directory")
        candidates = sorted(p for p in root.rglob("*") if p.suffix in SPEC_SUFFIXES and p.is_file())
        stems = {p.with_suffix("") for p in candidates if p.suffix in (".yml", ".yaml")}
        found.extend(p for p in candidates if p.suffix != ".json" or p.with_suffix("") not in stems)
    return found
