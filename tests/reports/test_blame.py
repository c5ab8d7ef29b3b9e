"""reports.blame: each failing cell x test blamed on its target, its driver, the pair, everywhere, or undecided.

Planted data: 3 drivers x 3 targets (plus one cell of a fourth driver that only passes), one test per
situation, each planted outcome chosen so exactly one cause is right; every row's cause is asserted.
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

TARGET_T = "unified/cs::operationTime missing"  # fails on MJS with every driver, passes elsewhere
DRIVER_T = "unified/cs::node loses the resume token"  # fails with node on every target, others pass
PAIR_T = "unified/cs::java on the daemon"  # fails only with java on the daemon
EVERYWHERE_T = "unified/cs::no one meets it"  # fails in every cell
ONE_TARGET_T = "unified/cs::runs on MJS only"  # skipped on the other targets, fails with every driver on MJS
FLAKY_T = "unified/cs::daemon timing"  # flaky with pymongo and failing with the others on the daemon
SKIP_T = "unified/cs::java skips it on MJS"  # java's skip on MJS is no evidence: still the target
BLOCKED_T = "unified/cs::node and the daemon"  # node fails everywhere, the daemon fails with everyone
ONE_CELL_T = "unified/cs::one cell only"  # decided only with pymongo on the embedded target
ONE_DRIVER_T = "unified/cs::java only"  # skipped by the other drivers, fails with java on every target
DRIFT_T = "unified/cs::node fails differently on MJS"  # node fails everywhere, but on MJS with another message
PASSING_T = "unified/cs::passes everywhere"

F, P, S = "failed", "passed", "skipped"


def plan() -> dict[str, dict[tuple[str, str], list[str]]]:
    """Each test's outcomes (one per repeat) per (driver, target); a missing pair did not run it."""
    grid = [(d, t) for d in (PY, NODE, JAVA) for t in (EMB, MJS, DAEMON)]

    def each(outcome_of) -> dict[tuple[str, str], list[str]]:
        return {(d, t): outcome_of(d, t) for d, t in grid}

    tests = {
        TARGET_T: each(lambda d, t: [F] if t == MJS else [P]),
        DRIVER_T: each(lambda d, t: [F] if d == NODE else [P]),
        PAIR_T: each(lambda d, t: [F] if (d, t) == (JAVA, DAEMON) else [P]),
        EVERYWHERE_T: each(lambda d, t: [F]),
        ONE_TARGET_T: each(lambda d, t: [F] if t == MJS else [S]),
        FLAKY_T: each(lambda d, t: ([P, F] if d == PY else [F]) if t == DAEMON else [P]),
        SKIP_T: each(lambda d, t: ([S] if d == JAVA else [F]) if t == MJS else [P]),
        BLOCKED_T: each(lambda d, t: [F] if d == NODE or t == DAEMON else [P]),
        ONE_CELL_T: each(lambda d, t: [F] if (d, t) == (PY, EMB) else [S]),
        ONE_DRIVER_T: each(lambda d, t: [F] if d == JAVA else [S]),
        DRIFT_T: each(lambda d, t: [F] if d == NODE else [P]),
        PASSING_T: each(lambda d, t: [P]),
    }
    tests[PASSING_T][(LONE, EMB)] = [P]
    return tests


EXPECTED_CAUSES = {
    **{(d, MJS, TARGET_T): "target" for d in (PY, NODE, JAVA)},
    **{(NODE, t, DRIVER_T): "driver" for t in (EMB, MJS, DAEMON)},
    (JAVA, DAEMON, PAIR_T): "pair",
    **{(d, t, EVERYWHERE_T): "everywhere" for d in (PY, NODE, JAVA) for t in (EMB, MJS, DAEMON)},
    **{(d, MJS, ONE_TARGET_T): "undecided" for d in (PY, NODE, JAVA)},
    **{(d, DAEMON, FLAKY_T): "target" for d in (PY, NODE, JAVA)},
    **{(d, MJS, SKIP_T): "target" for d in (PY, NODE)},
    **{(NODE, t, BLOCKED_T): "undecided" for t in (EMB, MJS, DAEMON)},
    **{(d, DAEMON, BLOCKED_T): "undecided" for d in (PY, JAVA)},
    (PY, EMB, ONE_CELL_T): "undecided",
    **{(NODE, t, DRIFT_T): "undecided" for t in (EMB, MJS, DAEMON)},
    **{(JAVA, t, ONE_DRIVER_T): "undecided" for t in (EMB, MJS, DAEMON)},
}


