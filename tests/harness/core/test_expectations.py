"""Expected outcomes keyed by cause: a failure is known only when every cause is explained (docs/causes.md)."""

from __future__ import annotations

import pytest

from harness.core.causes import ERROR_MATCH, ERROR_RAISED, EVENT, NO_CHANGE, SET_UP, Cause
from harness.core.expectations import RULELESS_KINDS, ExpectationsError
from harness.engine.run import EXPECTATIONS_DIR
from harness.formats.expectations_file import load_expectations

ENTRY = """
  - id: {id}
    rule: {rule}
    kind: {kind}
    signature: {signature}
    reason: why {id}
    reproduction: repro {id}
"""


def _load(tmp_path, body, owner="target: t", name="e.yml"):
    path = tmp_path / name
    path.write_text(f"{owner}\nknown:\n{body}")
    return load_expectations(path)


def _entry(id="a", rule="SRV-X", kind="server-bug", signature='{clause: no-change, step: "operations[2]*"}', **more):
    extra = "".join(f"    {key}: {value}\n" for key, value in more.items())
    return ENTRY.format(id=id, rule=rule, kind=kind, signature=signature) + extra


NO_CHANGE_CAUSE = Cause(NO_CHANGE, step="operations[2] (iterateUntilDocumentOrError on stream)", rules=("CS-Y",))
WRONG_CODE = Cause(
    ERROR_MATCH,
    step="operations[1] (createChangeStream on coll)",
    path="operations[1].expectError.errorCode",
    error={"type": "OperationFailure", "code": 59, "message": "no such command: 'collMod'"},
    rules=("CS-Z",),
)


def test_a_failure_is_known_only_when_every_cause_is_explained(tmp_path):
    e = _load(tmp_path, _entry())
    one = e.classify("unified/f::t", "failed", [NO_CHANGE_CAUSE])
    assert one.known and one.entries == ("e.yml#a",) and one.reason == "e.yml#a: why a"
    assert one.causes[0].known == "e.yml#a" and one.causes[0].rules == ("SRV-X",)  # the entry's rule, from now on
    two = e.classify("unified/f::t", "failed", [NO_CHANGE_CAUSE, WRONG_CODE])  # a second, planted cause
    assert not two.expected and two.kind == "unexpected-failure" and two.unexplained == 1
    assert "1 of 2 cause(s) not explained" in two.reason
    assert [c.known for c in two.causes] == ["e.yml#a", ""]
    assert not e.classify("unified/f::t", "failed", [WRONG_CODE]).expected
    assert not e.classify("unified/f::t", "error", [NO_CHANGE_CAUSE]).expected  # the entry gives failed, not error


@pytest.mark.parametrize(
    "signature, matches",
    [
        ("{error_code: 59}", True),
        ("{error_code: 60}", False),
        ("{error_type: 'Operation*'}", True),
        ("{message: 'no such command'}", True),
        ("{message: '^collMod'}", False),
        ("{path: '*.errorCode', clause: error-match}", True),
        ("{path: '*.errorCode', clause: result}", False),
        ("{step: 'operations[1]*', error_code_name: CommandNotFound}", False),
    ],
)
def test_each_signature_field_must_match(tmp_path, signature, matches):
    e = _load(tmp_path, _entry(signature=signature))
    assert e.classify("x::t", "failed", [WRONG_CODE]).known is matches


def test_tests_limit_an_entry_and_an_exactly_named_test_that_passes_is_news(tmp_path):
    e = _load(tmp_path, _entry(tests='["unified/f::t"]'))
    assert e.classify("unified/f::t", "failed", [NO_CHANGE_CAUSE]).known
    assert not e.classify("unified/g::t", "failed", [NO_CHANGE_CAUSE]).expected
    assert e.classify("unified/f::t", "passed").kind == "unexpected-pass"
    assert e.classify("unified/g::t", "passed").kind == "pass"
    assert e.classify("unified/f::t", "skipped").kind == "skip"


def test_an_owner_s_file_holds_only_its_kinds(tmp_path):
    with pytest.raises(ExpectationsError, match="a target's file cannot hold a driver-bug"):
        _load(tmp_path, _entry(kind="driver-bug"))
    with pytest.raises(ExpectationsError, match="a driver's file cannot hold a server-not-implemented"):
        _load(tmp_path, _entry(kind="server-not-implemented"), owner="driver: d")
    both = _load(tmp_path, _entry(kind="driver-bug") + _entry(id="b", kind="server-bug"), owner="target: t\ndriver: d")
    assert [k.kind for k in both.known] == ["driver-bug", "server-bug"]


