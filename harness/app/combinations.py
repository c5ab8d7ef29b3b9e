"""The dimensions the rules range over (``specs/coverage/dimensions.yml``), and the one form a test states its
combination in.

A rule is written once but holds across many situations: each option of ``watch()``, each kind of error and the
command it strikes, each source of the cached token. A check run in one situation leaves a break on another path
unseen. The table lists each dimension's values (anchored to the reference sentences that name them, and saying
how a scenario reaches them or why none can), and which rules range over it. Two readers use it: the generator
(:mod:`harness.app.combinations_files`), which writes a scenario per combination, and ``harness coverage``
(:mod:`harness.app.coverage_map`), which counts, per rule, the values and pairs of values its checks reach.

A test says which combination it checks at the end of its description, in one form both sides share:
``"CS-RESUME-STEPS: ... [watch-options=collation, error-kinds=getMore-resumable-label]"``
(:func:`describe` writes it, :func:`combination_of` reads it back). A hand-written scenario may end its
description the same way and is then counted too.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.core.project_data import project_data
from harness.core.rules import RULE_ID
from harness.formats.data_yaml import load_data_yaml

#: The table, as installed.
DIMENSIONS_FILE = project_data("coverage", "dimensions.yml")

_NAME = r"[a-z][a-z0-9-]*"
_VALUE = r"[A-Za-z0-9][A-Za-z0-9-]*"
_PAIR = rf"{_NAME}={_VALUE}"
#: The combination at the end of a description: `` [dimension=value, dimension=value]``.
_COMBINATION = re.compile(rf"\s\[(?P<body>{_PAIR}(?:, {_PAIR})*)\]\s*$")
_VALUE_ID = re.compile(rf"^{_VALUE}$")
_DIMENSION_ID = re.compile(rf"^{_NAME}$")

_DIMENSION_KEYS = {"id", "what", "rules", "values"}
_RANGE_KEYS = {"rule", "only", "asserts", "left"}
_VALUE_KEYS = {
    "id",
    "tags",
    "anchors",
    "cue",
    "unreachable",
    "requires",
    "sent",
    # how a scenario reaches the value (read by the generator only)
    "watch",
    "stage",
    "command",
    "cursor",
    "getMore",
    "scope",
    "flow",
    "failPoint",
    "times",
    "client",
    "raises",
}
_PAIRS_KEYS = {"rule", "dimensions", "left"}


class DimensionError(Exception):
    """The table cannot be used; the message names the file and the entry."""


def combination_of(description: str) -> dict[str, str]:
    """The combination a description ends with, dimension -> value id (``{}`` when it states none)."""
    found = _COMBINATION.search(description or "")
    if not found:
        return {}
    return dict(part.split("=", 1) for part in found.group("body").split(", "))


def describe(text: str, combination: Mapping[str, str]) -> str:
    """``text`` ending with ``combination`` in the form :func:`combination_of` reads."""
    return f"{text} [{', '.join(f'{name}={value}' for name, value in combination.items())}]"


@dataclass(frozen=True)
class Value:
    """One value of a dimension; ``unreachable`` says why no run here produces it ("" when one can)."""

    id: str
    anchors: tuple[str, ...]
    cue: str
    tags: frozenset[str] = frozenset()
    unreachable: str = ""
    sent: str = ""
    #: The rest of the entry: how a scenario reaches the value (``watch``, ``failPoint``...), for the generator.
    data: Mapping[str, Any] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)


@dataclass(frozen=True)
class RuleRange:
    """A rule whose sentence ranges over a dimension, over the values carrying every tag of ``only``."""

    rule: str
    asserts: str
    only: frozenset[str] = frozenset()
    #: Value id -> why no generated check of this rule reaches that value although a run could produce it.
    left: Mapping[str, str] = field(default_factory=dict)

    def covers(self, value: Value) -> bool:
        return self.only <= value.tags


@dataclass(frozen=True)
class Dimension:
    id: str
    what: str
    values: tuple[Value, ...]
    rules: tuple[RuleRange, ...]

    def value(self, value_id: str) -> Value | None:
        return next((v for v in self.values if v.id == value_id), None)

    def range_of(self, rule: str) -> RuleRange | None:
        return next((r for r in self.rules if r.rule == rule), None)

    def values_of(self, rule: str) -> list[Value]:
        """The values ``rule`` ranges over here (reachable or not); [] when it does not range over this dimension."""
        found = self.range_of(rule)
        return [v for v in self.values if found.covers(v)] if found is not None else []


@dataclass(frozen=True)
class PairPlan:
    """Pairs of values of two dimensions a rule is to be checked across (``pairs:`` in the table).

    ``dimensions`` maps each of the two dimensions to the tags its values must carry (none: the rule's own range
    there); ``left`` lists pairs not checked, each ``(value ids a pair holds, why)``."""

    rule: str
    dimensions: tuple[tuple[str, frozenset[str]], tuple[str, frozenset[str]]]
    left: tuple[tuple[frozenset[str], str], ...] = ()

    def why_left(self, pair: Iterable[str]) -> str:
        held = set(pair)
        return next((why for values, why in self.left if values <= held), "")


@dataclass(frozen=True)
class DimensionTable:
    dimensions: tuple[Dimension, ...]
    pairs: tuple[PairPlan, ...] = ()
    path: Path = DIMENSIONS_FILE

    def dimension(self, dimension_id: str) -> Dimension | None:
        return next((d for d in self.dimensions if d.id == dimension_id), None)

    def ranged_rules(self) -> list[str]:
        """Every rule that ranges over some dimension, in table order."""
        return list(dict.fromkeys(r.rule for d in self.dimensions for r in d.rules))

    def anchors(self) -> list[tuple[str, str]]:
        """(where, anchor) of every value's anchors, for ``harness coverage`` to verify."""
        return [(f"{self.path}: {d.id}/{v.id}", a) for d in self.dimensions for v in d.values for a in v.anchors]

    def pair_values(self, plan: PairPlan) -> tuple[list[Value], list[Value]]:
        """The reachable values of each of a plan's two dimensions."""
        sides = []
        for dimension_id, tags in plan.dimensions:
            dimension = self.dimension(dimension_id)
            if dimension is None:
                sides.append([])
                continue
            ranged = dimension.values_of(plan.rule) if not tags else [v for v in dimension.values if tags <= v.tags]
            sides.append([v for v in ranged if not v.unreachable])
        return sides[0], sides[1]

    def rules_checked(self, combination: Mapping[str, str]) -> list[str]:
        """The rules a check of ``combination`` checks: those ranging over one of its dimensions, whose range holds
        the combination's value on every dimension of it they range over, and that leave none of those values."""
        found = []
        for rule in self.ranged_rules():
            ranges = [(d, d.range_of(rule)) for d in self.dimensions if d.id in combination]
            ranges = [(d, r) for d, r in ranges if r is not None]
            if not ranges:
                continue
            ok = True
            for dimension, ranged in ranges:
                value = dimension.value(combination[dimension.id])
                if value is None or not ranged.covers(value) or value.id in ranged.left:
                    ok = False
            if ok:
                found.append(rule)
        return found

    def problems(self, description: str, where: str) -> list[str]:
        """What is wrong with a description's combination: unknown dimensions or values, unreachable values."""
        out = []
        for dimension_id, value_id in combination_of(description).items():
            dimension = self.dimension(dimension_id)
            if dimension is None:
                out.append(f"{where}: names dimension {dimension_id}, which {self.path.name} does not have")
            elif dimension.value(value_id) is None:
                out.append(f"{where}: names {dimension_id}={value_id}, which {self.path.name} does not have")
        return out


