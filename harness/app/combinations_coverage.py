"""How much of each dimension a rule's checks reach: the ``covers:`` of ``harness coverage``.

A rule checked in one situation is not checked in the others its sentence ranges over. For each rule of the
dimension table (:mod:`harness.app.combinations`), this counts the values of each dimension it ranges over that some
test checking the rule states in its combination (the end of its description), out of the values a run here can
produce, and the same for the pairs of values the table plans for it. What is not reached is listed with why: the
value's ``unreachable`` (no run here produces it), the rule's ``left`` (a run could, but no check of this rule
tells it apart), or nothing (a gap to work on).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.app.combinations import DimensionTable, all_pairs, combination_of


@dataclass(frozen=True)
class DimensionCoverage:
    """One dimension of one rule: the reachable values in its range, those its checks reach, and why not the rest."""

    dimension: str
    reachable: tuple[str, ...]
    covered: tuple[str, ...]
    #: Value id -> why no check of the rule reaches it although a run could ("" when no reason is written).
    missing: Mapping[str, str] = field(default_factory=dict)
    #: Value id -> why no run here produces it.
    unreachable: Mapping[str, str] = field(default_factory=dict)

    def line(self) -> str:
        """``watch-options 20/20 (8 unreachable here)``: reached of reachable, and how many no run here produces."""
        unreachable = f" ({len(self.unreachable)} unreachable here)" if self.unreachable else ""
        return f"{self.dimension} {len(self.covered)}/{len(self.reachable)}{unreachable}"


@dataclass(frozen=True)
class PairCoverage:
    """The pairs a rule is planned across: how many of the reachable ones its checks reach, and why not the rest."""

    dimensions: tuple[str, str]
    total: int
    covered: int
    #: Why -> how many of the pairs not reached it explains ("" for pairs no reason explains).
    left: Mapping[str, int] = field(default_factory=dict)

    def line(self) -> str:
        return f"{' x '.join(self.dimensions)} pairs {self.covered}/{self.total}"


@dataclass(frozen=True)
class RuleCombinations:
    dimensions: tuple[DimensionCoverage, ...]
    pairs: tuple[PairCoverage, ...] = ()

    def summary(self) -> str:
        """``watch-options 20/20 (8 unreachable here); watch-options x error-kinds pairs 80/100``"""
        text = ", ".join(d.line() for d in self.dimensions)
        pairs = ", ".join(p.line() for p in self.pairs)
        return f"{text}; {pairs}" if pairs else text

    def gaps(self) -> list[str]:
        """What is not reached, each with its reason: values, then pairs."""
        out = []
        for d in self.dimensions:
            out += [f"{d.dimension}={v}: {why or 'no check yet'}" for v, why in d.missing.items()]
        for p in self.pairs:
            out += [f"{' x '.join(p.dimensions)}: {n} pair(s): {why or 'no check yet'}" for why, n in p.left.items()]
        return out

    def as_json(self) -> dict[str, Any]:
        return {
            "dimensions": {
                d.dimension: {
                    "reachable": list(d.reachable),
                    "covered": list(d.covered),
                    "missing": dict(d.missing),
                    "unreachable": dict(d.unreachable),
                }
                for d in self.dimensions
            },
            "pairs": [
                {"dimensions": list(p.dimensions), "total": p.total, "covered": p.covered, "left": dict(p.left)}
                for p in self.pairs
            ],
        }


def rule_combinations(
    table: DimensionTable, checked_by: Mapping[str, Iterable[str]], descriptions: Mapping[str, str]
) -> dict[str, RuleCombinations]:
    """Per rule of the table, what its checks reach; ``checked_by`` maps a rule to the ids of the tests that check
    it, ``descriptions`` a test id to its description (a test not loaded states no combination)."""
    combinations = {test: combination_of(text) for test, text in descriptions.items()}
    out = {}
    for rule in table.ranged_rules():
        stated = [combinations.get(test, {}) for test in checked_by.get(rule, ())]
        stated = [c for c in stated if c]
        dims = []
        for dimension in table.dimensions:
            ranged = dimension.range_of(rule)
            if ranged is None:
                continue
            values = dimension.values_of(rule)
            reached = {c[dimension.id] for c in stated if dimension.id in c}
            reachable = tuple(v.id for v in values if not v.unreachable)
            dims.append(
                DimensionCoverage(
                    dimension=dimension.id,
                    reachable=reachable,
                    covered=tuple(v for v in reachable if v in reached),
                    missing={v: ranged.left.get(v, "") for v in reachable if v not in reached},
                    unreachable={v.id: v.unreachable for v in values if v.unreachable},
                )
            )
        pairs = []
        for plan in (p for p in table.pairs if p.rule == rule):
            (first, _), (second, _) = plan.dimensions
            reached_pairs = {(c[first], c[second]) for c in stated if first in c and second in c}
            every = all_pairs(table, plan)
            left: dict[str, int] = {}
            for pair in every:
                if pair not in reached_pairs:
                    why = plan.why_left(pair)
                    left[why] = left.get(why, 0) + 1
            pairs.append(PairCoverage((first, second), len(every), sum(1 for p in every if p in reached_pairs), left))
        out[rule] = RuleCombinations(tuple(dims), tuple(pairs))
    return out
