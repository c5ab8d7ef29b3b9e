"""The record's description in words: the tables of docs/record.md, made from the description itself.

``tests/harness/record/test_record_schema.py`` holds docs/record.md to these tables, so the page cannot drift
from what the writer writes and the report reads.
"""

from __future__ import annotations

from harness.record.fields import LIST, MAP, STRUCT, Type


def type_name(kind: Type) -> str:
    if kind.kind == LIST:
        assert kind.item is not None
        return f"list of {type_name(kind.item)}"
    if kind.kind == MAP:
        assert kind.item is not None
        return f"map of {type_name(kind.item)}"
    if kind.kind == STRUCT:
        return "object (more keys allowed)" if kind.open else "object"
    return kind.kind


def field_rows(kind: Type, prefix: str = "") -> list[str]:
    """One Markdown table row per field, a struct's fields after it (``target.version``)."""
    rows = []
    for field in kind.fields:
        flags = ["always" if field.required else "when set"]
        if field.nullable:
            flags.append("may be null")
        if field.reported:
            flags.append("report")
        rows.append(f"| `{prefix}{field.name}` | {type_name(field.type)} | {', '.join(flags)} | {field.doc} |")
        if field.type.kind == STRUCT:
            rows += field_rows(field.type, f"{prefix}{field.name}.")
    return rows


def field_table(kind: Type) -> str:
    """The Markdown table of a struct's fields."""
    head = ["| field | type | written | meaning |", "| --- | --- | --- | --- |"]
    return "\n".join(head + field_rows(kind)) + "\n"
