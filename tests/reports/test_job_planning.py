"""reports.job.PlannedTables: each table planned once, by whichever thread asks first, the same as in order."""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor

from tests.spark_support import matrix_records, verdicts_frame


def _sources(spark):
    from reports import axes
    from reports.job import Sources
    from reports.versions import version_dimension

    verdicts = verdicts_frame(spark, matrix_records(repeats=2))
    empty = spark.createDataFrame([], "matrix string, cell string, stage string, reason string, at string, file string")
    problems = spark.createDataFrame([], "file string, problem string, lines long, example string")
    return Sources(verdicts, None, empty, problems, version_dimension(spark, verdicts, list(axes.AXES)))


class _Recording(Mapping):
    """What one table asks of the others."""

    def __init__(self, tables):
        self.tables, self.asked = tables, set()

    def __getitem__(self, name):
        self.asked.add(name)
        return self.tables[name]

    def __iter__(self):
        return iter(self.tables)

    def __len__(self):
        return len(self.tables)


def test_the_shared_tables_are_exactly_those_other_tables_are_made_from(spark):
    from reports.job import SHARED_TABLES, TABLES, tables_from

    tables = tables_from(_sources(spark))
    recording = _Recording(tables)
    for make in TABLES.values():
        make(tables._sources, recording)
    assert recording.asked == SHARED_TABLES


def test_tables_planned_from_many_threads_at_once_are_planned_once_and_equal_those_planned_in_order(spark):
    from reports.job import SHARED_TABLES, TABLES, tables_from

    sources = _sources(spark)
    in_order = tables_from(sources)
    expected = {name: in_order[name].collect() for name in TABLES}
    at_once = tables_from(sources)
    with ThreadPoolExecutor(max_workers=8) as pool:  # every table asked for twice, dependents before what they read
        frames = list(pool.map(lambda name: (name, at_once[name]), [*reversed(TABLES), *TABLES]))
    for name, frame in frames:
        assert frame is at_once[name], name  # one plan per table
    assert len(at_once.planned()) == len(TABLES)
    assert all(at_once[name].is_cached for name in SHARED_TABLES)
    assert not any(at_once[name].is_cached for name in set(TABLES) - SHARED_TABLES)
    assert {name: at_once[name].collect() for name in TABLES} == expected
    assert expected["blame_cells"] and expected["transitions"]
    for tables in (in_order, at_once):
        for table in tables.planned():
            table.unpersist()
