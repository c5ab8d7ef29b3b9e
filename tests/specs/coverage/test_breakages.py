"""The breakage registry (specs/coverage/breakages/) says exactly what the harness's own tests prove.

``harness coverage`` shows, for each rule, the breakages that prove its checks. Each entry names its proof
(``PATH::NAME``): the table of a test module that applies it under its id, or the one test function that does.
These tests hold the registry to the tables both ways (every entry is applied, every applied breakage is
listed), and hold each entry's rules to what its proof asserts and to what some test checks.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from harness.core.rules import Breakage, rules_from_description
from harness.formats.rule_files import load_breakages, load_catalogues, load_mapping
from prose_tests.server_checks import load_server_checks
from prose_tests.token_checks import load_token_checks
from tests.specs.scenarios.test_supplementary import all_scenarios, rule_ids

BREAKAGES = load_breakages()


def _proof(breakage: Breakage) -> tuple[str, Any]:
    path, name = breakage.proof.split("::")
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    return name, getattr(module, name, None)


def _table_ids(table: dict[str, Any]) -> set[str]:
    """A table's breakage ids: its keys, or, for a table of check id -> mutants, the mutants' function names."""
    if table and all(isinstance(value, list) for value in table.values()):
        return {mutant.__name__ for mutants in table.values() for mutant in mutants}
    return set(table)


def test_the_registry_is_not_empty_and_every_side_is_proven():
    assert {b.side for b in BREAKAGES} == {"driver", "server"}


@pytest.mark.parametrize("breakage", BREAKAGES, ids=lambda b: b.id)
def test_each_breakage_is_applied_by_its_proof(breakage: Breakage):
    name, proof = _proof(breakage)
    assert proof is not None, f"{breakage.where}: {breakage.proof} does not exist"
    if isinstance(proof, dict):
        assert breakage.id in _table_ids(proof), f"{breakage.where}: not in {breakage.proof}"
        entry = proof.get(breakage.id)
        if isinstance(entry, tuple) and isinstance(entry[0], str) and entry[0].startswith(("CS-", "SRV-")):
            assert set(entry[0].split(", ")) == set(breakage.rules), f"{breakage.where}: the table says {entry[0]}"
    else:
        assert callable(proof) and name.startswith("test_"), f"{breakage.where}: {breakage.proof} is not a test"


def test_every_breakage_a_table_applies_is_listed():
    tables: dict[str, set[str]] = {}
    for breakage in BREAKAGES:
        tables.setdefault(breakage.proof, set()).add(breakage.id)
    for proof, listed in tables.items():
        _, table = _proof(next(b for b in BREAKAGES if b.proof == proof))
        if isinstance(table, dict):
            assert _table_ids(table) == listed, f"{proof}: applied but not listed: {sorted(_table_ids(table) - listed)}"


def test_a_breakage_claims_only_rules_that_some_test_checks():
    """A breakage proves a check only of a rule some test checks: a scenario naming it, or a mapped test."""
    catalogued = {rule.id for catalogue in load_catalogues() for rule in catalogue.rules}
    checked = {rule for test in all_scenarios() for rule in rule_ids(test)}
    checked |= {rule for entry in load_mapping().entries for rule in entry.checks}
    checks = load_server_checks() + load_token_checks()
    checked |= {rule for check in checks for rule in rules_from_description(check.name)}
    for breakage in BREAKAGES:
        assert set(breakage.rules) <= catalogued, f"{breakage.where}: {sorted(set(breakage.rules) - catalogued)}"
        unchecked = sorted(set(breakage.rules) - checked)
        assert not unchecked, f"{breakage.where}: nothing checks {unchecked}"


def test_every_rule_a_scenario_names_has_a_breakage():
    """No rule is claimed by a scenario unless some broken driver or server is shown to fail it."""
    proven = {rule for breakage in BREAKAGES for rule in breakage.rules}
    named = {rule for test in all_scenarios() for rule in rule_ids(test)}
    assert named <= proven, sorted(named - proven)
