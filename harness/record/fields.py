"""How a record's fields are described: a name, a type, whether it is always written, whether it may be null.

The description is data, so each reader derives what it needs from it: the writer's test checks written
records against it (:func:`problems`), the report builds its Spark schema from it (``reports/schema.py``), and
docs/record.md lists it. Types are JSON's, with numbers split into ``long`` and ``double``; ``json`` is any
JSON value whose shape is the writer's business (the report keeps it as JSON text).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

STRING, LONG, DOUBLE, BOOLEAN, JSON, LIST, MAP, STRUCT = (
    "string",
    "long",
    "double",
    "boolean",
    "json",
    "list",
    "map",
    "struct",
)


@dataclass(frozen=True)
class Type:
    """A field's type: a scalar, a list of ``item``, a map from text to ``item``, or a struct of ``fields``
    (``open``: keys not described may appear, such as a target's own details)."""

    kind: str
    item: Type | None = None
    fields: tuple[Field, ...] = ()
    open: bool = False

    def field(self, name: str) -> Field:
        return next(f for f in self.fields if f.name == name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)


@dataclass(frozen=True)
class Field:
    """One field of a struct.

    ``required``: every record written now has it (a reader still meets records written before it existed);
    ``nullable``: its value may be null; ``reported``: ``harness report`` reads it (its Spark schema declares
    it); ``per_test``: the test's own, not the run's provenance that every record of a run repeats.
    """

    name: str
    type: Type
    doc: str
    required: bool = True
    nullable: bool = False
    reported: bool = False
    per_test: bool = False


string, long, double, boolean, json_value = Type(STRING), Type(LONG), Type(DOUBLE), Type(BOOLEAN), Type(JSON)


def list_of(item: Type) -> Type:
    return Type(LIST, item)


def map_of(item: Type) -> Type:
    return Type(MAP, item)


def struct(*fields: Field, open: bool = False) -> Type:
    return Type(STRUCT, fields=fields, open=open)


def _scalar_ok(kind: str, value: Any) -> bool:
    if kind == STRING:
        return isinstance(value, str)
    if kind == LONG:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == DOUBLE:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == BOOLEAN:
        return isinstance(value, bool)
    return kind == JSON


def problems(value: Any, kind: Type, where: str = "record") -> list[str]:
    """What in ``value`` does not match ``kind``: each problem names its path (``record.target.version: ...``)."""
    if kind.kind == LIST:
        if not isinstance(value, list):
            return [f"{where}: expected a list, got {type(value).__name__}"]
        assert kind.item is not None
        return [p for index, item in enumerate(value) for p in problems(item, kind.item, f"{where}[{index}]")]
    if kind.kind == MAP:
        if not isinstance(value, dict):
            return [f"{where}: expected an object, got {type(value).__name__}"]
        assert kind.item is not None
        return [p for key, item in value.items() for p in problems(item, kind.item, f"{where}.{key}")]
    if kind.kind == STRUCT:
        if not isinstance(value, dict):
            return [f"{where}: expected an object, got {type(value).__name__}"]
        return list(_struct_problems(value, kind, where))
    return [] if _scalar_ok(kind.kind, value) else [f"{where}: expected {kind.kind}, got {type(value).__name__}"]


def _struct_problems(value: dict[str, Any], kind: Type, where: str) -> Iterator[str]:
    described = set(kind.names)
    if not kind.open:
        for name in value:
            if name not in described:
                yield f"{where}.{name}: not a field of the record schema"
    for f in kind.fields:
        path = f"{where}.{f.name}"
        if f.name not in value:
            if f.required:
                yield f"{path}: missing"
        elif value[f.name] is None:
            if not f.nullable:
                yield f"{path}: null, and the field is not nullable"
        else:
            yield from problems(value[f.name], f.type, path)
