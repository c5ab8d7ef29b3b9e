"""The normative statements of a spec's markdown text: every MUST, SHOULD, REQUIRED or SHALL sentence.

``harness coverage`` lists what a spec requires and which tests check it. This
module finds the requirements: it reads the markdown text it is given (prose,
list items and the comments inside the spec's TypeScript blocks, where some
rules live), splits it into sentences, and keeps those with an RFC 2119 keyword
in capitals. Each statement knows its section heading, its level (``MUST``
covers MUST, MUST NOT, REQUIRED, SHALL, SHALL NOT; ``SHOULD`` covers SHOULD,
SHOULD NOT, RECOMMENDED; MAY and OPTIONAL grant freedom and are not kept), and
whom it binds as far as the sentence says: ``docs`` for a rule about what
drivers must document (no run can observe it), ``server`` for one whose subject
is the server, else ``driver``.

A statement is found again by its anchor: the first 16 hex digits of the
SHA-256 of the sentence, normalised (markdown marks dropped, lower case, one
space), so the project's catalogue can name a sentence without copying it (the
spec text is under a non-commercial licence). Two identical sentences in one
section are told apart by ``occurrence``.

No I/O: the caller reads the file and passes the text.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

#: Keyword -> level. Longest first, so "MUST NOT" is seen before "MUST".
KEYWORD_LEVELS = {
    "MUST NOT": "MUST",
    "MUST": "MUST",
    "SHALL NOT": "MUST",
    "SHALL": "MUST",
    "REQUIRED": "MUST",
    "SHOULD NOT": "SHOULD",
    "SHOULD": "SHOULD",
    "RECOMMENDED": "SHOULD",
}
LEVEL_ORDER = ("MUST", "SHOULD")
_KEYWORD = re.compile(r"\b(" + "|".join(re.escape(k) for k in KEYWORD_LEVELS) + r")\b")
#: A keyword in quotes is the keyword being defined (the META section), not a rule.
_QUOTED_KEYWORD = re.compile(r"[\"'](" + "|".join(re.escape(k) for k in KEYWORD_LEVELS) + r")[\"']")

#: Whom a statement binds, by what the sentence itself says; first match wins, else ``driver``.
SCOPE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("docs", re.compile(r"\b(MUST|SHOULD|SHALL)( NOT)? (document|state)\b|\bdocumentation (MUST|SHOULD)")),
    (
        "server",
        re.compile(
            r"^(?!.*\b(drivers?|implementers?|helpers?|change streams?|users?)\b)"
            r"(the|a) (server|mongod|mongos) (will|must|should|shall|returns?|reports?|adds?|sends?)\b",
            re.I,
        ),
    ),
)

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_RULE_LINE = re.compile(r"^\s*([-_*])(\s*\1){2,}\s*$")
_COMMENT_LINE = re.compile(r"^\s*(/\*\*?|\*/|\*(?!\*)|//)")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z`*_\[(\"0-9])")
_PLACEHOLDER = "\u2024"


@dataclass(frozen=True)
class Statement:
    """One normative sentence of the spec, where it is, and its anchor."""

    section: str
    headings: tuple[str, ...]
    text: str
    level: str | None
    keywords: tuple[str, ...]
    scope: str
    anchor: str
    occurrence: int
    line: int
    #: In a code block: the declaration the comment documents (e.g. ``fullDocument``), else "".
    field: str = ""

    @property
    def key(self) -> str:
        """``anchor`` or, for the n-th identical sentence (n > 1), ``anchor#n``: how the catalogue names it."""
        return self.anchor if self.occurrence == 1 else f"{self.anchor}#{self.occurrence}"


