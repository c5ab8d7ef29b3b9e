"""The dimension table, the combination form of descriptions, and the generated checks being what the table says.

The generated scenarios are committed, so they can drift from the table: the first test fails whenever they are
not what the generator writes now, and says the command that rewrites them. The rest hold the table's reader to
its shape (a malformed entry names the file and the entry) and the description form to one parser.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.app import combinations_files
from harness.app.cli import main
from harness.app.combinations import (
    DimensionError,
    combination_of,
    describe,
    load_dimensions,
)
from harness.app.combinations_files import COMMAND, rendered, scenario_files, stale
from harness.app.combinations_scenarios import stop_tests
from harness.core.rules import rules_from_description
from harness.formats.loaders import load_paths
from harness.formats.rule_files import load_catalogues

TABLE = load_dimensions()
#: A table of one dimension with one value, open for its rules.
VALUE_V = "dimensions: [{id: a, what: x, values: [{id: v, anchors: [h], cue: c}],"


def test_the_committed_generated_files_are_what_the_generator_writes_now():
    behind = stale(TABLE)
    assert not behind, f"generated files out of date: {[str(p) for p in behind]}; run `{COMMAND}`"


def test_a_description_ends_with_its_combination_in_one_form():
    text = describe("CS-RESUME-STEPS: the resume keeps it", {"watch-options": "collation", "error-kinds": "x-y"})
    assert text == "CS-RESUME-STEPS: the resume keeps it [watch-options=collation, error-kinds=x-y]"
    assert combination_of(text) == {"watch-options": "collation", "error-kinds": "x-y"}
    assert rules_from_description(text) == ["CS-RESUME-STEPS"]
    assert combination_of("CS-X-Y: a [list] in the middle, then words") == {}
    assert combination_of("CS-X-Y: no combination") == {}
    assert combination_of("CS-X-Y: not spaced [a=b,c=d]") == {}


def test_every_generated_test_names_the_rules_the_table_gives_its_combination():
    loaded = load_paths([combinations_files.GENERATED])
    assert loaded and all(t.load_error is None for t in loaded)
    seen = set()
    for test in loaded:
        combination = combination_of(test.description)
        assert combination, test.description
        assert rules_from_description(test.description) == TABLE.rules_checked(combination), test.description
        assert TABLE.problems(test.description, test.test_id) == []
        seen.add(tuple(sorted(combination.items())))
    assert len(seen) == len(loaded), "each combination is generated once"


def test_the_option_product_is_every_reachable_option_with_every_resumable_getmore_error_but_those_left():
    plan = TABLE.pairs[0]
    options, kinds = TABLE.pair_values(plan)
    built = [b for _, tests in scenario_files(TABLE).values() for b in tests if "watch-options" in b.combination]
    pairs = {(b.combination["watch-options"], b.combination["error-kinds"]) for b in built}
    expected = {(o.id, k.id) for o in options for k in kinds if not plan.why_left([k.id])}
    assert pairs == expected and len(expected) == len(options) * (len(kinds) - 1)
    assert len(built) < 120, "the full product stays modest; above, generate all pairs instead"


def test_the_table_names_only_catalogued_rules_and_each_value_carries_anchors():
    catalogued = {rule.id for catalogue in load_catalogues() for rule in catalogue.rules}
    assert set(TABLE.ranged_rules()) <= catalogued
    assert {d.id for d in TABLE.dimensions} == {
        "watch-options",
        "error-kinds",
        "token-sources",
        "iteration-modes",
        "next-calls",
        "server-states",
    }
    assert all(v.anchors for d in TABLE.dimensions for v in d.values)


def test_a_value_left_for_a_rule_keeps_that_rule_off_the_combination():
    """writes-elsewhere moves the token where no check can see it: the test names neither token-tracking rule."""
    rules = TABLE.rules_checked({"token-sources": "pbrt-empty-getmore", "server-states": "writes-elsewhere"})
    assert "CS-TOKEN-CACHE-PBRT-EMPTY" not in rules and "CS-TOKEN-TRACK" not in rules
    rules = TABLE.rules_checked({"token-sources": "pbrt-empty-getmore", "server-states": "filtered-writes"})
    assert {"CS-TOKEN-CACHE-PBRT-EMPTY", "CS-TOKEN-TRACK"} <= set(rules)


def test_each_way_a_stream_stops_is_checked_with_each_next_call_but_the_pairs_its_rules_leave():
    """close and invalidate, each with every next-calls value a rule of theirs does not leave; the server closing a
    cursor on its own is unreachable with its reason, so nothing is generated for it and it is never unranged."""
    modes, calls = TABLE.dimension("iteration-modes"), TABLE.dimension("next-calls")
    assert modes is not None and calls is not None
    assert modes.value("server-closed-cursor").unreachable
    built = stop_tests(TABLE)
    stated = {(b.combination["iteration-modes"], b.combination["next-calls"]) for b in built}
    expected = {
        (stop, call.id)
        for stop in ("close", "invalidate")
        for call in calls.values
        if TABLE.rules_checked({"iteration-modes": stop, "next-calls": call.id})
    }
    assert stated == expected and {stop for stop, _ in stated} == {"close", "invalidate"}
    for item in built:
        assert item.rules == TABLE.rules_checked(item.combination) and item.rules
        # What the call after the stop returns or raises is the driver's: only the commands it sends are compared.
        (call,) = [op for op in item.test["operations"] if op["name"] == item.combination["next-calls"]][-1:]
        assert call == {"name": call["name"], "object": "changeStream0", "ignoreResultAndError": True}
        assert all("ignoreExtraEvents" not in block for block in item.test["expectEvents"]), "exact command lists"


def test_a_way_of_stopping_names_only_the_rules_whose_range_holds_it():
    """Closing names the close rules, an invalidate its own; neither names the resume rule of the ways to iterate."""
    assert TABLE.rules_checked({"iteration-modes": "close", "next-calls": "iterateOnce"}) == [
        "CS-API-CLOSE",
        "CS-UTF-CLOSE",
    ]
    assert TABLE.rules_checked({"iteration-modes": "invalidate", "next-calls": "iterateOnce"}) == [
        "CS-RTOKEN-INVALIDATE-CLOSED"
    ]


@pytest.mark.parametrize(
    "entry, message",
    [
        ("dimensions: [{id: a, what: x, values: [{id: v, cue: c}]}]", "'anchors' is a non-empty list"),
        ("dimensions: [{id: a, what: x, values: [{id: 'v w', anchors: [h], cue: c}]}]", "a value id is letters"),
        ("dimensions: [{id: a, what: x, values: [{id: v, anchors: [h], cue: c, colour: red}]}]", "unknown keys colour"),
        (VALUE_V + " rules: [{rule: cs-x, asserts: y}]}]", "'cs-x' is not a rule id"),
        (
            VALUE_V + " rules: [{rule: CS-A-B, asserts: y, left: {w: why}}]}]",
            "'left' names values this dimension lacks: w",
        ),
        ("dimensions: [{id: a, what: x, values: []}]", "'values' is a non-empty list"),
        ("dimension: []", "expected a mapping with a 'dimensions' list"),
    ],
)
def test_a_malformed_table_names_the_file_and_the_entry(tmp_path: Path, entry: str, message: str):
    path = tmp_path / "dimensions.yml"
    path.write_text(entry + "\n")
    with pytest.raises(DimensionError, match=message) as raised:
        load_dimensions(path)
    assert str(path) in str(raised.value)


def test_the_command_writes_what_is_stale_and_says_so(tmp_path, monkeypatch, capsys):
    """--write-combinations rewrites a generated file that drifted, and leaves the pin to the pin writer."""
    generated = tmp_path / "generated"
    traces = tmp_path / "traces-generated.yml"
    monkeypatch.setattr(combinations_files, "GENERATED", generated)
    monkeypatch.setattr(combinations_files, "TRACES", traces)
    monkeypatch.setattr("harness.app.pin_writer.pin_source", lambda source: f"pinned {source}")
    generated.mkdir()
    (generated / "combined-gone.yml").write_text("stale")
    assert main(["coverage", "--write-combinations"]) == 0
    out = capsys.readouterr().out
    assert f"removed {generated / 'combined-gone.yml'}" in out and "pinned project:" in out
    assert not stale(TABLE) and set(rendered(TABLE)) == {traces, *generated.glob("*.yml")}