def failure_message(test_id: str, driver: str, target: str, repeat: int) -> str:
    """One driver words one failure the same way on every target (numbers aside), except DRIFT_T on MJS."""
    if (test_id, target) == (DRIFT_T, MJS):
        return f"Expected field 'operationTime' missing from command response (run {repeat})"
    return f"{test_id} failed with {driver} (run {repeat})"


def planted_records() -> list[dict]:
    out, minute = [], 0
    for test_id, cells in plan().items():
        for (driver, target), outcomes in cells.items():
            driver_name, driver_version = driver.split(" ")
            target_name, target_version = target.split(" ")[:2]
            for repeat, outcome in enumerate(outcomes):
                minute += 1
                message = failure_message(test_id, driver, target, repeat) if outcome == F else ""
                rec = record(
                    test_id,
                    outcome,
                    message,
                    run_id=f"{driver}/{target}/{repeat}",
                    driver_version=driver_version,
                    target_version=target_version,
                    started_at=at(minute),
                    expected=True if test_id == TARGET_T and outcome == F else None,
                )
                rec["driver"]["name"], rec["target"]["name"] = driver_name, target_name
                out.append(rec)
    return out


@pytest.fixture(scope="module")
def verdicts(spark):
    return verdicts_frame(spark, planted_records()).cache()


@pytest.fixture(scope="module")
def blamed(verdicts):
    from reports.blame import blame

    return blame(verdicts).cache()


@pytest.fixture(scope="module")
def rows(blamed):
    return {(r["driver"], r["target"], r["test_id"]): r.asDict() for r in blamed.collect()}


@pytest.fixture(scope="module")
def per_cell(spark, verdicts, blamed):
    from reports.blame import blame_cells
    from reports.conformance import cells
    from reports.versions import version_dimension

    versions = version_dimension(spark, verdicts, ["driver_version", "target_version"])
    return [r.asDict() for r in blame_cells(cells(verdicts, versions), blamed, versions).collect()]


def test_every_failing_cell_and_test_has_exactly_the_planted_cause(rows):
    assert {key: row["cause"] for key, row in rows.items()} == EXPECTED_CAUSES


def test_a_target_row_says_why_and_lists_the_other_cells_it_was_decided_from(rows):
    row = rows[(PY, MJS, TARGET_T)]
    assert row["reason"] == (
        "fails with every driver that ran it on this target (3), and each of them passes it on another target"
    )
    assert row["evidence"] == [  # the other drivers here, this driver elsewhere, then the rest
        f"fails with {JAVA} on {MJS}",
        f"fails with {NODE} on {MJS}",
        f"passes with {PY} on {EMB}",
        f"passes with {PY} on {DAEMON}",
        f"passes with {JAVA} on {EMB}",
        f"passes with {NODE} on {EMB}",
        f"passes with {JAVA} on {DAEMON}",
        f"passes with {NODE} on {DAEMON}",
    ]
    assert (row["status"], row["failures"], row["passed"]) == ("fail", 1, 0)
    assert row["message"] == f"{TARGET_T} failed with {PY} (run 0)"
    assert (row["expected"], row["expectation_kinds"]) == (True, "fail")
    assert (row["driver_name"], row["driver_version"], row["target_name"], row["target_version"]) == (
        "pymongo",
        "4.20.0",
        "mongo-java-server",
        "1.47.0",
    )


def test_the_evidence_is_capped_nearest_cells_first(verdicts, rows, monkeypatch):
    from reports import blame

    monkeypatch.setattr(blame, "EVIDENCE", 3)
    capped = blame.blame(verdicts).where(f"test_id = '{TARGET_T}' and cell = '{PY} / {MJS}'").first()
    assert capped["evidence"] == rows[(PY, MJS, TARGET_T)]["evidence"][:3]
    assert (capped["other_cells"], rows[(PY, MJS, TARGET_T)]["other_cells"]) == (8, 8)


def test_driver_pair_and_everywhere_reasons(rows):
    assert rows[(NODE, EMB, DRIVER_T)]["reason"] == (
        "fails with this driver on every target it ran on (3), the same way, and another driver passes it "
        "on each of them"
    )
    assert rows[(JAVA, DAEMON, PAIR_T)]["reason"] == (
        "another driver passes it on this target, and this driver passes it on another target"
    )
    assert rows[(PY, EMB, EVERYWHERE_T)]["reason"] == "fails in every cell that ran it (3 drivers, 3 targets)"
    assert rows[(NODE, EMB, DRIVER_T)]["expected"] is None  # no expected-outcomes file listed it


