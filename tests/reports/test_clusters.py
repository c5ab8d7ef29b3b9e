"""reports.clusters: a hundred failures with one cause read as one line."""

from __future__ import annotations

from tests.spark_support import record, verdicts_frame


def test_one_hundred_failures_with_one_cause_are_one_cluster(spark):
    from reports.clusters import LISTED_TESTS, failure_clusters

    recs = [
        record(
            f"unified/cs-{n % 25}::test {n}",
            "failed",
            f"OperationFailure, code 43 (CursorNotFound): cursor id {1000 + n} not found on 127.0.0.1:{27017 + n}",
            run_id=f"r{n}",
            driver_version=("4.9", "4.10")[n % 2],
        )
        for n in range(100)
    ]
    recs += [
        record("unified/other::x", "error", "timed out after 10.0s waiting for a change"),
        record("unified/other::y", "error", "timed out after 30.5s waiting for a change"),
        record("unified/other::z", "failed", "OperationFailure, code 11600 (InterruptedAtShutdown): bye"),
        record("unified/other::ok", "passed", "code 43 (CursorNotFound) in a passing message"),
    ]
    table = failure_clusters(verdicts_frame(spark, recs)).collect()
    assert [(r["failures"], r["tests"], r["cells"], r["error_code"], r["error_code_name"]) for r in table] == [
        (100, 100, 2, 43, "CursorNotFound"),
        (2, 2, 1, None, None),
        (1, 1, 1, 11600, "InterruptedAtShutdown"),
    ]
    big = table[0]
    assert (
        big["message_pattern"] == "OperationFailure, code <n> (CursorNotFound): cursor id <n> not found on <ip>:<port>"
    )
    assert len(big["test_ids"]) == LISTED_TESTS and big["test_ids"] == sorted(big["test_ids"])
    assert big["example_test"] == "unified/cs-0::test 0" and "cursor id 1000 " in big["example_message"]
    assert table[1]["message_pattern"] == "timed out after <n>s waiting for a change"
