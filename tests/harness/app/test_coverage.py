"""harness coverage: the map of rules to tests, what it reports when files and text disagree, its exit status.

The command runs on small project-written files (a sample spec text, a catalogue and a mapping in
tmp_path) so each outcome is forced; one test runs it on the real files and checks the map's shape.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.app.cli import main
from harness.app.coverage_map import LoadedTest, build_map
from harness.core.rules import RuleIndex, TestRules, rules_from_description
from harness.formats import rule_files
from harness.formats.rule_files import RuleFileError, load_catalogue, load_mapping
from harness.formats.spec_rules import parse_sentences

PROSE_4 = "prose/change-streams-prose::4: an error from the aggregate command is never resumed"
PROSE_7 = "prose/change-streams-prose::7: a cursor opened with an empty first batch is kept open by the driver"

TEXT = """\
# Widgets

## Opening

Drivers MUST open a widget on request. Drivers SHOULD log each widget.

## Documenting

Drivers MUST document widgets.
"""


def _anchor(text: str, start: str) -> str:
    return next(s.key for s in parse_sentences(text) if s.text.startswith(start))


def _write_files(tmp_path: Path, text: str = TEXT, mapping: str | None = None) -> Path:
    """A spec text, a catalogue naming its three statements, and a mapping; returns the text's path."""
    spec = tmp_path / "widgets.md"
    spec.write_text(text)
    catalogue = tmp_path / "rules.yml"
    catalogue.write_text(f"""
text: widgets.md
rules:
  - {{id: CS-API-OPEN, level: MUST, section: Opening, anchors: ["{_anchor(TEXT, "Drivers MUST open")}"],
      paraphrase: open on request}}
  - {{id: CS-API-LOG, level: SHOULD, section: Opening, anchors: ["{_anchor(TEXT, "Drivers SHOULD")}"],
      paraphrase: log each}}
  - {{id: CS-API-DOC, level: MUST, section: Documenting, anchors: ["{_anchor(TEXT, "Drivers MUST document")}"],
      paraphrase: document, not_checkable: documentation}}
""")
    (tmp_path / "tests.yml").write_text(
        mapping
        if mapping is not None
        else f"""
tests:
  - {{test: "{PROSE_4}", checks: [CS-API-OPEN]}}
  - {{test: "{PROSE_7}", checks: [CS-API-LOG]}}
"""
    )
    (tmp_path / "breakages").mkdir(exist_ok=True)
    (tmp_path / "breakages" / "widgets.yml").write_text(BREAKAGES)
    return spec


BREAKAGES = """
breakages:
  - {id: never opens, rules: [CS-API-OPEN], side: driver, what: no widget, proof: "tests/x.py::TABLE"}
  - {id: silent, rules: [CS-API-LOG], side: driver, what: logs nothing, proof: "tests/x.py::test_silent"}
"""


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.setattr(rule_files, "SPEC_CATALOGUE", tmp_path / "rules.yml")
    monkeypatch.setattr(rule_files, "SERVER_CATALOGUE", tmp_path / "no-server-rules.yml")
    monkeypatch.setattr(rule_files, "TEST_MAPPING", tmp_path / "tests.yml")
    monkeypatch.setattr(rule_files, "COVERAGE_DIR", tmp_path)
    monkeypatch.setattr(rule_files, "BREAKAGES_DIR", tmp_path / "breakages")
    monkeypatch.setattr(rule_files, "ALLOWANCES_DIR", tmp_path / "allowances")
    (tmp_path / "specs").mkdir()
    return tmp_path


