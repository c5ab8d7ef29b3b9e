"""harness coverage and allowances: each rule's permitted variations beside its breakages, room no allowance
covers, checks that reject a permitted variation, and the allowance files' own errors.

On small project-written files in tmp_path (the same sample text, catalogue and mapping as test_coverage.py).
"""

from __future__ import annotations

import json

import pytest

from harness.formats.rule_files import RuleFileError, load_allowances
from tests.harness.app.test_coverage import PROSE_4, TEXT, _anchor, _coverage, _write_files, files  # noqa: F401

OPEN = _anchor(TEXT, "Drivers MUST open")
LOG = _anchor(TEXT, "Drivers SHOULD")


def _allowances(folder, body: str) -> None:
    (folder / "allowances").mkdir(exist_ok=True)
    (folder / "allowances" / "widgets.yml").write_text(body)


def _room(folder, rule: str, room: str) -> None:
    catalogue = folder / "rules.yml"
    text = catalogue.read_text()
    catalogue.write_text(text.replace(f"{{id: {rule}, ", f"{{id: {rule}, room: '{room}', "))


def test_allowances_are_listed_beside_the_breakages_and_counted(files, capsys):  # noqa: F811
    spec = _write_files(files)
    _allowances(
        files,
        f"""
allowances:
  - id: opens late
    rules: [CS-API-OPEN]
    side: driver
    what: the widget opens on the second request
    anchors: ["{OPEN}"]
    why: the text does not say when
    proof: "tests/x.py::ALLOWED"
""",
    )
    status, out, err = _coverage(capsys, "--spec-text", str(spec), "--specs", str(files / "specs"))
    assert status == 0, err
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("ok  CS-API-OPEN"))
    assert lines[at + 5] == "      allowed: opens late"
    assert "allowances: 1 (rules whose checks accept them: 1; rules with a check that rejects one: 0;" in out
    assert "rules with room and no allowance: 0" in out
    status, out, _ = _coverage(capsys, "--spec-text", str(spec), "--specs", str(files / "specs"), "--format", "json")
    data = json.loads(out)
    assert [a["id"] for a in data["allowances"]] == ["opens late"]
    rule = next(r for r in data["rules"] if r["id"] == "CS-API-OPEN")
    assert rule["allowances"] == ["opens late"] and rule["room_unproven"] is False
    assert not [p for p in data["problems"] if "allowance" in p], "the allowance's anchor and rule are verified"


def test_room_no_allowance_covers_is_flagged_and_counted_without_failing(files, capsys):  # noqa: F811
    spec = _write_files(files)
    _room(files, "CS-API-LOG", "how often a widget is logged")
    status, out, err = _coverage(capsys, "--spec-text", str(spec), "--specs", str(files / "specs"))
    assert status == 0, err
    assert "      allowed: none (room unproven: how often a widget is logged)" in out
    assert "Room the references leave that no allowance proves the checks accept (1):" in out
    assert "  - CS-API-LOG (driver SHOULD): how often a widget is logged" in out
    assert "rules with room and no allowance: 1" in out
    assert "allowed:" not in out.split("ok  CS-API-OPEN")[1].split("ok  CS-API-LOG")[0], "no room, no allowance: quiet"


def test_a_check_that_rejects_an_allowance_is_a_finding_named_under_its_rule(files, capsys):  # noqa: F811
    spec = _write_files(files)
    _room(files, "CS-API-OPEN", "when the widget opens")
    _allowances(
        files,
        f"""
allowances:
  - id: opens late
    rules: [CS-API-OPEN]
    side: driver
    what: the widget opens on the second request
    anchors: ["{OPEN}"]
    why: the text does not say when
    proof: "tests/x.py::ALLOWED"
    rejected_by:
      - {{test: "{PROSE_4}", why: it asks for the widget at once}}
""",
    )
    status, out, err = _coverage(capsys, "--spec-text", str(spec), "--specs", str(files / "specs"))
    assert status == 0, err
    assert "      allowed: opens late (rejected today by 1 of its checks)" in out
    assert "Checks that reject a permitted variation today (1; findings against the checks):" in out
    assert f"  - opens late (driver): {PROSE_4}: it asks for the widget at once" in out
    assert "rules with a check that rejects one: 1; rejecting checks: 1); rules with room and no allowance: 0" in out