def test_undecided_rows_say_what_is_missing_instead_of_guessing(rows):
    assert rows[(NODE, MJS, ONE_TARGET_T)]["reason"] == (
        "fails with every driver that ran it (3), and no other target ran it"
    )
    assert rows[(JAVA, DAEMON, ONE_DRIVER_T)]["reason"] == (
        "fails on every target that ran it (3), and no other driver ran it"
    )
    assert rows[(PY, EMB, ONE_CELL_T)]["reason"] == "no other cell ran it"
    assert rows[(PY, EMB, ONE_CELL_T)]["evidence"] == []
    # node fails everywhere, but the daemon fails with everyone: node is not shown to be the only cause
    assert rows[(NODE, EMB, BLOCKED_T)]["reason"] == (
        f"fails with this driver on every target, but no other driver passes it on {DAEMON}"
    )
    assert rows[(NODE, DAEMON, BLOCKED_T)]["reason"] == (
        f"fails with every driver on this target, but it passes on no other target with {NODE}; "
        f"fails with this driver on every target, but no other driver passes it on {DAEMON}"
    )
    assert rows[(PY, DAEMON, BLOCKED_T)]["reason"] == (
        f"fails with every driver on this target, but it passes on no other target with {NODE}"
    )


def test_a_driver_that_fails_differently_on_one_target_is_not_blamed(rows):
    for target in (EMB, MJS, DAEMON):
        assert rows[(NODE, target, DRIFT_T)]["reason"] == (
            "fails with this driver on every target, but not the same way (2 different failure messages)"
        )


def test_a_flaky_cell_counts_as_failing_and_keeps_its_messages(rows):
    row = rows[(PY, DAEMON, FLAKY_T)]
    assert (row["status"], row["passed"], row["failures"], row["cause"]) == ("flaky", 1, 1, "target")
    assert row["messages"] == [f"{FLAKY_T} failed with {PY} (run 1)"]
    assert f"is flaky with {PY} on {DAEMON}" in rows[(NODE, DAEMON, FLAKY_T)]["evidence"]


def test_skipped_verdicts_are_no_evidence(rows):
    row = rows[(PY, MJS, SKIP_T)]
    assert row["reason"].startswith("fails with every driver that ran it on this target (2)")
    assert not any(JAVA in line and MJS in line for line in row["evidence"])
    assert (JAVA, MJS, SKIP_T) not in rows


def test_every_cell_is_summarised_including_one_with_no_failing_test(per_cell):
    got = {
        row["cell"]: (
            row["failing_tests"],
            row["cause_target"],
            row["cause_driver"],
            row["cause_pair"],
            row["cause_everywhere"],
            row["cause_undecided"],
            row["expected_failures"],
        )
        for row in per_cell
    }
    want = {}
    for driver in (PY, NODE, JAVA):
        for target in (EMB, MJS, DAEMON):
            causes = [cause for (d, t, _), cause in EXPECTED_CAUSES.items() if (d, t) == (driver, target)]
            counts = tuple(causes.count(c) for c in ("target", "driver", "pair", "everywhere", "undecided"))
            want[f"{driver} / {target}"] = (len(causes), *counts, int(target == MJS))
    want[f"{LONE} / {EMB}"] = (0, 0, 0, 0, 0, 0, 0)
    assert got == want
    summaries = {row["cell"]: row["summary"] for row in per_cell}
    assert summaries[f"{LONE} / {EMB}"] == "no failing test"
    assert summaries[f"{PY} / {MJS}"] == "4 failing: 2 target, 1 everywhere, 1 undecided"


def test_the_page_has_a_blame_section_with_the_summary_and_the_rows(tmp_path, blamed, per_cell):
    from reports.render import render_report

    rows = [r.asDict(recursive=True) for r in blamed.collect()]
    tables = {"blame": TableRows(rows, len(rows)), "blame_cells": TableRows(per_cell, len(per_cell))}
    html = render_report(tables, tmp_path / "report.html").read_text()
    section = html[html.index('<section id="blame">') :]
    section = section[: section.index("</section>")]
    assert section.count("<tr>") == 1 + len(per_cell) + 1 + len(rows)  # two tables, each with a heading row
    assert "no failing test" in section and f"{LONE} / {EMB}" in section
    assert f"{TARGET_T} failed with {PY} (run 0)" in section
    assert '<td class="ca-target">target</td>' in section
