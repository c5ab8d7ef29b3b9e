"""The report job: inputs -> normalised verdicts -> tables -> Parquet/CSV -> one HTML page.

:func:`compute_tables` is the API (benchmarks call it): it returns every
table as a lazy DataFrame over verdicts that are computed once and stored
as Parquet (:func:`materialise`).
:data:`TABLES` says how each table is made, one entry per table, in the
order they are written. :func:`run_report` is what ``harness report`` does.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

from reports import (
    axes,
    baseline,
    blame,
    clusters,
    conformance,
    duplicates,
    fault_survival,
    flakiness,
    history,
    scores,
    timelines,
)
from reports.collect import TableRows
from reports.discover import VERDICTS_MARKER, discover_inputs
from reports.frames import sorted_table
from reports.normalise import conform, pytest_run_id, verdicts_from_pytest_cases, verdicts_from_records
from reports.read import after_one_read, file_path, read_inputs, read_verdicts
from reports.render import render_report
from reports.versions import ranked_versions, version_dimension
from reports.write import tables_directory, write_tables

__all__ = ["TABLES", "compute_tables", "load_inputs", "render_report", "run_report", "write_tables"]


@dataclass
class Loaded:
    """Verdicts (persisted) and what the inputs said besides: matrix cells not built, input problems."""

    verdicts: DataFrame
    cells: DataFrame
    problems: DataFrame
    #: The distinct driver and target versions among the verdicts, seen while they were written.
    versions: list[str] | None = None
    #: How many verdicts were written.
    rows: int | None = None
    #: How many verdicts were dropped as another input's records (reports/duplicates.py), and of how many runs.
    duplicates: int = 0
    runs_read_twice: int = 0


@dataclass
class Sources:
    """Everything the tables are made from."""

    verdicts: DataFrame
    baseline: DataFrame | None
    cells: DataFrame
    problems: DataFrame
    versions: DataFrame
    #: :func:`reports.conformance.per_cell_test` of the verdicts, when it fits the tables' keys (cached).
    per_test: DataFrame | None = None
    #: :func:`reports.conformance.run_parts` of the verdicts, when the shared aggregate was made (stored).
    parts: DataFrame | None = None


def load_inputs(
    spark: SparkSession, inputs: list[str], store: Path | None = None, exclude: Path | None = None
) -> Loaded:
    """Discover, read and normalise ``inputs`` (none under ``exclude``); the verdicts are stored once as Parquet.

    They go to ``store``, or without it to a temporary directory removed when the process exits.
    """
    found = discover_inputs(inputs, exclude)
    raw = read_inputs(spark, found)
    inputs_seen: list[Observation] = []  # which inputs each run came from, seen by the same pass (duplicates.py)

    def noted(frame: DataFrame, run_id: Column, source: Column) -> DataFrame:
        inputs_seen.append(Observation(f"inputs {len(inputs_seen)}"))
        return frame.observe(inputs_seen[-1], duplicates.run_inputs(run_id, source))

    kinds = [  # only the kinds of input there are: an empty side of a union still costs tasks
        (
            found.jsonl or found.junit,
            lambda: verdicts_from_records(noted(raw.results, F.col("r.run_id"), F.col("file"))),
        ),
        (found.junit, lambda: verdicts_from_pytest_cases(noted(raw.pytest_cases, pytest_run_id(), F.col("file")))),
        (found.parquet, lambda: conform(noted(raw.verdicts, F.col("run_id"), duplicates.folder_of(file_path())))),
    ]
    sides = [make() for present, make in kinds if present] or [conform(raw.verdicts)]
    verdicts = functools.reduce(DataFrame.unionByName, sides)
    versions_seen = Observation("versions")  # the version dimension, from the same pass that writes the verdicts
    verdicts = verdicts.observe(
        versions_seen, F.count("*").alias("rows"), *[F.collect_set(axis).alias(axis) for axis in axes.AXES]
    )
    store = store or _scratch()
    stored = materialise(spark, verdicts, store)
    raw = after_one_read(spark, raw, found)  # the JSON lines are parsed again only if they held more than results
    seen = versions_seen.get
    versions = sorted({version for axis in axes.AXES for version in seen[axis]})
    loaded = Loaded(stored, raw.cells, raw.problems, versions, seen["rows"])
    read_twice = duplicates.runs_read_twice(pair for each in inputs_seen for pair in each.get["run_inputs"])
    return _once_each(spark, loaded, store, len(read_twice)) if read_twice else loaded


def _once_each(spark: SparkSession, loaded: Loaded, store: Path, runs: int) -> Loaded:
    """``loaded`` with one verdict per record (reports/duplicates.py): the verdicts stored in ``store`` rewritten
    without duplicates, in its place, and the number dropped."""
    kept = Observation("once each")
    once = loaded.verdicts.dropDuplicates(list(duplicates.KEY)).observe(kept, F.count("*").alias("rows"))
    fresh = Path(store).with_name(Path(store).name + "-once")
    materialise(spark, once, fresh)
    rows = kept.get["rows"]
    shutil.rmtree(store)
    fresh.rename(store)
    return replace(
        loaded,
        verdicts=read_verdicts(spark, [str(store)]),
        rows=rows,
        duplicates=(loaded.rows or 0) - rows,
        runs_read_twice=runs,
    )


def materialise(spark: SparkSession, verdicts: DataFrame, store: Path) -> DataFrame:
    """Compute the verdicts once, write them as Parquet in ``store`` and read them back from there.

    Every table reads the verdicts, so they must be computed once; and the JSON parsing must not be
    redone per table. Parquet on disk does both with memory that stays flat however large the input:
    each task streams its rows out (an in-memory cache or checkpoint of 10 million rows ran a 2 GiB
    driver out of heap while unrolling its blocks, see benchmarks/RESULTS-report.md), and the tables
    read only the columns they use. The directory carries the verdicts marker, so a report's
    ``verdicts/`` is itself an input ``harness report`` reads.
    """
    verdicts.write.mode("overwrite").parquet(str(store))
    (Path(store) / VERDICTS_MARKER).write_text("normalised verdicts written by harness report\n")
    return read_verdicts(spark, [str(store)])


def _scratch() -> Path:
    directory = Path(tempfile.mkdtemp(prefix="harness-report-verdicts-"))
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    return directory / "verdicts"


#: Each table, in the order written: how it is made from the sources and the tables made before it.
TABLES: dict[str, Callable[[Sources, Mapping[str, DataFrame]], DataFrame]] = {
    "cells": lambda s, t: conformance.cells(s.verdicts, s.versions, s.parts),
    "cell_files": lambda s, t: conformance.cell_files(s.verdicts, s.parts),
    "cell_tests": lambda s, t: conformance.cell_tests(s.verdicts, s.per_test),
    "blame": lambda s, t: blame.blame(s.verdicts, s.per_test),
    "blame_cells": lambda s, t: blame.blame_cells(t["cells"], t["blame"], s.versions),
    "version_status": lambda s, t: axes.version_status(s.verdicts, s.versions, s.per_test),
    "first_pass": lambda s, t: axes.first_pass(t["version_status"]),
    "transitions": lambda s, t: axes.transitions(t["version_status"]),
    "flakiness": lambda s, t: flakiness.flakiness(s.verdicts, s.per_test),
    "failure_clusters": lambda s, t: clusters.failure_clusters(s.verdicts),
    "fault_survival": lambda s, t: fault_survival.fault_survival(s.verdicts, s.versions),
    "baseline_diff": lambda s, t: baseline.baseline_diff(
        t["cell_tests"], None if s.baseline is None else conformance.cell_tests(s.baseline)
    ),
    "runs": lambda s, t: history.runs(s.verdicts, s.parts),
    "first_changes": lambda s, t: timelines.first_changes(s.verdicts),
    "flip_flops": lambda s, t: timelines.flip_flops(t["first_changes"], timelines.latest_run(s.verdicts)),
    "rule_scores": lambda s, t: scores.rule_scores(s.verdicts),
    "exclusive_failures": lambda s, t: scores.exclusive_failures(s.verdicts),
    "unbuilt_cells": lambda s, t: sorted_table(
        s.cells.select("matrix", "cell", "stage", "reason", "at", "file"), "matrix", "cell"
    ),
    "input_problems": lambda s, t: sorted_table(s.problems, "file", "problem"),
}


#: The tables other tables are made from (the ``t[name]`` of :data:`TABLES`): each is cached when it is planned,
#: so the verdicts are aggregated into it once, however many tables read it and in whatever order they run.
SHARED_TABLES = frozenset({"cells", "blame", "version_status", "cell_tests", "first_changes"})


class PlannedTables(Mapping[str, DataFrame]):
    """Every table of :data:`TABLES`, each planned once, when first asked for, by whichever thread asks.

    Planning a table is tens of calls into the JVM (Spark analyses each step as it is built): seconds for the
    fifteen tables of a small report, where computing them takes about as long. :func:`reports.write.write_tables`
    asks for each table in the thread that computes it, so tables are planned while others run. A table made
    from others asks for them here: it waits for one being planned in another thread, or plans it itself
    (the tables depend on each other without cycles, so no thread waits for itself).
    """

    def __init__(self, sources: Sources) -> None:
        self._sources = sources
        self._planned: dict[str, DataFrame] = {}
        self._locks = {name: threading.Lock() for name in TABLES}

    def __getitem__(self, name: str) -> DataFrame:
        with self._locks[name]:
            if name not in self._planned:
                table = TABLES[name](self._sources, self)
                self._planned[name] = table.cache() if name in SHARED_TABLES else table
            return self._planned[name]

    def __iter__(self) -> Iterator[str]:
        return iter(TABLES)

    def __len__(self) -> int:
        return len(TABLES)

    def planned(self) -> list[DataFrame]:
        """The tables planned so far (each once)."""
        return list(self._planned.values())


def tables_from(sources: Sources) -> PlannedTables:
    """Every table of :data:`TABLES`, planned as each is asked for (nothing runs until a table is written or read)."""
    return PlannedTables(sources)


def compute_tables(spark: SparkSession, inputs: list[str], *, baseline: list[str] | None = None) -> PlannedTables:
    """Every report table over ``inputs`` (files or directories), diffed against ``baseline`` when given."""
    loaded = load_inputs(spark, inputs)
    return tables_over(spark, loaded, loaded.verdicts, baseline)


#: From how many verdicts the tables are made from the shared aggregates (:func:`reports.conformance.per_cell_test`
#: and :func:`reports.conformance.run_parts`). On large inputs they replace a sort or shuffle of every verdict
#: per table with hash aggregates; they cost ~8 small jobs and a Parquet write before the tables start,
#: which on a few thousand verdicts is more than they save.
SHARED_AGGREGATE_ROWS = 200_000


def tables_over(
    spark: SparkSession,
    loaded: Loaded,
    verdicts: DataFrame,
    baseline: list[str] | None,
    baseline_store: Path | None = None,
) -> PlannedTables:
    """The tables over ``verdicts`` (this input, or the whole history), with ``loaded``'s cells and problems."""
    problems = loaded.problems
    if baseline:
        against = load_inputs(
            spark, baseline, baseline_store, exclude=baseline_store.parent if baseline_store is not None else None
        )
        base_verdicts, problems = against.verdicts, problems.unionByName(against.problems)
    else:
        base_verdicts = None
    per_test = parts = None
    if verdicts is not loaded.verdicts or (loaded.rows or 0) >= SHARED_AGGREGATE_ROWS:
        counts = conformance.per_key_counts(verdicts).cache()
        parts = _stored(spark, conformance.run_parts(verdicts, conformance.test_index(counts)), "parts")
        per_test = conformance.per_cell_test(verdicts, counts, parts).cache()
        if not axes.keys_fit(per_test):  # (which computes per_test: its counts need not stay cached)
            per_test.unpersist()
            per_test = None
        counts.unpersist()
    if verdicts is loaded.verdicts and loaded.versions is not None:
        versions = ranked_versions(spark, loaded.versions)
    else:  # the whole history: its versions are not all in this input (the run parts hold them, much smaller)
        versions = version_dimension(spark, verdicts if parts is None else parts, list(axes.AXES))
    return tables_from(Sources(verdicts, base_verdicts, loaded.cells, problems, versions, per_test, parts))


