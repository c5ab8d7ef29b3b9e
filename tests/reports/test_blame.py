"""reports.blame: each cause of a failing cell x test laid at its target, its driver, the pair, everywhere or none.

Planted data: 3 drivers x 3 targets (plus one cell of a fourth driver that only passes), one test per situation,
each failure planted with its causes (docs/causes.md) so that exactly one answer is right for each cause; every
row's answer is asserted. Two tests fail with two causes at once, where only blame by cause can tell them apart,
one fails on records written before causes (the message stands for the cause), and one shows that a failure that
stopped its test early is no evidence that a later cause is absent.
"""

from __future__ import annotations

import pytest

from reports.collect import TableRows
from tests.spark_support import at, record, verdicts_frame

DRIVERS = {"pymongo": "4.20.0", "node": "6.21.0", "java": "5.6.0"}
TARGETS = {"secantusdb": "0.7.0", "mongo-java-server": "1.47.0", "secantusdb-daemon": "0.7.1"}
PY, NODE, JAVA = (f"{name} {version}" for name, version in DRIVERS.items())
EMB, MJS, DAEMON = (f"{name} {version} replicaset native" for name, version in TARGETS.items())
LONE = "go 1.17.0"  # a fourth driver, on the embedded target only, that runs one passing test: a cell with no failure

TARGET_T = "unified/cs::operationTime missing"  # fails on MJS with every driver (a known cause), passes elsewhere
DRIVER_T = "unified/cs::node loses the resume token"  # fails with node on every target, others pass
PAIR_T = "unified/cs::java on the daemon"  # fails only with java on the daemon
EVERYWHERE_T = "unified/cs::no one meets it"  # fails in every cell
ONE_TARGET_T = "unified/cs::runs on MJS only"  # skipped on the other targets, fails with every driver on MJS
FLAKY_T = "unified/cs::daemon timing"  # flaky with pymongo and failing with the others on the daemon
SKIP_T = "unified/cs::java skips it on MJS"  # java's skip on MJS is no evidence: still the target
BLOCKED_T = "unified/cs::node and the daemon"  # one cause: node shows it everywhere, the daemon with everyone
SPLIT_T = "unified/cs::node and the daemon apart"  # the same cells, two causes: node's and the daemon's
ONE_CELL_T = "unified/cs::one cell only"  # decided only with pymongo on the embedded target
ONE_DRIVER_T = "unified/cs::java only"  # skipped by the other drivers, fails with java on every target
DRIFT_T = "unified/cs::node fails differently on MJS"  # records without causes; another message on MJS
STOPPED_T = "unified/cs::pymongo stops early on the embedded target"  # the daemon skips it
OPTIME_T = "unified/cs::pymongo sends one start point, and refuses MJS's reply"  # the daemon skips it
EVENTS_T = "unified/cs::an early event difference hides a later one"  # the daemon skips it
PASSING_T = "unified/cs::passes everywhere"

P, S = "passed", "skipped"
#: Each planted cause by its tag: clause, the entry that explains it (None: unexplained) and its rules. A fact reads
#: ``TAG: ...``, the same with every driver unless ``{driver}`` is in it (an entry's cause, worded per driver).
CAUSES = {
    "opTime": ("error-raised", "mongo-java-server.yml#no-operation-time", ["SRV-REPLY-OPTIME"], "{driver} refused it"),
    "token": ("result", None, ["CS-RESUME-TOKEN"], "expected a token, got <missing>"),
    "event": ("event", None, ["CS-EVENT"], "expected insert, got update"),
    "nochange": ("no-change", None, ["CS-X"], "waited 10.0s and no change came"),
    "one": ("result", None, ["CS-X"], "expected 1, got 2"),
    "timing": ("result", None, ["CS-X"], "expected 2 events, got 1"),
    "skip": ("result", None, ["CS-X"], "expected 3, got 4"),
    "blocked": ("result", None, ["CS-X"], "expected 5, got 6"),
    "N": ("result", None, ["CS-X"], "node's own: expected a, got b"),
    "M": ("outcome", None, ["CS-X"], "the daemon's own: expected 7 documents, got 8"),
    "lonely": ("result", None, ["CS-X"], "expected 9, got 10"),
    "java": ("result", None, ["CS-X"], "expected 11, got 12"),
    "stop": ("error-raised", None, ["CS-X"], "raised OperationFailure, code 13"),
    "D": ("result", None, ["CS-X"], "expected 14, got 15"),
    "ev": ("event", None, ["CS-X"], "expectEvents[0][0].command.resumeAfter: expected a token, got <missing>"),
    "opt": ("error-raised", None, ["CS-X"], "raised InvalidOperation: operationTime missing"),
    "early": ("event", None, ["CS-X"], "expectEvents[0][0]: expected insert, got update"),
    "late": ("event", None, ["CS-X"], "expectEvents[0][2]: expected delete, got drop"),
}
#: Clauses after which a test stops: the records name later checks in ``not_reached``.
STOPPING = ("error-raised", "error-not-raised", "no-change")
#: Tests whose records were written before causes: the failure message is the cause.
WITHOUT_CAUSES = {DRIFT_T}


