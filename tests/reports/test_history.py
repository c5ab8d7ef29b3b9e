"""reports.history: one row per run in time order, and --append-to adding each run to the history once."""

from __future__ import annotations

from tests.spark_support import at, record, verdicts_frame


def test_runs_in_time_order_with_counts(spark):
    from reports.history import runs

    recs = [
        record("u/a::1", "passed", run_id="late", started_at=at(30)),
        record("u/a::2", "failed", "x", run_id="late", started_at=at(31)),
        record("u/a::1", "passed", run_id="early", started_at=at(0), labels={"cell": "c1", "repeat": "1"}),
        record("u/a::2", "skipped", run_id="early", started_at=at(1), labels={"cell": "c1", "repeat": "1"}),
    ]
    got = [
        (
            r["run_id"],
            r["started_at"].minute,
            r["ended_at"].minute,
            r["verdicts"],
            r["passed"],
            r["pass_rate"],
            r["cell_label"],
            r["repeat"],
        )
        for r in runs(verdicts_frame(spark, recs)).collect()
    ]
    assert got == [("early", 0, 1, 2, 1, 1.0, "c1", 1), ("late", 30, 31, 2, 1, 0.5, None, None)]


def test_append_adds_a_run_once(spark, tmp_path):
    from reports.discover import VERDICTS_MARKER
    from reports.history import append_verdicts

    first = verdicts_frame(spark, [record(run_id="r1"), record("u/a::2", run_id="r1")])
    added, history = append_verdicts(spark, first, tmp_path)
    assert (added, history.count()) == (1, 2) and (tmp_path / "verdicts" / VERDICTS_MARKER).exists()
    added, history = append_verdicts(spark, first, tmp_path)
    assert (added, history.count()) == (0, 2)
    both = verdicts_frame(spark, [record(run_id="r1"), record(run_id="r2")])
    added, history = append_verdicts(spark, both, tmp_path)
    assert (added, history.count()) == (1, 3)
    assert sorted(r["run_id"] for r in history.select("run_id").distinct().collect()) == ["r1", "r2"]
