"""Reading an expected-outcomes file (YAML) into :class:`~harness.core.expectations.Expectations`.

The file format and the rules that classify a result live in the core; this
module is only the reading, so the core never touches a file or YAML.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from harness.core.expectations import Expectations, ExpectationsError
from harness.formats.data_yaml import load_data_yaml


def load_expectations(path: Path) -> Expectations:
    """The expectations in ``path``; a file that cannot be read or parsed raises :class:`ExpectationsError`."""
    try:
        data = load_data_yaml(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:  # the strict reader's errors too (a key twice...)
        raise ExpectationsError(f"{path}: cannot read expected outcomes: {exc}") from exc
    return Expectations.from_data(data, str(path), label_of(path))


def label_of(path: Path) -> str:
    """How records name an expected-outcomes file: ``secantusdb.yml``, ``drivers/java.yml``, ``pairs/A+B.yml``."""
    return f"{path.parent.name}/{path.name}" if path.parent.name in ("drivers", "pairs") else path.name
