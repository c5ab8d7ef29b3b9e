"""The allowance registry (specs/coverage/allowances/) says exactly what the harness's own tests prove.

``harness coverage`` shows, for each rule, the allowances its checks are proven to accept: behaviours the
reference texts permit that a check must not reject. Each entry names its proof (``PATH::NAME``), the table of
a test module that applies it under its id. These tests hold the registry to the tables both ways, each entry's
rules to the catalogue, to its table and to what some test checks, its anchors to sentences of the reference
texts, its ``rejected_by`` to tests that exist and check one of its rules, and its words to the licence.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from harness.app.coverage_map import split_anchor
from harness.core.rules import Allowance, rules_from_description
from harness.formats.rule_files import load_allowances, load_breakages, load_catalogues, load_mapping
from harness.formats.spec_rules import normalise, parse_sentences
from prose_tests.server_checks import load_server_checks
from prose_tests.token_checks import load_token_checks
from tests.paths import REPO, SHARED_SPECS
from tests.specs.allowances.support import checks_of
from tests.specs.scenarios.test_supplementary import all_scenarios, rule_ids

ALLOWANCES = load_allowances()
REFERENCE = SHARED_SPECS / "reference"
#: The text a bare anchor names.
SPEC_TEXT = "change-streams.md"
#: The reference texts an allowance may cite (and must not copy).
REFERENCE_TEXTS = (
    SPEC_TEXT,
    "mongodb-server-change-streams-overview.md",
    "resume-tokens-and-startAfter.txt",
    "unified-test-format.md",
)


def _proof(allowance: Allowance) -> Any:
    path, name = allowance.proof.split("::")
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    return getattr(module, name, None)


def _reference(name: str) -> str:
    path = REFERENCE / name
    if not path.is_file():
        pytest.skip(f"reference text {name} not found at {REFERENCE}")
    return path.read_text(encoding="utf-8")


def test_the_registry_is_not_empty_and_every_side_has_allowances():
    assert {a.side for a in ALLOWANCES} == {"driver", "server"}


@pytest.mark.parametrize("allowance", ALLOWANCES, ids=lambda a: a.id)
def test_each_allowance_is_applied_by_its_proof_under_its_id_and_rules(allowance: Allowance):
    table = _proof(allowance)
    assert isinstance(table, dict), f"{allowance.where}: {allowance.proof} is not a table of the test module"
    assert allowance.id in table, f"{allowance.where}: not in {allowance.proof}"
    rules, variation = table[allowance.id]
    assert set(rules) == set(allowance.rules), f"{allowance.where}: the table says {rules}"
    assert callable(variation)


def test_every_allowance_a_table_applies_is_listed():
    tables: dict[str, set[str]] = {}
    for allowance in ALLOWANCES:
        tables.setdefault(allowance.proof, set()).add(allowance.id)
    for proof, listed in tables.items():
        table = _proof(next(a for a in ALLOWANCES if a.proof == proof))
        assert set(table) == listed, f"{proof}: applied but not listed: {sorted(set(table) - listed)}"


def test_an_allowance_names_only_catalogued_rules_that_some_test_checks():
    catalogued = {rule.id for catalogue in load_catalogues() for rule in catalogue.rules}
    checked = {rule for test in all_scenarios() for rule in rule_ids(test)}
    checked |= {rule for entry in load_mapping().entries for rule in entry.checks}
    checked |= {
        rule for check in load_server_checks() + load_token_checks() for rule in rules_from_description(check.name)
    }
    for allowance in ALLOWANCES:
        assert set(allowance.rules) <= catalogued, f"{allowance.where}: {sorted(set(allowance.rules) - catalogued)}"
        unchecked = sorted(set(allowance.rules) - checked)
        assert not unchecked, f"{allowance.where}: nothing checks {unchecked}"


def test_an_allowance_proves_checks_that_a_breakage_proves_too():
    """An allowance is the second proof of a check: the first, a breakage it catches, comes first."""
    broken = {rule for breakage in load_breakages() for rule in breakage.rules}
    for allowance in ALLOWANCES:
        assert set(allowance.rules) <= broken, f"{allowance.where}: no breakage proves {set(allowance.rules) - broken}"


@pytest.mark.parametrize("allowance", ALLOWANCES, ids=lambda a: a.id)
def test_each_anchor_is_a_sentence_of_its_reference_text(allowance: Allowance):
    for anchor in allowance.anchors:
        file, key = split_anchor(anchor, SPEC_TEXT)
        keys = {sentence.key for sentence in parse_sentences(_reference(file))}
        assert key in keys, f"{allowance.where}: {anchor} is not a sentence of {file}"


@pytest.mark.parametrize("allowance", [a for a in ALLOWANCES if a.rejected_by], ids=lambda a: a.id)
def test_each_rejecting_check_exists_and_checks_a_rule_of_the_allowance(allowance: Allowance):
    for rejection in allowance.rejected_by:
        owners = [rule for rule in allowance.rules if rejection.test in {t.test_id for t in checks_of(rule)}]
        assert owners, f"{allowance.where}: {rejection.test} is no check of {', '.join(allowance.rules)}"


def test_the_allowances_copy_no_sentence_of_the_reference_texts():
    """Licence: paraphrases only; no run of eight words of a reference sentence appears in the allowances."""
    folder = REPO / "specs" / "coverage" / "allowances"
    ours = " ".join(normalise(" ".join(p.read_text() for p in sorted(folder.glob("*.yml")))).split())
    for name in REFERENCE_TEXTS:
        for sentence in parse_sentences(_reference(name)):
            words = normalise(sentence.text).split()
            for start in range(max(0, len(words) - 7)):
                assert " ".join(words[start : start + 8]) not in ours, f"{name} line {sentence.line}"
