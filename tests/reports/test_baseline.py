"""reports.baseline: newly failing, newly passing, newly skipped and newly flaky against a baseline."""

from __future__ import annotations

from tests.spark_support import record, rows, verdicts_frame


def test_each_change_category_and_unchanged_tests_left_out(spark):
    from reports.baseline import baseline_diff
    from reports.conformance import cell_tests

    before = [
        record("u/t::breaks", "passed"),
        record("u/t::heals", "failed", "old"),
        record("u/t::goes-skip", "passed"),
        record("u/t::wobbles", "passed"),
        record("u/t::same", "passed"),
        record("u/t::still-broken", "failed", "x"),
    ]
    after = [
        record("u/t::breaks", "failed", "new failure"),
        record("u/t::heals", "passed"),
        record("u/t::goes-skip", "skipped", "needs sharding"),
        record("u/t::wobbles", "passed", run_id="a"),
        record("u/t::wobbles", "error", "timeout", run_id="b"),
        record("u/t::same", "passed"),
        record("u/t::still-broken", "failed", "x"),
        record("u/t::brand-new", "failed", "new test fails"),
    ]
    diff = baseline_diff(cell_tests(verdicts_frame(spark, after)), cell_tests(verdicts_frame(spark, before)))
    assert rows(diff, "test_id", "baseline_status", "status", "change", "message") == [
        ("u/t::brand-new", "absent", "fail", "newly failing", "new test fails"),
        ("u/t::breaks", "pass", "fail", "newly failing", "new failure"),
        ("u/t::goes-skip", "pass", "skip", "newly skipped", None),
        ("u/t::heals", "fail", "pass", "newly passing", None),
        ("u/t::wobbles", "pass", "flaky", "newly flaky", "timeout"),
    ]


def test_without_a_baseline_the_diff_is_empty_but_has_its_columns(spark):
    from reports.baseline import baseline_diff
    from reports.conformance import cell_tests

    diff = baseline_diff(cell_tests(verdicts_frame(spark, [record("u/t::x", "failed", "boom")])), None)
    assert diff.count() == 0 and {"change", "baseline_status", "status", "message"} <= set(diff.columns)
