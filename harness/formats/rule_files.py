"""Reading the project's rule catalogues and its test-to-rule mapping (``specs/coverage/``).

``change-streams-rules.yml`` names each normative statement of the change-streams
spec; ``server-rules.yml`` (optional) names the server-side rules (``SRV-...``);
``test-rules.yml`` says which upstream and prose tests check which rules. A
malformed file is a :class:`RuleFileError` naming the file and the entry; a
mapping that names a rule no catalogue has is reported by
:func:`unknown_rule_ids`, not silently ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.core.project_data import project_data
from harness.core.rules import RULE_ID, Rule, RuleIndex, TestRules

#: The project's own coverage files (``specs/coverage/``, as installed).
COVERAGE_DIR = project_data("coverage")
SPEC_CATALOGUE = COVERAGE_DIR / "change-streams-rules.yml"
SERVER_CATALOGUE = COVERAGE_DIR / "server-rules.yml"
TEST_MAPPING = COVERAGE_DIR / "test-rules.yml"

LEVELS = ("MUST", "SHOULD")
WORDINGS = ("normative", "descriptive")
_RULE_KEYS = {
    "id",
    "level",
    "section",
    "field",
    "driver_side",
    "wording",
    "anchors",
    "cue",
    "paraphrase",
    "not_checkable",
    "source",
    "note",
    "checks",
}
_MAPPING_KEYS = {"test", "match", "except", "checks", "exercises", "note"}


class RuleFileError(Exception):
    """A coverage file that cannot be used; the message names the file and the entry."""


@dataclass
class Catalogue:
    """The rules of one catalogue file, in file order."""

    name: str
    path: Path
    rules: list[Rule] = field(default_factory=list)
    #: The document the anchors point into (``text:`` in the file), e.g. ``change-streams.md``.
    text: str = ""
    #: Entries whose keys the loader does not know (kept, named in ``harness coverage``'s problems).
    problems: list[str] = field(default_factory=list)

    def by_id(self) -> dict[str, Rule]:
        return {rule.id: rule for rule in self.rules}


def _read_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RuleFileError(f"{path}: cannot read: {exc}") from exc
    except yaml.YAMLError as exc:
        raise RuleFileError(f"{path}: not valid YAML: {exc}") from exc


def load_catalogue(path: Path, name: str, *, driver_side_default: bool = True) -> Catalogue:
    """One catalogue file; every rule needs an ``id`` of the form ``CS-...``/``SRV-...``, unique in the file."""
    data = _read_yaml(path)
    if not isinstance(data, dict) or not isinstance(data.get("rules"), list):
        raise RuleFileError(f"{path}: expected a mapping with a 'rules' list")
    catalogue = Catalogue(name=name, path=path, text=str(data.get("text") or ""))
    seen: set[str] = set()
    for number, entry in enumerate(data["rules"], start=1):
        where = f"{path}: rule {number}"
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise RuleFileError(f"{where}: each rule is a mapping with an 'id'")
        rule_id = entry["id"]
        where = f"{path}: rule {number} ({rule_id})"
        if not RULE_ID.match(rule_id):
            raise RuleFileError(f"{where}: a rule id is CS-<AREA>-<TOPIC> or SRV-<TOPIC> in capitals")
        if rule_id in seen:
            raise RuleFileError(f"{where}: the id is used twice")
        seen.add(rule_id)
        level = str(entry.get("level", "MUST")).upper()
        if level not in LEVELS:
            raise RuleFileError(f"{where}: level is one of {', '.join(LEVELS)}, got {entry.get('level')!r}")
        wording = str(entry.get("wording", "normative"))
        if wording not in WORDINGS:
            raise RuleFileError(f"{where}: wording is one of {', '.join(WORDINGS)}, got {wording!r}")
        anchors = entry.get("anchors") or []
        if not isinstance(anchors, list) or not all(isinstance(a, str) for a in anchors):
            raise RuleFileError(f"{where}: anchors is a list of sentence hashes ('hash' or 'hash#n')")
        unknown = sorted(set(entry) - _RULE_KEYS)
        if unknown:
            catalogue.problems.append(f"{where}: keys not understood, ignored: {', '.join(unknown)}")
        catalogue.rules.append(
            Rule(
                id=rule_id,
                level=level,
                section=str(entry.get("section") or entry.get("source") or ""),
                paraphrase=str(entry.get("paraphrase") or ""),
                driver_side=bool(entry.get("driver_side", driver_side_default)),
                wording=wording,
                anchors=tuple(anchors),
                cue=str(entry.get("cue") or ""),
                not_checkable=str(entry.get("not_checkable") or ""),
                catalogue=name,
            )
        )
    return catalogue


def load_catalogues(spec: Path | None = None, server: Path | None = None) -> list[Catalogue]:
    """The spec's catalogue and, when the file exists, the server-side one (``SRV-...``, not driver-side)."""
    spec, server = spec or SPEC_CATALOGUE, server or SERVER_CATALOGUE
    catalogues = [load_catalogue(spec, "change-streams")]
    if server.exists():
        catalogues.append(load_catalogue(server, "server", driver_side_default=False))
    return catalogues


def load_mapping(path: Path | None = None) -> RuleIndex:
    """The test-to-rule mapping: entries with ``test`` (an id) or ``match`` (a pattern), ``checks``, ``exercises``."""
    path = path or TEST_MAPPING
    data = _read_yaml(path)
    if not isinstance(data, dict) or not isinstance(data.get("tests"), list):
        raise RuleFileError(f"{path}: expected a mapping with a 'tests' list")
    entries = []
    for number, entry in enumerate(data["tests"], start=1):
        where = f"{path}: entry {number}"
        if not isinstance(entry, dict):
            raise RuleFileError(f"{where}: each entry is a mapping")
        test, match = entry.get("test"), entry.get("match")
        if bool(test) == bool(match) or not isinstance(test or match, str):
            raise RuleFileError(f"{where}: give exactly one of 'test' (a test id) or 'match' (a pattern)")
        unknown = sorted(set(entry) - _MAPPING_KEYS)
        if unknown:
            raise RuleFileError(
                f"{where} ({test or match}): unknown keys {', '.join(unknown)}; "
                f"known: {', '.join(sorted(_MAPPING_KEYS))}"
            )
        lists = {}
        for key in ("checks", "exercises", "except"):
            value = entry.get(key) or []
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise RuleFileError(f"{where} ({test or match}): '{key}' is a list of strings")
            lists[key] = tuple(value)
        for rule_id in lists["checks"] + lists["exercises"]:
            if not RULE_ID.match(rule_id):
                raise RuleFileError(f"{where} ({test or match}): {rule_id!r} is not a rule id")
        entries.append(
            TestRules(
                checks=lists["checks"],
                exercises=lists["exercises"],
                test=test or "",
                match=match or "",
                exclude=lists["except"],
                note=str(entry.get("note") or ""),
                where=where,
            )
        )
    return RuleIndex(entries)


def unknown_rule_ids(index: RuleIndex, catalogues: list[Catalogue]) -> list[str]:
    """Mapping entries that name a rule no catalogue has, one line each."""
    known = {rule.id for catalogue in catalogues for rule in catalogue.rules}
    problems = []
    for entry in index.entries:
        missing = [r for r in entry.checks + entry.exercises if r not in known]
        if missing:
            problems.append(f"{entry.where} ({entry.test or entry.match}): unknown rule id(s) {', '.join(missing)}")
    return problems