def plan() -> dict[str, dict[tuple[str, str], list]]:
    """Each test's outcomes (one per repeat) per (driver, target): passed, skipped, or the tags of its causes."""
    grid = [(d, t) for d in (PY, NODE, JAVA) for t in (EMB, MJS, DAEMON)]

    def each(outcome_of) -> dict[tuple[str, str], list]:
        return {(d, t): outcome_of(d, t) for d, t in grid}

    def split(d, t):
        daemon = ("M", "M") if d == JAVA else ("M",)  # java breaks the daemon's fault at two steps: one verdict
        tags = (("N",) if d == NODE else ()) + (daemon if t == DAEMON else ())
        return [tags or P]

    tests = {
        TARGET_T: each(lambda d, t: [("opTime",)] if t == MJS else [P]),
        DRIVER_T: each(lambda d, t: [("token",)] if d == NODE else [P]),
        PAIR_T: each(lambda d, t: [("event",)] if (d, t) == (JAVA, DAEMON) else [P]),
        EVERYWHERE_T: each(lambda d, t: [("nochange",)]),
        ONE_TARGET_T: each(lambda d, t: [("one",)] if t == MJS else [S]),
        FLAKY_T: each(lambda d, t: ([P, ("timing",)] if d == PY else [("timing",)]) if t == DAEMON else [P]),
        SKIP_T: each(lambda d, t: ([S] if d == JAVA else [("skip",)]) if t == MJS else [P]),
        BLOCKED_T: each(lambda d, t: [("blocked",)] if d == NODE or t == DAEMON else [P]),
        SPLIT_T: each(split),
        ONE_CELL_T: each(lambda d, t: [("lonely",)] if (d, t) == (PY, EMB) else [S]),
        ONE_DRIVER_T: each(lambda d, t: [("java",)] if d == JAVA else [S]),
        DRIFT_T: each(lambda d, t: [("reply",) if t == MJS else ("drift",)] if d == NODE else [P]),
        STOPPED_T: each(lambda d, t: [S] if t == DAEMON else [("stop",)] if (d, t) == (PY, EMB) else [P]),
        PASSING_T: each(lambda d, t: [P]),
    }
    tests[STOPPED_T].update({(d, MJS): [("D",)] for d in (PY, NODE, JAVA)})
    tests[OPTIME_T] = each(lambda d, t: [S] if t == DAEMON else [P])
    tests[OPTIME_T].update({(PY, EMB): [("ev",)], (PY, MJS): [("opt",)]})
    tests[EVENTS_T] = each(lambda d, t: [S] if t == DAEMON else [("late",)] if t == MJS else [P])
    tests[EVENTS_T][(PY, EMB)] = [("early",)]
    tests[PASSING_T][(LONE, EMB)] = [P]
    return tests