def _stored(spark: SparkSession, frame: DataFrame, name: str) -> DataFrame:
    """``frame`` written once as Parquet in a temporary directory (removed at exit) and read from there.

    For an intermediate several tables read that is too large to cache in memory (millions of rows of text).
    """
    directory = Path(tempfile.mkdtemp(prefix=f"harness-report-{name}-"))
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    frame.write.parquet(str(directory / name))
    return spark.read.parquet(str(directory / name))


def verdicts_store(out_dir: Path, name: str = "verdicts") -> Path:
    """Where a report keeps the normalised verdicts it computed (``OUT/verdicts``: Parquet, readable as input).

    An absolute path: a Spark Connect server or a cluster resolves a relative one against its own directory.
    """
    return Path(out_dir).resolve() / name


@dataclass
class ReportResult:
    page: Path
    tables_dir: Path
    tables: dict[str, TableRows]
    runs_added: int | None = None
    #: Verdicts dropped because another input held the same record, and the runs they belong to.
    duplicates: int = 0
    runs_read_twice: int = 0


def run_report(
    spark: SparkSession,
    inputs: list[str],
    out_dir: Path,
    *,
    baseline: list[str] | None = None,
    append_to: Path | None = None,
    title: str | None = None,
) -> ReportResult:
    """``harness report``: tables and page in ``out_dir``; with ``append_to``, over the whole history there."""
    loaded = load_inputs(spark, inputs, verdicts_store(out_dir), exclude=Path(out_dir))
    verdicts, added = loaded.verdicts, None
    if append_to is not None:  # the history is Parquet already: the tables read it as it is
        added, verdicts = history.append_verdicts(spark, loaded.verdicts, Path(append_to).resolve())
    tables = tables_over(spark, loaded, verdicts, baseline, verdicts_store(out_dir, "baseline-verdicts"))
    collected = write_tables(tables, out_dir)
    for table in tables.planned():
        table.unpersist()
    page = render_report(collected, Path(out_dir) / "report.html", title=title or "Change-stream conformance report")
    return ReportResult(page, tables_directory(out_dir), collected, added, loaded.duplicates, loaded.runs_read_twice)
