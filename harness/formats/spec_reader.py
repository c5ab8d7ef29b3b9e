"""Reading spec files (``.yml`` or ``.json``) into Extended-JSON-decoded Python values.

Both encodings end up as the same values: YAML is composed, converted to
plain JSON and decoded with :mod:`bson.json_util`, exactly as a ``.json`` file
is. The upstream YAML redefines anchors (legal YAML 1.2, rejected by PyYAML's
composer), so the composer here lets a later anchor replace an earlier one.
Test line numbers come from the YAML node marks, or from a scan of the JSON
text for the test's description. What a file may build is bounded by
:mod:`harness.formats.load_limits`: the composer counts every node, and each
alias as everything its anchor stands for, so a hostile file is refused
before it is expanded. Both encodings are read strictly
(:mod:`harness.formats.strict_reader`): a key twice in one mapping, or a number
that is not finite, is an error naming the line and the key.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from bson import json_util
from bson.errors import BSONError
from bson.json_util import JSONMode, JSONOptions

from harness.formats import cache, load_limits
from harness.formats.load_limits import LoadBudget, LoadLimitExceeded
from harness.formats.special_files import irregular
from harness.formats.strict_reader import InputError, StrictConstructor, load_json

SPEC_SUFFIXES = (".yml", ".yaml", ".json")

# Relaxed decoding keeps ints as ints and decodes $numberLong to Int64, as drivers do.
_JSON_OPTIONS = JSONOptions(json_mode=JSONMode.RELAXED, tz_aware=False)


class SpecFileError(Exception):
    """A spec file that cannot be read or parsed; the message names the file and the line."""


# Looked up once: the composer below runs once per node, and these lookups were a measurable part of it.
_compose_node: Any = yaml.composer.Composer.compose_node
_ALIAS_EVENT = yaml.events.AliasEvent
_SCALAR_NODE = yaml.ScalarNode


class _SpecComposer(yaml.composer.Composer):
    """PyYAML's composer, with two changes: re-used anchors rebind, and what is built is counted.

    A re-used anchor name simply rebinds, as YAML 1.2 allows (PyYAML refuses
    it). Every node counts once into a :class:`LoadBudget`, and the depth is
    checked before a node's children are composed, so deep nesting stops long
    before Python's recursion limit. An alias counts the nodes, text and height
    of the node its anchor names (:meth:`_expansion`), which is what expanding
    it (as the Extended JSON decoding does) would build; the expansion itself is
    never done here. One method does both, as it runs once per node.
    """

    def __init__(self) -> None:
        super().__init__()
        self.budget = LoadBudget()
        self._depth = 0
        self._expansions: dict[int, tuple[int, int, int]] = {}  # id(node) -> its (nodes, text, height)

    def compose_node(self, parent: Any, index: Any) -> Any:
        event: Any = self.peek_event()  # type: ignore[attr-defined]  # the parser's, mixed in beside this class
        if event.__class__ is _ALIAS_EVENT:
            node = _compose_node(self, parent, index)
            if node.end_mark is None:  # the anchor's node is still open: the alias is inside it
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    f"found an alias (*{event.anchor}) inside its own anchor: a spec file cannot refer to itself",
                    event.start_mark,  # type: ignore[arg-type]  # libyaml's Mark is not yaml.error.Mark
                )
            nodes, text, height = self._expansion(node)
            self.budget.add_expansion(nodes, text, self._depth + height)
            return node
        if event.anchor is not None:
            self.anchors.pop(event.anchor, None)
        self._depth += 1
        if self._depth > load_limits.MAX_DEPTH:
            raise load_limits.too_deep()
        node = _compose_node(self, parent, index)
        self._depth -= 1
        self.budget.add_node(len(node.value) if node.__class__ is _SCALAR_NODE else 0)
        return node

    def _expansion(self, node: yaml.Node) -> tuple[int, int, int]:
        """Nodes, scalar text and height of ``node`` with its aliases expanded; each node worked out once.

        The walk follows only the nodes composed under ``node``: an alias in
        there was worked out when it was composed (an alias never points into
        an open node, so there is no cycle), and the depth limit bounds the
        recursion.
        """
        known = self._expansions.get(id(node))
        if known is not None:
            return known
        if node.__class__ is _SCALAR_NODE:
            total = (1, len(node.value), 1)
        else:
            children = [
                self._expansion(child)
                for item in node.value
                for child in (item if node.__class__ is yaml.MappingNode else (item,))
            ]
            total = (
                1 + sum(c[0] for c in children),
                sum(c[1] for c in children),
                1 + max((c[2] for c in children), default=0),
            )
        self._expansions[id(node)] = total
        return total


class _SpecYamlLoader(
    yaml.reader.Reader,
    yaml.scanner.Scanner,
    yaml.parser.Parser,
    _SpecComposer,
    StrictConstructor,
    yaml.resolver.Resolver,
):
    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        _SpecComposer.__init__(self)
        StrictConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)


_FastSpecYamlLoader: Any = None
if getattr(yaml, "__with_libyaml__", False):

    class _FastSpecYamlLoader(  # type: ignore[no-redef]
        _SpecComposer,
        yaml._yaml.CParser,
        StrictConstructor,
        yaml.resolver.Resolver,
    ):
        """libyaml's scanner and parser (about five times faster) under the same composer and constructor.

        Where libyaml refuses a file (it scans a few flow mappings differently),
        the pure-Python loader above reads it, so both give the same models on
        every upstream file (tests/harness/formats/test_spec_reader.py compares them).
        """

        def __init__(self, stream: str) -> None:
            yaml._yaml.CParser.__init__(self, stream)
            _SpecComposer.__init__(self)
            StrictConstructor.__init__(self)
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


def decode_extended_json(text: str) -> Any:
    """BSON-typed values (``$oid``, ``$numberLong``...) of an Extended JSON text: a fresh read decodes the file's
    document this way, and a cache hit the entry that holds the same document (:func:`_cached_document`)."""
    return json_util.loads(text, json_options=_JSON_OPTIONS)


#: What decoding Extended JSON raises for a malformed value (``{$oid: "zz"}``, ``{$numberDecimal: "x"}``...).
_DECODE_ERRORS = (TypeError, ValueError, ArithmeticError, BSONError)


def read_spec_file(path: Path) -> SpecDocument:
    """Read and decode one spec file; raise :class:`SpecFileError` naming file and line.

    A file read before (the same bytes, under the same limits) comes from
    :mod:`harness.formats.cache`; only a document that loaded within the limits
    is stored there, as data: the plain JSON document it decodes from and its
    tests' lines (docs/spec-loading.md).
    """
    budget = LoadBudget()
    try:
        raw = _read_bounded(path)
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecFileError(f"{path}: cannot read file: {exc}") from exc
    except LoadLimitExceeded as exc:
        raise SpecFileError(f"{path}: {exc}") from exc
    entry = cache.key(path.suffix.encode(), load_limits.fingerprint(), raw)
    cached = cache.get("documents", entry, _cached_document, loads=decode_extended_json)
    if cached is not cache.MISSING:
        data, lines = cached
        return SpecDocument(path, data, lines)
    try:
        plain, lines = _read_json(path, text, budget) if path.suffix == ".json" else _read_yaml(path, text, budget)
        budget.check_time()
        extended = json.dumps(plain, allow_nan=False)
        data = decode_extended_json(extended)
        budget.check_time()
    except LoadLimitExceeded as exc:
        raise SpecFileError(f"{path}: {exc}") from exc
    except _DECODE_ERRORS as exc:
        raise SpecFileError(f"{path}: cannot decode Extended JSON: {exc}") from exc
    cache.put("documents", entry, {"document": plain, "lines": lines})
    return SpecDocument(path, data, lines)


def _cached_document(value: Any) -> tuple[Any, list[int | None]]:
    """A ``documents`` cache entry's document and lines (ValueError for an entry of another shape:
    :func:`harness.formats.cache.get` then has the file read afresh).

    The entry is the plain JSON document inside the cache's JSON envelope, and
    the whole entry is decoded as Extended JSON in one pass: JSON is read the
    same wherever it stands, so the document decodes to exactly what a fresh
    read decodes from the same text, type for type (the envelope's own keys are
    no Extended JSON).
    """
    if not (
        isinstance(value, dict)
        and value.keys() == {"document", "lines"}
        and isinstance(value["lines"], list)
        and all(line is None or (type(line) is int and line > 0) for line in value["lines"])
    ):
        raise ValueError("not a cached spec document")
    data = value["document"]
    tests = data.get("tests") if isinstance(data, dict) else None
    if len(value["lines"]) != (len(tests) if isinstance(tests, list) else 0):
        raise ValueError("a cached spec document whose lines are not its tests'")
    return data, value["lines"]


def _read_bounded(path: Path) -> bytes:
    """The file's bytes: refused by its size before any is read, and never read past the limit.

    Only a regular file (or a link to one) is opened (:mod:`harness.formats.special_files`), without waiting (a
    FIFO put in its place meanwhile is refused, not waited on). A file that grew since its size was taken is read
    on only as far as the limit.
    """
    kind = irregular(path)
    if kind is not None:
        raise OSError(f"{kind}, not a regular file: not opened")
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(descriptor, "rb") as handle:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise OSError("not a regular file: not read")
        size = status.st_size
        if size > load_limits.MAX_FILE_BYTES:
            raise load_limits.too_many_bytes(size)
        raw = handle.read(size + 1)  # not read(limit): that would allocate the limit for every file
        if len(raw) > size:
            raw += handle.read(load_limits.MAX_FILE_BYTES + 1 - len(raw))
    if len(raw) > load_limits.MAX_FILE_BYTES:
        raise load_limits.too_many_bytes(None)
    return raw


def _read_json(path: Path, text: str, budget: LoadBudget) -> tuple[Any, list[int | None]]:
    """The file's plain JSON value (read strictly, and within the limits) and its tests' lines."""
    try:
        plain = load_json(text)
    except RecursionError as exc:  # Python's json recurses per level: far deeper than the limit
        raise load_limits.too_deep() from exc
    except InputError as exc:
        raise SpecFileError(f"{path}: {exc}") from exc
    load_limits.check_decoded(plain, budget)
    return plain, _json_test_lines(text, plain)


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


def _compose(loader_class: Any, text: str, budget: LoadBudget | None = None) -> tuple[Any, Any]:
    loader = loader_class(text)
    if budget is not None:  # one budget for both loaders' attempts at a file
        loader.budget = budget
    try:
        node = loader.get_single_node()
        return node, loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()


def _read_yaml(path: Path, text: str, budget: LoadBudget) -> tuple[Any, list[int | None]]:
    """The file's plain value (read strictly, and within the limits) and its tests' lines."""
    try:
        try:
            if _FastSpecYamlLoader is None:
                raise yaml.composer.ComposerError(None, None, "libyaml is not available")
            node, data = _compose(_FastSpecYamlLoader, text, budget)
        except InputError:
            raise  # a key twice, a number that is not finite: the same with either loader
        except yaml.YAMLError:  # text libyaml reads differently: the reference loader decides
            node, data = _compose(_SpecYamlLoader, text, budget.recount())
    except InputError as exc:
        raise SpecFileError(f"{path}: {exc}") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise SpecFileError(f"{path}:{where}: invalid YAML: {exc}") from exc
    except ValueError as exc:  # a scalar PyYAML cannot construct, e.g. an integer past Python's digit limit
        raise SpecFileError(f"{path}: invalid YAML: {exc}") from exc
    return data, _yaml_test_lines(node)


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
    file explicitly to run it instead. Entries that are not regular files are
    left out (never opened: :func:`harness.formats.special_files.unread_entries`
    names them); a root that is one is refused by name.
    """
    found: list[Path] = []
    for root in roots:
        if root.is_file():
            found.append(root)
            continue
        if not root.is_dir():
            kind = irregular(root)
            what = f"{kind}, not a spec file or directory: not read" if kind else "no such spec file or directory"
            raise SpecFileError(f"{root}: {what}")
        candidates = sorted(p for p in root.rglob("*") if p.suffix in SPEC_SUFFIXES and p.is_file())
        stems = {p.with_suffix("") for p in candidates if p.suffix in (".yml", ".yaml")}
        found.extend(p for p in candidates if p.suffix != ".json" or p.with_suffix("") not in stems)
    return found