EXPECTED = {  # (driver, target, test, cause tag) -> where the cause lies
    **{(d, MJS, TARGET_T, "opTime"): "target" for d in (PY, NODE, JAVA)},
    **{(NODE, t, DRIVER_T, "token"): "driver" for t in (EMB, MJS, DAEMON)},
    (JAVA, DAEMON, PAIR_T, "event"): "pair",
    **{(d, t, EVERYWHERE_T, "nochange"): "everywhere" for d in (PY, NODE, JAVA) for t in (EMB, MJS, DAEMON)},
    **{(d, MJS, ONE_TARGET_T, "one"): "undecided" for d in (PY, NODE, JAVA)},
    **{(d, DAEMON, FLAKY_T, "timing"): "target" for d in (PY, NODE, JAVA)},
    **{(d, MJS, SKIP_T, "skip"): "target" for d in (PY, NODE)},
    **{(NODE, t, BLOCKED_T, "blocked"): "undecided" for t in (EMB, MJS, DAEMON)},
    **{(d, DAEMON, BLOCKED_T, "blocked"): "undecided" for d in (PY, JAVA)},
    # the same cells as BLOCKED_T, but two causes: each is decided, node's failures being evidence for the daemon's
    **{(NODE, t, SPLIT_T, "N"): "driver" for t in (EMB, MJS, DAEMON)},
    **{(d, DAEMON, SPLIT_T, "M"): "target" for d in (PY, NODE, JAVA)},
    (PY, EMB, ONE_CELL_T, "lonely"): "undecided",
    **{(JAVA, t, ONE_DRIVER_T, "java"): "undecided" for t in (EMB, MJS, DAEMON)},
    # without causes the message is the cause: node's one message on two targets is node's; MJS's is another
    **{(NODE, t, DRIFT_T, "drift"): "driver" for t in (EMB, DAEMON)},
    (NODE, MJS, DRIFT_T, "reply"): "undecided",
    # pymongo's error stopped the test on the embedded target: no evidence that D is absent there
    (PY, EMB, STOPPED_T, "stop"): "pair",
    **{(d, MJS, STOPPED_T, "D"): "undecided" for d in (PY, NODE, JAVA)},
    # pymongo's event difference on the embedded target ran every operation: it shows MJS's error absent there;
    # its error on MJS stopped the test before the events: no evidence for the event's cause there
    (PY, MJS, OPTIME_T, "opt"): "pair",
    (PY, EMB, OPTIME_T, "ev"): "undecided",
    # an event difference ends its list: pymongo's early one on the embedded target may hide the late one
    **{(d, MJS, EVENTS_T, "late"): "undecided" for d in (PY, NODE, JAVA)},
    (PY, EMB, EVENTS_T, "early"): "undecided",
}


def _cause(tag: str, driver: str, repeat: int) -> dict:
    clause, known, rules, fact = CAUSES[tag]
    step = "operations[2] (iterateUntilDocumentOrError on changeStream0)"
    return {
        "clause": clause,
        "step": step,
        "path": "",
        "expected": "",
        "actual": "",
        "error": None,
        "waited_s": None,
        "fact": f"{tag}: {fact.format(driver=driver)} (run {repeat})",
        "rules": rules,
        "known": known,
    }


def failure_message(tag: str, repeat: int) -> str:
    """A record without causes: one driver words one failure the same way on every target (numbers aside)."""
    return f"{tag}: Expected field 'operationTime' missing (run {repeat})" if tag == "reply" else f"{tag}: 1 != 2"


def planted_records() -> list[dict]:
    out, minute = [], 0
    for test_id, cells in plan().items():
        for (driver, target), outcomes in cells.items():
            driver_name, driver_version = driver.split(" ")
            target_name, target_version = target.split(" ")[:2]
            for repeat, outcome in enumerate(outcomes):
                minute += 1
                failing = isinstance(outcome, tuple)
                if test_id in WITHOUT_CAUSES:
                    causes, message = [], failure_message(outcome[0], repeat) if failing else ""
                else:
                    causes = [_cause(tag, driver_name, repeat) for tag in outcome] if failing else []
                    message = "\n".join(c["fact"] for c in causes)
                known = bool(causes) and all(c["known"] for c in causes)
                rec = record(
                    test_id,
                    "failed" if failing else outcome,
                    message,
                    run_id=f"{driver}/{target}/{repeat}",
                    driver_version=driver_version,
                    target_version=target_version,
                    started_at=at(minute),
                    expected=True if known else None,
                )
                rec["driver"]["name"], rec["target"]["name"] = driver_name, target_name
                if known:
                    rec["expectation"]["kind"] = "known-failure"
                rec["causes"] = causes
                stopped = any(c["clause"] in STOPPING for c in causes)
                rec["not_reached"] = ["expectEvents[0]"] if stopped else []
                if test_id in WITHOUT_CAUSES:
                    del rec["causes"], rec["not_reached"]
                out.append(rec)
    return out


