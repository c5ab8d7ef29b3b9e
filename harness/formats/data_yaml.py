"""The one YAML reader for the project's own data files: rule catalogues, expected outcomes, pins, matrices.

Spec files have their own reader (:mod:`harness.formats.spec_reader`: line
numbers, limits, Extended JSON). These files are the project's, trusted and
small, but read on every ``harness report``, ``coverage`` and ``certify``: the
rule catalogues alone are 21 files, which PyYAML's pure-Python parser takes
about half a second over. libyaml's parser (PyYAML's ``CSafeLoader``, when
PyYAML was built with it) reads them several times faster, under the same safe
constructor and resolver, so the values are the same
(tests/harness/formats/test_data_yaml.py compares both on every file under specs/).
"""

from __future__ import annotations

from typing import Any

import yaml

#: libyaml's parser when PyYAML has it, else PyYAML's own; both with the safe constructor.
SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_data_yaml(text: str) -> Any:
    """The value of one YAML document (raises ``yaml.YAMLError`` as ``yaml.safe_load`` does)."""
    return yaml.load(text, Loader=SAFE_LOADER)
