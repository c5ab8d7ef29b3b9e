"""Applying a permitted variation and showing the checks still pass (the proofs of specs/coverage/allowances/).

An allowance proof is the mirror of a breakage proof. The breakage's test patches pymongo or SecantusDB and
asserts that the rule's checks fail; an allowance's test patches them into something else the references
permit and asserts that every check of its rules still passes, after asserting that the variation really
happened in at least one check of each rule (a variation that never fired proves nothing, and a test that
cannot fail is a defect).

The checks of a rule are all the tests that check it, whatever their kind: the supplementary scenarios that
name it, the upstream unified and legacy tests the mapping says check it, and the prose and code-defined
checks (server checks, token checks) that name it or that the mapping names. Each runs from a clean server,
unvaried first: a check that does not pass unvaried (a known deviation of pymongo or SecantusDB, a test for
another topology) tells nothing about the variation and is left out. The checks an allowance lists as
``rejected_by`` (a finding against the check) must fail under the variation, and only those.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

import prose_tests
from harness.core.rules import Allowance
from harness.engine.run import HarnessRun, RunOptions
from harness.engine.run_settings import RunSettings
from harness.formats.loaders import load_paths
from harness.formats.rule_files import load_allowances, load_mapping
from prose_tests.server_checks import load_server_checks
from prose_tests.token_checks import load_token_checks
from tests.paths import SHARED_SPECS
from tests.specs.scenarios.test_driver_upstream import _fresh
from tests.specs.scenarios.test_supplementary import all_scenarios, rule_ids

UPSTREAM = SHARED_SPECS / "upstream"


@dataclass
class Observed:
    """What a variation records each time it fires (``saw``), per check; the proof reads it after each run."""

    seen: list[str] = field(default_factory=list)

    def saw(self, what: str) -> None:
        self.seen.append(what)

    def take(self) -> list[str]:
        found, self.seen = self.seen, []
        return found


#: A variation: patches pymongo or SecantusDB for the length of one test (``monkeypatch``), recording into ``Observed``
#: each time it changes what a conforming pair would otherwise have done.
Variation = Callable[[pytest.MonkeyPatch, Observed], None]


@functools.cache
def upstream_tests() -> tuple[Any, ...]:
    """The upstream unified and legacy tests (none when the shared folder is absent)."""
    paths = [path for folder in ("unified", "legacy") for path in sorted((UPSTREAM / folder).glob("*.yml"))]
    return tuple(load_paths(paths)) if paths else ()


@functools.cache
def code_checks() -> tuple[Any, ...]:
    """The prose checks and the code-defined server and token checks."""
    return (*prose_tests.CHECKS, *load_server_checks(), *load_token_checks())


def _name(test: Any) -> str:
    return getattr(test, "description", None) or getattr(test, "name", "")


def checks_of(rule: str) -> list[Any]:
    """Every test that checks ``rule``: a scenario naming it, or an upstream test or a code check the mapping (or
    its own leading ids) says checks it."""
    mapping = load_mapping()
    found = [test for test in all_scenarios() if rule in rule_ids(test)]
    found += [test for test in (*upstream_tests(), *code_checks()) if rule in mapping.checks(test.test_id, _name(test))]
    assert found, f"no test checks {rule}"
    return found


def allowance(allowance_id: str) -> Allowance:
    (found,) = [a for a in load_allowances() if a.id == allowance_id]
    return found


def _verdict(run: HarnessRun, test: Any) -> Any:
    _fresh(run)
    return run.verdict(test)


@dataclass
class Outcome:
    """One check's verdict under the variation, and what the variation recorded while it ran."""

    verdict: Any
    seen: list[str]


def open_run(driver: str = "pymongo") -> Iterator[HarnessRun]:
    """An embedded run for a module's proofs (a fixture's body): short iteration timeouts, no expected outcomes,
    through ``driver`` (the harness's driver name: pymongo's synchronous API unless told, ``pymongo-async``...)."""
    settings = RunSettings(test_timeout_s=20.0, iteration_timeout_s=2.0)
    with HarnessRun(RunOptions(target="embedded", driver=driver, expected="none", settings=settings)) as run:
        yield run


def assert_checks_accept(
    run: HarnessRun, mp: pytest.MonkeyPatch, allowance_id: str, rules: tuple[str, ...], variation: Variation
) -> dict[str, Outcome]:
    """The proof of one allowance: every check of ``rules`` that passes unvaried still passes (or says its own
    precondition is unmet: skipped) with ``variation`` applied, except exactly the allowance's ``rejected_by``,
    which fail; and for each rule at least one of its checks saw the variation happen and passed (or is a listed
    rejection). The variation is undone (``mp.undo()``) once the checks ran. Returns each check's outcome."""
    entry = allowance(allowance_id)
    assert set(rules) == set(entry.rules), f"{allowance_id}: the table says {rules}, the registry {entry.rules}"
    by_rule = {rule: checks_of(rule) for rule in entry.rules}
    tests = {test.test_id: test for checks in by_rule.values() for test in checks}
    unvaried = {test_id: _verdict(run, test) for test_id, test in tests.items()}
    counted = {test_id for test_id, verdict in unvaried.items() if verdict.outcome == "passed"}
    rejected = {r.test for r in entry.rejected_by}
    assert rejected <= counted, (
        f"{allowance_id}: rejected_by names checks that do not pass unvaried: {rejected - counted}"
    )
    observed = Observed()
    variation(mp, observed)
    outcomes = {}
    for test_id in sorted(counted):
        observed.take()
        verdict = _verdict(run, tests[test_id])
        outcomes[test_id] = Outcome(verdict, observed.take())
    mp.undo()
    # A check may find its own precondition unmet under the variation and say so (prose 14 on an empty first batch,
    # which the README says it cannot run on): skipped is not a rejection. An error is never an answer.
    errors = {
        t: o.verdict.message for t, o in outcomes.items() if o.verdict.outcome not in ("passed", "failed", "skipped")
    }
    assert not errors, f"{allowance_id}: checks errored under the variation: {errors}"
    failing = {t for t, o in outcomes.items() if o.verdict.outcome == "failed"}
    unexpected = {t: outcomes[t].verdict.message for t in failing - rejected}
    assert not unexpected, f"{allowance_id}: checks reject the permitted variation: {unexpected}"
    fixed = rejected - failing
    assert not fixed, f"{allowance_id}: listed in rejected_by but now accept the variation (remove them): {fixed}"
    for rule, checks in by_rule.items():
        saw = [
            t.test_id
            for t in checks
            if t.test_id in outcomes
            and outcomes[t.test_id].seen
            and (outcomes[t.test_id].verdict.outcome == "passed" or t.test_id in rejected)
        ]
        assert saw, f"{allowance_id}: no check of {rule} saw the variation happen and judged it"
    return outcomes
