"""HTML building blocks: a table from rows, a section, the page around them.

The page is one file with its style inline and no scripts, fonts, images or
links to fetch, so it opens the same from a CI artefact store, an e-mail or
a laptop on a plane. Every value is escaped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from html import escape
from typing import Any

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#212121;margin:0;background:#fafafa}
header{background:#263238;color:#fff;padding:18px 28px}header h1{margin:0 0 4px;font-size:22px}
header p{margin:0;color:#cfd8dc}nav{padding:8px 28px;background:#eceff1;position:sticky;top:0;z-index:1}
nav a{margin-right:14px;color:#37474f;text-decoration:none;font-size:13px}
main{padding:8px 28px 40px}section{scroll-margin-top:44px;background:#fff;border:1px solid #e0e0e0;border-radius:6px;
margin:18px 0;padding:6px 18px 14px}h2{font-size:17px;margin:12px 0 8px}.note{color:#616161;font-size:12.5px}
.summary{display:flex;gap:14px;flex-wrap:wrap;margin:14px 0}.figure{background:#fff;border:1px solid #e0e0e0;
border-radius:6px;padding:10px 16px;min-width:110px}.figure b{display:block;font-size:22px}
.figure span{color:#616161;font-size:12px}.scroll{overflow-x:auto}
table{border-collapse:collapse;font-size:12.5px;margin:6px 0}th,td{border-bottom:1px solid #eeeeee;
padding:3px 8px;text-align:left;vertical-align:top}th{background:#f5f5f5}
td.num{text-align:right;font-variant-numeric:tabular-nums}td.msg{font-family:ui-monospace,monospace;
font-size:11.5px;max-width:720px;white-space:pre-wrap;word-break:break-word}
.st-pass{color:#2e7d32}.st-fail,.ch-regression,.ch-newly-failing{color:#c62828;font-weight:600}
.st-flaky,.cl-flaky,.ch-newly-flaky{color:#ef6c00;font-weight:600}.ch-fix,.ch-newly-passing{color:#2e7d32;font-weight:600}
.empty{color:#757575;font-style:italic}
.ca-target{color:#6a1b9a;font-weight:600}.ca-driver{color:#1565c0;font-weight:600}.ca-pair{color:#ad1457;font-weight:600}
.ca-everywhere{color:#c62828;font-weight:600}.ca-undecided{color:#757575;font-style:italic}
"""


#: Columns whose value also names a style (``st-fail``, ``ca-target``): the prefix of that style, by column key.
VALUE_CLASSES = {"status": "st", "classification": "cl", "change": "ch", "cause": "ca"}


@dataclass(frozen=True)
class Column:
    """One table column: the row key, its heading, and how a value is shown."""

    key: str
    heading: str
    show: Callable[[Any], str] = lambda value: "" if value is None else str(value)
    css: str = ""


def percent(value: Any) -> str:
    return "" if value is None else f"{value * 100:.1f}%"


def number(value: Any) -> str:
    return "" if value is None else f"{value:,}" if isinstance(value, int) else f"{value:.3g}"


def when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if isinstance(value, datetime) else "" if value is None else str(value)


def listed(value: Any) -> str:
    return "\n".join(value) if isinstance(value, list) else "" if value is None else str(value)


def pct(key: str, heading: str) -> Column:
    return Column(key, heading, percent, "num")


def num(key: str, heading: str) -> Column:
    return Column(key, heading, number, "num")


def msg(key: str, heading: str) -> Column:
    return Column(key, heading, lambda v: "" if v is None else str(v), "msg")


def _cell_class(column: Column, value: Any) -> str:
    classes = [column.css] if column.css else []
    if column.key in VALUE_CLASSES and value:
        prefix = VALUE_CLASSES[column.key]
        classes.append(f"{prefix}-{str(value).replace(' ', '-')}")
    return f' class="{" ".join(classes)}"' if classes else ""


def table(rows: list[dict[str, Any]], columns: list[Column], element_id: str, empty: str = "nothing to show") -> str:
    if not rows:
        return f'<p class="empty" id="{element_id}">{escape(empty)}</p>'
    head = "".join(f"<th>{escape(c.heading)}</th>" for c in columns)
    body = "".join(
        "<tr>"
        + "".join(f"<td{_cell_class(c, row.get(c.key))}>{escape(c.show(row.get(c.key)))}</td>" for c in columns)
        + "</tr>"
        for row in rows
    )
    return (
        f'<div class="scroll"><table id="{element_id}">'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def shown(count: int, total: int, noun: str) -> str:
    """ "showing 50 of 1,234 tests" when cut, else "" (said under a table or plot)."""
    return f'<p class="note">showing {count:,} of {total:,} {escape(noun)}</p>' if total > count else ""


def section(element_id: str, title: str, intro: str, content: str) -> str:
    note = f'<p class="note">{escape(intro)}</p>' if intro else ""
    return f'<section id="{element_id}"><h2>{escape(title)}</h2>{note}{content}</section>'


def page(title: str, subtitle: str, figures: list[tuple[str, str]], sections: list[tuple[str, str, str]]) -> str:
    """The whole document: header, headline figures, a contents bar, then each ``(id, title, html)`` section."""
    nav = "".join(f'<a href="#{element_id}">{escape(name)}</a>' for element_id, name, _ in sections)
    boxes = "".join(
        f'<div class="figure"><b>{escape(value)}</b><span>{escape(label)}</span></div>' for value, label in figures
    )
    body = "".join(html for _, _, html in sections)
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f'<meta name="viewport" content="width=device-width,initial-scale=1"><style>{STYLE}</style></head>'
        f"<body><header><h1>{escape(title)}</h1><p>{escape(subtitle)}</p></header><nav>{nav}</nav>"
        f'<main><div class="summary" id="figures">{boxes}</div>{body}</main></body></html>'
    )
