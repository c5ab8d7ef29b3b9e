"""reports.write and reports.collect: each table as Parquet and one CSV file; capped rows kept for the page."""

from __future__ import annotations

import csv
from datetime import datetime


def test_tables_are_parquet_and_a_single_csv_with_lists_as_text(spark, tmp_path):
    from reports.write import write_tables

    clusters = spark.createDataFrame(
        [(3, ["u/a::1", "u/a::2"], 'x, "quoted"\nline', datetime(2026, 1, 5, 10, 0), True), (1, [], None, None, None)],
        "failures int, test_ids array<string>, example string, at timestamp, flag boolean",
    )
    empty = spark.createDataFrame([], "cell string, pass_rate double")
    kept = write_tables({"failure_clusters": clusters, "cells": empty}, tmp_path)
    assert (kept["failure_clusters"].total, kept["cells"].total, kept["cells"].rows) == (2, 0, [])
    assert kept["failure_clusters"].rows[0]["test_ids"] == ["u/a::1", "u/a::2"]
    assert spark.read.parquet(str(tmp_path / "tables" / "failure_clusters")).schema == clusters.schema
    with open(tmp_path / "tables" / "failure_clusters.csv", newline="") as handle:
        assert list(csv.reader(handle)) == [
            ["failures", "test_ids", "example", "at", "flag"],
            ["3", "u/a::1; u/a::2", 'x, "quoted"\nline', "2026-01-05T10:00:00", "true"],
            ["1", "", "", "", ""],
        ]
    assert (tmp_path / "tables" / "cells.csv").read_text().strip() == "cell,pass_rate"
    assert sorted(p.name for p in (tmp_path / "tables").iterdir()) == [
        "cells",
        "cells.csv",
        "failure_clusters",
        "failure_clusters.csv",
    ]


def test_the_page_keeps_a_capped_number_of_rows_but_the_csv_has_all(spark, tmp_path, monkeypatch):
    from reports import collect

    monkeypatch.setitem(collect.CAPS, "flakiness", 3)
    monkeypatch.setitem(collect.CAPS, "runs", 3)
    frame = spark.range(10).selectExpr("id", "cast(id as string) as run_id")
    first = collect.stream_table("flakiness", frame, tmp_path / "f.csv")
    last = collect.stream_table("runs", frame, tmp_path / "r.csv")
    assert ([r["id"] for r in first.rows], first.total, first.truncated) == ([0, 1, 2], 10, True)
    assert [r["id"] for r in last.rows] == [7, 8, 9]  # the newest runs
    assert len((tmp_path / "f.csv").read_text().splitlines()) == 11