def test_an_anchor_the_texts_lack_or_an_unknown_rule_is_a_problem(files, capsys):  # noqa: F811
    spec = _write_files(files)
    (files / "note.md").write_text("# Note\n\nWidgets may rest.\n")
    note = _anchor("# Note\n\nWidgets may rest.\n", "Widgets may rest")
    _allowances(
        files,
        f"""
allowances:
  - id: rests
    rules: [CS-API-LOG, CS-API-GONE]
    side: driver
    what: the widget rests
    anchors: ["note.md:{note}", "0123456789abcdef", "missing.md:{LOG}"]
    why: the note lets it
    proof: "tests/x.py::ALLOWED"
""",
    )
    _, out, _ = _coverage(capsys, "--spec-text", str(spec), "--specs", str(files / "specs"), "--format", "json")
    problems = json.loads(out)["problems"]
    assert any("allows CS-API-GONE, which no catalogue defines" in p for p in problems), problems
    assert any("anchor 0123456789abcdef is not a sentence of widgets.md" in p for p in problems), problems
    assert any(f"anchor missing.md:{LOG} not verified: missing.md was not found" in p for p in problems), problems
    assert not any(f"note.md:{note}" in p for p in problems), "an anchor of another text found beside is verified"


@pytest.mark.parametrize(
    "entry, message",
    [
        ("{id: a, side: driver, what: w, anchors: [h], why: y, proof: 'p::T'}", "'rules' is a non-empty list"),
        ("{id: a, rules: [CS-API-OPEN], side: both, what: w, anchors: [h], why: y, proof: 'p::T'}", "side is one of"),
        ("{id: a, rules: [CS-API-OPEN], side: driver, what: w, anchors: [], why: y, proof: 'p::T'}", "'anchors' is a"),
        ("{id: a, rules: [CS-API-OPEN], side: driver, what: w, anchors: [h], proof: 'p::T'}", "'why' is required"),
        ("{id: a, rules: [CS-API-OPEN], side: driver, what: w, anchors: [h], why: y, proof: p}", "proof is PATH::NAME"),
        (
            "{id: a, rules: [CS-API-OPEN], side: driver, what: w, anchors: [h], why: y, proof: 'p::T', x: 1}",
            "unknown keys x",
        ),
        (
            "{id: a, rules: [CS-API-OPEN], side: driver, what: w, anchors: [h], why: y, proof: 'p::T', rejected_by: t}",
            "'rejected_by' is a list",
        ),
        (
            "{id: a, rules: [CS-A], side: driver, what: w, anchors: [h], why: y, proof: 'p::T', rejected_by: [t]}",
            "entry 1",
        ),
    ],
)
def test_a_malformed_allowance_names_the_file_and_the_entry(tmp_path, entry, message):
    (tmp_path / "one.yml").write_text(f"allowances:\n  - {entry}\n")
    with pytest.raises(RuleFileError, match=message) as raised:
        load_allowances(tmp_path)
    assert "one.yml: allowance 1" in str(raised.value)


def test_an_id_used_twice_across_files_is_refused(tmp_path):
    entry = "  - {id: a, rules: [CS-API-OPEN], side: driver, what: w, anchors: [h], why: y, proof: 'p::T'}\n"
    (tmp_path / "one.yml").write_text("allowances:\n" + entry)
    (tmp_path / "two.yml").write_text("allowances:\n" + entry)
    with pytest.raises(RuleFileError, match=r"the id is also used in .*one\.yml"):
        load_allowances(tmp_path)
