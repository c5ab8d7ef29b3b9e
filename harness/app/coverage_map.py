"""The coverage map: every rule of the catalogues, the tests that check it, and what does not line up.

Given the spec text (parsed by :mod:`harness.formats.spec_rules`), the project's
catalogues and mapping (:mod:`harness.formats.rule_files`) and the tests the
suites load, :func:`build_map` says for each rule which tests check it (and
which only exercise it), and lists everything that would otherwise be lost
silently: statements of the text no rule names (new or reworded), anchors the
text no longer has, mapping entries that name unknown rules or no loaded test,
and rule ids in test descriptions that no catalogue defines. Every sentence of every reference text a
catalogue covers is accounted for: named by a rule's anchor or listed as informative; the rest are
``unaccounted``. Each checked rule is ``proven`` by the breakages (deliberately broken drivers and servers)
that its checks catch; a checked rule with none is ``unproven``. Its allowances (variations the references
permit) are those its checks are shown to accept; a rule whose ``room`` (what the references leave free) no
allowance covers is flagged, and so is an allowance some check rejects. A rule that ranges over dimensions
(``specs/coverage/dimensions.yml``) says how many of their values, and planned pairs of values, its checks reach
(:mod:`harness.app.combinations_coverage`). Without a spec text (none at hand, as
for an installed wheel outside a checkout) the map still lists every rule and what checks it, and
says the text was not compared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.app.combinations import DimensionTable
from harness.app.combinations_coverage import RuleCombinations, rule_combinations
from harness.core.causes import CLAUSES
from harness.core.rules import Allowance, Breakage, Rule, RuleIndex, rules_from_description
from harness.formats.rule_files import Catalogue, unknown_rule_ids
from harness.formats.spec_rules import Statement, parse_sentences

#: A rule's standing, worst first (the order ``harness coverage`` lists them in within a level).
STATUSES = ("unchecked", "exercised", "unproven", "checked", "not-checkable")
#: The text the change-streams catalogue's anchors point into when it names none.
SPEC_TEXT_NAME = "change-streams.md"
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
    #: The clauses its checks can report (:func:`harness.core.causes.clauses_of`; docs/causes.md).
    clauses: tuple[str, ...] = ()


@dataclass
class RuleCoverage:
    rule: Rule
    checked_by: list[str] = field(default_factory=list)
    exercised_by: list[str] = field(default_factory=list)
    #: The clauses the checks of its tests can report, the kinds of cause a failure of this rule can show.
    clauses: list[str] = field(default_factory=list)
    #: Anchors of the rule that the given spec text does not have (the statement changed or went away).
    missing_anchors: list[str] = field(default_factory=list)
    #: Ids of the breakages that prove the rule's checks; None when breakages were not looked at.
    breakages: list[str] | None = None
    #: Ids of the allowances its checks are shown to accept; None when allowances were not looked at.
    allowances: list[str] | None = None
    #: Allowance id -> the rule's checks that reject that allowance today (findings against those checks).
    rejected: dict[str, list[str]] = field(default_factory=dict)
    #: For a rule that ranges over dimensions: the values and pairs its checks reach; None otherwise.
    combinations: RuleCombinations | None = None

    @property
    def status(self) -> str:
        if self.rule.not_checkable:
            return "not-checkable"
        if self.checked_by:
            return "unproven" if self.breakages == [] else "checked"
        return "exercised" if self.exercised_by else "unchecked"

    @property
    def holds_ci(self) -> bool:
        """A rule, driver or server, MUST or SHOULD, that a run could check and that no test checks, or whose checks
        no breakage proves: ``harness coverage`` fails for it."""
        return self.status in ("unchecked", "exercised", "unproven")

    @property
    def room_unproven(self) -> bool:
        """The references leave room here (the rule's ``room``), its checks exist, and no allowance shows they accept
        it: flagged, not failing (a check may forbid what the text permits)."""
        return bool(self.rule.room) and self.allowances == [] and self.status in ("checked", "unproven")


@dataclass
class UnmappedStatement:
    """A normative statement of the text that no rule names; ``maybe`` lists rules whose anchor went missing
    in the same section (the statement may be their rewording)."""

    statement: Statement
    maybe: list[str] = field(default_factory=list)

    @property
    def holds_ci(self) -> bool:
        return self.statement.scope == "driver" and self.statement.level == "MUST"


@dataclass(frozen=True)
class UnaccountedSentence:
    """A sentence of a reference text that no rule names and no catalogue lists as informative."""

    text_file: str
    statement: Statement


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
    #: Sentences of the reference texts that nothing accounts for (the catalogue is incomplete there).
    unaccounted: list[UnaccountedSentence] = field(default_factory=list)
    #: Per reference text compared: (sentences in the catalogues' scope, named by rules, listed as informative).
    accounting: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    #: Every breakage read, by id (empty when breakages were not looked at).
    breakages: dict[str, Breakage] = field(default_factory=dict)
    #: Every allowance read, by id (empty when allowances were not looked at).
    allowances: dict[str, Allowance] = field(default_factory=dict)
    #: The dimension table (None when dimensions were not looked at).
    dimensions: DimensionTable | None = None

    def room_unproven(self) -> list[RuleCoverage]:
        """Checked rules whose ``room`` no allowance proves their checks accept."""
        return [c for c in ordered(self.rules) if c.room_unproven]

    def rejected(self) -> list[Allowance]:
        """Allowances that some check rejects today (findings against those checks)."""
        return [a for a in self.allowances.values() if a.rejected_by]

    def failing(self) -> list[str]:
        """What makes ``harness coverage`` exit 1: rules unchecked or unproven, statements no rule names, and
        sentences of a reference text nothing accounts for."""
        known = [c.rule.id for c in self.rules if c.holds_ci]
        new = [f"unmapped statement at line {u.statement.line}" for u in self.unmapped if u.holds_ci]
        counts: dict[str, int] = {}
        for item in self.unaccounted:
            counts[item.text_file] = counts.get(item.text_file, 0) + 1
        loose = [f"{n} unaccounted sentence(s) of {name}" for name, n in counts.items()]
        return known + new + loose


def _file_of(test_id: str) -> str:
    return test_id.split("::", 1)[0]


def build_map(
    text: str | None,
    spec_text_name: str | None,
    catalogues: list[Catalogue],
    index: RuleIndex,
    tests: list[LoadedTest],
    other_texts: dict[str, str] | None = None,
    breakages: list[Breakage] | None = None,
    allowances: list[Allowance] | None = None,
    dimensions: DimensionTable | None = None,
) -> CoverageMap:
    """The map of ``catalogues`` against ``text`` (the change-streams spec) and the loaded ``tests``.

    ``other_texts`` holds, by file name, the other reference documents the catalogues point into (a catalogue's
    ``text``, or the ``FILE:`` of an anchor written ``FILE:HASH``); anchors into a text not given are not
    verified, and the problems say so. ``text`` None: no text at hand; no anchor is verified and no statement is
    looked for (the map's ``spec_text`` is None, and every output says so). ``breakages`` None: breakages are not
    looked at, and no rule is ``unproven``. ``allowances`` None: allowances are not looked at, and no rule's room is
    flagged; their anchors, bare (the change-streams spec) or ``FILE:HASH``, are verified as the rules' are.
    ``dimensions`` None: no rule says what of its dimensions its checks reach; else each ranged rule does, and the
    table's anchors are verified, and its rules and the combinations tests state are held to the table.
    """
    compared = text is not None
    spec_catalogue = next((c for c in catalogues if c.name == "change-streams"), None)
    spec_name = (spec_catalogue.text if spec_catalogue is not None else "") or SPEC_TEXT_NAME
    texts = {**(other_texts or {}), **({spec_name: text} if text is not None else {})}
    parsed = {name: parse_sentences(body) for name, body in texts.items()} if compared else {}
    sentences = parsed.get(spec_name, [])
    coverage = {rule.id: RuleCoverage(rule) for catalogue in catalogues for rule in catalogue.rules}
    problems = [p for catalogue in catalogues for p in catalogue.problems]
    problems += unknown_rule_ids(index, catalogues)
    claimed: dict[str, set[str]] = {}
    for catalogue in catalogues:
        home = catalogue.text or (spec_name if catalogue is spec_catalogue else "")
        for rule in catalogue.rules:
            for anchor in rule.anchors:
                file, key = split_anchor(anchor, home)
                claimed.setdefault(file, set()).add(key)
        claimed.setdefault(home, set()).update(catalogue.informative)
    named = claimed.get(spec_name, set())

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

    clauses = {t.test_id: t.clauses for t in tests}
    for rule_coverage in coverage.values():
        reported = {clause for test_id in rule_coverage.checked_by for clause in clauses.get(test_id, ())}
        rule_coverage.clauses = [clause for clause in CLAUSES if clause in reported]
    present = {name: {s.key for s in found} for name, found in parsed.items()}
    for catalogue in catalogues if compared else []:
        home = catalogue.text or (spec_name if catalogue is spec_catalogue else "")
        files = {split_anchor(a, home)[0] for rule in catalogue.rules for a in rule.anchors}
        if catalogue.informative:
            files.add(home)
        absent = sorted(f for f in files if f not in present)
        if absent:
            problems.append(
                f"{catalogue.path}: anchors not verified: its text(s) ({', '.join(a or 'not named' for a in absent)}) "
                "were not found beside the spec text"
            )
        for rule in catalogue.rules:
            where = [(a, *split_anchor(a, home)) for a in rule.anchors]
            coverage[rule.id].missing_anchors = [a for a, f, k in where if f in present and k not in present[f]]
        if home in present:
            problems += [
                f"{catalogue.path}: informative anchor {anchor} is not a sentence of {home}"
                for anchor in catalogue.informative
                if anchor not in present[home]
            ]
    unaccounted, accounting = _account(catalogues, parsed, claimed, spec_catalogue, spec_name)

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
    if breakages is not None:
        proving = _ids_by_rule(coverage, breakages, "breaks", problems)
        for rule_id, item in coverage.items():
            item.breakages = proving[rule_id]
    if allowances is not None:
        _allow(coverage, allowances, present if compared else None, spec_name, problems)
    if dimensions is not None:
        _dimensions(coverage, dimensions, tests, present if compared else None, spec_name, problems)
    return CoverageMap(
        rules=list(coverage.values()),
        unmapped=unmapped,
        problems=problems,
        unverified=sorted(dict.fromkeys(unverified)),
        spec_text=spec_text_name if compared else None,
        tests_loaded=len(tests),
        unaccounted=unaccounted,
        accounting=accounting,
        breakages={b.id: b for b in breakages or []},
        allowances={a.id: a for a in allowances or []},
        dimensions=dimensions,
    )


def _ids_by_rule(
    coverage: dict[str, RuleCoverage], items: list[Breakage] | list[Allowance], verb: str, problems: list[str]
) -> dict[str, list[str]]:
    """Per catalogued rule, the ids of the breakages (or allowances) naming it; one naming a rule no catalogue has
    is a problem."""
    found: dict[str, list[str]] = {rule_id: [] for rule_id in coverage}
    for item in items:
        for rule_id in item.rules:
            if rule_id in found:
                found[rule_id].append(item.id)
            else:
                problems.append(f"{item.where}: {verb} {rule_id}, which no catalogue defines")
    return found


def _allow(
    coverage: dict[str, RuleCoverage],
    allowances: list[Allowance],
    present: dict[str, set[str]] | None,
    spec_name: str,
    problems: list[str],
) -> None:
    """Each rule's allowances; an allowance naming an unknown rule, or an anchor its text does not have, is a problem
    (``present`` None: no text at hand, anchors not verified)."""
    allowed = _ids_by_rule(coverage, allowances, "allows", problems)
    for allowance in allowances:
        for anchor in allowance.anchors if present is not None else ():
            file, key = split_anchor(anchor, spec_name)
            if file not in present:
                problems.append(
                    f"{allowance.where}: anchor {anchor} not verified: {file} was not found beside the spec text"
                )
            elif key not in present[file]:
                problems.append(f"{allowance.where}: anchor {anchor} is not a sentence of {file}")
    for rule_id, item in coverage.items():
        item.allowances = allowed[rule_id]
        checks = set(item.checked_by)
        for allowance_id in item.allowances:
            allowance = next(a for a in allowances if a.id == allowance_id)
            tests = [r.test for r in allowance.rejected_by if r.test in checks]
            if tests:
                item.rejected[allowance_id] = tests


def _dimensions(
    coverage: dict[str, RuleCoverage],
    table: DimensionTable,
    tests: list[LoadedTest],
    present: dict[str, set[str]] | None,
    spec_name: str,
    problems: list[str],
) -> None:
    """Each ranged rule's reach over its dimensions; an anchor its text lacks, a rule no catalogue has, a combination
    naming what the table lacks: problems."""
    for where, anchor in table.anchors() if present is not None else ():
        file, key = split_anchor(anchor, spec_name)
        if file not in present:
            problems.append(f"{where}: anchor {anchor} not verified: {file} was not found beside the spec text")
        elif key not in present[file]:
            problems.append(f"{where}: anchor {anchor} is not a sentence of {file}")
    problems += [
        f"{table.path}: {rule} ranges over a dimension, but no catalogue defines it"
        for rule in table.ranged_rules()
        if rule not in coverage
    ]
    for test in tests:
        problems += table.problems(test.description, test.test_id)
    reach = rule_combinations(
        table, {rule: item.checked_by for rule, item in coverage.items()}, {t.test_id: t.description for t in tests}
    )
    for rule, found in reach.items():
        if rule in coverage:
            coverage[rule].combinations = found


def split_anchor(anchor: str, home: str) -> tuple[str, str]:
    """(text file, sentence key) of an anchor: ``FILE:HASH`` names its file, a bare ``HASH`` is in ``home``."""
    file, _, key = anchor.rpartition(":")
    return file or home, key


def _in_sections(statement: Statement, sections: set[str] | None) -> bool:
    return sections is None or any(heading in sections for heading in statement.headings)


def _account(
    catalogues: list[Catalogue],
    parsed: dict[str, list[Statement]],
    claimed: dict[str, set[str]],
    spec_catalogue: Catalogue | None,
    spec_name: str,
) -> tuple[list[UnaccountedSentence], dict[str, tuple[int, int, int]]]:
    """The sentences of each catalogue's own text, in its sections, that no rule names and none lists as
    informative (the spec's normative ones are the ``unmapped`` statements instead), and the counts per text."""
    scopes: dict[str, set[str] | None] = {}
    informative: dict[str, set[str]] = {}
    for catalogue in catalogues:
        home = catalogue.text or (spec_name if catalogue is spec_catalogue else "")
        if not home or home not in parsed:
            continue
        informative.setdefault(home, set()).update(catalogue.informative)
        whole = not catalogue.sections or scopes.get(home, set()) is None
        scopes[home] = None if whole else {*(scopes.get(home) or set()), *catalogue.sections}
    unaccounted: list[UnaccountedSentence] = []
    accounting: dict[str, tuple[int, int, int]] = {}
    for home, sections in scopes.items():
        in_scope = [s for s in parsed[home] if _in_sections(s, sections)]
        listed = informative.get(home, set())
        ruled = claimed.get(home, set()) - listed
        accounting[home] = (
            len(in_scope),
            sum(1 for s in in_scope if s.key in ruled),
            sum(1 for s in in_scope if s.key in listed),
        )
        unaccounted += [
            UnaccountedSentence(home, s)
            for s in in_scope
            if s.key not in claimed.get(home, set()) and not (home == spec_name and s.level is not None)
        ]
    return unaccounted, accounting


def ordered(rules: list[RuleCoverage]) -> list[RuleCoverage]:
    """Driver-side MUSTs first, then driver-side SHOULDs, then server-side rules; rules nothing can check
    last. Within a group, catalogue order."""

    def group(item: RuleCoverage) -> int:
        if item.status == "not-checkable":
            return 4
        return (0 if item.rule.driver_side else 2) + (0 if item.rule.level == "MUST" else 1)

    return sorted(rules, key=group)


def _table_json(table: DimensionTable | None) -> list[dict[str, Any]] | None:
    """The dimension table as plain data: each value with its anchors and, when no run here produces it, why."""
    if table is None:
        return None
    return [
        {
            "id": d.id,
            "what": d.what,
            "rules": [r.rule for r in d.rules],
            "values": [
                {"id": v.id, "anchors": list(v.anchors), "tags": sorted(v.tags), "unreachable": v.unreachable or None}
                for v in d.values
            ],
        }
        for d in table.dimensions
    ]


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
                "clauses": c.clauses,
                "exercised_by": c.exercised_by,
                "not_checkable": c.rule.not_checkable or None,
                "missing_anchors": c.missing_anchors,
                "kind": c.rule.kind,
                "check": c.rule.check or None,
                "conditions": c.rule.conditions or None,
                "breakages": c.breakages,
                "room": c.rule.room or None,
                "allowances": c.allowances,
                "allowances_rejected_by": c.rejected,
                "room_unproven": c.room_unproven,
                "covers": c.combinations.as_json() if c.combinations is not None else None,
            }
            for c in ordered(cmap.rules)
        ],
        "dimensions": _table_json(cmap.dimensions),
        "breakages": [
            {
                "id": b.id,
                "rules": list(b.rules),
                "side": b.side,
                "what": b.what,
                "proof": b.proof,
                "one_path": b.one_path or None,
            }
            for b in cmap.breakages.values()
        ],
        "allowances": [
            {
                "id": a.id,
                "rules": list(a.rules),
                "side": a.side,
                "what": a.what,
                "anchors": list(a.anchors),
                "why": a.why,
                "proof": a.proof,
                "rejected_by": [{"test": r.test, "why": r.why} for r in a.rejected_by],
            }
            for a in cmap.allowances.values()
        ],
        "accounting": {
            name: {"sentences": total, "named_by_rules": ruled, "informative": listed}
            for name, (total, ruled, listed) in cmap.accounting.items()
        },
        "unaccounted_sentences": [
            {"text": u.text_file, "line": u.statement.line, "section": u.statement.section, "anchor": u.statement.key}
            for u in cmap.unaccounted
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