def normalise(sentence: str) -> str:
    """The sentence with markdown marks dropped, in lower case, with single spaces (what the anchor hashes)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", sentence)
    text = text.replace("\\", "")
    text = re.sub(r"[`*]", "", text)
    text = re.sub(r"\s+", " ", text).strip().lower()
    return text.rstrip(".:;, ")


def anchor_of(sentence: str) -> str:
    return hashlib.sha256(normalise(sentence).encode("utf-8")).hexdigest()[:16]


def split_sentences(paragraph: str) -> list[str]:
    text = paragraph
    for abbreviation in _ABBREVIATIONS:
        text = text.replace(abbreviation, abbreviation.replace(".", _PLACEHOLDER))
    parts = _SENTENCE_END.split(text)
    return [p.replace(_PLACEHOLDER, ".").strip() for p in parts if p.strip()]


def level_of(sentence: str) -> tuple[str | None, tuple[str, ...]]:
    """The strongest level a sentence states, and its keywords (None: no normative keyword)."""
    if _QUOTED_KEYWORD.search(sentence):
        return None, ()
    keywords = tuple(dict.fromkeys(m.group(1) for m in _KEYWORD.finditer(sentence)))
    if not keywords:
        return None, ()
    levels = {KEYWORD_LEVELS[k] for k in keywords}
    return next(level for level in LEVEL_ORDER if level in levels), keywords


def scope_of(sentence: str) -> str:
    plain = re.sub(r"[`*]", "", sentence).strip()
    for scope, pattern in SCOPE_PATTERNS:
        if pattern.search(plain):
            return scope
    return "driver"


_DECLARATION = re.compile(r"^\s*(?:(?:public|private|protected|readonly|static)\s+)*([A-Za-z_$][\w$]*)\s*[:(?]")


def _paragraphs(text: str) -> list[list[Any]]:
    """[line, heading trail, paragraph text, field]: prose, list items and code-block comments, no tables.

    ``field`` is, for a comment in a code block, the name declared on the first code line after it.
    """
    out: list[list[Any]] = []
    pending: list[list[Any]] = []
    trail: list[tuple[int, str]] = []
    current: list[str] = []
    start = 0
    in_code = False

    def flush() -> None:
        nonlocal current
        if current:
            out.append([start, tuple(title for _, title in trail), " ".join(current), ""])
            if in_code:
                pending.append(out[-1])
        current = []

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if _FENCE.match(line):
            flush()
            in_code = not in_code
            pending.clear()
            continue
        if in_code:
            if not _COMMENT_LINE.match(line):
                flush()
                declared = _DECLARATION.match(line)
                if declared and line.strip():
                    for paragraph in pending:
                        paragraph[3] = declared.group(1)
                    pending.clear()
                continue
            body = _COMMENT_LINE.sub("", line, count=1).strip().rstrip("/").rstrip("*").strip()
            if not body or body.startswith(("@", "-")):
                flush()
                body = re.sub(r"^@\w+:?\s*|^-\s*", "", body)
            if body:
                if not current:
                    start = number
                current.append(body)
            continue
        heading = _HEADING.match(line)
        if heading:
            flush()
            depth = len(heading.group(1))
            trail = [(d, t) for d, t in trail if d < depth] + [(depth, heading.group(2).strip())]
            continue
        if not line.strip() or line.lstrip().startswith("|") or _RULE_LINE.match(line):
            flush()
            continue
        if _LIST_ITEM.match(line):
            flush()
            line = _LIST_ITEM.sub("", line, count=1)
        if not current:
            start = number
        current.append(line.strip())
    flush()
    return out


def parse_sentences(text: str) -> list[Statement]:
    """Every sentence of a markdown spec, in document order; ``level`` is None where it has no keyword.

    The catalogue may hold a rule that the spec states without a capital keyword (a default, a note);
    its anchor is looked up among all sentences. ``occurrence`` counts identical sentences in the text.
    """
    sentences: list[Statement] = []
    seen: dict[str, int] = {}
    for line, trail, paragraph, declared in _paragraphs(text):
        for sentence in split_sentences(paragraph):
            level, keywords = level_of(sentence)
            anchor = anchor_of(sentence)
            seen[anchor] = occurrence = seen.get(anchor, 0) + 1
            sentences.append(
                Statement(
                    section=trail[-1] if trail else "",
                    headings=trail,
                    text=sentence,
                    level=level,
                    keywords=keywords,
                    scope=scope_of(sentence),
                    anchor=anchor,
                    occurrence=occurrence,
                    line=line,
                    field=declared,
                )
            )
    return sentences


def parse_statements(text: str) -> list[Statement]:
    """Every normative statement (a MUST or SHOULD sentence) of a markdown spec, in document order."""
    return [s for s in parse_sentences(text) if s.level is not None]