def test_a_harness_limitation_is_an_error_never_a_failure(tmp_path):
    with pytest.raises(ExpectationsError, match="a harness limitation gives an error"):
        _load(tmp_path, _entry(kind="harness-limitation"))
    e = _load(tmp_path, _entry(kind="harness-limitation", signature="{clause: set-up, message: x}", outcome="error"))
    assert e.classify("x::t", "error", [Cause(SET_UP, fact="x happened")]).known


@pytest.mark.parametrize(
    "body, message",
    [
        ("  - {test: 'a::*', reason: r}", "entries are keyed by cause, not by test"),
        (_entry(signature="{clause: no-change}"), "a signature needs at least one of"),
        (_entry(signature="{clause: weird, path: x}"), "signature clause 'weird' unknown"),
        (_entry(signature="{colour: red}"), r"signature fields \['colour'\] unknown"),
        (_entry(signature="{message: '('}"), "signature message is not a regular expression"),
        (_entry(signature="{error_code: '59'}"), "error_code must be an integer"),
        (_entry(kind="typo"), "kind 'typo' unknown"),
        (_entry(tests='["*"]'), "'tests' may not be '\\*'"),
        (_entry(outcome="skipped"), "outcome must be one of"),
        (_entry() + _entry(), r"entry ids must be unique in a file: \['a'\]"),
        (_entry().replace("    reproduction: repro a\n", ""), "'reproduction' must be a non-empty string"),
    ],
)
def test_bad_files_are_named(tmp_path, body, message):
    with pytest.raises(ExpectationsError, match=message) as raised:
        _load(tmp_path, body)
    assert "e.yml" in str(raised.value)


def test_a_file_names_exactly_one_owner(tmp_path):
    with pytest.raises(ExpectationsError, match="name the owner"):
        _load(tmp_path, _entry(), owner="nobody: t")
    assert _load(tmp_path, _entry(kind="driver-bug"), owner="target: t\ndriver: d").known  # a pair's file


def test_project_expectation_files_load_and_every_entry_names_a_catalogued_rule():
    from harness.formats.rule_files import load_catalogues

    known_rules = {rule.id for catalogue in load_catalogues() for rule in catalogue.rules}
    files = sorted(EXPECTATIONS_DIR.glob("**/*.yml"))
    assert files, f"no expected-outcomes files in {EXPECTATIONS_DIR}"
    for path in files:
        for entry in load_expectations(path).known:
            if entry.kind in RULELESS_KINDS:
                assert entry.rule == "" and entry.iteration_modes, f"{path}#{entry.id}"
                continue
            assert entry.rule in known_rules, f"{path}#{entry.id}: rule {entry.rule} is not catalogued"


def test_entries_that_explained_no_cause_are_found(tmp_path):
    e = _load(tmp_path, _entry() + _entry(id="b", signature="{error_code: 59}"))
    used = set(e.classify("x::t", "failed", [WRONG_CODE]).entries)
    assert [k.ref for k in e.unused(used)] == ["e.yml#a"]


def test_auto_reads_the_target_s_the_driver_s_and_the_pair_s_files(tmp_path, monkeypatch):
    from harness.engine import run as run_module

    (tmp_path / "drivers").mkdir()
    (tmp_path / "pairs").mkdir()
    _load(tmp_path, _entry(), owner="target: t", name="t.yml")
    _load(
        tmp_path / "drivers", _entry(kind="driver-bug", signature="{error_code: 59}"), owner="driver: d", name="d.yml"
    )
    (tmp_path / "pairs" / "t+d.yml").write_text(
        'target: t\ndriver: d\nadjust: {uriOptions: {x: "1"}, reason: "pair"}\n'
    )
    monkeypatch.setattr(run_module, "EXPECTATIONS_DIR", tmp_path)
    both = run_module.expectations_for("auto", "t", "d")
    assert [k.ref for k in both.known] == ["t.yml#a", "drivers/d.yml#a"] and both.uri_options == {"x": "1"}
    assert both.classify("x::t", "failed", [NO_CHANGE_CAUSE, WRONG_CODE]).known  # one cause from each file
    other = run_module.expectations_for("auto", "t", "other")
    assert not other.classify("x::t", "failed", [NO_CHANGE_CAUSE, WRONG_CODE]).expected
    assert other.uri_options == {}
    assert run_module.expectations_for("none", "t", "d").known == []


