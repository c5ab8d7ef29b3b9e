"""Reading the project's rule catalogues, its test-to-rule mapping and its breakages (``specs/coverage/``).

``change-streams-rules.yml`` names each statement of the change-streams spec;
``server-rules.yml`` (optional) names the server-side rules (``SRV-...``); every
other ``*-rules.yml`` is a catalogue of one more reference text (the note on
resume tokens, the change-stream parts of the unified test format). A catalogue
names its ``text`` and may limit itself to some of its ``sections``; its
``informative`` list names, by anchor, the sentences of that text that state
nothing a run could test (history, examples, internals), each with why, so that
every sentence is accounted for. ``test-rules.yml`` (and ``test-rules-*.yml``)
say which upstream and prose tests check which rules; ``breakages/*.yml`` list
the deliberately broken drivers and servers that prove each check, and
``allowances/*.yml`` the variations the references permit that each check is
proven to accept. A malformed
file is a :class:`RuleFileError` naming the file and the entry; a mapping that
names a rule no catalogue has is reported by :func:`unknown_rule_ids`, not
silently ignored.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.core.project_data import project_data
from harness.core.rules import BREAKAGE_SIDES, RULE_ID, Allowance, Breakage, Rejection, Rule, RuleIndex, TestRules
from harness.formats.data_yaml import load_data_yaml
from harness.formats.strict_reader import InputError

#: The project's own coverage files (``specs/coverage/``, as installed).
COVERAGE_DIR = project_data("coverage")
SPEC_CATALOGUE = COVERAGE_DIR / "change-streams-rules.yml"
SERVER_CATALOGUE = COVERAGE_DIR / "server-rules.yml"
TEST_MAPPING = COVERAGE_DIR / "test-rules.yml"
#: One file per area of the deliberately broken drivers and servers that prove the checks.
BREAKAGES_DIR = COVERAGE_DIR / "breakages"
#: One file per area of the permitted variations that the checks are proven to accept.
ALLOWANCES_DIR = COVERAGE_DIR / "allowances"
#: What a rule's ``check`` says: the check compares the whole of what the rule covers, or a part (and why).
CHECK_STRENGTHS = ("whole", "part")
KINDS = ("driver", "server")

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
    "check",
    "conditions",
    "kind",
    "room",
}
_CATALOGUE_KEYS = {"spec", "name", "text", "sections", "informative", "rules"}
_BREAKAGE_KEYS = {"id", "rules", "side", "what", "proof", "one_path"}
_ALLOWANCE_KEYS = {"id", "rules", "side", "what", "anchors", "cue", "why", "proof", "rejected_by"}
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
    #: Headings whose sentences (their subsections' too) the catalogue accounts for; empty: the whole text.
    sections: tuple[str, ...] = ()
    #: Anchor -> why: sentences of ``text`` that state nothing a run can test.
    informative: dict[str, str] = field(default_factory=dict)
    #: Entries whose keys the loader does not know (kept, named in ``harness coverage``'s problems).
    problems: list[str] = field(default_factory=list)

    def by_id(self) -> dict[str, Rule]:
        return {rule.id: rule for rule in self.rules}


def _read_yaml(path: Path) -> Any:
    try:
        return load_data_yaml(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RuleFileError(f"{path}: cannot read: {exc}") from exc
    except InputError as exc:  # valid YAML the strict reader refuses: a key twice, a number that is not finite
        raise RuleFileError(f"{path}: {exc}") from exc
    except yaml.YAMLError as exc:
        raise RuleFileError(f"{path}: not valid YAML: {exc}") from exc


def load_catalogue(path: Path, name: str, *, driver_side_default: bool = True) -> Catalogue:
    """One catalogue file; every rule needs an ``id`` of the form ``CS-...``/``SRV-...``, unique in the file."""
    data = _read_yaml(path)
    if not isinstance(data, dict) or not isinstance(data.get("rules"), list):
        raise RuleFileError(f"{path}: expected a mapping with a 'rules' list")
    catalogue = Catalogue(
        name=name,
        path=path,
        text=str(data.get("text") or ""),
        sections=_strings(data, "sections", str(path)),
        informative=_informative(data.get("informative"), path),
    )
    unknown_top = sorted(set(data) - _CATALOGUE_KEYS)
    if unknown_top:
        catalogue.problems.append(f"{path}: top-level keys not understood, ignored: {', '.join(unknown_top)}")
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
        check = str(entry.get("check") or "")
        if check and check.split(":", 1)[0].strip() not in CHECK_STRENGTHS:
            raise RuleFileError(f"{where}: check is 'whole' or 'part: <what is not compared>', got {check!r}")
        kind = entry.get("kind")
        if kind is not None and kind not in KINDS:
            raise RuleFileError(f"{where}: kind is one of {', '.join(KINDS)}, got {kind!r}")
        driver_side = kind == "driver" if kind is not None else bool(entry.get("driver_side", driver_side_default))
        catalogue.rules.append(
            Rule(
                id=rule_id,
                level=level,
                section=str(entry.get("section") or entry.get("source") or ""),
                paraphrase=str(entry.get("paraphrase") or ""),
                driver_side=driver_side,
                wording=wording,
                anchors=tuple(anchors),
                cue=str(entry.get("cue") or ""),
                not_checkable=str(entry.get("not_checkable") or ""),
                catalogue=name,
                check=check,
                conditions=str(entry.get("conditions") or ""),
                room=str(entry.get("room") or ""),
            )
        )
    return catalogue


def _strings(data: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = data.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RuleFileError(f"{where}: '{key}' is a list of strings")
    return tuple(value)


def _informative(value: Any, path: Path) -> dict[str, str]:
    """``informative``: a list of ``{anchor: HASH, why: TEXT}`` (why is required: a sentence is left out on purpose)."""
    if value is None:
        return {}
    if not isinstance(value, list):
        raise RuleFileError(f"{path}: 'informative' is a list of {{anchor, why}} entries")
    found: dict[str, str] = {}
    for number, entry in enumerate(value, start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("anchor"), str) or not entry.get("why"):
            raise RuleFileError(f"{path}: informative entry {number}: give 'anchor' (a sentence hash) and 'why'")
        if entry["anchor"] in found:
            raise RuleFileError(f"{path}: informative entry {number}: anchor {entry['anchor']} is listed twice")
        found[entry["anchor"]] = str(entry["why"])
    return found


def other_catalogue_paths(folder: Path | None = None) -> list[Path]:
    """Every ``*-rules.yml`` of the coverage folder besides the spec's, the server's and the test mapping."""
    folder = folder or COVERAGE_DIR
    fixed = {SPEC_CATALOGUE.name, SERVER_CATALOGUE.name, TEST_MAPPING.name}
    return sorted(p for p in folder.glob("*-rules.yml") if p.name not in fixed and not p.name.startswith("test-"))


def load_catalogues(spec: Path | None = None, server: Path | None = None) -> list[Catalogue]:
    """The spec's catalogue, the server-side one when the file exists (``SRV-...``, not driver-side), and, when
    the defaults are read, every other catalogue of the coverage folder (named by its ``name`` or file stem)."""
    defaults = spec is None and server is None
    spec, server = spec or SPEC_CATALOGUE, server or SERVER_CATALOGUE
    catalogues = [load_catalogue(spec, "change-streams")]
    if server.exists():
        catalogues.append(load_catalogue(server, "server", driver_side_default=False))
    for path in other_catalogue_paths() if defaults else []:
        data = _read_yaml(path)
        default_name = path.name.removesuffix("-rules.yml")
        name = str(data.get("name") or default_name) if isinstance(data, dict) else default_name
        catalogues.append(load_catalogue(path, name))
    seen: dict[str, str] = {}
    for catalogue in catalogues:
        for rule in catalogue.rules:
            if rule.id in seen:
                raise RuleFileError(f"{catalogue.path}: rule {rule.id} is also defined in {seen[rule.id]}")
            seen[rule.id] = str(catalogue.path)
    return catalogues


def mapping_paths() -> list[Path]:
    """``test-rules.yml`` and every ``test-rules-*.yml`` beside it (one per area)."""
    return [TEST_MAPPING, *sorted(TEST_MAPPING.parent.glob("test-rules-*.yml"))]


def load_mapping(path: Path | None = None) -> RuleIndex:
    """The test-to-rule mapping: entries with ``test`` (an id) or ``match`` (a pattern), ``checks``, ``exercises``.

    ``path`` None: every mapping file of the project (:func:`mapping_paths`)."""
    entries: list[TestRules] = []
    for one in [path] if path is not None else mapping_paths():
        entries.extend(_mapping_entries(one))
    return RuleIndex(entries)


def _mapping_entries(path: Path) -> list[TestRules]:
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
    return entries


def _proof_entries(
    folder: Path, list_key: str, noun: str, known_keys: set[str], texts: tuple[str, ...]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each checked entry of ``folder/*.yml``'s ``list_key`` list, with where it is: a breakage or an allowance
    (an ``id`` unique across the files, known keys only, ``rules`` ids, a ``side``, the required ``texts``, and a
    ``proof`` of the form ``PATH::NAME``)."""
    seen: dict[str, str] = {}
    for path in sorted(folder.glob("*.yml")) if folder.is_dir() else []:
        data = _read_yaml(path)
        if not isinstance(data, dict) or not isinstance(data.get(list_key), list):
            raise RuleFileError(
                f"{path}: expected a mapping with {'an' if noun[0] in 'aeiou' else 'a'} '{list_key}' list"
            )
        for number, entry in enumerate(data[list_key], start=1):
            where = f"{path}: {noun} {number}"
            if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
                raise RuleFileError(f"{where}: each {noun} is a mapping with an 'id'")
            where = f"{where} ({entry['id']})"
            unknown = sorted(set(entry) - known_keys)
            if unknown:
                raise RuleFileError(
                    f"{where}: unknown keys {', '.join(unknown)}; known: {', '.join(sorted(known_keys))}"
                )
            rules = entry.get("rules")
            if (
                not isinstance(rules, list)
                or not rules
                or not all(isinstance(r, str) and RULE_ID.match(r) for r in rules)
            ):
                raise RuleFileError(f"{where}: 'rules' is a non-empty list of rule ids")
            if entry.get("side") not in BREAKAGE_SIDES:
                raise RuleFileError(f"{where}: side is one of {', '.join(BREAKAGE_SIDES)}")
            for key in texts:
                if not isinstance(entry.get(key), str) or not entry[key].strip():
                    raise RuleFileError(f"{where}: '{key}' is required text")
            if "::" not in entry["proof"]:
                raise RuleFileError(f"{where}: proof is PATH::NAME (a test module and its table or test function)")
            if entry["id"] in seen:
                raise RuleFileError(f"{where}: the id is also used in {seen[entry['id']]}")
            seen[entry["id"]] = where
            yield where, entry


