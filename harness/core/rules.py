"""Rules and the tests that check them: the model behind ``harness coverage`` and a record's ``rules``.

A :class:`Rule` is one requirement of a spec (``CS-RESUME-ONCE``) or of the
server's documented behaviour (``SRV-ORDER``), as the project's catalogue
(``specs/coverage/*-rules.yml``) names it. Which tests check a rule comes from
two places: a test that names its rules itself, as the leading ``ID[, ID...]:``
of its description (the supplementary scenarios), and the project's mapping
(``specs/coverage/test-rules.yml``) for tests written elsewhere (upstream
unified and legacy files, prose tests). :class:`RuleIndex` answers, for one
test, which rules it checks; the engine puts that answer in every result record.

Pure data and matching; the files are read by :mod:`harness.formats.rule_files`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

#: How strongly a rule's sentence asks: a requirement, or a recommendation.
MUST, SHOULD = "MUST", "SHOULD"
#: A rule id: ``CS-`` or ``SRV-`` and upper-case words joined by ``-``.
RULE_ID = re.compile(r"^(?:CS|SRV)(?:-[A-Z0-9]+)+$")
#: The leading ``ID[, ID...]:`` of a test description that names its rules.
_LEADING_IDS = re.compile(r"^\s*((?:CS|SRV)(?:-[A-Z0-9]+)+(?:\s*,\s*(?:CS|SRV)(?:-[A-Z0-9]+)+)*)\s*:")


def rules_from_description(description: str) -> list[str]:
    """The rule ids a test names as the leading ``ID[, ID...]:`` of its description (none: [])."""
    found = _LEADING_IDS.match(description or "")
    if not found:
        return []
    return [part.strip() for part in found.group(1).split(",")]


@dataclass(frozen=True)
class Rule:
    """One requirement, as the catalogue has it."""

    id: str
    level: str
    section: str
    paraphrase: str
    driver_side: bool = True
    #: ``normative`` (a capital keyword in the text) or ``descriptive`` (held to ``level`` by the project).
    wording: str = "normative"
    #: Sentence anchors in the spec text (``hash`` or ``hash#n``); empty for rules from a document not parsed.
    anchors: tuple[str, ...] = ()
    cue: str = ""
    #: Why no run can observe this rule ("" when a test can).
    not_checkable: str = ""
    #: Which catalogue it came from (``change-streams``, ``server``).
    catalogue: str = ""
    #: How much of the rule its check compares: ``whole``, or ``part: <what is left out, and why>``.
    check: str = ""
    #: When the rule applies (server versions, topologies, options); "" when always.
    conditions: str = ""
    #: What the references leave free where the rule applies (a variation its checks must accept); "" when nothing
    #: was found. An :class:`Allowance` of the rule proves its checks accept it.
    room: str = ""

    @property
    def kind(self) -> str:
        """``driver`` or ``server``: whose behaviour the rule is about."""
        return "driver" if self.driver_side else "server"


#: What a breakage breaks: the driver under test, or the server (the target).
BREAKAGE_SIDES = ("driver", "server")


@dataclass(frozen=True)
class Breakage:
    """A deliberately broken driver or server that the checks of ``rules`` must catch (the proof of a check).

    ``proof`` names where the harness's own tests apply it and assert that the checks fail: ``PATH::NAME``, a
    test module and either the table that holds the breakage under ``id`` or the test function that applies it.
    """

    id: str
    rules: tuple[str, ...]
    side: str
    what: str
    proof: str
    #: Set for a breakage that changes one code path of several (one API of two, one error class, one option).
    one_path: str = ""
    where: str = ""


@dataclass(frozen=True)
class Rejection:
    """A check that fails a permitted variation today (a finding against the check): its test id, and why."""

    test: str
    why: str


@dataclass(frozen=True)
class Allowance:
    """A behaviour the references permit that the checks of ``rules`` must accept (the second proof of a check).

    ``anchors`` name the sentences that permit it as a rule's do (``HASH`` in the change-streams spec,
    ``FILE:HASH`` in another reference text); ``proof`` names where the harness's own tests apply it to pymongo or
    SecantusDB and assert that it was observed and that the checks pass: ``PATH::NAME``, a test module and the
    table that holds the allowance under ``id``. ``rejected_by`` lists the checks that fail it today.
    """

    id: str
    rules: tuple[str, ...]
    side: str
    what: str
    anchors: tuple[str, ...]
    why: str
    proof: str
    cue: str = ""
    rejected_by: tuple[Rejection, ...] = ()
    where: str = ""


@dataclass(frozen=True)
class TestRules:
    """One mapping entry: the tests it names (an exact id or a pattern) and the rules they check."""

    __test__ = False  # not a pytest test class

    checks: tuple[str, ...]
    exercises: tuple[str, ...] = ()
    test: str = ""
    match: str = ""
    exclude: tuple[str, ...] = ()
    note: str = ""
    #: Where the entry is (``file: entry N``), for messages.
    where: str = ""

    def applies_to(self, test_id: str) -> bool:
        if any(fnmatchcase(test_id, pattern) for pattern in self.exclude):
            return False
        return test_id == self.test if self.test else fnmatchcase(test_id, self.match)


@dataclass
class RuleIndex:
    """Which rules a test checks: its own leading ids plus every mapping entry that names it.

    With the catalogues' ``levels`` and the scenarios' ``traced`` assertions it also says at what level a test
    holds its rules (:meth:`should_only`); without them every rule counts as a MUST.
    """

    entries: list[TestRules] = field(default_factory=list)
    #: Each catalogued rule's level (``MUST``/``SHOULD``) by id: the level of a rule no trace says more about.
    levels: dict[str, str] = field(default_factory=dict)
    #: Per traced scenario (test id), the (rule, level) of each of its assertions, preconditions included (a test
    #: fails on any of them). A trace can hold a rule with a MUST half and a SHOULD half (CS-KILL-RESUME) at the
    #: level of the half it asserts, so for a traced rule the trace's levels replace the catalogue's.
    traced: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)

    def with_levels(self, levels: dict[str, str], traced: dict[str, tuple[tuple[str, str], ...]]) -> RuleIndex:
        """This index, knowing the catalogues' levels and the traces' (plain data: core reads no file)."""
        return RuleIndex(list(self.entries), dict(levels), dict(traced))

    def held_levels(self, test_id: str, description: str = "") -> list[tuple[str, str]]:
        """Each (rule, level) a failure of the test may stand for: its trace's assertions, then the other rules it
        checks at their catalogue level (a rule no catalogue has counts as a MUST)."""
        asserted = list(self.traced.get(test_id, ()))
        traced_rules = {rule for rule, _ in asserted}
        return asserted + [
            (rule, self.levels.get(rule, MUST))
            for rule in self.checks(test_id, description)
            if rule not in traced_rules
        ]

    def should_only(self, test_id: str, description: str = "") -> list[str]:
        """The rules of a test that holds every rule it checks at SHOULD level, sorted; ``[]`` when it holds one as
        a MUST, or checks nothing known (its failure is then an ordinary one)."""
        held = self.held_levels(test_id, description)
        if not held or any(level != SHOULD for _, level in held):
            return []
        return sorted({rule for rule, _ in held})

    def matching(self, test_id: str) -> list[TestRules]:
        return [entry for entry in self.entries if entry.applies_to(test_id)]

    def checks(self, test_id: str, description: str = "") -> list[str]:
        ids = rules_from_description(description)
        for entry in self.matching(test_id):
            ids.extend(entry.checks)
        return sorted(dict.fromkeys(ids))

    def exercises(self, test_id: str) -> list[str]:
        return sorted({rule for entry in self.matching(test_id) for rule in entry.exercises})

    def rules_for(self, test_id: str, description: str = "") -> list[str]:
        """What a result record's ``rules`` holds: the rules the test checks."""
        return self.checks(test_id, description)
