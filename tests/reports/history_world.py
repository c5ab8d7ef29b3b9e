"""A generated history with planted facts, so a test knows the right answer to every question it asks.

Six runs per configuration, three days apart (days 0, 3, ..., 15), of two drivers (pymongo, node) on two targets
(secantusdb, mongo-java-server), as ``cs-harness.result/1`` records made by the harness's own ``make_record`` and
normalised by the report's own code into ``HISTORY/verdicts`` (the layout ``harness report --append-to`` keeps).

Planted:

- ``REGRESSED`` passes with pymongo 4.9.0 in runs 1-3; run 4 brings pymongo 4.10.0 and it fails from then on, on
  both targets, with one cause (``NEW_CAUSE``), first seen on day 9: the only cause of the last seven days.
  node passes it throughout: a test that fails only with one driver, a failure exclusive to pymongo 4.10.0.
- ``FLIPPER`` (rule ``CS-ITER-2``) with node on secantusdb: pass, fail, pass, fail, pass, pass (four changes, a
  flip-flop); it passes everywhere else: fails only with node, exclusive to node on that target.
- ``OLD_FAILURE`` fails everywhere from day 0 (cause ``result``): neither new nor exclusive to anyone.
- ``NODE_SKIPS`` fails with pymongo from day 0 and node always skips it: no other driver decided it, so it is
  neither a failure "only with one driver" nor exclusive (a skip is neutral).
- two tests that always pass, and ``SKIPPED`` that every cell skips (its rule is neutral).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from harness.core.records import RunProvenance, make_record

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=timezone.utc)
RUNS = 6
DAYS_APART = 3
REGRESSED = "unified/change-streams::regressed test"
FLIPPER = "unified/change-streams::flip-flopping test"
OLD_FAILURE = "legacy/change-streams::old failure"
NODE_SKIPS = "unified/change-streams::skipped by node"
SKIPPED = "legacy/change-streams::skipped everywhere"
PASSING = ("unified/change-streams::always passes", "legacy/change-streams::passes too")
RULES = {
    REGRESSED: ["CS-RESUME-1"],
    FLIPPER: ["CS-ITER-2"],
    OLD_FAILURE: ["CS-OPT-1"],
    NODE_SKIPS: ["CS-ITER-3"],
    SKIPPED: ["CS-SKIP-1"],
    PASSING[0]: ["CS-RESUME-2"],
    PASSING[1]: ["CS-OPT-2"],
}
TESTS = (REGRESSED, FLIPPER, OLD_FAILURE, NODE_SKIPS, SKIPPED, *PASSING)
TARGETS = {"secantusdb": "0.7.0", "mongo-java-server": "1.47.0"}
NEW_CAUSE = {"clause": "event", "step": "operations[2]", "path": "$.events[0]", "fact": "operationTime is missing"}
OLD_CAUSE = {"clause": "result", "step": "operations[0]", "path": "$.result", "fact": "expected 1 document, got 0"}
NODE_SKIPS_CAUSE = {"clause": "outcome", "step": "operations[1]", "path": "$", "fact": "the operation did not fail"}
FLIPPER_CAUSE = {"clause": "timeout", "step": "operations[3]", "path": "$", "fact": "no change within 10.0s"}
#: The run (1-based) where pymongo moves from 4.9.0 to 4.10.0 and REGRESSED starts failing.
FIRST_BAD_RUN = 4
FLIPPER_FAILS = (2, 4)


def pymongo_version(run: int) -> str:
    return "4.9.0" if run < FIRST_BAD_RUN else "4.10.0"


def run_id(driver: str, target: str, run: int) -> str:
    return f"{driver}-{target}-{run}"


def started(run: int, index: int = 0) -> datetime:
    return T0 + timedelta(days=DAYS_APART * (run - 1), seconds=index)


def outcome_of(test_id: str, driver: str, target: str, run: int) -> tuple[str, dict[str, Any] | None]:
    """The planted outcome of a test in a run (and the cause of a failure)."""
    if test_id == REGRESSED and driver == "pymongo" and run >= FIRST_BAD_RUN:
        return "failed", NEW_CAUSE
    if test_id == FLIPPER and driver == "node" and target == "secantusdb" and run in FLIPPER_FAILS:
        return "failed", FLIPPER_CAUSE
    if test_id == OLD_FAILURE:
        return "failed", OLD_CAUSE
    if test_id == NODE_SKIPS:
        return ("skipped", None) if driver == "node" else ("failed", NODE_SKIPS_CAUSE)
    if test_id == SKIPPED:
        return "skipped", None
    return "passed", None


def history_records() -> list[dict[str, Any]]:
    records = []
    for driver in ("pymongo", "node"):
        for target, target_version in TARGETS.items():
            for run in range(1, RUNS + 1):
                version = pymongo_version(run) if driver == "pymongo" else "6.0.0"
                provenance = RunProvenance(
                    run_id=run_id(driver, target, run),
                    target={
                        "kind": "embedded",
                        "name": target,
                        "version": "8.2.11",
                        "topology": "replicaset",
                        "uri": "mongodb://127.0.0.1:27017/",
                        "details": {"package_version": target_version},
                    },
                    driver={"name": driver, "version": version},
                    failpoints="native",
                    extra={"labels": {}},
                )
                for index, test_id in enumerate(TESTS):
                    outcome, cause = outcome_of(test_id, driver, target, run)
                    causes = None if cause is None else [{**cause, "rules": RULES[test_id], "known": None}]
                    message = "" if cause is None else f"{cause['clause']}: {cause['fact']}"
                    records.append(
                        make_record(
                            provenance,
                            format=test_id.split("/")[0],
                            file=test_id.split("::")[0] + ".yml",
                            test=test_id.split("::")[1],
                            test_id=test_id,
                            outcome=outcome,
                            message=message if outcome != "skipped" else "not for this driver",
                            started_at=started(run, index).isoformat(timespec="milliseconds"),
                            duration_s=0.01,
                            rules=RULES[test_id],
                            causes=causes,
                            not_reached=[] if cause is not None else None,
                        )
                    )
    return records


def write_history(spark, directory: Path) -> Path:
    """The generated history as ``directory/verdicts`` (normalised verdicts, Parquet); returns ``directory``."""
    from reports.job import materialise
    from tests.spark_support import verdicts_frame

    materialise(spark, verdicts_frame(spark, history_records()), directory / "verdicts")
    return directory
