"""The conformance matrix: pass rate per cell, per cell x spec file and per cell x test.

A cell is one configuration (driver, version and iteration mode / target
and version, topology, fail points, network faults); its name is built in
:mod:`reports.normalise`. The counts and the status come from
:mod:`reports.outcomes`, the same for every table.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window, WindowSpec
from pyspark.sql import functions as F

from reports.frames import distinct_values, sorted_table
from reports.normalise import network_faults_configured
from reports.outcomes import (
    COUNTS,
    DECIDED,
    LATEST_FAILURE,
    OUTCOMES,
    added_counts,
    is_failure,
    known_deviation,
    latest_failure,
    latest_skip_reason,
    outcome_counts,
    with_rates,
)
from reports.versions import with_version_rank

#: The columns a cell is made of (its name is a function of them and of whether network faults were configured).
CELL_AXES = (
    "driver_name",
    "driver_version",
    "iteration_mode",
    "target_name",
    "target_version",
    "topology",
    "failpoints",
)


def cells(verdicts: DataFrame, versions: DataFrame, parts: DataFrame | None = None) -> DataFrame:
    """One row per cell: its axes, runs, verdict counts and pass rate; in version order (``versions``).

    From ``parts`` (:func:`run_parts` of the same verdicts) when given.
    """
    if parts is None:
        grouped = verdicts.groupBy("cell", *CELL_AXES).agg(
            F.bool_or(network_faults_configured()).alias("network_faults"),
            distinct_values("target_kind").alias("target_kinds"),
            distinct_values("server_version").alias("server_versions"),
            *outcome_counts(),
        )
    else:
        # to one row per run first (numeric buffers, hashed), so the sets gather a few rows per cell
        per_run = parts.groupBy("cell", *CELL_AXES, CONFIGURED, "target_kind", "server_version", "run_id").agg(
            *added_counts()
        )
        grouped = per_run.groupBy("cell", *CELL_AXES).agg(
            F.bool_or(CONFIGURED).alias("network_faults"),
            distinct_values("target_kind").alias("target_kinds"),
            distinct_values("server_version").alias("server_versions"),
            *summed_counts(),
        )
    ranked = with_version_rank(
        with_version_rank(grouped, "driver_version", versions, "driver_rank"), "target_version", versions, "target_rank"
    )
    return sorted_table(
        with_rates(ranked).drop("status"), "driver_name", "driver_rank", "target_name", "target_rank", "cell"
    ).drop("driver_rank", "target_rank")


def cell_files(verdicts: DataFrame, parts: DataFrame | None = None) -> DataFrame:
    """One row per cell x spec file; from ``parts`` (:func:`run_parts` of the same verdicts) when given."""
    if parts is None:
        grouped = verdicts.groupBy("cell", "spec_file").agg(*outcome_counts())
    else:
        per_run = parts.groupBy("cell", "spec_file", "run_id").agg(*added_counts())
        grouped = per_run.groupBy("cell", "spec_file").agg(
            F.count("run_id").alias("runs"),  # one row per run (and one without a run id, not counted)
            *added_counts(),
        )
    return sorted_table(with_rates(grouped).drop("status"), "cell", "spec_file")


#: Whether a configuration ran with network faults of its own (the ``+netfaults`` of its name), per configuration.
CONFIGURED = "netfaults_configured"
#: Tests per word of :func:`run_parts`' test bitmap (the bits of a long), and the shift from a test's index to its word.
WORD_BITS = 64
WORD_SHIFT = WORD_BITS.bit_length() - 1
#: The columns of :func:`run_parts` a run is grouped by besides its cell and spec file (constant per run x cell).
RUN_COLUMNS = ("source", "matrix", "cell_label", "target_kind", "server_version")


def per_key_counts(verdicts: DataFrame) -> DataFrame:
    """One row per cell x test: names, verdict and outcome counts, and when it last failed and was last skipped.

    Every aggregate buffer is a number (counts, the latest time as a timestamp), so Spark hashes instead of
    sorting the verdicts: the names are grouping columns of the first step (a test has one spec file and one
    name, so they barely add groups) and the few rows it leaves are rolled up in a second one.
    """
    decided = F.col("outcome").isin(*DECIDED)
    named = verdicts.groupBy("cell", "test_id", "spec_file", "test", decided.alias("decided")).agg(
        F.count("*").alias("verdicts"),
        *[F.count_if(F.col("outcome") == outcome).alias(outcome) for outcome in OUTCOMES],
        F.max(F.when(is_failure(), _at())).alias("failed_at"),
        F.max(F.when(F.col("outcome") == "skipped", _at())).alias("skipped_at"),
    )
    return named.groupBy("cell", "test_id").agg(
        F.min("spec_file").alias("spec_file"),
        F.min("test").alias("test"),
        # flakiness names a test by its decided runs
        F.min(F.when(F.col("decided"), F.col("test"))).alias("decided_test"),
        *added_counts(),
        F.max("failed_at").alias("failed_at"),
        F.max("skipped_at").alias("skipped_at"),
    )


def _at() -> Column:
    """A verdict's time as :func:`reports.outcomes.latest_failure_message` orders it (no time: the earliest)."""
    return F.coalesce(F.col("started_at"), F.lit(0).cast("timestamp"))