def load_breakages(folder: Path | None = None) -> list[Breakage]:
    """Every breakage of ``breakages/*.yml``: ``breakages``, a list of ``{id, rules, side, what, proof[, one_path]}``.

    Ids are unique across the files (a test table holds each under its id)."""
    return [
        Breakage(
            id=entry["id"],
            rules=tuple(entry["rules"]),
            side=entry["side"],
            what=entry["what"],
            proof=entry["proof"],
            one_path=str(entry.get("one_path") or ""),
            where=where,
        )
        for where, entry in _proof_entries(
            folder or BREAKAGES_DIR, "breakages", "breakage", _BREAKAGE_KEYS, ("what", "proof")
        )
    ]


def load_allowances(folder: Path | None = None) -> list[Allowance]:
    """Every allowance of ``allowances/*.yml``: ``allowances``, a list of ``{id, rules, side, what, anchors, cue,
    why, proof[, rejected_by]}``; ``rejected_by`` is a list of ``{test, why}``.

    Ids are unique across the files (a test table holds each under its id)."""
    found: list[Allowance] = []
    entries = _proof_entries(
        folder or ALLOWANCES_DIR, "allowances", "allowance", _ALLOWANCE_KEYS, ("what", "why", "proof")
    )
    for where, entry in entries:
        anchors = entry.get("anchors")
        if not isinstance(anchors, list) or not anchors or not all(isinstance(a, str) and a for a in anchors):
            raise RuleFileError(
                f"{where}: 'anchors' is a non-empty list of the permitting sentences ('HASH' or 'FILE:HASH')"
            )
        found.append(
            Allowance(
                id=entry["id"],
                rules=tuple(entry["rules"]),
                side=entry["side"],
                what=entry["what"],
                anchors=tuple(anchors),
                why=entry["why"],
                proof=entry["proof"],
                cue=str(entry.get("cue") or ""),
                rejected_by=_rejections(entry.get("rejected_by"), where),
                where=where,
            )
        )
    return found


def _rejections(value: Any, where: str) -> tuple[Rejection, ...]:
    """``rejected_by``: a list of ``{test: <test id>, why: TEXT}`` (why is required: it is a finding)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise RuleFileError(f"{where}: 'rejected_by' is a list of {{test, why}} entries")
    found = []
    for number, entry in enumerate(value, start=1):
        if (
            not isinstance(entry, dict)
            or set(entry) != {"test", "why"}
            or not all(isinstance(entry[k], str) and entry[k].strip() for k in ("test", "why"))
        ):
            raise RuleFileError(f"{where}: rejected_by entry {number}: give 'test' (a test id) and 'why', nothing else")
        found.append(Rejection(entry["test"], entry["why"]))
    return tuple(found)


def unknown_rule_ids(index: RuleIndex, catalogues: list[Catalogue]) -> list[str]:
    """Mapping entries that name a rule no catalogue has, one line each."""
    known = {rule.id for catalogue in catalogues for rule in catalogue.rules}
    problems = []
    for entry in index.entries:
        missing = [r for r in entry.checks + entry.exercises if r not in known]
        if missing:
            problems.append(f"{entry.where} ({entry.test or entry.match}): unknown rule id(s) {', '.join(missing)}")
    return problems