def load_dimensions(path: Path | None = None) -> DimensionTable:
    """The table; a malformed entry is a :class:`DimensionError` naming the file and the entry."""
    path = path or DIMENSIONS_FILE
    try:
        data = load_data_yaml(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DimensionError(f"{path}: cannot read: {exc}") from exc
    except yaml.YAMLError as exc:
        raise DimensionError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("dimensions"), list):
        raise DimensionError(f"{path}: expected a mapping with a 'dimensions' list")
    unknown = sorted(set(data) - {"dimensions", "pairs"})
    if unknown:
        raise DimensionError(f"{path}: unknown top-level keys {', '.join(unknown)}")
    dimensions = tuple(_dimension(entry, f"{path}: dimension {n}") for n, entry in enumerate(data["dimensions"], 1))
    seen: set[str] = set()
    for dimension in dimensions:
        if dimension.id in seen:
            raise DimensionError(f"{path}: dimension {dimension.id} is listed twice")
        seen.add(dimension.id)
    table = DimensionTable(dimensions, path=path)
    pairs = tuple(_pairs(entry, table, f"{path}: pairs {n}") for n, entry in enumerate(data.get("pairs") or [], 1))
    return DimensionTable(dimensions, pairs, path)


def _keys(entry: Any, known: set[str], where: str) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise DimensionError(f"{where}: each entry is a mapping")
    unknown = sorted(set(entry) - known)
    if unknown:
        raise DimensionError(f"{where}: unknown keys {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    return entry


def _text(entry: Mapping[str, Any], key: str, where: str, required: bool = True) -> str:
    value = entry.get(key, "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise DimensionError(f"{where}: '{key}' is {'required ' if required else ''}text")
    return " ".join(value.split())


def _tags(entry: Mapping[str, Any], key: str, where: str) -> frozenset[str]:
    value = entry.get(key) or []
    if not isinstance(value, list) or not all(isinstance(t, str) and t for t in value):
        raise DimensionError(f"{where}: '{key}' is a list of tags")
    return frozenset(value)


def _dimension(entry: Any, where: str) -> Dimension:
    entry = _keys(entry, _DIMENSION_KEYS, where)
    dimension_id = _text(entry, "id", where)
    if not _DIMENSION_ID.match(dimension_id):
        raise DimensionError(f"{where}: a dimension id is lower-case words joined by '-', got {dimension_id!r}")
    where = f"{where} ({dimension_id})"
    values = []
    for number, item in enumerate(entry.get("values") or [], 1):
        at = f"{where}: value {number}"
        item = _keys(item, _VALUE_KEYS, at)
        value_id = _text(item, "id", at)
        if not _VALUE_ID.match(value_id):
            raise DimensionError(f"{at}: a value id is letters, digits and '-', got {value_id!r}")
        anchors = item.get("anchors")
        if not isinstance(anchors, list) or not anchors or not all(isinstance(a, str) and a for a in anchors):
            raise DimensionError(f"{at} ({value_id}): 'anchors' is a non-empty list ('HASH' or 'FILE:HASH')")
        values.append(
            Value(
                id=value_id,
                anchors=tuple(anchors),
                cue=_text(item, "cue", f"{at} ({value_id})"),
                tags=_tags(item, "tags", at),
                unreachable=_text(item, "unreachable", at, required=False),
                sent=_text(item, "sent", at, required=False),
                data={k: v for k, v in item.items() if k not in ("id", "anchors", "cue", "tags", "unreachable")},
            )
        )
    if not values or len({v.id for v in values}) != len(values):
        raise DimensionError(f"{where}: 'values' is a non-empty list of distinct ids")
    rules = []
    for number, item in enumerate(entry.get("rules") or [], 1):
        at = f"{where}: rule {number}"
        item = _keys(item, _RANGE_KEYS, at)
        rule = _text(item, "rule", at)
        if not RULE_ID.match(rule):
            raise DimensionError(f"{at}: {rule!r} is not a rule id")
        left = item.get("left") or {}
        if not isinstance(left, dict) or not all(isinstance(v, str) and v.strip() for v in left.values()):
            raise DimensionError(f"{at} ({rule}): 'left' maps value ids to why")
        unknown = sorted(set(left) - {v.id for v in values})
        if unknown:
            raise DimensionError(f"{at} ({rule}): 'left' names values this dimension lacks: {', '.join(unknown)}")
        rules.append(
            RuleRange(
                rule=rule,
                asserts=_text(item, "asserts", f"{at} ({rule})"),
                only=_tags(item, "only", at),
                left={k: " ".join(v.split()) for k, v in left.items()},
            )
        )
    return Dimension(dimension_id, _text(entry, "what", where), tuple(values), tuple(rules))


def _pairs(entry: Any, table: DimensionTable, where: str) -> PairPlan:
    entry = _keys(entry, _PAIRS_KEYS, where)
    rule = _text(entry, "rule", where)
    dims = entry.get("dimensions")
    if not isinstance(dims, dict) or len(dims) != 2:
        raise DimensionError(f"{where} ({rule}): 'dimensions' maps exactly two dimensions to tags ([] for the range)")
    sides = []
    for dimension_id, tags in dims.items():
        if table.dimension(dimension_id) is None:
            raise DimensionError(f"{where} ({rule}): no dimension {dimension_id}")
        sides.append((dimension_id, _tags({"tags": tags}, "tags", where)))
    left = []
    known = {v.id for d in table.dimensions for v in d.values}
    for number, item in enumerate(entry.get("left") or [], 1):
        at = f"{where} ({rule}): left {number}"
        item = _keys(item, {"values", "why"}, at)
        values = _tags(item, "values", at)
        if not values or not values <= known:
            raise DimensionError(f"{at}: 'values' is a non-empty list of value ids of the table")
        left.append((values, _text(item, "why", at)))
    return PairPlan(rule, (sides[0], sides[1]), tuple(left))


def all_pairs(table: DimensionTable, plan: PairPlan) -> list[tuple[str, str]]:
    """Every reachable pair of a plan, as (value of the first dimension, value of the second)."""
    first, second = table.pair_values(plan)
    return [(a.id, b.id) for a, b in itertools.product(first, second)]