def test_index(counts: DataFrame) -> DataFrame:
    """``test_id, test_index``: each distinct test of :func:`per_key_counts`, numbered in test id order.

    A few thousand rows; in test id order, the tests of a spec file share a word of :func:`run_parts`' bitmap.
    """
    tests = counts.select("test_id").distinct()
    return tests.select(
        "test_id", (F.dense_rank().over(Window.orderBy(F.col("test_id").asc_nulls_first())) - 1).alias("test_index")
    )


def run_parts(verdicts: DataFrame, tests: DataFrame) -> DataFrame:
    """One row per run x configuration x spec file x word of tests: counts, times, and which tests it ran.

    The data is laid out by run, so this hash aggregate reduces each partition ~10x before anything moves.
    ``cells``, ``cell_files``, ``runs`` and the version dimension are counted from it instead of the verdicts,
    and so are the runs of each cell x test: ``tests`` is a bitmap of the test indexes (:func:`test_index`) of
    the word (``test_index // 64``), so whether a run ran a test is one bit, however often it ran it.
    """
    index = F.broadcast(tests.select(F.col("test_id").alias("indexed_test"), "test_index"))
    indexed = verdicts.join(index, verdicts["test_id"].eqNullSafe(index["indexed_test"]), "left")
    return indexed.groupBy(
        "run_id",
        "cell",
        *CELL_AXES,
        network_faults_configured().alias(CONFIGURED),
        "spec_file",
        F.shiftright("test_index", WORD_SHIFT).alias("word"),
        *RUN_COLUMNS,
    ).agg(
        F.count("*").alias("verdicts"),
        *[F.count_if(F.col("outcome") == outcome).alias(outcome) for outcome in OUTCOMES],
        F.min("started_at").alias("started_at"),
        F.max("started_at").alias("ended_at"),
        F.max("repeat").alias("repeat"),
        F.bit_or(F.expr(f"shiftleft(1L, test_index & {WORD_BITS - 1})")).alias("tests"),
    )


def summed_counts() -> list[Column]:
    """:func:`reports.outcomes.outcome_counts` of the verdicts, counted from :func:`run_parts` rows."""
    return [F.count_distinct("run_id").alias("runs"), *added_counts()]


def runs_per_key(parts: DataFrame, tests: DataFrame) -> DataFrame:
    """``cell, test_id, runs``: distinct runs per cell x test, from the test bitmaps of :func:`run_parts`."""
    ran = (
        parts.where(F.col("run_id").isNotNull()).groupBy("run_id", "cell", "word").agg(F.bit_or("tests").alias("tests"))
    )
    # the runs of a cell mostly run the same tests: count each distinct bitmap once, then add up its bits
    bitmaps = ran.groupBy("cell", "word", "tests").agg(F.count("*").alias("times"))
    per_bit = bitmaps.groupBy("cell", "word").agg(
        F.array(*[F.sum(F.shiftright("tests", bit).bitwiseAND(1) * F.col("times")) for bit in range(WORD_BITS)]).alias(
            "runs"
        )
    )
    keyed = tests.select(
        "test_id", F.shiftright("test_index", WORD_SHIFT).alias("word"), (F.col("test_index") % WORD_BITS).alias("bit")
    )
    return per_bit.join(F.broadcast(keyed), "word").select("cell", "test_id", F.col("runs")[F.col("bit")].alias("runs"))


def per_cell_test(verdicts: DataFrame, counts: DataFrame | None = None, parts: DataFrame | None = None) -> DataFrame:
    """One row per configuration x test: what ``cell_tests``, both axes of ``version_status``, ``flakiness`` and
    ``blame`` count.

    Made of hash aggregates with numeric buffers and passes over small subsets of the verdicts, never a sort
    of all of them: the counts and names (:func:`per_key_counts`), the runs from the bitmaps of
    :func:`run_parts`, the latest failure (message, causes, known-deviation reason) and skip reason joined back
    from the failing and skipped verdicts at the latest time only, and the transitions put in time order only
    for the cell x tests that both passed and failed (the only ones that can have any). The tables group the
    same verdicts (a cell is its configuration; an axis's context and version are the same configuration:
    :func:`reports.axes.keys_fit` checks it, and a cell name of two configurations gives it two rows), so they
    are all made from this aggregate (cached by the caller: it has a row per cell x test). ``counts`` and ``parts`` are
    :func:`per_key_counts` and :func:`run_parts` of ``verdicts`` when the caller keeps them.
    """
    counts = per_key_counts(verdicts) if counts is None else counts
    tests = test_index(counts)
    parts = run_parts(verdicts, tests) if parts is None else parts
    configurations = parts.select("cell", *CELL_AXES, CONFIGURED).distinct()
    keys = ["cell", "test_id"]
    few = _few_verdicts(verdicts, counts)
    return (
        counts.join(runs_per_key(parts, tests), keys, "left")
        .join(_latest_messages(few), keys, "left")
        .join(_transitions(few), keys, "left")
        .join(configurations, "cell")
        .select(
            "cell",
            *CELL_AXES,
            CONFIGURED,
            "test_id",
            "spec_file",
            "test",
            F.coalesce("runs", F.lit(0).cast("long")).alias("runs"),
            *COUNTS[1:],
            *LATEST_FAILURE,
            "skip_reason",
            "decided_test",
            F.coalesce("transitions", F.lit(0).cast("long")).alias("transitions"),
        )
    )