def test_a_pair_file_adjusts_the_driver_s_uri_and_needs_a_reason(tmp_path):
    from harness.core.expectations import with_uri_options

    path = tmp_path / "e.yml"
    path.write_text(
        'target: t\ndriver: d\nadjust: {uriOptions: {serverMonitoringMode: poll, retryReads: false}, reason: "why"}\n'
    )
    e = load_expectations(path)
    assert e.uri_options == {"serverMonitoringMode": "poll", "retryReads": "false"}
    assert e.adjustments[0].reason == "why" and e.adjustments[0].source.endswith("e.yml")
    assert (
        with_uri_options("mongodb://h:1", e.uri_options) == "mongodb://h:1/?serverMonitoringMode=poll&retryReads=false"
    )
    assert with_uri_options("mongodb://h:1/?serverMonitoringMode=stream", {"serverMonitoringMode": "poll"}) == (
        "mongodb://h:1/?serverMonitoringMode=stream"
    ), "an option the connection string sets is left as it is"
    assert with_uri_options("mongodb://h:1/db?w=1", {"a": "b"}) == "mongodb://h:1/db?w=1&a=b"
    path.write_text("target: t\ndriver: d\nadjust: {uriOptions: {serverMonitoringMode: poll}}\n")
    with pytest.raises(ExpectationsError, match="'adjust' needs 'uriOptions'"):
        load_expectations(path)


def test_an_unexplained_cause_beside_a_known_one_keeps_its_event_path():
    cause = Cause(EVENT, step="expectEvents[0]", path="expectEvents[0][1].commandStartedEvent.command.x")
    assert cause.as_record()["path"].endswith("command.x") and cause.as_record()["known"] is None
    assert Cause(ERROR_RAISED).flow_breaking and not cause.flow_breaking


READ_AHEAD = """
  - id: ahead
    kind: read-ahead
    iteration_modes: [emitter, stream]
    signature: {clause: event, path: "expectEvents[*][*]*"}
    reason: a getMore read ahead
    reproduction: docs/executor-protocol.md 6.4.1
"""


def test_an_entry_with_iteration_modes_applies_only_to_runs_in_those_modes(tmp_path):
    e = _load(tmp_path, _entry(kind="driver-bug", iteration_modes="[stream]"), owner="driver: d")
    assert e.classify("x::t", "failed", [NO_CHANGE_CAUSE]).known  # loaded whole: every entry
    assert e.for_mode("stream").classify("x::t", "failed", [NO_CHANGE_CAUSE]).known
    in_next = e.for_mode("next")
    assert not in_next.known, "another mode's entry is not loaded, so it is never reported unused either"
    assert not in_next.classify("x::t", "failed", [NO_CHANGE_CAUSE]).known
    with pytest.raises(ExpectationsError, match=r"iteration modes \['pull'\] unknown"):
        _load(tmp_path, _entry(kind="driver-bug", iteration_modes="[pull]"), owner="driver: d")


def test_a_read_ahead_names_no_rule_and_the_cause_it_explains_stands_for_none(tmp_path):
    e = _load(tmp_path, READ_AHEAD, owner="driver: d")
    order = Cause(
        EVENT, step="expectEvents[0]", path="expectEvents[0][3].commandStartedEvent.commandName", rules=("CS-Y",)
    )
    found = e.for_mode("emitter").classify("x::t", "failed", [order])
    assert found.known and found.causes[0].rules == ()
    with pytest.raises(ExpectationsError, match="names the push modes it applies to"):
        _load(tmp_path, READ_AHEAD.replace("    iteration_modes: [emitter, stream]\n", ""), owner="driver: d")
    with pytest.raises(ExpectationsError, match="breaks no rule, so it names none"):
        _load(
            tmp_path,
            READ_AHEAD.replace("    kind: read-ahead\n", "    kind: read-ahead\n    rule: CS-Y\n"),
            owner="driver: d",
        )
    with pytest.raises(ExpectationsError, match="a target's file cannot hold a read-ahead"):
        _load(tmp_path, READ_AHEAD)
