"""``harness query``: the three questions docs/reports.md documents, run exactly as written there, on a generated
history whose answers are planted (tests/reports/history_world.py); and what the command does with bad input."""

from __future__ import annotations

import csv
import io
import re

import pytest

from harness.app.cli import main
from tests.paths import REPO
from tests.reports import history_world as world

DOC = REPO / "docs" / "reports.md"


def documented_questions() -> list[str]:
    """The ```sql blocks of docs/reports.md's "Three questions", in order."""
    text = DOC.read_text()
    part = text.split("### Three questions", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sql\n(.*?)```", part, re.DOTALL)


@pytest.fixture(scope="module")
def history(spark, tmp_path_factory):
    return world.write_history(spark, tmp_path_factory.mktemp("history"))


def answer(capsys, sql: str, history, *more: str) -> list[dict[str, str]]:
    code = main(["query", sql, "--history", str(history), "--csv", *more])
    out = capsys.readouterr()
    assert code == 0, out.err
    return list(csv.DictReader(io.StringIO(out.out)))


def test_the_documentation_has_three_questions():
    assert len(documented_questions()) == 3


def test_which_causes_appeared_this_week(spark, history, capsys):
    rows = answer(capsys, documented_questions()[0], history)
    # the regression's cause is first seen on day 9 of 15; the flip-flop's on day 3, the others on day 0
    assert [(row["signature"], row["tests"], row["cells"]) for row in rows] == [
        ("event | operationTime is missing", "1", "2")
    ]


def test_which_tests_fail_only_with_one_driver(spark, history, capsys):
    rows = answer(capsys, documented_questions()[1], history)
    # OLD_FAILURE fails with both; NODE_SKIPS fails with pymongo only, but node never decided it (a skip is neutral)
    assert [(row["test_id"], row["driver"]) for row in rows] == [(world.FLIPPER, "node"), (world.REGRESSED, "pymongo")]


def test_which_rules_flip_flop(spark, history, capsys):
    rows = answer(capsys, documented_questions()[2], history)
    assert [(row["rule"], row["tests"], row["changes"]) for row in rows] == [("CS-ITER-2", "1", "4")]
    # the window is the command's: within 5 days of the latest run, FLIPPER changed once (day 12), no flip-flop
    assert answer(capsys, documented_questions()[2], history, "--window-days", "5") == []


def test_a_table_is_printed_without_csv(spark, history, capsys):
    assert main(["query", "SELECT COUNT(*) AS runs FROM runs", "--history", str(history)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["runs"] and lines[2].strip() == str(world.RUNS * 4)


def test_a_query_spark_refuses_and_a_missing_history_exit_2(spark, history, capsys, tmp_path):
    assert main(["query", "SELECT nothing FROM runs", "--history", str(history)]) == 2
    assert "harness query:" in capsys.readouterr().err
    assert main(["query", "SELECT 1", "--history", str(tmp_path)]) == 2
    assert f"{tmp_path}: not a history" in capsys.readouterr().err