@pytest.fixture(scope="module")
def verdicts(spark):
    return verdicts_frame(spark, planted_records()).cache()


@pytest.fixture(scope="module")
def blamed(verdicts):
    from reports.blame import blame

    return blame(verdicts).cache()


def _tag(row) -> str:
    return row["fact"].split(":")[0]


@pytest.fixture(scope="module")
def rows(blamed):
    return {(r["driver"], r["target"], r["test_id"], _tag(r)): r.asDict() for r in blamed.collect()}


@pytest.fixture(scope="module")
def per_cell(spark, verdicts, blamed):
    from reports.blame import blame_cells
    from reports.conformance import cells
    from reports.versions import version_dimension

    versions = version_dimension(spark, verdicts, ["driver_version", "target_version"])
    return [r.asDict() for r in blame_cells(cells(verdicts, versions), blamed, versions).collect()]


def test_every_cause_of_every_failing_cell_and_test_is_laid_where_planted(blamed, rows):
    assert blamed.count() == len(rows)  # one row per cell x test x cause
    assert {key: row["cause"] for key, row in rows.items()} == EXPECTED


def test_a_target_row_says_why_and_lists_the_other_cells_it_was_decided_from(rows):
    row = rows[(PY, MJS, TARGET_T, "opTime")]
    assert row["reason"] == (
        "every driver that decided it on this target (3) shows it, and each of them is clear of it on another target"
    )
    assert row["evidence"] == [  # the other drivers here, this driver elsewhere, then the rest
        f"shows it with {JAVA} on {MJS}",
        f"shows it with {NODE} on {MJS}",
        f"clear with {PY} on {EMB}",
        f"clear with {PY} on {DAEMON}",
        f"clear with {JAVA} on {EMB}",
        f"clear with {NODE} on {EMB}",
        f"clear with {JAVA} on {DAEMON}",
        f"clear with {NODE} on {DAEMON}",
    ]
    assert (row["status"], row["test_status"], row["failures"], row["passed"], row["seen"]) == ("fail", "fail", 1, 0, 1)
    assert row["message"] == "opTime: pymongo refused it (run 0)" and row["fact"] == row["message"]
    # an entry's cause is one signature whatever each driver's fact says: clause, rule and entry
    assert row["signature"] == "error-raised | SRV-REPLY-OPTIME | mongo-java-server.yml#no-operation-time"
    assert rows[(NODE, MJS, TARGET_T, "opTime")]["signature"] == row["signature"]
    assert (row["clause"], row["rules"], row["known"]) == (
        "error-raised",
        ["SRV-REPLY-OPTIME"],
        "mongo-java-server.yml#no-operation-time",
    )
    assert (row["expected"], row["expectation_kinds"]) == (True, "known-failure")
    assert (row["driver_name"], row["driver_version"], row["target_name"], row["target_version"]) == (
        "pymongo",
        "4.20.0",
        "mongo-java-server",
        "1.47.0",
    )


def test_an_unexplained_cause_is_grouped_by_its_clause_and_fact_pattern(rows):
    row = rows[(NODE, EMB, DRIVER_T, "token")]
    assert row["signature"] == "result | token: expected a token, got <missing> (run <n>)"
    assert (row["known"], row["expected"]) == (None, None)  # no expected-outcomes file listed it


def test_the_evidence_is_capped_nearest_cells_first(verdicts, rows, monkeypatch):
    from reports import blame

    monkeypatch.setattr(blame, "EVIDENCE", 3)
    capped = blame.blame(verdicts).where(f"test_id = '{TARGET_T}' and cell = '{PY} / {MJS}'").first()
    assert capped["evidence"] == rows[(PY, MJS, TARGET_T, "opTime")]["evidence"][:3]
    assert (capped["other_cells"], rows[(PY, MJS, TARGET_T, "opTime")]["other_cells"]) == (8, 8)