def _coverage(capsys, *args: str) -> tuple[int, str, str]:
    status = main(["coverage", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_every_rule_checked_and_proven_exits_0_and_lists_each_rule(files, capsys):
    spec = _write_files(files)
    status, out, err = _coverage(capsys, "--spec-text", str(spec), "--specs", str(files / "specs"))
    assert status == 0, err
    lines = out.splitlines()
    must = next(i for i, line in enumerate(lines) if line.startswith("== driver-side MUST"))
    should = next(i for i, line in enumerate(lines) if line.startswith("== driver-side SHOULD"))
    assert must < should
    assert lines[must + 1].startswith("ok  CS-API-OPEN") and PROSE_4 in lines[must + 2]
    assert lines[must + 3] == "      can report: error-raised, check"  # a prose check: its assertions, its errors
    assert lines[must + 4] == "      compares: not said" and lines[must + 5] == "      broken by: never opens"
    assert "ok  CS-API-LOG" in out and "broken by: silent" in out
    assert "n/a CS-API-DOC" in out and "not checkable: documentation" in out
    assert "widgets.md: 3 sentences in scope, 3 named by rules, 0 informative, 0 unaccounted" in out


def test_a_should_only_exercised_or_a_check_no_breakage_proves_exits_1(files, capsys):
    """Every rule counts, SHOULDs and server rules too; a check is not enough without a breakage it catches."""
    spec = _write_files(
        files,
        mapping=f'tests:\n  - {{test: "{PROSE_4}", checks: [CS-API-OPEN]}}\n'
        f'  - {{test: "{PROSE_7}", exercises: [CS-API-LOG]}}\n',
    )
    status, out, err = _coverage(capsys, "--spec-text", str(spec), "--specs", str(files / "specs"))
    assert status == 1 and "CS-API-LOG" in err and "CS-API-OPEN" not in err
    assert "~~  CS-API-LOG" in out and f"exercised by: {PROSE_7}" in out
    assert "CS-API-LOG (driver SHOULD, only exercised)" in out  # listed under "Nothing checks"
    spec = _write_files(files)
    (files / "breakages" / "widgets.yml").write_text(BREAKAGES.split("  - {id: silent")[0])
    status, out, err = _coverage(capsys, "--spec-text", str(spec), "--specs", str(files / "specs"))
    assert status == 1 and "CS-API-LOG" in err
    assert "??  CS-API-LOG" in out and "broken by: none (the check is unproven)" in out


def test_every_sentence_of_a_reference_text_is_a_rule_or_informative(files, capsys):
    """A catalogue of another text (here a note on widgets, limited to one section) accounts for each of its
    sentences: named by a rule (also across texts, ``FILE:HASH``) or listed as informative with why."""
    note = "# Note\n\n## History\n\nWidgets came first. Gadgets came later.\n\n## Rules\n\nA widget turns.\n"
    spec = _write_files(files)
    (files / "note.md").write_text(note)
    (files / "note-rules.yml").write_text(f"""
text: note.md
sections: [History]
informative:
  - {{anchor: "{_anchor(note, "Widgets came")}", why: history}}
rules:
  - {{id: CS-NOTE-ORDER, section: History, paraphrase: gadgets after widgets,
      anchors: ["{_anchor(note, "Gadgets")}", "widgets.md:{_anchor(TEXT, "Drivers MUST open")}"]}}
""")
    status, out, err = _coverage(capsys, "--spec-text", str(spec), "--specs", str(files / "specs"))
    assert "note.md: 2 sentences in scope, 1 named by rules, 1 informative, 0 unaccounted" in out
    assert "-- CS-NOTE-ORDER" in out.replace("--  ", "-- ") and status == 1  # unchecked, not unaccounted
    (files / "note-rules.yml").write_text(f"""
text: note.md
informative:
  - {{anchor: "{_anchor(note, "Widgets came")}", why: history}}
  - {{anchor: "0000000000000000", why: gone}}
rules: []
""")
    status, out, err = _coverage(capsys, "--spec-text", str(spec), "--specs", str(files / "specs"))
    assert status == 1 and "2 unaccounted sentence(s) of note.md" in err
    assert "note.md line 5 [History] anchor" in out and "Gadgets came later" in out
    assert "informative anchor 0000000000000000 is not a sentence of note.md" in out


def test_an_unchecked_driver_must_exits_1_unless_report_only(files, capsys):
    spec = _write_files(files, mapping="tests: []\n")
    status, out, err = _coverage(capsys, "--spec-text", str(spec), "--specs", str(files / "specs"))
    assert status == 1 and "CS-API-OPEN" in err
    assert "--  CS-API-OPEN" in out
    status, _, _ = _coverage(capsys, "--spec-text", str(spec), "--specs", str(files / "specs"), "--report-only")
    assert status == 0


def test_new_and_reworded_statements_are_listed_never_dropped(files, capsys):
    reworded = TEXT.replace("Drivers MUST open a widget on request.", "Drivers MUST open a widget when asked.")
    spec = _write_files(files, text=reworded + "\n## Closing\n\nDrivers MUST close a widget.\n")
    status, out, _err = _coverage(capsys, "--spec-text", str(spec), "--specs", str(files / "specs"), "--format", "json")
    assert status == 1
    data = json.loads(out)
    unmapped = {(u["section"], u["level"]): u for u in data["unmapped_statements"]}
    assert set(unmapped) == {("Opening", "MUST"), ("Closing", "MUST")}
    assert unmapped[("Opening", "MUST")]["maybe_rewording_of"] == ["CS-API-OPEN"]
    assert unmapped[("Closing", "MUST")]["maybe_rewording_of"] == []
    rule = next(r for r in data["rules"] if r["id"] == "CS-API-OPEN")
    assert rule["missing_anchors"] == [_anchor(TEXT, "Drivers MUST open")]
    assert "unmapped statement at line" in " ".join(data["failing"])
    assert "widget when asked" not in out, "the JSON carries anchors and lines, not the text's sentences"


def test_a_missing_spec_text_or_a_broken_catalogue_exits_2(files, capsys):
    status, _, err = _coverage(capsys, "--spec-text", str(files / "nowhere.md"))
    assert status == 2 and "does not exist" in err
    spec = _write_files(files)
    (files / "rules.yml").write_text("rules:\n  - {id: not-an-id}\n")
    status, _, err = _coverage(capsys, "--spec-text", str(spec), "--specs", str(files / "specs"))
    assert status == 2 and "rules.yml: rule 1" in err and "CS-<AREA>-<TOPIC>" in err


def test_a_spec_text_is_found_in_a_checkout_folder(files, capsys):
    checkout = files / "checkout"
    (checkout / "source" / "change-streams" / "tests").mkdir(parents=True)
    _write_files(files)
    (checkout / "source" / "change-streams" / "change-streams.md").write_text(TEXT)
    for given in (checkout, checkout / "source" / "change-streams" / "tests"):
        status, out, _ = _coverage(capsys, "--spec-text", str(given), "--specs", str(files / "specs"))
        assert status == 0 and "change-streams.md" in out.splitlines()[0]


def test_markdown_output_is_a_table_per_group(files, capsys):
    spec = _write_files(files)
    status, out, _ = _coverage(
        capsys, "--spec-text", str(spec), "--specs", str(files / "specs"), "--format", "markdown"
    )
    assert status == 0
    assert "## driver-side MUST (1)" in out
    assert f"| CS-API-OPEN | MUST | Opening | open on request | checked | {PROSE_4} |  | never opens |" in out


# -- the model ------------------------------------------------------------------------------------------


def test_rule_ids_at_the_start_of_a_description():
    assert rules_from_description("CS-OPT-MAXAWAIT: maxAwaitTimeMS ...") == ["CS-OPT-MAXAWAIT"]
    assert rules_from_description("CS-A-B, SRV-ORDER: both") == ["CS-A-B", "SRV-ORDER"]
    assert rules_from_description("Test consecutive resume") == []
    assert rules_from_description("cs-opt-x: lower case is not an id") == []


def test_mapping_entries_by_id_pattern_and_exception():
    index = RuleIndex(
        [
            TestRules(
                checks=("CS-A-ONE",), match="unified/f::resumes after *", exclude=("*::resumes after a network error",)
            ),
            TestRules(checks=("CS-A-TWO",), test="unified/f::resumes after a network error"),
        ]
    )
    assert index.rules_for("unified/f::resumes after X") == ["CS-A-ONE"]
    assert index.rules_for("unified/f::resumes after a network error") == ["CS-A-TWO"]
    assert index.rules_for("unified/f::CS-A-THREE: own", "CS-A-THREE: own") == ["CS-A-THREE"]


def test_bad_mapping_files_name_the_file_and_entry(tmp_path):
    path = tmp_path / "m.yml"
    path.write_text("tests:\n  - {test: a::b, match: 'a*', checks: [CS-A-B]}\n")
    with pytest.raises(RuleFileError, match=r"m.yml: entry 1: give exactly one of 'test'"):
        load_mapping(path)
    path.write_text("tests:\n  - {test: a::b, chekcs: [CS-A-B]}\n")
    with pytest.raises(RuleFileError, match=r"entry 1 \(a::b\): unknown keys chekcs"):
        load_mapping(path)
    path.write_text("rules:\n  - {id: CS-A-B}\n  - {id: CS-A-B}\n")
    with pytest.raises(RuleFileError, match=r"rule 2 \(CS-A-B\): the id is used twice"):
        load_catalogue(path, "x")


def test_unknown_ids_and_stale_mapping_entries_are_problems(tmp_path):
    _write_files(
        tmp_path,
        mapping=f"""
tests:
  - {{test: "{PROSE_4}", checks: [CS-API-OPEN, CS-NOT-DEFINED]}}
  - {{test: "prose/change-streams-prose::99: gone", checks: [CS-API-LOG]}}
  - {{test: "unified/not-loaded::x", checks: [CS-API-LOG]}}
""",
    )
    catalogues = [load_catalogue(tmp_path / "rules.yml", "change-streams")]
    tests = [
        LoadedTest(PROSE_4, "an error from the aggregate command is never resumed"),
        LoadedTest("unified/own::SRV-ORDER: order", "SRV-ORDER: order"),
    ]
    cmap = build_map(TEXT, "widgets.md", catalogues, load_mapping(tmp_path / "tests.yml"), tests)
    problems = "\n".join(cmap.problems)
    assert "unknown rule id(s) CS-NOT-DEFINED" in problems
    assert "names no test of the loaded file prose/change-streams-prose" in problems
    assert "names rule SRV-ORDER, which no catalogue defines (specs/coverage/server-rules.yml is missing)" in problems
    assert cmap.unverified == ["unified/not-loaded::x"]
    log = next(c for c in cmap.rules if c.rule.id == "CS-API-LOG")
    assert log.checked_by == ["unified/not-loaded::x (not loaded)"]


def test_the_project_map_lists_every_rule_and_its_known_gaps(capsys):
    """On the committed files: every catalogue rule is listed; the checked ones name real tests."""
    from harness.app.coverage import DEFAULT_SPEC_TEXT

    if not DEFAULT_SPEC_TEXT.is_file():
        pytest.skip(f"no spec text at {DEFAULT_SPEC_TEXT}")
    status, out, _ = _coverage(capsys, "--format", "json", "--report-only")
    assert status == 0
    data = json.loads(out)
    ids = [r["id"] for r in data["rules"]]
    catalogue = load_catalogue(rule_files.SPEC_CATALOGUE, "change-streams")
    assert {r.id for r in catalogue.rules} <= set(ids)
    assert data["unmapped_statements"] == []
    assert data["problems"] == [], "every id a test names is catalogued; every mapping entry names a loaded test"
    status_of = {r["id"]: r for r in data["rules"]}
    assert PROSE_4 in status_of["CS-ERR-AGGREGATE"]["checked_by"]
    assert status_of["CS-API-DOC-HELPERS"]["status"] == "not-checkable"
    driver_must = [
        r for r in data["rules"] if r["driver_side"] and r["level"] == "MUST" and r["status"] != "not-checkable"
    ]
    assert ids[: len(driver_must)] == [r["id"] for r in driver_must], "driver-side MUSTs come first"


def test_server_rules_are_listed_apart_and_their_anchors_checked_against_their_own_text(tmp_path):
    _write_files(tmp_path)
    overview = "# Server\n\nEvents arrive in the order of the writes.\n"
    (tmp_path / "server.yml").write_text(f"""
text: overview.md
rules:
  - {{id: SRV-ORDER, section: Server, paraphrase: in write order, anchors: ["{_anchor(overview, "Events")}"]}}
  - {{id: SRV-GONE, section: Server, paraphrase: gone, anchors: ["0000000000000000"]}}
""")
    catalogues = [
        load_catalogue(tmp_path / "rules.yml", "change-streams"),
        load_catalogue(tmp_path / "server.yml", "server", driver_side_default=False),
    ]
    tests = [LoadedTest("unified/server-events::SRV-ORDER: order", "SRV-ORDER: order"), LoadedTest(PROSE_4, "x")]
    texts = {"overview.md": overview}
    cmap = build_map(TEXT, "widgets.md", catalogues, load_mapping(tmp_path / "tests.yml"), tests, texts)
    by_id = {c.rule.id: c for c in cmap.rules}
    assert not by_id["SRV-ORDER"].rule.driver_side and by_id["SRV-ORDER"].checked_by == [tests[0].test_id]
    assert by_id["SRV-ORDER"].missing_anchors == [] and by_id["SRV-GONE"].missing_anchors == ["0000000000000000"]
    assert cmap.failing() == ["CS-API-LOG", "SRV-GONE"], "server-side rules hold CI as driver-side ones do"
    unverified = build_map(TEXT, "widgets.md", catalogues, load_mapping(tmp_path / "tests.yml"), tests)
    assert any("anchors not verified" in p for p in unverified.problems)


def test_a_spec_text_from_a_git_source_as_specs_fetch_gets_it(files, capsys, monkeypatch):
    """``--spec-text git:URL@COMMIT`` fetches the checkout (here a local repository) and reads its spec text."""
    import subprocess

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(files / "cache"))
    repo = files / "specifications"
    (repo / "source" / "change-streams" / "tests").mkdir(parents=True)
    (repo / "source" / "change-streams" / "change-streams.md").write_text(TEXT)
    (repo / "source" / "change-streams" / "tests" / "README.md").write_text("tests\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "spec"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    _write_files(files)
    status, out, err = _coverage(capsys, "--spec-text", f"git:{repo}@{commit}", "--specs", str(files / "specs"))
    assert status == 0, err
    assert "change-streams.md" in out.splitlines()[0] and str(files / "cache") in out.splitlines()[0]


def test_without_a_spec_text_the_rules_are_listed_and_the_text_is_said_not_compared(files, capsys, monkeypatch):
    """No --spec-text and no default at hand (an installed wheel): the map, minus what needs the text."""
    from harness.app import coverage

    _write_files(files)
    monkeypatch.setattr(coverage, "DEFAULT_SPEC_TEXT", None)
    status, out, err = _coverage(capsys, "--specs", str(files / "specs"))
    assert status == 0, err
    assert "the spec text was not compared" in out.splitlines()[0]
    assert "ok  CS-API-OPEN" in out and PROSE_4 in out and "unmapped statements: not looked for" in out
    status, out, _ = _coverage(capsys, "--specs", str(files / "specs"), "--format", "json")
    data = json.loads(out)
    assert data["spec_text"] is None and data["spec_text_compared"] is False and "not compared" in data["not_compared"]
    assert all(r["missing_anchors"] == [] for r in data["rules"]) and data["unmapped_statements"] == []


def test_a_ranged_rule_says_what_of_its_dimensions_its_checks_reach(tmp_path):
    """covers: the values of each dimension a rule ranges over that its checks state, out of those a run can produce,
    and why for the rest; a bad anchor, an unknown rule and a combination naming what the table lacks are problems."""
    from harness.app.combinations import load_dimensions

    _write_files(tmp_path)
    table = tmp_path / "dimensions.yml"
    table.write_text(f"""
dimensions:
- id: widget-kinds
  what: kinds of widget
  rules:
  - {{rule: CS-API-OPEN, asserts: it opens, left: {{blue: no blue paint here}}}}
  - {{rule: CS-API-GONE, asserts: nothing}}
  values:
  - {{id: red, anchors: ["{_anchor(TEXT, "Drivers MUST open")}"], cue: red}}
  - {{id: green, anchors: ["{_anchor(TEXT, "Drivers MUST open")}"], cue: green}}
  - {{id: blue, anchors: ['0000000000000000'], cue: blue}}
  - {{id: gold, anchors: ["{_anchor(TEXT, "Drivers MUST open")}"], cue: gold, unreachable: no gold here}}
""")
    catalogues = [load_catalogue(tmp_path / "rules.yml", "change-streams")]
    tests = [
        LoadedTest("unified/a::CS-API-OPEN: red one [widget-kinds=red]", "CS-API-OPEN: red one [widget-kinds=red]"),
        LoadedTest("unified/a::CS-API-OPEN: pink [widget-kinds=pink]", "CS-API-OPEN: pink [widget-kinds=pink]"),
    ]
    cmap = build_map(TEXT, "widgets.md", catalogues, RuleIndex([]), tests, dimensions=load_dimensions(table))
    opened = next(c for c in cmap.rules if c.rule.id == "CS-API-OPEN")
    assert opened.combinations is not None and opened.combinations.summary() == "widget-kinds 1/3 (1 unreachable here)"
    assert opened.combinations.gaps() == ["widget-kinds=green: no check yet", "widget-kinds=blue: no blue paint here"]
    covers = opened.combinations.as_json()["dimensions"]["widget-kinds"]
    assert covers["covered"] == ["red"] and covers["unreachable"] == {"gold": "no gold here"}
    problems = "\n".join(cmap.problems)
    assert "widget-kinds/blue: anchor 0000000000000000 is not a sentence of widgets.md" in problems
    assert "CS-API-GONE ranges over a dimension, but no catalogue defines it" in problems
    assert "unified/a::CS-API-OPEN: pink [widget-kinds=pink]: names widget-kinds=pink" in problems


def test_the_project_map_shows_the_generated_combinations(capsys):
    """On the committed files: the option product, the pairs left with why, and the values no run produces."""
    from harness.app.coverage import DEFAULT_SPEC_TEXT

    if not DEFAULT_SPEC_TEXT.is_file():
        pytest.skip(f"no spec text at {DEFAULT_SPEC_TEXT}")
    status, out, _ = _coverage(capsys, "--report-only")
    assert status == 0
    assert "covers: watch-options 20/20 (8 unreachable here); watch-options x error-kinds pairs 80/100" in out
    assert "not reached: watch-options x error-kinds: 20 pair(s): under timeoutMS" in out
    assert "error-kinds=getMore-network-reset: needs --network-faults" in out
    status, out, _ = _coverage(capsys, "--format", "json", "--report-only")
    data = json.loads(out)
    steps = next(r for r in data["rules"] if r["id"] == "CS-RESUME-STEPS")["covers"]
    assert steps["pairs"] == [
        {"dimensions": ["watch-options", "error-kinds"], "total": 100, "covered": 80, "left": steps["pairs"][0]["left"]}
    ]
    assert {d["id"] for d in data["dimensions"]} >= {"watch-options", "error-kinds", "token-sources"}
