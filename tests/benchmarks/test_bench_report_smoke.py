"""Smoke test of the report benchmark's pieces, on a few thousand rows (seconds, no timings asserted).

The synthetic generator must write what the harness writes (the same keys,
nesting and serialisation as ``harness.core.records``), deterministically
whatever the number of part files; and the Spark job and the plain pandas
baseline must produce the same core tables from it, which is the
benchmark's cross-check in small.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.synthetic_results import generate
from harness.core.records import RunProvenance, make_record, record_line

ROWS = 5000


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("synthetic")
    generate(ROWS, 3, out, parts=2, workers=1)
    return out


def _lines(directory: Path) -> list[str]:
    return [line for part in sorted(directory.glob("part-*.jsonl")) for line in part.read_text().splitlines()]


def _reference(details: bool) -> dict:
    """A record as the harness builds it: a spec-test verdict, or a campaign record (with ``details``)."""
    extra = {"labels": {}} if details else {"expectations_file": "x.yml", "labels": {}}
    provenance = RunProvenance(
        run_id="r", target={"kind": "embedded"}, driver={"name": "pymongo", "version": "4"}, extra=extra
    )
    return make_record(
        provenance,
        format="campaign" if details else "unified",
        file="f",
        test="t",
        test_id="u/f::t",
        outcome="passed",
        message="",
        started_at="2026-01-01T00:00:00.000+00:00",
        duration_s=0.1,
        expectation=None if details else {"expected": True, "kind": "pass", "reason": ""},
        details={"seed": 1} if details else None,
    )


def test_records_have_the_harness_schema_and_serialisation(synthetic):
    lines = _lines(synthetic)
    assert len(lines) == ROWS
    records = [json.loads(line) for line in lines]
    for line, record in zip(lines, records, strict=True):
        assert list(record) == list(_reference(record["format"] == "campaign")), record["test_id"]
        assert record_line(record) == line  # byte for byte what the results store writes
    first = records[0]
    assert set(first["target"]) == {"kind", "name", "version", "topology", "uri", "max_wire_version", "details"}
    assert set(first["labels"]) >= {"matrix", "cell", "repeat"}
    assert {r["format"] for r in records} == {"legacy", "unified", "prose", "campaign"}
    assert {r["outcome"] for r in records} >= {"passed", "skipped", "failed"}
    assert any("code " in r["message"] for r in records if r["outcome"] in ("failed", "error"))


def test_same_seed_same_data_whatever_the_parts(synthetic, tmp_path):
    generate(ROWS, 3, tmp_path, parts=1, workers=1)
    assert _lines(tmp_path) == _lines(synthetic)


def test_spark_job_and_pandas_baseline_agree(synthetic, spark, tmp_path):
    for needed in ("pandas", "pyarrow"):  # the baseline's own dependencies (the bench extra)
        pytest.importorskip(needed)
    from benchmarks.pandas_baseline import CORE_TABLES
    from benchmarks.pandas_baseline import compute_tables as pandas_tables
    from benchmarks.pandas_baseline import write_tables as write_pandas
    from benchmarks.report_crosscheck import crosscheck, describe
    from reports.job import compute_tables, write_tables

    tables = compute_tables(spark, [str(synthetic)])
    write_tables({name: tables[name] for name in CORE_TABLES}, tmp_path / "spark")
    computed, rows = pandas_tables([str(synthetic)])
    write_pandas(computed, tmp_path / "pandas")
    assert rows == ROWS
    result = crosscheck(tmp_path / "spark", tmp_path / "pandas")
    assert result["agree"], "\n".join(describe(result))
    assert result["headline"]["clusters_spark"] > 0


def test_the_parquet_history_is_the_jobs_own_normalisation_of_the_same_nights(synthetic, spark, tmp_path):
    """``synthetic_history`` normalises without Spark; row for row it must be what the job makes of the JSON lines."""
    pytest.importorskip("pyarrow")
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from benchmarks.synthetic_history import generate_history
    from reports.job import load_inputs

    generate_history(ROWS, 3, tmp_path / "history", workers=1)
    load_inputs(spark, [str(synthetic)], tmp_path / "by-the-job")
    key = [("run_id", "ascending"), ("test_id", "ascending"), ("started_at", "ascending")]
    ours = pq.read_table(tmp_path / "history" / "verdicts").sort_by(key)
    theirs = pq.read_table(tmp_path / "by-the-job").sort_by(key)
    assert ours.num_rows == theirs.num_rows == ROWS
    assert ours.column_names == theirs.column_names
    for name in ours.column_names:
        assert theirs[name].cast(ours.schema.field(name).type).to_pylist() == ours[name].to_pylist(), name
    assert pc.sum(pc.is_valid(ours["message_pattern"])).as_py() > 0  # failures were normalised too


def test_history_copies_are_new_runs_later_in_time(tmp_path):
    pytest.importorskip("pyarrow")
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from benchmarks.synthetic_history import first_free_night, generate_history
    from benchmarks.synthetic_results import rows_per_night

    made = generate_history(3 * rows_per_night() * 17, 3, tmp_path, workers=1, distinct_rows=rows_per_night())
    table = pq.read_table(tmp_path / "verdicts")
    assert (table.num_rows, made.parts, made.copy_span_nights) == (made.rows, 3, 17)
    runs_per_copy = pc.count_distinct(table.slice(0, made.distinct_rows)["run_id"]).as_py()
    assert pc.count_distinct(table["run_id"]).as_py() == 3 * runs_per_copy
    first, last = pc.min_max(table["started_at"]).values()
    assert (last.as_py() - first.as_py()).days >= 2 * 17
    assert first_free_night(made) == 3 * 17