def test_driver_pair_and_everywhere_reasons(rows):
    assert rows[(NODE, EMB, DRIVER_T, "token")]["reason"] == (
        "this driver shows it on every target that decided it (3), and another driver is clear of it on each of them"
    )
    assert rows[(JAVA, DAEMON, PAIR_T, "event")]["reason"] == (
        "another driver is clear of it on this target, and this driver is clear of it elsewhere"
    )
    assert rows[(PY, EMB, EVERYWHERE_T, "nochange")]["reason"] == (
        "every cell that decided it shows it (3 drivers, 3 targets)"
    )


def test_undecided_rows_say_what_is_missing_instead_of_guessing(rows):
    assert rows[(NODE, MJS, ONE_TARGET_T, "one")]["reason"] == (
        "every driver that decided it shows it (3), and no other target decided it"
    )
    assert rows[(JAVA, DAEMON, ONE_DRIVER_T, "java")]["reason"] == (
        "every target that decided it shows it (3), and no other driver decided it"
    )
    assert rows[(PY, EMB, ONE_CELL_T, "lonely")]["reason"] == "no other cell decided it"
    assert rows[(PY, EMB, ONE_CELL_T, "lonely")]["evidence"] == []
    # node shows it everywhere, but so does the daemon with everyone: node is not shown to be the only place
    assert rows[(NODE, EMB, BLOCKED_T, "blocked")]["reason"] == (
        f"this driver shows it on every target, but no other driver is clear of it on {DAEMON}"
    )
    assert rows[(NODE, DAEMON, BLOCKED_T, "blocked")]["reason"] == (
        f"every driver on this target shows it, but it is clear on no other target with {NODE}; "
        f"this driver shows it on every target, but no other driver is clear of it on {DAEMON}"
    )
    assert rows[(PY, DAEMON, BLOCKED_T, "blocked")]["reason"] == (
        f"every driver on this target shows it, but it is clear on no other target with {NODE}"
    )


def test_two_causes_in_one_cell_are_blamed_apart(rows):
    """Where one cause per test could not decide (BLOCKED_T), two causes can: node's failures on the other
    targets reached every check without the daemon's cause, and the others' failures on the daemon without node's."""
    node_daemon = {key[3]: row for key, row in rows.items() if key[:3] == (NODE, DAEMON, SPLIT_T)}
    assert {tag: row["cause"] for tag, row in node_daemon.items()} == {"N": "driver", "M": "target"}
    assert f"clear with {PY} on {DAEMON}" in node_daemon["N"]["evidence"]  # PY failed there, on M only
    assert f"clear with {NODE} on {EMB}" in node_daemon["M"]["evidence"]  # node failed there, on N only
    assert node_daemon["N"]["test_status"] == node_daemon["M"]["test_status"] == "fail"
    assert (rows[(JAVA, DAEMON, SPLIT_T, "M")]["seen"], rows[(JAVA, DAEMON, SPLIT_T, "M")]["failures"]) == (1, 1)


def test_a_failure_that_stopped_its_test_is_no_evidence_for_a_later_cause(rows):
    # pymongo's error on the embedded target left the test's later checks unreached: D is not shown absent there
    row = rows[(PY, MJS, STOPPED_T, "D")]
    assert f"{PY} on {EMB}" not in " ".join(row["evidence"])
    assert row["reason"] == (
        f"every driver on this target shows it, but it is clear on no other target with {PY}; "
        "this driver decided it on no other target"
    )
    # while the failures on MJS reached every check, so they are clear of pymongo's error: the pair
    stop = rows[(PY, EMB, STOPPED_T, "stop")]
    assert f"clear with {PY} on {MJS}" in stop["evidence"]


def test_a_failure_that_ran_every_operation_is_evidence_except_for_a_list_it_cut_short(rows):
    opt = rows[(PY, MJS, OPTIME_T, "opt")]
    assert f"clear with {PY} on {EMB}" in opt["evidence"]  # failed there on an event: every operation ran
    assert rows[(PY, EMB, OPTIME_T, "ev")]["reason"] == "this driver decided it on no other target"
    late = rows[(PY, MJS, EVENTS_T, "late")]
    assert f"{PY} on {EMB}" not in " ".join(late["evidence"])  # its early event difference ended the list
    assert late["reason"] == (
        f"every driver on this target shows it, but it is clear on no other target with {PY}; "
        "this driver decided it on no other target"
    )
    assert rows[(PY, EMB, EVENTS_T, "early")]["reason"] == "this driver decided it on no other target"