def _few_verdicts(verdicts: DataFrame, counts: DataFrame) -> DataFrame:
    """The verdicts the latest messages and the transitions are taken from, a few percent of them: the failing and
    skipped ones at their cell x test's latest time, and the decided ones of the cell x tests that both passed
    and failed. One pass over the verdicts, one shuffle by cell x test that both uses share (Spark reuses it)."""
    mixed = (F.col("passed") > 0) & (F.col("failed") + F.col("error") > 0)
    keyed = counts.select("cell", "test_id", "failed_at", "skipped_at", mixed.alias("mixed")).where(
        F.col("failed_at").isNotNull() | F.col("skipped_at").isNotNull() | F.col("mixed")
    )
    failing, skipped = is_failure(), F.col("outcome") == "skipped"
    latest = (failing & (_at() == F.col("failed_at"))) | (skipped & (_at() == F.col("skipped_at")))
    in_order = F.col("outcome").isin(*DECIDED) & F.col("mixed")
    return (
        verdicts.join(F.broadcast(keyed), ["cell", "test_id"])
        .where(latest | in_order)
        .select(
            "cell",
            "test_id",
            "outcome",
            "started_at",
            "run_id",
            "repeat",
            F.when(latest, F.col("message")).alias("message"),
            F.when(latest & failing, F.col("causes")).alias("causes"),
            F.when(latest & failing, known_deviation()).alias("known_deviation"),
            latest.alias("latest"),
            in_order.alias("in_order"),
        )
        .repartition("cell", "test_id")
    )


def _latest_messages(few: DataFrame) -> DataFrame:
    """The latest failure (message, causes, known-deviation reason) and skip reason per cell x test, as
    :func:`reports.outcomes.latest_failure` picks them (the greatest among the verdicts at the latest time), from
    those verdicts only."""
    failing, skipped = is_failure(), F.col("outcome") == "skipped"
    latest = F.max(F.when(failing, F.struct(*LATEST_FAILURE)))
    return (
        few.where("latest")
        .groupBy("cell", "test_id")
        .agg(
            *[latest[name].alias(name) for name in LATEST_FAILURE],
            F.max(F.when(skipped, F.col("message"))).alias("skip_reason"),
        )
    )


def in_time(*keys: str) -> WindowSpec:
    """Verdicts in time order (ties by run, repeat and, for verdicts equal in all three, passes first)."""
    return Window.partitionBy(*keys).orderBy(F.col("started_at").asc_nulls_first(), "run_id", "repeat", "failure")


def _transitions(few: DataFrame) -> DataFrame:
    """Changes between failing and passing in time order, per cell x test that did both (the others have none)."""
    decided = few.where("in_order").select(
        "cell", "test_id", "started_at", "run_id", "repeat", is_failure().alias("failure")
    )
    changed = F.col("failure") != F.lag("failure").over(in_time("cell", "test_id"))
    return (
        decided.withColumn("changed", changed)
        .groupBy("cell", "test_id")
        .agg(F.count_if("changed").alias("transitions"))
    )


def cell_tests(verdicts: DataFrame, per_test: DataFrame | None = None) -> DataFrame:
    """One row per cell x test: counts, pass rate, status, the latest failure (message, causes as JSON text and
    known-deviation reason, from the one verdict) and the latest skip reason; failing ones first.

    From ``per_test`` (:func:`per_cell_test` of the same verdicts) when given: each of its rows is one cell x test.
    """
    if per_test is None:
        grouped = verdicts.groupBy("cell", "test_id").agg(
            F.min("spec_file").alias("spec_file"),
            F.min("test").alias("test"),
            *outcome_counts(),
            *latest_failure(),
            latest_skip_reason(),
        )
    else:
        grouped = per_test.select("cell", "test_id", "spec_file", "test", *COUNTS, *LATEST_FAILURE, "skip_reason")
    return sorted_table(with_rates(grouped), F.col("status").isin("fail", "flaky").desc(), "cell", "test_id")
