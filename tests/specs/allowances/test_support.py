"""The allowance proofs can fail: a variation that never fires, a rejection not listed, a listed rejection that no
longer happens, each fails ``assert_checks_accept`` (tests/specs/allowances/support.py).

Without these, a proof could pass by never applying its variation, or by hiding a check that rejects it.
The allowance used, an unknown operationType shown as "unknown", has one check, so each case is quick.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from harness.core.rules import Rejection
from harness.engine.run import HarnessRun
from tests.specs.allowances import support
from tests.specs.allowances.test_driver_allowances import ALLOWED_DRIVER, unknown_operation_type_named_unknown

ALLOWANCE = "unknown operationType represented as unknown"
RULES, _ = ALLOWED_DRIVER[ALLOWANCE]


@pytest.fixture(scope="module")
def run() -> Iterator[HarnessRun]:
    yield from support.open_run()


def _registry_says(mp: pytest.MonkeyPatch, **changes: object) -> None:
    entry = dataclasses.replace(support.allowance(ALLOWANCE), **changes)
    mp.setattr(support, "allowance", lambda allowance_id: entry)


def test_a_variation_that_never_fires_proves_nothing(run, monkeypatch):
    _registry_says(monkeypatch, rejected_by=())
    with pytest.raises(AssertionError, match="no check of CS-EVENT-UNKNOWNTYPE saw the variation happen"):
        support.assert_checks_accept(run, monkeypatch, ALLOWANCE, RULES, lambda mp, observed: None)


def test_a_check_that_rejects_the_variation_unlisted_fails_the_proof(run, monkeypatch):
    _registry_says(monkeypatch, rejected_by=())
    with pytest.raises(AssertionError, match="checks reject the permitted variation"):
        support.assert_checks_accept(run, monkeypatch, ALLOWANCE, RULES, unknown_operation_type_named_unknown)


def test_a_listed_rejection_that_no_longer_happens_fails_the_proof(run, monkeypatch):
    """The check is fixed and stops rejecting (here: made to pass whatever it sees), so its entry must go."""
    (listed,) = support.allowance(ALLOWANCE).rejected_by
    _registry_says(monkeypatch, rejected_by=(Rejection(listed.test, listed.why),))

    def variation_and_a_fixed_check(mp: pytest.MonkeyPatch, observed: support.Observed) -> None:
        unknown_operation_type_named_unknown(mp, observed)
        mp.setattr(support, "_verdict", _always_passed(support._verdict))

    with pytest.raises(AssertionError, match="now accept the variation"):
        support.assert_checks_accept(run, monkeypatch, ALLOWANCE, RULES, variation_and_a_fixed_check)


def _always_passed(verdict):
    """The check, fixed: whatever it saw, it passes."""

    def fixed(run: HarnessRun, test: object) -> object:
        found = verdict(run, test)
        return dataclasses.replace(found, outcome="passed", message="")

    return fixed
