"""harness.formats.spec_rules: normative statements of a markdown spec, with sections, levels, scopes, anchors.

The sample is the project's own markdown (not the spec text); the real spec is read from the shared
folder only to check counts and that the committed catalogue still names every statement.
"""

from __future__ import annotations

import re

import pytest
import yaml

from harness.formats.spec_rules import anchor_of, normalise, parse_sentences, parse_statements
from tests.paths import REPO, SHARED_SPECS

SAMPLE = """\
# Widget Streams

#### META

The keywords "MUST", "MUST NOT", "SHOULD" and "MAY" are to be read as RFC 2119 says.

## Driver API

Drivers MUST open a widget stream on request. A plain sentence follows.
Implementers SHOULD NOT cache widgets (e.g. in a global), and MAY log them.

| name | rule |
| --- | --- |
| x | drivers MUST ignore this table |

```typescript
class WidgetOptions {
  /**
   * The default is to not send a value.
   *
   * A driver MUST NOT reject an unknown `colour`.
   *
   * @note this is an option of the `$widget` stage.
   */
  colour: Optional<String>;

  /**
   * A driver MUST NOT reject an unknown `colour`.
   */
  shade: Optional<String>;
}
```

### Resuming

- The driver MUST set `resumeAfter` to the cached token.
    - Nested: the driver MUST NOT set `startAfter`.
- Drivers MUST document how to resume.
- The server will report an error, and a REQUIRED stage is first.
- The server returns an error that drivers MUST raise.
- The server will refuse a second stage; nothing is REQUIRED of drivers here.

Users MAY do anything. Lower-case must is not a keyword.
"""


def _by_text(statements):
    return {s.text: s for s in statements}


def test_normative_sentences_with_their_section_level_and_keywords():
    statements = parse_statements(SAMPLE)
    texts = [s.text for s in statements]
    assert texts == [
        "Drivers MUST open a widget stream on request.",
        "Implementers SHOULD NOT cache widgets (e.g. in a global), and MAY log them.",
        "A driver MUST NOT reject an unknown `colour`.",
        "A driver MUST NOT reject an unknown `colour`.",
        "The driver MUST set `resumeAfter` to the cached token.",
        "Nested: the driver MUST NOT set `startAfter`.",
        "Drivers MUST document how to resume.",
        "The server will report an error, and a REQUIRED stage is first.",
        "The server returns an error that drivers MUST raise.",
        "The server will refuse a second stage; nothing is REQUIRED of drivers here.",
    ]
    first, should = statements[0], statements[1]
    assert (first.section, first.level, first.keywords) == ("Driver API", "MUST", ("MUST",))
    assert (should.level, should.keywords) == ("SHOULD", ("SHOULD NOT",))
    assert statements[4].section == "Resuming" and statements[4].headings == (
        "Widget Streams",
        "Driver API",
        "Resuming",
    )


def test_meta_definitions_tables_may_and_lower_case_are_not_statements():
    texts = " ".join(s.text for s in parse_statements(SAMPLE))
    assert "RFC 2119" not in texts and "table" not in texts
    assert "Users MAY" not in texts and "Lower-case" not in texts


def test_code_comments_carry_the_field_they_document_and_duplicates_are_numbered():
    colour, shade = [s for s in parse_statements(SAMPLE) if "colour" in s.text]
    assert (colour.field, shade.field) == ("colour", "shade")
    assert colour.anchor == shade.anchor
    assert (colour.key, shade.key) == (colour.anchor, f"{colour.anchor}#2")
    notes = [s for s in parse_sentences(SAMPLE) if s.field == "colour"]
    assert [n.text for n in notes] == [
        "The default is to not send a value.",
        "A driver MUST NOT reject an unknown `colour`.",
        "this is an option of the `$widget` stage.",
    ]
    assert notes[0].level is None


def test_scope_says_who_the_sentence_binds():
    scopes = {s.text: s.scope for s in parse_statements(SAMPLE)}
    assert scopes["Drivers MUST document how to resume."] == "docs"
    assert scopes["The server will report an error, and a REQUIRED stage is first."] == "server"
    assert scopes["The server returns an error that drivers MUST raise."] == "driver"
    assert scopes["The driver MUST set `resumeAfter` to the cached token."] == "driver"


def test_anchors_ignore_markdown_marks_case_spacing_and_the_full_stop():
    plain = "The driver MUST set resumeAfter to the cached token"
    marked = "The  driver **MUST** set `resumeAfter` to the [cached token](#caching)."
    assert normalise(marked) == normalise(plain) == "the driver must set resumeafter to the cached token"
    assert anchor_of(marked) == anchor_of(plain)
    assert anchor_of(plain) != anchor_of("The driver MUST set startAfter to the cached token")
    assert re.fullmatch(r"[0-9a-f]{16}", anchor_of(plain))


# -- the real spec text and the committed catalogue ---------------------------------------------------

SPEC_TEXT = SHARED_SPECS / "reference" / "change-streams.md"
CATALOGUE = REPO / "specs" / "coverage" / "change-streams-rules.yml"


@pytest.fixture(scope="module")
def spec_text() -> str:
    if not SPEC_TEXT.is_file():
        pytest.skip(f"the change-streams spec text is not at {SPEC_TEXT}")
    return SPEC_TEXT.read_text(encoding="utf-8")


def test_the_real_spec_has_69_statements_and_the_catalogue_names_each_one(spec_text):
    statements = parse_statements(spec_text)
    assert len(statements) == 69
    assert sum(s.level == "MUST" for s in statements) == 67
    assert {s.scope for s in statements} == {"driver", "docs"}
    rules = yaml.safe_load(CATALOGUE.read_text())["rules"]
    named = {a for rule in rules for a in rule["anchors"]}
    assert {s.key for s in statements} <= named
    assert named <= {s.key for s in parse_sentences(spec_text)}, "every anchor is found in the text"


def test_rule_ids_are_stable(spec_text):
    """Ids other files use (supplementary descriptions, the mapping, records) keep their sentences."""
    by_key = {s.key: s for s in parse_sentences(spec_text)}
    rules = {rule["id"]: rule for rule in yaml.safe_load(CATALOGUE.read_text())["rules"]}
    assert len(rules) == 112
    cues = {
        "CS-OPT-MAXAWAIT": "alias for `maxTimeMS`",
        "CS-OPT-BATCHSIZE": "sent only if the caller",
        "CS-OPT-FULLDOC": "equivalent to 'default'",
        "CS-RESUME-ONCE": "resume a single time",
        "CS-RESUME-RESUMEAFTER": "set `resumeAfter` to the cached",
        "CS-KILL-RESUME": "kill the cursor",
        "CS-ERR-AGGREGATE": "aggregate command is not a resumable error",
    }
    for rule_id, cue in cues.items():
        assert cue in by_key[rules[rule_id]["anchors"][0]].text, rule_id
    assert rules["CS-OPT-DEFAULTS"]["anchors"]


def test_the_catalogue_copies_no_sentence_of_the_spec(spec_text):
    """Licence: anchors and paraphrases only; no run of eight words of a statement appears in the catalogue."""
    catalogue = " ".join(normalise(CATALOGUE.read_text()).split())
    for sentence in parse_sentences(spec_text):
        words = normalise(sentence.text).split()
        for start in range(max(0, len(words) - 7)):
            assert " ".join(words[start : start + 8]) not in catalogue, sentence.line
