"""The coverage map: every rule of the catalogues, the tests that check it, and what does not line up.

Given the spec text (parsed by :mod:`harness.formats.spec_rules`), the project's
catalogues and mapping (:mod:`harness.formats.rule_files`) and the tests the
suites load, :func:`build_map` says for each rule which tests check it (and
which only exercise it), and lists everything that would otherwise be lost
silently: statements of the text no rule names (new or reworded), anchors the
text no longer has, mapping entries that name unknown rules or no loaded test,
and rule ids in test descriptions that no catalogue defines. Without a spec text (none at hand, as
for an installed wheel outside a checkout) the map still lists every rule and what checks it, and
says the text was not compared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.core.rules import Rule, RuleIndex, rules_from_description
from harness.formats.rule_files import Catalogue, unknown_rule_ids
from harness.formats.spec_rules import Statement, parse_sentences

#: A rule's standing, worst first (the order ``harness coverage`` lists them in within a level).
STATUSES = ("unchecked", "exercised", "checked", "not-checkable")
#: What every output says when there was no spec text to compare the catalogues with.
NOT_COMPARED = (
    "the spec text was not compared (none at hand: give --spec-text PATH, or --spec-text "
    "git:https://github.com/mongodb/specifications@COMMIT#source/change-streams); new, reworded "
    "and removed statements are not looked for"
)


@dataclass(frozen=True)
class LoadedTest:
    """What the map needs of a test: its id and the text that may name its rules."""

    test_id: str
    description: str


@dataclass
class RuleCoverage:
    rule: Rule
    checked_by: list[str] = field(default_factory=list)
    exercised_by: list[str] = field(default_factory=list)
    #: Anchors of the rule that the given spec text does not have (the statement changed or went away).
    missing_anchors: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        if self.rule.not_checkable:
            return "not-checkable"
        if self.checked_by:
            return "checked"
        return "exercised" if self.exercised_by else "unchecked"

    @property
    def holds_ci(self) -> bool:
        """A driver-side MUST that a test could check and none does: ``harness coverage`` fails for it."""
        return self.rule.driver_side and self.rule.level == "MUST" and self.status in ("unchecked", "exercised")


@dataclass
class UnmappedStatement:
    """A normative statement of the text that no rule names; ``maybe`` lists rules whose anchor went missing
    in the same section (the statement may be their rewording)."""

    statement: Statement
    maybe: list[str] = field(default_factory=list)

    @property
    def holds_ci(self) -> bool:
        return self.statement.scope == "driver" and self.statement.level == "MUST"


@dataclass
class CoverageMap:
    rules: list[RuleCoverage]
    unmapped: list[UnmappedStatement]
    problems: list[str]
    #: Mapping entries whose tests were not loaded (their claims are taken as written).
    unverified: list[str]
    #: The spec text's path, or None when there was none to compare (:data:`NOT_COMPARED`).
    spec_text: str | None
    tests_loaded: int

    def failing(self) -> list[str]:
        """What makes ``harness coverage`` exit 1: unchecked driver-side MUSTs, known or new."""
        known = [c.rule.id for c in self.rules if c.holds_ci]
        new = [f"unmapped statement at line {u.statement.line}" for u in self.unmapped if u.holds_ci]
        return known + new


def _file_of(test_id: str) -> str:
    return test_id.split("::", 1)[0]


def build_map(
    text: str | None,
    spec_text_name: str | None,
    catalogues: list[Catalogue],
    index: RuleIndex,
    tests: list[LoadedTest],
    other_texts: dict[str, str] | None = None,
) -> CoverageMap:
    """The map of ``catalogues`` against ``text`` (the change-streams spec) and the loaded ``tests``.

    ``other_texts`` holds, by catalogue name, the document another catalogue's anchors point into (the
    server's change-stream overview for ``server``); anchors of a catalogue without its text are not verified,
    and the problems say so. ``text`` None: no text at hand; no anchor is verified and no statement is
    looked for (the map's ``spec_text`` is None, and every output says so).
    """
    compared = text is not None
    sentences = parse_sentences(text) if text is not None else []
    present = {s.key for s in sentences}
    coverage = {rule.id: RuleCoverage(rule) for catalogue in catalogues for rule in catalogue.rules}
    problems = [p for catalogue in catalogues for p in catalogue.problems]
    problems += unknown_rule_ids(index, catalogues)

    spec_catalogue = next((c for c in catalogues if c.name == "change-streams"), None)
    named: set[str] = set()
    if spec_catalogue is not None and compared:
        for rule in spec_catalogue.rules:
            named.update(rule.anchors)
            coverage[rule.id].missing_anchors = [a for a in rule.anchors if a not in present]

    for test in tests:
        for rule_id in rules_from_description(test.description):
            if rule_id in coverage:
                coverage[rule_id].checked_by.append(test.test_id)
            else:
                problems.append(
                    f"{test.test_id}: names rule {rule_id}, which no catalogue defines"
                    + (
                        ""
                        if any(c.name == "server" for c in catalogues) or not rule_id.startswith("SRV-")
                        else " (specs/coverage/server-rules.yml is missing)"
                    )
                )
    loaded_files = {_file_of(t.test_id) for t in tests}
    unverified: list[str] = []
    for entry in index.entries:
        matched = [t.test_id for t in tests if entry.applies_to(t.test_id)]
        if not matched:
            pattern = entry.test or entry.match
            file_part = _file_of(pattern)
            if "*" not in file_part and file_part in loaded_files:
                problems.append(f"{entry.where}: names no test of the loaded file {file_part} ({pattern})")
                continue
            unverified.append(f"{pattern}")
            matched = [f"{pattern} (not loaded)"]
        for rule_id in entry.checks:
            if rule_id in coverage:
                coverage[rule_id].checked_by.extend(matched)
        for rule_id in entry.exercises:
            if rule_id in coverage:
                coverage[rule_id].exercised_by.extend(matched)

    for catalogue in catalogues:
        if catalogue is spec_catalogue or not compared or not any(rule.anchors for rule in catalogue.rules):
            continue
        other = (other_texts or {}).get(catalogue.name)
        if other is None:
            problems.append(
                f"{catalogue.path}: anchors not verified: its text ({catalogue.text or 'not named'}) "
                "was not found beside the spec text"
            )
            continue
        found = {s.key for s in parse_sentences(other)}
        for rule in catalogue.rules:
            coverage[rule.id].missing_anchors = [a for a in rule.anchors if a not in found]

    missing_by_section: dict[str, list[str]] = {}
    for item in coverage.values():
        if item.missing_anchors:
            missing_by_section.setdefault(item.rule.section, []).append(item.rule.id)
    unmapped = [
        UnmappedStatement(s, missing_by_section.get(s.section, []))
        for s in sentences
        if s.level is not None and s.key not in named
    ]
    for item in coverage.values():
        item.checked_by = sorted(dict.fromkeys(item.checked_by))
        item.exercised_by = sorted(dict.fromkeys(t for t in item.exercised_by if t not in item.checked_by))
    return CoverageMap(
        rules=list(coverage.values()),
        unmapped=unmapped,
        problems=problems,
        unverified=sorted(dict.fromkeys(unverified)),
        spec_text=spec_text_name if compared else None,
        tests_loaded=len(tests),
    )


def ordered(rules: list[RuleCoverage]) -> list[RuleCoverage]:
    """Driver-side MUSTs first, then driver-side SHOULDs, then server-side rules; rules nothing can check
    last. Within a group, catalogue order."""

    def group(item: RuleCoverage) -> int:
        if item.status == "not-checkable":
            return 4
        return (0 if item.rule.driver_side else 2) + (0 if item.rule.level == "MUST" else 1)

    return sorted(rules, key=group)


def as_json(cmap: CoverageMap) -> dict[str, Any]:
    """The map as plain data (``--format json``); never the spec's sentences, only anchors and lines."""
    return {
        "spec_text": cmap.spec_text,
        "spec_text_compared": cmap.spec_text is not None,
        **({} if cmap.spec_text is not None else {"not_compared": NOT_COMPARED}),
        "tests_loaded": cmap.tests_loaded,
        "rules": [
            {
                "id": c.rule.id,
                "level": c.rule.level,
                "section": c.rule.section,
                "paraphrase": c.rule.paraphrase,
                "driver_side": c.rule.driver_side,
                "wording": c.rule.wording,
                "catalogue": c.rule.catalogue,
                "status": c.status,
                "checked_by": c.checked_by,
                "exercised_by": c.exercised_by,
                "not_checkable": c.rule.not_checkable or None,
                "missing_anchors": c.missing_anchors,
            }
            for c in ordered(cmap.rules)
        ],
        "unmapped_statements": [
            {
                "line": u.statement.line,
                "section": u.statement.section,
                "level": u.statement.level,
                "scope": u.statement.scope,
                "anchor": u.statement.key,
                "maybe_rewording_of": u.maybe,
            }
            for u in cmap.unmapped
        ],
        "unverified_mapping_entries": cmap.unverified,
        "problems": cmap.problems,
        "failing": cmap.failing(),
    }
