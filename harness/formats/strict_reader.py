"""The rules every YAML and JSON file the harness reads from its users is held to: each key once, finite numbers.

Both parsers, as they come, let a second key replace the first: a second
``outcome:`` in a spec file replaced a failing one, and the test passed.
Python's JSON parser also reads ``NaN`` and ``Infinity`` (JSON has neither)
and turns ``1e400`` into infinity; YAML spells them ``.inf`` and ``.nan``. A
number that is not finite in a spec file, an expectation or a matrix changes
what is checked without saying so. So the readers of spec files
(:mod:`harness.formats.spec_reader`), of the project's data files
(:mod:`harness.formats.data_yaml`: expected outcomes, rule catalogues, pins,
matrices) and of the unified format's JSON schemas take their rules from here:
:class:`StrictConstructor` for YAML, :func:`load_json` for JSON. A file that
breaks one is an :class:`InputError` naming the line and the key (or the number);
the caller names the file.

A spec file that means a non-finite double writes it in Extended JSON,
``{$numberDouble: "Infinity"}``, which means the same in YAML and JSON; no
upstream file holds a bare one (docs/spec-loading.md).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import yaml

_MERGE = "tag:yaml.org,2002:merge"
_VALUE = "tag:yaml.org,2002:value"
_FLOAT = "tag:yaml.org,2002:float"
_HINT = 'numbers must be finite (a spec file spells a non-finite double {"$numberDouble": "Infinity"})'


class InputError(yaml.YAMLError, ValueError):
    """A file a strict reader refuses; ``str()`` is ``line N: what is wrong`` (the caller names the file).

    A ``yaml.YAMLError`` (and a ``ValueError``), so that every reader that already reports invalid YAML, with the
    file's name, reports this too: no caller of the data reader can let it crash a command.
    """

    def __init__(self, line: int | None, problem: str) -> None:
        super().__init__(f"line {line}: {problem}" if line is not None else problem)
        self.line = line
        self.problem = problem


def duplicate_key(key: Any, line: int | None, first: int | None) -> InputError:
    at = f" (first at line {first})" if first is not None else ""
    return InputError(line, f"duplicate key {key!r}{at}: a second key would silently replace the first")


def not_finite(spelling: str, line: int | None) -> InputError:
    return InputError(line, f"{spelling} is not a finite number: {_HINT}")


def _json_spelling(key: Any) -> Any:
    """The key as JSON writes it (``1`` and ``"1"`` are one key there, and a spec file's YAML becomes JSON)."""
    try:
        return json.dumps(key)
    except (TypeError, ValueError):
        return key


class StrictConstructor(yaml.constructor.SafeConstructor):
    """PyYAML's safe constructor that refuses a mapping with a key twice and a float that is not finite.

    Keys are checked when a mapping is first flattened (PyYAML flattens every
    mapping before building it, and a merge source before merging it), while
    its keys are still the ones written: a key a merge (``<<: *base``) brings in
    may be overridden, as merges mean. Two keys are one when Python or JSON
    would make them one (``1`` and ``1.0``; ``1`` and ``"1"``).
    """

    def __init__(self) -> None:
        super().__init__()
        self._checked: set[int] = set()

    def flatten_mapping(self, node: Any) -> None:
        if id(node) not in self._checked:
            self._checked.add(id(node))
            self._refuse_duplicate_keys(node)
        super().flatten_mapping(node)

    def _refuse_duplicate_keys(self, node: Any) -> None:
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue  # a collection as a key: the constructor refuses it as unhashable
            tag = key_node.tag
            key = "<<" if tag == _MERGE else "=" if tag == _VALUE else self.construct_object(key_node)
            names = (key,) if isinstance(key, str) else (key, _json_spelling(key))
            for name in names:
                first = seen.setdefault(name, key_node)
                if first is not key_node:
                    raise duplicate_key(key, _line(key_node), _line(first))

    def construct_strict_float(self, node: Any) -> float:
        value: float = self.construct_yaml_float(node)
        if not math.isfinite(value):
            raise not_finite(str(node.value), _line(node))
        return value


# The stubs want a loader as the constructor's first argument; a constructor mixin is what every loader here is.
StrictConstructor.add_constructor(_FLOAT, StrictConstructor.construct_strict_float)  # type: ignore[type-var]


def _line(node: Any) -> int | None:
    mark = getattr(node, "start_mark", None)
    return mark.line + 1 if mark is not None else None


# -- JSON -------------------------------------------------------------------------------------------------
class _Refused(Exception):
    """Raised inside the fast parse; :func:`_locate` then finds its line."""

    def __init__(self, problem: InputError) -> None:
        super().__init__(str(problem))
        self.problem = problem


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    mapping = dict(pairs)
    if len(mapping) == len(pairs):
        return mapping
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise _Refused(duplicate_key(key, None, None))
        seen.add(key)
    raise AssertionError("unreachable: fewer keys than pairs means a key came twice")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(not_finite(text, None))
    return value


def _no_constant(text: str) -> Any:
    raise _Refused(not_finite(text, None))


def load_json(text: str) -> Any:
    """The value of a JSON text, refusing a key twice in an object and a number with no finite value.

    The parse is the standard library's C parser with three hooks; only a
    refused text is walked again, slowly, to find the line of its problem.
    Raises :class:`InputError` (also for invalid JSON) and ``RecursionError``
    for nesting deeper than Python's parser goes.
    """
    try:
        return json.loads(text, object_pairs_hook=_unique, parse_float=_finite, parse_constant=_no_constant)
    except _Refused as refused:
        raise _locate(text) or refused.problem from None
    except json.JSONDecodeError as exc:
        raise InputError(exc.lineno, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    except ValueError as exc:  # a number Python cannot build, e.g. an integer past its digit limit
        raise InputError(None, f"invalid JSON: {exc}") from None


_SPACE = re.compile(r"[ \t\n\r]*")


def _locate(text: str) -> InputError | None:
    """The first duplicate key or non-finite number of a JSON text the C parser otherwise read, with its line.

    A walk over the tokens: objects and arrays by hand (to see each key where
    it is written), scalars by the standard library's pure-Python scanner. The
    C parser read the text up to the problem, so the walk meets nothing else
    first; should it stumble all the same, the problem is said without its line.
    """
    try:
        return _walk(text)
    except (StopIteration, ValueError, IndexError):
        return None


def _walk(text: str) -> InputError | None:
    scan = json.scanner.py_make_scanner(json.JSONDecoder())  # type: ignore[attr-defined]
    open_keys: list[dict[str, int] | None] = []  # per open container: an object's keys and their lines
    at, expect_key = 0, False
    while True:
        at = _SPACE.match(text, at).end()  # type: ignore[union-attr]  # the pattern matches the empty string
        if at >= len(text):
            return None
        char = text[at]
        if char in "{[":
            open_keys.append({} if char == "{" else None)
            expect_key, at = char == "{", at + 1
        elif char in "}]":
            open_keys.pop()
            expect_key, at = False, at + 1
        elif char == ",":
            expect_key, at = open_keys[-1] is not None, at + 1
        elif char == ":":
            at += 1
        elif expect_key:
            key, end = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
            keys, line = open_keys[-1], text.count("\n", 0, at) + 1
            if keys is None:  # a key outside an object: not JSON the C parser read
                return None
            if key in keys:
                return duplicate_key(key, line, keys[key])
            keys[key], expect_key, at = line, False, end
        else:
            value, end = scan(text, at)
            if isinstance(value, float) and not math.isfinite(value):
                return not_finite(text[at:end], text.count("\n", 0, at) + 1)
            at = end
