"""The one YAML reader for the project's own data files: rule catalogues, expected outcomes, pins, matrices.

Spec files have their own reader (:mod:`harness.formats.spec_reader`: line
numbers, limits, Extended JSON); both hold a file to the same rules
(:mod:`harness.formats.strict_reader`: each key once, finite numbers), so a
second ``outcome:`` in an expected-outcomes file or a second ``repeat:`` in a
matrix is an error naming the line and the key, never a silent replacement.
These files are read on every ``harness report``, ``coverage`` and
``certify``: the rule catalogues alone are 21 files, which PyYAML's
pure-Python parser takes about half a second over. libyaml's parser (PyYAML's
``CParser``, when PyYAML was built with it) reads them several times faster,
under the same constructor and resolver, so the values are the same
(tests/harness/formats/test_data_yaml.py compares both on every file under specs/).

Even so, building the values is Python's work (the strict constructor): about a third of a second for the
catalogues, paid by every run. The value depends only on the text, so it is kept in the content-addressed cache
(:mod:`harness.formats.cache`, kind ``data-yaml``) when JSON holds it exactly (a YAML date, or a mapping with
keys that are not strings, is not kept: JSON would give it back changed).
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from harness.formats import cache
from harness.formats.strict_reader import InputError, StrictConstructor

#: The cache's kind for the values of data files.
CACHE_KIND = "data-yaml"


class _PyStrictLoader(
    yaml.reader.Reader,
    yaml.scanner.Scanner,
    yaml.parser.Parser,
    yaml.composer.Composer,
    StrictConstructor,
    yaml.resolver.Resolver,
):
    """PyYAML's ``SafeLoader`` with the strict constructor (where PyYAML has no libyaml)."""

    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)
        StrictConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)


#: libyaml's parser when PyYAML has it, else PyYAML's own; both with the strict (safe) constructor.
SAFE_LOADER: Any = _PyStrictLoader
if getattr(yaml, "__with_libyaml__", False):

    class _CStrictLoader(yaml._yaml.CParser, StrictConstructor, yaml.resolver.Resolver):
        """PyYAML's ``CSafeLoader`` with the strict constructor."""

        def __init__(self, stream: str) -> None:
            yaml._yaml.CParser.__init__(self, stream)
            StrictConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)

    SAFE_LOADER = _CStrictLoader


def load_data_yaml(text: str) -> Any:
    """The value of one YAML document: raises ``yaml.YAMLError`` as ``yaml.safe_load`` does for text that is not
    YAML, and :class:`~harness.formats.strict_reader.InputError` (a ``yaml.YAMLError`` too, whose message starts
    ``line N:``) for a key twice or a number that is not finite."""
    entry = cache.key(CACHE_KIND.encode(), text.encode("utf-8", "surrogatepass"))
    kept = cache.get(CACHE_KIND, entry, _as_kept)
    if kept is not cache.MISSING:
        return kept
    value = _parse(text)
    if _json_keeps(value):
        cache.put(CACHE_KIND, entry, value)
    return value


def _as_kept(value: Any) -> Any:
    return value  # JSON's own values; whatever a (planted) entry holds is at worst a wrong value, never code


def _json_keeps(value: Any) -> bool:
    """Whether JSON gives ``value`` back exactly (same types, same keys)."""
    try:
        return bool(json.loads(json.dumps(value, allow_nan=False)) == value)
    except (TypeError, ValueError):
        return False


def _parse(text: str) -> Any:
    try:
        return yaml.load(text, Loader=SAFE_LOADER)
    except ValueError as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(None, f"a value PyYAML cannot build: {exc}") from None  # e.g. an integer of 5,000 digits