def test_a_record_without_causes_is_blamed_by_its_message(rows):
    assert rows[(NODE, EMB, DRIFT_T, "drift")]["reason"] == (
        "this driver shows it on every target that decided it (2), and another driver is clear of it on each of them"
    )
    assert rows[(NODE, EMB, DRIFT_T, "drift")]["clause"] == "message"
    assert rows[(NODE, MJS, DRIFT_T, "reply")]["signature"] == (
        "message | reply: Expected field '<str>' missing (run <n>)"
    )
    assert rows[(NODE, MJS, DRIFT_T, "reply")]["reason"] == "this driver decided it on no other target"


def test_a_flaky_cell_counts_as_showing_it_and_keeps_its_messages(rows):
    row = rows[(PY, DAEMON, FLAKY_T, "timing")]
    assert (row["status"], row["passed"], row["failures"], row["seen"], row["cause"]) == ("flaky", 1, 1, 1, "target")
    assert row["messages"] == ["timing: expected 2 events, got 1 (run 1)"]
    assert f"shows it at times with {PY} on {DAEMON}" in rows[(NODE, DAEMON, FLAKY_T, "timing")]["evidence"]


def test_skipped_verdicts_are_no_evidence(rows):
    row = rows[(PY, MJS, SKIP_T, "skip")]
    assert row["reason"].startswith("every driver that decided it on this target (2)")
    assert not any(JAVA in line and MJS in line for line in row["evidence"])
    assert not any(key[:3] == (JAVA, MJS, SKIP_T) for key in rows)


def test_every_cell_is_summarised_including_one_with_no_failing_test(per_cell):
    got = {
        row["cell"]: (
            row["failing_tests"],
            row["causes"],
            row["cause_target"],
            row["cause_driver"],
            row["cause_pair"],
            row["cause_everywhere"],
            row["cause_undecided"],
            row["known_causes"],
        )
        for row in per_cell
    }
    want = {}
    for driver in (PY, NODE, JAVA):
        for target in (EMB, MJS, DAEMON):
            here = [(test, where) for (d, t, test, _), where in EXPECTED.items() if (d, t) == (driver, target)]
            counts = tuple(sum(where == c for _, where in here) for c in ("target", "driver", "pair", "everywhere"))
            undecided = sum(where == "undecided" for _, where in here)
            known = int(target == MJS)  # TARGET_T's entry
            want[f"{driver} / {target}"] = (len({test for test, _ in here}), len(here), *counts, undecided, known)
    want[f"{LONE} / {EMB}"] = (0, 0, 0, 0, 0, 0, 0, 0)
    assert got == want
    summaries = {row["cell"]: row["summary"] for row in per_cell}
    assert summaries[f"{LONE} / {EMB}"] == "no failing test"
    assert summaries[f"{NODE} / {DAEMON}"] == "6 failing tests, 7 causes: 2 target, 3 driver, 1 everywhere, 1 undecided"
    assert summaries[f"{JAVA} / {EMB}"] == "2 failing tests, 2 causes: 1 everywhere, 1 undecided"


def test_the_page_has_a_blame_section_with_the_summary_and_the_rows(tmp_path, blamed, per_cell):
    from reports.render import render_report

    rows = [r.asDict(recursive=True) for r in blamed.collect()]
    tables = {"blame": TableRows(rows, len(rows)), "blame_cells": TableRows(per_cell, len(per_cell))}
    html = render_report(tables, tmp_path / "report.html").read_text()
    section = html[html.index('<section id="blame">') :]
    section = section[: section.index("</section>")]
    assert section.count("<tr>") == 1 + len(per_cell) + 1 + len(rows)  # two tables, each with a heading row
    assert "no failing test" in section and f"{LONE} / {EMB}" in section
    assert "opTime: pymongo refused it (run 0)" in section
    assert "mongo-java-server.yml#no-operation-time" in section
    assert '<td class="ca-target">target</td>' in section
